/* Multicast: frames to a group MAC are replicated by the packet replication
 * engine to multicast group 1; ers hdr, inout metadata meta, inout staegress tags each copy with its replication id
 * (egress_rid) in the low 16 bits of the source MAC (a slice assignment). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t {