header   "[7:0]<               inout standard_metadata_t standard_me8" a;
}
