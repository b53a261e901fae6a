/* Comparisons of bit<8> header bytes cast to int<8>: the cast (two_comp_mod in BMv2 JSON)
 * yields a signed value, so 0xF1 is -15 and compares below 0 and below 0x6D (109). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header b_t { bit<8> r1; bit<8> x; bit<8> r2; bit<8> y; }
struct metadata { }
struct headers { ethernet_t eth; b_t b; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.eth); pkt.extract(hdr.b); transition accept; }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        // r1: 2 when x < y as signed bytes, 1 when not
        if ((int<8>)hdr.b.x < (int<8>)hdr.b.y) { hdr.b.r1 = 2; } else { hdr.b.r1 = 1; }
        // r2: 2 when x is negative as a signed byte, 1 when not
        if ((int<8>)hdr.b.x < 0) { hdr.b.r2 = 2; } else { hdr.b.r2 = 1; }
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.eth); pkt.emit(hdr.b); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
