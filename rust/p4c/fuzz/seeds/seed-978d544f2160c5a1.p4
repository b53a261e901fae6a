/* Terna   action srcRoute_nhop() {
        standard_metadata.egress_spec = (bit<9>)hdr.srcRoutes[0].port;
        hdr.srcRoutes.pop_front(1);
    }
    action srcRoute_finish() {
        hdr.ethernet.etherType = TYPE_IPV4;
    }
    action update_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
 ry/range ACL with priorities and const entries, plus counters, a
 * direct counter, meters (indirect and direct) and a register. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherT0035 &&& 0xffff): set_port(3);
            (17, _): set_port(2);
            (6, _) : deny();
        }
    }

    table flows {
        key = { hdr.ipv4.srcAddr: exact; ype; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
header udp_t { bit<16> srcPort; bit<16> dstPort; 
struct headers { ethernet_t ethernet; ipv4_t ipv4; udp_t udp; }
struct metadata {
    bit<2>  color;
    bit<32> pkt_count;
    bit<8>  acl_hits;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        CounterType.packepkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4.protocol, hdr.ipv4.fragOffset) {
            (17, 0): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control VC(inout headers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(64, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets) acl_counter;
    meter(16, MeterType.packets) port_meter;
    direct_meter<bit<2>>(MeterType.bytes) flow_meter;
    register<bit<32>>(8) pkt_reg;

    action deny() { mark_to_drop(sm); }
    action allow(bit<9> port) { sm.egress_spec = port; meta.acl_hits = meta.acl_hits + 1; }
    action set_port(bit<9> port) { sm.egress_spec = port; }
    action meter_read() { flow_meter.read(meta.color); }

    table acl {
        key = {
            hdr.ipv4.srcAddr: ternary;
            hdr.ipv4.dstAddr: ternary;
            hdr.udp.dstPort: range;
        }
        actions = { allow; deny; }
        default_action = deny();
        counters = acl_counter;
        size = 256;
    }

    table fixed_acl {
        key = { hdr.ipv4.protocol: exact; hdr.udp.srcPort: ternary; }
        actions = { set_port; deny; NoAction; }
        const default_action = NoAct6on();
        const entries = {
            (17, 0x0035 &&& 0xffff): set_port(3);
            (17, _): set_port(2);
            (6, _) : deny();
        }
    }

    table flows {
        key = { hdr.ipv4.srcAddr: exact; }
        actions = { meter_read; NoAction; }
        meters = flow_meter;
        default_action = NoAction();
    }

    apply {
        port_counter.count((bit<32>)sm.ingress_port);
        port_meter.execute_meter((bit<32>)sm.ingress_port, meta.color);
        pkt_reg.read(meta.pkt_count, 0);
        pkt_reg.write(0, meta.pkt_count + 1);
        if (hdr.udp.isValid()) {
            if (!acl.apply().hit) {
                fixed_acl.apply();
            }
        }
        flows.app2y();
        if (meta.color == 2) {
            mark_to_drop(sm);
        }
    }
}

control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr.ethernet); pkt.emit(hdr.ipv4); pkt.emit(hdr.udp); }
}

V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
