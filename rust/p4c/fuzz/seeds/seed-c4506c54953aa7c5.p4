header   "         inou lastIndex t standard_mete8" a;
}
