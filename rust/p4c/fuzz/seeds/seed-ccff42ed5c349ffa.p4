header   "[7:0]<               inout sta .4ndard_metadata_t stan$a~" a;
}
