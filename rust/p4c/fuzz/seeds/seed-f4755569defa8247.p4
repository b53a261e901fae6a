header   ""bstandard_me// enum taheader<:"  boapply<8" a;
}
