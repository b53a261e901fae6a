#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; bit<8> b; }
struct H { h_t h; }
struct M { }
const bit<8> crc = 1;
parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action log_not_literal() { log_msg(hdr.h.a); }
    action log_too_many() { log_msg("x", {hdr.h.a}, 3); }
    action clone_type() { clone(2, 32w5); }
    action hash_algo() { hash(hdr.h.a, 2, 8w0, {hdr.h.b}, 8w255); }
    action checksum_count() { update_checksum(true, {hdr.h.a}, hdr.h.b); }
    action checksum_algo() { update_checksum(true, {hdr.h.a}, hdr.h.b, crc); }
    apply { }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control V(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.h); } }
V1Switch(P(), V(), I(), E(), V(), D()) main;
