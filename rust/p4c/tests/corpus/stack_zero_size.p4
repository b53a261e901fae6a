// A zero-size header stack: size is 0, push/pop change nothing, and extracting its
// next element fails with error.StackOutOfBounds (the parser stops, ingress still runs).
// (BMv2 1.2.4.8 aborts on push_front/pop_front of a zero-size stack; the spec makes them no-ops.)
#include <core.p4>
#include <v1model.p4>

header byte_t { bit<8> v; }

struct headers {
    byte_t  op;
    byte_t  res;
    byte_t[0] empty;
}

struct meta { }

parser P(packet_in pkt, out headers hdr, inout meta m, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.op);
        pkt.extract(hdr.res);
        transition select(hdr.op.v) {
            1: overflow;
            default: accept;
        }
    }
    state overflow {
        pkt.extract(hdr.empty.next);
        transition accept;
    }
}

control VC(inout headers hdr, inout meta m) { apply { } }

control I(inout headers hdr, inout meta m, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        hdr.empty.push_front(1);
        hdr.empty.pop_front(1);
        hdr.res.v = (bit<8>)hdr.empty.size + 8w0x10;
        if (sm.parser_error == error.StackOutOfBounds) {
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
