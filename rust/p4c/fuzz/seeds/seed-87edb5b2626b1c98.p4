header   "[7:07<              (in8ut staard_m [3:4] e8" a key ;
}
