header   "[7:0]<              (staard_m staard_m [1w1:4] e8" a key ;
}
