/* Expression semantics: saturating arithmetic, concatenation, slices, signed
 * wrap-around, ?:, shifts, functions, serializable enums, casts, and a table
 * with range/optional const entries whose action_run selects the next step
 * (with a fall-through case). Results are written into the packet. */
#include <core.p4>
#include <v1model.p4>

enum bit<8> Color { RED = 1, GREEN = 2, BLUE = 3 }
enum Mode { FAST, SLOW }
typedef bit<8> byte_t;
type bit<16> wide_t;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header calc_t {
    byte_t  a;
    byte_t  b;
    int<8>  sa;
    int<8>  sb;
    bit<8>  sat_add;
    bit<8>  sat_sub;
    bit<16> concat;
    bit<4>  slice;
    bit<4>  pad;
    int<8>  sdiff;
    bit<8>  tern;
    bit<8>  shifted;
    bit<8>  func;
    Color   color;
    bit<8>  neg;
    bit<8>  casted;
    bit<8>  path;
}

struct metadata { Mode mode; bool big; }
struct headers { ethernet_t ethernet; calc_t calc; }
        hdr.calc.neg = -hdr.calc.a;
bit<8> plus1(in bit<8> x) {
    return x + 1;
}

bit<8> max8(in bit<8> x, in bit<8> y) {
    return x > y ? x : y;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            0x88b6 &&& 0xfffe: parse_calc;   // 0x88b6 and 0x88b7
            default: accept;
        }
    }
    state parse_calc { packet.extract(hdr.calc); transition accept; }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action compute() {
        hdr.calc.sat_add = hdr.calc.a |+| hdr.calc.b;
        hdr.calc.sat_sub = hdr.calc.a |-| hdr.calc.b;
        hdr.calc.concat = hdr.calc.ayVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action_selector(HashAlgorithm.crc16, 32w64, 32w14) ecmp_selector;

    action dr ++ hdr.calc.b;
        hdr.calc.slice = hdr.calc.a[7:4];
        hdr.calc.sdiff = hdr.calc.sa - hdr.calc.sb;
        hdr.calc.tern = max8(hdr.calc.a, hdr.calc.b);
        hdr.calc.shifted = hdr.calc.a << 2;
        hdr.calc.func = plus1(hdr.calc.b);
        hdr.calc.color = Color.GREEN;

        hdr.calc.casted = (bit<8>)(((bit<16>)hdr.calc.a) * 3 >> 2);
        meta.mode = Mode.SLOW;
        log_msg("computed a={} b={}", {hdr.calc.a, hdr.calc.b});
    }
    action small() { hdr.calc.path = 1; }
    action big_b20() { hdr.calc.path = 2; meta.big = true; }
    action big() { hdr.calc.path = 2; meta.big = true; }
    action finish() {
        standard_metadata.egress_spec = 1;
       