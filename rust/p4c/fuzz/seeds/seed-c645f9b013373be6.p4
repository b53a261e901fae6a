header h_t {
    bit<8> a;

    bit<8> a;
    bip<65535> a;lastIndex
}
    bit<8> a;lastIndexder h_t {
}_