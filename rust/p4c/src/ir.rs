//! The typed intermediate representation between `lower` (which builds it from the
//! program) and the emitters (`emit_bmv2` writes it as BMv2 JSON, `emit_p4info` as
//! P4Info). Nothing here knows the JSON format.

use crate::ast::Annos;
use crate::check::mask;
use serde_json::{json, Value as J};
use std::collections::BTreeMap;

// ---------------------------------------------------------------- program

#[derive(Clone, Debug)]
pub enum FieldW {
    Fixed(u32, bool),
    Var(u32),
}

#[derive(Clone, Debug)]
pub struct HeaderType {
    pub name: String,
    pub fields: Vec<(String, FieldW)>,
}

#[derive(Clone, Debug)]
pub struct HeaderInst {
    pub name: String,
    pub ty: String,
    pub metadata: bool,
}

#[derive(Clone, Debug)]
pub struct IrAction {
    pub name: String,
    /// Name of the P4 action declaration (empty for synthetic actions).
    pub decl: String,
    pub params: Vec<(String, u32, Annos)>,
    pub prims: Vec<J>,
    pub synthetic: bool,
    pub annos: Annos,
}

#[derive(Clone, Debug)]
pub struct IrKey {
    pub match_type: String,
    /// P4 match kind (exact, lpm, ternary, range, optional).
    pub p4_kind: String,
    pub target: J,
    pub name: String,
    pub width: u32,
    pub mask: Option<u128>,
    pub annos: Annos,
}

#[derive(Clone, Debug)]
pub struct IrTable {
    pub name: String,
    pub keys: Vec<IrKey>,
    pub match_type: String,
    pub kind: String,
    pub profile: Option<String>,
    pub size: u64,
    pub with_counters: bool,
    pub direct_meter: Option<String>,
    pub actions: Vec<usize>,
    /// action index → annotations from the table's actions list (@defaultonly, @tableonly)
    pub action_annos: Vec<Annos>,
    pub next_tables: BTreeMap<String, Option<String>>,
    pub default: Option<(usize, Vec<String>, bool)>,
    pub entries: Vec<J>,
    pub const_entries: bool,
    pub synthetic: bool,
    pub annos: Annos,
    pub support_timeout: bool,
}

#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub size: u64,
    pub selector: Option<(String, Vec<J>)>,
    pub tables: Vec<String>,
    pub annos: Annos,
}

#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    pub name: String,
    pub init: Option<String>,
    pub tables: Vec<IrTable>,
    pub conditionals: Vec<J>,
    pub profiles: Vec<Profile>,
}

#[derive(Clone, Debug)]
pub struct ExternArray {
    pub kind: &'static str, // counter, meter, register
    pub name: String,
    pub size: u64,
    pub direct_table: Option<String>,
    pub unit: String, // packets / bytes / packets_and_bytes
    pub bitwidth: u32,
    pub result_target: Option<J>,
    pub annos: Annos,
}

#[derive(Clone, Debug)]
pub struct DigestInfo {
    pub name: String,
    pub id: usize,
    pub fields: Vec<(String, J, u32)>,
}

#[derive(Clone, Debug)]
pub struct ValueSetInfo {
    pub name: String,
    pub width: u32,
    pub size: u64,
    pub annos: Annos,
    pub fields: Vec<(String, u32)>,
}

#[derive(Clone, Debug)]
pub struct CtrlHeader {
    pub name: String,
    pub annos: Annos,
    pub fields: Vec<(String, u32, Annos)>,
}

#[derive(Clone, Debug, Default)]
pub struct Ir {
    pub header_types: Vec<HeaderType>,
    pub headers: Vec<HeaderInst>,
    pub stacks: Vec<(String, String, Vec<usize>)>,
    pub union_types: Vec<(String, Vec<(String, String)>)>,
    pub unions: Vec<(String, String, Vec<usize>)>,
    pub errors: Vec<String>,
    pub enums: Vec<(String, Vec<(String, u128)>)>,
    pub parser_states: Vec<J>,
    pub parser_init: String,
    pub value_sets: Vec<ValueSetInfo>,
    pub deparser: Vec<String>,
    pub arrays: Vec<ExternArray>,
    pub actions: Vec<IrAction>,
    pub pipelines: Vec<Pipeline>,
    pub calculations: Vec<J>,
    pub checksums: Vec<J>,
    pub field_lists: Vec<(String, Vec<J>)>,
    pub digests: Vec<DigestInfo>,
    pub ctrl_headers: Vec<CtrlHeader>,
    pub field_aliases: Vec<(String, String, String)>,
    /// For P4Info type_info: struct name → members (name, width)
    pub digest_structs: Vec<(String, Vec<(String, u32)>)>,
}

// ---------------------------------------------------------------- expressions (IR)

#[derive(Clone, Debug, PartialEq)]
pub enum X {
    Field(String, String),
    Hex(u128, bool),
    Bool(bool),
    Runtime(usize),
    Header(String),
    Stack(String),
    StackField(String, String),
    Op(&'static str, Option<Box<X>>, Box<X>),
    Tern(Box<X>, Box<X>, Box<X>),
    Lookahead(u32, u32),
    Str(String),
    /// Raw JSON operand (e.g. the field offset of `access_field`).
    Raw(J),
}

pub(crate) fn hexs(v: u128, neg: bool) -> String {
    if neg {
        format!("-0x{:x}", v)
    } else {
        format!("0x{:x}", v)
    }
}

/// Byte-padded hex string for a value of `w` bits.
pub fn hexw(v: u128, w: u32) -> String {
    let bytes = w.div_ceil(8).max(1) as usize;
    format!("0x{:0width$x}", v & mask(w), width = bytes * 2)
}

impl X {
    pub fn op(op: &'static str, l: X, r: X) -> X {
        X::Op(op, Some(Box::new(l)), Box::new(r))
    }
    pub fn un(op: &'static str, r: X) -> X {
        X::Op(op, None, Box::new(r))
    }
    /// As an operand inside an expression.
    pub fn je(&self) -> J {
        match self {
            X::Field(h, f) => json!({"type": "field", "value": [h, f]}),
            X::Hex(v, n) => json!({"type": "hexstr", "value": hexs(*v, *n)}),
            X::Bool(b) => json!({"type": "bool", "value": b}),
            X::Runtime(i) => json!({"type": "local", "value": i}),
            X::Header(h) => json!({"type": "header", "value": h}),
            X::Stack(h) => json!({"type": "header_stack", "value": h}),
            X::StackField(h, f) => json!({"type": "stack_field", "value": [h, f]}),
            X::Lookahead(o, w) => json!({"type": "lookahead", "value": [o, w]}),
            X::Str(s) => json!({"type": "string", "value": s}),
            X::Raw(j) => j.clone(),
            X::Op(op, l, r) => json!({"type": "expression", "value": {
                "op": op, "left": l.as_ref().map(|x| x.je()).unwrap_or(J::Null), "right": r.je()}}),
            X::Tern(c, a, b) => json!({"type": "expression", "value": {
                "op": "?", "left": a.je(), "right": b.je(), "cond": c.je()}}),
        }
    }
    /// As a primitive parameter.
    pub fn jp(&self) -> J {
        match self {
            X::Runtime(i) => json!({"type": "runtime_data", "value": i}),
            X::Op(..) | X::Tern(..) | X::Bool(_) | X::Raw(_) => {
                json!({"type": "expression", "value": self.je()})
            }
            _ => self.je(),
        }
    }
    pub(crate) fn is_bool_op(&self) -> bool {
        matches!(self, X::Bool(_))
            || matches!(self, X::Op(op, ..) if matches!(*op, "==" | "!=" | "<" | ">" | "<=" | ">=" | "and" | "or" | "not" | "d2b" | "valid"))
    }
}
