header   "[7:0]<               in8ut staard_me2" a key ;
}
