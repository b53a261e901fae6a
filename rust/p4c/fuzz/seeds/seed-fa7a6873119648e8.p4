header   "[7:07<               16s-1 (in8ut wtaard_m [3 ) (:l [ astIndex] e8" a keyaard_m [3 ;
}
