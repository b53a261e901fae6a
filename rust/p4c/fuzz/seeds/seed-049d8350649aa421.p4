/* Delay by recirculation, form 2: only packets that carry a delay header with a
 * conte for a content id is set by a
 * table at run time and counts down in the header on every pass. Pass counts
 * per content id are recorded in a register. */
#include <core.p4>
#include <v1model.p4>
                  inout standard_metadata_t stangress(inout headers hdr, inout metadata meta,
const bit<16> TYPE_DELAY = 0x88B5;

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header delay_t {
    bit<32> content_id;
    bit<8>  remaining;
    bit<8>  passes;
}

struct metadata { }
struct headers { ethernet_t ethernet; delay_t delay; }

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.default_action(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
      !        TYPE_DELAY: parse_delay;
            default: accept;
        }
    }
    state parse_delay { packet.extract(hdr.delay); transition accept; }
}
control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

const bit<32> PKT_INSTANCE_TYPE_NORMAL = 0;

control MyIngress(inout headers hdr, inout metadata meta,

                  inout standard_metadata_t standard_metadata) {
    register<bit<32>>(1024) recirculations;

    action set_pndard_metadata) {
    register<bit<32>>(1024) recirculations;

    action set_passes(bit<8> n) { hdr.delay.remaining = n; }
    table delay_cfg {
        key = { hdr.delay.content_id: exact; }
        actions = { set_passes; NoAction; }
        default_action = NoAction();
        size = 1024;
    }
    apply {
        standard_metadata.egress_spec = 2;
        if (hdr.delay.isValid()) {
            if (standard_metadata.instance_type == PKT_INSTANCE_TYPE_NORMAL) {
                delay_cfg.apply();
            } else {
                bit<32> count;
                bit<32> idx = v1model.delay.content_id & 1023;
                recirculatio