header   "[7:0]b              (in8ut staard_m [3:4] actions  e8" a key ;
}
