header   "[7:0]<               inout staard_me8" a key ;
}
