/* Evaluation order and parameter passing (P4_16 6.8, 8.x): copy-in/copy-out when the
 * argument is also reached under another name, two out parameters on one location (the
 * last copy-out wins), short-circuit of && || and ?: around calls with side effects,
 * operands read left to right before a later call changes them, and a stack index
 * computed by a call evaluated before the right-hand side of the assignment, run-time
 * indices of inout arguments fixed at the call, copy-out on exit. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header r_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; bit<8> g; bit<8> h; }
header s_t { bit<8> v; }
header x_t { bit<2> i; bit<6> pad; }
struct metadata { }
struct headers { ethernet_t eth; r_t r; s_t[3] s; x_t x; }

bit<8> bump(inout bit<8> x) { x = x + 1; return x; }
bool mark(inout bit<8> x) { x = 0xEE; return true; }
void two_outs(out bit<8> p, out bit<8> q) { p = 1; q = 2; }
void add_to(inout bit<8> x, in bit<8> y) { x = 5; x = x + y; }
bit<8> reset_index(inout bit<2> i) { i = 0; return 0xAB; }
bit<2> same(in bit<2> i) { return i; }
void swap8(inout bit<8> a, inout bit<8> b) { bit<8> t = a; a = b; b = t; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.r);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.s.next);
        pkt.extract(hdr.x);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    bit<8> c = 12;
    // v is a copy of c: the copy-out at the end overwrites the write of c in the body
    action keep_arg(inout bit<8> v) { hdr.r.a = v; c = 24; }
    // v is a copy (the body mentions hdr): exit still copies it back
    action bump_exit(inout bit<8> v) { v = v + 1; hdr.r.b = hdr.r.b + v; exit; }
    apply {
        keep_arg(c);
        keep_arg(c);
        hdr.r.b = c;
        bool t = true || mark(hdr.r.c);
        hdr.r.e = hdr.r.e == 0 ? bump(hdr.r.f) : bump(hdr.r.g);
        hdr.r.h = hdr.r.h + bump(hdr.r.h);
        two_outs(hdr.s[0].v, hdr.s[0].v);
        add_to(hdr.s[1].v, hdr.s[1].v);
        hdr.s[same(hdr.x.i)].v = reset_index(hdr.x.i);
        if (hdr.r.b != 0x0C && mark(hdr.r.d)) {
            sm.egress_spec = 2;
        } else if (t) {
            sm.egress_spec = 1;
        }
        // both locations are fixed when swap8 is called (before s[1] changes)
        swap8(hdr.s[hdr.x.i + 1].v, hdr.s[hdr.s[1].v[1:0]].v);
        bump_exit(hdr.s[0].v);
        hdr.r.a = 0xFF;
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
