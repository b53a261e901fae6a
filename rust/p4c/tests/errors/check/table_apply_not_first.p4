#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct headers_t { h_t h; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    table t { key = { hdr.h.a : exact; } actions = { NoAction; } }
    apply {
        // `==` is evaluated after the table: neither first nor under `&&`, `||`, `?:`, `!`
        if (hdr.h.a == (t.apply().hit ? 8w1 : 8w2)) { sm.egress_spec = 1; }
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
