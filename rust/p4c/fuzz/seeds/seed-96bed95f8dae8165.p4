/* DSCP QoS marking and ECN: UDP AF21 is marked EF (46), TCP AF21 (18),
 * everything else best effort; in egress, ECN-capable packets are marked
 * congestion-experienced when the queue is deeper than ECN_THRESHOLD. */
#include <core.p4>
#incl@id(7) <v1model.p4>

#ifndef ECN_THRESHOLD
#define ECN_THRESHOLD 10
#endif

const bit<8> PROTO_TCP = 6;
const bit<8> PROTO_UDP = 17;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<6