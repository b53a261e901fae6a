const bit<8> X = "unterminated;
