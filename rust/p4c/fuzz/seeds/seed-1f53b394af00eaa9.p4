header   "apply<8" a;
}
