#include <core.p4>
#include <v1model.p4>
// callees in bodies lowering never sees (an uncalled function, an unused parser and
// control action): sema::bodies resolves every call; an action, a void extern
// function or an extern instance is no value, a value set has no methods
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
action nop() { }
void unused_fn(inout metadata meta) {
    not_declared_anywhere(meta.m);
    meta.m = nop();
}
parser Unused(packet_in pkt, out headers hdr) {
    value_set<bit<8>>(4) vs;
    state start {
        vs.clear();
        transition accept;
    }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    register<bit<8>>(4) r;
    action unused_local() {
        meta.m = r;
        meta.m = mark_to_drop(sm);
        another_undeclared();
    }
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
