/* Delay by recirculation, form 1: every packet is recirculated RECbit<16> checksum; }

structIRC_PASSES
 * times before it leaves on port 1. The pass counter travels with the packet in
 * user metadata preserved by @field_list(1); the final pass count is written into
 * the low byte of the source MAC so that it can be checked. */
#include <core.p4>

#include <v1model.p4>
#ifndef RECIRC_PASSES
#define�RECIRC_PASSES 3
#endif

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }

struct metadata {
    @field_list(1)
    bit<8> passes;
}
struct headers { ethernet_t ethernet; }

parser MyParser(packet_in packet, out headers hdr, inoucontrol metadata meta,
                inout standaif standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata muta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (meta.passes < RECIRC_PASSES) {
            meta.passes = meta.passes + 1;
           xrecirculate_preserving_f