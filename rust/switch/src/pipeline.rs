//! The compiled, executable form of a P4 program. Built once by `json` at load time;
//! the packet path (`exec`) only indexes into these vectors — no names, no JSON.
//! Every value is a `u128` masked to its field width (fields wider than 128 bits are
//! rejected at load time with a clear error).

pub type FieldId = u32;
pub type HeaderId = u32;

#[derive(Debug, Clone)]
pub struct HeaderInfo {
    pub name: String,
    pub first_field: FieldId,
    pub num_fields: u32,
    pub bits: u32,
    pub metadata: bool,
    /// trailing varbit field: (varbit slot in the PHV, max bytes)
    pub varbit: Option<(u32, u32)>,
    /// the header union this header is a member of (index into Program::unions)
    pub union: Option<u32>,
    /// (stack, index) when this header is an element of a header stack
    pub stack_of: Option<(u32, u32)>,
}

#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub name: String, // "hdr.field"
    pub header: HeaderId,
    pub width: u32,
    pub offset: u32, // bit offset inside the header
    pub mask: u128,
    pub signed: bool,
}

#[derive(Debug, Clone)]
pub struct StackInfo {
    pub name: String,
    pub headers: Vec<HeaderId>,
}

#[derive(Debug, Clone)]
pub enum Expr {
    Const(u128),
    Field(FieldId),
    /// a signed (int<W>) field, sign-extended when read (bmv2 values are signed bignums)
    SignedField(FieldId, u32),
    /// field of stack element chosen at run time: (stack, index expr, field offset in header)
    StackField(u32, Box<Expr>, u32),
    Param(u32),
    Valid(HeaderId),
    /// result bit width matters only for masking in `Bin` results handled by p4c masks
    Un(UnOp, Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// value mod 2^w read as a signed int<w> (two_comp_mod: casts to int<w>)
    Trunc(Box<Expr>, u32),
    SatCast(Box<Expr>, u32, bool),
    LastStackIndex(u32),
    StackSize(u32),
    /// the value of a varbit field (slot; at most 16 bytes)
    VarBit(u32),
    /// lookahead in the parser: (bit offset from cursor, width)
    Lookahead(u32, u32),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnOp {
    Not,
    BitNot,
    Neg,
    D2B,
    B2D,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Shl,
    Shr,
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
    And,
    Or,
    BitAnd,
    BitOr,
    BitXor,
}

/// An assignable location.
#[derive(Debug, Clone)]
pub enum LValue {
    Field(FieldId),
    StackField(u32, Box<Expr>, u32),
}

#[derive(Debug, Clone)]
pub enum HeaderRef {
    Fixed(HeaderId),
    /// stack element by run-time index
    StackElem(u32, Expr),
    /// `cond ? a : b` on headers (p4c emits it as assign_header's source)
    Cond(Box<Expr>, Box<HeaderRef>, Box<HeaderRef>),
}

#[derive(Debug, Clone)]
pub enum Prim {
    Assign(LValue, Expr),
    AssignHeader(HeaderRef, HeaderRef),
    SetValid(HeaderRef),
    SetInvalid(HeaderRef),
    MarkToDrop,
    Exit,
    CloneI2E(Expr, Expr),
    CloneE2E(Expr, Expr),
    Recirculate(Expr),
    Resubmit(Expr),
    Truncate(Expr),
    Count(u32, Expr),
    ExecuteMeter(u32, Expr, LValue),
    RegisterRead(LValue, u32, Expr),
    RegisterWrite(u32, Expr, Expr),
    /// dst = base + hash(calc) % max
    Hash(LValue, Expr, u32, Expr),
    Random(LValue, Expr, Expr),
    Digest(Expr, u32),
    /// copy a whole header stack (dst, src)
    AssignStack(u32, u32),
    /// copy a whole header union (dst, src)
    AssignUnion(u32, u32),
    /// varbit field assignment (assign_VL): (destination slot, source slot)
    AssignVL(u32, u32),
    Push(u32, u32),
    Pop(u32, u32),
    Jump(u32),
    JumpIfZero(Expr, u32),
    Nop,
}

#[derive(Debug, Clone)]
pub struct Action {
    pub name: String,
    pub params: Vec<(String, u32)>,
    pub prims: Vec<Prim>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    Table(u32),
    Cond(u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchKind {
    Exact,
    Lpm,
    Ternary,
    Range,
    Optional,
    Valid,
}

impl MatchKind {
    pub fn parse(s: &str) -> Option<MatchKind> {
        Some(match s {
            "exact" => MatchKind::Exact,
            "lpm" => MatchKind::Lpm,
            "ternary" => MatchKind::Ternary,
            "range" => MatchKind::Range,
            "optional" => MatchKind::Optional,
            "valid" => MatchKind::Valid,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone, Copy)]
pub enum KeySrc {
    Field(FieldId),
    Valid(HeaderId),
}

#[derive(Debug, Clone)]
pub struct KeySpec {
    pub name: String,
    pub kind: MatchKind,
    pub src: KeySrc,
    pub mask: Option<u128>,
    pub width: u32,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Layout {
    Exact,
    Lpm(usize),
    Generic,
    /// no keys: always miss (default action)
    Keyless,
}

impl Layout {
    /// The lookup structure a key list calls for: one hash map when every key is exact,
    /// hash maps per prefix length for one lpm key beside exact ones, else a priority list.
    pub fn of(keys: &[KeySpec]) -> Layout {
        let exactish = |k: &KeySpec| matches!(k.kind, MatchKind::Exact | MatchKind::Valid);
        if keys.is_empty() {
            return Layout::Keyless;
        }
        if keys.iter().all(exactish) {
            return Layout::Exact;
        }
        let lpms: Vec<usize> = (0..keys.len())
            .filter(|&i| keys[i].kind == MatchKind::Lpm)
            .collect();
        let others_exact = keys.iter().all(|k| exactish(k) || k.kind == MatchKind::Lpm);
        if lpms.len() == 1 && others_exact {
            Layout::Lpm(lpms[0])
        } else {
            Layout::Generic
        }
    }
}

/// An entry the program itself installs (`const entries`), added to the table's state when
/// an engine starts.
#[derive(Debug, Clone)]
pub struct ConstEntry {
    pub key: Vec<u128>,
    pub aux: Vec<u128>,
    pub prefix: u32,
    pub priority: Option<i64>,
    pub action: u32,
    pub data: Vec<u128>,
}

/// A match-action table as the program defines it (fixed after load). Its entries and
/// current default action are state: `tables::Table`, held by the engine.
#[derive(Debug, Clone)]
pub struct TableDef {
    pub name: String,
    pub keys: Vec<KeySpec>,
    pub layout: Layout,
    pub action_ids: Vec<u32>,
    /// next node per action id (indexed by global action id)
    pub next_by_action: Vec<Option<Node>>,
    pub hit_miss: Option<(Option<Node>, Option<Node>)>,
    pub base_next: Option<Node>,
    pub with_counters: bool,
    pub direct_meter: Option<usize>,
    pub max_size: usize,
    /// the default action the program sets (the state starts with it)
    pub default_action: u32,
    pub default_data: Box<[u128]>,
    pub default_const: bool,
    pub const_entries: Vec<ConstEntry>,
    /// indirect table: entries point at members/groups of this action profile
    pub profile: Option<u32>,
}

impl TableDef {
    pub fn new(name: String, keys: Vec<KeySpec>) -> TableDef {
        TableDef {
            name,
            layout: Layout::of(&keys),
            keys,
            action_ids: Vec::new(),
            next_by_action: Vec::new(),
            hit_miss: None,
            base_next: None,
            with_counters: false,
            direct_meter: None,
            max_size: 0,
            default_action: 0,
            default_data: Box::new([]),
            default_const: false,
            const_entries: Vec::new(),
            profile: None,
        }
    }

    /// Entries of ternary, range, optional or mixed tables are ordered by priority.
    pub fn needs_priority(&self) -> bool {
        self.layout == Layout::Generic
    }
}

#[derive(Debug, Clone)]
pub struct Conditional {
    pub name: String,
    pub expr: Expr,
    pub true_next: Option<Node>,
    pub false_next: Option<Node>,
}

#[derive(Debug, Clone)]
pub struct Control {
    pub name: String,
    pub init: Option<Node>,
}

#[derive(Debug, Clone)]
pub enum ParserOp {
    Extract(HeaderRef),
    /// extract a header (or a stack's next element) whose trailing varbit field is
    /// `Expr` bits long
    ExtractVL(HeaderRef, Expr),
    /// extract into stack "next"
    ExtractNext(u32),
    Set(LValue, Expr),
    /// reject with PacketTooShort unless this many bits follow the cursor (a lookahead's reach)
    NeedBits(u32),
    Verify(Expr, Expr),
    Advance(Expr),
    Prim(Prim),
}

#[derive(Debug, Clone)]
pub struct Transition {
    /// parser value set (index into Program::vsets) instead of a constant
    pub vset: Option<u32>,
    pub value: u128,
    pub mask: u128,
    pub default: bool,
    pub next: Option<u32>,
}

#[derive(Debug, Clone)]
pub struct ParseState {
    pub name: String,
    pub ops: Vec<ParserOp>,
    /// key parts and their widths
    pub key: Vec<(Expr, u32)>,
    pub transitions: Vec<Transition>,
}

#[derive(Debug, Clone)]
pub struct Parser {
    pub init: Option<u32>,
    pub states: Vec<ParseState>,
}

#[derive(Debug, Clone)]
pub enum CalcInput {
    Field(FieldId),
    /// the bytes of a varbit field (slot)
    VarBit(u32),
    Const(u128, u32),
    Header(HeaderId),
    Payload,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Algo {
    Crc16,
    Crc32,
    Csum16,
    Identity,
    Xor16,
    Crc16Custom,
    Crc32Custom,
    Random,
}

#[derive(Debug, Clone)]
pub struct Calculation {
    pub name: String,
    pub algo: Algo,
    pub inputs: Vec<CalcInput>,
    pub has_payload: bool,
}

#[derive(Debug, Clone)]
pub struct Checksum {
    pub name: String,
    pub target: FieldId,
    pub calc: u32,
    pub verify: bool,
    pub update: bool,
    pub cond: Option<Expr>,
}

#[derive(Debug, Clone)]
pub struct CounterSpec {
    pub name: String,
    pub size: usize,
    pub direct: Option<String>,
}

#[derive(Debug, Clone)]
pub struct MeterSpec {
    pub name: String,
    pub size: usize,
    pub bytes: bool,
    pub direct: Option<String>,
    pub result: Option<FieldId>,
}

#[derive(Debug, Clone)]
pub struct RegisterSpec {
    pub name: String,
    pub size: usize,
    pub width: u32,
}

#[derive(Debug, Clone)]
pub struct LearnList {
    pub name: String,
    pub fields: Vec<FieldId>,
}

/// Where the v1model standard metadata lives in the PHV (None = program lacks it).
#[derive(Debug, Clone, Default)]
pub struct StdMeta {
    pub ingress_port: Option<FieldId>,
    pub egress_spec: Option<FieldId>,
    pub egress_port: Option<FieldId>,
    pub instance_type: Option<FieldId>,
    pub packet_length: Option<FieldId>,
    pub enq_timestamp: Option<FieldId>,
    pub enq_qdepth: Option<FieldId>,
    pub deq_timedelta: Option<FieldId>,
    pub deq_qdepth: Option<FieldId>,
    pub ingress_global_timestamp: Option<FieldId>,
    pub egress_global_timestamp: Option<FieldId>,
    pub mcast_grp: Option<FieldId>,
    pub egress_rid: Option<FieldId>,
    pub checksum_error: Option<FieldId>,
    pub parser_error: Option<FieldId>,
    pub priority: Option<FieldId>,
}

/// An action profile (members) or action selector (members + groups + hash).
#[derive(Debug, Clone)]
pub struct ActionProfile {
    pub name: String,
    pub members: Vec<Option<(u32, Box<[u128]>)>>,
    pub groups: Vec<Option<Vec<u32>>>,
    /// selector hash (algorithm and inputs) for groups
    pub selector: Option<Calculation>,
}

/// Entry/default targets of indirect tables are encoded in the action id.
pub const INDIRECT_MEMBER: u32 = 1 << 30;
pub const INDIRECT_GROUP: u32 = 1 << 31;
pub const NO_ACTION: u32 = u32::MAX;

#[derive(Debug, Clone)]
pub struct ValueSet {
    pub name: String,
    pub width: u32,
    pub values: Vec<(u128, u128)>,
    pub max_size: usize,
}

pub struct Program {
    /// header unions: name and member headers
    pub unions: Vec<(String, Vec<HeaderId>)>,
    pub profiles: Vec<ActionProfile>,
    pub vsets: Vec<ValueSet>,
    /// max bytes of each varbit slot
    pub varbit_max: Vec<u32>,
    pub headers: Vec<HeaderInfo>,
    pub fields: Vec<FieldInfo>,
    pub stacks: Vec<StackInfo>,
    pub field_lists: Vec<(u32, Vec<FieldId>)>,
    pub errors: Vec<(String, u32)>,
    pub parser: Parser,
    pub deparser: Vec<HeaderId>,
    pub actions: Vec<Action>,
    pub tables: Vec<TableDef>,
    pub conds: Vec<Conditional>,
    pub ingress: Control,
    pub egress: Control,
    pub calcs: Vec<Calculation>,
    pub checksums: Vec<Checksum>,
    pub counters: Vec<CounterSpec>,
    pub meters: Vec<MeterSpec>,
    pub registers: Vec<RegisterSpec>,
    pub learn_lists: Vec<(u32, LearnList)>,
    pub std: StdMeta,
    pub err_packet_too_short: u32,
    pub err_stack_out_of_bounds: u32,
    /// highest extracted header byte count (for sizing scratch buffers)
    pub max_header_bytes: usize,
    /// FNV-1a hash of the JSON text the program was loaded from: the switch's config
    /// version until a controller sets one (two loads of one program agree)
    pub fingerprint: u64,
}

impl Program {
    pub fn field_by_name(&self, name: &str) -> Option<FieldId> {
        self.fields
            .iter()
            .position(|f| f.name == name)
            .map(|i| i as FieldId)
    }
    pub fn header_by_name(&self, name: &str) -> Option<HeaderId> {
        self.headers
            .iter()
            .position(|h| h.name == name)
            .map(|i| i as HeaderId)
    }
    /// Finds a table by full name or by a dot-separated suffix ("ipv4_lpm" for "MyIngress.ipv4_lpm").
    pub fn table_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.tables.iter().map(|t| t.name.as_str()), name)
    }
    pub fn profile_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.profiles.iter().map(|a| a.name.as_str()), name).or_else(|| {
            let t = self.table_by_name(name)?;
            self.tables[t].profile.map(|p| p as usize)
        })
    }
    pub fn action_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.actions.iter().map(|a| a.name.as_str()), name)
    }
    pub fn counter_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.counters.iter().map(|a| a.name.as_str()), name)
    }
    pub fn meter_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.meters.iter().map(|a| a.name.as_str()), name)
    }
    pub fn register_by_name(&self, name: &str) -> Option<usize> {
        find_by_suffix(self.registers.iter().map(|a| a.name.as_str()), name)
    }
    pub fn field_list(&self, id: u32) -> Option<&[FieldId]> {
        self.field_lists
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, v)| v.as_slice())
    }
}

pub fn find_by_suffix<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
    name: &str,
) -> Option<usize> {
    if let Some(i) = names.clone().position(|n| n == name) {
        return Some(i);
    }
    let mut found = None;
    for (i, n) in names.enumerate() {
        if n.ends_with(name) && n.as_bytes().get(n.len() - name.len() - 1) == Some(&b'.') {
            if found.is_some() {
                return None; // ambiguous
            }
            found = Some(i);
        }
    }
    found
}

pub fn width_mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}
