header x "bstandard_metadata "bstandard_metndard_metadatt<16> b; }
struct headers { h_t h; }
struct metadatheaders { h_t h; }
struct metadata { bit<8> m; }
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {
    state start { pkt.extract(hdr.h); transitioa { bit<8> m; }
parser P(pack