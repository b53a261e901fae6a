// One action bound with a different `out` argument in each table's action list: every
// copy keeps the action's name (as p4c names them), so a control plane adds
// `setbyte(val:...)` to each table by that one name and each table's copy writes its
// own field. The P4Info lists `Ing.setbyte` once, with its action data only.
#include <core.p4>
#include <v1model.p4>

header h_t { bit<8> k; bit<8> a; bit<8> b; bit<8> c; }
struct headers_t { h_t h; }
struct metadata_t { }

parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control Ing(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {
    action setbyte(out bit<8> dst, bit<8> val) { dst = val; }
    action nop() { }
    table ta {
        key = { hdr.h.k : exact; }
        actions = { setbyte(hdr.h.a); nop; }
        default_action = nop();
    }
    table tb {
        key = { hdr.h.k : exact; }
        actions = { setbyte(hdr.h.b); nop; }
        default_action = nop();
    }
    apply {
        sm.egress_spec = 1;
        ta.apply();
        tb.apply();
        // the same binding as ta's: the same copy
        setbyte(hdr.h.c, hdr.h.a);
    }
}
control Eg(inout headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers_t hdr, inout metadata_t meta) { apply { } }
control D(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr.h); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), D()) main;
