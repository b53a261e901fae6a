header   "[7:0]<              (in8ut  transition staard_m [384] actxons  e8" a key ;
}
