/* The L2/L3 fabric of sdnperf's P4 programs (v1model): headers, parser, the forwarding
 * ingress, egress, checksum and deparser that sdnperf's P4Runtime controller apps drive.
 * What it does is described in l2l3.p4, the program made of it alone.
 *
 * The including program includes core.p4 and v1model.p4 and declares
 *     struct metadata_t { bit<1> routed; ... }
 * first (`routed`: ipv4_lpm rewrote the frame, recompute the IPv4 checksum), so that it
 * can add metadata of its own (recirc.p4 does).
 */
#ifndef SDNPERF_L2L3_FABRIC_P4
#define SDNPERF_L2L3_FABRIC_P4

#include "headers.p4"

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t {
    bit<9> ingress_port;
    bit<7> _pad;
}

@controller_header("packet_out")
header packet_out_t {
    bit<9>  egress_port;
    bit<7>  _pad;
    bit<16> mcast_grp;     /* non-zero: replicate to this group instead of egress_port */
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    arp_t        arp;
    ipv4_t       ipv4;
}


parser L2L3Parser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
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
        transition select(hdr.ethernet.ether_type) {
            ETH_ARP: parse_arp;
            ETH_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_arp {
        packet.extract(hdr.arp);
        transition accept;
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control L2L3VerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control L2L3Ingress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
    }
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }
    action route(mac_t src_mac, mac_t dst_mac, port_t port) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        standard_metadata.egress_spec = port;
        meta.routed = 1;
    }

    table flow_port {
        key = {
            standard_metadata.ingress_port: exact @name("in_port");
            hdr.ethernet.src_addr: exact @name("eth_src");
            hdr.ethernet.dst_addr: exact @name("eth_dst");
        }
        actions = { forward; flood; to_cpu; drop; NoAction; }
        default_action = NoAction();
        size = 65536;
    }
    table flow_pair {
        key = {
            hdr.ethernet.src_addr: exact @name("eth_src");
            hdr.ethernet.dst_addr: exact @name("eth_dst");
        }
        actions = { forward; flood; to_cpu; drop; NoAction; }
        default_action = NoAction();
        size = 65536;
    }
    table dmac {
        key = {
            hdr.ethernet.dst_addr: exact @name("eth_dst");
        }
        actions = { forward; flood; to_cpu; drop; }
        default_action = to_cpu();
        size = 65536;
    }
    table flood_table {
        key = {
            standard_metadata.ingress_port: exact @name("in_port");
        }
        actions = { flood; to_cpu; drop; }
        default_action = to_cpu();
        size = 512;
    }
    table ipv4_lpm {
        key = {
            hdr.ipv4.dst_addr: lpm @name("dst_addr");
        }
        actions = { route; drop; NoAction; }
        default_action = NoAction();
        size = 4096;
    }

    apply {
        if (hdr.packet_out.isValid()) {
            if (hdr.packet_out.mcast_grp != 0) {
                standard_metadata.mcast_grp = hdr.packet_out.mcast_grp;
            } else {
                standard_metadata.egress_spec = hdr.packet_out.egress_port;
            }
            hdr.packet_out.setInvalid();
            exit;
        }
        if (hdr.ethernet.ether_type == ETH_LLDP) {
            to_cpu();
            exit;
        }
        if (hdr.ipv4.isValid()) {
            if (ipv4_lpm.apply().hit) {
                exit;
            }
        }
        if (hdr.ethernet.dst_addr[40:40] == 1) {
            /* broadcast or multicast: ARP requests, ... */
            flood_table.apply();
            exit;
        }
        if (!flow_port.apply().hit) {
            if (!flow_pair.apply().hit) {
                dmac.apply();
            }
        }
    }
}

control L2L3Egress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
            hdr.packet_in._pad = 0;
        } else if (standard_metadata.mcast_grp != 0 &&
                   standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);   /* never flood back where it came from */
        }
    }
}

control L2L3ComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid() && meta.routed == 1,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
    }
}

control L2L3Deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.arp);
        packet.emit(hdr.ipv4);
    }
}

#endif
