const bit<8> X = 1
const bit<8> Y = 2;
