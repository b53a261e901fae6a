#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser Sub(packet_in pk, out H hdr) {
    state first { pk.extract(hdr.h); transition accept; }
}
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
action other() { }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set() { hdr.h.a = 1; }
    table t { key = { hdr.h.a : exact; } actions = { set; } }
    apply { t.apply(); }
}
control J(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set() { hdr.h.a = 1; }
    action put(inout bit<8> x) { x = 2; }
    table t {
        key = { hdr.h.a : exact; }
        actions = { set; put(hdr.h.a); }
        default_action = other();
        const entries = {
            1 : set();
            2 : other();
            3 : put(hdr.h.b);
        }
    }
    table u { key = { hdr.h.a : exact; } actions = { put(hdr.h.a); } default_action = put(hdr.h.b); }
    table w { key = { hdr.h.a : exact; } actions = { set; } const entries = { 1 : NoAction(); } }
    apply { t.apply(); u.apply(); w.apply(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
