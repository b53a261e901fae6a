header   "byttandard_m bo // <8" a;
}
