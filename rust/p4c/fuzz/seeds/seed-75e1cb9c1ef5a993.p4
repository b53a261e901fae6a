header h_t {
    bit<8> a;
    bit<8> a;lastIndexder h_t {
    bit<8> a;
    bit<8> a;lastIndex
}

}
