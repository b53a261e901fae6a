// Table applications evaluated first in a condition or a value:
// `if (t.apply().hit && c)`, `if (!u.apply().miss || c)` and
// `x = f(v.apply().hit ? a : b, ...)`.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> c; bit<8> r1; bit<8> r2; bit<8> r3; }
struct headers_t { h_t h; }
struct metadata_t { }

bit<8> plus(in bit<8> a, in bit<8> b) { return a + b; }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    // the action changes c, which the rest of the condition reads after the table ran
    action mark() { hdr.h.c = hdr.h.c + 1; }
    table t {
        key = { hdr.h.k : exact; }
        actions = { mark; NoAction; }
        const entries = { 1 : mark(); 3 : mark(); }
        default_action = NoAction();
    }
    table u {
        key = { hdr.h.k : exact; }
        actions = { NoAction; }
        const entries = { 2 : NoAction(); 3 : NoAction(); }
        default_action = NoAction();
    }
    table v {
        key = { hdr.h.k : exact; }
        actions = { NoAction; }
        const entries = { 1 : NoAction(); }
        default_action = NoAction();
    }
    apply {
        sm.egress_spec = 1;
        if (t.apply().hit && hdr.h.c == 8) {
            hdr.h.r1 = 1;
        }
        if (!u.apply().miss || hdr.h.c == 9) {
            hdr.h.r2 = 1;
        }
        hdr.h.r3 = plus(v.apply().hit ? 8w7 : 8w5, hdr.h.r3);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
