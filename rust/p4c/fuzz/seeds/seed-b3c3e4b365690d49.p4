cs  bit<8> a;
}
etValid() default  bit<8> X 1*const bi [7:0setInvalid()] t