st "V1Switch" ruct   apply {
        apply.h.a = hdr.h.a + 8w1 + 16w2;
    }
}
V1Switch(P(), V(), I(:), E(), C(), d()) main;
 s {
   