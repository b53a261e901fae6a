// exit and return in nested blocks of apply blocks, of inlined controls and of actions
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Inner(inout headers_t hdr) {
    apply {
        if (hdr.h.k == 1) {
            hdr.h.a = 1;
            if (hdr.h.b == 0) {
                return;
            }
            hdr.h.a = 2;
        } else if (hdr.h.k == 2) {
            {
                hdr.h.a = 3;
                exit;
            }
        }
        hdr.h.c = 9;
    }
}
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    Inner() inner;
    action set_exit(bit<8> v) {
        hdr.h.d = v;
        exit;
    }
    table t {
        key = { hdr.h.k : exact; }
        actions = { set_exit; NoAction; }
        const entries = { 3 : set_exit(8w40); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        inner.apply(hdr);
        hdr.h.d = hdr.h.d + 1;
        t.apply();
        if (hdr.h.k == 4) {
            if (hdr.h.b == 1) {
                hdr.h.b = 2;
                return;
            }
            hdr.h.b = 3;
        }
        hdr.h.c = hdr.h.c + 1;
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply { hdr.h.b = hdr.h.b + 16; }
}
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
