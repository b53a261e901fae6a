header   "[7:0]<               inout standard_metadata_t stan$a~" a;
}
