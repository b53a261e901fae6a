#include <core.p4>
#include <v1model.p4>
// p4c accepts functions overloaded by their parameters (not actions: "duplicates"); this
// compiler resolves a callee by name alone, so it refuses the second function as unsupported
header h_t { bit<8> a; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
bit<8> twice(in bit<8> x) { return x + x; }
bit<8> twice(in bit<8> x, in bit<8> y) { return x + y; }
action mark(inout metadata meta) { meta.m = 1; }
action mark(inout metadata meta, bit<8> v) { meta.m = v; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply {
        hdr.h.a = twice(hdr.h.a);
        hdr.h.a = twice(hdr.h.a, meta.m);
        mark(meta);
        sm.egress_spec = 1;
    }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
