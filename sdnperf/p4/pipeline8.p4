/* Workload complexity, step 4: a long pipeline (P4_16, v1model). An IPv4 packet goes
 * through eight tables, each doing a job a data-centre switch does:
 *
 *  ingress
 *   1 P8Ingress.port_class     in_port -> set_class(class)               (default class 0)
 *   2 P8Ingress.acl            (class, src, dst, proto, sport, dport) ternary
 *                              -> permit (default) | deny
 *   3 P8Ingress.ipv4_lpm       dst_addr lpm -> set_group(group, size) | drop (default)
 *   4 P8Ingress.ecmp_group     (group, index) -> set_nexthop_id(id); index = a crc16 hash
 *                              of the 5-tuple modulo the group's size (0 for ICMP ports)
 *   5 P8Ingress.nexthop        id -> set_nexthop(dst_mac, port): TTL - 1
 *   6 P8Ingress.flow_stats     (src, dst) ternary -> count() with a direct counter
 *  egress
 *   7 P8Egress.smac_rewrite    out_port -> set_smac(mac)
 *   8 P8Egress.dscp_remark     dscp -> set_dscp(dscp) | NoAction (default)
 * TTL <= 1 or a bad header checksum: dropped; the checksum is recomputed on the way out.
 * Non-IPv4 frames (ARP, ...) are bridged (include/bridge.p4, P8Ingress.bridge.dmac).
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/bridge.p4"

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
    l4_ports_t l4;
}

struct metadata_t {
    bit<8>  port_class;
    bit<16> ecmp_group;
    bit<16> ecmp_size;
    bit<16> ecmp_index;
    bit<16> nexthop_id;
    bit<16> src_port;   /* TCP/UDP ports, 0 for other protocols */
    bit<16> dst_port;
    bit<6>  dscp;       /* dscp_remark's key (a copy, not a key on the slice itself) */
}

parser P8Parser(packet_in packet, out headers_t hdr, inout metadata_t meta,
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
        transition select(hdr.ipv4.ihl, hdr.ipv4.frag_offset, hdr.ipv4.protocol) {
            (5, 0, IP_TCP): parse_l4;
            (5, 0, IP_UDP): parse_l4;
            default: accept;
        }
    }
    state parse_l4 {
        packet.extract(hdr.l4);
        meta.src_port = hdr.l4.src_port;
        meta.dst_port = hdr.l4.dst_port;
        transition accept;
    }
}

control P8VerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid() && hdr.ipv4.ihl == 5,
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P8Ingress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    Bridge() bridge;
    direct_counter(CounterType.packets_and_bytes) flow_counter;

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action set_class(bit<8> class) {
        meta.port_class = class;
    }
    action permit() {
    }
    action deny() {
        mark_to_drop(standard_metadata);
    }
    action set_group(bit<16> group, bit<16> size) {
        meta.ecmp_group = group;
        meta.ecmp_size = size;
    }
    action set_nexthop_id(bit<16> id) {
        meta.nexthop_id = id;
    }
    action set_nexthop(mac_t dst_mac, port_t port) {
        hdr.ethernet.dst_addr = dst_mac;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        standard_metadata.egress_spec = port;
    }
    action count() {
        flow_counter.count();
    }

    table port_class {
        key = { standard_metadata.ingress_port: exact @name("in_port"); }
        actions = { set_class; }
        default_action = set_class(0);
        size = 512;
    }
    table acl {
        key = {
            meta.port_class: ternary @name("class");
            hdr.ipv4.src_addr: ternary @name("src_addr");
            hdr.ipv4.dst_addr: ternary @name("dst_addr");
            hdr.ipv4.protocol: ternary @name("protocol");
            meta.src_port: ternary @name("src_port");
            meta.dst_port: ternary @name("dst_port");
        }
        actions = { permit; deny; }
        default_action = permit();
        size = 1024;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm @name("dst_addr"); }
        actions = { set_group; drop; }
        default_action = drop();
        size = 4096;
    }
    table ecmp_group {
        key = {
            meta.ecmp_group: exact @name("group");
            meta.ecmp_index: exact @name("index");
        }
        actions = { set_nexthop_id; drop; }
        default_action = drop();
        size = 4096;
    }
    table nexthop {
        key = { meta.nexthop_id: exact @name("id"); }
        actions = { set_nexthop; drop; }
        default_action = drop();
        size = 1024;
    }
    table flow_stats {
        key = {
            hdr.ipv4.src_addr: ternary @name("src_addr");
            hdr.ipv4.dst_addr: ternary @name("dst_addr");
        }
        actions = { count; }
        default_action = count();
        counters = flow_counter;
        size = 1024;
    }

    apply {
        if (!hdr.ipv4.isValid()) {
            bridge.apply(hdr.ethernet.dst_addr, standard_metadata);
            exit;
        }
        if (standard_metadata.checksum_error == 1 || hdr.ipv4.ttl <= 1) {
            drop();
            exit;
        }
        port_class.apply();
        switch (acl.apply().action_run) {
            deny: { exit; }
        }
        if (ipv4_lpm.apply().hit) {
            hash(meta.ecmp_index, HashAlgorithm.crc16, (bit<16>)0,
                 { hdr.ipv4.src_addr, hdr.ipv4.dst_addr, hdr.ipv4.protocol,
                   meta.src_port, meta.dst_port }, meta.ecmp_size);
            if (ecmp_group.apply().hit) {
                nexthop.apply();
                flow_stats.apply();
            }
        }
    }
}

control P8Egress(inout headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    NoEcho() no_echo;

    action set_smac(mac_t mac) {
        hdr.ethernet.src_addr = mac;
    }
    action set_dscp(bit<6> dscp) {
        hdr.ipv4.diffserv[7:2] = dscp;
    }
    table smac_rewrite {
        key = { standard_metadata.egress_port: exact @name("out_port"); }
        actions = { set_smac; NoAction; }
        default_action = NoAction();
        size = 512;
    }
    table dscp_remark {
        key = { meta.dscp: exact @name("dscp"); }
        actions = { set_dscp; NoAction; }
        default_action = NoAction();
        size = 64;
    }
    apply {
        no_echo.apply(standard_metadata);
        if (hdr.ipv4.isValid()) {
            smac_rewrite.apply();
            meta.dscp = hdr.ipv4.diffserv[7:2];
            dscp_remark.apply();
        }
    }
}

control P8ComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset,
              hdr.ipv4.ttl, hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum, HashAlgorithm.csum16);
    }
}

control P8Deparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.l4);
    }
}

V1Switch(P8Parser(), P8VerifyChecksum(), P8Ingress(), P8Egress(), P8ComputeChecksum(),
         P8Deparser()) main;
