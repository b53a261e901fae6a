/* A modular pipeline: ingress calls two sub-controls (one of them as two instances
 * with separate tables and counters), and an L4 header union holds either a UDP or a
 * TCP header. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
header udp_t { bit<16> srcPort; bit<16> dstPort; bit<16> len; bit<16> csum; }
header tcp_t { bit<16> srcPort; bit<16> dstPort; bit<32> seq; bit<32> ack; bit<16> flags; bit<16> win; bit<16> csum; bit<16> urg; }
header_union l4_t { udp_t udp; tcp_t tcp; }

struct metadata { bit<16> l4_dport; bit<8> vrf; }
struct headers { ethernet_t ethernet; ipv4_t ipv4; l4_t l4; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol) {
            17: parse_udp;
            6: parse_tcp;
            default: accept;
        }
    }
    state parse_udp { packet.extract(hdr.l4.udp); meta.l4_dport = hdr.l4.udp.dstPort; transition accept; }
    state parse_tcp { packet.extract(hdr.l4.tcp); meta.l4_dport = hdr.l4.tcp.dstPort; transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

/* Port-based filter: drops traffic to blocked L4 ports. */
control PortFilter(in bit<16> port, inout standard_metadata_t sm) {
    counter(1, CounterType.packets) dropped;
    action block() { mark_to_drop(sm); dropped.count(0); }
    table blocked {
        key = { port: exact; }
        actions = { block; NoAction; }
        default_action = NoAction();
    }
    apply { blocked.apply(); }
}

/* Chooses the output port from a VRF and the destination address. */
control Forwarding(inout headers hdr, in bit<8> vrf, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }
    action drop() { mark_to_drop(sm); }
    table routes {
        key = { vrf: exact; hdr.ipv4.dstAddr: lpm; }
        actions = { fwd; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.ipv4.isValid()) {
            routes.apply();
        } else {
            drop();
        }
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    PortFilter() src_filter;
    PortFilter() dst_filter;
    Forwarding() forwarding;
    action set_vrf(bit<8> vrf) { meta.vrf = vrf; }
    table vrf_map {
        key = { standard_metadata.ingress_port: exact; }
        actions = { set_vrf; }
        default_action = set_vrf(0);
    }
    apply {
        vrf_map.apply();
        forwarding.apply(hdr, meta.vrf, standard_metadata);
        if (hdr.l4.isValid()) {
            dst_filter.apply(meta.l4_dport, standard_metadata);
            // one application: an instance applied twice would apply its table twice
            src_filter.apply(hdr.l4.udp.isValid() ? hdr.l4.udp.srcPort : hdr.l4.tcp.srcPort,
                             standard_metadata);
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); packet.emit(hdr.l4); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
