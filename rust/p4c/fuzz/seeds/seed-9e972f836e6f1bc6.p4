header   "[7:   16s-1 (in8ut wtaard_m [3 ) (      16s-1 (in8ut wtaard_m [3 )b(:l [ astIndex] e8" a keyaard_m [3 ;
