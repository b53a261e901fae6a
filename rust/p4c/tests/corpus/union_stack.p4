// A stack of header unions: extracted with `.next.member` in the parser (each element
// holds the member the tag selects), read and written at constant indices, copied
// whole into another union stack, and emitted element by element.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kinds; bit<8> n; }
header short_t { bit<8> v; }
header long_t { bit<16> v; }
header_union opt_u { short_t s; long_t l; }
struct headers_t { tag_t tag; opt_u[2] o; opt_u[2] copy; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        transition select(hdr.tag.kinds) {
            0: ss;
            1: sl;
            2: ls;
            default: accept;
        }
    }
    state ss { pkt.extract(hdr.o.next.s); pkt.extract(hdr.o.next.s); transition accept; }
    state sl { pkt.extract(hdr.o.next.s); pkt.extract(hdr.o.next.l); transition accept; }
    state ls { pkt.extract(hdr.o.next.l); pkt.extract(hdr.o.next.s); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.o[0].s.isValid()) { hdr.o[0].s.v = hdr.o[0].s.v + 1; }
        if (hdr.o[1].l.isValid()) { hdr.o[1].l.v = 16w0xbeef; }
        // n counts the valid members; a union has at most one
        hdr.tag.n = 0;
        if (hdr.o[0].s.isValid() || hdr.o[0].l.isValid()) { hdr.tag.n = hdr.tag.n + 1; }
        if (hdr.o[1].s.isValid() || hdr.o[1].l.isValid()) { hdr.tag.n = hdr.tag.n + 1; }
        // kind 2: the whole stack is copied and the original invalidated
        if (hdr.tag.kinds == 2) {
            hdr.copy = hdr.o;
            hdr.o[0].l.setInvalid();
            hdr.o[1].s.setInvalid();
        }
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
