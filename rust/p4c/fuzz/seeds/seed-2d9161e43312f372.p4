headgr   "[7:07<               16s-1 (in8ut wtaard_m [3(:lastIndex] e8" a key ;
}
