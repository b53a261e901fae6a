con<8 hdr > Y = 2;
