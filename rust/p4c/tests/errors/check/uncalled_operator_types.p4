#include <core.p4>
#include <v1model.p4>
// operator type errors in bodies lowering never sees (an uncalled function, an unused
// action, an unused control action): sema::exprs types them all
header h_t { bit<8> a; bit<16> b; int<8> s; }
struct headers { h_t h; }
struct metadata { bit<8> m; bool f; }
bit<8> unused_fn(in bit<8> x, in bool c) {
    bool n = !x;
    bit<8> y = x << 8s1;
    return c ? x : 16w1;
}
action unused_global(inout headers hdr) {
    hdr.h.a = ~hdr.h.a + (bit<8>)hdr.h.b;
    hdr.h.s = hdr.h.s / 2;
    hdr.h.b = (bit<16>)(hdr.h.a ++ true);
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action unused_local() {
        meta.f = meta.f && hdr.h.a;
        meta.f = meta.f < true;
        meta.m = (bool)hdr.h.b ? 1 : 2;
        meta.m = 1 << hdr.h.a;
        meta.m = ~meta.f;
        meta.m = -meta.f;
    }
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
