/* tests/e2e/test_p4runtime_meter_clone.py's program: a frame entering a port leaves by
 * the port table `ports` names; an indirect meter, one cell per ingress port, drops what
 * it colours red; every frame it lets through is also cloned ingress-to-egress to
 * session 7, so a copy leaves by that session's port while a controller has it set. */
#include <core.p4>
#include <v1model.p4>

const bit<32> MIRROR_SESSION = 7;
const bit<2> RED = 2;

header ethernet_t {
    bit<48> dst;
    bit<48> src;
    bit<16> ether_type;
}

struct headers_t {
    ethernet_t ethernet;
}

struct meta_t {
    bit<2> color;
}

parser MeterCloneParser(packet_in pkt, out headers_t hdr, inout meta_t meta,
                        inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.ethernet);
        transition accept;
    }
}

control MeterCloneVerify(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MeterCloneIngress(inout headers_t hdr, inout meta_t meta,
                          inout standard_metadata_t sm) {
    meter(8, MeterType.packets) port_policer;

    action forward(bit<9> port) {
        sm.egress_spec = port;
    }
    action drop() {
        mark_to_drop(sm);
    }
    table ports {
        key = { sm.ingress_port: exact; }
        actions = { forward; drop; }
        default_action = drop();
    }

    apply {
        ports.apply();
        port_policer.execute_meter((bit<32>) sm.ingress_port, meta.color);
        if (meta.color == RED) {
            mark_to_drop(sm);
        } else {
            clone(CloneType.I2E, MIRROR_SESSION);
        }
    }
}

control MeterCloneEgress(inout headers_t hdr, inout meta_t meta,
                         inout standard_metadata_t sm) {
    apply { }
}

control MeterCloneChecksum(inout headers_t hdr, inout meta_t meta) {
    apply { }
}

control MeterCloneDeparser(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.ethernet);
    }
}

V1Switch(MeterCloneParser(), MeterCloneVerify(), MeterCloneIngress(), MeterCloneEgress(),
         MeterCloneChecksum(), MeterCloneDeparser()) main;
