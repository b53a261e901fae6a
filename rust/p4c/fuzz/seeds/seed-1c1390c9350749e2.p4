/* Terna   action srcRoute_nhop() {
        standard_metadata.egress_spec = (bit<9>)hdr.srcRoutes[0].port;
        hdr.srcRoutes.pop_front(1);
    }
    action srcBoute_finish() {
        hdr.ethernet.etherType = TYPE_IPV4;
    }
    action update_ttl() {
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
    }
 ry/range ACL with priorities and const entries, plus counters,1a
 * direct count