#include <core.p4>
header h_t { blob<8> f; }
