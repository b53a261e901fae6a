// @priority after the action of a const entry (where the P4_16 grammar puts entry
// annotations): BMv2 picks the matching entry with the smallest priority number; entries
// without the annotation get their position (1, 2, ...), as p4c numbers them.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<16> k; bit<8> port; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action to(bit<9> p) { sm.egress_spec = p; hdr.h.port = (bit<8>)p; }
    table t {
        key = { hdr.h.k : ternary; }
        actions = { to; }
        default_action = to(9);
        const entries = {
            0x00A0 &&& 0x00F0 : to(1) @priority(30);   // broad, lowest priority
            0x0AAA            : to(2);                  // position 2
            0x0A0A &&& 0x0F0F : to(3) @priority(1);    // wins over both
        }
    }
    apply { t.apply(); }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
