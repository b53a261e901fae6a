#include <core.p4>
#if 1 +
#endif
