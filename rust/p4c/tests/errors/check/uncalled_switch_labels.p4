#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
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
    table t { key = { hdr.h.a : exact; } actions = { set; } }
    apply {
        if (hdr.h.b == 0) {
            switch (t.apply().action_run) {
                other: { hdr.h.b = 1; }
                set: { hdr.h.b = 2; }
                NoAction: { hdr.h.b = 3; }
                (1 + 1): { hdr.h.b = 4; }
            }
        }
    }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
