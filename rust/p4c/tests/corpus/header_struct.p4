/* Header fields of struct type (P4_16 type nesting rules: a struct holding only
 * bit<N>, int<N>, bool, serializable enums or such structs may be a header field):
 * a table keyed on fields inside it, the nested struct copied out and written
 * back as a list; and ?: with an untyped constant branch, which takes the type
 * of the other branch (bit<3>), not the type of the surrounding cast, also when
 * the other branch calls a function with an inout argument. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
struct nibbles_t { bit<4> hi; bit<4> lo; }
struct row_t { bit<8> e; nibbles_t nib; bit<16> t; bool flag; }
header rec_t { bit<8> kind; row_t row; bit<7> pad; }

struct headers { ethernet_t eth; rec_t rec; }

bit<3> low3(inout bit<16> t) {
    t = t + 16w0x100;
    return t[2:0];
}
struct metadata { bit<8> unused; }

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.rec);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    table by_row {
        key = { hdr.rec.row.e : exact; hdr.rec.row.nib.hi : exact; }
        actions = { fwd; NoAction; }
        default_action = fwd(1);
    }
    apply {
        by_row.apply();
        nibbles_t n = hdr.rec.row.nib;
        hdr.rec.row.nib = { n.lo, n.hi };
        if (hdr.rec.row.flag) {
            hdr.rec.row.t = hdr.rec.row.t + 1;
        }
        hdr.rec.kind = (bit<8>)-((hdr.rec.row.e == 1) ? 2 : 3w1);
        hdr.rec.pad = (bit<7>)-((hdr.rec.row.e == 2) ? 2 : low3(hdr.rec.row.t));
        // also when the condition is a constant: -(4w6), not -6
        hdr.eth.etype = (bit<16>)-(true ? 6 : 4w1);
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t sm) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
