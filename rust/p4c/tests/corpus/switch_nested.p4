// `switch (t.apply().action_run)` nested in other statements: inside an `if`, inside a
// case of another switch, after statements in a block, and in an inlined control.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; bit<8> d; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Sub(inout h_t h) {
    action up() { h.d = h.d + 1; }
    action down() { h.d = h.d - 1; }
    table s {
        key = { h.k : exact; }
        actions = { up; down; }
        const entries = { 1 : up(); 2 : down(); }
        default_action = up();
    }
    apply {
        if (h.k != 0) {
            switch (s.apply().action_run) {
                down: { h.c = 0x20; }
                default: { h.c = 0x10; }
            }
        }
    }
}
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    Sub() sub;
    action one() { hdr.h.a = 1; }
    action two() { hdr.h.a = 2; }
    action three() { hdr.h.a = 3; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { one; two; three; }
        const entries = { 1 : one(); 2 : two(); }
        default_action = three();
    }
    table u {
        key = { hdr.h.a : exact; }
        actions = { one; two; NoAction; }
        const entries = { 2 : one(); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (hdr.h.k < 3) {
            hdr.h.b = 0xff;
            switch (t.apply().action_run) {
                one: { hdr.h.b = 1; }
                two: {
                    switch (u.apply().action_run) {
                        one: { hdr.h.b = 0x21; }
                        NoAction: { hdr.h.b = 0x2f; }
                    }
                }
            }
            hdr.h.d = hdr.h.d + 0x10;
        } else {
            hdr.h.b = 0xee;
        }
        sub.apply(hdr.h);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
