#include <core.p4>
#include <v1model.p4>
// compile-time constants in bodies lowering never sees (an uncalled function, an unused
// control's table and action), where p4c's front end requires them: sema::constants
// checks them all
header h_t { bit<8> a; bit<8> b; }
struct headers { h_t h; h_t[2] hs; }
struct metadata { bit<8> m; }
void unused_fn(inout headers hdr, in bit<32> n) {
    const bit<8> c = hdr.h.a;
    hdr.hs.push_front(n);
    hdr.h.a = hdr.h.b[hdr.h.a:0];
}
control Never(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action set(bit<8> v) { meta.m = v; }
    action keep() { clone_preserving_field_list(CloneType.I2E, 5, meta.m); }
    table t {
        key = { hdr.h.a: exact; }
        actions = { set; keep; }
        default_action = set(hdr.h.b);
    }
    apply { t.apply(); }
}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headers hdr, inout metadata meta) { apply { } }
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr.h); } }
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    apply { }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
