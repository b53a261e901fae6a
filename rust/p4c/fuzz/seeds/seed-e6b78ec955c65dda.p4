header    bit<8> a;
}
