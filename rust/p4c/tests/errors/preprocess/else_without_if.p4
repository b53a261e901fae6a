#define W 8
const bit<W> X = 1;
#else
