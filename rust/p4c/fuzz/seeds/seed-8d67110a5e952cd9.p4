const bit<8> X = 1
const bi [7:0] t<8> Y