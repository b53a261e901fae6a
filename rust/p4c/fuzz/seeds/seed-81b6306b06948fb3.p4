header   "[7:0],              (in8ut  setValidlast() staard_m [3:4] e8" a key ;
}
