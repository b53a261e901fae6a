/* Table keys on a slice that does not start at bit 0 (the control plane gives the slice's
 * value) and on a masked expression, and compile-time comparisons where an unsized
 * constant takes the other operand's type: 8w255 == -1 holds, -1 > 4s7 does not, and a
 * signed constant shifts right arithmetically. */
#include <core.p4>
#include <v1model.p4>

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header k_t { bit<16> f; bit<8> g; bit<8> res; }
struct metadata { }
struct headers { ethernet_t eth; k_t k; }

parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start {
        pkt.extract(hdr.eth);
        pkt.extract(hdr.k);
        transition accept;
    }
}
control VC(inout headers hdr, inout metadata meta) { apply { } }
control Ing(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action drop() { mark_to_drop(sm); }
    table t {
        key = {
            hdr.k.f[11:4] : exact @name("f_mid");
            hdr.k.g & 0x0F : exact @name("g_low");
        }
        actions = { fwd; drop; }
        const default_action = drop();
    }
    apply {
        bit<8> o = 0;
        if (8w255 == -1) { o = o | 1; }
        if (-1 > 4s7) { o = o | 2; }
        if (4w8 > -1) { o = o | 4; }
        int<4> s = -4s7 >> 1 >> 1;
        o[7:4] = (bit<4>)s;
        hdr.k.res = o;
        t.apply();
    }
}
control Eg(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) { apply { } }
control CC(inout headers hdr, inout metadata meta) { apply { } }
control Dep(packet_out pkt, in headers hdr) { apply { pkt.emit(hdr); } }
V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;
