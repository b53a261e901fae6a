/* sdnperf's L2/L3 program for the `p4` architecture (P4_16, v1model).
 *
 * Written for sdnperf's P4Runtime controller (sdnperf/controllers/p4rt):
 *  - a CPU port (CPU_PORT) with controller headers: packets to the controller carry
 *    `packet_in` (the port they came in on), packets from it carry `packet_out`
 *    (the port to send on, or a multicast group to replicate to);
 *  - LLDP (0x88cc) always goes to the controller (link discovery), never through tables;
 *  - three exact forwarding tables, looked up in order, first hit wins:
 *      flow_port (ingress port, eth src, eth dst)   reactive L2 learning
 *      flow_pair (eth src, eth dst)                 topology-aware reactive forwarding
 *      dmac      (eth dst)                          proactive / runtime files
 *    a destination none of them knows goes to the controller (the default of `dmac`,
 *    which the controller may change);
 *  - broadcast/multicast destinations (ARP requests among them) are looked up in
 *    `flood` by ingress port: flood to a multicast group (proactive spanning tree) or,
 *    when nothing is set, to the controller;
 *  - IPv4 is parsed (and its TTL left alone: this is a layer-2 fabric); `ipv4_lpm` is
 *    there for runtime files that route (set next-hop MACs, decrement TTL).
 * Egress drops a replica sent back out of its ingress port, and puts the packet_in
 * header on packets to the controller.
 */
#include <core.p4>
#include <v1model.p4>

struct metadata_t {
    bit<1> routed;     /* ipv4_lpm rewrote the frame: recompute the IPv4 checksum */
}

#include "include/l2l3_fabric.p4"

V1Switch(L2L3Parser(), L2L3VerifyChecksum(), L2L3Ingress(), L2L3Egress(),
         L2L3ComputeChecksum(), L2L3Deparser()) main;
