/* Header stacks indexed at run time: a packet carries a slot number and four
 * 16-bit slots; the switch writes the ingress port into the chosen slot (if
 * that slot is valid), reads it back into a trailer, and records the stack's
 * lastIndex (read in the parser: P4_16 allows it nowhere else). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header ctl_t { bit<8> slot; bit<8> last; bit<16> readback; }
header slot_t { bit<16> value; }

struct metadata { bit<32> idx; }
struct headers { ethernet_t ethernet; ctl_t ctl; slot_t[4] slots; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x9000: parse_ctl;
            default: accept;
        }
    }
    state parse_ctl {
        packet.extract(hdr.ctl);
        packet.extract(hdr.slots.next);
        packet.extract(hdr.slots.next);
        packet.extract(hdr.slots.next);
        hdr.ctl.last = (bit<8>)hdr.slots.lastIndex;
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        standard_metadata.egress_spec = 1;
        if (hdr.ctl.isValid()) {
            meta.idx = (bit<32>)hdr.ctl.slot;
            // (hdr.slots[meta.idx].isValid() here: p4c-bm2-ss 1.2.4.8 writes a field
            // whose header is an expression, which sdnperf-switch cannot load)
            if (meta.idx < 3) {
                hdr.slots[meta.idx].value = (bit<16>)standard_metadata.ingress_port;
                hdr.ctl.readback = hdr.slots[meta.idx].value + 0x100;
            } else {
                hdr.ctl.readback = 0xffff;
            }
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply { packet.emit(hdr.ethernet); packet.emit(hdr.ctl); packet.emit(hdr.slots); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
