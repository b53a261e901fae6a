header   "bittandard_m bo // <8" a;
}
