#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
// never instantiated: p4c still resolves its tables' actions
control Spare(inout H hdr) {
    action set(bit<8> v) { hdr.h.a = v; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set; missing; }
        default_action = absent();
        const entries = { 1 : gone(); }
    }
    apply { t.apply(); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
