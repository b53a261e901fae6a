header h_t { bit<8> a; }
struct s_t { h_t h; undefined_t x; }
