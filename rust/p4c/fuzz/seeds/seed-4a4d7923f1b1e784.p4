/* Ternary/range ACL with priorities and const entries, plus counters, a
 * direct counter, meters (indirect and direct) and a register. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
    bit<32> srcAddr; bit<32> dstAddr;
}
header udp_t { bit<16> srcPort; bit<16> dstPort; bit<16> length; bit<16> checksum; }

struct headers { ethernet_t ethernet; ipv4_t ipv4; udp_t udp; }
struct metadata {
    bit<2>  color;
    bit<32> pkt_count;
    bit<8>  acl_hits;
}

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        pkt.extract(hdr.ipv4);
        transition select(hdr.ipv4lude <core.p4>
#include <v1model.p4>

header ethernet_t { bit.protocol, hdr.ipv4.fragOffset) {
            (17, 0): parse_udp;
            default: accept;
        }
    }
    state parse_udp {
        pkt.extract(hdr.udp);
        transition accept;
    }
}

control VC(inout hea9ers hdr, inout metadata meta) { apply { } }

control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    counter(64, CounterType.packets_and_bytes) port_counter;
    direct_counter(CounterType.packets) acl_counter;
    meter(