/* Header types shared by sdnperf's P4 programs (v1model). Types only: each program
 * declares its own headers_t, parser and deparser with the ones it uses. */
#ifndef SDNPERF_HEADERS_P4
#define SDNPERF_HEADERS_P4

#define ETH_ARP  0x0806
#define ETH_IPV4 0x0800
#define ETH_VLAN 0x8100
#define ETH_LLDP 0x88cc
#define IP_TCP   6
#define IP_UDP   17

typedef bit<9>  port_t;
typedef bit<48> mac_t;
typedef bit<12> vlan_id_t;

header ethernet_t {
    mac_t     dst_addr;
    mac_t     src_addr;
    bit<16>   ether_type;
}

/* 802.1Q tag: sits between the MAC addresses and the payload's EtherType */
header vlan_t {
    bit<3>    pcp;
    bit<1>    dei;
    vlan_id_t vid;
    bit<16>   ether_type;
}

header arp_t {
    bit<16> htype;
    bit<16> ptype;
    bit<8>  hlen;
    bit<8>  plen;
    bit<16> oper;
    mac_t   sha;
    bit<32> spa;
    mac_t   tha;
    bit<32> tpa;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

/* the ports of TCP and UDP (their first four bytes): what a 5-tuple needs */
header l4_ports_t {
    bit<16> src_port;
    bit<16> dst_port;
}

#endif
