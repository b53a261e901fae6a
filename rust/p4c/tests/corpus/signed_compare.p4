// Signed comparisons and shifts of int<8> casts: 0xA5 read as int<8> is -91, so it is
// less than 6 and shifts right with its sign. p4c's JSON writes these casts as
// two_comp_mod, whose result BMv2 reads as a signed number.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> lt; bit<8> shr; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if ((int<8>)hdr.h.a < (int<8>)hdr.h.b) {
            hdr.h.lt = 1;
        } else {
            hdr.h.lt = 0;
        }
        hdr.h.shr = (bit<8>)((int<8>)hdr.h.a >> 1);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
