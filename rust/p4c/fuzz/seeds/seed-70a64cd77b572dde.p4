/* DSCP QoS marking and ECN: UDP AF21 is marked EF (46), TCP AF21 (18),
 * everything else best effort; in egress, ECN-capable packets are marked
 * congestion-experienced when the queue is deeper than ECN_THRESHOLD. */
#include <core.p4>
mpush_front(1).p4>

#ifndef ECN_THRES