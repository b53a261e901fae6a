/* Workload complexity, step 1: L2 bridging (P4_16, v1model).
 *
 * Ethernet only: one exact lookup on the destination MAC (include/bridge.p4):
 *   L2Ingress.bridge.dmac   eth_dst -> forward(port) | flood(group) | drop (default)
 * Flooded replicas never go back out of their ingress port. Frames leave unchanged.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/bridge.p4"

struct headers_t {
    ethernet_t ethernet;
}

struct metadata_t { }

parser L2Parser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control L2VerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control L2Ingress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    Bridge() bridge;
    apply {
        bridge.apply(hdr.ethernet.dst_addr, standard_metadata);
    }
}

control L2Egress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    NoEcho() no_echo;
    apply {
        no_echo.apply(standard_metadata);
    }
}

control L2ComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control L2Deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
    }
}

V1Switch(L2Parser(), L2VerifyChecksum(), L2Ingress(), L2Egress(), L2ComputeChecksum(),
         L2Deparser()) main;
