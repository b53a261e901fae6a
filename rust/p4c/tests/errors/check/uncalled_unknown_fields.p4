#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct S { bit<8> x; }
struct H { h_t h; h_t[2] hs; }
struct M { S s; }
const bit<8> K = 3;
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action no_header_field() { hdr.h.c = 1; }
    action no_struct_field() { m.s.y = hdr.h.a; }
    action no_field_read() { hdr.h.a = m.t.x; }
    action no_dyn_field(bit<1> i) { hdr.hs[i].z = 2; }
    action field_of_scalar() { hdr.h.a.q = 2; }
    action type_as_value() { hdr.h.a = h_t; }
    action action_as_value() { hdr.h.b = no_header_field; }
    action const_is_value() { hdr.h.b = K; }
    apply { }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
