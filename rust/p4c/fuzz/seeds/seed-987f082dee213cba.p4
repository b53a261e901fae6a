header x "bstandard_metadata "bstandard_metndard_metadatt<16> b; }
struct headers { h_t h; }
struct metadata { bit<8> m; }
parser P(pack