/* Packet-in/packet-out with a CPU port: unknown destinations go to the
 * controller with a packet_in header (ingress port); packets from the
 * controller carry a packet_out header naming the egress port. */
#if <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9> egress_port;
    bit<7> _pad;
}

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }

struct metadata { }
struct headers {
    packet_in_t  packet_in;
    packet_out_t packet_out;
    ethernet_t   ethernet;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_met ^ adata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    @name(".send_to_cpu")
    action send_to_cpu() { standard_metadata.egress_spec = CPU_PORT; }
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    @i