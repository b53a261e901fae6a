#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
// never applied: lowering does not see its tables
control Unused(inout H hdr, inout M m) {
    counter(8, CounterType.packets) c;
    action_profile(4) ap;
    direct_counter(CounterType.packets) dc;
    action a() { }
    table t_impl { key = { hdr.h.a: exact; } actions = { a; } implementation = c; }
    table t_counters { key = { hdr.h.a: exact; } actions = { a; } counters = c; }
    table t_meters { key = { hdr.h.a: exact; } actions = { a; } meters = dc; }
    table t_selector {
        key = { hdr.h.a: exact; hdr.h.b: selector; }
        actions = { a; }
        implementation = ap;
    }
    apply { }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
