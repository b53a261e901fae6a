header   "[7:0]<               in8ut 1  staard_me8" a key ;
}
