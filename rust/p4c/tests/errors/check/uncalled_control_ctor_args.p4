#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Sub(inout H hdr)(bit<8> v) {
    apply { hdr.h.a = v; }
}
// never applied: lowering does not see its instances
control Unused(inout H hdr, inout M m) {
    Sub() none;
    Sub(1, 2) two;
    Sub(hdr.h.b) not_const;
    Sub(300) too_wide;
    apply { }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Sub(8w3) ok;
    apply { ok.apply(hdr); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
