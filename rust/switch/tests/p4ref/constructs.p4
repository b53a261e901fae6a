/* Constructs p4c-bm2-ss emits that our compiler does not (tests/reference_programs.rs runs
 * this program compiled by the reference p4c): assign_header from `?:` on headers,
 * extract into a header union stack's next element, extract_VL into a stack's next
 * element, assign_VL (varbit assignment), == on headers with varbit fields and a field wider than 128 bits. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header wide_t { bit<200> data; bit<8> tag; }
header b_t { bit<8> v; }
header w_t { bit<16> v; }
header_union u_t { b_t b; w_t w; }
header vl_t { varbit<16> opt; }
header p_t { bit<8> x; }
struct metadata { }
struct headers {
    ethernet_t eth; wide_t wide; p_t p; p_t q; u_t[2] u; vl_t[2] vl;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.wide);
        pkt.extract(hdr.p);
        pkt.extract(hdr.q);
        transition select(hdr.p.x) { 1: u_bw; 2: u_wb; default: vls; }
    }
    state u_bw { pkt.extract(hdr.u.next.b); pkt.extract(hdr.u.next.w); transition accept; }
    state u_wb { pkt.extract(hdr.u.next.w); pkt.extract(hdr.u.next.b); transition accept; }
    // two varbit headers of q.x bits each
    state vls {
        pkt.extract(hdr.vl.next, (bit<32>)hdr.q.x);
        pkt.extract(hdr.vl.next, (bit<32>)hdr.q.x);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.wide.tag = hdr.wide.tag + 1;
        // p := (q.x > 0x80) ? q : p
        hdr.p = hdr.q.x > 0x80 ? hdr.q : hdr.p;
        if (hdr.u[0].b.isValid()) { hdr.u[0].b.v = 0xAA; }
        if (hdr.u[1].w.isValid()) { hdr.u[1].w.v = 0xFFFF; }
        if (hdr.u[0].w.isValid()) { hdr.u[0].w.v = 0xEEEE; }
        if (hdr.u[1].b.isValid()) { hdr.u[1].b.v = 0xBB; }
        // header equality compares the varbit fields
        if (hdr.vl[1].isValid() && hdr.vl[0] == hdr.vl[1]) { hdr.p.x = 0x33; }
        // swap the varbit headers' contents (assign_VL)
        if (hdr.vl[1].isValid()) {
            varbit<16> s = hdr.vl[0].opt;
            hdr.vl[0].opt = hdr.vl[1].opt;
            hdr.vl[1].opt = s;
        }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.eth); pkt.emit(hdr.wide); pkt.emit(hdr.p); pkt.emit(hdr.q); pkt.emit(hdr.u); pkt.emit(hdr.vl); }
}
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
