/* Locations that are not plain names: functions that return a header or a
 * struct (built from list expressions, returned from nested ifs, with an
 * inout parameter the caller's own target aliases), fields of a function's
 * result, a slice passed as an inout argument of an action that also writes
 * the whole field, a nested slice as an assignment target, and extract<T>(_)
 * skipping a header nobody keeps. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dst; bit<48> src; bit<16> etype; }
header pad_t { bit<16> skip; }
header tag_t { bit<8> a; bit<8> b; bit<16> c; }
struct pair_t { bit<8> lo; bit<8> hi; }
struct headers { ethernet_t eth; tag_t t1; tag_t t2; }
struct metadata { bit<8> unused; }

// one of three returns, two of them inside nested ifs
tag_t make_tag(in bit<8> sel) {
    if (sel > 8w10) {
        if (sel > 8w100) {
            return { 8w0xAA, sel, 16w1 };
        }
        return { 8w0xBB, sel, 16w2 };
    }
    return { 8w0xCC, sel, 16w3 };
}

// returns a header made from the old value of its inout parameter
tag_t bump(inout bit<16> v) {
    tag_t r = { 8w1, 8w2, v };
    v = v + 16w1;
    return r;
}

pair_t split(in bit<16> v) {
    return { v[7:0], v[15:8] };
}

parser MyParser(packet_in pkt, out headers hdr, inout metadata meta,
                inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract<pad_t>(_);
        pkt.extract(hdr.t1);
        pkt.extract(hdr.t2);
        transition accept;
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t sm) {
    // the slice is copied out after the body: the whole-field write comes first
    action low_nibble(inout bit<4> n) {
        hdr.t2.a = 8w0xF0;
        n = 4w0x5;
    }
    apply {
        sm.egress_spec = 1;
        hdr.t1 = make_tag(hdr.t1.a);
        // bump copies out c + 1, then the assignment overwrites c with old c + 0x100
        hdr.t2.c = bump(hdr.t2.c).c + 16w0x100;
        bit<8> n = 8w0xFF;
        n[7:4][2:1] = 2w0;
        hdr.t2.b = n;
        low_nibble(hdr.t2.a[3:0]);
        pair_t p = split(hdr.eth.etype);
        hdr.eth.etype = p.lo ++ p.hi;
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t sm) { apply { } }
control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
