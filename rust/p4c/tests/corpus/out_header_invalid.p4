// An `out` header parameter starts invalid (P4_16 §6.8: out parameters are
// uninitialized, headers invalid), and copy-out gives the caller that header: a
// function that leaves it alone invalidates the caller's header, one that sets it
// valid gives its fields. Bound directly to the caller's header (no copy), the
// header would stay valid and be emitted.
#include <core.p4>
#include <v1model.p4>

header tag_t { bit<8> kind; }
header h_t { bit<8> a; bit<8> b; }
struct headers_t { tag_t tag; h_t h; }
struct metadata_t { }

void leave(out h_t x) { }
void fill(out h_t x) {
    x.setValid();
    x.a = 0x55;
    x.b = 0x66;
}

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.tag);
        pkt.extract(hdr.h);
        transition accept;
    }
}
control I(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (hdr.tag.kind == 1) {
            leave(hdr.h);
        } else if (hdr.tag.kind == 2) {
            fill(hdr.h);
        }
    }
}
control E(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control V(inout headers_t hdr, inout metadata_t meta) { apply { } }
control C(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) {
    apply {
        pkt.emit(hdr.tag);
        pkt.emit(hdr.h);
    }
}
V1Switch(P(), V(), I(), E(), C(), D()) main;
