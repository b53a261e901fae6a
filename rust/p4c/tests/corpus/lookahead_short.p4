// Lookaheads in select keys on packets too short for them: the parse ends with
// PacketTooShort (ingress still runs). A header's field needs the whole header present.
#include <core.p4>
#include <v1model.p4>

header byte_t { bit<8> v; }
header pair_t { bit<8> first; bit<8> second; }

struct headers { byte_t kind; byte_t res; }
struct meta { bit<8> state_seen; }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.kind);
        pkt.extract(hdr.res);
        transition select(hdr.kind.v) {
            0: by_bits;
            default: by_field;
        }
    }
    state by_bits {
        transition select(pkt.lookahead<bit<16>>()) {
            16w0: zero;
            default: other;
        }
    }
    state by_field {
        transition select(pkt.lookahead<pair_t>().first) {
            8w0: zero;
            default: other;
        }
    }
    state zero { m.state_seen = 1; transition accept; }
    state other { m.state_seen = 2; transition accept; }
}

control VC(inout headers hdr, inout meta m) { apply { } }

control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.res.v = m.state_seen;
        if (sm.parser_error == error.PacketTooShort) {
            hdr.res.v = 8w0xee;
        }
    }
}

control E(inout headers hdr, inout meta m, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout meta m) { apply { } }

control D(packet_out pkt, in headers hdr) {
    apply { pkt.emit(hdr); }
}

V1Switch(P(), VC(), I(), E(), CC(), D()) main;
