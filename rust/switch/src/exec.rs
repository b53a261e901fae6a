//! Per-packet execution of a compiled `Program` with v1model (simple_switch) semantics:
//! parser -> checksum verify -> ingress -> replication (clone I2E, resubmit, multicast,
//! unicast, drop) -> [queue, see `switch`] -> egress -> clone E2E -> checksum update ->
//! deparser -> recirculate or transmit.
//!
//! Packets travel as pooled `Job`s (PHV + original bytes + deparse buffer), so the steady
//! state allocates nothing.

use crate::externs::{run_algo, Externs};
use crate::pipeline::*;
use crate::pre::Pre;
use crate::tables::Table;

pub const DROP_PORT: u32 = 511;
/// default limit of passes (recirculations, resubmits, E2E clones) per packet: a guard
/// against a program that loops for ever (the packet then leaves, counted in loops_cut);
/// 2^24 lets delay control by recirculation hold a packet for seconds (docs/recirculation.md)
pub const MAX_PASSES: u32 = 1 << 24;
pub const MAX_KEYS: usize = 16;

pub const PKT_NORMAL: u32 = 0;
pub const PKT_INGRESS_CLONE: u32 = 1;
pub const PKT_EGRESS_CLONE: u32 = 2;
pub const PKT_RECIRC: u32 = 4;
pub const PKT_REPLICATION: u32 = 5;
pub const PKT_RESUBMIT: u32 = 6;

#[derive(Clone)]
pub struct Phv {
    pub vals: Vec<u128>,
    pub valid: Vec<bool>,
    pub stack_next: Vec<u32>,
    /// varbit contents per slot: (length in bytes, bytes)
    pub vb_len: Vec<u32>,
    pub vb: Vec<Vec<u8>>,
    /// per header: 1 + its byte offset in the job's `buf` while its fields still hold
    /// exactly the bytes extracted there (0 = written since, or not extracted); the
    /// deparser then copies those bytes instead of packing every field again
    pub orig: Vec<u32>,
}

impl Phv {
    pub fn new(p: &Program) -> Phv {
        Phv {
            vals: vec![0; p.fields.len()],
            valid: vec![false; p.headers.len()],
            stack_next: vec![0; p.stacks.len()],
            vb_len: vec![0; p.varbit_max.len()],
            vb: p
                .varbit_max
                .iter()
                .map(|&m| vec![0u8; m as usize])
                .collect(),
            orig: vec![0; p.headers.len()],
        }
    }
    fn reset(&mut self, p: &Program) {
        self.vals.iter_mut().for_each(|v| *v = 0);
        for (i, h) in p.headers.iter().enumerate() {
            self.valid[i] = h.metadata;
        }
        self.stack_next.iter_mut().for_each(|v| *v = 0);
        self.vb_len.iter_mut().for_each(|v| *v = 0);
        self.orig.iter_mut().for_each(|v| *v = 0);
    }
    fn copy_from(&mut self, o: &Phv) {
        self.vals.copy_from_slice(&o.vals);
        self.valid.copy_from_slice(&o.valid);
        self.stack_next.copy_from_slice(&o.stack_next);
        self.vb_len.copy_from_slice(&o.vb_len);
        // the copy's bytes may come from another buffer (clone_job restores `orig`)
        self.orig.iter_mut().for_each(|v| *v = 0);
        for (i, &l) in o.vb_len.iter().enumerate() {
            self.vb[i][..l as usize].copy_from_slice(&o.vb[i][..l as usize]);
        }
    }
    #[inline]
    fn set(&mut self, p: &Program, f: FieldId, v: u128) {
        let fi = &p.fields[f as usize];
        self.vals[f as usize] = v & fi.mask;
        self.orig[fi.header as usize] = 0;
    }
    #[inline]
    fn set_opt(&mut self, p: &Program, f: Option<FieldId>, v: u128) {
        if let Some(f) = f {
            self.set(p, f, v);
        }
    }
    #[inline]
    fn get_opt(&self, f: Option<FieldId>) -> u128 {
        f.map(|f| self.vals[f as usize]).unwrap_or(0)
    }
}

#[derive(Clone, Copy, Default)]
pub struct Flags {
    pub clone: Option<(u32, u32)>,
    pub clone_e2e: bool,
    pub recirc: Option<u32>,
    pub resubmit: Option<u32>,
    pub truncate: Option<usize>,
    pub exit: bool,
}

/// A packet in flight.
pub struct Job {
    pub phv: Phv,
    /// packet bytes as they entered this pass (never modified by the pipeline)
    pub buf: Vec<u8>,
    pub payload_off: usize,
    /// deparsed headers (filled by egress)
    pub out: Vec<u8>,
    pub in_port: u32,
    pub egress_port: u32,
    pub instance_type: u32,
    pub passes: u32,
    /// virtio_net_hdr carried through for offloaded packets (AF_PACKET with PACKET_VNET_HDR)
    pub vnet: Option<[u8; 10]>,
    pub flags: Flags,
    pub enq_ns: u64,
    pub enq_depth: u32,
    pub truncate: Option<usize>,
    /// the link slot the XDP fast path claimed for this packet on a rate-shaped port
    /// (xdpfast/shaper.rs); the switch sends it at the slot's start
    pub slot: Option<crate::xdpfast::shaper::Slot>,
}

impl Job {
    /// Total length on the wire after deparsing.
    pub fn out_len(&self) -> usize {
        let l = self.out.len() + self.buf.len() - self.payload_off;
        match self.truncate {
            Some(t) => l.min(t),
            None => l,
        }
    }
    /// Writes the outgoing packet bytes (deparsed headers + payload, truncated) into `v`.
    pub fn out_bytes(&self, v: &mut Vec<u8>) {
        v.clear();
        v.extend_from_slice(&self.out);
        v.extend_from_slice(&self.buf[self.payload_off..]);
        if let Some(t) = self.truncate {
            v.truncate(t);
        }
    }
}

pub struct Digest {
    pub list: u32,
    pub receiver: u128,
    pub values: Vec<u128>,
}

#[derive(Default, Debug, Clone, Copy)]
pub struct Stats {
    pub rx: u64,
    pub tx: u64,
    pub dropped: u64,
    pub parser_errors: u64,
    pub recirculations: u64,
    pub loops_cut: u64,
}

/// The packet pipeline of one loaded program. Its state (tables, externs, PRE, counters)
/// is changed only through the switch's control API (`control.rs`); the settings below
/// (`max_passes`, `trace`, `check_deparse_copy`) are set before the switch starts.
pub struct Engine {
    pub(crate) prog: Program,
    /// entries and default action of each of `prog.tables` (same index)
    pub(crate) tables: Vec<Table>,
    pub(crate) ext: Externs,
    pub(crate) pre: Pre,
    pub(crate) direct_counters: Vec<Vec<(u64, u64)>>,
    pub(crate) direct_meter_cells: Vec<Vec<crate::externs::MeterCell>>,
    pub(crate) digests: Vec<Digest>,
    pub(crate) stats: Stats,
    pub max_passes: u32,
    /// print parser states, conditions and table lookups to stderr (debugging)
    pub trace: bool,
    /// tests: when the deparser copies an unmodified header's original bytes, also pack
    /// its fields and panic if the two differ (a write path that missed `Phv::orig`)
    pub check_deparse_copy: bool,
    pool: Vec<Box<Job>>,
    /// the fast path's link clocks: a job the kernel handed over with a slot is counted
    /// done there when it is recycled (sent or dropped), xdpfast/shaper.rs
    pub(crate) link_clock: Option<std::sync::Arc<crate::xdpfast::shaper::ShaperMap>>,
    scratch: Vec<u8>,
    reps: Vec<(u32, u32)>,
    pub t0: std::time::Instant,
}

struct Ev<'a> {
    p: &'a Program,
    params: &'a [u128],
    pkt: &'a [u8],
    cursor_bits: usize,
}

impl<'a> Ev<'a> {
    fn eval(&self, e: &Expr, phv: &Phv) -> u128 {
        match e {
            Expr::Const(c) => *c,
            Expr::Field(f) => phv.vals[*f as usize],
            Expr::SignedField(f, w) => sext(phv.vals[*f as usize], *w),
            Expr::Param(i) => self.params.get(*i as usize).copied().unwrap_or(0),
            Expr::Valid(h) => phv.valid[*h as usize] as u128,
            Expr::StackField(st, idx, off) => {
                let i = self.eval(idx, phv) as usize;
                match self.p.stacks[*st as usize].headers.get(i) {
                    Some(&h) => {
                        if *off == u32::MAX {
                            phv.valid[h as usize] as u128
                        } else {
                            phv.vals[(self.p.headers[h as usize].first_field + off) as usize]
                        }
                    }
                    None => 0,
                }
            }
            Expr::Un(op, a) => {
                let a = self.eval(a, phv);
                match op {
                    UnOp::Not => (a == 0) as u128,
                    UnOp::BitNot => !a,
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::D2B => (a != 0) as u128,
                    UnOp::B2D => a,
                }
            }
            Expr::Bin(op, a, b) => {
                if *op == BinOp::And {
                    return (self.eval(a, phv) != 0 && self.eval(b, phv) != 0) as u128;
                }
                if *op == BinOp::Or {
                    return (self.eval(a, phv) != 0 || self.eval(b, phv) != 0) as u128;
                }
                let x = self.eval(a, phv);
                let y = self.eval(b, phv);
                match op {
                    BinOp::Add => x.wrapping_add(y),
                    BinOp::Sub => x.wrapping_sub(y),
                    BinOp::Mul => x.wrapping_mul(y),
                    BinOp::Div => x.checked_div(y).unwrap_or(0),
                    BinOp::Mod => x.checked_rem(y).unwrap_or(0),
                    BinOp::Shl => {
                        if y >= 128 {
                            0
                        } else {
                            x << y
                        }
                    }
                    BinOp::Shr => {
                        // arithmetic: negative intermediate values shift like signed bignums
                        ((x as i128) >> y.min(127)) as u128
                    }
                    BinOp::Eq => (x == y) as u128,
                    BinOp::Ne => (x != y) as u128,
                    BinOp::Gt => ((x as i128) > (y as i128)) as u128,
                    BinOp::Ge => ((x as i128) >= (y as i128)) as u128,
                    BinOp::Lt => ((x as i128) < (y as i128)) as u128,
                    BinOp::Le => ((x as i128) <= (y as i128)) as u128,
                    BinOp::BitAnd => x & y,
                    BinOp::BitOr => x | y,
                    BinOp::BitXor => x ^ y,
                    BinOp::And | BinOp::Or => unreachable!(),
                }
            }
            Expr::Cond(c, a, b) => {
                if self.eval(c, phv) != 0 {
                    self.eval(a, phv)
                } else {
                    self.eval(b, phv)
                }
            }
            // two_comp_mod: the value as an int<w> (BMv2 keeps it signed, so a cast
            // (int<8>)0xF1 is -15 and compares below 0)
            Expr::Trunc(a, w) => match *w {
                0 => 0,
                w if w >= 128 => self.eval(a, phv),
                w => sext(self.eval(a, phv), w),
            },
            Expr::SatCast(a, w, signed) => {
                let v = self.eval(a, phv) as i128;
                let w = (*w).clamp(1, 127);
                if *signed {
                    let hi = (1i128 << (w - 1)) - 1;
                    let lo = -(1i128 << (w - 1));
                    (v.clamp(lo, hi) as u128) & width_mask(w)
                } else if v < 0 {
                    0
                } else {
                    (v as u128).min(width_mask(w))
                }
            }
            Expr::LastStackIndex(st) => phv.stack_next[*st as usize].saturating_sub(1) as u128,
            Expr::StackSize(st) => phv.stack_next[*st as usize] as u128,
            Expr::VarBit(slot) => {
                let n = phv.vb_len[*slot as usize] as usize;
                phv.vb[*slot as usize][..n]
                    .iter()
                    .fold(0u128, |v, b| (v << 8) | *b as u128)
            }
            Expr::Lookahead(off, w) => {
                let start = self.cursor_bits + *off as usize;
                if start + *w as usize > self.pkt.len() * 8 {
                    0
                } else {
                    get_bits(self.pkt, start, *w)
                }
            }
        }
    }
}

#[inline]
fn sext(v: u128, w: u32) -> u128 {
    let sh = 128 - w;
    (((v << sh) as i128) >> sh) as u128
}

#[inline]
pub fn get_bits(buf: &[u8], off: usize, w: u32) -> u128 {
    if w == 0 {
        return 0;
    }
    let start = off / 8;
    let end = (off + w as usize).div_ceil(8);
    let mut acc: u128 = 0;
    for b in &buf[start..end] {
        acc = (acc << 8) | *b as u128;
    }
    let trailing = end * 8 - (off + w as usize);
    (acc >> trailing) & width_mask(w)
}

#[inline]
pub fn set_bits(buf: &mut [u8], off: usize, w: u32, v: u128) {
    if off.is_multiple_of(8) && w.is_multiple_of(8) {
        let n = (w / 8) as usize;
        let start = off / 8;
        for i in 0..n {
            buf[start + i] = (v >> (8 * (n - 1 - i))) as u8;
        }
        return;
    }
    let mut remaining = w;
    let mut pos = off;
    while remaining > 0 {
        let byte = pos / 8;
        let bit = (pos % 8) as u32;
        let take = (8 - bit).min(remaining);
        let chunk = ((v >> (remaining - take)) & ((1u128 << take) - 1)) as u8;
        let sh = 8 - bit - take;
        let m = ((((1u16 << take) - 1) << sh) & 0xff) as u8;
        buf[byte] = (buf[byte] & !m) | (chunk << sh);
        pos += take as usize;
        remaining -= take;
    }
}

fn lv_set(p: &Program, phv: &mut Phv, ev: &Ev, l: &LValue, v: u128) {
    match l {
        LValue::Field(f) => phv.set(p, *f, v),
        LValue::StackField(st, idx, off) => {
            let i = ev.eval(idx, phv) as usize;
            if let Some(&h) = p.stacks[*st as usize].headers.get(i) {
                let f = p.headers[h as usize].first_field + off;
                phv.set(p, f, v);
            }
        }
    }
}

fn resolve_header(p: &Program, phv: &Phv, ev: &Ev, h: &HeaderRef) -> Option<HeaderId> {
    match h {
        HeaderRef::Fixed(h) => Some(*h),
        HeaderRef::StackElem(st, idx) => {
            let i = ev.eval(idx, phv) as usize;
            p.stacks[*st as usize].headers.get(i).copied()
        }
        HeaderRef::Cond(c, a, b) => {
            resolve_header(p, phv, ev, if ev.eval(c, phv) != 0 { a } else { b })
        }
    }
}

fn copy_header(p: &Program, phv: &mut Phv, dst: HeaderId, src: HeaderId) {
    let d = &p.headers[dst as usize];
    let s = &p.headers[src as usize];
    let n = d.num_fields.min(s.num_fields) as usize;
    for i in 0..n {
        phv.vals[d.first_field as usize + i] = phv.vals[s.first_field as usize + i];
    }
    if let (Some((ds, _)), Some((ss, _))) = (d.varbit, s.varbit) {
        copy_varbit(phv, ds as usize, ss as usize);
    }
    phv.valid[dst as usize] = phv.valid[src as usize];
    phv.orig[dst as usize] = 0;
}

/// Copies varbit slot `s` into slot `d` (cut to `d`'s maximum length).
fn copy_varbit(phv: &mut Phv, d: usize, s: usize) {
    if d == s {
        return;
    }
    let n = (phv.vb_len[s] as usize).min(phv.vb[d].len());
    let (src, dst) = if s < d {
        let (a, b) = phv.vb.split_at_mut(d);
        (&a[s], &mut b[0])
    } else {
        let (a, b) = phv.vb.split_at_mut(s);
        (&b[0], &mut a[d])
    };
    dst[..n].copy_from_slice(&src[..n]);
    phv.vb_len[d] = n as u32;
}

/// A union member becoming valid makes the other members invalid.
#[inline]
fn union_exclusive(p: &Program, phv: &mut Phv, h: HeaderId) {
    if let Some(u) = p.headers[h as usize].union {
        for &o in &p.unions[u as usize].1 {
            if o != h {
                phv.valid[o as usize] = false;
            }
        }
    }
}

fn set_header_valid(p: &Program, phv: &mut Phv, h: HeaderId, valid: bool) {
    phv.orig[h as usize] = 0;
    if valid {
        union_exclusive(p, phv, h);
    }
    if valid && !phv.valid[h as usize] {
        // a newly valid header starts zeroed (bmv2 behaviour)
        let hi = &p.headers[h as usize];
        for f in hi.first_field..hi.first_field + hi.num_fields {
            phv.vals[f as usize] = 0;
        }
    }
    phv.valid[h as usize] = valid;
}

/// Bit-packs the inputs of a calculation into `buf` (trailing bits zero-padded).
fn calc_bytes(p: &Program, c: &Calculation, phv: &Phv, payload: &[u8], buf: &mut Vec<u8>) {
    buf.clear();
    let mut bits = 0usize;
    let push = |buf: &mut Vec<u8>, bits: &mut usize, v: u128, w: u32| {
        let need = (*bits + w as usize).div_ceil(8);
        if buf.len() < need {
            buf.resize(need, 0);
        }
        set_bits(buf, *bits, w, v);
        *bits += w as usize;
    };
    for inp in &c.inputs {
        match inp {
            CalcInput::Field(f) => push(
                buf,
                &mut bits,
                phv.vals[*f as usize],
                p.fields[*f as usize].width,
            ),
            CalcInput::Const(v, w) => push(buf, &mut bits, *v, *w),
            CalcInput::VarBit(slot) => {
                bits = bits.div_ceil(8) * 8;
                buf.resize(bits / 8, 0);
                let l = phv.vb_len[*slot as usize] as usize;
                buf.extend_from_slice(&phv.vb[*slot as usize][..l]);
                bits += l * 8;
            }
            CalcInput::Header(h) => {
                let hi = &p.headers[*h as usize];
                if phv.valid[*h as usize] {
                    for f in hi.first_field..hi.first_field + hi.num_fields {
                        push(
                            buf,
                            &mut bits,
                            phv.vals[f as usize],
                            p.fields[f as usize].width,
                        );
                    }
                }
            }
            CalcInput::Payload => {
                bits = bits.div_ceil(8) * 8;
                buf.resize(bits / 8, 0);
                buf.extend_from_slice(payload);
                bits += payload.len() * 8;
            }
        }
    }
}

/// A table's state as the program starts it: its default action and const entries.
fn table_state(def: &TableDef) -> Table {
    let mut t = Table::new(def);
    for e in &def.const_entries {
        // the loader added every const entry to a scratch state already, so none fails here
        let _ = t.add_program_entry(
            e.key.clone(),
            e.aux.clone(),
            e.prefix,
            e.priority,
            e.action,
            e.data.clone(),
        );
    }
    t
}

enum ParseEnd {
    Accept,
    Reject(u32),
}

impl Engine {
    pub fn new(prog: Program) -> Engine {
        let ext = Externs::new(&prog);
        let nt = prog.tables.len();
        let tables = prog.tables.iter().map(table_state).collect();
        Engine {
            ext,
            tables,
            prog,
            pre: Pre::default(),
            direct_counters: vec![Vec::new(); nt],
            direct_meter_cells: vec![Vec::new(); nt],
            digests: Vec::new(),
            stats: Stats::default(),
            max_passes: MAX_PASSES,
            trace: std::env::var_os("SDNPERF_SWITCH_TRACE").is_some(),
            check_deparse_copy: false,
            pool: Vec::new(),
            link_clock: None,
            scratch: Vec::with_capacity(2048),
            reps: Vec::new(),
            t0: std::time::Instant::now(),
        }
    }

    pub fn now_ns(&self) -> u64 {
        self.t0.elapsed().as_nanos() as u64
    }

    pub fn job(&mut self) -> Box<Job> {
        match self.pool.pop() {
            Some(j) => j,
            None => Box::new(Job {
                phv: Phv::new(&self.prog),
                buf: Vec::with_capacity(2048),
                payload_off: 0,
                out: Vec::with_capacity(256),
                in_port: 0,
                egress_port: 0,
                instance_type: 0,
                passes: 0,
                vnet: None,
                flags: Flags::default(),
                enq_ns: 0,
                enq_depth: 0,
                truncate: None,
                slot: None,
            }),
        }
    }

    /// Ends a job (sent, or dropped anywhere): every job ends here, so a slotted one is
    /// counted done exactly once.
    pub fn recycle(&mut self, mut j: Box<Job>) {
        if let (Some(s), Some(lc)) = (j.slot.take(), &self.link_clock) {
            lc.done(s.port);
        }
        if self.pool.len() < 4096 && j.buf.capacity() <= 70_000 {
            self.pool.push(j);
        }
    }

    /// A fresh job holding a copy of `bytes` arriving on `port`.
    pub fn new_packet(&mut self, port: u32, bytes: &[u8], vnet: Option<[u8; 10]>) -> Box<Job> {
        let mut j = self.job();
        j.buf.clear();
        j.buf.extend_from_slice(bytes);
        j.in_port = port;
        j.instance_type = PKT_NORMAL;
        j.passes = 0;
        j.vnet = vnet;
        j.truncate = None;
        j
    }

    fn clone_job(&mut self, src: &Job) -> Box<Job> {
        let mut j = self.job();
        j.phv.copy_from(&src.phv);
        j.buf.clear();
        j.buf.extend_from_slice(&src.buf);
        j.phv.orig.copy_from_slice(&src.phv.orig); // same bytes
        j.payload_off = src.payload_off;
        j.out.clear();
        j.in_port = src.in_port;
        j.egress_port = src.egress_port;
        j.instance_type = src.instance_type;
        j.passes = src.passes;
        j.vnet = src.vnet;
        j.flags = Flags::default();
        j.truncate = src.truncate;
        j
    }

    /// Resets the metadata of `j` (all metadata headers zeroed) but keeps the fields of
    /// field list `fl` from `from` (values captured before the reset).
    fn reset_meta_keep(&mut self, j: &mut Job, fl: u32) {
        let p = &self.prog;
        let keep: &[FieldId] = if fl != 0 {
            p.field_list(fl).unwrap_or(&[])
        } else {
            &[]
        };
        let mut saved = [0u128; 64];
        for (i, f) in keep.iter().enumerate().take(64) {
            saved[i] = j.phv.vals[*f as usize];
        }
        for h in p.headers.iter().filter(|h| h.metadata) {
            for f in h.first_field..h.first_field + h.num_fields {
                j.phv.vals[f as usize] = 0;
            }
        }
        for (i, f) in keep.iter().enumerate().take(64) {
            j.phv.vals[*f as usize] = saved[i];
        }
    }

    // ---------------------------------------------------------------- parser

    fn parse(&mut self, j: &mut Job) -> ParseEnd {
        let p = &self.prog;
        let mut cursor = 0usize; // bytes
        let mut state = p.parser.init;
        let mut steps = 0;
        let pkt: &[u8] = &j.buf;
        let phv = &mut j.phv;
        let end = 'outer: loop {
            let si = match state {
                None => break ParseEnd::Accept,
                Some(s) => s,
            };
            steps += 1;
            if steps > 1000 {
                break ParseEnd::Reject(
                    p.errors
                        .iter()
                        .find(|e| e.0 == "ParserTimeout")
                        .map(|e| e.1)
                        .unwrap_or(5),
                );
            }
            let st = &p.parser.states[si as usize];
            if self.trace {
                eprintln!("trace:   parser state {} at byte {}", st.name, cursor);
            }
            for op in &st.ops {
                let ev = Ev {
                    p,
                    params: &[],
                    pkt,
                    cursor_bits: cursor * 8,
                };
                match op {
                    ParserOp::Extract(h) => {
                        let h = match resolve_header(p, phv, &ev, h) {
                            Some(h) => h,
                            None => break 'outer ParseEnd::Reject(p.err_stack_out_of_bounds),
                        };
                        match extract(p, phv, pkt, cursor, h) {
                            Some(n) => cursor += n,
                            None => break 'outer ParseEnd::Reject(p.err_packet_too_short),
                        }
                    }
                    ParserOp::ExtractVL(h, len) => {
                        let h = &match resolve_header(p, phv, &ev, h) {
                            Some(h) => h,
                            None => break 'outer ParseEnd::Reject(p.err_stack_out_of_bounds),
                        };
                        let bits = ev.eval(len, phv) as usize;
                        // (the loader checked that every such header has a varbit field)
                        let (slot, max) = p.headers[*h as usize].varbit.unwrap_or((0, 0));
                        let vbytes = bits / 8;
                        // BMv2: a length that is not whole bytes is an invalid argument,
                        // one longer than the varbit's maximum a too-short header
                        let err = if !bits.is_multiple_of(8) {
                            Some(("ParserInvalidArgument", 6))
                        } else if vbytes > max as usize {
                            Some(("HeaderTooShort", 4))
                        } else {
                            None
                        };
                        if let Some((name, default)) = err {
                            break 'outer ParseEnd::Reject(
                                p.errors
                                    .iter()
                                    .find(|e| e.0 == name)
                                    .map(|e| e.1)
                                    .unwrap_or(default),
                            );
                        }
                        match extract(p, phv, pkt, cursor, *h) {
                            Some(n) => cursor += n,
                            None => break 'outer ParseEnd::Reject(p.err_packet_too_short),
                        }
                        if cursor + vbytes > pkt.len() {
                            phv.valid[*h as usize] = false;
                            break 'outer ParseEnd::Reject(p.err_packet_too_short);
                        }
                        phv.vb[slot as usize][..vbytes]
                            .copy_from_slice(&pkt[cursor..cursor + vbytes]);
                        phv.vb_len[slot as usize] = vbytes as u32;
                        cursor += vbytes;
                    }
                    ParserOp::ExtractNext(s) => {
                        let next = phv.stack_next[*s as usize] as usize;
                        let h = match p.stacks[*s as usize].headers.get(next) {
                            Some(&h) => h,
                            None => break 'outer ParseEnd::Reject(p.err_stack_out_of_bounds),
                        };
                        match extract(p, phv, pkt, cursor, h) {
                            Some(n) => cursor += n,
                            None => break 'outer ParseEnd::Reject(p.err_packet_too_short),
                        }
                        // (extract() moved nextIndex past this element)
                    }
                    ParserOp::NeedBits(bits) => {
                        if cursor * 8 + *bits as usize > pkt.len() * 8 {
                            break 'outer ParseEnd::Reject(p.err_packet_too_short);
                        }
                    }
                    ParserOp::Set(l, e) => {
                        let v = ev.eval(e, phv);
                        lv_set(p, phv, &ev, l, v);
                    }
                    ParserOp::Verify(c, e) => {
                        if ev.eval(c, phv) == 0 {
                            let code = ev.eval(e, phv) as u32;
                            break 'outer ParseEnd::Reject(code);
                        }
                    }
                    ParserOp::Advance(e) => {
                        let bits = ev.eval(e, phv) as usize;
                        let bytes = bits / 8;
                        if cursor + bytes > pkt.len() {
                            break 'outer ParseEnd::Reject(p.err_packet_too_short);
                        }
                        cursor += bytes;
                    }
                    ParserOp::Prim(prim) => {
                        let mut dummy = Flags::default();
                        exec_prim_simple(p, phv, &ev, prim, &mut dummy);
                    }
                }
            }
            // transition
            if st.transitions.is_empty() {
                break ParseEnd::Accept;
            }
            let ev = Ev {
                p,
                params: &[],
                pkt,
                cursor_bits: cursor * 8,
            };
            let mut key: u128 = 0;
            for (e, w) in &st.key {
                // bmv2 concatenates select keys byte-aligned: each part padded to whole bytes
                let v = ev.eval(e, phv) & width_mask(*w);
                let wb = w.div_ceil(8) * 8;
                key = if wb >= 128 { v } else { (key << wb) | v };
            }
            let mut matched = false;
            for t in &st.transitions {
                if let Some(vs) = t.vset {
                    let k = key & t.mask;
                    if p.vsets[vs as usize]
                        .values
                        .iter()
                        .any(|(v, m)| k & m == v & m & t.mask)
                    {
                        state = t.next;
                        matched = true;
                        break;
                    }
                    continue;
                }
                if t.default || key & t.mask == t.value {
                    state = t.next;
                    matched = true;
                    break;
                }
            }
            if !matched {
                break ParseEnd::Reject(
                    p.errors
                        .iter()
                        .find(|e| e.0 == "NoMatch")
                        .map(|e| e.1)
                        .unwrap_or(2),
                );
            }
        };
        j.payload_off = cursor.min(j.buf.len());
        end
    }

    // ---------------------------------------------------------------- controls

    fn run_control(&mut self, init: Option<Node>, j: &mut Job, now_ns: u64) {
        let mut node = init;
        let mut keybuf = [0u128; MAX_KEYS];
        let mut scratch = [0u128; MAX_KEYS];
        let pkt_len = j.buf.len() as u64;
        while let Some(n) = node {
            if j.flags.exit {
                return;
            }
            match n {
                Node::Cond(c) => {
                    let c = &self.prog.conds[c as usize];
                    let ev = Ev {
                        p: &self.prog,
                        params: &[],
                        pkt: &[],
                        cursor_bits: 0,
                    };
                    let v = ev.eval(&c.expr, &j.phv) != 0;
                    if self.trace {
                        eprintln!("trace:   condition {} -> {}", c.name, v);
                    }
                    node = if v { c.true_next } else { c.false_next };
                }
                Node::Table(ti) => {
                    let p = &self.prog;
                    let t = &p.tables[ti as usize];
                    let st = &self.tables[ti as usize];
                    let nk = t.keys.len().min(MAX_KEYS);
                    for (i, k) in t.keys.iter().take(nk).enumerate() {
                        let v = match k.src {
                            KeySrc::Field(f) => j.phv.vals[f as usize],
                            KeySrc::Valid(h) => j.phv.valid[h as usize] as u128,
                        };
                        keybuf[i] = match k.mask {
                            Some(m) => v & m,
                            None => v,
                        };
                    }
                    let hit = st.lookup(&keybuf[..nk], &mut scratch);
                    let (action, data): (u32, &[u128]) = match hit {
                        Some(h) => {
                            let e = st.entries[h as usize].as_ref().unwrap();
                            if t.with_counters {
                                let dc = &mut self.direct_counters[ti as usize];
                                if dc.len() <= h as usize {
                                    dc.resize(st.entries.len().max(h as usize + 1), (0, 0));
                                }
                                dc[h as usize].0 += 1;
                                dc[h as usize].1 += pkt_len;
                            }
                            if let Some(m) = t.direct_meter {
                                let cells = &mut self.direct_meter_cells[ti as usize];
                                if cells.len() <= h as usize {
                                    cells.resize(
                                        st.entries.len().max(h as usize + 1),
                                        Default::default(),
                                    );
                                }
                                let amount = if p.meters[m].bytes {
                                    pkt_len as f64
                                } else {
                                    1.0
                                };
                                let color =
                                    cells[h as usize].execute(now_ns as f64 / 1000.0, amount);
                                if let Some(rf) = p.meters[m].result {
                                    j.phv.set(p, rf, color);
                                }
                            }
                            (e.action, e.data.as_slice())
                        }
                        None => (st.default_action, &st.default_data),
                    };
                    let (action, data) = match t.profile {
                        Some(pi)
                            if action != NO_ACTION
                                && action & (INDIRECT_MEMBER | INDIRECT_GROUP) != 0 =>
                        {
                            let prof = &p.profiles[pi as usize];
                            let member = if action & INDIRECT_GROUP != 0 {
                                let g = (action & !INDIRECT_GROUP) as usize;
                                match prof.groups.get(g).and_then(|x| x.as_ref()) {
                                    Some(ms) if !ms.is_empty() => {
                                        let h = match &prof.selector {
                                            Some(c) => {
                                                calc_bytes(p, c, &j.phv, &[], &mut self.scratch);
                                                run_algo(c.algo, &self.scratch, &mut self.ext)
                                            }
                                            None => 0,
                                        };
                                        Some(ms[(h % ms.len() as u128) as usize])
                                    }
                                    _ => None,
                                }
                            } else {
                                Some(action & !INDIRECT_MEMBER)
                            };
                            match member
                                .and_then(|m| prof.members.get(m as usize))
                                .and_then(|x| x.as_ref())
                            {
                                Some((a, d)) => (*a, &d[..]),
                                None => (NO_ACTION, &[][..]),
                            }
                        }
                        _ => (action, data),
                    };
                    if self.trace {
                        let keys: Vec<String> =
                            keybuf[..nk].iter().map(|k| format!("{:#x}", k)).collect();
                        eprintln!(
                            "trace:   table {} key [{}] -> {} action {}({})",
                            t.name,
                            keys.join(", "),
                            if hit.is_some() { "hit" } else { "miss" },
                            p.actions
                                .get(action as usize)
                                .map(|a| a.name.as_str())
                                .unwrap_or("none"),
                            data.iter()
                                .map(|d| format!("{:#x}", d))
                                .collect::<Vec<_>>()
                                .join(", ")
                        );
                    }
                    if (action as usize) < p.actions.len() {
                        exec_action(
                            p,
                            &mut self.ext,
                            &mut self.digests,
                            j,
                            action,
                            data,
                            now_ns,
                            &mut self.scratch,
                        );
                    }
                    node = match t.hit_miss {
                        Some((hn, mn)) => {
                            if hit.is_some() {
                                hn
                            } else {
                                mn
                            }
                        }
                        None if action == NO_ACTION => t.base_next,
                        None => t.next_by_action.get(action as usize).copied().flatten(),
                    };
                }
            }
        }
    }

    fn verify_checksums(&mut self, j: &mut Job) {
        let p = &self.prog;
        for c in p.checksums.iter().filter(|c| c.verify) {
            let ev = Ev {
                p,
                params: &[],
                pkt: &[],
                cursor_bits: 0,
            };
            if let Some(cond) = &c.cond {
                if ev.eval(cond, &j.phv) == 0 {
                    continue;
                }
            }
            let calc = &p.calcs[c.calc as usize];
            calc_bytes(p, calc, &j.phv, &j.buf[j.payload_off..], &mut self.scratch);
            let v = run_algo(calc.algo, &self.scratch, &mut self.ext)
                & p.fields[c.target as usize].mask;
            if v != j.phv.vals[c.target as usize] {
                j.phv.set_opt(p, p.std.checksum_error, 1);
            }
        }
    }

    fn update_checksums(&mut self, j: &mut Job) {
        let p = &self.prog;
        for c in p.checksums.iter().filter(|c| c.update) {
            let ev = Ev {
                p,
                params: &[],
                pkt: &[],
                cursor_bits: 0,
            };
            if let Some(cond) = &c.cond {
                if ev.eval(cond, &j.phv) == 0 {
                    continue;
                }
            }
            let calc = &p.calcs[c.calc as usize];
            calc_bytes(p, calc, &j.phv, &j.buf[j.payload_off..], &mut self.scratch);
            let v = run_algo(calc.algo, &self.scratch, &mut self.ext);
            j.phv.set(p, c.target, v);
        }
    }

    fn deparse(&mut self, j: &mut Job) {
        let p = &self.prog;
        j.out.clear();
        for &h in &p.deparser {
            if !j.phv.valid[h as usize] {
                continue;
            }
            let hi = &p.headers[h as usize];
            let start = j.out.len();
            let nbytes = (hi.bits as usize).div_ceil(8);
            let o = j.phv.orig[h as usize] as usize;
            if o != 0 && !self.check_deparse_copy {
                j.out.extend_from_slice(&j.buf[o - 1..o - 1 + nbytes]);
            } else if nbytes <= HDR_PAD_MAX {
                let mut w = [0u8; HDR_PAD_MAX + 16];
                for f in hi.first_field..hi.first_field + hi.num_fields {
                    let fi = &p.fields[f as usize];
                    store_field(&mut w, fi.offset, fi.width, j.phv.vals[f as usize]);
                }
                j.out.extend_from_slice(&w[..nbytes]);
                if o != 0 {
                    assert_eq!(
                        &j.out[start..],
                        &j.buf[o - 1..o - 1 + nbytes],
                        "deparse copy of header {} differs from its fields",
                        hi.name
                    );
                }
                if let Some((slot, _)) = hi.varbit {
                    let l = j.phv.vb_len[slot as usize] as usize;
                    j.out.extend_from_slice(&j.phv.vb[slot as usize][..l]);
                }
            } else {
                j.out.resize(start + nbytes, 0);
                let base = start * 8;
                for f in hi.first_field..hi.first_field + hi.num_fields {
                    let fi = &p.fields[f as usize];
                    set_bits(
                        &mut j.out,
                        base + fi.offset as usize,
                        fi.width,
                        j.phv.vals[f as usize],
                    );
                }
            }
        }
    }

    fn start_pass(&mut self, j: &mut Job, now_ns: u64, keep_fl: Option<u32>) {
        // keep preserved fields (resubmit / recirculate / clone) across the reset
        let p = &self.prog;
        let keep: &[FieldId] = match keep_fl {
            Some(fl) if fl != 0 => p.field_list(fl).unwrap_or(&[]),
            _ => &[],
        };
        let mut saved = [0u128; 64];
        for (i, f) in keep.iter().enumerate().take(64) {
            saved[i] = j.phv.vals[*f as usize];
        }
        j.phv.reset(p);
        for (i, f) in keep.iter().enumerate().take(64) {
            j.phv.vals[*f as usize] = saved[i];
        }
        let s = &p.std;
        j.phv.set_opt(p, s.ingress_port, j.in_port as u128);
        j.phv.set_opt(p, s.instance_type, j.instance_type as u128);
        j.phv.set_opt(p, s.packet_length, j.buf.len() as u128);
        j.phv
            .set_opt(p, s.ingress_global_timestamp, (now_ns / 1000) as u128);
        j.flags = Flags::default();
        j.truncate = None;
    }

    /// Runs the ingress side for `j`; jobs bound for egress (with `egress_port` set) are
    /// appended to `to_egress`.
    pub fn ingress(&mut self, j: Box<Job>, now_ns: u64, to_egress: &mut Vec<Box<Job>>) {
        self.stats.rx += 1;
        self.ingress_keep(j, now_ns, None, to_egress)
    }

    fn ingress_keep(
        &mut self,
        mut j: Box<Job>,
        now_ns: u64,
        keep: Option<u32>,
        to_egress: &mut Vec<Box<Job>>,
    ) {
        let mut keep = keep;
        loop {
            self.start_pass(&mut j, now_ns, keep);
            if self.trace {
                eprintln!(
                    "trace: ingress port {} instance_type {} pass {} ({} bytes)",
                    j.in_port,
                    j.instance_type,
                    j.passes,
                    j.buf.len()
                );
            }
            match self.parse(&mut j) {
                ParseEnd::Accept => {}
                ParseEnd::Reject(code) => {
                    self.stats.parser_errors += 1;
                    if self.trace {
                        eprintln!("trace:   parser error {}", code);
                    }
                    let p = &self.prog;
                    j.phv.set_opt(p, p.std.parser_error, code as u128);
                }
            }
            self.verify_checksums(&mut j);
            let init = self.prog.ingress.init;
            self.run_control(init, &mut j, now_ns);
            let flags = j.flags;
            // I2E clone: the packet as it entered ingress, re-parsed, metadata per field list
            if let Some((session, fl)) = flags.clone {
                if let Some(m) = self.pre.mirrors.get(&session).copied() {
                    let mut c = self.clone_job(&j);
                    c.instance_type = PKT_INGRESS_CLONE;
                    self.start_pass(&mut c, now_ns, None);
                    // copy preserved fields from the original
                    if fl != 0 {
                        if let Some(fs) = self.prog.field_list(fl) {
                            for &f in fs {
                                c.phv.vals[f as usize] = j.phv.vals[f as usize];
                            }
                        }
                    }
                    let _ = self.parse(&mut c);
                    let p = &self.prog;
                    c.phv
                        .set_opt(p, p.std.instance_type, PKT_INGRESS_CLONE as u128);
                    c.truncate = m.truncate;
                    self.emit_clone(c, m, to_egress);
                }
            }
            if let Some(fl) = flags.resubmit {
                if j.passes < self.max_passes {
                    j.passes += 1;
                    j.instance_type = PKT_RESUBMIT;
                    keep = Some(fl);
                    continue;
                }
                self.stats.loops_cut += 1;
            }
            break;
        }
        let p = &self.prog;
        let mgrp = j.phv.get_opt(p.std.mcast_grp) as u32;
        let spec = j.phv.get_opt(p.std.egress_spec) as u32;
        if mgrp != 0 {
            self.reps.clear();
            self.pre.replicas(mgrp, &mut self.reps);
            let reps = std::mem::take(&mut self.reps);
            for &(rid, port) in &reps {
                let mut c = self.clone_job(&j);
                c.egress_port = port;
                c.instance_type = PKT_REPLICATION;
                let p = &self.prog;
                c.phv.set_opt(p, p.std.egress_rid, rid as u128);
                to_egress.push(c);
            }
            self.reps = reps;
            self.recycle(j);
        } else if spec == DROP_PORT {
            self.stats.dropped += 1;
            self.recycle(j);
        } else {
            j.egress_port = spec;
            to_egress.push(j);
        }
    }

    fn emit_clone(&mut self, c: Box<Job>, m: crate::pre::Mirror, to_egress: &mut Vec<Box<Job>>) {
        if let Some(g) = m.mgrp {
            self.reps.clear();
            self.pre.replicas(g, &mut self.reps);
            let reps = std::mem::take(&mut self.reps);
            for &(rid, port) in &reps {
                let mut d = self.clone_job(&c);
                d.egress_port = port;
                let p = &self.prog;
                d.phv.set_opt(p, p.std.egress_rid, rid as u128);
                to_egress.push(d);
            }
            self.reps = reps;
        }
        if let Some(port) = m.port {
            let mut c = c;
            c.egress_port = port;
            to_egress.push(c);
        } else {
            self.recycle(c);
        }
    }

    /// Runs egress for `j` (its `egress_port` chosen). Finished packets go to `tx`
    /// (deparsed headers in `out`), recirculated ones to `recirc`, E2E clones to `to_egress`.
    pub fn egress(
        &mut self,
        mut j: Box<Job>,
        now_ns: u64,
        deq_depth: u32,
        tx: &mut Vec<Box<Job>>,
        recirc: &mut Vec<Box<Job>>,
        to_egress: &mut Vec<Box<Job>>,
    ) {
        {
            let p = &self.prog;
            let s = &p.std;
            j.phv.set_opt(p, s.egress_port, j.egress_port as u128);
            j.phv.set_opt(p, s.egress_spec, 0);
            j.phv.set_opt(p, s.instance_type, j.instance_type as u128);
            j.phv
                .set_opt(p, s.egress_global_timestamp, (now_ns / 1000) as u128);
            j.phv.set_opt(p, s.enq_timestamp, (j.enq_ns / 1000) as u128);
            j.phv.set_opt(p, s.enq_qdepth, j.enq_depth as u128);
            j.phv.set_opt(
                p,
                s.deq_timedelta,
                (now_ns.saturating_sub(j.enq_ns) / 1000) as u128,
            );
            j.phv.set_opt(p, s.deq_qdepth, deq_depth as u128);
            j.phv.set_opt(p, s.packet_length, j.buf.len() as u128);
        }
        let trunc_before = j.truncate;
        j.flags = Flags::default();
        if self.trace {
            eprintln!(
                "trace: egress port {} instance_type {}",
                j.egress_port, j.instance_type
            );
        }
        let init = self.prog.egress.init;
        self.run_control(init, &mut j, now_ns);
        let flags = j.flags;
        if let Some((session, fl)) = flags.clone {
            if let Some(m) = self.pre.mirrors.get(&session).copied() {
                if j.passes < self.max_passes {
                    let mut c = self.clone_job(&j);
                    c.passes += 1;
                    c.instance_type = PKT_EGRESS_CLONE;
                    self.reset_meta_keep(&mut c, fl);
                    c.truncate = m.truncate;
                    self.emit_clone(c, m, to_egress);
                } else {
                    self.stats.loops_cut += 1;
                }
            }
        }
        let p = &self.prog;
        if j.phv.get_opt(p.std.egress_spec) as u32 == DROP_PORT {
            self.stats.dropped += 1;
            self.recycle(j);
            return;
        }
        self.update_checksums(&mut j);
        self.deparse(&mut j);
        if let Some(t) = flags.truncate {
            j.truncate = Some(j.truncate.map(|x| x.min(t)).unwrap_or(t));
        } else {
            j.truncate = trunc_before;
        }
        if let Some(fl) = flags.recirc {
            if j.passes < self.max_passes {
                self.stats.recirculations += 1;
                // the deparsed packet becomes the new input
                let mut n = self.job();
                n.buf.clear();
                n.buf.extend_from_slice(&j.out);
                n.buf.extend_from_slice(&j.buf[j.payload_off..]);
                if let Some(t) = j.truncate {
                    n.buf.truncate(t);
                }
                n.phv.copy_from(&j.phv);
                n.in_port = j.in_port;
                n.passes = j.passes + 1;
                n.instance_type = PKT_RECIRC;
                n.vnet = j.vnet;
                n.truncate = None;
                n.flags = Flags {
                    recirc: Some(fl),
                    ..Flags::default()
                };
                self.recycle(j);
                recirc.push(n);
                return;
            }
            self.stats.loops_cut += 1;
        }
        self.stats.tx += 1;
        tx.push(j);
    }

    /// Re-enters a recirculated job into ingress, preserving its field list.
    pub fn ingress_recirc(&mut self, mut j: Box<Job>, now_ns: u64, to_egress: &mut Vec<Box<Job>>) {
        let fl = j.flags.recirc.unwrap_or(0);
        j.flags = Flags::default();
        self.ingress_keep(j, now_ns, Some(fl), to_egress);
    }
}

/// Primitives that need neither tables nor externs (usable inside the parser).
fn exec_prim_simple(p: &Program, phv: &mut Phv, ev: &Ev, prim: &Prim, flags: &mut Flags) -> bool {
    match prim {
        Prim::Assign(l, e) => {
            let v = ev.eval(e, phv);
            lv_set(p, phv, ev, l, v);
        }
        Prim::AssignHeader(d, s) => {
            if let (Some(d), Some(s)) =
                (resolve_header(p, phv, ev, d), resolve_header(p, phv, ev, s))
            {
                copy_header(p, phv, d, s);
            }
        }
        Prim::SetValid(h) => {
            if let Some(h) = resolve_header(p, phv, ev, h) {
                set_header_valid(p, phv, h, true);
            }
        }
        Prim::SetInvalid(h) => {
            if let Some(h) = resolve_header(p, phv, ev, h) {
                set_header_valid(p, phv, h, false);
            }
        }
        Prim::MarkToDrop => {
            phv.set_opt(p, p.std.egress_spec, DROP_PORT as u128);
            phv.set_opt(p, p.std.mcast_grp, 0);
        }
        Prim::Exit => {
            flags.exit = true;
            return false;
        }
        Prim::AssignVL(d, s) => copy_varbit(phv, *d as usize, *s as usize),
        Prim::AssignUnion(d, s) => {
            let (dm, sm) = (&p.unions[*d as usize].1, &p.unions[*s as usize].1);
            for (a, b) in dm.iter().zip(sm.iter()) {
                copy_header(p, phv, *a, *b);
            }
        }
        Prim::AssignStack(d, s) => {
            let dh = &p.stacks[*d as usize].headers;
            let sh = &p.stacks[*s as usize].headers;
            for (a, b) in dh.iter().zip(sh.iter()) {
                copy_header(p, phv, *a, *b);
            }
            phv.stack_next[*d as usize] = phv.stack_next[*s as usize].min(dh.len() as u32);
        }
        Prim::Push(s, n) => {
            let hs = &p.stacks[*s as usize].headers;
            let n = *n as usize;
            for i in (0..hs.len()).rev() {
                if i >= n {
                    copy_header(p, phv, hs[i], hs[i - n]);
                } else {
                    phv.valid[hs[i] as usize] = false;
                }
            }
            let nx = &mut phv.stack_next[*s as usize];
            *nx = (*nx as usize + n).min(hs.len()) as u32;
        }
        Prim::Pop(s, n) => {
            let hs = &p.stacks[*s as usize].headers;
            let n = *n as usize;
            for i in 0..hs.len() {
                if i + n < hs.len() {
                    copy_header(p, phv, hs[i], hs[i + n]);
                } else {
                    phv.valid[hs[i] as usize] = false;
                }
            }
            let nx = &mut phv.stack_next[*s as usize];
            *nx = nx.saturating_sub(n as u32);
        }
        _ => {}
    }
    true
}

fn extract(p: &Program, phv: &mut Phv, pkt: &[u8], cursor: usize, h: HeaderId) -> Option<usize> {
    let hi = &p.headers[h as usize];
    let n = (hi.bits as usize).div_ceil(8);
    if cursor + n > pkt.len() {
        return None;
    }
    if cursor + n + 16 <= pkt.len() {
        // enough bytes behind the header for every field's 8/16-byte load
        let w = &pkt[cursor..];
        for f in hi.first_field..hi.first_field + hi.num_fields {
            let fi = &p.fields[f as usize];
            phv.vals[f as usize] = load_field(w, fi.offset, fi.width);
        }
    } else if n <= HDR_PAD_MAX {
        // copy into a zero-padded window so every field is one unaligned big-endian load
        let mut w = [0u8; HDR_PAD_MAX + 16];
        w[..n].copy_from_slice(&pkt[cursor..cursor + n]);
        for f in hi.first_field..hi.first_field + hi.num_fields {
            let fi = &p.fields[f as usize];
            phv.vals[f as usize] = load_field(&w, fi.offset, fi.width);
        }
    } else {
        let base = cursor * 8;
        for f in hi.first_field..hi.first_field + hi.num_fields {
            let fi = &p.fields[f as usize];
            phv.vals[f as usize] = get_bits(pkt, base + fi.offset as usize, fi.width);
        }
    }
    phv.valid[h as usize] = true;
    // whole-byte fixed-size headers can be deparsed by copying these bytes back
    phv.orig[h as usize] = if hi.bits.is_multiple_of(8) && hi.varbit.is_none() {
        (cursor + 1) as u32
    } else {
        0
    };
    union_exclusive(p, phv, h);
    // extracting hs[i] directly also moves nextIndex past i (as extract(hs.next) would)
    if let Some((s, i)) = hi.stack_of {
        let nx = &mut phv.stack_next[s as usize];
        *nx = (*nx).max(i + 1);
    }
    Some(n)
}

const HDR_PAD_MAX: usize = 64;

#[inline(always)]
fn load_field(w: &[u8], off: u32, width: u32) -> u128 {
    let bs = (off / 8) as usize;
    let bit = off % 8;
    if bit + width <= 64 {
        let v = u64::from_be_bytes(w[bs..bs + 8].try_into().unwrap());
        if width == 0 {
            return 0;
        }
        ((v >> (64 - bit - width)) & (u64::MAX >> (64 - width))) as u128
    } else if bit + width <= 128 {
        let v = u128::from_be_bytes(w[bs..bs + 16].try_into().unwrap());
        (v >> (128 - bit - width)) & width_mask(width)
    } else {
        get_bits(w, off as usize, width)
    }
}

#[inline(always)]
fn store_field(w: &mut [u8], off: u32, width: u32, val: u128) {
    let bs = (off / 8) as usize;
    let bit = off % 8;
    if width == 0 {
        return;
    }
    if bit + width <= 64 {
        let mut v = u64::from_be_bytes(w[bs..bs + 8].try_into().unwrap());
        v |= ((val as u64) & (u64::MAX >> (64 - width))) << (64 - bit - width);
        w[bs..bs + 8].copy_from_slice(&v.to_be_bytes());
    } else if bit + width <= 128 {
        let mut v = u128::from_be_bytes(w[bs..bs + 16].try_into().unwrap());
        v |= (val & width_mask(width)) << (128 - bit - width);
        w[bs..bs + 16].copy_from_slice(&v.to_be_bytes());
    } else {
        set_bits(w, off as usize, width, val);
    }
}

#[allow(clippy::too_many_arguments)]
fn exec_action(
    p: &Program,
    ext: &mut Externs,
    digests: &mut Vec<Digest>,
    j: &mut Job,
    aid: u32,
    params: &[u128],
    now_ns: u64,
    scratch: &mut Vec<u8>,
) {
    let prims = &p.actions[aid as usize].prims;
    let mut pc = 0usize;
    let pkt_len = j.buf.len();
    let mut steps = 0;
    while pc < prims.len() {
        steps += 1;
        if steps > 100_000 {
            return;
        }
        let ev = Ev {
            p,
            params,
            pkt: &[],
            cursor_bits: 0,
        };
        let phv = &mut j.phv;
        match &prims[pc] {
            Prim::Jump(t) => {
                pc = *t as usize;
                continue;
            }
            Prim::JumpIfZero(e, t) => {
                if ev.eval(e, phv) == 0 {
                    pc = *t as usize;
                    continue;
                }
            }
            Prim::CloneI2E(s, fl) | Prim::CloneE2E(s, fl) => {
                j.flags.clone = Some((ev.eval(s, phv) as u32, ev.eval(fl, phv) as u32));
            }
            Prim::Recirculate(fl) => j.flags.recirc = Some(ev.eval(fl, phv) as u32),
            Prim::Resubmit(fl) => j.flags.resubmit = Some(ev.eval(fl, phv) as u32),
            Prim::Truncate(n) => j.flags.truncate = Some(ev.eval(n, phv) as usize),
            Prim::Count(c, idx) => {
                let i = ev.eval(idx, phv) as usize;
                let c = &mut ext.counters[*c as usize];
                if i < c.packets.len() {
                    c.packets[i] += 1;
                    c.bytes[i] += pkt_len as u64;
                }
            }
            Prim::ExecuteMeter(m, idx, dst) => {
                let i = ev.eval(idx, phv) as usize;
                let meter = &mut ext.meters[*m as usize];
                let amount = if meter.bytes { pkt_len as f64 } else { 1.0 };
                let color = match meter.cells.get_mut(i) {
                    Some(c) => c.execute(now_ns as f64 / 1000.0, amount),
                    None => 0,
                };
                lv_set(p, phv, &ev, dst, color);
            }
            Prim::RegisterRead(dst, r, idx) => {
                let i = ev.eval(idx, phv) as usize;
                let v = ext.registers[*r as usize].vals.get(i).copied().unwrap_or(0);
                lv_set(p, phv, &ev, dst, v);
            }
            Prim::RegisterWrite(r, idx, val) => {
                let i = ev.eval(idx, phv) as usize;
                let v = ev.eval(val, phv);
                ext.register_write(*r as usize, i, v);
            }
            Prim::Hash(dst, base, calc, max) => {
                let c = &p.calcs[*calc as usize];
                calc_bytes(p, c, phv, &[], scratch);
                let h = run_algo(c.algo, scratch, ext);
                let b = ev.eval(base, phv);
                let m = ev.eval(max, phv);
                let v = if m == 0 {
                    b.wrapping_add(h)
                } else {
                    b.wrapping_add(h % m)
                };
                lv_set(p, phv, &ev, dst, v);
            }
            Prim::Random(dst, lo, hi) => {
                let lo = ev.eval(lo, phv);
                let hi = ev.eval(hi, phv);
                let r = ext.random() as u128;
                let v = if hi >= lo {
                    lo + r % (hi - lo + 1).max(1)
                } else {
                    lo
                };
                lv_set(p, phv, &ev, dst, v);
            }
            Prim::Digest(recv, list) => {
                if digests.len() < 4096 {
                    let receiver = ev.eval(recv, phv);
                    if let Some((_, ll)) = p.learn_lists.iter().find(|(i, _)| i == list) {
                        let values = ll.fields.iter().map(|&f| phv.vals[f as usize]).collect();
                        digests.push(Digest {
                            list: *list,
                            receiver,
                            values,
                        });
                    }
                }
            }
            other => {
                if !exec_prim_simple(p, phv, &ev, other, &mut j.flags) {
                    return;
                }
            }
        }
        pc += 1;
    }
}
