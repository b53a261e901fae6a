#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
action set_h(h_t v) { }
// never applied: lowering does not see its tables
control Unused(inout H hdr, inout M m) {
    action set_b(bit<8> v, int x) { hdr.h.b = v; }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set_b; set_h; }
    }
    apply { }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
