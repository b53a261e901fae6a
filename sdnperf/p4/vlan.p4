/* Workload complexity, step 3: 802.1Q VLAN tagging and untagging (P4_16, v1model).
 *
 *   VlanIngress.port_vlan    ingress_port -> access(vid) | trunk() | drop (default)
 *       access: an untagged frame gets a tag with vid (a tagged one is dropped);
 *       trunk:  frames must arrive tagged (an untagged one is dropped)
 *   VlanIngress.vlan_dmac    (vid, eth_dst) -> forward(port) | flood(group) | drop (default)
 *   VlanEgress.egress_vlan   egress_port -> untag() (access ports) | keep_tag() (default, trunks)
 * Flooded replicas never go back out of their ingress port. Between two access ports of
 * one VLAN a frame leaves as it came; only the tag is pushed and popped on the way.
 */
#include <core.p4>
#include <v1model.p4>
#include "include/headers.p4"
#include "include/bridge.p4"

struct headers_t {
    ethernet_t ethernet;
    vlan_t     vlan;
}

struct metadata_t {
    bit<1> access;     /* port_vlan said: an access port */
    bit<1> trunk;
    vlan_id_t vid;     /* the access port's VLAN */
}

parser VlanParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            ETH_VLAN: parse_vlan;
            default: accept;
        }
    }
    state parse_vlan {
        packet.extract(hdr.vlan);
        transition accept;
    }
}

control VlanVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control VlanIngress(inout headers_t hdr, inout metadata_t meta,
                    inout standard_metadata_t standard_metadata) {
    action drop() {
        mark_to_drop(standard_metadata);
    }
    action access(vlan_id_t vid) {
        meta.access = 1;
        meta.vid = vid;
    }
    action trunk() {
        meta.trunk = 1;
    }
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }
    table port_vlan {
        key = { standard_metadata.ingress_port: exact @name("in_port"); }
        actions = { access; trunk; drop; }
        default_action = drop();
        size = 512;
    }
    table vlan_dmac {
        key = {
            hdr.vlan.vid: exact @name("vid");
            hdr.ethernet.dst_addr: exact @name("eth_dst");
        }
        actions = { forward; flood; drop; }
        default_action = drop();
        size = 4096;
    }

    apply {
        bool tagged = hdr.vlan.isValid();
        port_vlan.apply();
        if (meta.access == 1) {
            if (tagged) {
                drop();
                exit;
            }
            /* push: the tag takes the frame's EtherType, the frame gets 0x8100 */
            hdr.vlan.setValid();
            hdr.vlan.vid = meta.vid;
            hdr.vlan.pcp = 0;
            hdr.vlan.dei = 0;
            hdr.vlan.ether_type = hdr.ethernet.ether_type;
            hdr.ethernet.ether_type = ETH_VLAN;
        } else if (meta.trunk == 1) {
            if (!tagged) {
                drop();
                exit;
            }
        } else {
            exit;   /* dropped by port_vlan's default */
        }
        vlan_dmac.apply();
    }
}

control VlanEgress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    NoEcho() no_echo;

    action untag() {
        hdr.ethernet.ether_type = hdr.vlan.ether_type;
        hdr.vlan.setInvalid();
    }
    action keep_tag() {
    }
    table egress_vlan {
        key = { standard_metadata.egress_port: exact @name("out_port"); }
        actions = { untag; keep_tag; }
        default_action = keep_tag();
        size = 512;
    }
    apply {
        no_echo.apply(standard_metadata);
        egress_vlan.apply();
    }
}

control VlanComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control VlanDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.vlan);
    }
}

V1Switch(VlanParser(), VlanVerifyChecksum(), VlanIngress(), VlanEgress(), VlanComputeChecksum(),
         VlanDeparser()) main;
