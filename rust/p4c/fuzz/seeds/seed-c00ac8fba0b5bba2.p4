header   "[7:0],              (in1  setValidlast() staard_m [3:4] e8" a setValidlast ;
}
