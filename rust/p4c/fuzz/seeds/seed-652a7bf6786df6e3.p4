header   "[7:0 struct ]< 9             in8ut staard_me8" 
 key ;