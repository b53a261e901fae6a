#include <core.p4>
#include <v1model.p4>
// a header's setValid/setInvalid and a header stack's push_front/pop_front return nothing:
// called as statements they are fine, used as values they are type errors (sema::exprs),
// in bodies lowering runs and in an action it never sees
header h_t { bit<8> a; }
struct H { h_t h; h_t[2] s; }
struct M { bit<8> v; bool ok; }
action unused(inout H hdr, inout M m) {
    hdr.s.push_front(1);
    m.ok = hdr.s.pop_front(1);
}
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    apply {
        hdr.h.setInvalid();
        m.v = hdr.h.setValid();
        if (hdr.s[1].setInvalid()) { m.v = 1; }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
