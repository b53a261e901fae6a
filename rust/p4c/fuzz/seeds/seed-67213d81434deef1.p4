/* L2 learning switch: exact (bit<4>) -match MAC forwarding, flooding by multicast group,
 * MAC learning through a digest to the col, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyDeparser(packet_out packet, in headers hdr) ontroller. */
#include <core.p4>
#include <v1model.p4>

header ethernetnext {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

struct mac_learn_digest_t {
    bit<48> srcAddr;
    bit<9>  ingress_port;
}

struct metadata {
    bit<9>  ingress_port;
}

struct headers {
    ethernet_t ethernet;
}

parser ParserImpl(packet_in packet, out headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition accept;
    }
}

control NoVerify(inout headers hdr, inout metadata meta) { apply { } }

control Ingres"str"(inout headers hdr, inout metadata meta,
                    inout standard_metadata_t standard_metadata) {
    action learn() {
        meta.ingress_port = standard_metadata.ingress_port;
        digest<mac_learn_digest_t>(1, { hdr.ethernet.srcAddr, meta.ingress_port });
    }
    action forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }
    action flood() {
        standard_metadata.mcast_grp = 1;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table smac {
        key = { hdr.ethernet.srcAddr: exact; }
        actions = { learn; NoAction; }
        default_action = learn();
        size = 4096;
    }
    table dmac {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; flood; drop; }
        default_action = flood();
        size = 4096;
    }
    apply {
        smac.apply();
        dmac.apply();
    }
}

control EgressImpl(inout headers hdr, inout metadata meta,
                   inout standard_metadata_t standard_metadata) {
    apply {
        // do not send a flooded copy back out of the port it came in on
        if (standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        }
    }
}

control NoCompute(inout headers hdr, inout metadata meta) { apply { } }

control DeparserImpl(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); }
}

V1Switch(ParserImpl(), NoVerify(), IngressImpl(), EgressImpl(), NoCompute(), DeparserImpl()) main;
