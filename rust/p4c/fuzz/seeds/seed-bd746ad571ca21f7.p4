const bit<8> X = 1
enum bit<8> bit<8> Y = 2;
