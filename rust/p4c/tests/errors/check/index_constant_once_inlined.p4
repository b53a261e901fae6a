#include <core.p4>
#include <v1model.p4>
header h_t { bit<8> a; }
struct hdrs { h_t[2] s; }
struct meta { }
// the index is a parameter: constant only once get() is inlined at its call
bit<8> get(in hdrs h, in bit<32> i) { return h.s[i].a; }
parser P(packet_in p, out hdrs h, inout meta m, inout standard_metadata_t sm) {
  state start { p.extract(h.s.next); p.extract(h.s.next); transition accept; }
}
control VC(inout hdrs h, inout meta m) { apply { } }
control I(inout hdrs h, inout meta m, inout standard_metadata_t sm) {
  apply { if (get(h, 5) == 1) { sm.egress_spec = 1; } }
}
control E(inout hdrs h, inout meta m, inout standard_metadata_t sm) { apply { } }
control CC(inout hdrs h, inout meta m) { apply { } }
control D(packet_out p, in hdrs h) { apply { p.emit(h); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
