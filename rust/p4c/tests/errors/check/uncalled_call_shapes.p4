#include <core.p4>
#include <v1model.p4>
// argument counts and types of call statements in bodies lowering never sees (an
// uncalled function, an unused action, an unused control action, a control main does
// not use): sema::calls checks them all
header h_t { bit<8> a; bit<16> b; }
struct headers { h_t h; h_t[2] s; }
struct metadata { bit<8> m; bool f; }
struct d_t { bit<8> a; bit<16> b; }
register<bit<16>>(4) top_reg;
void unused_fn(inout standard_metadata_t sm) {
    mark_to_drop();
    random(sm.egress_spec, 0);
}
action set8(inout bit<8> x) { x = 1; }
void unused_fn2(inout headers hdr) {
    set8(hdr.h.b);
}
action unused_global(inout headers hdr) {
    top_reg.read(hdr.h.a, 0);
    top_reg.write(0, hdr.h.a);
    hdr.s.push_front();
    random(hdr.h, 0, 1);
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control Unused(inout headers hdr, inout metadata meta) {
    counter(4, CounterType.packets) cnt;
    C() sub;
    table t {
        key = { hdr.h : exact; 5 : exact; }
        actions = { NoAction; set8(hdr.h.b); }
    }
    apply {
        sub.apply(hdr);
        cnt.count();
        C.apply(hdr, meta, meta);
        hdr.h.a.setValid();
        hdr.h.push_front(1);
        cnt.read(0);
        sub.count();
    }
}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action unused_local() {
        assert(hdr.h.a);
        digest(1, {hdr.h.a, hdr.h.b});
        digest<d_t>(1, {hdr.h.a});
        digest<bit<8>>(1, hdr.h.a);
    }
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
