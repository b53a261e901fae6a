/* The link element's program (links/element.py): a two-port wire. What arrives on port 1
 * leaves on port 2 and the other way round, bytes untouched; the switch's port impairment
 * (port_impair) delays, drops and shapes it. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dst_addr;
    bit<48> src_addr;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct metadata_t { }

parser WireParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        transition accept;
    }
}

control WireVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control WireIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.ingress_port == 1) {
            standard_metadata.egress_spec = 2;
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control WireEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply { }
}

control WireComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control WireDeparser(packet_out packet, in headers_t hdr) {
    apply { }
}

V1Switch(WireParser(), WireVerifyChecksum(), WireIngress(), WireEgress(),
         WireComputeChecksum(), WireDeparser()) main;
