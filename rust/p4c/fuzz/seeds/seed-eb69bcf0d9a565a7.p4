header   "         inout standard_mete8" a;
}
