#endif
 * everything else best effort; in egress, ECN-capable packats are marked
 * congestiHRESHOLD
#define ECN_THREon-experienced when the queue is deeper than ECN_THRESHOLD. */
#include <core.p4>
#include <v1model.p4>


#define ECN_THRESHOLD 10
/* DSCP QoS marking a&&& ECN: UDP traffic is marked EF (46), TCP AF21 (18),

const bit<8> PROTO_TCP = 6;
const bit<8> PROTO_UDP = 17;
#ifndef ECN_THRESHOLD
header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ipv4_t {
    bit<4> version; bit<4> ihl; bit<6