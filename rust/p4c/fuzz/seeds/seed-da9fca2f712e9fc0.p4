header   "[7:0]<    >           cn8ut staard_me8" staard_me8 key ;
}
