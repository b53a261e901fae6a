//! The typed intermediate representation between `lower` (which builds it from the
//! program) and the emitters (`emit_bmv2` writes it as BMv2 JSON, `emit_p4info` as
//! P4Info). Nothing here knows the JSON format.

use crate::ast::Annos;
use crate::sema::types::mask;
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
    pub prims: Vec<Prim>,
    pub synthetic: bool,
    pub annos: Annos,
}

/// The match kinds of table keys that v1model declares and BMv2 runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
    Selector,
}

impl MatchKind {
    pub fn from_name(n: &str) -> Option<MatchKind> {
        Some(match n {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            "selector" => MatchKind::Selector,
            _ => return None,
        })
    }
    /// The P4 name.
    pub fn name(self) -> &'static str {
        match self {
            MatchKind::Exact => "exact",
            MatchKind::Lpm => "lpm",
            MatchKind::Ternary => "ternary",
            MatchKind::Range => "range",
            MatchKind::Optional => "optional",
            MatchKind::Selector => "selector",
        }
    }
    /// BMv2's match type for a key of this kind: BMv2 has no `optional`, which p4c
    /// emits as `ternary`.
    pub fn bmv2(self) -> MatchKind {
        match self {
            MatchKind::Optional => MatchKind::Ternary,
            k => k,
        }
    }
}

/// What an instance names: a v1model extern lowering knows, or (`Block`) another type,
/// in practice a parser or control instantiated as a sub-block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ExternKind {
    Counter,
    DirectCounter,
    Meter,
    DirectMeter,
    Register,
    ActionProfile,
    ActionSelector,
    Checksum16,
    Block(String),
}

impl ExternKind {
    /// The kind of an instance of type `name`.
    pub fn of_type(name: &str) -> ExternKind {
        match name {
            "counter" => ExternKind::Counter,
            "direct_counter" => ExternKind::DirectCounter,
            "meter" => ExternKind::Meter,
            "direct_meter" => ExternKind::DirectMeter,
            "register" => ExternKind::Register,
            "action_profile" => ExternKind::ActionProfile,
            "action_selector" => ExternKind::ActionSelector,
            "Checksum16" => ExternKind::Checksum16,
            other => ExternKind::Block(other.to_string()),
        }
    }
    /// The type's name.
    pub fn name(&self) -> &str {
        match self {
            ExternKind::Counter => "counter",
            ExternKind::DirectCounter => "direct_counter",
            ExternKind::Meter => "meter",
            ExternKind::DirectMeter => "direct_meter",
            ExternKind::Register => "register",
            ExternKind::ActionProfile => "action_profile",
            ExternKind::ActionSelector => "action_selector",
            ExternKind::Checksum16 => "Checksum16",
            ExternKind::Block(n) => n,
        }
    }
}

#[derive(Clone, Debug)]
pub struct IrKey {
    /// The key's P4 match kind (P4Info names it; BMv2 gets `kind.bmv2()`).
    pub kind: MatchKind,
    /// (header instance, field); `$valid$` for `isValid()` keys.
    pub target: (String, String),
    pub name: String,
    pub width: u32,
    pub mask: Option<u128>,
    pub annos: Annos,
}

/// How a table holds its actions (BMv2's table `type`): in its entries, or through an
/// action profile's members (`indirect`) or an action selector's groups (`indirect_ws`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableKind {
    Simple,
    Indirect,
    IndirectWs,
}

impl TableKind {
    /// BMv2's name.
    pub fn bmv2(self) -> &'static str {
        match self {
            TableKind::Simple => "simple",
            TableKind::Indirect => "indirect",
            TableKind::IndirectWs => "indirect_ws",
        }
    }
}

#[derive(Clone, Debug)]
pub struct IrTable {
    pub name: String,
    pub keys: Vec<IrKey>,
    /// BMv2's match type of the whole table (the most general of its keys').
    pub match_type: MatchKind,
    pub kind: TableKind,
    pub profile: Option<String>,
    pub size: u64,
    pub with_counters: bool,
    pub direct_meter: Option<String>,
    pub actions: Vec<usize>,
    /// action index → annotations from the table's actions list (@defaultonly, @tableonly)
    pub action_annos: Vec<Annos>,
    pub next_tables: BTreeMap<String, Option<String>>,
    pub default: Option<(usize, Vec<String>, bool)>,
    pub entries: Vec<TableEntry>,
    pub const_entries: bool,
    pub synthetic: bool,
    pub annos: Annos,
    pub support_timeout: bool,
}

impl IrTable {
    /// A keyless table that always runs action `aid` (code outside tables in a
    /// control, key expressions computed before a table).
    pub fn synthetic(
        name: String,
        aid: usize,
        next_tables: BTreeMap<String, Option<String>>,
    ) -> IrTable {
        IrTable {
            name,
            keys: vec![],
            match_type: MatchKind::Exact,
            kind: TableKind::Simple,
            profile: None,
            size: 1024,
            with_counters: false,
            direct_meter: None,
            actions: vec![aid],
            action_annos: vec![vec![]],
            next_tables,
            default: Some((aid, vec![], true)),
            entries: vec![],
            const_entries: false,
            synthetic: true,
            annos: vec![],
            support_timeout: false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Profile {
    pub name: String,
    pub size: u64,
    /// (algorithm, input fields) of an action selector.
    pub selector: Option<(String, Vec<CalcInput>)>,
    pub tables: Vec<String>,
    pub annos: Annos,
}

#[derive(Clone, Debug, Default)]
pub struct Pipeline {
    pub name: String,
    pub init: Option<String>,
    pub tables: Vec<IrTable>,
    pub conditionals: Vec<Conditional>,
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
    /// The field a direct meter's `read` writes.
    pub result_target: Option<(String, String)>,
    pub annos: Annos,
}

#[derive(Clone, Debug)]
pub struct DigestInfo {
    pub name: String,
    pub id: usize,
    /// (struct member, (header, field), width)
    pub fields: Vec<(String, (String, String), u32)>,
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
    /// Stacks of header unions: name, union type, ids of the element unions.
    pub union_stacks: Vec<(String, String, Vec<usize>)>,
    pub errors: Vec<String>,
    pub enums: Vec<(String, Vec<(String, u128)>)>,
    pub parser_states: Vec<ParseState>,
    pub parser_init: String,
    pub value_sets: Vec<ValueSetInfo>,
    pub deparser: Vec<String>,
    pub arrays: Vec<ExternArray>,
    pub actions: Vec<IrAction>,
    pub pipelines: Vec<Pipeline>,
    pub calculations: Vec<Calculation>,
    pub checksums: Vec<Checksum>,
    /// (key, fields) of the field lists of clone/resubmit/recirculate
    pub field_lists: Vec<(String, Vec<(String, String)>)>,
    pub digests: Vec<DigestInfo>,
    pub ctrl_headers: Vec<CtrlHeader>,
    pub field_aliases: Vec<(String, String, String)>,
    /// For P4Info type_info: struct name → members (name, width)
    pub digest_structs: Vec<(String, Vec<(String, u32)>)>,
}

// ---------------------------------------------------------------- expressions (IR)

/// A value or expression tree as BMv2 evaluates it.
#[derive(Clone, Debug, PartialEq)]
pub enum X {
    /// (header instance, field)
    Field(String, String),
    /// A constant (magnitude, negative).
    Hex(u128, bool),
    Bool(bool),
    /// The action parameter of that index, inside an expression.
    Runtime(usize),
    Header(String),
    Stack(String),
    /// A field of the last extracted element of a stack.
    StackField(String, String),
    /// BMv2 operator with its optional left and its right operand.
    Op(&'static str, Option<Box<X>>, Box<X>),
    /// cond ? a : b
    Tern(Box<X>, Box<X>, Box<X>),
    /// (bit offset, width) of the bits ahead of the parser.
    Lookahead(u32, u32),
    Str(String),
    /// A plain number operand (the field offset of `access_field`).
    Num(usize),
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
    /// The form this value takes as a primitive parameter.
    pub fn as_arg(&self) -> PrimArg {
        match self {
            X::Runtime(i) => PrimArg::RuntimeData(*i),
            X::Op(..) | X::Tern(..) | X::Bool(_) | X::Num(_) => PrimArg::Expr(self.clone()),
            _ => PrimArg::Op(self.clone()),
        }
    }
    pub(crate) fn is_bool_op(&self) -> bool {
        matches!(self, X::Bool(_))
            || matches!(self, X::Op(op, ..) if matches!(*op, "==" | "!=" | "<" | ">" | "<=" | ">=" | "and" | "or" | "not" | "d2b" | "valid"))
    }
}

// ---------------------------------------------------------------- primitives

/// A parameter of a primitive or parser operation.
#[derive(Clone, Debug, PartialEq)]
pub enum PrimArg {
    /// The operand itself (field, hexstr, header, header_stack, string, ...).
    Op(X),
    /// An expression evaluated by the primitive (`{"type": "expression"}`).
    Expr(X),
    /// An action parameter.
    RuntimeData(usize),
    HeaderUnion(String),
    CounterArray(String),
    MeterArray(String),
    RegisterArray(String),
    Calculation(String),
    /// The values of `log_msg`.
    ParamsVector(Vec<X>),
}

impl PrimArg {
    pub fn field(h: &str, f: &str) -> PrimArg {
        PrimArg::Op(X::Field(h.to_string(), f.to_string()))
    }
    pub fn header(h: &str) -> PrimArg {
        PrimArg::Op(X::Header(h.to_string()))
    }
    pub fn hex(v: u128) -> PrimArg {
        PrimArg::Op(X::Hex(v, false))
    }
}

/// A primitive call of an action; `source` is the P4 text it comes from.
#[derive(Clone, Debug)]
pub struct Prim {
    pub op: String,
    pub params: Vec<PrimArg>,
    pub source: String,
}

// ---------------------------------------------------------------- parser

#[derive(Clone, Debug)]
pub enum ExtractTarget {
    Regular(String),
    /// `stack.next`
    Stack(String),
    /// `union_stack.next.member`
    UnionStack(String, String),
}

#[derive(Clone, Debug)]
pub enum ParserOp {
    Extract(ExtractTarget),
    /// Variable-length extract with its length expression (bits).
    ExtractVl(ExtractTarget, X),
    Advance(PrimArg),
    /// field = value
    Set((String, String), PrimArg),
    /// condition, error
    Verify(X, X),
    /// An action primitive run by the parser.
    Primitive(Prim),
}

#[derive(Clone, Debug)]
pub enum TransitionValue {
    Default,
    /// Concatenated key value and mask, hex digits without `0x`.
    Hex(String, Option<String>),
    ValueSet(String),
}

#[derive(Clone, Debug)]
pub struct ParserTransition {
    pub value: TransitionValue,
    /// `None` ends parsing (accept at the top level, or reject).
    pub next: Option<String>,
}

#[derive(Clone, Debug)]
pub struct ParseState {
    pub name: String,
    pub id: usize,
    pub ops: Vec<ParserOp>,
    /// Field, lookahead or stack-field operands.
    pub key: Vec<X>,
    pub transitions: Vec<ParserTransition>,
}

// ---------------------------------------------------------------- control

#[derive(Clone, Debug)]
pub struct Conditional {
    pub name: String,
    pub id: usize,
    pub source: String,
    pub expr: X,
    pub true_next: Option<String>,
    pub false_next: Option<String>,
}

/// One input of a hash or checksum calculation.
#[derive(Clone, Debug)]
pub enum CalcInput {
    Field(String, String),
    /// A constant of a given width.
    Const(u128, u32),
    /// The packet payload after the headers.
    Payload,
}

#[derive(Clone, Debug)]
pub struct Calculation {
    pub name: String,
    pub id: usize,
    pub algo: String,
    pub inputs: Vec<CalcInput>,
}

#[derive(Clone, Debug)]
pub struct Checksum {
    pub id: usize,
    pub target: (String, String),
    pub calculation: String,
    pub verify: bool,
    /// `None` when the condition is `true`.
    pub cond: Option<X>,
}

/// The match of one key in a constant table entry (values are masked to the key width).
#[derive(Clone, Debug)]
pub enum EntryKey {
    Exact(u128),
    Lpm(u128, u32),
    Ternary(u128, u128),
    Range(u128, u128),
}

#[derive(Clone, Debug)]
pub struct TableEntry {
    pub source: String,
    /// (match, key width)
    pub keys: Vec<(EntryKey, u32)>,
    pub action: usize,
    pub data: Vec<String>,
    pub priority: u64,
}
