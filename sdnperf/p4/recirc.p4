/* sdnperf's recirculation program (P4_16, v1model): delay control by recirculation.
 *
 * Forwards exactly like l2l3.p4 (the same fabric, include/l2l3_fabric.p4, so every app of
 * sdnperf's P4Runtime controller drives it) and, in egress, sends SELECTED packets round
 * the pipeline N more times before they leave, N read at run time:
 *
 *   RecircEgress.recirc_config   no key; its default action set_passes(passes) holds N
 *                                (32 bits; 0 = never recirculate; written over P4Runtime as the
 *                                architecture's `recirc_passes` param, no recompilation; what
 *                                bounds N on each switch: docs/recirculation.md)
 *   RecircEgress.recirc_select   ternary on (dscp, dst_addr) of IPv4 packets; a hit
 *                                (select_packet) selects the packet; no hit: not selected
 *   RecircEgress.recirculations  packet counter, index 0: one count per recirculation
 *
 * Never recirculated: packets to or from the CPU port (packet-in / packet-out), flooded
 * and multicast replicas (a replica recirculated would be replicated again), dropped
 * packets, non-IPv4 packets.
 * A recirculated pass skips the forwarding tables: the port decided on the first pass is
 * kept in preserved metadata, so the packet leaves once, on that port, and is changed only
 * as the first pass changed it (a routed packet's TTL is decremented once, not per pass).
 */
#include <core.p4>
#include <v1model.p4>

#define RECIRC_FIELDS 1   /* field list preserved across recirculation */

struct metadata_t {
    bit<1> routed;                               /* see include/l2l3_fabric.p4 */
    @field_list(RECIRC_FIELDS) bit<32> recirc_done;   /* passes made so far */
    @field_list(RECIRC_FIELDS) bit<9> recirc_port;   /* egress port the first pass chose */
    bit<32> recirc_limit;                        /* N, from recirc_config */
    bit<6> dscp;
}

#include "include/l2l3_fabric.p4"

control RecircIngress(inout headers_t hdr, inout metadata_t meta,
                      inout standard_metadata_t standard_metadata) {
    L2L3Ingress() fabric;

    apply {
        if (meta.recirc_done > 0) {
            standard_metadata.egress_spec = meta.recirc_port;
        } else {
            fabric.apply(hdr, meta, standard_metadata);
        }
    }
}

control RecircEgress(inout headers_t hdr, inout metadata_t meta,
                     inout standard_metadata_t standard_metadata) {
    L2L3Egress() fabric;
    counter(1, CounterType.packets) recirculations;

    action set_passes(bit<32> passes) {
        meta.recirc_limit = passes;
    }
    action select_packet() {
    }
    table recirc_config {
        key = { }
        actions = { set_passes; }
        default_action = set_passes(0);
    }
    table recirc_select {
        key = {
            meta.dscp: ternary @name("dscp");
            hdr.ipv4.dst_addr: ternary @name("dst_addr");
        }
        actions = { select_packet; NoAction; }
        default_action = NoAction();
        size = 64;
    }

    apply {
        fabric.apply(hdr, meta, standard_metadata);
        if (hdr.ipv4.isValid() && standard_metadata.egress_port != CPU_PORT &&
                standard_metadata.ingress_port != CPU_PORT && standard_metadata.mcast_grp == 0) {
            recirc_config.apply();
            meta.dscp = hdr.ipv4.diffserv[7:2];
            if (meta.recirc_done < meta.recirc_limit) {
                if (recirc_select.apply().hit) {
                    meta.recirc_done = meta.recirc_done + 1;
                    meta.recirc_port = standard_metadata.egress_port;
                    recirculations.count(0);
                    recirculate_preserving_field_list(RECIRC_FIELDS);
                }
            }
        }
    }
}

V1Switch(L2L3Parser(), L2L3VerifyChecksum(), RecircIngress(), RecircEgress(),
         L2L3ComputeChecksum(), L2L3Deparser()) main;
