//! The P4Runtime stream's hot path on the wire, written by hand: packet-ins are encoded from
//! a frame template and packet-outs are decoded in place (only the id in the frame is
//! taken), so neither side allocates per packet. Rare messages (arbitration) go through
//! the prost types. Both directions are tonic `Codec`s for the StreamChannel RPC:
//! `DeviceCodec` (the emulated device: decodes StreamMessageRequest, encodes
//! StreamMessageResponse) and `EchoCodec` (our echo controller: the other way round).
//!
//! Protobuf field numbers (p4runtime.proto): StreamMessageRequest {arbitration = 1,
//! packet = 2 (PacketOut), digest_ack = 3, other = 4}; StreamMessageResponse {arbitration
//! = 1, packet = 2 (PacketIn), digest = 3, idle_timeout_notification = 4, other = 5,
//! error = 6}; PacketIn/PacketOut {payload = 1, metadata = 2}; PacketMetadata
//! {metadata_id = 1, value = 2}.

use std::sync::Arc;

use prost::bytes::{Buf, BufMut};
use prost::Message;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

use crate::frame;
use sdnperf_p4rt_proto::p4::v1 as p4;

const WT_VARINT: u8 = 0;
const WT_I64: u8 = 1;
const WT_LEN: u8 = 2;
const WT_I32: u8 = 5;

// ---- protobuf primitives ------------------------------------------------------------------

#[inline]
pub fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

#[inline]
pub fn put_varint(out: &mut impl BufMut, mut v: u64) {
    while v >= 0x80 {
        out.put_u8((v as u8) | 0x80);
        v >>= 7;
    }
    out.put_u8(v as u8);
}

/// A bounds-checked reader over one protobuf message; every method returns None on
/// malformed input instead of panicking.
pub struct Rd<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Rd<'a> {
    pub fn new(b: &'a [u8]) -> Self {
        Rd { b, i: 0 }
    }
    pub fn done(&self) -> bool {
        self.i >= self.b.len()
    }
    pub fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = *self.b.get(self.i)?;
            self.i += 1;
            v |= ((byte & 0x7f) as u64) << shift;
            if byte < 0x80 {
                return Some(v);
            }
        }
        None
    }
    /// (field number, wire type) of the next field.
    pub fn key(&mut self) -> Option<(u32, u8)> {
        let k = self.varint()?;
        let field = (k >> 3) as u32;
        if field == 0 {
            return None;
        }
        Some((field, (k & 7) as u8))
    }
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.varint()? as usize;
        let end = self.i.checked_add(n)?;
        let s = self.b.get(self.i..end)?;
        self.i = end;
        Some(s)
    }
    pub fn skip(&mut self, wt: u8) -> Option<()> {
        match wt {
            WT_VARINT => self.varint().map(|_| ()),
            WT_I64 => self.advance(8),
            WT_LEN => self.bytes().map(|_| ()),
            WT_I32 => self.advance(4),
            _ => None, // groups (3, 4) are not used by P4Runtime
        }
    }
    fn advance(&mut self, n: usize) -> Option<()> {
        if self.i + n > self.b.len() {
            return None;
        }
        self.i += n;
        Some(())
    }
}

/// Run `f` on the bytes of the message tonic hands to a decoder: borrowed when they are
/// contiguous (the usual case), else copied into `scratch` (reused).
fn with_bytes<T>(src: &mut DecodeBuf<'_>, scratch: &mut Vec<u8>, f: impl FnOnce(&[u8]) -> T) -> T {
    let n = src.remaining();
    if src.chunk().len() >= n {
        let r = f(&src.chunk()[..n]);
        src.advance(n);
        return r;
    }
    scratch.clear();
    scratch.resize(n, 0);
    src.copy_to_slice(&mut scratch[..]);
    f(&scratch[..])
}

/// Canonical P4Runtime bytes of `v` in a `bitwidth`-bit field: the shortest big-endian
/// string (one zero byte for 0), after masking to the field's width.
#[inline]
pub fn canonical(v: u64, bitwidth: u32, out: &mut [u8; 8]) -> usize {
    let v = if bitwidth >= 64 || bitwidth == 0 {
        v
    } else {
        v & ((1u64 << bitwidth) - 1)
    };
    let n = (64 - v.leading_zeros() as usize).div_ceil(8);
    let n = n.max(1);
    out[..n].copy_from_slice(&v.to_be_bytes()[8 - n..]);
    n
}

// ---- the device side ------------------------------------------------------------------------

/// What a packet-in's metadata field is filled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaKind {
    /// the port the frame came in on (ingress_port, in_port, ...)
    IngressPort,
    /// anything else (padding, ...): zero
    Zero,
}

/// The metadata of packet-ins, from the pushed P4Info's controller_packet_metadata
/// "packet_in": (metadata id, bitwidth, what goes in).
#[derive(Debug, Clone, Default)]
pub struct PacketInLayout {
    pub fields: Vec<(u32, u32, MetaKind)>,
}

impl PacketInLayout {
    pub fn from_p4info(info: &sdnperf_p4rt_proto::p4::config::v1::P4Info) -> PacketInLayout {
        let mut fields = Vec::new();
        for cpm in &info.controller_packet_metadata {
            let name = cpm.preamble.as_ref().map(|p| p.name.as_str()).unwrap_or("");
            if name != "packet_in" {
                continue;
            }
            for m in &cpm.metadata {
                let kind = if m.name == "in_port" || m.name.ends_with("ingress_port") {
                    MetaKind::IngressPort
                } else {
                    MetaKind::Zero
                };
                fields.push((m.id, m.bitwidth as u32, kind));
            }
        }
        PacketInLayout { fields }
    }
}

/// A message from the controller on the stream, as the device needs it.
#[derive(Debug)]
pub enum DevIn {
    Arbitration(p4::MasterArbitrationUpdate),
    /// `id`: the packet id found in the payload (None: not one of our frames)
    PacketOut {
        id: Option<u64>,
    },
    DigestAck,
    Other,
    /// a message we could not parse (counted, the stream goes on)
    Malformed(&'static str),
}

/// A message to the controller on the stream.
#[derive(Debug)]
pub enum DevOut {
    Arbitration(p4::MasterArbitrationUpdate),
    PacketIn {
        layout: Arc<PacketInLayout>,
        id: u64,
        dst: [u8; 6],
        src: [u8; 6],
        port: u32,
    },
}

/// Parse a StreamMessageRequest.
pub fn parse_request(b: &[u8]) -> DevIn {
    let mut rd = Rd::new(b);
    let mut out = DevIn::Other;
    while !rd.done() {
        let Some((field, wt)) = rd.key() else {
            return DevIn::Malformed("bad field key");
        };
        match (field, wt) {
            (1, WT_LEN) => {
                let Some(body) = rd.bytes() else {
                    return DevIn::Malformed("truncated arbitration");
                };
                match p4::MasterArbitrationUpdate::decode(body) {
                    Ok(m) => out = DevIn::Arbitration(m),
                    Err(_) => return DevIn::Malformed("undecodable arbitration"),
                }
            }
            (2, WT_LEN) => {
                let Some(body) = rd.bytes() else {
                    return DevIn::Malformed("truncated packet-out");
                };
                match packet_payload(body) {
                    Some(payload) => {
                        out = DevIn::PacketOut {
                            id: frame::frame_id(payload),
                        }
                    }
                    None => return DevIn::Malformed("malformed packet-out"),
                }
            }
            (3, WT_LEN) => {
                if rd.bytes().is_none() {
                    return DevIn::Malformed("truncated digest ack");
                }
                out = DevIn::DigestAck;
            }
            _ => {
                if rd.skip(wt).is_none() {
                    return DevIn::Malformed("truncated field");
                }
            }
        }
    }
    out
}

/// The payload of a PacketIn/PacketOut body (metadata checked for well-formedness only).
pub fn packet_payload(b: &[u8]) -> Option<&[u8]> {
    let mut rd = Rd::new(b);
    let mut payload: &[u8] = &[];
    while !rd.done() {
        let (field, wt) = rd.key()?;
        match (field, wt) {
            (1, WT_LEN) => payload = rd.bytes()?,
            (2, WT_LEN) => {
                let m = rd.bytes()?;
                let mut r = Rd::new(m);
                while !r.done() {
                    let (_, wt) = r.key()?;
                    r.skip(wt)?;
                }
            }
            _ => rd.skip(wt)?,
        }
    }
    Some(payload)
}

/// Encode one packet-in (StreamMessageResponse.packet) into `out`; `fr` is a frame made
/// by `frame::frame_template` (patched here).
pub fn encode_packet_in(
    out: &mut impl BufMut,
    fr: &mut [u8],
    layout: &PacketInLayout,
    id: u64,
    dst: [u8; 6],
    src: [u8; 6],
    port: u32,
) {
    frame::patch_frame(fr, dst, src, id);
    let mut vals = [[0u8; 8]; 8];
    let mut lens = [0usize; 8];
    let mut meta_len = 0;
    for (k, &(mid, width, kind)) in layout.fields.iter().take(8).enumerate() {
        let v = match kind {
            MetaKind::IngressPort => port as u64,
            MetaKind::Zero => 0,
        };
        lens[k] = canonical(v, width, &mut vals[k]);
        let entry = entry_len(mid, lens[k]);
        meta_len += 1 + varint_len(entry as u64) + entry;
    }
    let pi_len = 1 + varint_len(fr.len() as u64) + fr.len() + meta_len;
    out.put_u8((2 << 3) | WT_LEN);
    put_varint(out, pi_len as u64);
    out.put_u8((1 << 3) | WT_LEN);
    put_varint(out, fr.len() as u64);
    out.put_slice(fr);
    for (k, &(mid, _, _)) in layout.fields.iter().take(8).enumerate() {
        put_metadata(out, mid, &vals[k][..lens[k]]);
    }
}

/// Encoded length of a PacketMetadata body (metadata_id omitted when 0, as protobuf does).
#[inline]
fn entry_len(mid: u32, vlen: usize) -> usize {
    let id_part = if mid != 0 {
        1 + varint_len(mid as u64)
    } else {
        0
    };
    id_part + 1 + varint_len(vlen as u64) + vlen
}

/// Write one `metadata` field (2) of a PacketIn/PacketOut: key, length, PacketMetadata body.
#[inline]
fn put_metadata(out: &mut impl BufMut, mid: u32, value: &[u8]) {
    out.put_u8((2 << 3) | WT_LEN);
    put_varint(out, entry_len(mid, value.len()) as u64);
    if mid != 0 {
        out.put_u8((1 << 3) | WT_VARINT);
        put_varint(out, mid as u64);
    }
    out.put_u8((2 << 3) | WT_LEN);
    put_varint(out, value.len() as u64);
    out.put_slice(value);
}

/// The emulated device's StreamChannel codec.
#[derive(Default, Clone)]
pub struct DeviceCodec;

pub struct DeviceEncoder {
    frame: Vec<u8>,
}

pub struct DeviceDecoder {
    scratch: Vec<u8>,
}

impl Codec for DeviceCodec {
    type Encode = DevOut;
    type Decode = DevIn;
    type Encoder = DeviceEncoder;
    type Decoder = DeviceDecoder;
    fn encoder(&mut self) -> DeviceEncoder {
        let mut f = Vec::with_capacity(frame::FRAME_LEN);
        frame::frame_template(&mut f, None);
        DeviceEncoder { frame: f }
    }
    fn decoder(&mut self) -> DeviceDecoder {
        DeviceDecoder {
            scratch: Vec::with_capacity(512),
        }
    }
}

impl Encoder for DeviceEncoder {
    type Item = DevOut;
    type Error = Status;
    fn encode(&mut self, item: DevOut, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            DevOut::PacketIn {
                layout,
                id,
                dst: d,
                src,
                port,
            } => {
                encode_packet_in(dst, &mut self.frame, &layout, id, d, src, port);
            }
            DevOut::Arbitration(a) => {
                let msg = p4::StreamMessageResponse {
                    update: Some(p4::stream_message_response::Update::Arbitration(a)),
                };
                msg.encode(dst)
                    .map_err(|e| Status::internal(format!("encode: {e}")))?;
            }
        }
        Ok(())
    }
}

impl Decoder for DeviceDecoder {
    type Item = DevIn;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<DevIn>, Status> {
        Ok(Some(with_bytes(src, &mut self.scratch, parse_request)))
    }
}

// ---- the echo controller's side ---------------------------------------------------------------

/// A frame carried inline (ours are 66–70 bytes), on the heap only when larger.
#[derive(Debug, Clone)]
pub enum Payload {
    Inline(u8, [u8; 128]),
    Heap(Vec<u8>),
}

impl Payload {
    pub fn new(b: &[u8]) -> Payload {
        if b.len() <= 128 {
            let mut a = [0u8; 128];
            a[..b.len()].copy_from_slice(b);
            Payload::Inline(b.len() as u8, a)
        } else {
            Payload::Heap(b.to_vec())
        }
    }
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Payload::Inline(n, a) => &a[..*n as usize],
            Payload::Heap(v) => v,
        }
    }
}

/// A message from a device, as the echo controller needs it.
#[derive(Debug)]
pub enum EchoIn {
    /// arbitration answer: status code (0 = we are primary)
    Arbitration {
        code: i32,
    },
    PacketIn {
        payload: Payload,
        port: [u8; 8],
        port_len: u8,
    },
    Other,
    Malformed,
}

/// A message to a device.
#[derive(Debug)]
pub enum EchoOut {
    Request(p4::StreamMessageRequest),
    /// a packet-out with the payload, egress_port metadata (id `port_id`) = `port`
    PacketOut {
        payload: Payload,
        port_id: u32,
        port: [u8; 8],
        port_len: u8,
    },
}

/// Parse a StreamMessageResponse; `ingress_id`: the metadata id of the ingress port.
pub fn parse_response(b: &[u8], ingress_id: u32) -> EchoIn {
    let mut rd = Rd::new(b);
    let mut out = EchoIn::Other;
    while !rd.done() {
        let Some((field, wt)) = rd.key() else {
            return EchoIn::Malformed;
        };
        match (field, wt) {
            (1, WT_LEN) => {
                let Some(body) = rd.bytes() else {
                    return EchoIn::Malformed;
                };
                match p4::MasterArbitrationUpdate::decode(body) {
                    Ok(m) => {
                        out = EchoIn::Arbitration {
                            code: m.status.map(|s| s.code).unwrap_or(0),
                        }
                    }
                    Err(_) => return EchoIn::Malformed,
                }
            }
            (2, WT_LEN) => {
                let Some(body) = rd.bytes() else {
                    return EchoIn::Malformed;
                };
                match packet_in_view(body, ingress_id) {
                    Some((payload, port)) => {
                        let mut p = [0u8; 8];
                        let n = port.len().min(8);
                        p[..n].copy_from_slice(&port[port.len() - n..]);
                        out = EchoIn::PacketIn {
                            payload: Payload::new(payload),
                            port: p,
                            port_len: n as u8,
                        };
                    }
                    None => return EchoIn::Malformed,
                }
            }
            _ => {
                if rd.skip(wt).is_none() {
                    return EchoIn::Malformed;
                }
            }
        }
    }
    out
}

/// Payload and the value of metadata `want_id` of a PacketIn body.
pub fn packet_in_view(b: &[u8], want_id: u32) -> Option<(&[u8], &[u8])> {
    let mut rd = Rd::new(b);
    let (mut payload, mut value): (&[u8], &[u8]) = (&[], &[]);
    while !rd.done() {
        let (field, wt) = rd.key()?;
        match (field, wt) {
            (1, WT_LEN) => payload = rd.bytes()?,
            (2, WT_LEN) => {
                let m = rd.bytes()?;
                let mut r = Rd::new(m);
                let (mut id, mut v): (u64, &[u8]) = (0, &[]);
                while !r.done() {
                    match r.key()? {
                        (1, WT_VARINT) => id = r.varint()?,
                        (2, WT_LEN) => v = r.bytes()?,
                        (_, wt) => r.skip(wt)?,
                    }
                }
                if id == want_id as u64 {
                    value = v;
                }
            }
            _ => rd.skip(wt)?,
        }
    }
    Some((payload, value))
}

/// Encode a packet-out (StreamMessageRequest.packet).
pub fn encode_packet_out(out: &mut impl BufMut, payload: &[u8], port_id: u32, port: &[u8]) {
    let port = if port.is_empty() { &[0u8][..] } else { port };
    let entry = entry_len(port_id, port.len());
    let po_len =
        1 + varint_len(payload.len() as u64) + payload.len() + 1 + varint_len(entry as u64) + entry;
    out.put_u8((2 << 3) | WT_LEN);
    put_varint(out, po_len as u64);
    out.put_u8((1 << 3) | WT_LEN);
    put_varint(out, payload.len() as u64);
    out.put_slice(payload);
    put_metadata(out, port_id, port);
}

/// Our echo controller's StreamChannel codec; `ingress_id`: metadata id of the packet-in's
/// ingress port in the P4Info it pushes.
#[derive(Clone)]
pub struct EchoCodec {
    pub ingress_id: u32,
}

pub struct EchoEncoder;

pub struct EchoDecoder {
    ingress_id: u32,
    scratch: Vec<u8>,
}

impl Codec for EchoCodec {
    type Encode = EchoOut;
    type Decode = EchoIn;
    type Encoder = EchoEncoder;
    type Decoder = EchoDecoder;
    fn encoder(&mut self) -> EchoEncoder {
        EchoEncoder
    }
    fn decoder(&mut self) -> EchoDecoder {
        EchoDecoder {
            ingress_id: self.ingress_id,
            scratch: Vec::with_capacity(512),
        }
    }
}

impl Encoder for EchoEncoder {
    type Item = EchoOut;
    type Error = Status;
    fn encode(&mut self, item: EchoOut, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        match item {
            EchoOut::PacketOut {
                payload,
                port_id,
                port,
                port_len,
            } => {
                encode_packet_out(dst, payload.as_slice(), port_id, &port[..port_len as usize]);
            }
            EchoOut::Request(m) => m
                .encode(dst)
                .map_err(|e| Status::internal(format!("encode: {e}")))?,
        }
        Ok(())
    }
}

impl Decoder for EchoDecoder {
    type Item = EchoIn;
    type Error = Status;
    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<EchoIn>, Status> {
        let id = self.ingress_id;
        Ok(Some(with_bytes(src, &mut self.scratch, |b| {
            parse_response(b, id)
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdnperf_p4rt_proto::p4::config::v1 as cfg;

    fn layout() -> PacketInLayout {
        let info = cfg::P4Info {
            controller_packet_metadata: vec![cfg::ControllerPacketMetadata {
                preamble: Some(cfg::Preamble {
                    id: 0x4000_0001,
                    name: "packet_in".into(),
                    ..Default::default()
                }),
                metadata: vec![
                    cfg::controller_packet_metadata::Metadata {
                        id: 1,
                        name: "ingress_port".into(),
                        bitwidth: 9,
                        ..Default::default()
                    },
                    cfg::controller_packet_metadata::Metadata {
                        id: 2,
                        name: "_pad".into(),
                        bitwidth: 7,
                        ..Default::default()
                    },
                ],
            }],
            ..Default::default()
        };
        PacketInLayout::from_p4info(&info)
    }

    #[test]
    fn canonical_bytes_are_shortest_and_width_masked() {
        let c = |v: u64, w: u32| {
            let mut b = [0u8; 8];
            let n = canonical(v, w, &mut b);
            b[..n].to_vec()
        };
        assert_eq!(c(0, 9), vec![0]);
        assert_eq!(c(3, 9), vec![3]);
        assert_eq!(c(300, 9), vec![1, 44]);
        assert_eq!(c(512 + 5, 9), vec![5]); // masked to 9 bits
        assert_eq!(c(0x1_0000, 32), vec![1, 0, 0]);
    }

    #[test]
    fn packet_in_decodes_with_prost_and_fills_metadata_by_name() {
        let l = layout();
        assert_eq!(
            l.fields,
            vec![(1, 9, MetaKind::IngressPort), (2, 7, MetaKind::Zero)]
        );
        let mut fr = Vec::new();
        frame::frame_template(&mut fr, None);
        let mut out = Vec::new();
        let id = (3u64 << 40) | 12345;
        encode_packet_in(
            &mut out,
            &mut fr,
            &l,
            id,
            frame::host_mac(3, 6),
            frame::host_mac(3, 5),
            300,
        );
        let msg = p4::StreamMessageResponse::decode(out.as_slice()).expect("valid protobuf");
        let Some(p4::stream_message_response::Update::Packet(pi)) = msg.update else {
            panic!("not a packet-in")
        };
        assert_eq!(frame::frame_id(&pi.payload), Some(id));
        assert_eq!(&pi.payload[6..12], &frame::host_mac(3, 5));
        assert_eq!(pi.metadata.len(), 2);
        assert_eq!(
            (pi.metadata[0].metadata_id, pi.metadata[0].value.clone()),
            (1, vec![1, 44])
        );
        assert_eq!(
            (pi.metadata[1].metadata_id, pi.metadata[1].value.clone()),
            (2, vec![0])
        );
        // and our own reader sees the same
        let EchoIn::PacketIn {
            payload,
            port,
            port_len,
        } = parse_response(&out, 1)
        else {
            panic!()
        };
        assert_eq!(frame::frame_id(payload.as_slice()), Some(id));
        assert_eq!(&port[..port_len as usize], &[1, 44]);
    }

    #[test]
    fn packet_out_round_trip_and_id_matching() {
        let mut fr = Vec::new();
        frame::frame_template(&mut fr, None);
        frame::patch_frame(&mut fr, frame::host_mac(0, 2), frame::host_mac(0, 1), 77);
        let mut out = Vec::new();
        encode_packet_out(&mut out, &fr, 1, &[2]);
        let msg = p4::StreamMessageRequest::decode(out.as_slice()).expect("valid protobuf");
        let Some(p4::stream_message_request::Update::Packet(po)) = msg.update else {
            panic!()
        };
        assert_eq!(po.payload, fr);
        assert_eq!(
            (po.metadata[0].metadata_id, po.metadata[0].value.clone()),
            (1, vec![2])
        );
        assert!(matches!(
            parse_request(&out),
            DevIn::PacketOut { id: Some(77) }
        ));
        // a packet-out built by prost (as a real controller does) parses the same
        let prost_po = p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                payload: fr.clone(),
                metadata: vec![p4::PacketMetadata {
                    metadata_id: 2,
                    value: vec![0, 1],
                }],
            })),
        };
        assert!(matches!(
            parse_request(&prost_po.encode_to_vec()),
            DevIn::PacketOut { id: Some(77) }
        ));
        // a foreign frame: no id
        let other = p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Packet(p4::PacketOut {
                payload: vec![1; 60],
                metadata: vec![],
            })),
        };
        assert!(matches!(
            parse_request(&other.encode_to_vec()),
            DevIn::PacketOut { id: None }
        ));
    }

    #[test]
    fn arbitration_and_garbage() {
        let arb = p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Arbitration(
                p4::MasterArbitrationUpdate {
                    device_id: 7,
                    election_id: Some(p4::Uint128 { high: 0, low: 9 }),
                    ..Default::default()
                },
            )),
        };
        match parse_request(&arb.encode_to_vec()) {
            DevIn::Arbitration(a) => assert_eq!((a.device_id, a.election_id.unwrap().low), (7, 9)),
            other => panic!("{other:?}"),
        }
        // truncated, bad keys, lengths past the end, random bytes: never a panic
        let good = arb.encode_to_vec();
        for cut in 0..good.len() {
            let _ = parse_request(&good[..cut]);
            let _ = parse_response(&good[..cut], 1);
        }
        assert!(matches!(
            parse_request(&[0x12, 0x7f, 1, 2]),
            DevIn::Malformed(_)
        ));
        assert!(matches!(parse_request(&[0x00]), DevIn::Malformed(_)));
        assert!(matches!(
            parse_request(&[0x12, 0x02, 0x0a, 0x7f]),
            DevIn::Malformed(_)
        ));
        let mut x: u32 = 12345;
        for len in 0..300usize {
            let junk: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    x as u8
                })
                .collect();
            let _ = parse_request(&junk);
            let _ = parse_response(&junk, 1);
        }
        assert!(matches!(parse_request(&[]), DevIn::Other));
    }
}
