#include "nope.p4"
