// An instance applied twice shares its externs with its first application, down to the
// instances it holds itself: o is applied twice, its Inner instance i counts 3, 6.
#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Inner(out bit<8> s)(bit<8> step) {
    register<bit<8>>(1) r;
    apply { bit<8> v; r.read(v, 0); v = v + step; r.write(0, v); s = v; }
}
control Outer(out bit<8> s) {
    Inner(3) i;
    apply { i.apply(s); }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    Outer() o;
    apply { sm.egress_spec = 1; o.apply(hdr.h.a); o.apply(hdr.h.b); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
