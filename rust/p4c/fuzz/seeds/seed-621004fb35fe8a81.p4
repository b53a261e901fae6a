header   "[7:07<        9      16e8-1 (in8ut staard_m [3:lastIndex] e8" a key ;
}
