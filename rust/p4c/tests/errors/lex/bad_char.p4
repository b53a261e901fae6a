const bit<8> X = 8w1;
const bit<8> Y = 3 $ 4;
