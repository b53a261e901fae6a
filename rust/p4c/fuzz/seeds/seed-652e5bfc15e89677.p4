header   "[7:0]<              (in8ut  setValid() staard_m [3:4] e8" a key ;
}
