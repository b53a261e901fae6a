//! OpenFlow 1.3 (wire version 0x04): just the messages a switch emulator and an echo
//! controller need. Written from the OpenFlow Switch Specification 1.3 structure layouts.
//!
//! Writers append to a caller-owned `Vec<u8>` (reused between calls, so the hot path does
//! not allocate once the buffer has grown); readers take a slice holding one whole message
//! and return `None` on anything malformed instead of panicking.

use crate::frame::{frame_template, FRAME_LEN};

pub const VERSION: u8 = 0x04;
pub const HEADER_LEN: usize = 8;
pub const NO_BUFFER: u32 = 0xffff_ffff;
pub const PORT_FLOOD: u32 = 0xffff_fffb;
pub const PORT_CONTROLLER: u32 = 0xffff_fffd;

/// Message types (ofp_type).
pub mod t {
    pub const HELLO: u8 = 0;
    pub const ERROR: u8 = 1;
    pub const ECHO_REQUEST: u8 = 2;
    pub const ECHO_REPLY: u8 = 3;
    pub const EXPERIMENTER: u8 = 4;
    pub const FEATURES_REQUEST: u8 = 5;
    pub const FEATURES_REPLY: u8 = 6;
    pub const GET_CONFIG_REQUEST: u8 = 7;
    pub const GET_CONFIG_REPLY: u8 = 8;
    pub const SET_CONFIG: u8 = 9;
    pub const PACKET_IN: u8 = 10;
    pub const FLOW_REMOVED: u8 = 11;
    pub const PORT_STATUS: u8 = 12;
    pub const PACKET_OUT: u8 = 13;
    pub const FLOW_MOD: u8 = 14;
    pub const GROUP_MOD: u8 = 15;
    pub const PORT_MOD: u8 = 16;
    pub const TABLE_MOD: u8 = 17;
    pub const MULTIPART_REQUEST: u8 = 18;
    pub const MULTIPART_REPLY: u8 = 19;
    pub const BARRIER_REQUEST: u8 = 20;
    pub const BARRIER_REPLY: u8 = 21;
    pub const QUEUE_GET_CONFIG_REQUEST: u8 = 22;
    pub const QUEUE_GET_CONFIG_REPLY: u8 = 23;
    pub const ROLE_REQUEST: u8 = 24;
    pub const ROLE_REPLY: u8 = 25;
    pub const GET_ASYNC_REQUEST: u8 = 26;
    pub const GET_ASYNC_REPLY: u8 = 27;
    pub const SET_ASYNC: u8 = 28;
    pub const METER_MOD: u8 = 29;
    pub const COUNT: usize = 30;

    pub fn name(t: u8) -> &'static str {
        const NAMES: [&str; 30] = [
            "hello",
            "error",
            "echo_request",
            "echo_reply",
            "experimenter",
            "features_request",
            "features_reply",
            "get_config_request",
            "get_config_reply",
            "set_config",
            "packet_in",
            "flow_removed",
            "port_status",
            "packet_out",
            "flow_mod",
            "group_mod",
            "port_mod",
            "table_mod",
            "multipart_request",
            "multipart_reply",
            "barrier_request",
            "barrier_reply",
            "queue_get_config_request",
            "queue_get_config_reply",
            "role_request",
            "role_reply",
            "get_async_request",
            "get_async_reply",
            "set_async",
            "meter_mod",
        ];
        NAMES.get(t as usize).copied().unwrap_or("unknown")
    }
}

/// Multipart types (ofp_multipart_type).
pub mod mp {
    pub const DESC: u16 = 0;
    pub const FLOW: u16 = 1;
    pub const AGGREGATE: u16 = 2;
    pub const TABLE: u16 = 3;
    pub const PORT_STATS: u16 = 4;
    pub const QUEUE: u16 = 5;
    pub const GROUP: u16 = 6;
    pub const GROUP_DESC: u16 = 7;
    pub const GROUP_FEATURES: u16 = 8;
    pub const METER: u16 = 9;
    pub const METER_CONFIG: u16 = 10;
    pub const METER_FEATURES: u16 = 11;
    pub const TABLE_FEATURES: u16 = 12;
    pub const PORT_DESC: u16 = 13;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub typ: u8,
    pub length: u16,
    pub xid: u32,
}

#[inline]
pub fn be16(b: &[u8], off: usize) -> Option<u16> {
    b.get(off..off + 2)
        .map(|s| u16::from_be_bytes([s[0], s[1]]))
}
#[inline]
pub fn be32(b: &[u8], off: usize) -> Option<u32> {
    b.get(off..off + 4)
        .map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}
#[inline]
pub fn be64(b: &[u8], off: usize) -> Option<u64> {
    b.get(off..off + 8).map(|s| {
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_be_bytes(a)
    })
}

pub fn parse_header(b: &[u8]) -> Option<Header> {
    if b.len() < HEADER_LEN {
        return None;
    }
    Some(Header {
        version: b[0],
        typ: b[1],
        length: be16(b, 2)?,
        xid: be32(b, 4)?,
    })
}

/// Append a header; `len` is the whole message length.
#[inline]
pub fn put_header(out: &mut Vec<u8>, typ: u8, len: usize, xid: u32) {
    out.push(VERSION);
    out.push(typ);
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&xid.to_be_bytes());
}

/// Patch the length field of a message that starts at `start` and ends at `out.len()`.
#[inline]
pub fn fix_len(out: &mut [u8], start: usize) {
    let len = (out.len() - start) as u16;
    out[start + 2..start + 4].copy_from_slice(&len.to_be_bytes());
}

fn put_zeros(out: &mut Vec<u8>, n: usize) {
    out.resize(out.len() + n, 0);
}

fn put_str(out: &mut Vec<u8>, s: &str, width: usize) {
    let b = s.as_bytes();
    let n = b.len().min(width - 1);
    out.extend_from_slice(&b[..n]);
    put_zeros(out, width - n);
}

/// HELLO with a version bitmap element announcing only 1.3.
pub fn hello(out: &mut Vec<u8>, xid: u32) {
    put_header(out, t::HELLO, 16, xid);
    out.extend_from_slice(&1u16.to_be_bytes()); // OFPHET_VERSIONBITMAP
    out.extend_from_slice(&8u16.to_be_bytes());
    out.extend_from_slice(&(1u32 << VERSION).to_be_bytes());
}

/// Does a received HELLO let us speak 1.3? (header version >= 4, and when a bitmap is
/// present it must contain bit 4.)
pub fn hello_accepts_13(msg: &[u8]) -> bool {
    let Some(h) = parse_header(msg) else {
        return false;
    };
    if h.version < VERSION {
        return false;
    }
    let mut off = HEADER_LEN;
    while off + 4 <= msg.len() {
        let (Some(typ), Some(len)) = (be16(msg, off), be16(msg, off + 2)) else {
            break;
        };
        if len < 4 {
            break;
        }
        if typ == 1 && len >= 8 {
            if let Some(bits) = be32(msg, off + 4) {
                return bits & (1 << VERSION) != 0;
            }
        }
        off += (len as usize + 7) & !7;
    }
    true
}

pub fn echo_reply(out: &mut Vec<u8>, xid: u32, payload: &[u8]) {
    put_header(out, t::ECHO_REPLY, HEADER_LEN + payload.len(), xid);
    out.extend_from_slice(payload);
}

pub fn simple(out: &mut Vec<u8>, typ: u8, xid: u32) {
    put_header(out, typ, HEADER_LEN, xid);
}

pub fn features_reply(out: &mut Vec<u8>, xid: u32, dpid: u64, n_buffers: u32) {
    put_header(out, t::FEATURES_REPLY, 32, xid);
    out.extend_from_slice(&dpid.to_be_bytes());
    out.extend_from_slice(&n_buffers.to_be_bytes());
    out.push(254); // n_tables
    out.push(0); // auxiliary_id
    put_zeros(out, 2);
    // capabilities: FLOW_STATS | TABLE_STATS | PORT_STATS | GROUP_STATS
    out.extend_from_slice(&(0x1u32 | 0x2 | 0x4 | 0x8).to_be_bytes());
    put_zeros(out, 4); // reserved
}

pub fn get_config_reply(out: &mut Vec<u8>, xid: u32, flags: u16, miss_send_len: u16) {
    put_header(out, t::GET_CONFIG_REPLY, 12, xid);
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&miss_send_len.to_be_bytes());
}

pub fn role_reply(out: &mut Vec<u8>, xid: u32, role: u32, generation: u64) {
    put_header(out, t::ROLE_REPLY, 24, xid);
    out.extend_from_slice(&role.to_be_bytes());
    put_zeros(out, 4);
    out.extend_from_slice(&generation.to_be_bytes());
}

pub fn get_async_reply(out: &mut Vec<u8>, xid: u32) {
    put_header(out, t::GET_ASYNC_REPLY, 32, xid);
    // packet_in mask (master, slave), port_status, flow_removed
    for m in [0x7u32, 0x0, 0x7, 0x7, 0xf, 0x0] {
        out.extend_from_slice(&m.to_be_bytes());
    }
}

pub fn queue_get_config_reply(out: &mut Vec<u8>, xid: u32, port: u32) {
    put_header(out, t::QUEUE_GET_CONFIG_REPLY, 16, xid);
    out.extend_from_slice(&port.to_be_bytes());
    put_zeros(out, 4);
}

/// ERROR (type, code) carrying the first 64 bytes of the offending message.
pub fn error(out: &mut Vec<u8>, xid: u32, typ: u16, code: u16, offending: &[u8]) {
    let data = &offending[..offending.len().min(64)];
    put_header(out, t::ERROR, 12 + data.len(), xid);
    out.extend_from_slice(&typ.to_be_bytes());
    out.extend_from_slice(&code.to_be_bytes());
    out.extend_from_slice(data);
}
pub const ET_BAD_REQUEST: u16 = 1;
pub const BRC_BAD_TYPE: u16 = 1;
pub const BRC_BAD_MULTIPART: u16 = 2;

/// The emulated MAC of port `port` of datapath `dpid_low16`.
pub fn port_mac(dpid: u64, port: u32) -> [u8; 6] {
    let d = (dpid as u16).to_be_bytes();
    let p = (port as u16).to_be_bytes();
    [0x0a, 0x00, d[0], d[1], p[0], p[1]]
}

fn port_struct(out: &mut Vec<u8>, dpid: u64, port: u32) {
    out.extend_from_slice(&port.to_be_bytes());
    put_zeros(out, 4);
    out.extend_from_slice(&port_mac(dpid, port));
    put_zeros(out, 2);
    put_str(out, &format!("s{}-eth{}", dpid, port), 16);
    out.extend_from_slice(&0u32.to_be_bytes()); // config
    out.extend_from_slice(&4u32.to_be_bytes()); // state: LIVE
    let feat: u32 = 0x20 | 0x800; // 1GB_FD | COPPER
    for v in [feat, feat, feat, 0u32, 1_000_000, 1_000_000] {
        out.extend_from_slice(&v.to_be_bytes()); // curr, advertised, supported, peer, speeds
    }
}

fn multipart_reply_header(out: &mut Vec<u8>, xid: u32, mtype: u16) -> usize {
    let start = out.len();
    put_header(out, t::MULTIPART_REPLY, 16, xid);
    out.extend_from_slice(&mtype.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // flags: no more
    put_zeros(out, 4);
    start
}

/// Answer a MULTIPART_REQUEST; returns false when the type is not one we know (the caller
/// then sends an error).
pub fn multipart_reply(out: &mut Vec<u8>, xid: u32, mtype: u16, dpid: u64, n_ports: u32) -> bool {
    let start = multipart_reply_header(out, xid, mtype);
    match mtype {
        mp::DESC => {
            put_str(out, "sdnperf", 256);
            put_str(out, "sdnperf-probe emulated switch", 256);
            put_str(out, env!("CARGO_PKG_VERSION"), 256);
            put_str(out, &format!("{dpid}"), 32);
            put_str(out, &format!("probe-s{dpid}"), 256);
        }
        mp::AGGREGATE => {
            put_zeros(out, 24);
        }
        mp::PORT_DESC => {
            for p in 1..=n_ports {
                port_struct(out, dpid, p);
            }
        }
        mp::GROUP_FEATURES => {
            put_zeros(out, 40);
        }
        mp::METER_FEATURES => {
            put_zeros(out, 16);
        }
        // Statistics of flows, tables, ports, queues, groups, meters, table features:
        // an emulated switch with no data path has none: an empty list is a valid answer.
        mp::FLOW
        | mp::TABLE
        | mp::PORT_STATS
        | mp::QUEUE
        | mp::GROUP
        | mp::GROUP_DESC
        | mp::METER
        | mp::METER_CONFIG
        | mp::TABLE_FEATURES => {}
        _ => {
            out.truncate(start);
            return false;
        }
    }
    fix_len(out, start);
    true
}

// ---- PACKET_IN ----------------------------------------------------------------------------

/// Offsets inside a packet-in built by `packet_in_template`.
pub const PI_BUFFER_OFF: usize = 8;
pub const PI_COOKIE_OFF: usize = 16;
pub const PI_IN_PORT_OFF: usize = 8 + 16 + 4 + 4; // header, fixed part, match hdr, oxm hdr
pub const PI_DATA_OFF: usize = 8 + 16 + 16 + 2;
pub const PI_LEN: usize = PI_DATA_OFF + FRAME_LEN;
pub const REASON_NO_MATCH: u8 = 0;
pub const REASON_ACTION: u8 = 1;

/// A whole PACKET_IN (match in_port) with a frame template.
pub fn packet_in_template(out: &mut Vec<u8>, reason: u8, table_id: u8, vlan: Option<u16>) {
    let start = out.len();
    put_header(out, t::PACKET_IN, 0, 0);
    out.extend_from_slice(&NO_BUFFER.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // total_len, set below
    out.push(reason);
    out.push(table_id);
    put_zeros(out, 8); // cookie
                       // ofp_match: OXM, length 12 (4 + one 8-byte OXM), padded to 16
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&12u16.to_be_bytes());
    out.extend_from_slice(&0x8000_0004u32.to_be_bytes()); // OFPXMC_OPENFLOW_BASIC, IN_PORT, 4
    out.extend_from_slice(&1u32.to_be_bytes());
    put_zeros(out, 4); // match padding
    put_zeros(out, 2); // pad before data
    frame_template(out, vlan);
    let frame_len = (out.len() - start - PI_DATA_OFF) as u16;
    out[start + 12..start + 14].copy_from_slice(&frame_len.to_be_bytes());
    fix_len(out, start);
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketIn<'a> {
    pub buffer_id: u32,
    pub total_len: u16,
    pub reason: u8,
    pub table_id: u8,
    pub in_port: Option<u32>,
    pub data: &'a [u8],
}

/// Walk OXM TLVs in `[off, end)`; calls `f(class, field, hasmask, value)`; None if malformed.
pub fn walk_oxms(
    b: &[u8],
    mut off: usize,
    end: usize,
    mut f: impl FnMut(u16, u8, bool, &[u8]),
) -> Option<()> {
    if end > b.len() {
        return None;
    }
    while off + 4 <= end {
        let hdr = be32(b, off)?;
        let class = (hdr >> 16) as u16;
        let field = ((hdr >> 9) & 0x7f) as u8;
        let hasmask = (hdr >> 8) & 1 == 1;
        let len = (hdr & 0xff) as usize;
        let v = b.get(off + 4..off + 4 + len)?;
        if off + 4 + len > end {
            return None;
        }
        f(class, field, hasmask, v);
        off += 4 + len;
    }
    Some(())
}

/// Parse an ofp_match at `off`; returns (offset after the padded match, in_port).
fn parse_match(b: &[u8], off: usize, mut f: impl FnMut(u16, u8, bool, &[u8])) -> Option<usize> {
    let mtype = be16(b, off)?;
    let mlen = be16(b, off + 2)? as usize;
    if mlen < 4 {
        return None;
    }
    if mtype == 1 {
        walk_oxms(b, off + 4, off + mlen, &mut f)?;
    }
    let after = off + ((mlen + 7) & !7);
    if after > b.len() {
        return None;
    }
    Some(after)
}

pub fn parse_packet_in(msg: &[u8]) -> Option<PacketIn<'_>> {
    let h = parse_header(msg)?;
    if h.typ != t::PACKET_IN || h.length as usize != msg.len() {
        return None;
    }
    let mut in_port = None;
    let after = parse_match(msg, 24, |c, f, _, v| {
        if c == 0x8000 && f == 0 && v.len() == 4 {
            in_port = Some(u32::from_be_bytes([v[0], v[1], v[2], v[3]]));
        }
    })?;
    let data = msg.get(after + 2..)?;
    Some(PacketIn {
        buffer_id: be32(msg, 8)?,
        total_len: be16(msg, 12)?,
        reason: msg[14],
        table_id: msg[15],
        in_port,
        data,
    })
}

// ---- PACKET_OUT -------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketOut<'a> {
    pub buffer_id: u32,
    pub in_port: u32,
    pub actions: &'a [u8],
    pub data: &'a [u8],
}

/// PACKET_OUT with one OUTPUT action; `data` empty when `buffer_id` is set.
pub fn packet_out(
    out: &mut Vec<u8>,
    xid: u32,
    buffer_id: u32,
    in_port: u32,
    port: u32,
    data: &[u8],
) {
    put_header(out, t::PACKET_OUT, 24 + 16 + data.len(), xid);
    out.extend_from_slice(&buffer_id.to_be_bytes());
    out.extend_from_slice(&in_port.to_be_bytes());
    out.extend_from_slice(&16u16.to_be_bytes());
    put_zeros(out, 6);
    out.extend_from_slice(&0u16.to_be_bytes()); // OFPAT_OUTPUT
    out.extend_from_slice(&16u16.to_be_bytes());
    out.extend_from_slice(&port.to_be_bytes());
    out.extend_from_slice(&0xffe5u16.to_be_bytes()); // OFPCML_MAX
    put_zeros(out, 6);
    out.extend_from_slice(data);
}

pub fn parse_packet_out(msg: &[u8]) -> Option<PacketOut<'_>> {
    let h = parse_header(msg)?;
    if h.typ != t::PACKET_OUT || (h.length as usize) != msg.len() {
        return None;
    }
    let alen = be16(msg, 16)? as usize;
    let actions = msg.get(24..24 + alen)?;
    Some(PacketOut {
        buffer_id: be32(msg, 8)?,
        in_port: be32(msg, 12)?,
        actions,
        data: &msg[24 + alen..],
    })
}

// ---- FLOW_MOD -----------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowModInfo {
    pub cookie: u64,
    pub table_id: u8,
    pub command: u8,
    pub buffer_id: u32,
    pub eth_src: Option<[u8; 6]>,
    pub eth_dst: Option<[u8; 6]>,
}

/// The fields of a FLOW_MOD that tell which packet-in it answers.
pub fn parse_flow_mod(msg: &[u8]) -> Option<FlowModInfo> {
    let h = parse_header(msg)?;
    if h.typ != t::FLOW_MOD || (h.length as usize) != msg.len() || msg.len() < 56 {
        return None;
    }
    let mut info = FlowModInfo {
        cookie: be64(msg, 8)?,
        table_id: msg[24],
        command: msg[25],
        buffer_id: be32(msg, 32)?,
        ..Default::default()
    };
    parse_match(msg, 48, |c, f, _, v| {
        if c == 0x8000 && v.len() >= 6 {
            let mut m = [0u8; 6];
            m.copy_from_slice(&v[..6]);
            match f {
                3 => info.eth_dst = Some(m),
                4 => info.eth_src = Some(m),
                _ => {}
            }
        }
    })?;
    Some(info)
}

/// A FLOW_MOD (ADD) matching in_port/eth_dst/eth_src, for tests and the echo controller.
pub fn flow_mod_add(
    out: &mut Vec<u8>,
    xid: u32,
    buffer_id: u32,
    in_port: u32,
    dst: [u8; 6],
    src: [u8; 6],
    port: u32,
) {
    let start = out.len();
    put_header(out, t::FLOW_MOD, 0, xid);
    put_zeros(out, 16); // cookie, cookie_mask
    out.push(0); // table
    out.push(0); // OFPFC_ADD
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes()); // priority
    out.extend_from_slice(&buffer_id.to_be_bytes());
    out.extend_from_slice(&0xffff_ffffu32.to_be_bytes()); // out_port ANY
    out.extend_from_slice(&0xffff_ffffu32.to_be_bytes()); // out_group ANY
    put_zeros(out, 4); // flags, pad
    let mstart = out.len();
    out.extend_from_slice(&1u16.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&0x8000_0004u32.to_be_bytes());
    out.extend_from_slice(&in_port.to_be_bytes());
    out.extend_from_slice(&0x8000_0606u32.to_be_bytes());
    out.extend_from_slice(&dst);
    out.extend_from_slice(&0x8000_0806u32.to_be_bytes());
    out.extend_from_slice(&src);
    let mlen = (out.len() - mstart) as u16;
    out[mstart + 2..mstart + 4].copy_from_slice(&mlen.to_be_bytes());
    let pad = (8 - (out.len() - mstart) % 8) % 8;
    put_zeros(out, pad);
    // APPLY_ACTIONS(OUTPUT port)
    out.extend_from_slice(&4u16.to_be_bytes());
    out.extend_from_slice(&24u16.to_be_bytes());
    put_zeros(out, 4);
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&16u16.to_be_bytes());
    out.extend_from_slice(&port.to_be_bytes());
    out.extend_from_slice(&0xffe5u16.to_be_bytes());
    put_zeros(out, 6);
    fix_len(out, start);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::*;

    #[test]
    fn header_round_trip() {
        let mut v = Vec::new();
        put_header(&mut v, t::BARRIER_REQUEST, 8, 0xdeadbeef);
        assert_eq!(
            parse_header(&v),
            Some(Header {
                version: 4,
                typ: 20,
                length: 8,
                xid: 0xdeadbeef
            })
        );
        assert_eq!(parse_header(&v[..7]), None);
    }

    #[test]
    fn hello_bitmap() {
        let mut v = Vec::new();
        hello(&mut v, 1);
        assert_eq!(v.len(), 16);
        assert!(hello_accepts_13(&v));
        // an OpenFlow 1.0-only hello
        let old = [1u8, 0, 0, 8, 0, 0, 0, 1];
        assert!(!hello_accepts_13(&old));
        // version 6 hello with a bitmap of 1.0 and 1.5 only
        let mut v6 = vec![6u8, 0, 0, 16, 0, 0, 0, 1, 0, 1, 0, 8];
        v6.extend_from_slice(&((1u32 << 1) | (1 << 6)).to_be_bytes());
        assert!(!hello_accepts_13(&v6));
        // version 5 hello without bitmap: negotiates down to 1.3
        assert!(hello_accepts_13(&[5u8, 0, 0, 8, 0, 0, 0, 1]));
    }

    #[test]
    fn packet_in_round_trip() {
        let mut v = Vec::new();
        packet_in_template(&mut v, REASON_NO_MATCH, 0, None);
        assert_eq!(v.len(), PI_LEN);
        v[PI_IN_PORT_OFF..PI_IN_PORT_OFF + 4].copy_from_slice(&7u32.to_be_bytes());
        let id = 0x0012_3456_789a_bcde;
        patch_frame(&mut v[PI_DATA_OFF..], host_mac(3, 9), host_mac(3, 8), id);
        let pi = parse_packet_in(&v).unwrap();
        assert_eq!(pi.buffer_id, NO_BUFFER);
        assert_eq!(pi.in_port, Some(7));
        assert_eq!(pi.reason, 0);
        assert_eq!(pi.total_len as usize, FRAME_LEN);
        assert_eq!(pi.data.len(), FRAME_LEN);
        assert_eq!(frame_id(pi.data), Some(id));
        assert_eq!(decode_host_mac(&pi.data[6..12]), Some((3, 8)));
        assert_eq!(decode_host_mac(&pi.data[0..6]), Some((3, 9)));
        // IPv4 checksum verifies to zero
        assert_eq!(ipv4_checksum(&pi.data[14..34]), 0);
    }

    #[test]
    fn tagged_packet_in_round_trip() {
        let mut v = Vec::new();
        packet_in_template(&mut v, REASON_ACTION, 1, Some(100));
        assert_eq!(v.len(), PI_LEN + 4);
        patch_frame(&mut v[PI_DATA_OFF..], host_mac(0, 2), host_mac(0, 1), 77);
        let pi = parse_packet_in(&v).unwrap();
        assert_eq!(
            (pi.reason, pi.table_id, pi.total_len as usize),
            (1, 1, FRAME_LEN + 4)
        );
        assert_eq!(&pi.data[12..16], &[0x81, 0, 0, 100]);
        assert_eq!(frame_id(pi.data), Some(77));
        assert_eq!(ipv4_checksum(&pi.data[18..38]), 0);
    }

    #[test]
    fn packet_out_round_trip() {
        let mut v = Vec::new();
        let mut f = Vec::new();
        frame_template(&mut f, None);
        patch_frame(&mut f, host_mac(1, 2), host_mac(1, 1), 42);
        packet_out(&mut v, 9, NO_BUFFER, 3, PORT_FLOOD, &f);
        let po = parse_packet_out(&v).unwrap();
        assert_eq!(po.in_port, 3);
        assert_eq!(po.buffer_id, NO_BUFFER);
        assert_eq!(po.actions.len(), 16);
        assert_eq!(frame_id(po.data), Some(42));
        // truncated: None, no panic
        for n in 0..v.len() {
            let _ = parse_packet_out(&v[..n]);
        }
    }

    #[test]
    fn flow_mod_round_trip() {
        let mut v = Vec::new();
        flow_mod_add(&mut v, 5, 77, 2, host_mac(4, 10), host_mac(4, 11), 1);
        assert_eq!(v.len() % 8, 0);
        let fm = parse_flow_mod(&v).unwrap();
        assert_eq!(fm.buffer_id, 77);
        assert_eq!(fm.eth_dst, Some(host_mac(4, 10)));
        assert_eq!(fm.eth_src, Some(host_mac(4, 11)));
        for n in 0..v.len() {
            let _ = parse_flow_mod(&v[..n]);
        }
    }

    #[test]
    fn multipart_replies_have_right_lengths() {
        let mut v = Vec::new();
        assert!(multipart_reply(&mut v, 1, mp::PORT_DESC, 5, 4));
        assert_eq!(v.len(), 16 + 4 * 64);
        assert_eq!(parse_header(&v).unwrap().length as usize, v.len());
        v.clear();
        assert!(multipart_reply(&mut v, 1, mp::DESC, 5, 4));
        assert_eq!(v.len(), 16 + 1056);
        v.clear();
        assert!(!multipart_reply(&mut v, 1, 0xffff, 5, 4));
        assert!(v.is_empty());
    }

    #[test]
    fn features_and_fixed_replies() {
        let mut v = Vec::new();
        features_reply(&mut v, 3, 0x1234, 256);
        assert_eq!(v.len(), 32);
        assert_eq!(be64(&v, 8), Some(0x1234));
        v.clear();
        role_reply(&mut v, 3, 2, 9);
        assert_eq!(v.len(), 24);
        v.clear();
        get_async_reply(&mut v, 3);
        assert_eq!(v.len(), 32);
        v.clear();
        get_config_reply(&mut v, 3, 0, 128);
        assert_eq!(v.len(), 12);
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed = 12345u64;
        for _ in 0..20000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let n = (seed % 120) as usize;
            let mut b = vec![0u8; n];
            for (i, x) in b.iter_mut().enumerate() {
                *x = (seed >> (i % 8 * 8)) as u8 ^ i as u8;
            }
            if n >= 4 {
                b[0] = 4;
                b[2..4].copy_from_slice(&(n as u16).to_be_bytes());
            }
            for typ in [t::PACKET_IN, t::PACKET_OUT, t::FLOW_MOD] {
                if n >= 2 {
                    b[1] = typ;
                }
                let _ = parse_packet_in(&b);
                let _ = parse_packet_out(&b);
                let _ = parse_flow_mod(&b);
                let _ = hello_accepts_13(&b);
            }
        }
    }
}
