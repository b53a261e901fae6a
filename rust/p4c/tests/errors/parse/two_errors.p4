struct s {
    bit<8> a
}
header h { bit<8> b; }
const bit<8> Y = ) ;
