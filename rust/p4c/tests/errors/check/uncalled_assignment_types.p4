#include <core.p4>
#include <v1model.p4>
// assignment type errors in bodies lowering never sees (an uncalled function, an unused
// action, an unused control action): sema::exprs checks every assignment, initializer
// and return, sema::calls every value argument
header h_t { bit<8> a; bit<16> b; }
header g_t { bit<8> a; }
header_union u_t { h_t h; g_t g; }
header_union v_t { h_t h; }
struct pair_t { bit<8> x; bit<8> y; }
struct other_t { bit<8> x; }
struct headers { h_t h; g_t g; h_t[2] hs; g_t[2] gs; u_t u; v_t v; }
struct metadata { bit<8> m; bit<16> w; pair_t p; other_t o; }
bit<8> narrow(in bit<8> x) { return x; }
bit<8> unused_fn(in bit<16> x) {
    bit<8> y = x;
    return x;
}
action unused_global(inout headers hdr, inout metadata meta) {
    hdr.h.a = hdr.h.b;
    hdr.h = hdr.g;
    hdr.h = { 1 };
    meta.p = { 1, 2, 3 };
    meta.p = meta.o;
    hdr.hs = hdr.gs;
    hdr.u = hdr.v;
    meta.m = narrow(meta.w);
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
        meta.p = { 1, meta.w };
        hdr.h.b[7:0] = meta.w;
    }
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
