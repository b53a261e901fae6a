//! Compiles a program into an XDP program for one ingress port, or says why it cannot.
//!
//! The subset: a loop-free parser extracting fixed-size, byte-aligned headers; exact and
//! lpm tables (at most one lpm key, last in byte order) without counters, meters or
//! action profiles; actions of assignments, mark_to_drop, exit, p4c's jumps and header
//! validity changes; csum16 checksum updates over fields and constants (verification only
//! when the program does not read checksum_error, its sole effect); no clones,
//! recirculation, registers, digests or reads of timestamps and queue metadata; fields of
//! at most 64 bits wherever used.
//!
//! Header validity changes run in the PHV (setValid zeroes a header that was invalid, as
//! the engine does); the packet is written in place, so it leaves here only when every
//! header whose validity an action changes ends as the parser found it (a VLAN tag
//! pushed on ingress and popped on egress: the frame leaves as long as it came). A
//! packet that would grow or shrink punts at the deparser, before anything is written.
//!
//! Values are 64-bit. A u64 result equals the engine's u128 result whenever it is
//! "exact" (non-negative and below 2^64, see `exact`); arithmetic is right modulo 2^64.
//! Comparisons, shifts right, division and truth tests need exact operands, so
//! assignments (masked to the field width) always agree with the engine.
//!
//! Registers: R6 = xdp_md, R7 = packet start, R8 = packet end, R9 = the per-CPU
//! scratch area ("PHV": one u64 per field, then per header its validity and offset,
//! then the fast path's counters). Anything the fast path does not finish (parser
//! errors, multicast, the CPU port, an egress port without a device) goes to the
//! port's AF_XDP socket untouched, where the full engine runs it: the fast path has
//! no side effects before that decision.

use super::asm::*;
use crate::exec::DROP_PORT;
use crate::pipeline::{
    Algo, BinOp, CalcInput, Expr, HeaderRef, KeySrc, LValue, Layout, MatchKind, Node, ParserOp,
    Prim, Program, TableDef, UnOp, NO_ACTION,
};
use std::collections::HashMap;

// stack slots (offsets from the frame pointer)
const CURSOR: i16 = -8;
const VALPTR: i16 = -16;
/// whether the table just applied hit (only for tables that branch on hit/miss)
const HIT: i16 = -24;
const KEY32: i16 = -32;
const TMP0: i16 = -40;
const TMP_SLOTS: usize = 24;
/// table key buffer: an LPM key's u32 prefix length, then up to 256 key bytes
const KEYBUF: i16 = -496;
const KEYBUF_MAX: u32 = 4 + 256;

// the shaper's values, in expression temporaries' slots (no expression runs after it)
const SH_PTR: i16 = TMP0;
const SH_NOW: i16 = TMP0 - 8;
const SH_START: i16 = TMP0 - 16;
const SH_LEN: i16 = TMP0 - 24;
const SH_SER: i16 = TMP0 - 32;

/// a header offset past any the deparser accepts (0x3fff): the header was not extracted
const NOT_EXTRACTED: i32 = 0xffff;

const XDP_DROP: i32 = 1;
const XDP_PASS: i32 = 2;

/// Counters kept in the PHV area after the per-header slots (per CPU).
pub const COUNTERS: [&str; 3] = ["forwarded", "dropped", "punted"];

/// Where things live in the per-CPU scratch area.
#[derive(Clone, Debug)]
pub struct PhvLayout {
    pub nfields: usize,
    pub nheaders: usize,
}
impl PhvLayout {
    pub fn field(&self, f: u32) -> i16 {
        (8 * f as usize) as i16
    }
    pub fn valid(&self, h: u32) -> i16 {
        (8 * (self.nfields + h as usize)) as i16
    }
    pub fn hdr_off(&self, h: u32) -> i16 {
        (8 * (self.nfields + self.nheaders + h as usize)) as i16
    }
    pub fn counter(&self, i: usize) -> i16 {
        (8 * (self.nfields + 2 * self.nheaders + i)) as i16
    }
    pub fn size(&self) -> u32 {
        (8 * (self.nfields + 2 * self.nheaders + COUNTERS.len())) as u32
    }
}

/// Byte layout of a table's BPF map key: exact keys in order, then the lpm key; an lpm
/// table's key starts with the u32 prefix length the kernel's LPM trie expects.
#[derive(Clone, Debug)]
pub struct KeyLayout {
    pub lpm: bool,
    /// (index into the table's keys, bytes)
    pub parts: Vec<(usize, u32)>,
    pub size: u32,
}

pub fn key_layout(t: &TableDef) -> Result<Option<KeyLayout>, String> {
    let lpm_pos = match t.layout {
        Layout::Keyless => return Ok(None),
        Layout::Exact => None,
        Layout::Lpm(i) => Some(i),
        Layout::Generic => return Err(format!("table {}: ternary/range/optional match", t.name)),
    };
    let mut parts = Vec::new();
    for (i, k) in t.keys.iter().enumerate() {
        if k.width > 64 {
            return Err(format!(
                "table {}: key {} wider than 64 bits",
                t.name, k.name
            ));
        }
        if Some(i) != lpm_pos {
            parts.push((i, k.width.div_ceil(8).max(1)));
        }
    }
    if let Some(i) = lpm_pos {
        if !t.keys[i].width.is_multiple_of(8) || t.keys[i].kind != MatchKind::Lpm {
            return Err(format!(
                "table {}: lpm key {} is not whole bytes",
                t.name, t.keys[i].name
            ));
        }
        parts.push((i, t.keys[i].width / 8));
    }
    let size = parts.iter().map(|p| p.1).sum::<u32>() + if lpm_pos.is_some() { 4 } else { 0 };
    if size > KEYBUF_MAX {
        return Err(format!("table {}: key too long", t.name));
    }
    Ok(Some(KeyLayout {
        lpm: lpm_pos.is_some(),
        parts,
        size,
    }))
}

/// Number of action parameters a table's map value holds (value = u32 action, u32 pad,
/// then one u64 per parameter).
pub fn value_params(p: &Program, t: &TableDef) -> usize {
    t.action_ids
        .iter()
        .chain(std::iter::once(&t.default_action))
        .filter_map(|&a| p.actions.get(a as usize))
        .map(|a| a.params.len())
        .max()
        .unwrap_or(0)
}

/// BPF map fds the program refers to.
pub struct MapFds {
    pub phv: i32,
    pub ctl: i32,
    pub defaults: i32,
    /// per table: its entries map (None for keyless tables)
    pub tables: Vec<Option<i32>>,
    pub devmap: i32,
    pub xskmap: i32,
    /// per-port link clocks and modes (shaper.rs)
    pub shaper: i32,
}

/// Checks that the program is in the fast path's subset (Err = the first reason it is
/// not) by compiling it without maps.
pub fn check(p: &Program) -> Result<(), String> {
    generate(p, 0, None, None).map(|_| ())
}

/// Builds the XDP program for packets arriving on `port`.
pub fn compile(
    p: &Program,
    port: u32,
    cpu_port: Option<u32>,
    maps: &MapFds,
) -> Result<Vec<u64>, String> {
    generate(p, port, cpu_port, Some(maps))
}

fn generate(
    p: &Program,
    port: u32,
    cpu_port: Option<u32>,
    maps: Option<&MapFds>,
) -> Result<Vec<u64>, String> {
    let mut g = Gen::new(p, port, cpu_port, maps)?;
    g.program()?;
    g.a.finish()
}

struct Gen<'a> {
    p: &'a Program,
    a: Asm,
    port: u32,
    cpu_port: Option<u32>,
    maps: Option<&'a MapFds>,
    lay: PhvLayout,
    used: Vec<bool>,
    written: Vec<bool>,
    /// per header: some action run here makes it valid or invalid (`toggles_in_place`)
    toggled: Vec<bool>,
    punt: Label,
    drop: Label,
    node_labels: HashMap<Node, Label>,
    pending: Vec<Node>,
    /// end of the control being generated (exit jumps there)
    control_end: Option<Label>,
}

fn unsupported<T>(what: impl Into<String>) -> Result<T, String> {
    Err(what.into())
}

/// True when the u64 evaluation of `e` equals the engine's u128 value (see module doc).
fn exact(e: &Expr) -> bool {
    match e {
        Expr::Const(c) => *c <= u64::MAX as u128,
        Expr::Field(_) | Expr::Param(_) | Expr::Valid(_) => true,
        Expr::Un(UnOp::Not | UnOp::D2B, _) => true,
        Expr::Un(UnOp::B2D, a) => exact(a),
        Expr::Un(..) => false,
        Expr::Bin(op, a, b) => match op {
            BinOp::Eq
            | BinOp::Ne
            | BinOp::Gt
            | BinOp::Ge
            | BinOp::Lt
            | BinOp::Le
            | BinOp::And
            | BinOp::Or => true,
            BinOp::BitAnd => exact(a) || exact(b),
            BinOp::BitOr | BinOp::BitXor | BinOp::Shr | BinOp::Div | BinOp::Mod => {
                exact(a) && exact(b)
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Shl => false,
        },
        Expr::Cond(_, a, b) => exact(a) && exact(b),
        _ => false,
    }
}

fn need_exact(e: &Expr) -> Result<(), String> {
    if exact(e) {
        Ok(())
    } else {
        unsupported("an expression whose value may exceed 64 bits or be negative is compared, shifted right, divided or tested")
    }
}

fn mask64(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

impl<'a> Gen<'a> {
    fn new(
        p: &'a Program,
        port: u32,
        cpu_port: Option<u32>,
        maps: Option<&'a MapFds>,
    ) -> Result<Gen<'a>, String> {
        let mut a = Asm::default();
        let punt = a.label();
        let drop = a.label();
        let mut g = Gen {
            p,
            a,
            port,
            cpu_port,
            maps,
            lay: PhvLayout {
                nfields: p.fields.len(),
                nheaders: p.headers.len(),
            },
            used: vec![false; p.fields.len()],
            written: vec![false; p.fields.len()],
            toggled: vec![false; p.headers.len()],
            punt,
            drop,
            node_labels: HashMap::new(),
            pending: Vec::new(),
            control_end: None,
        };
        g.analyse()?;
        Ok(g)
    }

    // ------------------------------------------------------------------ analysis

    fn analyse(&mut self) -> Result<(), String> {
        let p = self.p;
        if p.std.egress_spec.is_none() || p.std.egress_port.is_none() {
            return unsupported("no v1model standard_metadata");
        }
        if self.lay.size() > 32 * 1024 {
            return unsupported("too many fields");
        }
        let s = &p.std;
        for f in [
            s.ingress_port,
            s.egress_spec,
            s.egress_port,
            s.instance_type,
            s.packet_length,
            s.mcast_grp,
        ]
        .into_iter()
        .flatten()
        {
            self.used[f as usize] = true;
        }
        // parser: loop-free, and every path extracts headers in deparser order
        self.parser_paths()?;
        for st in &p.parser.states {
            for op in &st.ops {
                match op {
                    ParserOp::Extract(HeaderRef::Fixed(h)) => {
                        let hi = &p.headers[*h as usize];
                        if hi.metadata
                            || hi.varbit.is_some()
                            || !hi.bits.is_multiple_of(8)
                            || hi.stack_of.is_some()
                            || hi.union.is_some()
                        {
                            return unsupported(format!(
                                "header {}: varbit, stack, union or not whole bytes",
                                hi.name
                            ));
                        }
                    }
                    ParserOp::Set(l, e) => self.scan_assign(l, e)?,
                    ParserOp::Verify(c, e) => {
                        need_exact(c)?;
                        self.scan_expr(c)?;
                        self.scan_expr(e)?;
                    }
                    ParserOp::Prim(Prim::Assign(l, e)) => self.scan_assign(l, e)?,
                    _ => {
                        return unsupported(format!(
                            "parser state {}: operation outside the subset",
                            st.name
                        ))
                    }
                }
            }
            for (e, _) in &st.key {
                self.scan_expr(e)?;
            }
            let kbits: u32 = st.key.iter().map(|(_, w)| w.div_ceil(8) * 8).sum();
            if kbits > 64 {
                return unsupported(format!(
                    "parser state {}: select key wider than 64 bits",
                    st.name
                ));
            }
            if st.transitions.iter().any(|t| t.vset.is_some()) {
                return unsupported("parser value sets");
            }
        }
        for c in &p.conds {
            need_exact(&c.expr)?;
            self.scan_expr(&c.expr)?;
        }
        for t in &p.tables {
            if t.with_counters || t.direct_meter.is_some() || t.profile.is_some() {
                return unsupported(format!(
                    "table {}: counters, meters or action profile",
                    t.name
                ));
            }
            key_layout(t)?;
            for k in &t.keys {
                if let KeySrc::Field(f) = k.src {
                    self.used[f as usize] = true;
                }
            }
            for &aid in t
                .action_ids
                .iter()
                .chain(std::iter::once(&t.default_action))
            {
                if let Some(act) = p.actions.get(aid as usize) {
                    if changes_length(act) && !toggles_in_place(p, act) {
                        continue; // the action punts (`action`): nothing of it runs here
                    }
                    for (i, prim) in act.prims.iter().enumerate() {
                        match prim {
                            Prim::Assign(l, e) => self.scan_assign(l, e)?,
                            Prim::SetValid(HeaderRef::Fixed(h)) => {
                                // zeroed when it was invalid: every field may change
                                self.toggled[*h as usize] = true;
                                let hi = &p.headers[*h as usize];
                                for f in hi.first_field..hi.first_field + hi.num_fields {
                                    self.written[f as usize] = true;
                                    self.used[f as usize] = true;
                                }
                            }
                            Prim::SetInvalid(HeaderRef::Fixed(h)) => {
                                self.toggled[*h as usize] = true
                            }
                            Prim::MarkToDrop | Prim::Exit | Prim::Nop => {}
                            Prim::Jump(t) => {
                                if (*t as usize) <= i {
                                    return unsupported(format!(
                                        "action {}: backward jump",
                                        act.name
                                    ));
                                }
                            }
                            Prim::JumpIfZero(e, t) => {
                                if (*t as usize) <= i {
                                    return unsupported(format!(
                                        "action {}: backward jump",
                                        act.name
                                    ));
                                }
                                need_exact(e)?;
                                self.scan_expr(e)?;
                            }
                            _ => {
                                return unsupported(format!(
                                    "action {}: primitive outside the subset",
                                    act.name
                                ))
                            }
                        }
                    }
                }
            }
        }
        for c in p.checksums.iter().filter(|c| c.update) {
            let calc = &p.calcs[c.calc as usize];
            if calc.algo != Algo::Csum16 {
                return unsupported(format!("checksum {}: only csum16 updates", c.name));
            }
            for inp in &calc.inputs {
                match inp {
                    CalcInput::Field(f) => self.used[*f as usize] = true,
                    CalcInput::Const(v, w) if *v <= u64::MAX as u128 && *w <= 64 => {}
                    _ => {
                        return unsupported(format!(
                            "checksum {}: inputs other than fields and constants",
                            c.name
                        ))
                    }
                }
            }
            if let Some(e) = &c.cond {
                need_exact(e)?;
                self.scan_expr(e)?;
            }
            self.written[c.target as usize] = true;
            self.used[c.target as usize] = true;
        }
        // metadata the fast path cannot provide
        if p.checksums.iter().any(|c| c.verify) {
            if let Some(f) = s.checksum_error {
                if self.reads(f) {
                    return unsupported(
                        "reads standard_metadata.checksum_error (checksum verification)",
                    );
                }
            }
        }
        for f in [
            s.ingress_global_timestamp,
            s.egress_global_timestamp,
            s.enq_timestamp,
            s.enq_qdepth,
            s.deq_timedelta,
            s.deq_qdepth,
        ]
        .into_iter()
        .flatten()
        {
            if self.reads(f) {
                return unsupported(format!("reads {}", p.fields[f as usize].name));
            }
        }
        for (f, fi) in p.fields.iter().enumerate() {
            if (self.used[f] || self.written[f]) && fi.width > 64 {
                return unsupported(format!("field {} wider than 64 bits", fi.name));
            }
        }
        Ok(())
    }

    /// Whether the program reads field `f` (std fields the fast path itself sets are
    /// marked used up front, so this only finds the program's own reads of the others).
    fn reads(&self, f: u32) -> bool {
        self.used[f as usize]
    }

    fn scan_assign(&mut self, l: &LValue, e: &Expr) -> Result<(), String> {
        match l {
            LValue::Field(f) => {
                self.written[*f as usize] = true;
                self.used[*f as usize] = true;
            }
            _ => return unsupported("assignment to a header stack element"),
        }
        self.scan_expr(e)
    }

    fn scan_expr(&mut self, e: &Expr) -> Result<(), String> {
        match e {
            Expr::Const(c) => {
                if *c > u64::MAX as u128 {
                    return unsupported("constant wider than 64 bits");
                }
            }
            Expr::Field(f) => self.used[*f as usize] = true,
            Expr::Param(_) | Expr::Valid(_) => {}
            Expr::Un(op, a) => {
                if matches!(op, UnOp::Not | UnOp::D2B) {
                    need_exact(a)?;
                }
                self.scan_expr(a)?;
            }
            Expr::Bin(op, a, b) => {
                match op {
                    BinOp::Eq
                    | BinOp::Ne
                    | BinOp::Gt
                    | BinOp::Ge
                    | BinOp::Lt
                    | BinOp::Le
                    | BinOp::And
                    | BinOp::Or
                    | BinOp::Shr
                    | BinOp::Div
                    | BinOp::Mod => {
                        need_exact(a)?;
                        need_exact(b)?;
                    }
                    BinOp::Shl => need_exact(b)?,
                    _ => {}
                }
                self.scan_expr(a)?;
                self.scan_expr(b)?;
            }
            Expr::Cond(c, a, b) => {
                need_exact(c)?;
                self.scan_expr(c)?;
                self.scan_expr(a)?;
                self.scan_expr(b)?;
            }
            Expr::Trunc(a, _) => self.scan_expr(a)?,
            _ => {
                return unsupported(
                    "expression outside the subset (signed, stack, lookahead or saturating)",
                )
            }
        }
        Ok(())
    }

    /// Walks every parser path: no loops, no header extracted twice, and the extraction
    /// order is the deparser's (so writing fields back in place deparses the packet).
    fn parser_paths(&self) -> Result<(), String> {
        let p = self.p;
        let rank: HashMap<u32, usize> = p
            .deparser
            .iter()
            .enumerate()
            .map(|(i, &h)| (h, i))
            .collect();
        let mut paths = 0usize;
        let mut stack: Vec<(Option<u32>, Vec<u32>, Vec<u32>)> =
            vec![(p.parser.init, vec![], vec![])];
        while let Some((state, seen_states, hdrs)) = stack.pop() {
            let s = match state {
                None => {
                    paths += 1;
                    if paths > 4096 {
                        return unsupported("too many parser paths");
                    }
                    continue;
                }
                Some(s) => s,
            };
            if seen_states.contains(&s) {
                return unsupported("parser loop");
            }
            let st = &p.parser.states[s as usize];
            let mut hdrs = hdrs;
            let mut punts = false;
            for op in &st.ops {
                if let ParserOp::Extract(HeaderRef::Fixed(h)) = op {
                    let r = match rank.get(h) {
                        Some(&r) => r,
                        None => {
                            // a header the deparser drops (a controller's packet-out header,
                            // extracted on the CPU port only) would need the packet cut:
                            // the path punts there (`extract`), so it ends here
                            punts = true;
                            break;
                        }
                    };
                    if let Some(&last) = hdrs.last() {
                        if rank[&last] >= r {
                            return unsupported("parser extracts headers out of deparser order");
                        }
                    }
                    hdrs.push(*h);
                }
            }
            let mut seen = seen_states.clone();
            seen.push(s);
            if punts || st.transitions.is_empty() {
                stack.push((None, seen, hdrs));
            } else {
                for t in &st.transitions {
                    stack.push((t.next, seen.clone(), hdrs.clone()));
                }
            }
        }
        Ok(())
    }

    // ------------------------------------------------------------------ code

    fn map(&self, which: impl Fn(&MapFds) -> i32) -> i32 {
        self.maps.map(which).unwrap_or(-1)
    }

    /// R0 = bpf_map_lookup_elem(map, fp + key) (NULL when absent).
    fn map_lookup(&mut self, map_fd: i32, key: i16) {
        self.a.ld_map(R1, map_fd);
        self.a.mov(R2, FP);
        self.a.alu_imm(ADD, R2, key as i32);
        self.a.call(MAP_LOOKUP_ELEM);
    }

    fn count(&mut self, i: usize) {
        let off = self.lay.counter(i);
        self.a.ldx(DW, R1, R9, off);
        self.a.alu_imm(ADD, R1, 1);
        self.a.stx(DW, R9, off, R1);
    }

    fn set_std(&mut self, f: Option<u32>, v: i32) {
        if let Some(f) = f {
            let off = self.lay.field(f);
            self.a.st_imm(DW, R9, off, v);
        }
    }

    fn program(&mut self) -> Result<(), String> {
        let p = self.p;
        let punt_uncounted = self.a.label();
        // r6 = ctx, r7 = data, r8 = data_end
        self.a.mov(R6, R1);
        self.a.ldx(W, R7, R6, 0);
        self.a.ldx(W, R8, R6, 4);
        // the fast path is switched on/off through ctl[0]
        self.a.st_imm(W, FP, KEY32, 0);
        let ctl = self.map(|m| m.ctl);
        self.map_lookup(ctl, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, punt_uncounted);
        self.a.ldx(W, R0, R0, 0);
        self.a.jcc_imm(JEQ, R0, 0, punt_uncounted);
        // r9 = this CPU's scratch area
        let phv = self.map(|m| m.phv);
        self.map_lookup(phv, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, punt_uncounted);
        self.a.mov(R9, R0);
        // a port whose ingress is impaired: the engine holds its packets before ingress
        self.a.st_imm(W, FP, KEY32, self.port as i32);
        let shaper = self.map(|m| m.shaper);
        self.map_lookup(shaper, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, self.punt);
        self.a.ldx(DW, R1, R0, super::shaper::IN_ENGINE);
        self.a.jcc_imm(JNE, R1, 0, self.punt);
        // a fresh PHV: used fields 0, headers invalid (metadata valid)
        for f in 0..p.fields.len() {
            if self.used[f] || self.written[f] {
                let off = self.lay.field(f as u32);
                self.a.st_imm(DW, R9, off, 0);
            }
        }
        for (h, hi) in p.headers.iter().enumerate() {
            let off = self.lay.valid(h as u32);
            self.a.st_imm(DW, R9, off, hi.metadata as i32);
            if self.toggled[h] {
                // "not extracted" (the parser stores the offset of what it extracts): the
                // deparser compares the header's end validity with it
                self.a
                    .st_imm(DW, R9, self.lay.hdr_off(h as u32), NOT_EXTRACTED);
            }
        }
        self.set_std(p.std.ingress_port, self.port as i32);
        if let Some(f) = p.std.packet_length {
            self.a.mov(R0, R8);
            self.a.alu_reg(SUB, R0, R7);
            let off = self.lay.field(f);
            self.a.stx(DW, R9, off, R0);
        }
        self.a.st_imm(DW, FP, CURSOR, 0);
        self.parser()?;
        // ingress
        self.control(p.ingress.init)?;
        if let Some(f) = p.std.mcast_grp {
            self.a.ldx(DW, R0, R9, self.lay.field(f));
            self.a.jcc_imm(JNE, R0, 0, self.punt);
        }
        let spec = p.std.egress_spec.unwrap();
        let eport = p.std.egress_port.unwrap();
        self.a.ldx(DW, R0, R9, self.lay.field(spec));
        self.a.jcc_imm(JEQ, R0, DROP_PORT as i32, self.drop);
        self.a.stx(DW, R9, self.lay.field(eport), R0);
        self.set_std(Some(spec), 0);
        // egress
        self.control(p.egress.init)?;
        self.a.ldx(DW, R0, R9, self.lay.field(spec));
        self.a.jcc_imm(JEQ, R0, DROP_PORT as i32, self.drop);
        self.update_checksums()?;
        // the egress port must have a device in the devmap (else: the engine decides)
        self.a.ldx(DW, R0, R9, self.lay.field(eport));
        if let Some(c) = self.cpu_port {
            self.a.jcc_imm(JEQ, R0, c as i32, self.punt);
        }
        self.a.stx(W, FP, KEY32, R0);
        let devmap = self.map(|m| m.devmap);
        self.map_lookup(devmap, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, self.punt);
        self.deparse(0)?;
        self.shaper()?;
        self.deparse(1)?;
        self.count(0);
        self.a.ld_map(R1, devmap);
        self.a.ldx(DW, R2, R9, self.lay.field(eport));
        self.a.mov_imm(R3, 0);
        self.a.call(REDIRECT_MAP);
        self.a.exit();
        // drop
        self.a.bind(self.drop);
        self.count(1);
        self.a.mov_imm(R0, XDP_DROP);
        self.a.exit();
        // punt: to this port's AF_XDP socket (XDP_PASS if it has none)
        self.a.bind(self.punt);
        self.count(2);
        self.a.bind(punt_uncounted);
        let xsk = self.map(|m| m.xskmap);
        self.a.ld_map(R1, xsk);
        self.a.mov_imm(R2, self.port as i32);
        self.a.mov_imm(R3, XDP_PASS);
        self.a.call(REDIRECT_MAP);
        self.a.exit();
        Ok(())
    }

    // ------------------------------------------------------------------ shaper

    /// The egress port's token bucket (shaper.rs): a free port forwards; an engine-only
    /// port punts; a shaped port claims its slot (`impair::gcra`) and forwards when the
    /// bucket lets it leave now and the engine holds nothing for the port, else punts
    /// with the slot in the XDP metadata.
    /// Runs after every other reason to punt was checked, and before the packet changes.
    fn shaper(&mut self) -> Result<(), String> {
        use super::shaper::*;
        let eport = self.lay.field(self.p.std.egress_port.unwrap());
        let (go, slotted, lost_race) = (self.a.label(), self.a.label(), self.a.label());
        self.a.ldx(DW, R0, R9, eport);
        self.a.stx(W, FP, KEY32, R0);
        let shaper = self.map(|m| m.shaper);
        self.map_lookup(shaper, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, self.punt);
        self.a.stx(DW, FP, SH_PTR, R0);
        self.a.ldx(DW, R1, R0, MODE);
        self.a.jcc_imm(JEQ, R1, FREE as i32, go);
        self.a.jcc_imm(JNE, R1, SHAPED as i32, self.punt);
        self.a.ldx(DW, R1, R0, RATE);
        self.a.jcc_imm(JEQ, R1, 0, self.punt);
        // serialisation time: len x 8e9 / rate
        self.a.mov(R2, R8);
        self.a.alu_reg(SUB, R2, R7);
        self.a.stx(DW, FP, SH_LEN, R2);
        self.a.const64(R3, 8_000_000_000);
        self.a.alu_reg(MUL, R2, R3);
        self.a.alu_reg(DIV, R2, R1);
        self.a.stx(DW, FP, SH_SER, R2);
        self.a.call(KTIME_GET_NS);
        self.a.stx(DW, FP, SH_NOW, R0);
        // GCRA: start = max(now, TAT - tau); TAT = max(TAT, now) + ser, if nobody took
        // from the bucket first (R0 = TAT as read, R3 = now)
        self.a.ldx(DW, R1, FP, SH_PTR);
        self.a.ldx(DW, R0, R1, TAT);
        self.a.mov(R5, R0);
        self.a.ldx(DW, R3, FP, SH_NOW);
        self.a.stx(DW, FP, SH_START, R3);
        let (conforms, later) = (self.a.label(), self.a.label());
        self.a.ldx(DW, R2, R1, TAU);
        self.a.mov(R4, R0);
        self.a.jcc_reg(JGE, R2, R4, conforms); // TAT - tau <= 0 <= now
        self.a.alu_reg(SUB, R4, R2);
        self.a.jcc_reg(JGE, R3, R4, conforms); // the bucket holds tokens now
        self.a.stx(DW, FP, SH_START, R4);
        self.a.bind(conforms);
        self.a.mov(R4, R0);
        self.a.jcc_reg(JGE, R4, R3, later);
        self.a.mov(R4, R3);
        self.a.bind(later);
        self.a.ldx(DW, R2, FP, SH_SER);
        self.a.alu_reg(ADD, R4, R2);
        self.a.cmpxchg(R1, TAT, R4);
        self.a.jcc_reg(JNE, R0, R5, lost_race);
        // claimed: forward only when it may start now, the engine holds nothing for the
        // port and every packet handed to it for the port has left (SLOTTED == DONE:
        // one still in the socket's ring or the engine's TX would be overtaken)
        self.a.ldx(DW, R3, FP, SH_START);
        self.a.ldx(DW, R2, FP, SH_NOW);
        self.a.jcc_reg(JNE, R3, R2, slotted);
        self.a.ldx(DW, R2, R1, HELD);
        self.a.jcc_imm(JNE, R2, 0, slotted);
        self.a.ldx(DW, R2, R1, SLOTTED);
        self.a.ldx(DW, R3, R1, DONE);
        self.a.jcc_reg(JNE, R2, R3, slotted);
        self.a.mov_imm(R2, 1);
        self.a.atomic_add(R1, XDP_PACKETS, R2);
        self.a.ldx(DW, R2, FP, SH_LEN);
        self.a.atomic_add(R1, XDP_BYTES, R2);
        self.a.ja(go);
        // another CPU claimed the link meanwhile: the engine claims a slot of its own
        // (start 0), but the packet is counted like a slotted one, so none after it
        // overtakes it
        self.a.bind(lost_race);
        self.a.st_imm(DW, FP, SH_START, 0);
        // to the engine with the slot: it sends the packet at `start`
        self.a.bind(slotted);
        self.a.mov(R1, R6);
        self.a.mov_imm(R2, -META_LEN);
        self.a.call(XDP_ADJUST_META);
        self.a.jcc_imm(JNE, R0, 0, self.punt);
        self.a.ldx(W, R2, R6, 8); // data_meta
        self.a.ldx(W, R3, R6, 0); // data
        self.a.mov(R4, R2);
        self.a.alu_imm(ADD, R4, META_LEN);
        self.a.jcc_reg(JGT, R4, R3, self.punt);
        self.a.const64(R4, MAGIC);
        self.a.stx(DW, R2, 0, R4);
        self.a.ldx(DW, R4, FP, SH_NOW);
        self.a.stx(DW, R2, 8, R4);
        self.a.ldx(DW, R4, FP, SH_START);
        self.a.stx(DW, R2, 16, R4);
        self.a.ldx(DW, R4, R9, eport);
        self.a.stx(DW, R2, 24, R4);
        // counted once it carries its slot (the engine counts it DONE when it leaves)
        self.a.ldx(DW, R1, FP, SH_PTR);
        self.a.mov_imm(R2, 1);
        self.a.atomic_add(R1, SLOTTED, R2);
        self.a.ldx(DW, R2, FP, SH_NOW);
        self.a.stx(DW, R1, PUNTED_AT, R2);
        self.a.ja(self.punt);
        self.a.bind(go);
        Ok(())
    }

    // ------------------------------------------------------------------ parser

    fn parser(&mut self) -> Result<(), String> {
        let p = self.p;
        let accept = self.a.label();
        let labels: Vec<Label> = p.parser.states.iter().map(|_| self.a.label()).collect();
        let target = |s: Option<u32>| s.map(|s| labels[s as usize]).unwrap_or(accept);
        self.a.ja(target(p.parser.init));
        for (si, st) in p.parser.states.iter().enumerate() {
            self.a.bind(labels[si]);
            for op in &st.ops {
                match op {
                    ParserOp::Extract(HeaderRef::Fixed(h)) => self.extract(*h)?,
                    ParserOp::Set(l, e) | ParserOp::Prim(Prim::Assign(l, e)) => {
                        self.assign(l, e)?
                    }
                    ParserOp::Verify(c, _) => {
                        self.expr(c, 0)?;
                        self.a.jcc_imm(JEQ, R0, 0, self.punt);
                    }
                    _ => return unsupported("parser operation"),
                }
            }
            if st.transitions.is_empty() {
                self.a.ja(accept);
                continue;
            }
            // select key: parts padded to whole bytes, concatenated
            for (i, (e, w)) in st.key.iter().enumerate() {
                self.expr(e, 1)?;
                self.a.and64(R0, mask64(*w));
                if i > 0 {
                    self.a.mov(R1, R0);
                    self.a.ldx(DW, R0, FP, TMP0);
                    self.a.alu_imm(LSH, R0, (w.div_ceil(8) * 8) as i32);
                    self.a.alu_reg(OR, R0, R1);
                }
                self.a.stx(DW, FP, TMP0, R0);
            }
            if st.key.is_empty() {
                self.a.mov_imm(R0, 0);
                self.a.stx(DW, FP, TMP0, R0);
            }
            for t in &st.transitions {
                if t.default {
                    self.a.ja(target(t.next));
                    continue;
                }
                if t.value > u64::MAX as u128 {
                    continue; // a 64-bit key never equals it
                }
                self.a.ldx(DW, R1, FP, TMP0);
                self.a.and64(R1, t.mask as u64);
                self.a.jeq64(R1, t.value as u64, target(t.next));
            }
            self.a.ja(self.punt); // no transition matched: parser error
        }
        self.a.bind(accept);
        Ok(())
    }

    /// Extracts header `h` at the cursor (punt when the packet is too short, and always
    /// for a header the deparser does not emit: removing it needs the engine).
    fn extract(&mut self, h: u32) -> Result<(), String> {
        let p = self.p;
        let hi = &p.headers[h as usize];
        let len = (hi.bits / 8) as i32;
        if !p.deparser.contains(&h) {
            // always taken (unsigned >= 0); a conditional jump keeps the code after it
            // reachable for the verifier's CFG check, which refuses unreachable insns
            self.a.ldx(DW, R1, FP, CURSOR);
            self.a.jcc_imm(JGE, R1, 0, self.punt);
        }
        self.a.ldx(DW, R1, FP, CURSOR);
        self.a.mov(R2, R7);
        self.a.alu_reg(ADD, R2, R1);
        self.a.mov(R3, R2);
        self.a.alu_imm(ADD, R3, len);
        self.a.jcc_reg(JGT, R3, R8, self.punt);
        self.a.st_imm(DW, R9, self.lay.valid(h), 1);
        self.a.stx(DW, R9, self.lay.hdr_off(h), R1);
        for f in hi.first_field..hi.first_field + hi.num_fields {
            if !(self.used[f as usize] || self.written[f as usize]) {
                continue;
            }
            let fi = &p.fields[f as usize];
            let (o, w) = (fi.offset, fi.width);
            let (b0, b1) = (o / 8, (o + w - 1) / 8);
            if b1 - b0 + 1 > 8 {
                return unsupported(format!("field {} spans 9 bytes", fi.name));
            }
            self.a.ldx(B, R0, R2, b0 as i16);
            for b in b0 + 1..=b1 {
                self.a.alu_imm(LSH, R0, 8);
                self.a.ldx(B, R3, R2, b as i16);
                self.a.alu_reg(OR, R0, R3);
            }
            let shift = 8 * (b1 - b0 + 1) - (o % 8) - w;
            if shift > 0 {
                self.a.alu_imm(RSH, R0, shift as i32);
            }
            self.a.and64(R0, mask64(w));
            self.a.stx(DW, R9, self.lay.field(f), R0);
        }
        self.a.ldx(DW, R1, FP, CURSOR);
        self.a.alu_imm(ADD, R1, len);
        self.a.stx(DW, FP, CURSOR, R1);
        Ok(())
    }

    // ------------------------------------------------------------------ checksums

    /// csum16 updates, as the engine does them before deparsing: the inputs' bits are
    /// concatenated and summed as 16-bit big-endian words (a trailing partial word padded
    /// with zeros). Every input lands at a fixed bit offset, so each one is cut into its
    /// word-aligned pieces and the pieces are added to R5.
    fn update_checksums(&mut self) -> Result<(), String> {
        let p = self.p;
        for c in p.checksums.iter().filter(|c| c.update) {
            let skip = self.a.label();
            if let Some(e) = &c.cond {
                self.expr(e, 0)?;
                self.a.jcc_imm(JEQ, R0, 0, skip);
            }
            self.a.mov_imm(R5, 0);
            let mut o = 0u32; // bit offset in the concatenation
            for inp in &p.calcs[c.calc as usize].inputs {
                let w = match inp {
                    CalcInput::Field(f) => {
                        self.a.ldx(DW, R0, R9, self.lay.field(*f));
                        p.fields[*f as usize].width
                    }
                    CalcInput::Const(v, w) => {
                        self.a.const64(R0, *v as u64);
                        *w
                    }
                    _ => return unsupported("checksum input"),
                };
                let end = o + w;
                for k in o / 16..end.div_ceil(16) {
                    let (a, b) = ((16 * k).max(o), (16 * k + 16).min(end));
                    self.a.mov(R1, R0);
                    if end - b > 0 {
                        self.a.alu_imm(RSH, R1, (end - b) as i32);
                    }
                    self.a.and64(R1, mask64(b - a));
                    if 16 * k + 16 - b > 0 {
                        self.a.alu_imm(LSH, R1, (16 * k + 16 - b) as i32);
                    }
                    self.a.alu_reg(ADD, R5, R1);
                }
                o = end;
            }
            for _ in 0..4 {
                self.a.mov(R1, R5);
                self.a.alu_imm(RSH, R1, 16);
                self.a.alu_imm(AND, R5, 0xffff);
                self.a.alu_reg(ADD, R5, R1);
            }
            self.a.alu_imm(XOR, R5, 0xffff);
            let w = p.fields[c.target as usize].width;
            self.a.and64(R5, mask64(w));
            self.a.stx(DW, R9, self.lay.field(c.target), R5);
            self.a.bind(skip);
        }
        Ok(())
    }

    // ------------------------------------------------------------------ deparser

    /// Writes the fields the program may have changed back into the packet, in place
    /// (the parser checked that every path extracts in deparser order). Bounds are
    /// checked for all headers before the first write: a punted packet is untouched.
    fn deparse(&mut self, pass: u32) -> Result<(), String> {
        let p = self.p;
        if pass == 0 {
            // a header made valid or invalid must end as the parser found it: valid and
            // extracted, or invalid and not extracted (else the packet changes length)
            for &h in p.deparser.iter() {
                if !self.toggled[h as usize] || p.headers[h as usize].metadata {
                    continue;
                }
                let (invalid, same) = (self.a.label(), self.a.label());
                self.a.ldx(DW, R0, R9, self.lay.valid(h));
                self.a.ldx(DW, R1, R9, self.lay.hdr_off(h));
                self.a.jcc_imm(JEQ, R0, 0, invalid);
                self.a.jcc_imm(JGT, R1, 0x3fff, self.punt); // pushed
                self.a.ja(same);
                self.a.bind(invalid);
                self.a.jcc_imm(JLE, R1, 0x3fff, self.punt); // popped
                self.a.bind(same);
            }
        }
        let hdrs: Vec<u32> = p
            .deparser
            .iter()
            .copied()
            .filter(|&h| {
                let hi = &p.headers[h as usize];
                !hi.metadata
                    && (hi.first_field..hi.first_field + hi.num_fields)
                        .any(|f| self.written[f as usize])
            })
            .collect();
        {
            for &h in &hdrs {
                let hi = &p.headers[h as usize];
                let skip = self.a.label();
                self.a.ldx(DW, R0, R9, self.lay.valid(h));
                self.a.jcc_imm(JEQ, R0, 0, skip);
                self.a.ldx(DW, R1, R9, self.lay.hdr_off(h));
                self.a.jcc_imm(JGT, R1, 0x3fff, self.punt); // a bound the verifier can add header lengths to
                self.a.mov(R2, R7);
                self.a.alu_reg(ADD, R2, R1);
                self.a.mov(R3, R2);
                self.a.alu_imm(ADD, R3, (hi.bits / 8) as i32);
                self.a.jcc_reg(JGT, R3, R8, self.punt);
                if pass == 1 {
                    for f in hi.first_field..hi.first_field + hi.num_fields {
                        if self.written[f as usize] {
                            self.store_field(f);
                        }
                    }
                }
                self.a.bind(skip);
            }
        }
        Ok(())
    }

    /// Packs field `f` into the header at R2 (bytes checked), big-endian, keeping the
    /// neighbouring fields' bits of shared bytes.
    fn store_field(&mut self, f: u32) {
        let p = self.p;
        let fi = &p.fields[f as usize];
        let (o, w) = (fi.offset, fi.width);
        let end = o + w;
        self.a.ldx(DW, R0, R9, self.lay.field(f));
        for k in o / 8..=(end - 1) / 8 {
            let lo = (8 * k).max(o) - 8 * k;
            let hi = (8 * k + 8).min(end) - 8 * k;
            let mask = ((0xffu32 >> lo) & (0xffu32 << (8 - hi))) & 0xff;
            self.a.mov(R3, R0);
            if end >= 8 * k + 8 {
                let s = end - (8 * k + 8);
                if s > 0 {
                    self.a.alu_imm(RSH, R3, s as i32);
                }
            } else {
                self.a.alu_imm(LSH, R3, (8 * k + 8 - end) as i32);
            }
            self.a.alu_imm(AND, R3, mask as i32);
            if mask != 0xff {
                self.a.ldx(B, R1, R2, k as i16);
                self.a.alu_imm(AND, R1, (!mask & 0xff) as i32);
                self.a.alu_reg(OR, R3, R1);
            }
            self.a.stx(B, R2, k as i16, R3);
        }
    }

    // ------------------------------------------------------------------ controls

    fn node_label(&mut self, n: Option<Node>, end: Label) -> Label {
        match n {
            None => end,
            Some(n) => {
                if let Some(&l) = self.node_labels.get(&n) {
                    return l;
                }
                let l = self.a.label();
                self.node_labels.insert(n, l);
                self.pending.push(n);
                l
            }
        }
    }

    fn control(&mut self, init: Option<Node>) -> Result<(), String> {
        let end = self.a.label();
        self.control_end = Some(end);
        self.node_labels.clear();
        let first = self.node_label(init, end);
        self.a.ja(first);
        while let Some(n) = self.pending.pop() {
            let l = self.node_labels[&n];
            self.a.bind(l);
            match n {
                Node::Cond(c) => {
                    let p = self.p;
                    let c = &p.conds[c as usize];
                    self.expr(&c.expr, 0)?;
                    let t = self.node_label(c.true_next, end);
                    let f = self.node_label(c.false_next, end);
                    self.a.jcc_imm(JNE, R0, 0, t);
                    self.a.ja(f);
                }
                Node::Table(t) => self.table(t as usize, end)?,
            }
        }
        self.a.bind(end);
        self.control_end = None;
        Ok(())
    }

    fn table(&mut self, ti: usize, end: Label) -> Result<(), String> {
        let p = self.p;
        let t = &p.tables[ti];
        let found = self.a.label();
        if let Some(kl) = key_layout(t)? {
            // build the key in KEYBUF
            let mut off = KEYBUF;
            if kl.lpm {
                self.a.st_imm(W, FP, off, (8 * (kl.size - 4)) as i32);
                off += 4;
            }
            for &(ki, bytes) in &kl.parts {
                let k = &t.keys[ki];
                match k.src {
                    KeySrc::Field(f) => self.a.ldx(DW, R0, R9, self.lay.field(f)),
                    KeySrc::Valid(h) => self.a.ldx(DW, R0, R9, self.lay.valid(h)),
                }
                if let Some(m) = k.mask {
                    self.a.and64(R0, m as u64);
                }
                for b in 0..bytes {
                    self.a.mov(R1, R0);
                    let s = 8 * (bytes - 1 - b);
                    if s > 0 {
                        self.a.alu_imm(RSH, R1, s as i32);
                    }
                    self.a.stx(B, FP, off + b as i16, R1);
                }
                off += bytes as i16;
            }
            let map = self.map(|m| m.tables[ti].unwrap_or(-1));
            self.map_lookup(map, KEYBUF);
            if t.hit_miss.is_some() {
                self.a.st_imm(DW, FP, HIT, 1);
            }
            self.a.jcc_imm(JNE, R0, 0, found);
        }
        // miss: the default entry
        if t.hit_miss.is_some() {
            self.a.st_imm(DW, FP, HIT, 0);
        }
        self.a.st_imm(W, FP, KEY32, ti as i32);
        let defaults = self.map(|m| m.defaults);
        self.map_lookup(defaults, KEY32);
        self.a.jcc_imm(JEQ, R0, 0, self.punt);
        self.a.bind(found);
        self.a.stx(DW, FP, VALPTR, R0);
        self.a.ldx(W, R1, R0, 0);
        // dispatch on the action id
        let mut actions: Vec<u32> = t.action_ids.clone();
        if !actions.contains(&t.default_action) && (t.default_action as usize) < p.actions.len() {
            actions.push(t.default_action);
        }
        let bodies: Vec<Label> = actions.iter().map(|_| self.a.label()).collect();
        for (a, l) in actions.iter().zip(&bodies) {
            self.a.jeq64(R1, *a as u64, *l);
        }
        let no_action = self.a.label();
        self.a.jeq64(R1, NO_ACTION as u64, no_action);
        self.a.ja(self.punt);
        for (&aid, &l) in actions.iter().zip(&bodies) {
            self.a.bind(l);
            self.action(aid)?;
            self.table_next(t, Some(aid), end);
        }
        self.a.bind(no_action);
        self.table_next(t, None, end);
        Ok(())
    }

    /// Jumps to the node after table `t` ran `action` (None = no action).
    fn table_next(&mut self, t: &TableDef, action: Option<u32>, end: Label) {
        match t.hit_miss {
            Some((hn, mn)) => {
                let h = self.node_label(hn, end);
                let m = self.node_label(mn, end);
                self.a.ldx(DW, R0, FP, HIT);
                self.a.jcc_imm(JNE, R0, 0, h);
                self.a.ja(m);
            }
            None => {
                let next = match action {
                    None => t.base_next,
                    Some(a) => t.next_by_action.get(a as usize).copied().flatten(),
                };
                let l = self.node_label(next, end);
                self.a.ja(l);
            }
        }
    }

    fn action(&mut self, aid: u32) -> Result<(), String> {
        let p = self.p;
        let act = &p.actions[aid as usize];
        if changes_length(act) && !toggles_in_place(p, act) {
            // always taken (unsigned >= 0): a conditional jump keeps what follows
            // reachable for the verifier's CFG check
            self.a.ldx(DW, R1, FP, CURSOR);
            self.a.jcc_imm(JGE, R1, 0, self.punt);
            return Ok(());
        }
        let prims = &p.actions[aid as usize].prims;
        let labels: Vec<Label> = (0..=prims.len()).map(|_| self.a.label()).collect();
        for (i, prim) in prims.iter().enumerate() {
            self.a.bind(labels[i]);
            match prim {
                Prim::Assign(l, e) => self.assign(l, e)?,
                Prim::MarkToDrop => {
                    self.set_std(p.std.egress_spec, DROP_PORT as i32);
                    self.set_std(p.std.mcast_grp, 0);
                }
                Prim::SetValid(HeaderRef::Fixed(h)) => {
                    // a header becoming valid starts zeroed (the engine's set_header_valid)
                    let h = *h;
                    let was_valid = self.a.label();
                    self.a.ldx(DW, R0, R9, self.lay.valid(h));
                    self.a.jcc_imm(JNE, R0, 0, was_valid);
                    let hi = &p.headers[h as usize];
                    for f in hi.first_field..hi.first_field + hi.num_fields {
                        self.a.st_imm(DW, R9, self.lay.field(f), 0);
                    }
                    self.a.bind(was_valid);
                    self.a.st_imm(DW, R9, self.lay.valid(h), 1);
                }
                Prim::SetInvalid(HeaderRef::Fixed(h)) => {
                    self.a.st_imm(DW, R9, self.lay.valid(*h), 0);
                }
                Prim::Exit => {
                    let end = self.control_end.expect("exit outside a control");
                    self.a.ja(end);
                }
                Prim::Nop => {}
                Prim::Jump(t) => self.a.ja(labels[(*t as usize).min(prims.len())]),
                Prim::JumpIfZero(e, t) => {
                    self.expr(e, 0)?;
                    self.a
                        .jcc_imm(JEQ, R0, 0, labels[(*t as usize).min(prims.len())]);
                }
                _ => return unsupported("action primitive"),
            }
        }
        self.a.bind(labels[prims.len()]);
        Ok(())
    }

    fn assign(&mut self, l: &LValue, e: &Expr) -> Result<(), String> {
        let f = match l {
            LValue::Field(f) => *f,
            _ => return unsupported("assignment target"),
        };
        self.expr(e, 0)?;
        let w = self.p.fields[f as usize].width;
        self.a.and64(R0, mask64(w));
        self.a.stx(DW, R9, self.lay.field(f), R0);
        Ok(())
    }

    // ------------------------------------------------------------------ expressions

    fn tmp(d: usize) -> Result<i16, String> {
        if d >= TMP_SLOTS {
            return unsupported("expression nested too deeply");
        }
        Ok(TMP0 - 8 * d as i16)
    }

    /// Result in R0 (R1..R4 clobbered); `d` = depth, selecting the spill slot.
    fn expr(&mut self, e: &Expr, d: usize) -> Result<(), String> {
        match e {
            Expr::Const(c) => self.a.const64(R0, *c as u64),
            Expr::Field(f) => self.a.ldx(DW, R0, R9, self.lay.field(*f)),
            Expr::Valid(h) => self.a.ldx(DW, R0, R9, self.lay.valid(*h)),
            Expr::Param(i) => {
                self.a.ldx(DW, R1, FP, VALPTR);
                self.a.ldx(DW, R0, R1, (8 + 8 * *i) as i16);
            }
            Expr::Trunc(a, w) => {
                // two_comp_mod is signed: sign-extend the low w bits (mod 2^64)
                self.expr(a, d)?;
                if *w == 0 {
                    self.a.mov_imm(R0, 0);
                } else if *w < 64 {
                    self.a.alu_imm(LSH, R0, 64 - *w as i32);
                    self.a.alu_imm(ARSH, R0, 64 - *w as i32);
                }
            }
            Expr::Un(op, a) => {
                self.expr(a, d)?;
                match op {
                    UnOp::Not => self.bool_of(JEQ),
                    UnOp::D2B => self.bool_of(JNE),
                    UnOp::BitNot => self.a.alu_imm(XOR, R0, -1),
                    UnOp::Neg => self.a.alu_imm(NEG, R0, 0),
                    UnOp::B2D => {}
                }
            }
            Expr::Cond(c, a, b) => {
                let (f, end) = (self.a.label(), self.a.label());
                self.expr(c, d)?;
                self.a.jcc_imm(JEQ, R0, 0, f);
                self.expr(a, d)?;
                self.a.ja(end);
                self.a.bind(f);
                self.expr(b, d)?;
                self.a.bind(end);
            }
            Expr::Bin(op @ (BinOp::And | BinOp::Or), a, b) => {
                // short-circuit: And stops at the first 0, Or at the first non-zero
                let (done, end) = (self.a.label(), self.a.label());
                let stop = if *op == BinOp::And { JEQ } else { JNE };
                self.expr(a, d)?;
                self.a.jcc_imm(stop, R0, 0, done);
                self.expr(b, d)?;
                self.a.jcc_imm(stop, R0, 0, done);
                self.a.mov_imm(R0, (*op == BinOp::And) as i32);
                self.a.ja(end);
                self.a.bind(done);
                self.a.mov_imm(R0, (*op == BinOp::Or) as i32);
                self.a.bind(end);
            }
            Expr::Bin(op, a, b) => {
                let slot = Self::tmp(d)?;
                self.expr(a, d)?;
                self.a.stx(DW, FP, slot, R0);
                self.expr(b, d + 1)?;
                self.a.mov(R1, R0);
                self.a.ldx(DW, R0, FP, slot);
                let zero = self.a.label();
                let end = self.a.label();
                match op {
                    BinOp::Add => self.a.alu_reg(ADD, R0, R1),
                    BinOp::Sub => self.a.alu_reg(SUB, R0, R1),
                    BinOp::Mul => self.a.alu_reg(MUL, R0, R1),
                    BinOp::BitAnd => self.a.alu_reg(AND, R0, R1),
                    BinOp::BitOr => self.a.alu_reg(OR, R0, R1),
                    BinOp::BitXor => self.a.alu_reg(XOR, R0, R1),
                    BinOp::Div | BinOp::Mod => {
                        // the engine gives 0 for x / 0 and x % 0
                        self.a.jcc_imm(JEQ, R1, 0, zero);
                        self.a
                            .alu_reg(if *op == BinOp::Div { DIV } else { MOD }, R0, R1);
                    }
                    BinOp::Shl | BinOp::Shr => {
                        self.a.jcc_imm(JGT, R1, 63, zero);
                        self.a
                            .alu_reg(if *op == BinOp::Shl { LSH } else { RSH }, R0, R1);
                    }
                    BinOp::Eq | BinOp::Ne | BinOp::Gt | BinOp::Ge | BinOp::Lt | BinOp::Le => {
                        let jop = match op {
                            BinOp::Eq => JEQ,
                            BinOp::Ne => JNE,
                            BinOp::Gt => JGT,
                            BinOp::Ge => JGE,
                            BinOp::Lt => JLT,
                            _ => JLE,
                        };
                        let yes = self.a.label();
                        self.a.jcc_reg(jop, R0, R1, yes);
                        self.a.mov_imm(R0, 0);
                        self.a.ja(end);
                        self.a.bind(yes);
                        self.a.mov_imm(R0, 1);
                    }
                    BinOp::And | BinOp::Or => unreachable!(),
                }
                self.a.ja(end);
                self.a.bind(zero);
                self.a.mov_imm(R0, 0);
                self.a.bind(end);
            }
            _ => return unsupported("expression"),
        }
        Ok(())
    }

    /// R0 = (R0 <op> 0) as 0/1.
    fn bool_of(&mut self, op: u8) {
        let (yes, end) = (self.a.label(), self.a.label());
        self.a.jcc_imm(op, R0, 0, yes);
        self.a.mov_imm(R0, 0);
        self.a.ja(end);
        self.a.bind(yes);
        self.a.mov_imm(R0, 1);
        self.a.bind(end);
    }
}

/// Whether an action makes a header valid or invalid: the packet may grow or shrink
/// (e.g. a packet-in header added on the way to the controller, a packet-out header
/// removed), which writing fields in place cannot do. Where `toggles_in_place` allows,
/// the fast path runs it and the deparser punts a packet whose length would change;
/// else a packet reaching it punts, and the engine runs the whole pipeline again on it.
fn changes_length(act: &crate::pipeline::Action) -> bool {
    act.prims
        .iter()
        .any(|p| matches!(p, Prim::SetValid(_) | Prim::SetInvalid(_)))
}

/// Whether the fast path can run an action's header validity changes: on fixed,
/// whole-byte headers the deparser emits, outside unions and stacks (whose members
/// invalidate each other or shift). Else a packet reaching the action punts (`action`).
fn toggles_in_place(p: &Program, act: &crate::pipeline::Action) -> bool {
    act.prims.iter().all(|prim| match prim {
        Prim::SetValid(HeaderRef::Fixed(h)) | Prim::SetInvalid(HeaderRef::Fixed(h)) => {
            let hi = &p.headers[*h as usize];
            !(hi.metadata
                || hi.varbit.is_some()
                || hi.union.is_some()
                || hi.stack_of.is_some()
                || !hi.bits.is_multiple_of(8)
                || !p.deparser.contains(h))
        }
        Prim::SetValid(_) | Prim::SetInvalid(_) => false,
        _ => true,
    })
}
