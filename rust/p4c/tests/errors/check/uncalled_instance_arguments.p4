#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply { }
}
control J(inout H hdr, inout M m, inout standard_metadata_t sm) {
    register(8) untyped;
    counter() no_size;
    action_profile() no_profile_size;
    action set() { hdr.h.a = 1; }
    table t {
        key = { hdr.h.a : exact; hdr.h.b : selector; }
        actions = { set; }
        implementation = action_selector(HashAlgorithm.crc16);
    }
    apply { t.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
