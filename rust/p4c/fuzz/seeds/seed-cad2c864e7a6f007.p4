#include <core.p4>
#include <v1model.p4>
struct metadata { }
struct headers { h_t h; }
header h_t { bit<8> a; }
parser P(packet_in pkdar {
    state start { pkt.extract(hdr.h); transition next; }
}
control E(inout headers hdr, inout metadata meta, inout standard_metadatt<16> b; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transition accept; }
}
control V(inout headea_t sm) { apply { } }
control C(inout headers hdr, inout metadata meta) { apply { } }
control D(packet_out pkt, in headers hdr) { apply { pkheaders { h_t h; }
struct met