 action header   "bit//<8" a;
}
