// P4_16 §6.8: an `inout` argument is copied in before the arguments after it are
// evaluated, so in `bump(x, bump(x, 0))` the outer call starts from the old `x` even
// though the inner call (evaluated later, as its second argument) wrote `x`: x + 1, not
// x + 2. The same with a stack element at a run-time index that aliases the inner call's
// location. `bump` ignores its `in` argument on purpose: the body then never names the
// second argument's location, so nothing but the evaluation order forces the copy-in.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; }
header s_t { bit<8> v; }
struct headers_t { h_t h; s_t[2] s; }
struct metadata_t { }

bit<8> bump(inout bit<8> x, in bit<8> ignored) {
    x = x + 1;
    return 8w7;
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action in_action() {
        // hdr.s[c & 1] is hdr.s[0] when c is even
        hdr.h.d = bump(hdr.s[hdr.h.c & 1].v, bump(hdr.s[0].v, 8w0));
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.b = bump(hdr.h.a, bump(hdr.h.a, 8w0));
        in_action();
        bump(hdr.h.e, bump(hdr.h.e, hdr.h.e));
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
