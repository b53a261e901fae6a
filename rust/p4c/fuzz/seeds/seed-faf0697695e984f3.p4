st "str" ruct   apply {
        apply.h.a = hdr.h.a + 8w1 + 16w2;
    }
}
V1Switch(P(), V(), I(:), E(), C(), D()) main;
 s {
   