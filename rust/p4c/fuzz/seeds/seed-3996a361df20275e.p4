header    bit<8> bit;
}
