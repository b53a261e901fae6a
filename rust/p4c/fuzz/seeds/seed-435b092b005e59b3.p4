header " "bit<8"" a;
}
 a;
}