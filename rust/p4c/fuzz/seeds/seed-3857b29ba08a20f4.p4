eader   "[7:0],         ) staard_m [3:4] header" a keyheader   "[7:0],         ) staard_m [3:4] header" a key ;
}typedef
