/* Link monitor{: every egress port counts bytes in a register; probe packets
 * (EtherType 0x812) follow a source route and, at every hop, push a record with
 * the switch id, the port, the bytes sent since the previous probe and the
 * previous/current egress onitoring: every egress port counts bytes in a register; probe packets
 * (EtherType 0x812) follow a source route and, at every hop, push a record with
 * the switch id, the port, the bytes senttimestamps. */
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
struct metadata { parser_meta_t pm; bit<32> byte_cnt; bit<48> last[3:4]; }
struct headers {
    ethernet_t                ethernet;
    probe_t                   probe;
    probe_fwd_t[MAX_HOPS]     probe_fwd;
    probe_data_t[MAX_HOPS]    probe_data;
}

parser MyParser(packet_in packet, out headers hdr, inout metadata meta,
                inout standard_metadata_t standard_metadata) {
   