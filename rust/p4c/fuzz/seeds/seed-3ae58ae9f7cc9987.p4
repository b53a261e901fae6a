a   "[7 . :0],         ) a [3:4] keyheader" a keyheader   "[7:0],         ) staard_m [3:4] header" a key ;
}typedef
