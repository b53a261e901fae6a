#include <core.p4>
#include <v1model.p4>
// stack index, isValid, verify, extract, lookahead and checksum argument type errors
// in bodies lowering never sees (an uncalled function, an unused action, a parser and
// a control that main does not run): sema::exprs types them all
header h_t { bit<8> a; bit<16> b; }
header g_t { bit<8> c; }
header_union u_t { h_t h; g_t g; }
struct headers { h_t h; h_t[2] s; u_t[2] us; }
struct metadata { bit<8> m; bool f; bit<4> n; }
bit<8> unused_fn(in headers hdr, in bit<8> x) {
    if (x == 1) { return hdr.s[2].a; }
    return x[0];
}
action unused_global(inout headers hdr, inout metadata meta) {
    meta.f = meta.isValid();
    hdr.s[meta.f].a = 1;
    hdr.us[5].h.a = 1;
}
parser Unused(packet_in pkt, out headers hdr, inout metadata meta) {
    state start {
        verify(8w1, error.NoMatch);
        verify(true, 8w1);
        pkt.extract(meta);
        pkt.extract(hdr.us.next.x);
        meta.n = pkt.lookahead<bit<8>>();
        transition accept;
    }
}
control UnusedCk(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(8w1, { hdr.h.a }, hdr.h.b, HashAlgorithm.csum16);
        update_checksum(true, { hdr.h.a }, hdr.h, HashAlgorithm.csum16);
    }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
