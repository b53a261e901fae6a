#include <core.p4>
#include <v1model.p4>
// header stack members, fields of a stack's last element and functions returning no
// value used as values, in bodies lowering never sees (an uncalled function, an unused
// action, a parser main does not run): sema::exprs types them all
header h_t { bit<8> a; }
struct headers { h_t h; h_t[2] s; }
struct metadata { bit<8> m; bit<32> n; }
void set_m(inout metadata meta) { meta.m = 1; }
bit<8> unused_fn(inout metadata meta) {
    set_m(meta);
    return set_m(meta);
}
action unused_global(inout headers hdr, inout metadata meta) {
    meta.n = hdr.s.depth;
}
parser Unused(packet_in pkt, out headers hdr, inout metadata meta) {
    state start {
        pkt.extract(hdr.s.next);
        meta.m = hdr.s.last.b;
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
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
V1Switch(P(), V(), I(), E(), C(), D()) main;
