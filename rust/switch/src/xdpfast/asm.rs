//! A small eBPF assembler: instructions with symbolic jump labels, resolved at the end.

use crate::bpf::insn;

pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R5: u8 = 5;
pub const R6: u8 = 6;
pub const R7: u8 = 7;
pub const R8: u8 = 8;
pub const R9: u8 = 9;
pub const FP: u8 = 10;

// ALU64 operations (class 0x07), combined with K (immediate, 0x00) or X (register, 0x08)
pub const ADD: u8 = 0x00;
pub const SUB: u8 = 0x10;
pub const MUL: u8 = 0x20;
pub const DIV: u8 = 0x30;
pub const OR: u8 = 0x40;
pub const AND: u8 = 0x50;
pub const LSH: u8 = 0x60;
pub const RSH: u8 = 0x70;
pub const NEG: u8 = 0x80;
pub const MOD: u8 = 0x90;
pub const XOR: u8 = 0xa0;
pub const ARSH: u8 = 0xc0;
pub const MOV: u8 = 0xb0;

// jump conditions (class 0x05)
pub const JEQ: u8 = 0x10;
pub const JGT: u8 = 0x20;
pub const JGE: u8 = 0x30;
pub const JNE: u8 = 0x50;
pub const JLT: u8 = 0xa0;
pub const JLE: u8 = 0xb0;

// memory access sizes
pub const B: u8 = 0x10;
pub const H: u8 = 0x08;
pub const W: u8 = 0x00;
pub const DW: u8 = 0x18;

// helpers
pub const MAP_LOOKUP_ELEM: i32 = 1;
pub const REDIRECT_MAP: i32 = 51;
pub const KTIME_GET_NS: i32 = 5;
pub const XDP_ADJUST_META: i32 = 54;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Label(usize);

#[derive(Default)]
pub struct Asm {
    code: Vec<u64>,
    /// (instruction index, label) of jumps to patch
    fixups: Vec<(usize, Label)>,
    labels: Vec<Option<usize>>,
}

impl Asm {
    pub fn label(&mut self) -> Label {
        self.labels.push(None);
        Label(self.labels.len() - 1)
    }
    pub fn bind(&mut self, l: Label) {
        debug_assert!(self.labels[l.0].is_none(), "label bound twice");
        self.labels[l.0] = Some(self.code.len());
    }
    pub fn len(&self) -> usize {
        self.code.len()
    }
    pub fn is_empty(&self) -> bool {
        self.code.is_empty()
    }
    fn raw(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        self.code.push(insn(code, dst, src, off, imm));
    }
    pub fn alu_imm(&mut self, op: u8, dst: u8, imm: i32) {
        self.raw(0x07 | op, dst, 0, 0, imm);
    }
    pub fn alu_reg(&mut self, op: u8, dst: u8, src: u8) {
        self.raw(0x0f | op, dst, src, 0, 0);
    }
    pub fn mov_imm(&mut self, dst: u8, imm: i32) {
        self.alu_imm(MOV, dst, imm);
    }
    pub fn mov(&mut self, dst: u8, src: u8) {
        self.alu_reg(MOV, dst, src);
    }
    /// dst = any 64-bit constant (one instruction when it fits a non-negative i32)
    pub fn const64(&mut self, dst: u8, v: u64) {
        if v <= i32::MAX as u64 {
            self.mov_imm(dst, v as i32);
        } else {
            self.raw(0x18, dst, 0, 0, v as u32 as i32);
            self.raw(0, 0, 0, 0, (v >> 32) as u32 as i32);
        }
    }
    /// dst &= v for any 64-bit v (uses R4 as scratch when v does not fit an immediate)
    pub fn and64(&mut self, dst: u8, v: u64) {
        if v == u64::MAX {
            return;
        }
        if v <= i32::MAX as u64 {
            self.alu_imm(AND, dst, v as i32);
        } else {
            self.const64(R4, v);
            self.alu_reg(AND, dst, R4);
        }
    }
    pub fn ld_map(&mut self, dst: u8, map_fd: i32) {
        self.raw(0x18, dst, 1, 0, map_fd);
        self.raw(0, 0, 0, 0, 0);
    }
    pub fn ldx(&mut self, size: u8, dst: u8, base: u8, off: i16) {
        self.raw(0x61 | size, dst, base, off, 0);
    }
    pub fn stx(&mut self, size: u8, base: u8, off: i16, src: u8) {
        self.raw(0x63 | size, base, src, off, 0);
    }
    /// *(u64 *)(base + off) += src, atomically (BPF_ATOMIC | BPF_ADD)
    pub fn atomic_add(&mut self, base: u8, off: i16, src: u8) {
        self.raw(0xdb, base, src, off, 0x00);
    }
    /// Atomic compare-and-swap of *(u64 *)(base + off): R0 holds the expected value and
    /// receives the value found; `src` is stored when they were equal (BPF_CMPXCHG)
    pub fn cmpxchg(&mut self, base: u8, off: i16, src: u8) {
        self.raw(0xdb, base, src, off, 0xf1);
    }
    pub fn st_imm(&mut self, size: u8, base: u8, off: i16, imm: i32) {
        self.raw(0x62 | size, base, 0, off, imm);
    }
    pub fn ja(&mut self, l: Label) {
        self.fixups.push((self.code.len(), l));
        self.raw(0x05, 0, 0, 0, 0);
    }
    pub fn jcc_imm(&mut self, op: u8, dst: u8, imm: i32, l: Label) {
        self.fixups.push((self.code.len(), l));
        self.raw(0x05 | op, dst, 0, 0, imm);
    }
    pub fn jcc_reg(&mut self, op: u8, dst: u8, src: u8, l: Label) {
        self.fixups.push((self.code.len(), l));
        self.raw(0x0d | op, dst, src, 0, 0);
    }
    /// Jumps to `l` when dst == v, for any 64-bit v (R4 scratch for wide constants).
    pub fn jeq64(&mut self, dst: u8, v: u64, l: Label) {
        if v <= i32::MAX as u64 {
            self.jcc_imm(JEQ, dst, v as i32, l);
        } else {
            self.const64(R4, v);
            self.jcc_reg(JEQ, dst, R4, l);
        }
    }
    pub fn call(&mut self, helper: i32) {
        self.raw(0x85, 0, 0, 0, helper);
    }
    pub fn exit(&mut self) {
        self.raw(0x95, 0, 0, 0, 0);
    }
    /// The finished program: unreachable instructions removed (the verifier refuses
    /// them, and code generation leaves some behind unconditional jumps), jumps resolved.
    pub fn finish(self) -> Result<Vec<u64>, String> {
        let n = self.code.len();
        let mut target = vec![None; n];
        for &(at, l) in &self.fixups {
            target[at] = Some(self.labels[l.0].ok_or("xdp fast path: jump to an unbound label")?);
        }
        let opcode = |i: usize| (self.code[i] & 0xff) as u8;
        let mut live = vec![false; n];
        let mut work = vec![0usize];
        while let Some(i) = work.pop() {
            if i >= n || live[i] {
                continue;
            }
            live[i] = true;
            match opcode(i) {
                0x18 => {
                    live[i + 1] = true; // second half of a 64-bit load
                    work.push(i + 2);
                }
                0x95 => {}
                0x05 => work.push(target[i].unwrap()),
                op if op & 0x07 == 0x05 && op != 0x85 => {
                    work.push(i + 1);
                    work.push(target[i].unwrap());
                }
                _ => work.push(i + 1),
            }
        }
        // new index of the first live instruction at or after each old index
        let mut new_at = vec![0usize; n + 1];
        let mut k = n;
        let live_count = live.iter().filter(|&&x| x).count();
        let mut next_new = live_count;
        while k > 0 {
            k -= 1;
            if live[k] {
                next_new -= 1;
            }
            new_at[k] = next_new;
        }
        new_at[n] = live_count;
        let mut out = Vec::with_capacity(live_count);
        for i in 0..n {
            if !live[i] {
                continue;
            }
            let mut ins = self.code[i];
            if let Some(t) = target[i] {
                let off = new_at[t] as i64 - out.len() as i64 - 1;
                let off = i16::try_from(off)
                    .map_err(|_| "xdp fast path: program too large for a jump".to_string())?;
                ins = (ins & !(0xffffu64 << 16)) | (((off as u16) as u64) << 16);
            }
            out.push(ins);
        }
        Ok(out)
    }
}
