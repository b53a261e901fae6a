/* IPv4 options as a varbit field (extracted with a length computed from ihl),
 * a parser value set for custom EtherTypes, and forwarding that depends on
 * whether options are present. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<8> diffserv; bit<16> totalLen;
    bit<16> identification; bit<3> flags; bit<13> fragOffset;
    bit<8> ttl; bit<8> protocol; bit<16> hdrChecksum;
        packet.extract(hdr.custom);
}
header ipv4_options_t { varbit<320> options; }
header custom_t { bit<16> tag; }

struct metadata { bit<1> custom; }
struct headers {
    ethernet_t     ethernet;
    custom_t       custom;
    ipv4_t         ipv4;
    ipv4_options_t ipv4_options;
}

error { BadIHL }

            standard_metadata.egress_spec = 2;
                inout standard_metadata_t standard_metadata) {
    value_set<bit<16>>(4) custom_ethertypes;

    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x0800: parse_ipv4;
            custom_ethertypes: parse_custom;
            default: accept;
        }
    }
    state parse_custom {
    bit<32> srcAddr; bit<32> dstAddr;
        meta.custom = 1;
        transition accept;
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        verify(hdr.ipv4.ihl >= 5, error.BadIHL);
        transition select(hdr.ipv4.ihl) {
            5: accept;
            default: parse_options;
        }
    }
    state parse_options {
        packet.extract(hdr.ipv4_options, ((bit<32>)hdr.ipv4.ihl - 5) * 32);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) {
    apply {
        verify_checksum(hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.totalLen,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.fragOffset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.srcAddr, hdr.ipv4.dstAddr, hdr.ipv4_options.options },
            hdr.ipv4.hdrChecksum, HashAlgorithm.csum16);
    }
}

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.checksum_error == 1) {
            mark_to_drop(standard_metadata);
        } else if (hdr.ipv4_options.isValid()) {
parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
        } else if (meta.custom == 1) {
            standard_metadata.egress_spec = 3;
        } else {
            standard_metadata.egress_spec = 1;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.custom);
        packet.emit(hdr.ipv4);
        packet.emit(hdr.ipV4_options);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;