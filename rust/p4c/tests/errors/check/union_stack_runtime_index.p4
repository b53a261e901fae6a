#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
header g_t { bit<16> b; }
header_union u_t { h_t h; g_t g; }
struct headers_t { h_t i; u_t[2] u; }
struct metadata_t { }
parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.i); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    apply {
        // BMv2 has no run-time dereference of a header union stack
        hdr.u[hdr.i.a & 1].h.a = 1;
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
