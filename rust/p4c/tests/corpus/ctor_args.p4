// Controls with constructor parameters: a constant, and another control instance the
// control applies (`Add(3) add3; Then(add3) t;`).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; }
struct headers_t { h_t h; }
struct metadata_t { }

control Step(inout bit<8> x);

control Add(inout bit<8> x)(bit<8> k) {
    apply { x = x + k; }
}
control Double(inout bit<8> x) {
    apply { x = x << 1; }
}
// applies `first`, then `second` when x is odd
control Then(inout bit<8> x)(Step first, Step second) {
    apply {
        first.apply(x);
        if (x & 1 == 1) {
            second.apply(x);
        }
    }
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    Add(3) add3;
    Add(8w100) add100;
    Double() dbl;
    Then(add3, dbl) t1;
    Then(dbl, add100) t2;
    apply {
        sm.egress_spec = 1;
        t1.apply(hdr.h.a);
        t2.apply(hdr.h.b);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
