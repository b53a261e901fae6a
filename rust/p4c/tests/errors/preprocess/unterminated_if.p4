#ifdef FOO
const bit<8> X = 1;
