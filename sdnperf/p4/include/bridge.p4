/* L2 bridging shared by the workload-complexity programs (l2.p4, and the non-IPv4 path of
 * ipv4.p4 and pipeline8.p4): one exact table on the destination MAC. The control plane
 * writes one entry per known host (forward) and one for ff:ff:ff:ff:ff:ff (flood to a
 * multicast group of every port); an unknown destination is dropped (the default action,
 * which the control plane may change to a flood). Needs headers.p4. */
#ifndef SDNPERF_BRIDGE_P4
#define SDNPERF_BRIDGE_P4

control Bridge(in mac_t dst_addr, inout standard_metadata_t standard_metadata) {
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
    }
    action drop() {
        mark_to_drop(standard_metadata);
    }
    table dmac {
        key = { dst_addr: exact @name("eth_dst"); }
        actions = { forward; flood; drop; }
        default_action = drop();
        size = 4096;
    }
    apply {
        dmac.apply();
    }
}

/* In egress: a flooded replica never goes back out of the port it came in on. */
control NoEcho(inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.mcast_grp != 0 &&
                standard_metadata.egress_port == standard_metadata.ingress_port) {
            mark_to_drop(standard_metadata);
        }
    }
}

#endif
