/* List expressions as values: a header given as a list to an action's `in`
 * parameter (copied in before the body writes the fields the list read), a
 * struct holding a header given as a nested list to a function, and control
 * locals of tuple and struct type initialized from lists whose elements call a
 * function with an inout argument (evaluated left to right before apply). */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header tag_t { bit<8> a; bit<8> b; bit<16> c; }
struct pair_t { tag_t t; bit<8> k; }
struct headers { ethernet_t eth; tag_t t; }
struct metadata { bit<8> unused; }

bit<8> sum_pair(in pair_t p) {
    return p.t.a + p.t.b + p.k;
}

bit<16> next_c(inout bit<16> c) {
    c = c + 1;
    return c + 16w0x10;
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.t);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    // next_c increments hdr.t.c before `saved` reads it
    tuple<bit<16>, bit<8>> seen = { next_c(hdr.t.c), hdr.t.a };
    pair_t saved = { { hdr.t.a, hdr.t.b, hdr.t.c }, 8w3 };

    action copy_from(in tag_t v) {
        hdr.t.a = 8w0;
        hdr.t.b = v.a;
        hdr.t.c = v.c;
    }
    apply {
        sm.egress_spec = 1;
        copy_from({ hdr.t.b, 8w0, hdr.t.c + 16w0x100 });
        hdr.eth.etype = (bit<16>)sum_pair({ { hdr.t.b, 8w1, 16w0 }, 8w2 });
        hdr.eth.src[7:0] = sum_pair(saved);
        hdr.eth.src[15:8] = saved.t.a;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t sm) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
