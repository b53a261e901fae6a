// `in` parameters of controls are copied in at the call: the control's writes to the
// argument's location do not change the parameter (C writes h.a, then reads x, which
// was passed h.a).
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout h_t h, in bit<8> x, in bool big) {
    apply {
        h.a = 9;
        h.b = x;
        h.c = big ? 8w1 : 8w0;
    }
}
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    C() c;
    apply {
        sm.egress_spec = 1;
        // big is read as a > 100 before C sets a to 9
        c.apply(hdr.h, hdr.h.a, hdr.h.a > 100);
        hdr.h.d = 7;
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
