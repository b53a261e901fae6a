#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> k; bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Lookup(inout bit<8> v, in bit<8> k) {
    action set(bit<8> x) { v = x; }
    table t { key = { k : exact; } actions = { set; } }
    apply { t.apply(); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Lookup() l;
    apply {
        l.apply(hdr.h.a, hdr.h.k);
        l.apply(hdr.h.a, hdr.h.a);
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
