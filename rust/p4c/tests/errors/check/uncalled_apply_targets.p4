#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control Sub(inout H hdr) { apply { hdr.h.a = 1; } }
control Unused(inout H hdr, inout M m, inout standard_metadata_t sm) {
    counter(8, CounterType.packets) c;
    Sub() sub;
    action a() { }
    table t { key = { hdr.h.a: exact; } actions = { a; } }
    apply {
        t.apply();
        sub.apply(hdr);
        Sub.apply(hdr);
        c.apply();
        if (hdr.apply().hit) { hdr.h.b = 2; }
        bit<8> t = 3;
        t.apply();
    }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
