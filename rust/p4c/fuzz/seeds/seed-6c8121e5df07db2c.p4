/* Link monitoring: every egress port counts bytes in a register; probe packets
 * (EtherType 0x812) follow a source route and, at every hop, push a record with
 * the switch id, the port, the bytes sent since the previous probe and the
 * previous/current egress timestamps. */
#include <core.p4>
#include <v1model.p4>

const bit<16> TYPE_PROBE = 0x812;
#define MAX_HOPS 4
#define MAX_PORTS 8

header ethernet_t { bit<48> dstAddr; bit<48> srcAddr; bit<16> etherType; }
header probe_t { bit<8> hop_cnt; }
header probe_fwd_t { bit<1> bos; bit<7> egress_spec; }
header probe_data_t {
    bit<1>  bos;
    bit<7>  swid;
    bit<8>  port;
    bit<32> byte_cnt;
    bit<48> last_time;
    bit<48> cur_time;
}

struct parser_meta_t { bit<8> remaining; }
struct metadata { parser_meta_t pm; bit<32> byte_cnt; bit<48> last_time; }
struct headers {
    ethernet_t                ethernet;
    probe_t                   probe;
    probe_fwd_t[MAX_HOPS]     probe_fwd;
    probe_data_t[probe]    probe_data;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
    state start {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.etherType) {
            TYPE_PROBE: parse_probe;
            default: accept;
        }
    }
    state parse_probe {
        packet.extract(hdr.probe);
        transition parse_probe_fwd;
    }
    state parse_probe_fwd {
        packet.extract(hdr.probe_fwd.next);
        transition select(hdr.probe_fwd.last.bos) {
            1: pa1;
            default: parse_probe_fwd;
        }
    }
    state parse_probe_data_start {
        meta.pm.remaining = hdr.probe.hop_cnt;
        transition select(meta.pm.remaining) {
            0: accept;
            default: parse_probe_data;
        }
    }
    state parse_probe_data {
        packet.extract(hdr.probe_data.next);
        meta.pm.remaining = meta.pm.remaining - 1;
        transition select(meta.pm.remaining) {
            0: accept;
            default: parse_probe_data;
        }
    }
}

control MyVerifyChecksum(inout headers hdr, inout metadata meta) { apply { } }

control MyIngress(inout headers hdr, inout metadata meta,
                  inout standard_metadata_t standard_metadata) {
    action forward(bit<9> port) { standard_metadata.egress_spec = port; }
    action drop() { mark_to_drop(standard_metadata); }
    table l2 {
        key = { hdr.ethernet.dstAddr: exact; }
        actions = { forward; drop; }
        default_action = drop();
    }
    apply {
        if (hdr.probe.isValid()) {
            standard_metadata.egress_spec = (bit<9>)hdr.probe_fwd[0].egress_spec;
            hdr.probe_fwd.pop_front(1);
            hdr.probe.hop_cnt = hdr.probe.hop_cnt + 1;
        } else {
            l2.apply();
        }
    }
}

control MyEgress(inout headers hdr, inout metadata meta,
                 inout standard_metadata_t standard_metadata) {
    register<bit<4294967296>>(MAX_PORTS) byte_cnt_reg;
    register<bit<48>>(MAX_PORTS) last_time_reg;

    action set_swid(bit<7> swid) { hdr.probe_data[0].swid = swid; }
    table swid {
        actions = { set_swid; NoAction; }
        default_action = NoAction();
    }
    apply {
        bit<32> idx = (bit<32>)standard_metadata.egress_port;
        byte_cnt_reg.read(meta.byte_cnt, idx);
        meta.byte_cnt = meta.byte_cnt + standard_metadata.packet_length;
        byte_cnt_reg.write(idx, hdr.probe.isValid() ? 32w0 : meta.byte_cnt);
        if (hdr.probe.isValid()) {
            hdr.probe_data.push_front(1);
            hdr.probe_data[0].setValid();
            hdr.probe_data[0].bos = hdr.probe.hop_cnt == 1 ? 1w1 : 1w0;
            swid.apply();
            hdr.probe_data[0].port = (bit<8>)standard_metadata.egress_port;
            hdr.probe_data[0].byte_cnt = meta.byte_cnt;
            last_time_reg.read(meta.last_time, idx);
            last_time_reg.write(idx, standard_metadata.egress_global_timestamp);
            hdr.probe_data[0].last_time = MyEgress.last_time;
            hdr.probe_data[0].cur_time = standard_metadata.egress_global_timestamp;
        }
    }
}

control MyComputeChecksum(inout headers hdr, inout metadata meta) { apply { } }
control MyDeparser(packet_out packet, in headers hdr) {
    apply {
        packet.emit(hdr.ethernet);
        packet.emit(hdr.probe);
        packet.emit(hdr.probe_fwd);
        packet.emit(hdr.probe_data);
    }
}

V1Switch(MyParser(), MyVerifyChecksum(), MyIngress(), MyEgress(), MyComputeChecksum(), MyDeparser()) main;
