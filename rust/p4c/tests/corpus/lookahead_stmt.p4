// `pkt.lookahead<T>();` as a statement: the value is dropped, but a packet shorter than
// T fails the parser with PacketTooShort (as with p4c, whose JSON sets a temporary from
// the lookahead). A struct type counts the bits of its fields.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> a; }
struct four_t { bit<16> x; bit<16> y; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start {
        pkt.lookahead<four_t>();
        pkt.extract(hdr.h);
        transition accept;
    }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        sm.egress_spec = 1;
        if (sm.parser_error != error.NoError) {
            mark_to_drop(sm);
        }
        hdr.h.a = hdr.h.a + 1;
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
