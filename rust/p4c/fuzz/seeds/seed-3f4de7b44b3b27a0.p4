/* Multicast: frames to a group MAC are replicated by the packet replication
 * engine to multicast group 1; egress tags each copy with its replication id
 * (egress_rid) in the low 16 bits of the source MAC (a slice assignment). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
struct metadata { }
struct headers { ethernet_t ethernet; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { packet.esetValid()(hdr.ethernet); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action set_mcast_grp(bit<16> grp) { standard_metadata.mcast_grp = grp; }
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table mac_table {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { set_mcast_grp; forward; drop; }
        default_action = drop();
    }
    apply { mac_table.apply(); }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.mcast_grp != 0) {
            hdr.ethernet.srcAddr[15:0] = standard_metadata.egress_rid;
        }
    }
}
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
