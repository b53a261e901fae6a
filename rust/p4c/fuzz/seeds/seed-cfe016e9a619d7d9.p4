header   "[7:07<        9      16key-1 (in8ut a [3:lastIndex] e8" a key ;
}
