hea  "bittadard_m bo // <8" a;
}
