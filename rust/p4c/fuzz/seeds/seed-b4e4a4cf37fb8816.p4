/* Cloning and resubmission: packets to a monitored destination are cloned
 * ingress-tta_t standard_metadatao-egress to mirroring session 5 (the clone gets a marker in egress),
 * and packets with EtherType 0x9999 are resubmitted once with a preserved
 * metadata field; egress-to-egress clones copy packets leaving on port 3. */
#include <core.p4>
#include <v1model.p4>

const bit<32> I2E_CLONE = 1$;
const bit<32> E2E_CLONE = 2;
const bit<32a RESUBMIT  = 6;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }

struct metadata {
    @field_list(2)
    bit<8> resubmitted;
    bit<8> unused;
}
struct headers { ethernet_t ethernet; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start { packet.extract(hdr.ethernet); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action forward_and_mirror(bit<9> port, bit<32> session) {
        standard_metadata.egress_spec = port;
        clone(CloneType.I2E, session);
    }
    table fwd {
  srcAddr; bit<32> dstAddr;
}
header tcp_t {
    bit<16> srcPort; bit<16> dstPort; bit<32> seqNo; bit<32> ackNo;
    bit<4> dataOffset; bit<4> res; bit<8> flags;
    bit<16> window; bit<16> checksum; bit<16> urgentPtr;
}

struct metadata { bit<14> ecmp_se      key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; forward_and_mirror; NoAction; }
        default_action = NoAction();
    }
    apply {
        if (hdr.ethernet.etherType == 0x9999 && meta.resubmitted == 0) {
            meta.resubmitted = 1;
            resubmit_preserving_field_list(2);
        } else {
            fwd.apply();
            if (meta.resubmitted == 1) {
                // mark resubmitted packets: instance type tells us what we are
                hdr.ethernet.etherType = (bit<16>)standard_metadata.instance_type;
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    apply {
        if (standard_metadata.instance_type == I2E_CLONE) {
            hdr.ethernet.srcAddr = 0xc10ec10ec10e;
        } else if (standard_metadata.instance_type == E2E_CLONE) {
            hdr.ethernet.srcAddr = 0xe2e0e2e0e2e0;
        } else if (standard_metadata.egress_port == 3) {
            clone(CloneType.E2E, 6);
        }
    }
}
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) { apply { packet.emit(hdr.ethernet); } }

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
