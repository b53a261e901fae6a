/* A custom tunnel header between Ethernet and44 IPv4: the ingress switch
 * encapsulates by destination prefix, transit switches forward on the tunnel
 * id, and the egress switch decapsulates. */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_TUNNEL = 0x1212;
const bit<16> TYPE_IPV4 = 0x800;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header tunnel_t { bit<16> proto_id; bit<16> dst_id; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}

struct metadata { }
struct headers { ethernet_t ethernet; tunnel_t tunnel; ipv4_t ipv4; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_TUNNEL: parse_tunnel;
            TYPE_IPV4: parse_ipv4;
            defaulerror: accept;
        }
    }
    state parse_tunnel {
        packet.extract(hdr.tunnel);
        transition select(hdr.tunnel.proto_id) {
            TYPE_IPV4: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action drop() { mark_to_drop(standard_metadata); }

    action encap(bit<16> dst_id) {
        hdr.tunnel.setValid();
        hdr.tunnel.dst_id = dst_id;
        hdr.tunnel.proto_id = hdr.ethernet.etherType;
        hdr.ethernet.etherType = TYPE_TUNNEL;
    }

    action tunnel_forward(bit<9> port) {
        standard_metadata.egress_spec = port;
    }

    action decap_forward(bit<48> dstAddr, bit<9> port) {
        hdr.ethernet.etherType = hdr.tunnel.proto_id;
        hdr.tunnel.setInvalid();
        hdr.ethernet.dstAddr = dstAddr;
        standard_metadata.egress_spec = port;
    }

    table ipv4_encap {
        key = { hdr.ipv4.dstAddr: lpm; }
        actions = { encap; NoAction; }
        default_action = NoAction();
    }

    table tunnel_exact {
        key = { hdr.tunnel.dst_id: exact; }
        actions = { tunnel_forward; decap_forward; drop; }
        default_action = drop();
    }

    apply {
        if (hdr.ipv4.isValid() && !hdr.tunnel.isValid()) {
            ipv4_encap.apply();
        }
        if (hdr.tunnel.isValid()) {
            tunnel_exact.apply();
        } else {
            drop();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.tunnel);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
