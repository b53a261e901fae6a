/* Functions: a value-returning function with locals and several returns used in
 * an expression, a function with inout parameters called as a statement, and a
 * bool function used directly in an if condition of the apply block. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header fold_t { bit<32> x; bit<16> fold; }
struct metadata { }
struct headers { ethernet_t ethernet; fold_t f; }

bit<16> ones_complement_fold(in bit<32> x) {
    bit<32> t = (x & 0xffff) + (x >> 16);
    t = (t & 0xffff) + (t >> 16);
    return (bit<16>)t;
}

void swap48(inout bit<48> a, inout bit<48> b) {
    bit<48> t = a;
    a = b;
    b = t;
}

bool is_broadcast(in bit<48> mac) {
    if (mac == 0xffffffffffff) {
        return true;
    }
    return false;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        packet.extract(hdr.f);
        transition accept;
    }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        swap48(hdr.ethernet.dstAddr, hdr.ethernet.srcAddr);
        hdr.f.fold = ones_complement_fold(hdr.f.x);
        if (is_broadcast(hdr.ethernet.srcAddr)) {
            standard_metadata.egress_spec = 3;
        } else {
            standard_metadata.egress_spec = 2;
        }
    }
}
control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.f); }
}
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
