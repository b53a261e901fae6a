control C() {
    apply {
        if (true) {
            x = 1;
    }
}
