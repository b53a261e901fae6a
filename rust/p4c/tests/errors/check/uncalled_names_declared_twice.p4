#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
// never instantiated: p4c still checks its states and its declarations
parser Unused(packet_in pk, out H hdr) {
    state start { transition select(hdr.h.a) { 1: missing; default: accept; } }
}
control Spare(inout H hdr) {
    action a() { }
    action a() { }
    table t { key = { hdr.h.a : exact; } actions = { a; } }
    table t { key = { hdr.h.a : exact; } actions = { a; } }
    apply { }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
