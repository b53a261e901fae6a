/* sdnperf's time-hold recirculation program (P4_16, v1model): delay control by
 * recirculation, held by TIME instead of by a number of passes.
 *
 * Forwards exactly like l2l3.p4 (include/l2l3_fabric.p4) and, in egress, sends SELECTED
 * packets round the pipeline again until they have been held for a hold time H: the first
 * pass's egress stores its egress_global_timestamp (µs) in preserved metadata, and every
 * egress pass compares egress_global_timestamp - start with H. The delay a pass adds
 * (which depends on the machine and its load) then no longer sets the hold: only the
 * clock's resolution and the last pass's length do (the packet leaves on the first pass
 * that finds its time reached, up to one pass late).
 *
 * Why the clock starts at the first EGRESS, not at ingress_global_timestamp: the hold is
 * meant to ADD H to what the packet takes without it. Counted from ingress, the first
 * pass's own way from ingress to egress (the switch's latency, which a packet pays with
 * no hold too) fell inside H and was not added: on BMv2, whose ingress timestamp is taken
 * as the packet is read from its port and which hands it through two queues and threads
 * before egress, that was 0.08-0.3 ms under load: a 1 ms hold read 8-31 % short.
 *
 *   RecircEgress.hold_config     no key; its default action set_hold(hold_us) holds H in µs
 *                                (32 bits; 0 = never recirculate; written over P4Runtime as
 *                                the architecture's `recirc_hold_us` param)
 *   RecircEgress.recirc_select   ternary on (dscp, dst_addr), as in recirc.p4
 *   RecircEgress.recirculations  packet counter, index 0: one count per recirculation
 *
 * Never recirculated, as in recirc.p4: packets to or from the CPU port, flooded and
 * multicast replicas, dropped packets, non-IPv4 packets. A switch's limit of passes per
 * packet still applies (ours: --max-passes; docs/recirculation.md).
 */
#include <core.p4>
#include <v1model.p4>

#define RECIRC_FIELDS 1   /* field list preserved across recirculation */

struct metadata_t {
    bit<1> routed;                                    /* see include/l2l3_fabric.p4 */
    @field_list(RECIRC_FIELDS) bit<32> recirc_done;   /* passes made so far */
    @field_list(RECIRC_FIELDS) bit<9> recirc_port;    /* egress port the first pass chose */
    @field_list(RECIRC_FIELDS) bit<48> recirc_start;  /* first pass's egress time (µs) */
    bit<48> hold;                                     /* H, from hold_config */
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

    action set_hold(bit<32> hold_us) {
        meta.hold = (bit<48>) hold_us;
    }
    action select_packet() {
    }
    table hold_config {
        key = { }
        actions = { set_hold; }
        default_action = set_hold(0);
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
            hold_config.apply();
            meta.dscp = hdr.ipv4.diffserv[7:2];
            if (meta.recirc_done == 0) {
                meta.recirc_start = standard_metadata.egress_global_timestamp;
            }
            if (standard_metadata.egress_global_timestamp - meta.recirc_start < meta.hold) {
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
