// l1_fwd in P4_16 (v1model): the program of bench/switch's `switch` rows
// (rust/switch/tests/programs/l1_fwd.json, written by gen.py), for switches that need
// p4c's JSON (BMv2). Port 1 <-> port 2; IPv4 packets also look their destination up in
// an LPM table (no entries: NoAction) whose set_dmac / drop the LPM-scale runs install.
#include <core.p4>
#include <v1model.p4>

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> totalLen;
    bit<16> identification;
    bit<3>  flags;
    bit<13> fragOffset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdrChecksum;
    bit<32> srcAddr;
    bit<32> dstAddr;
}

struct headers_t {
    ethernet_t ethernet;
    ipv4_t     ipv4;
}

struct meta_t { }

parser ParserImpl(packet_in pkt, out headers_t hdr, inout meta_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition accept;
    }
}

control verifyChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control ingress(inout headers_t hdr, inout meta_t meta,
                inout standard_metadata_t standard_metadata) {
    action fwd() {
        standard_metadata.egress_spec = 3 - standard_metadata.ingress_port;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action set_dmac(bit<48> dmac) {
        hdr.ethernet.dstAddr = dmac;
    }
    table t_fwd {
        actions = { fwd; }
        default_action = fwd();
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { set_dmac; drop; NoAction; }
        default_action = NoAction();
    }
    apply {
        t_fwd.apply();
        if (hdr.ipv4.isValid()) {
            ipv4_lpm.apply();
        }
    }
}

control egress(inout headers_t hdr, inout meta_t meta,
               inout standard_metadata_t standard_metadata) {
    apply { }
}

control computeChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control DeparserImpl(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
        pkt.emit(hdr.ipv4);
    }
}

V1Switch(ParserImpl(), verifyChecksum(), ingress(), egress(), computeChecksum(),
         DeparserImpl()) main;
