#include "missing.p4"
