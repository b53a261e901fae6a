#include <core.p4>
#include <v1model.p4>
// slice and `if` condition type errors in bodies lowering never sees (an uncalled
// function, an unused action, an unused control action): sema::exprs types them all
header h_t { bit<8> a; bit<16> b; }
struct headers { h_t h; }
struct metadata { bit<8> m; bool f; }
bit<8> unused_fn(in bit<8> x) {
    if (x) { return 1; }
    return x[8:1];
}
action unused_global(inout headers hdr) {
    hdr.h.a = hdr.h[7:0];
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
        meta.m = meta.f[0:0] ++ 7w0;
        hdr.h.b[3:4] = 0;
        if (hdr.h.b + 1) { meta.m = 1; }
    }
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
