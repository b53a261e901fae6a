// Table applications under `||`, `&&`, `?:` and `!` (not evaluated first): the table
// runs exactly when the operator evaluates its operand, and its action's writes are
// seen by what is evaluated after it.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> c; bit<8> r1; bit<8> r2; bit<8> r3; bit<8> r4; bit<8> n; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    // every action counts how many tables ran in n
    action count() { hdr.h.n = hdr.h.n + 1; }
    action bump() { hdr.h.n = hdr.h.n + 1; hdr.h.c = hdr.h.c + 10; }
    table t1 {
        key = { hdr.h.k : exact; }
        actions = { count; bump; }
        const entries = { 1 : count(); 2 : bump(); }
        default_action = count();
    }
    table t2 {
        key = { hdr.h.k : exact; }
        actions = { count; }
        const entries = { 2 : count(); 3 : count(); }
        default_action = count();
    }
    table t3 {
        key = { hdr.h.k : exact; }
        actions = { count; }
        const entries = { 3 : count(); }
        default_action = count();
    }
    table t4 {
        key = { hdr.h.k : exact; }
        actions = { count; }
        const entries = { 4 : count(); }
        default_action = count();
    }
    apply {
        sm.egress_spec = 1;
        // t1 runs only when c != 0
        bool b1 = hdr.h.c == 0 || t1.apply().hit;
        hdr.h.r1 = b1 ? 8w1 : 8w2;
        // t2 runs only when c > 5; the comparison after it reads c after t1's action
        if (hdr.h.c > 5 && (t2.apply().miss || hdr.h.c > 20)) {
            hdr.h.r2 = 1;
        }
        // t3 runs only when k is odd
        hdr.h.r3 = (hdr.h.k & 1) == 1 ? (t3.apply().hit ? 8w7 : 8w8) : 8w9;
        // `!` over a table application that is not evaluated first
        if (!(hdr.h.k == 9 || t4.apply().hit)) {
            hdr.h.r4 = 1;
        }
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
