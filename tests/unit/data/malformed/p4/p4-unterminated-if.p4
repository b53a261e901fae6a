#ifdef X
const bit<8> A = 1;
