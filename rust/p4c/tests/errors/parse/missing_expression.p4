control C() {
    apply {
        x = ;
    }
}
