// State of control instances (P4_16 spec, instantiation): each instance has its own
// externs, and applying one instance twice uses the same ones. c1 is applied twice and
// counts 1, 2, 3, ... across both applications; c2, another instance of the same
// control, counts on its own. (A table in an instance applied twice is refused: BMv2
// applies a table once.)
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Count(out bit<8> seen, in bit<8> step) {
    register<bit<8>>(1) r;
    counter(1, CounterType.packets) applications;
    apply {
        bit<8> v;
        r.read(v, 0);
        v = v + step;
        r.write(0, v);
        applications.count(0);
        seen = v;
    }
}
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    Count() c1;
    Count() c2;
    apply {
        sm.egress_spec = 1;
        c1.apply(hdr.h.a, 1);
        c1.apply(hdr.h.b, 1);
        c2.apply(hdr.h.c, 1);
        c2.apply(hdr.h.d, 10);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
