header   "[7:07<         9     16s-1 (in8ut (:lastIndex< header" a key ;
}
