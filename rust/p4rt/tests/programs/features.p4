/* Test program for sdnperf-p4rt: every entity kind P4Runtime can write. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 255

@controller_header("packet_in")
header packet_in_t { bit<9> ingress_port; bit<7> _pad; }
@controller_header("packet_out")
header packet_out_t { bit<9> egress_port; bit<7> _pad; }
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen; bit<16> identification;
    bit<3> flags; bit<13> fragOffset; bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
struct learn_t { bit<48> srcAddr; bit<9> port; }
struct metadata { bit<32> color; }
struct headers { packet_in_t packet_in; packet_out_t packet_out; ethernet_t ethernet; ipv4_t ipv4; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out { packet.extract(hdr.packet_out); transition parse_ethernet; }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) { 0x0800: parse_ipv4; default: accept; }
    }
    state parse_ipv4 { packet.extract(hdr.ipv4); transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    counter(64, CounterType.packets_and_bytes) port_counter;
    meter(32, MeterType.packets) port_meter;
    register<bit<32>>(16) reg;
    direct_counter(CounterType.packets_and_bytes) lpm_counter;

    action drop() { mark_to_drop(standard_metadata); }
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action route(bit<48> dmac, bit<9> port) { hdr.ethernet.dstAddr = dmac; standard_metadata.egress_spec = port; lpm_counter.count(); }
    action learn() { digest<learn_t>(1, { hdr.ethernet.srcAddr, standard_metadata.ingress_port }); }
    action to_cpu() { standard_metadata.egress_spec = CPU_PORT; }

    table acl {
        key = {
            hdr.ethernet.etherType: exact;
            hdr.ethernet.srcAddr: ternary;
            hdr.ipv4.ttl: range;
            hdr.ipv4.protocol: optional;
        }
        actions = { drop; forward; NoAction; }
        default_action = NoAction();
        size = 128;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { route; drop; NoAction; }
        default_action = NoAction();
        counters = lpm_counter;
        support_timeout = true;
        size = 1024;
    }
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) ecmp_sel;
    table ecmp {
        key = { hdr.ipv4.dstAddr: exact; hdr.ipv4.srcAddr: selector; }
        actions = { forward; drop; }
        implementation = ecmp_sel;
        size = 64;
    }
    table smac {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 4096;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; to_cpu; }
        default_action = to_cpu();
        size = 4096;
    }
    apply {
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        port_counter.count((bit<32>)standard_metadata.ingress_port);
        port_meter.execute_meter((bit<32>)standard_metadata.ingress_port, meta.color);
        reg.write(0, (bit<32>)standard_metadata.ingress_port);
        smac.apply();
        dmac.apply();
        if (hdr.ipv4.isValid()) {
            acl.apply();
            ipv4_lpm.apply();
            ecmp.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.egress_port == CPU_PORT) {
            hdr.packet_in.setValid();
            hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        }
    }
}
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.packet_in); packet.emit(hdr.ethernet); packet.emit(hdr.ipv4); }
}
V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
