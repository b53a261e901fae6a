header   "r   [7:0]<              (mn8ut  trannout headers hdr, inout metadata msition staard_m [384] actxo@msition("x")  e8" a key ;
}
