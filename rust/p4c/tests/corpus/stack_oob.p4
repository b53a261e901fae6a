// Stack indices out of range at run time: a read gives an unspecified value, a write
// is ignored (P4_16 spec). The test reads only what stays defined: other elements and
// fields must not change when an out-of-range element is written. (BMv2 simple_switch
// 1.2.4.8 aborts on such an index; bench/p4c/differential.py counts that apart.)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> i; bit<8> r; bit<8> w; }
header s_t { bit<8> v; }
struct headers_t { h_t h; s_t[2] s; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.s[hdr.h.i].v = hdr.h.w;
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
