// Functions calling functions whose parameters have the same names as the
// caller's: the callee's `y` is its own argument, never the caller's constant `y`.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct metadata_t { }

bit<8> mask_by(inout bit<8> x, in bit<8> y) {
    x = x & y;
    return x;
}

bit<8> plus1(in bit<8> y) {
    return y + 1;
}

bit<8> outer(inout bit<8> x, in bit<8> y) {
    x = y - x;
    x = mask_by(x, x);   // x & x: mask_by's y is outer's x here
    return plus1(x);     // outer's x + 1
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action in_action() {
        hdr.h.c = outer(hdr.h.c, 8w16);
    }
    apply {
        sm.egress_spec = 1;
        hdr.h.b = outer(hdr.h.a, 8w163);
        in_action();
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
