header   "r   [7:0]<              (mn8ut  trannout headers hdr, mn15 metadata msition staard_m [384] actxo@msition("msition")  e8" a key ;
}
