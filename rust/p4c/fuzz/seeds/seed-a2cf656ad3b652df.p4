header   "[7�0]<               in8ut staard_n8ut staard_me8" a key ;
}a key ;
}