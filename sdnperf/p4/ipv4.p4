/* Workload complexity, step 2: IPv4 routing (P4_16, v1model).
 *
 * IPv4 packets: header checksum verified (a bad one is dropped), TTL <= 1 dropped, then
 *   Ipv4Ingress.ipv4_lpm   dst_addr (lpm) -> route(src_mac, dst_mac, port) | drop (default)
 * route rewrites both MACs, decrements the TTL and the checksum is recomputed.
 * Everything else (ARP, ...) is bridged (include/bridge.p4, Ipv4Ingress.bridge.dmac), so
 * hosts on one subnet still resolve each other.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/bridge.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct metadata_t { }

parser Ipv4Parser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETH_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control Ipv4VerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control Ipv4Ingress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    Bridge() bridge;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action route(mac_t src_mac, mac_t dst_mac, port_t port) {
        hdr.ethernet.src_addr = src_mac;
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        standard_metadata.egress_spec = port;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm @name("dst_addr"); }
        actions = { route; drop; }
        default_action = drop();
        size = 4096;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            bridge.apply(hdr.ethernet.dst_addr, standard_metadata);
        } else if (standard_metadata.checksum_error == 1 || hdr.ipv4.ttl <= 1) {
            drop();
        } else {
            ipv4_lpm.apply();
        }
    }
}

control Ipv4Egress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    NoEcho() no_echo;
    apply {
        no_echo.apply(standard_metadata);
    }
}

control Ipv4ComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control Ipv4Deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(Ipv4Parser(), Ipv4VerifyChecksum(), Ipv4Ingress(), Ipv4Egress(), Ipv4ComputeChecksum(),
         Ipv4Deparser()) main;
