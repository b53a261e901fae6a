/* == and != on headers (equal when both invalid, or both valid with equal fields), on
 * structs (member by member) and on header stacks (element by element). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header p_t { bit<8> x; bit<8> y; }
header r_t { bit<8> flags; }
struct pair_t { bit<8> a; bit<8> b; }
struct metadata { pair_t m1; pair_t m2; }
struct headers { ethernet_t eth; p_t p; p_t q; p_t[2] s1; p_t[2] s2; r_t r; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.p);
        pkt.extract(hdr.q);
        pkt.extract(hdr.r);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        bit<8> f = 0;
        p_t none1;
        p_t none2;
        none1.setInvalid();
        none2.setInvalid();
        if (hdr.p == hdr.q) { f = f | 1; }
        if (hdr.p != hdr.q) { f = f | 2; }
        if (none1 == none2) { f = f | 4; }
        if (none1 == hdr.p) { f = f | 8; }
        meta.m1 = { hdr.p.x, hdr.p.y };
        meta.m2 = { hdr.q.x, hdr.q.y };
        if (meta.m1 == meta.m2) { f = f | 16; }
        hdr.s1[0] = hdr.p;
        hdr.s2[0] = hdr.q;
        // both s1[1] and s2[1] are invalid
        if (hdr.s1 == hdr.s2) { f = f | 32; }
        hdr.r.flags = f;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.p); pkt.emit(hdr.q); pkt.emit(hdr.r); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
