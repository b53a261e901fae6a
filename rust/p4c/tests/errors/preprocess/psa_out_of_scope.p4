#include <core.p4>
#include <bmv2/psa.p4>
