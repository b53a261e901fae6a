/* Sub-parsers: the main parser hands IPv4 and its L4 header to a separate
 * parser (instantiated in the main parser); ingress forwards by L4 destination
 * port. The sub-parser also uses an if statement and a select range. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
header ports_t { bit<16> srcPort; bit<16> dstPort; }

struct l3_headers { ipv4_t ipv4; ports_t ports; }
struct headers { ethernet_t ethernet; l3_headers l3; }
struct metadata { bit<8> l4_proto; bit<1> parsed_l4; }

parser L3Parser(packet_in packet, out l3_headers h, inout metadata meta) {
    state start {
        packet.extract(h.ipv4);
        if (h.ipv4.ttl == 0) {
            meta.l4_proto = 0xff;     // an if inside a parser state
        } else {
            meta.l4_proto = h.ipv4.protocol;
        }
        transition select(h.ipv4.protocol) {
            6: l4;
            17: l4;
            0x90 .. 0x9f: l4;   // experimental range: expands into masked transitions
            default: accept;
        }
    }
    state l4 {
        packet.extract(h.ports);
        meta.parsed_l4 = 1;
        transition accept;
    }
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    L3Parser() l3p;
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: ipv4;
            default: accept;
        }
    }
    state ipv4 {
        l3p.apply(packet, hdr.l3, meta);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action to_port(bit<9> p) { standard_metadata.egress_spec = p; }
    table by_port {
        key = { hdr.l3.ports.dstPort: exact; }
        actions = { to_port; NoAction; }
        default_action = to_port(1);
    }
    apply {
        if (meta.l4_proto == 0xff) {
            standard_metadata.egress_spec = 4;
        } else if (meta.parsed_l4 == 1) {
            by_port.apply();
        } else {
            standard_metadata.egress_spec = 2;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.l3); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
