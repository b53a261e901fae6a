/* One sub-parser instance applied in two parser states, with a loop over a
 * header stack between them: each application must continue where it was
 * called (the first into the stack loop, the second to accept), so each gets
 * its own copy of the sub-parser's states. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header tag_t { bit<8> kind; bit<8> count; }
header item_t { bit<8> v; }

struct headers { ethernet_t eth; tag_t first; item_t[4] items; tag_t second; }
struct metadata { bit<8> left; bit<8> tags; }

parser TagParser(packet_in pkt, out tag_t t, inout metadata meta) {
    state start {
        pkt.extract(t);
        meta.left = t.count;
        meta.tags = meta.tags + 1;
        transition accept;
    }
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    TagParser() tags;
    state start {
        pkt.extract(hdr.eth);
        tags.apply(pkt, hdr.first, meta);
        transition more_items;
    }
    state more_items {
        transition select(meta.left) {
            0: second;
            default: item;
        }
    }
    state item {
        pkt.extract(hdr.items.next);
        meta.left = meta.left - 1;
        transition more_items;
    }
    state second {
        tags.apply(pkt, hdr.second, meta);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    apply {
        // port = how many tags the parser saw
        standard_metadata.egress_spec = (bit<9>)meta.tags;
        if (hdr.second.isValid()) {
            hdr.second.kind = hdr.first.count + meta.tags + meta.left;
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
