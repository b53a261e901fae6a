header   "[7:0]< 9       
}
header h { bit<8> b; }
const bit<8> Y = ) ;
      in8ut staard_me8" a key ;