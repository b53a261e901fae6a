//! Lowering: walks the v1model program (from `main`) and flattens it into the
//! BMv2 intermediate representation: header types and instances, parse states,
//! deparser order, actions with primitives, tables and conditionals per
//! pipeline, extern arrays, calculations, checksums, field lists and digests.
//! Expression typing and width rules come from `check`.

use crate::ast::*;
use crate::check::{mask, shl, shr, sign_extend, unify, Type, TypeEnv};
use crate::diag::{Error, PResult, Sink, Span};
use serde_json::{json, Value as J};
use std::collections::{BTreeMap, HashMap, HashSet};

mod equality;
mod params;
use params::fn_is_simple;

// ---------------------------------------------------------------- IR

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

fn hexs(v: u128, neg: bool) -> String {
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
    fn is_bool_op(&self) -> bool {
        matches!(self, X::Bool(_))
            || matches!(self, X::Op(op, ..) if matches!(*op, "==" | "!=" | "<" | ">" | "<=" | ">=" | "and" | "or" | "not" | "d2b" | "valid"))
    }
}

// ---------------------------------------------------------------- places & bindings

#[derive(Clone, Debug)]
pub enum Place {
    Field {
        hdr: String,
        field: String,
        ty: Type,
    },
    Header {
        inst: String,
        ty: String,
    },
    Stack {
        name: String,
        elem: String,
        size: u32,
    },
    Struct {
        ty: String,
        members: Vec<(String, Place)>,
    },
    Union {
        name: String,
        ty: String,
        members: Vec<(String, Place)>,
    },
    /// `stack[i]` with a run-time index: a header expression.
    DynHeader {
        stack: String,
        elem: String,
        deref: X,
    },
    /// A field of a `DynHeader`: an lvalue expression.
    DynField {
        x: X,
        ty: Type,
    },
}

impl Place {
    fn ty(&self) -> Type {
        match self {
            Place::Field { ty, .. } => ty.clone(),
            Place::Header { ty, .. } => Type::Header(ty.clone()),
            Place::Stack { elem, size, .. } => {
                Type::Stack(Box::new(Type::Header(elem.clone())), *size)
            }
            Place::Struct { ty, .. } => Type::Struct(ty.clone()),
            Place::Union { ty, .. } => Type::Union(ty.clone()),
            Place::DynHeader { elem, .. } => Type::Header(elem.clone()),
            Place::DynField { ty, .. } => ty.clone(),
        }
    }
}

#[derive(Clone, Debug)]
enum Bind {
    Place(Place),
    Val(X, Type),
    Const(u128, Type),
    Extern { kind: String, name: String },
    Table(String),
    ValueSet(String),
    PacketIn,
    PacketOut,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ctx {
    Parser,
    Action,
    Cond,
    Checksum,
    Deparser,
}

struct ActionCtx {
    prims: Vec<J>,
    returns: Vec<usize>,
}

/// Per-control information.
#[derive(Clone)]
struct CtlInfo {
    name: String,
    actions: HashMap<String, Action>,
    tables: HashMap<String, Table>,
    applied: HashSet<String>,
    pipe: usize,
}

pub struct Lower<'a> {
    prog: &'a Program,
    text: &'a str,
    pub env: TypeEnv,
    sink: &'a mut Sink,
    ir: Ir,
    scopes: Vec<HashMap<String, Bind>>,
    scalar_fields: Vec<(String, FieldW)>,
    header_type_set: HashSet<String>,
    global_actions: HashMap<String, Action>,
    functions: HashMap<String, Decl>,
    action_cache: HashMap<String, usize>,
    ctl: Option<CtlInfo>,
    ctx: Ctx,
    act: Option<ActionCtx>,
    node_count: usize,
    tmp_count: usize,
    inline_depth: usize,
    hdr_struct: Option<String>,
    meta_struct: Option<String>,
    pipelines: Vec<Pipeline>,
    synth_count: usize,
    table_names: HashSet<String>,
    root_places: HashMap<String, Place>,
    parser_extra_ops: Vec<J>,
    inlined: HashMap<String, usize>,
    key_prims: Vec<J>,
    pstate_prefix: String,
    pstate_accept: J,
    fn_ret: Option<Place>,
    /// Set while lowering an assignment target whose right-hand side has side effects.
    snap_index: bool,
    /// Copy-outs of the inlined bodies being lowered (outermost first), for `exit`.
    copy_frames: Vec<Vec<(Place, Place)>>,
    too_big: bool,
    header_names: HashSet<String>,
    scalar_names: HashSet<String>,
}

pub fn lower(prog: &Program, text: &str, sink: &mut Sink) -> Option<Ir> {
    let mut errs = vec![];
    let env = TypeEnv::build(prog, &mut errs);
    for e in errs {
        sink.push(e);
    }
    let mut l = Lower {
        prog,
        text,
        env,
        sink,
        ir: Ir::default(),
        scopes: vec![HashMap::new()],
        scalar_fields: vec![],
        header_type_set: HashSet::new(),
        global_actions: HashMap::new(),
        functions: HashMap::new(),
        action_cache: HashMap::new(),
        ctl: None,
        ctx: Ctx::Action,
        act: None,
        node_count: 0,
        tmp_count: 0,
        inline_depth: 0,
        hdr_struct: None,
        meta_struct: None,
        pipelines: vec![],
        synth_count: 0,
        table_names: HashSet::new(),
        root_places: HashMap::new(),
        parser_extra_ops: vec![],
        inlined: HashMap::new(),
        key_prims: vec![],
        pstate_prefix: String::new(),
        pstate_accept: J::Null,
        fn_ret: None,
        snap_index: false,
        copy_frames: vec![],
        too_big: false,
        header_names: HashSet::new(),
        scalar_names: HashSet::new(),
    };
    l.run()
}

impl<'a> Lower<'a> {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.sink.err(span, msg);
    }

    fn src(&self, s: Span) -> String {
        let lo = (s.lo as usize).min(self.text.len());
        let hi = (s.hi as usize).min(self.text.len()).max(lo);
        self.text.get(lo..hi).unwrap_or("").to_string()
    }

    fn lookup(&self, n: &str) -> Option<Bind> {
        for s in self.scopes.iter().rev() {
            if let Some(b) = s.get(n) {
                return Some(b.clone());
            }
        }
        None
    }

    fn bind(&mut self, n: &str, b: Bind) {
        self.scopes.last_mut().unwrap().insert(n.to_string(), b);
    }

    fn find_decl(&self, name: &str) -> Option<&'a Decl> {
        self.prog.decls.iter().find(|d| {
            d.name() == Some(name)
                && match d {
                    Decl::Parser { has_body, .. } | Decl::Control { has_body, .. } => *has_body,
                    _ => true,
                }
        })
    }

    fn run(&mut self) -> Option<Ir> {
        // globals
        for d in &self.prog.decls {
            match d {
                Decl::Action(a) => {
                    self.global_actions.insert(a.name.clone(), a.clone());
                }
                Decl::Function { name, .. } => {
                    self.functions.insert(name.clone(), d.clone());
                }
                Decl::Const {
                    ty,
                    name,
                    value,
                    span,
                    ..
                } if !self.env.consts.contains_key(name) => {
                    // non-integer constant (e.g. enum member): evaluate as an expression
                    let t = self.env.resolve(ty).unwrap_or(Type::Unknown);
                    match self.env.const_eval(value, &HashMap::new()) {
                        Ok((v, _)) => {
                            self.env.consts.insert(name.clone(), (t, v));
                        }
                        Err(_) => self.err(
                            *span,
                            format!(
                                "initializer of constant '{}' is not a compile-time constant",
                                name
                            ),
                        ),
                    }
                }
                _ => {}
            }
        }
        self.ir.errors = self.env.errors.clone();
        for en in self.env.enum_order.clone() {
            let e = self.env.enums[&en].clone();
            if e.width.is_none() {
                self.ir.enums.push((en, e.members.clone()));
            }
        }
        // controller headers
        for d in &self.prog.decls {
            if let Decl::Header {
                annos,
                name,
                fields,
                ..
            } = d
            {
                if let Some(ch) = anno_str(annos, "controller_header") {
                    let mut fs = vec![];
                    for f in fields {
                        let w = self
                            .env
                            .resolve(&f.ty)
                            .ok()
                            .and_then(|t| t.width())
                            .unwrap_or(0);
                        fs.push((f.name.clone(), w, f.annos.clone()));
                    }
                    let _ = name;
                    self.ir.ctrl_headers.push(CtrlHeader {
                        name: ch,
                        annos: annos.clone(),
                        fields: fs,
                    });
                }
            }
        }
        let main = self.prog.decls.iter().find_map(|d| match d {
            Decl::Instance(i) if i.name == "main" => Some(i.clone()),
            _ => None,
        });
        let main = main?;
        match &main.ty {
            TypeRef::Named(n, _, _) if n == "V1Switch" => {}
            _ => {
                self.err(
                    main.span,
                    "only the v1model package V1Switch is supported for 'main'",
                );
                return None;
            }
        }
        if main.args.len() != 6 {
            self.err(main.span, format!("V1Switch expects 6 arguments (parser, verifyChecksum, ingress, egress, computeChecksum, deparser), got {}", main.args.len()));
            return None;
        }
        let mut blocks = vec![];
        for a in &main.args {
            let name = match &a.value.kind {
                ExprKind::Call(f, _, _) => match &f.kind {
                    ExprKind::Name(n) => Some(n.clone()),
                    _ => None,
                },
                ExprKind::Name(n) => Some(n.clone()),
                _ => None,
            };
            match name.and_then(|n| self.find_decl(&n).map(|d| (n, d))) {
                Some((_, d)) => blocks.push(d),
                None => {
                    self.err(
                        a.value.span,
                        "expected an instantiation of a parser or control declared in this program",
                    );
                    return None;
                }
            }
        }
        // standard metadata + roots from the parser's parameter types
        self.scalar_fields.clear();
        if let Decl::Parser { params, .. } = blocks[0] {
            if params.len() != 4 {
                self.err(main.args[0].value.span, "the v1model parser must have 4 parameters (packet_in, out headers, inout metadata, inout standard_metadata_t)");
                return None;
            }
            if let Ok(Type::Struct(h)) = self.env.resolve(&params[1].ty) {
                self.hdr_struct = Some(h);
            }
            if let Ok(Type::Struct(m)) = self.env.resolve(&params[2].ty) {
                self.meta_struct = Some(m);
            }
        } else {
            self.err(
                main.args[0].value.span,
                "the first argument of V1Switch must be a parser",
            );
            return None;
        }
        // std metadata header
        self.make_std_meta();
        if let Some(h) = self.hdr_struct.clone() {
            let p = self.make_place(&h, "", Type::Struct(h.clone()), false, "");
            self.root_places.insert(h, p);
        }
        if let Some(m) = self.meta_struct.clone() {
            if Some(&m) != self.hdr_struct.as_ref() {
                let p = self.make_place(
                    &m,
                    "userMetadata",
                    Type::Struct(m.clone()),
                    true,
                    "userMetadata",
                );
                self.root_places.insert(m, p);
            }
        }
        self.pipelines = vec![
            Pipeline {
                name: "ingress".into(),
                ..Default::default()
            },
            Pipeline {
                name: "egress".into(),
                ..Default::default()
            },
        ];
        // top-level extern instances (registers, counters, ... declared outside controls)
        for d in &self.prog.decls {
            if let Decl::Instance(i) = d {
                if i.name != "main" {
                    self.declare_instance(i, "");
                }
            }
        }
        // parser
        self.lower_parser(blocks[0]);
        self.lower_checksum_ctl(blocks[1], true);
        self.lower_control(blocks[2], 0);
        self.lower_control(blocks[3], 1);
        self.lower_checksum_ctl(blocks[4], false);
        self.lower_deparser(blocks[5]);
        // scalars header type (padded)
        let mut fields = std::mem::take(&mut self.scalar_fields);
        let total: u32 = fields
            .iter()
            .map(|f| if let FieldW::Fixed(w, _) = f.1 { w } else { 0 })
            .sum();
        if !total.is_multiple_of(8) {
            fields.push(("_padding_0".into(), FieldW::Fixed(8 - total % 8, false)));
        }
        self.ir.header_types.insert(
            0,
            HeaderType {
                name: "scalars_0".into(),
                fields,
            },
        );
        self.ir.headers.insert(
            0,
            HeaderInst {
                name: "scalars".into(),
                ty: "scalars_0".into(),
                metadata: true,
            },
        );
        self.ir.pipelines = std::mem::take(&mut self.pipelines);
        Some(std::mem::take(&mut self.ir))
    }

    // ------------------------------------------------------------ instances

    fn add_header_type(&mut self, tname: &str, pad: bool) {
        if self.header_type_set.contains(tname) {
            return;
        }
        self.header_type_set.insert(tname.to_string());
        let def = match self.env.composite(tname) {
            Some(d) => d.clone(),
            None => return,
        };
        let mut fields = vec![];
        let mut total = 0;
        for (n, t, _) in &def.fields {
            let fw = match t {
                Type::Varbit(w) => FieldW::Var(*w),
                Type::Int(w) => FieldW::Fixed(*w, true),
                t => FieldW::Fixed(t.width().unwrap_or(0), false),
            };
            if let FieldW::Fixed(w, _) = fw {
                total += w;
            }
            fields.push((n.clone(), fw));
        }
        if pad && total % 8 != 0 {
            fields.push(("_padding".into(), FieldW::Fixed(8 - total % 8, false)));
        }
        self.ir.header_types.push(HeaderType {
            name: tname.to_string(),
            fields,
        });
    }

    fn add_header(&mut self, name: &str, ty: &str, metadata: bool) -> usize {
        let mut n = name.to_string();
        let mut k = 0;
        while self.header_names.contains(&n) || n == "scalars" || n == "standard_metadata" {
            k += 1;
            n = format!("{}_{}", name, k);
        }
        self.header_names.insert(n.clone());
        self.add_header_type(ty, metadata);
        self.ir.headers.push(HeaderInst {
            name: n,
            ty: ty.to_string(),
            metadata,
        });
        self.ir.headers.len() // index after scalars insertion (+1 applied: scalars is id 0)
    }

    fn scalar(&mut self, name: &str, ty: &Type) -> Place {
        let mut n = name.to_string();
        let mut k = 0;
        while self.scalar_names.contains(&n) {
            k += 1;
            n = format!("{}_{}", name, k);
        }
        self.scalar_names.insert(n.clone());
        let fw = match ty {
            Type::Int(w) => FieldW::Fixed(*w, true),
            Type::Varbit(w) => FieldW::Var(*w),
            t => FieldW::Fixed(t.width().unwrap_or(32).max(1), false),
        };
        self.scalar_fields.push((n.clone(), fw));
        Place::Field {
            hdr: "scalars".into(),
            field: n,
            ty: ty.clone(),
        }
    }

    fn make_std_meta(&mut self) {
        let def = match self.env.composite("standard_metadata_t") {
            Some(d) => d.clone(),
            None => return,
        };
        let mut fields = vec![];
        let mut total = 0;
        let mut members = vec![];
        for (n, t, annos) in &def.fields {
            let w = t.width().unwrap_or(32);
            total += w;
            fields.push((n.clone(), FieldW::Fixed(w, false)));
            members.push((
                n.clone(),
                Place::Field {
                    hdr: "standard_metadata".into(),
                    field: n.clone(),
                    ty: t.clone(),
                },
            ));
            if let Some(a) = anno_str(annos, "alias") {
                self.ir
                    .field_aliases
                    .push((a, "standard_metadata".into(), n.clone()));
            }
        }
        if total % 8 != 0 {
            fields.push(("_padding".into(), FieldW::Fixed(8 - total % 8, false)));
        }
        self.ir.header_types.push(HeaderType {
            name: "standard_metadata".into(),
            fields,
        });
        self.ir.headers.push(HeaderInst {
            name: "standard_metadata".into(),
            ty: "standard_metadata".into(),
            metadata: true,
        });
        self.root_places.insert(
            "standard_metadata_t".into(),
            Place::Struct {
                ty: "standard_metadata_t".into(),
                members,
            },
        );
    }

    /// Create storage for a value of type `ty`; `hname` names headers, `sname` scalar fields.
    fn make_place(
        &mut self,
        _tyname: &str,
        sname: &str,
        ty: Type,
        meta: bool,
        hname: &str,
    ) -> Place {
        if self.ir.headers.len() + self.scalar_fields.len() > 100_000 {
            if !self.too_big {
                self.too_big = true;
                self.err(
                    Span::default(),
                    "the program declares more than 100000 header instances and metadata fields",
                );
            }
            return Place::Struct {
                ty: String::new(),
                members: vec![],
            };
        }
        match &ty {
            Type::Struct(n) => {
                let def = match self.env.composite(n) {
                    Some(d) => d.clone(),
                    None => {
                        return Place::Struct {
                            ty: n.clone(),
                            members: vec![],
                        }
                    }
                };
                let mut members = vec![];
                for (f, ft, _) in &def.fields {
                    let sn = if sname.is_empty() {
                        f.clone()
                    } else {
                        format!("{}.{}", sname, f)
                    };
                    let hn = if hname.is_empty() {
                        f.clone()
                    } else {
                        format!("{}_{}", hname, f)
                    };
                    let p = self.make_place(n, &sn, ft.clone(), meta, &hn);
                    members.push((f.clone(), p));
                }
                Place::Struct {
                    ty: n.clone(),
                    members,
                }
            }
            Type::Header(h) => {
                let hn = if hname.is_empty() { sname } else { hname };
                self.add_header(hn, h, false);
                let inst = self.ir.headers.last().unwrap().name.clone();
                Place::Header {
                    inst,
                    ty: h.clone(),
                }
            }
            Type::Union(u) => {
                let def = self.env.composite(u).cloned();
                let hn = if hname.is_empty() {
                    sname.to_string()
                } else {
                    hname.to_string()
                };
                let mut members = vec![];
                let mut ids = vec![];
                if let Some(def) = def {
                    for (f, ft, _) in &def.fields {
                        if let Type::Header(h) = ft {
                            let id = self.add_header(&format!("{}.{}", hn, f), h, false);
                            ids.push(id);
                            let inst = self.ir.headers.last().unwrap().name.clone();
                            members.push((
                                f.clone(),
                                Place::Header {
                                    inst,
                                    ty: h.clone(),
                                },
                            ));
                        }
                    }
                    if !self.ir.union_types.iter().any(|x| x.0 == *u) {
                        let ms = def
                            .fields
                            .iter()
                            .map(|(f, t, _)| (f.clone(), t.name()))
                            .collect();
                        self.ir.union_types.push((u.clone(), ms));
                    }
                }
                self.ir.unions.push((hn.clone(), u.clone(), ids));
                Place::Union {
                    name: hn,
                    ty: u.clone(),
                    members,
                }
            }
            Type::Stack(et, n) => {
                let hn = if hname.is_empty() {
                    sname.to_string()
                } else {
                    hname.to_string()
                };
                let elem = match &**et {
                    Type::Header(h) => h.clone(),
                    _ => {
                        return Place::Stack {
                            name: hn,
                            elem: String::new(),
                            size: 0,
                        };
                    }
                };
                let mut ids = vec![];
                for i in 0..*n {
                    ids.push(self.add_header(&format!("{}[{}]", hn, i), &elem, false));
                }
                self.ir.stacks.push((hn.clone(), elem.clone(), ids));
                Place::Stack {
                    name: hn,
                    elem,
                    size: *n,
                }
            }
            _ => {
                let _ = meta;
                self.scalar(sname, &ty)
            }
        }
    }

    fn bind_block_params(&mut self, params: &[Param]) {
        for p in params {
            let t = match self.env.resolve(&p.ty) {
                Ok(t) => t,
                Err(e) => {
                    self.sink.push(e);
                    continue;
                }
            };
            let b = match &t {
                Type::Extern(n) if n == "packet_in" => Bind::PacketIn,
                Type::Extern(n) if n == "packet_out" => Bind::PacketOut,
                Type::Struct(n) => match self.root_places.get(n) {
                    Some(p) => Bind::Place(p.clone()),
                    None => {
                        self.err(p.span, format!("parameter '{}' of type {} does not match the headers or metadata type of the parser", p.name, n));
                        continue;
                    }
                },
                _ => {
                    self.err(
                        p.span,
                        format!(
                            "unsupported parameter type {} for a v1model block",
                            t.name()
                        ),
                    );
                    continue;
                }
            };
            self.bind(&p.name, b);
        }
    }

    fn declare_instance(&mut self, inst: &Instance, prefix: &str) {
        let tname = match &inst.ty {
            TypeRef::Named(n, _, _) => n.clone(),
            _ => {
                self.err(inst.span, "unsupported instantiation");
                return;
            }
        };
        let fq = if prefix.is_empty() {
            inst.name.clone()
        } else {
            format!("{}.{}", prefix, inst.name)
        };
        let fq = anno_str(&inst.annos, "name")
            .map(|n| {
                if let Some(s) = n.strip_prefix('.') {
                    s.to_string()
                } else if prefix.is_empty() {
                    n
                } else {
                    format!("{}.{}", prefix, n)
                }
            })
            .unwrap_or(fq);
        let int_arg = |l: &mut Lower, i: usize| -> u64 {
            match inst.args.get(i) {
                Some(a) => match l.env.const_eval(&a.value, &HashMap::new()) {
                    Ok((v, _)) => v as u64,
                    Err(e) => {
                        l.sink.push(e);
                        0
                    }
                },
                None => {
                    l.err(
                        inst.span,
                        format!("missing constructor argument for {}", tname),
                    );
                    0
                }
            }
        };
        let enum_arg = |i: usize| -> String {
            match inst.args.get(i).map(|a| &a.value.kind) {
                Some(ExprKind::Member(_, m)) => m.clone(),
                _ => String::new(),
            }
        };
        let kind: &str = match tname.as_str() {
            "counter" | "direct_counter" | "meter" | "direct_meter" | "register" => {
                let direct = tname.starts_with("direct");
                let size = if direct { 0 } else { int_arg(self, 0) };
                let unit = if tname == "register" {
                    String::new()
                } else {
                    enum_arg(if direct { 0 } else { 1 })
                };
                let bitwidth = if tname == "register" {
                    match &inst.ty {
                        TypeRef::Named(_, args, _) if !args.is_empty() => self
                            .env
                            .resolve(&args[0])
                            .ok()
                            .and_then(|t| t.width())
                            .unwrap_or(32),
                        _ => {
                            self.err(
                                inst.span,
                                "register needs a type argument, e.g. register<bit<32>>(N)",
                            );
                            32
                        }
                    }
                } else {
                    0
                };
                let k: &'static str = match tname.as_str() {
                    "counter" | "direct_counter" => "counter",
                    "meter" | "direct_meter" => "meter",
                    _ => "register",
                };
                self.ir.arrays.push(ExternArray {
                    kind: k,
                    name: fq.clone(),
                    size,
                    direct_table: None,
                    unit,
                    bitwidth,
                    result_target: None,
                    annos: inst.annos.clone(),
                });
                "array"
            }
            "action_profile" | "action_selector" => {
                let (size, sel) = if tname == "action_profile" {
                    (int_arg(self, 0), None)
                } else {
                    (int_arg(self, 1), Some((enum_arg(0), vec![])))
                };
                let pipe = self.ctl.as_ref().map(|c| c.pipe).unwrap_or(0);
                self.pipelines[pipe].profiles.push(Profile {
                    name: fq.clone(),
                    size,
                    selector: sel,
                    tables: vec![],
                    annos: inst.annos.clone(),
                });
                "profile"
            }
            "Checksum16" => "checksum16",
            _ => {
                // sub-parser / sub-control instance
                match self.find_decl(&tname) {
                    Some(Decl::Parser { .. }) | Some(Decl::Control { .. }) => "sub",
                    _ => {
                        self.err(inst.span, format!("unsupported extern or type '{}'", tname));
                        return;
                    }
                }
            }
        };
        let _ = kind;
        self.bind(
            &inst.name,
            Bind::Extern {
                kind: tname,
                name: fq,
            },
        );
    }

    // ------------------------------------------------------------ parser

    fn lower_parser(&mut self, d: &'a Decl) {
        let Decl::Parser {
            name,
            params,
            locals,
            states,
            ..
        } = d
        else {
            return;
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Parser;
        self.ctl = Some(CtlInfo {
            name: name.clone(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            applied: HashSet::new(),
            pipe: 0,
        });
        let mut init_ops = vec![];
        for l in locals {
            match l {
                Local::Var(s) => {
                    self.act = Some(ActionCtx {
                        prims: vec![],
                        returns: vec![],
                    });
                    let ops = self.parser_stmt(s, name);
                    init_ops.extend(ops);
                }
                Local::Inst(i) => self.declare_instance(i, name),
                Local::ValueSet {
                    annos,
                    ty,
                    size,
                    name: vn,
                    span,
                } => {
                    let t = match self.env.resolve(ty) {
                        Ok(t) => t,
                        Err(e) => {
                            self.sink.push(e);
                            continue;
                        }
                    };
                    let (w, fields) = match &t {
                        Type::Struct(sn) => {
                            let fs: Vec<(String, u32)> = self
                                .env
                                .composite(sn)
                                .map(|c| {
                                    c.fields
                                        .iter()
                                        .map(|f| (f.0.clone(), f.1.width().unwrap_or(0)))
                                        .collect()
                                })
                                .unwrap_or_default();
                            (fs.iter().map(|f| f.1).sum(), fs)
                        }
                        t => (t.width().unwrap_or(0), vec![]),
                    };
                    if w == 0 {
                        self.err(
                            *span,
                            "value_set element type must be bit<N> or a struct of bit<N> fields",
                        );
                    }
                    let sz = self
                        .env
                        .const_eval(size, &HashMap::new())
                        .map(|x| x.0 as u64)
                        .unwrap_or(0);
                    let fq = format!("{}.{}", name, vn);
                    self.ir.value_sets.push(ValueSetInfo {
                        name: fq.clone(),
                        width: w,
                        size: sz,
                        annos: annos.clone(),
                        fields,
                    });
                    self.bind(vn, Bind::ValueSet(fq));
                }
                Local::Action(a) => self.err(a.span, "actions are not allowed in parsers"),
                Local::Table(t) => self.err(t.span, "tables are not allowed in parsers"),
            }
        }
        let names: HashSet<&str> = states.iter().map(|s| s.name.as_str()).collect();
        if !names.contains("start") {
            self.err(d_span(d), format!("parser '{}' has no 'start' state", name));
        }
        let mut seen = HashSet::new();
        for st in states {
            if !seen.insert(st.name.clone()) {
                self.err(st.span, format!("state '{}' is declared twice", st.name));
            }
            if st.name == "accept" || st.name == "reject" {
                self.err(st.span, format!("state '{}' is reserved", st.name));
            }
        }
        self.pstate_prefix = String::new();
        self.pstate_accept = J::Null;
        self.parser_states(name, states, &names, init_ops);
        self.ir.parser_init = "start".into();
        self.act = None;
        self.scopes.pop();
        self.ctl = None;
    }

    /// Lowers the states of a parser whose state names get `self.pstate_prefix`
    /// and whose `accept` continues at `self.pstate_accept`. Sub-parser calls
    /// split a state: the sub-parser's states are inlined (prefixed with the
    /// instance name) and its accept continues with the rest of the state.
    fn parser_states(
        &mut self,
        pname: &str,
        states: &'a [ParserState],
        names: &HashSet<&str>,
        init_ops: Vec<J>,
    ) {
        for st in states.iter() {
            self.scopes.push(HashMap::new());
            let mut cur = format!("{}{}", self.pstate_prefix, st.name);
            let mut ops = if st.name == "start" {
                init_ops.clone()
            } else {
                vec![]
            };
            let mut k = 0;
            for s in &st.stmts {
                match self.subparser_call(s) {
                    Ok(Some((sub_states, sub_params, inst, args))) => {
                        let cont = format!(
                            "{}.after_{}{}",
                            cur,
                            inst,
                            if k == 0 {
                                String::new()
                            } else {
                                format!("_{}", k)
                            }
                        );
                        k += 1;
                        let sub_prefix = format!("{}{}.", self.pstate_prefix, inst);
                        let id = self.ir.parser_states.len();
                        self.ir.parser_states.push(json!({"name": cur, "id": id, "parser_ops": ops, "transition_key": [],
                            "transitions": [{"type": "default", "value": null, "mask": null, "next_state": format!("{}start", sub_prefix)}]}));
                        // bind the sub-parser's parameters
                        self.scopes.push(HashMap::new());
                        let mut ok = true;
                        for (p, a) in sub_params.iter().zip(args.iter()) {
                            let t = match self.env.resolve(&p.ty) {
                                Ok(t) => t,
                                Err(e) => {
                                    self.sink.push(e);
                                    ok = false;
                                    break;
                                }
                            };
                            if matches!(&t, Type::Extern(n) if n == "packet_in") {
                                self.bind(&p.name, Bind::PacketIn);
                                continue;
                            }
                            let mut pp = p.clone();
                            if pp.dir == Dir::None {
                                pp.dir = Dir::In;
                            }
                            match self.bind_arg(&pp, &t, &a.value) {
                                Ok(b) => self.bind(&p.name, b),
                                Err(e) => {
                                    self.sink.push(e);
                                    ok = false;
                                }
                            }
                        }
                        if ok {
                            // the sub-parser's own locals
                            if let Some(Decl::Parser { locals, .. }) =
                                self.find_decl_parser_by_states(sub_states)
                            {
                                for l in locals {
                                    match l {
                                        Local::Var(v) => {
                                            if let StmtKind::Var(_, ty, vn, _) = &v.kind {
                                                match self.env.resolve(ty) {
                                                    Ok(t) => {
                                                        let fq = format!("{}{}", self.pstate_prefix, inst);
                                                        let p = self.make_place("", &format!("{}.{}", fq, vn), t, true, &format!("{}_{}", fq.replace('.', "_"), vn));
                                                        self.bind(vn, Bind::Place(p));
                                                    }
                                                    Err(e) => self.sink.push(e),
                                                }
                                            }
                                        }
                                        Local::Inst(i) => self.declare_instance(i, pname),
                                        _ => self.err(st.span, "only variables and instances are supported as locals of a sub-parser"),
                                    }
                                }
                            }
                            let saved = (self.pstate_prefix.clone(), self.pstate_accept.clone());
                            self.pstate_prefix = sub_prefix;
                            self.pstate_accept = J::String(cont.clone());
                            let sub_names: HashSet<&str> =
                                sub_states.iter().map(|s| s.name.as_str()).collect();
                            self.inline_depth += 1;
                            self.parser_states(pname, sub_states, &sub_names, vec![]);
                            self.inline_depth -= 1;
                            self.pstate_prefix = saved.0;
                            self.pstate_accept = saved.1;
                        }
                        self.scopes.pop();
                        cur = cont;
                        ops = vec![];
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.sink.push(e);
                        continue;
                    }
                }
                if let StmtKind::If(c, a, b) = &s.kind {
                    // split the state: evaluate the condition into a temporary and
                    // select on it; both branches continue in a join state
                    let (ncur, nops) = self.parser_if(pname, cur, ops, c, a, b.as_deref(), &mut k);
                    cur = ncur;
                    ops = nops;
                    continue;
                }
                self.act = Some(ActionCtx {
                    prims: vec![],
                    returns: vec![],
                });
                self.parser_extra_ops.clear();
                let r = self.parser_stmt(s, pname);
                ops.append(&mut self.parser_extra_ops);
                ops.extend(r);
            }
            let (key, trans) = match &st.transition {
                None => (
                    vec![],
                    vec![
                        json!({"type": "default", "value": null, "mask": null, "next_state": null}),
                    ],
                ),
                Some(Transition::Direct(n, sp)) => {
                    let ns = self.state_ref(n, *sp, names);
                    (
                        vec![],
                        vec![
                            json!({"type": "default", "value": null, "mask": null, "next_state": ns}),
                        ],
                    )
                }
                Some(Transition::Select(keys, cases, _)) => {
                    self.parser_extra_ops.clear();
                    let r = self.lower_select(keys, cases, names);
                    ops.append(&mut self.parser_extra_ops);
                    r
                }
            };
            self.scopes.pop();
            let id = self.ir.parser_states.len();
            self.ir.parser_states.push(json!({
                "name": cur, "id": id, "parser_ops": ops, "transition_key": key, "transitions": trans
            }));
        }
    }

    /// Lowers `if (c) a else b` inside parser state `cur` (with `ops` so far);
    /// returns the join state's name and (empty) ops.
    #[allow(clippy::too_many_arguments)]
    fn parser_if(
        &mut self,
        pname: &str,
        cur: String,
        mut ops: Vec<J>,
        c: &Expr,
        a: &Stmt,
        b: Option<&Stmt>,
        k: &mut usize,
    ) -> (String, Vec<J>) {
        let tag = *k;
        *k += 1;
        let then_name = format!("{}.then{}", cur, tag);
        let else_name = format!("{}.else{}", cur, tag);
        let join = format!("{}.join{}", cur, tag);
        self.parser_extra_ops.clear();
        let cond = self.rv(c, Some(&Type::Bool));
        ops.append(&mut self.parser_extra_ops);
        let key = match cond {
            Ok((x, Type::Bool)) => {
                let tmp = self.parser_temp(X::un("b2d", x), &Type::Bit(1));
                ops.append(&mut self.parser_extra_ops);
                match tmp {
                    X::Field(h, f) => json!({"type": "field", "value": [h, f]}),
                    _ => J::Null,
                }
            }
            Ok((_, t)) => {
                self.err(c.span, format!("condition must be bool, not {}", t.name()));
                J::Null
            }
            Err(e) => {
                self.sink.push(e);
                J::Null
            }
        };
        let id = self.ir.parser_states.len();
        let else_target = if b.is_some() {
            else_name.clone()
        } else {
            join.clone()
        };
        self.ir
            .parser_states
            .push(json!({"name": cur, "id": id, "parser_ops": ops,
            "transition_key": if key.is_null() { json!([]) } else { json!([key]) },
            "transitions": [
                {"type": "hexstr", "value": "0x01", "mask": null, "next_state": then_name},
                {"type": "default", "value": null, "mask": null, "next_state": else_target}]}));
        for (name, body) in [(then_name, Some(a)), (else_name, b)] {
            let Some(body) = body else { continue };
            let stmts: Vec<Stmt> = match &body.kind {
                StmtKind::Block(v) => v.clone(),
                _ => vec![body.clone()],
            };
            self.scopes.push(HashMap::new());
            let mut bcur = name;
            let mut bops: Vec<J> = vec![];
            let mut bk = 0;
            for s in &stmts {
                if let StmtKind::If(c2, a2, b2) = &s.kind {
                    let (n2, o2) =
                        self.parser_if(pname, bcur, bops, c2, a2, b2.as_deref(), &mut bk);
                    bcur = n2;
                    bops = o2;
                    continue;
                }
                self.act = Some(ActionCtx {
                    prims: vec![],
                    returns: vec![],
                });
                self.parser_extra_ops.clear();
                let r = self.parser_stmt(s, pname);
                bops.append(&mut self.parser_extra_ops);
                bops.extend(r);
            }
            self.scopes.pop();
            let id = self.ir.parser_states.len();
            self.ir.parser_states.push(json!({"name": bcur, "id": id, "parser_ops": bops, "transition_key": [],
                "transitions": [{"type": "default", "value": null, "mask": null, "next_state": join}]}));
        }
        (join, vec![])
    }

    fn find_decl_parser_by_states(&self, states: &[ParserState]) -> Option<&'a Decl> {
        self.prog.decls.iter().find(|d| matches!(d, Decl::Parser { states: s, has_body: true, .. } if std::ptr::eq(s.as_slice(), states)))
    }

    /// `inst.apply(args)` on a sub-parser instance: its states, parameters and args.
    #[allow(clippy::type_complexity)]
    fn subparser_call(
        &mut self,
        s: &Stmt,
    ) -> PResult<Option<(&'a [ParserState], &'a [Param], String, Vec<Arg>)>> {
        let StmtKind::Call(c) = &s.kind else {
            return Ok(None);
        };
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(None);
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return Ok(None);
        };
        if m != "apply" {
            return Ok(None);
        }
        let ExprKind::Name(n) = &b.kind else {
            return Ok(None);
        };
        let kind = match self.lookup(n) {
            Some(Bind::Extern { kind, .. }) => kind,
            None => n.clone(),
            _ => return Ok(None),
        };
        let Some(Decl::Parser { params, states, .. }) = self.find_decl(&kind) else {
            return Ok(None);
        };
        if self.inline_depth > 20 {
            return Err(Error::new(
                c.span,
                "parsers call each other too deeply (recursion?)",
            ));
        }
        if args.len() != params.len() {
            return Err(Error::new(
                c.span,
                format!(
                    "parser '{}' expects {} argument(s), got {}",
                    kind,
                    params.len(),
                    args.len()
                ),
            ));
        }
        if !states.iter().any(|s| s.name == "start") {
            return Err(Error::new(
                c.span,
                format!("parser '{}' has no 'start' state", kind),
            ));
        }
        Ok(Some((
            states.as_slice(),
            params.as_slice(),
            n.clone(),
            args.clone(),
        )))
    }

    fn state_ref(&mut self, n: &str, sp: Span, names: &HashSet<&str>) -> J {
        if n == "accept" {
            self.pstate_accept.clone()
        } else if n == "reject" {
            J::Null
        } else if names.contains(n) {
            J::String(format!("{}{}", self.pstate_prefix, n))
        } else {
            self.err(sp, format!("unknown parser state '{}'", n));
            J::Null
        }
    }

    fn lower_select(
        &mut self,
        keys: &[Expr],
        cases: &[SelectCase],
        names: &HashSet<&str>,
    ) -> (Vec<J>, Vec<J>) {
        let mut kj = vec![];
        let mut widths = vec![];
        let mut ktypes = vec![];
        for k in keys {
            match self.select_key(k) {
                Ok((j, w, t)) => {
                    kj.push(j);
                    widths.push(w);
                    ktypes.push(t);
                }
                Err(e) => {
                    self.sink.push(e);
                    return (vec![], vec![]);
                }
            }
        }
        let mut trans = vec![];
        for c in cases {
            let next = self.state_ref(&c.next, c.span, names);
            if c.keys.len() == 1 && matches!(c.keys[0].kind, ExprKind::Default) {
                trans.push(
                    json!({"type": "default", "value": null, "mask": null, "next_state": next}),
                );
                continue;
            }
            // value set?
            if c.keys.len() == 1 {
                if let ExprKind::Name(n) = &c.keys[0].kind {
                    if let Some(Bind::ValueSet(vs)) = self.lookup(n) {
                        trans.push(json!({"type": "parse_vset", "value": vs, "mask": null, "next_state": next}));
                        continue;
                    }
                }
            }
            if c.keys.len() != keys.len() {
                self.err(
                    c.span,
                    format!(
                        "select has {} key(s) but this case has {} value(s)",
                        keys.len(),
                        c.keys.len()
                    ),
                );
                continue;
            }
            // Each key component is a list of (value, mask) alternatives; ranges
            // expand into prefix masks and the case into their cross product.
            let mut comps: Vec<Vec<(u128, u128)>> = vec![];
            let mut has_mask = false;
            for (i, k) in c.keys.iter().enumerate() {
                let w = widths[i];
                let alts = match &k.kind {
                    ExprKind::Default => {
                        has_mask = true;
                        vec![(0, 0)]
                    }
                    ExprKind::Mask(a, b) => {
                        has_mask = true;
                        let v = self.const_of(a, &ktypes[i]);
                        let m = self.const_of(b, &ktypes[i]);
                        vec![(v & m, m)]
                    }
                    ExprKind::Range(a, b) => {
                        has_mask = true;
                        let lo = self.const_of(a, &ktypes[i]);
                        let hi = self.const_of(b, &ktypes[i]);
                        if lo > hi || w > 64 {
                            self.err(
                                k.span,
                                "select range must be low .. high on a key of at most 64 bits",
                            );
                            vec![]
                        } else {
                            range_to_masks(lo, hi, w)
                        }
                    }
                    _ => vec![(self.const_of(k, &ktypes[i]), mask(w))],
                };
                comps.push(alts);
            }
            let total: usize = comps.iter().map(|c| c.len()).product();
            if total > 4096 {
                self.err(c.span, "this select case expands to too many transitions");
                continue;
            }
            let mut combos: Vec<Vec<(u128, u128)>> = vec![vec![]];
            for alts in &comps {
                let mut next_combos = vec![];
                for c0 in &combos {
                    for a in alts {
                        let mut c1 = c0.clone();
                        c1.push(*a);
                        next_combos.push(c1);
                    }
                }
                combos = next_combos;
            }
            for combo in combos {
                let mut val = String::new();
                let mut msk = String::new();
                for (i, (v, m)) in combo.iter().enumerate() {
                    let w = widths[i];
                    let digits = (w.div_ceil(8) * 2) as usize;
                    val.push_str(&format!("{:0d$x}", v & mask(w), d = digits));
                    msk.push_str(&format!("{:0d$x}", m & mask(w), d = digits));
                }
                trans.push(json!({"type": "hexstr", "value": format!("0x{}", val),
                    "mask": if has_mask { J::String(format!("0x{}", msk)) } else { J::Null }, "next_state": next.clone()}));
            }
        }
        if !cases
            .iter()
            .any(|c| c.keys.len() == 1 && matches!(c.keys[0].kind, ExprKind::Default))
        {
            // no match: BMv2 signals NoMatch itself when nothing matches
        }
        (kj, trans)
    }

    fn const_of(&mut self, e: &Expr, t: &Type) -> u128 {
        match self.const_expr(e, Some(t)) {
            Ok(v) => v,
            Err(err) => {
                self.sink.push(err);
                0
            }
        }
    }

    /// Constant value of an expression (enum members, consts, literals), typed by `t`.
    fn const_expr(&mut self, e: &Expr, t: Option<&Type>) -> PResult<u128> {
        let locals = self.const_locals();
        match self.env.const_eval(e, &locals) {
            Ok((v, vt)) => {
                let v = sign_extend(v, &vt);
                let w = t.and_then(|t| t.width()).or(vt.width());
                if let (Some(w), Type::InfInt) = (w, &vt) {
                    if w < 128
                        && shr(v, w as u128) != 0
                        && shr(v, w as u128) != mask(128 - w)
                        && !e_is_neg(e)
                    {
                        return Err(Error::new(
                            e.span,
                            format!("value {} does not fit in {} bits", v, w),
                        ));
                    }
                }
                Ok(match w {
                    Some(w) => v & mask(w),
                    None => v,
                })
            }
            Err(_) => Err(Error::new(
                e.span,
                format!("'{}' is not a compile-time constant", self.src(e.span)),
            )),
        }
    }

    fn const_locals(&self) -> HashMap<String, (Type, u128)> {
        // outer scopes first, so that an inner binding of the same name (an inlined
        // callee's parameter) shadows an outer constant instead of reading it
        let mut m = HashMap::new();
        for s in &self.scopes {
            for (k, b) in s {
                if let Bind::Const(v, t) = b {
                    m.insert(k.clone(), (t.clone(), *v));
                } else {
                    m.remove(k);
                }
            }
        }
        m
    }

    fn select_key(&mut self, k: &Expr) -> PResult<(J, u32, Type)> {
        // lookahead<T>()
        if let Some((w, t)) = self.lookahead_call(k)? {
            return Ok((json!({"type": "lookahead", "value": [0, w]}), w, t));
        }
        // lookahead<H>().field
        if let ExprKind::Member(b, f) = &k.kind {
            if let Some((_, Type::Header(h))) = self.lookahead_call(b)? {
                let def = self
                    .env
                    .composite(&h)
                    .cloned()
                    .ok_or_else(|| Error::new(k.span, "unknown header"))?;
                let mut off = 0;
                for (n, t, _) in &def.fields {
                    let w = t.width().unwrap_or(0);
                    if n == f {
                        return Ok((
                            json!({"type": "lookahead", "value": [off, w]}),
                            w,
                            t.clone(),
                        ));
                    }
                    off += w;
                }
                return Err(Error::new(
                    k.span,
                    format!("header {} has no field '{}'", h, f),
                ));
            }
        }
        // stack.last.field
        if let ExprKind::Member(b, f) = &k.kind {
            if let ExprKind::Member(s, l) = &b.kind {
                if l == "last" {
                    if let Ok(Place::Stack { name, elem, .. }) = self.place(s) {
                        let t = self
                            .env
                            .field_type(&Type::Header(elem), f)
                            .unwrap_or(Type::Unknown);
                        return Ok((
                            json!({"type": "stack_field", "value": [name, f]}),
                            t.width().unwrap_or(0),
                            t,
                        ));
                    }
                }
            }
        }
        if let Ok(Place::Field { hdr, field, ty }) = self.place(k) {
            let w = ty.width().unwrap_or(0);
            return Ok((json!({"type": "field", "value": [hdr, field]}), w, ty));
        }
        // general expression: compute into a temporary
        let (x, t) = self.rv(k, None)?;
        let t = if t == Type::InfInt { Type::Bit(32) } else { t };
        let x = self.to_data(x, &t);
        let p = self.scalar(&format!("tmp_{}", self.tmp_count), &t);
        self.tmp_count += 1;
        if let Place::Field { hdr, field, .. } = &p {
            self.parser_extra_ops.push(json!({"op": "set", "parameters": [{"type": "field", "value": [hdr, field]}, x.jp()]}));
            return Ok((
                json!({"type": "field", "value": [hdr, field]}),
                t.width().unwrap_or(0),
                t,
            ));
        }
        Err(Error::new(k.span, "unsupported select key"))
    }

    /// A parser temporary set from `x` (e.g. a lookahead) before the current statement.
    fn parser_temp(&mut self, x: X, t: &Type) -> X {
        let p = self.scalar(&format!("tmp_{}", self.tmp_count), t);
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = p else {
            unreachable!()
        };
        self.parser_extra_ops.push(
            json!({"op": "set", "parameters": [{"type": "field", "value": [hdr, field]}, x.je()]}),
        );
        X::Field(hdr, field)
    }

    fn lookahead_call(&mut self, e: &Expr) -> PResult<Option<(u32, Type)>> {
        if let ExprKind::Call(f, targs, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "lookahead" {
                    if let ExprKind::Name(n) = &b.kind {
                        if matches!(self.lookup(n), Some(Bind::PacketIn)) {
                            if !args.is_empty() || targs.len() != 1 {
                                return Err(Error::new(
                                    e.span,
                                    "lookahead takes one type argument and no arguments",
                                ));
                            }
                            let t = self.env.resolve(&targs[0])?;
                            let w = match &t {
                                Type::Header(h) => self.env.header_width(h),
                                t => t.width().unwrap_or(0),
                            };
                            return Ok(Some((w, t)));
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    fn parser_stmt(&mut self, s: &Stmt, pname: &str) -> Vec<J> {
        match self.parser_stmt_r(s, pname) {
            Ok(v) => v,
            Err(e) => {
                self.sink.push(e);
                vec![]
            }
        }
    }

    fn parser_stmt_r(&mut self, s: &Stmt, pname: &str) -> PResult<Vec<J>> {
        match &s.kind {
            StmtKind::Call(c) => {
                let ExprKind::Call(f, _targs, args) = &c.kind else {
                    return Ok(vec![]);
                };
                if let ExprKind::Member(b, m) = &f.kind {
                    if let ExprKind::Name(n) = &b.kind {
                        if matches!(self.lookup(n), Some(Bind::PacketIn)) {
                            match m.as_str() {
                                "extract" => {
                                    if args.is_empty() || args.len() > 2 {
                                        return Err(Error::new(
                                            c.span,
                                            "extract takes one or two arguments",
                                        ));
                                    }
                                    let target = self.extract_target(&args[0].value)?;
                                    if args.len() == 2 {
                                        let (x, t) =
                                            self.rv(&args[1].value, Some(&Type::Bit(32)))?;
                                        let x = self.to_data(x, &t);
                                        return Ok(vec![
                                            json!({"op": "extract_VL", "parameters": [target, {"type": "expression", "value": x.je()}]}),
                                        ]);
                                    }
                                    return Ok(vec![
                                        json!({"op": "extract", "parameters": [target]}),
                                    ]);
                                }
                                "advance" => {
                                    if args.len() != 1 {
                                        return Err(Error::new(
                                            c.span,
                                            "advance takes one argument",
                                        ));
                                    }
                                    let (x, t) = self.rv(&args[0].value, Some(&Type::Bit(32)))?;
                                    let x = self.to_data(x, &t);
                                    let p = match x {
                                        X::Hex(..) | X::Field(..) => x.je(),
                                        _ => json!({"type": "expression", "value": x.je()}),
                                    };
                                    return Ok(vec![json!({"op": "advance", "parameters": [p]})]);
                                }
                                _ => {
                                    return Err(Error::new(
                                        f.span,
                                        format!(
                                            "packet_in.{} cannot be called as a statement here",
                                            m
                                        ),
                                    ))
                                }
                            }
                        }
                        if let Some(Bind::Extern { kind, .. }) = self.lookup(n) {
                            if m == "apply" {
                                if let Some(Decl::Parser { .. }) = self.find_decl(&kind) {
                                    return Err(Error::new(
                                        c.span,
                                        "sub-parser calls are not supported by this compiler yet",
                                    ));
                                }
                            }
                        }
                    }
                }
                if let ExprKind::Name(n) = &f.kind {
                    if n == "verify" {
                        if args.len() != 2 {
                            return Err(Error::new(
                                c.span,
                                "verify takes two arguments (condition, error)",
                            ));
                        }
                        let (cx, ct) = self.rv(&args[0].value, Some(&Type::Bool))?;
                        if ct != Type::Bool {
                            return Err(Error::new(
                                args[0].value.span,
                                format!("verify condition must be bool, not {}", ct.name()),
                            ));
                        }
                        let (ex, et) = self.rv(&args[1].value, Some(&Type::Error))?;
                        if et != Type::Error {
                            return Err(Error::new(
                                args[1].value.span,
                                format!("verify needs an error value, not {}", et.name()),
                            ));
                        }
                        return Ok(vec![
                            json!({"op": "verify", "parameters": [cx.je(), ex.je()]}),
                        ]);
                    }
                }
                let prims = self.prims_of(s)?;
                Ok(prims
                    .into_iter()
                    .map(|p| json!({"op": "primitive", "parameters": [p]}))
                    .collect())
            }
            StmtKind::Assign(lhs, rhs) => {
                if let Ok(Place::Field { hdr, field, ty }) = self.place(lhs) {
                    if let Some((w, _)) = self.lookahead_call(rhs)? {
                        let tw = ty.width().unwrap_or(0);
                        if w != tw {
                            return Err(Error::new(
                                rhs.span,
                                format!(
                                    "cannot assign lookahead of {} bits to a field of {} bits",
                                    w, tw
                                ),
                            ));
                        }
                        return Ok(vec![
                            json!({"op": "set", "parameters": [{"type": "field", "value": [hdr, field]}, {"type": "lookahead", "value": [0, w]}]}),
                        ]);
                    }
                    let (x, t) = self.rv(rhs, Some(&ty))?;
                    self.check_assign(&ty, &t, rhs.span)?;
                    let x = self.to_data(x, &t);
                    let p = match x {
                        X::Hex(..) | X::Field(..) => x.je(),
                        _ => json!({"type": "expression", "value": x.je()}),
                    };
                    return Ok(vec![
                        json!({"op": "set", "parameters": [{"type": "field", "value": [hdr, field]}, p]}),
                    ]);
                }
                let prims = self.prims_of(s)?;
                Ok(prims
                    .into_iter()
                    .map(|p| json!({"op": "primitive", "parameters": [p]}))
                    .collect())
            }
            StmtKind::Var(_, ty, n, init) => {
                let t = self.env.resolve(ty)?;
                let p = self.make_place(
                    "",
                    &format!("{}.{}", pname, n),
                    t.clone(),
                    true,
                    &format!("{}_{}", pname, n),
                );
                self.bind(n, Bind::Place(p));
                if let Some(i) = init {
                    let st = Stmt {
                        kind: StmtKind::Assign(
                            Expr {
                                kind: ExprKind::Name(n.clone()),
                                span: s.span,
                            },
                            i.clone(),
                        ),
                        span: s.span,
                    };
                    return self.parser_stmt_r(&st, pname);
                }
                Ok(vec![])
            }
            StmtKind::Const(ty, n, v) => {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(n, Bind::Const(val, t));
                Ok(vec![])
            }
            StmtKind::Block(v) => {
                let mut out = vec![];
                for s in v {
                    out.extend(self.parser_stmt_r(s, pname)?);
                }
                Ok(out)
            }
            StmtKind::Empty => Ok(vec![]),
            StmtKind::Inst(i) => {
                self.declare_instance(i, pname);
                Ok(vec![])
            }
            StmtKind::If(..) => Err(Error::new(
                s.span,
                "if statements are not supported inside nested blocks of parser states",
            )),
            _ => Err(Error::new(
                s.span,
                "statement not allowed in a parser state",
            )),
        }
    }

    /// Lower a statement through the action lowering and return its primitives.
    fn prims_of(&mut self, s: &Stmt) -> PResult<Vec<J>> {
        let saved = self.ctx;
        let saved_act = self.act.take();
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.ctx = Ctx::Action;
        let r = self.action_stmt(s);
        self.ctx = saved;
        let a = std::mem::replace(&mut self.act, saved_act).unwrap();
        r?;
        Ok(a.prims)
    }

    fn extract_target(&mut self, e: &Expr) -> PResult<J> {
        if let ExprKind::Member(b, m) = &e.kind {
            if m == "next" {
                if let Place::Stack { name, .. } = self.place(b)? {
                    return Ok(json!({"type": "stack", "value": name}));
                }
            }
        }
        match self.place(e)? {
            Place::Header { inst, .. } => Ok(json!({"type": "regular", "value": inst})),
            p => Err(Error::new(
                e.span,
                format!("extract needs a header, not {}", p.ty().name()),
            )),
        }
    }

    // ------------------------------------------------------------ deparser & checksums

    fn lower_deparser(&mut self, d: &'a Decl) {
        let Decl::Control {
            params,
            apply,
            locals,
            ..
        } = d
        else {
            self.err(d_span(d), "the deparser must be a control");
            return;
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Deparser;
        for l in locals {
            if let Local::Var(s) = l {
                self.err(
                    s.span,
                    "local declarations in the deparser are not supported",
                );
            }
        }
        let mut order = vec![];
        self.deparse_stmts(apply, &mut order);
        self.ir.deparser = order;
        self.scopes.pop();
    }

    fn deparse_stmts(&mut self, stmts: &[Stmt], order: &mut Vec<String>) {
        for s in stmts {
            match &s.kind {
                StmtKind::Call(c) => {
                    let ExprKind::Call(f, _, args) = &c.kind else {
                        continue;
                    };
                    if let ExprKind::Member(b, m) = &f.kind {
                        if let ExprKind::Name(n) = &b.kind {
                            if matches!(self.lookup(n), Some(Bind::PacketOut)) && m == "emit" {
                                if args.len() != 1 {
                                    self.err(c.span, "emit takes one argument");
                                    continue;
                                }
                                match self.place(&args[0].value) {
                                    Ok(p) => self.emit_place(&p, order),
                                    Err(e) => self.sink.push(e),
                                }
                                continue;
                            }
                        }
                    }
                    self.err(
                        s.span,
                        "only packet.emit(...) calls are supported in the deparser",
                    );
                }
                StmtKind::Block(v) => self.deparse_stmts(v, order),
                StmtKind::Empty => {}
                StmtKind::If(..) => self.err(
                    s.span,
                    "conditional emits are not needed: emit skips invalid headers",
                ),
                _ => self.err(
                    s.span,
                    "only packet.emit(...) calls are supported in the deparser",
                ),
            }
        }
    }

    fn emit_place(&mut self, p: &Place, order: &mut Vec<String>) {
        match p {
            Place::Header { inst, .. } => {
                if !order.contains(inst) {
                    order.push(inst.clone())
                }
            }
            Place::Stack { name, size, .. } => {
                for i in 0..*size {
                    let n = format!("{}[{}]", name, i);
                    if !order.contains(&n) {
                        order.push(n);
                    }
                }
            }
            Place::Struct { members, .. } | Place::Union { members, .. } => {
                for (_, m) in members {
                    if !matches!(m, Place::Field { .. }) {
                        self.emit_place(m, order);
                    }
                }
            }
            Place::Field { .. } | Place::DynHeader { .. } | Place::DynField { .. } => {}
        }
    }

    fn lower_checksum_ctl(&mut self, d: &'a Decl, verify: bool) {
        let Decl::Control { params, apply, .. } = d else {
            self.err(d_span(d), "checksum blocks must be controls");
            return;
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Checksum;
        self.checksum_stmts(apply, verify);
        self.scopes.pop();
    }

    fn checksum_stmts(&mut self, stmts: &[Stmt], verify: bool) {
        for s in stmts {
            match &s.kind {
                StmtKind::Call(c) => {
                    let ExprKind::Call(f, _, args) = &c.kind else {
                        continue;
                    };
                    let fname = match &f.kind {
                        ExprKind::Name(n) => n.as_str(),
                        _ => "",
                    };
                    let (is_verify, payload) = match fname {
                        "verify_checksum" => (true, false),
                        "verify_checksum_with_payload" => (true, true),
                        "update_checksum" => (false, false),
                        "update_checksum_with_payload" => (false, true),
                        _ => {
                            self.err(c.span, "only verify_checksum/update_checksum calls are supported in checksum controls");
                            continue;
                        }
                    };
                    if is_verify != verify {
                        self.err(
                            c.span,
                            format!(
                                "{} cannot be used in the {} checksum control",
                                fname,
                                if verify { "verify" } else { "compute" }
                            ),
                        );
                        continue;
                    }
                    if let Err(e) = self.checksum_call(c.span, args, verify, payload) {
                        self.sink.push(e);
                    }
                }
                StmtKind::Block(v) => self.checksum_stmts(v, verify),
                StmtKind::Empty => {}
                _ => self.err(
                    s.span,
                    "only verify_checksum/update_checksum calls are supported in checksum controls",
                ),
            }
        }
    }

    fn checksum_call(
        &mut self,
        span: Span,
        args: &[Arg],
        verify: bool,
        payload: bool,
    ) -> PResult<()> {
        if args.len() != 4 {
            return Err(Error::new(
                span,
                "checksum functions take 4 arguments (condition, data, checksum field, algorithm)",
            ));
        }
        let (cond, ct) = self.rv(&args[0].value, Some(&Type::Bool))?;
        if ct != Type::Bool {
            return Err(Error::new(
                args[0].value.span,
                "checksum condition must be bool",
            ));
        }
        let mut inputs = self.field_list_inputs(&args[1].value)?;
        if payload {
            inputs.push(json!({"type": "payload", "value": null}));
        }
        let algo = self.algo_name(&args[3].value)?;
        let target = match self.place(&args[2].value)? {
            Place::Field { hdr, field, .. } => json!([hdr, field]),
            _ => {
                return Err(Error::new(
                    args[2].value.span,
                    "checksum target must be a header field",
                ))
            }
        };
        let cid = self.ir.calculations.len();
        let cname = format!("calc_{}", cid);
        self.ir
            .calculations
            .push(json!({"name": cname, "id": cid, "algo": algo, "input": inputs}));
        let id = self.ir.checksums.len();
        let if_cond = if cond == X::Bool(true) {
            J::Null
        } else {
            cond.je()
        };
        self.ir.checksums.push(
            json!({"name": format!("cksum_{}", id), "id": id, "target": target, "type": "generic",
            "calculation": cname, "verify": verify, "update": !verify, "if_cond": if_cond}),
        );
        Ok(())
    }

    fn algo_name(&mut self, e: &Expr) -> PResult<String> {
        match &e.kind {
            ExprKind::Member(b, m) if matches!(&b.kind, ExprKind::Name(n) if n == "HashAlgorithm") => {
                Ok(match m.as_str() {
                    "crc32" | "crc16" | "csum16" | "identity" | "xor16" | "random"
                    | "crc32_custom" | "crc16_custom" => m.clone(),
                    _ => {
                        return Err(Error::new(
                            e.span,
                            format!("unknown hash algorithm '{}'", m),
                        ))
                    }
                })
            }
            _ => Err(Error::new(
                e.span,
                "expected a HashAlgorithm member, e.g. HashAlgorithm.csum16",
            )),
        }
    }

    /// Fields of a `{...}` list or a struct/header value, as calculation inputs.
    fn field_list_inputs(&mut self, e: &Expr) -> PResult<Vec<J>> {
        let mut out = vec![];
        self.flatten_inputs(e, &mut out)?;
        Ok(out)
    }

    fn flatten_inputs(&mut self, e: &Expr, out: &mut Vec<J>) -> PResult<()> {
        if let ExprKind::List(items) = &e.kind {
            for (_, it) in items {
                self.flatten_inputs(it, out)?;
            }
            return Ok(());
        }
        if let Ok(p) = self.place(e) {
            if matches!(p, Place::DynHeader { .. } | Place::DynField { .. }) {
                return Err(Error::new(
                    e.span,
                    "header stack elements with a run-time index cannot be used in field lists",
                ));
            }
            self.flatten_place(&p, out);
            return Ok(());
        }
        if let ExprKind::Name(n) = &e.kind {
            if let Some(Bind::Val(X::Field(h, f), _)) = self.lookup(n) {
                out.push(json!({"type": "field", "value": [h, f]}));
                return Ok(());
            }
        }
        let locals = self.const_locals();
        match self.env.const_eval(e, &locals) {
            Ok((v, t)) => {
                let w = match t.width() {
                    Some(w) => w,
                    None => {
                        return Err(Error::new(
                            e.span,
                            "constants in a field list need a width, e.g. 8w0",
                        ))
                    }
                };
                out.push(json!({"type": "hexstr", "value": hexs(v, false), "bitwidth": w}));
                Ok(())
            }
            Err(_) => Err(Error::new(
                e.span,
                "field list elements must be fields, headers or sized constants",
            )),
        }
    }

    fn flatten_place(&mut self, p: &Place, out: &mut Vec<J>) {
        match p {
            Place::DynHeader { .. } | Place::DynField { .. } => {}
            Place::Field { hdr, field, .. } => {
                out.push(json!({"type": "field", "value": [hdr, field]}))
            }
            Place::Header { inst, ty } => {
                if let Some(c) = self.env.composite(ty) {
                    for (f, _, _) in &c.fields {
                        out.push(json!({"type": "field", "value": [inst, f]}));
                    }
                }
            }
            Place::Struct { members, .. } | Place::Union { members, .. } => {
                for (_, m) in members.clone() {
                    self.flatten_place(&m, out);
                }
            }
            Place::Stack { name, size, elem } => {
                for i in 0..*size {
                    let ph = Place::Header {
                        inst: format!("{}[{}]", name, i),
                        ty: elem.clone(),
                    };
                    self.flatten_place(&ph, out);
                }
            }
        }
    }

    // ------------------------------------------------------------ controls

    fn lower_control(&mut self, d: &'a Decl, pipe: usize) {
        let Decl::Control {
            name,
            params,
            locals,
            apply,
            ..
        } = d
        else {
            self.err(d_span(d), "ingress and egress must be controls");
            return;
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        let init = match self.control_body(name, locals, apply, pipe, None) {
            Ok(i) => i,
            Err(e) => {
                self.sink.push(e);
                None
            }
        };
        self.pipelines[pipe].init = init;
        self.scopes.pop();
    }

    /// Declares the locals of a control named `name` (fully qualified), lowers its
    /// apply block and returns the entry node. Restores the enclosing control.
    fn control_body(
        &mut self,
        name: &str,
        locals: &[Local],
        apply: &[Stmt],
        pipe: usize,
        next: Option<String>,
    ) -> PResult<Option<String>> {
        let saved = self.ctl.take();
        let mut info = CtlInfo {
            name: name.to_string(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            applied: HashSet::new(),
            pipe,
        };
        self.ctl = Some(info.clone());
        self.scopes.push(HashMap::new());
        let mut init_stmts = vec![];
        for l in locals {
            match l {
                Local::Action(a) => {
                    if info.actions.insert(a.name.clone(), a.clone()).is_some() {
                        self.err(a.span, format!("action '{}' is declared twice", a.name));
                    }
                }
                Local::Table(t) => {
                    if info.tables.insert(t.name.clone(), t.clone()).is_some() {
                        self.err(t.span, format!("table '{}' is declared twice", t.name));
                    }
                    self.bind(&t.name, Bind::Table(t.name.clone()));
                }
                Local::Inst(i) => self.declare_instance(i, name),
                Local::Var(s) => match &s.kind {
                    StmtKind::Var(_, ty, n, init) => match self.env.resolve(ty) {
                        Ok(t) => {
                            let p = self.make_place(
                                "",
                                &format!("{}.{}", name, n),
                                t,
                                true,
                                &format!("{}_{}", name.replace('.', "_"), n),
                            );
                            self.bind(n, Bind::Place(p));
                            if let Some(i) = init {
                                init_stmts.push(Stmt {
                                    kind: StmtKind::Assign(
                                        Expr {
                                            kind: ExprKind::Name(n.clone()),
                                            span: s.span,
                                        },
                                        i.clone(),
                                    ),
                                    span: s.span,
                                });
                            }
                        }
                        Err(e) => self.sink.push(e),
                    },
                    StmtKind::Const(ty, n, v) => match self.env.resolve(ty) {
                        Ok(t) => match self.const_expr(v, Some(&t)) {
                            Ok(val) => self.bind(n, Bind::Const(val, t)),
                            Err(e) => self.sink.push(e),
                        },
                        Err(e) => self.sink.push(e),
                    },
                    _ => {}
                },
                Local::ValueSet { span, .. } => {
                    self.err(*span, "value sets are only allowed in parsers")
                }
            }
        }
        self.ctl = Some(info);
        self.ctx = Ctx::Cond;
        let mut body = init_stmts;
        body.extend(apply.iter().cloned());
        let r = self.ctl_seq(&body, next);
        self.scopes.pop();
        self.ctl = saved;
        r
    }

    /// `inst.apply(args)` where `inst` is an instance of another control: inline it.
    fn control_call(&mut self, c: &Expr, next: Option<String>) -> PResult<Option<Option<String>>> {
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(None);
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return Ok(None);
        };
        if m != "apply" {
            return Ok(None);
        }
        let ExprKind::Name(n) = &b.kind else {
            return Ok(None);
        };
        let kind = match self.lookup(n) {
            Some(Bind::Extern { kind, name: _ }) => kind,
            // direct invocation of a control type: `C.apply(...)`
            None if matches!(self.find_decl(n), Some(Decl::Control { .. })) => n.clone(),
            _ => return Ok(None),
        };
        let Some(Decl::Control {
            params,
            locals,
            apply,
            ..
        }) = self.find_decl(&kind)
        else {
            return Ok(None);
        };
        if self.inline_depth > 30 {
            return Err(Error::new(
                c.span,
                "controls call each other too deeply (recursion?)",
            ));
        }
        if args.len() != params.len() {
            return Err(Error::new(
                c.span,
                format!(
                    "control '{}' expects {} argument(s), got {}",
                    kind,
                    params.len(),
                    args.len()
                ),
            ));
        }
        let mut binds = vec![];
        for (p, a) in params.iter().zip(args) {
            let t = self.env.resolve(&p.ty)?;
            let mut pp = p.clone();
            if pp.dir == Dir::None {
                pp.dir = Dir::In;
            }
            binds.push((p.name.clone(), self.bind_arg(&pp, &t, &a.value)?));
        }
        let outer = self
            .ctl
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let pipe = self.ctl.as_ref().map(|c| c.pipe).unwrap_or(0);
        let base = format!("{}.{}", outer, n);
        let k = self.inlined.entry(base.clone()).or_insert(0);
        let fq = if *k == 0 {
            base.clone()
        } else {
            format!("{}_{}", base, k)
        };
        *k += 1;
        self.scopes.push(HashMap::new());
        for (k, b) in binds {
            self.bind(&k, b);
        }
        self.inline_depth += 1;
        let r = self.control_body(&fq, locals, apply, pipe, next);
        self.inline_depth -= 1;
        self.scopes.pop();
        r.map(Some)
    }

    fn new_node_name(&mut self) -> String {
        let n = format!("node_{}", self.node_count);
        self.node_count += 1;
        n
    }

    fn is_simple(&self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Assign(_, r) => !self.has_apply(r),
            StmtKind::Call(c) => !self.has_apply(c),
            StmtKind::Var(_, _, _, i) => i.as_ref().map(|e| !self.has_apply(e)).unwrap_or(true),
            StmtKind::Const(..) | StmtKind::Empty => true,
            _ => false,
        }
    }

    fn has_apply(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call(f, _, args) => {
                if let ExprKind::Member(b, m) = &f.kind {
                    if m == "apply" {
                        return true;
                    }
                    if self.has_apply(b) {
                        return true;
                    }
                }
                args.iter().any(|a| self.has_apply(&a.value))
            }
            ExprKind::Member(b, _) => self.has_apply(b),
            ExprKind::Unary(_, x) => self.has_apply(x),
            ExprKind::Binary(_, a, b) => self.has_apply(a) || self.has_apply(b),
            ExprKind::Ternary(a, b, c) => {
                self.has_apply(a) || self.has_apply(b) || self.has_apply(c)
            }
            _ => false,
        }
    }

    /// Lower a statement sequence of an apply block; returns the entry node.
    fn ctl_seq(&mut self, stmts: &[Stmt], next: Option<String>) -> PResult<Option<String>> {
        // cut at the first exit/return: what follows is dead
        let end = stmts
            .iter()
            .position(|s| matches!(s.kind, StmtKind::Exit | StmtKind::Return(_)))
            .map(|i| i + 1)
            .unwrap_or(stmts.len());
        let stmts = &stmts[..end];
        self.scopes.push(HashMap::new());
        // declare locals first
        let mut body: Vec<Stmt> = vec![];
        for s in stmts {
            match &s.kind {
                StmtKind::Var(_, ty, n, init) => {
                    let t = self.env.resolve(ty)?;
                    let ctl = self
                        .ctl
                        .as_ref()
                        .map(|c| c.name.clone())
                        .unwrap_or_default();
                    let p = self.make_place(
                        "",
                        &format!("{}.{}", ctl, n),
                        t,
                        true,
                        &format!("{}_{}", ctl, n),
                    );
                    self.bind(n, Bind::Place(p));
                    if let Some(i) = init {
                        body.push(Stmt {
                            kind: StmtKind::Assign(
                                Expr {
                                    kind: ExprKind::Name(n.clone()),
                                    span: s.span,
                                },
                                i.clone(),
                            ),
                            span: s.span,
                        });
                    }
                }
                StmtKind::Const(ty, n, v) => {
                    let t = self.env.resolve(ty)?;
                    let val = self.const_expr(v, Some(&t))?;
                    self.bind(n, Bind::Const(val, t));
                }
                _ => body.push(s.clone()),
            }
        }
        let mut cur = next;
        let mut i = body.len();
        let mut result = Ok(());
        while i > 0 {
            let s = &body[i - 1];
            if matches!(s.kind, StmtKind::Exit) {
                // exit: stop this control (the primitive also marks the packet)
                cur = Some(self.synth_table(&body[i - 1..i], None)?);
                i -= 1;
                continue;
            }
            if matches!(s.kind, StmtKind::Return(_)) {
                cur = None;
                i -= 1;
                continue;
            }
            if self.is_simple(s) {
                let mut j = i - 1;
                while j > 0 && self.is_simple(&body[j - 1]) {
                    j -= 1;
                }
                let run: Vec<Stmt> = body[j..i]
                    .iter()
                    .filter(|s| !matches!(s.kind, StmtKind::Empty))
                    .cloned()
                    .collect();
                if !run.is_empty() {
                    match self.synth_table(&run, cur.clone()) {
                        Ok(n) => cur = Some(n),
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                i = j;
                continue;
            }
            match self.ctl_stmt(s, cur.clone()) {
                Ok(n) => cur = n,
                Err(e) => {
                    self.sink.push(e);
                }
            }
            i -= 1;
        }
        self.scopes.pop();
        result.map(|_| cur)
    }

    fn ctl_stmt(&mut self, s: &Stmt, next: Option<String>) -> PResult<Option<String>> {
        match &s.kind {
            StmtKind::Block(v) => self.ctl_seq(v, next),
            StmtKind::Call(c) => {
                if let Some(entry) = self.control_call(c, next.clone())? {
                    return Ok(entry);
                }
                if let Some(t) = self.table_apply(c)? {
                    let tn = self.lower_table(&t, c.span)?;
                    let entry = self.table_entry(&tn);
                    self.set_next_all(&tn, next);
                    return Ok(Some(entry));
                }
                Err(Error::new(c.span, "unsupported call in apply block"))
            }
            StmtKind::If(cond, a, b) => {
                // t.apply().hit / .miss
                let (neg, inner) = match &cond.kind {
                    ExprKind::Unary("!", x) => (true, &**x),
                    _ => (false, cond),
                };
                if let ExprKind::Member(call, m) = &inner.kind {
                    if m == "hit" || m == "miss" {
                        if let Some(t) = self.table_apply(call)? {
                            let tn = self.lower_table(&t, call.span)?;
                            let entry = self.table_entry(&tn);
                            let tb = self.ctl_seq(std::slice::from_ref(a), next.clone())?;
                            let fb = match b {
                                Some(b) => self.ctl_seq(std::slice::from_ref(b), next.clone())?,
                                None => next.clone(),
                            };
                            let hit_first = (m == "hit") != neg;
                            let (h, ms) = if hit_first { (tb, fb) } else { (fb, tb) };
                            let pipe = self.ctl.as_ref().unwrap().pipe;
                            if let Some(t) = self.pipelines[pipe]
                                .tables
                                .iter_mut()
                                .find(|x| x.name == tn)
                            {
                                t.next_tables.clear();
                                t.next_tables.insert("__HIT__".into(), h);
                                t.next_tables.insert("__MISS__".into(), ms);
                            }
                            return Ok(Some(entry));
                        }
                    }
                }
                if self.has_apply(cond) {
                    return Err(Error::new(cond.span, "table applications inside conditions are only supported as `t.apply().hit` or `t.apply().miss`"));
                }
                let tb = self.ctl_seq(std::slice::from_ref(a), next.clone())?;
                let fb = match b {
                    Some(b) => self.ctl_seq(std::slice::from_ref(b), next.clone())?,
                    None => next.clone(),
                };
                self.ctx = Ctx::Cond;
                self.key_prims.clear();
                let made = self.pre_begin();
                let r = self.rv(cond, Some(&Type::Bool));
                self.pre_end(made);
                let (x, t) = r?;
                if t != Type::Bool {
                    return Err(Error::new(
                        cond.span,
                        format!("condition must be bool, not {}", t.name()),
                    ));
                }
                let name = self.new_node_name();
                let pipe = self.ctl.as_ref().unwrap().pipe;
                let id = self
                    .pipelines
                    .iter()
                    .map(|p| p.conditionals.len())
                    .sum::<usize>();
                let frag = self.src(cond.span);
                self.pipelines[pipe]
                    .conditionals
                    .push(json!({"name": name, "id": id,
                    "source_info": {"source_fragment": frag},
                    "expression": x.je(), "true_next": tb, "false_next": fb}));
                Ok(Some(self.table_entry(&name)))
            }
            StmtKind::Switch(e, cases) => {
                let call = match &e.kind {
                    ExprKind::Member(c, m) if m == "action_run" => c,
                    _ => {
                        let s2 = desugar_switch(e, cases, s.span)?;
                        return self.ctl_stmt(&s2, next);
                    }
                };
                let t = match self.table_apply(call)? {
                    Some(t) => t,
                    None => return Err(Error::new(e.span, "expected a table application")),
                };
                let tn = self.lower_table(&t, call.span)?;
                let entry = self.table_entry(&tn);
                let pipe = self.ctl.as_ref().unwrap().pipe;
                let table_actions: Vec<(usize, String)> = {
                    let tab = self.pipelines[pipe]
                        .tables
                        .iter()
                        .find(|x| x.name == tn)
                        .unwrap();
                    tab.actions
                        .iter()
                        .map(|a| (*a, self.ir.actions[*a].name.clone()))
                        .collect()
                };
                let mut map: BTreeMap<String, Option<String>> = BTreeMap::new();
                let mut default_next = next.clone();
                let mut pending: Vec<&Expr> = vec![];
                for c in cases {
                    pending.push(&c.label);
                    let body = match &c.body {
                        Some(b) => b,
                        None => continue,
                    };
                    let entry = self.ctl_seq(std::slice::from_ref(body), next.clone())?;
                    for l in pending.drain(..) {
                        match &l.kind {
                            ExprKind::Default => default_next = entry.clone(),
                            ExprKind::Name(an) => {
                                let found = table_actions
                                    .iter()
                                    .find(|(i, _)| self.ir.actions[*i].decl == *an);
                                match found {
                                    Some((_, n)) => {
                                        map.insert(n.clone(), entry.clone());
                                    }
                                    None => self.err(
                                        l.span,
                                        format!("'{}' is not an action of table '{}'", an, t.name),
                                    ),
                                }
                            }
                            _ => self.err(l.span, "switch labels must be action names or default"),
                        }
                    }
                }
                for (_, n) in &table_actions {
                    map.entry(n.clone()).or_insert_with(|| default_next.clone());
                }
                if let Some(tab) = self.pipelines[pipe]
                    .tables
                    .iter_mut()
                    .find(|x| x.name == tn)
                {
                    tab.next_tables = map;
                }
                Ok(Some(entry))
            }
            StmtKind::Empty => Ok(next),
            _ => Err(Error::new(s.span, "unsupported statement in apply block")),
        }
    }

    fn set_next_all(&mut self, tn: &str, next: Option<String>) {
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let names: Vec<String> = {
            let t = self.pipelines[pipe]
                .tables
                .iter()
                .find(|x| x.name == tn)
                .unwrap();
            t.actions
                .iter()
                .map(|a| self.ir.actions[*a].name.clone())
                .collect()
        };
        if let Some(t) = self.pipelines[pipe]
            .tables
            .iter_mut()
            .find(|x| x.name == tn)
        {
            t.next_tables.clear();
            for n in names {
                t.next_tables.insert(n, next.clone());
            }
        }
    }

    /// If `e` is `t.apply()`, the table declaration.
    fn table_apply(&mut self, e: &Expr) -> PResult<Option<Table>> {
        if let ExprKind::Call(f, _, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "apply" {
                    if let ExprKind::Name(n) = &b.kind {
                        if let Some(Bind::Table(tn)) = self.lookup(n) {
                            if !args.is_empty() {
                                return Err(Error::new(e.span, "table apply() takes no arguments"));
                            }
                            let t = self.ctl.as_ref().and_then(|c| c.tables.get(&tn).cloned());
                            return Ok(t);
                        }
                        if let Some(Bind::Extern { kind, .. }) = self.lookup(n) {
                            if let Some(Decl::Control { .. }) = self.find_decl(&kind) {
                                return Err(Error::new(
                                    e.span,
                                    "calling other controls is not supported by this compiler yet",
                                ));
                            }
                        }
                        return Err(Error::new(b.span, format!("'{}' is not a table", n)));
                    }
                }
            }
        }
        Ok(None)
    }

    fn synth_table(&mut self, run: &[Stmt], next: Option<String>) -> PResult<String> {
        self.ctx = Ctx::Action;
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        for s in run {
            if let Err(e) = self.action_stmt(s) {
                self.sink.push(e);
            }
        }
        let a = self.act.take().unwrap();
        self.ctx = Ctx::Cond;
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let k = self.synth_count;
        self.synth_count += 1;
        let aname = if k == 0 {
            format!("{}.act", ctl)
        } else {
            format!("{}.act_{}", ctl, k)
        };
        self.ir.actions.push(IrAction {
            name: aname,
            decl: String::new(),
            params: vec![],
            prims: a.prims,
            synthetic: true,
            annos: vec![],
        });
        let aid = self.ir.actions.len() - 1;
        let tname = if k == 0 {
            "tbl_act".to_string()
        } else {
            format!("tbl_act_{}", k)
        };
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let mut nt = BTreeMap::new();
        nt.insert(self.ir.actions[aid].name.clone(), next);
        self.pipelines[pipe].tables.push(IrTable {
            name: tname.clone(),
            keys: vec![],
            match_type: "exact".into(),
            kind: "simple".into(),
            profile: None,
            size: 1024,
            with_counters: false,
            direct_meter: None,
            actions: vec![aid],
            action_annos: vec![vec![]],
            next_tables: nt,
            default: Some((aid, vec![], true)),
            entries: vec![],
            const_entries: false,
            synthetic: true,
            annos: vec![],
            support_timeout: false,
        });
        Ok(tname)
    }

    // ------------------------------------------------------------ tables

    fn find_action(&self, name: &str) -> Option<(Action, bool)> {
        let n = name.trim_start_matches('.');
        if !name.starts_with('.') {
            if let Some(a) = self.ctl.as_ref().and_then(|c| c.actions.get(n)) {
                return Some((a.clone(), false));
            }
        }
        self.global_actions.get(n).map(|a| (a.clone(), true))
    }

    /// The BMv2 action for `a` in the current control with directional args bound.
    fn get_action(
        &mut self,
        a: &Action,
        global: bool,
        bound: &[Arg],
        span: Span,
    ) -> PResult<usize> {
        let ctl = self
            .ctl
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let base = match anno_str(&a.annos, "name") {
            Some(n) => {
                if let Some(s) = n.strip_prefix('.') {
                    s.to_string()
                } else if global {
                    n
                } else {
                    format!("{}.{}", ctl, n)
                }
            }
            None => {
                if global {
                    a.name.clone()
                } else {
                    format!("{}.{}", ctl, a.name)
                }
            }
        };
        let key = format!(
            "{}|{}",
            base,
            bound
                .iter()
                .map(|x| self.src(x.value.span))
                .collect::<Vec<_>>()
                .join(",")
        );
        if let Some(i) = self.action_cache.get(&key) {
            return Ok(*i);
        }
        let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
        if bound.len() != ndir {
            return Err(Error::new(
                span,
                format!(
                    "action '{}' has {} directional parameter(s) but {} argument(s) are given here",
                    a.name,
                    ndir,
                    bound.len()
                ),
            ));
        }
        // lower the body
        let saved_ctx = self.ctx;
        let saved_act = self.act.take();
        self.ctx = Ctx::Action;
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.scopes.push(HashMap::new());
        let mut params = vec![];
        let mut res = Ok(());
        let mut bi = 0;
        let mut dir_pairs = vec![];
        for p in &a.params {
            let t = match self.env.resolve(&p.ty) {
                Ok(t) => t,
                Err(e) => {
                    res = Err(e);
                    break;
                }
            };
            if p.dir != Dir::None {
                dir_pairs.push((p.clone(), t, bound[bi].value.clone()));
                bi += 1;
            } else {
                let w = match t.width() {
                    Some(w) => w,
                    None => {
                        res = Err(Error::new(
                            p.span,
                            format!(
                                "action parameter '{}' must have a fixed-width type, not {}",
                                p.name,
                                t.name()
                            ),
                        ));
                        break;
                    }
                };
                let idx = params.len();
                params.push((p.name.clone(), w, p.annos.clone()));
                self.bind(&p.name, Bind::Val(X::Runtime(idx), t));
            }
        }
        let mut outs = vec![];
        if res.is_ok() {
            match self.bind_params(a, &dir_pairs, span) {
                Ok((binds, o)) => {
                    binds.into_iter().for_each(|(n, b)| self.bind(&n, b));
                    outs = o;
                }
                Err(e) => res = Err(e),
            }
        }
        if res.is_ok() {
            let saved_frames = std::mem::replace(&mut self.copy_frames, vec![outs.clone()]);
            for s in &a.body {
                if let Err(e) = self.action_stmt(s) {
                    self.sink.push(e);
                }
            }
            self.copy_frames = saved_frames;
            // `return` jumps to the copy-outs
            if let Some(act) = self.act.as_mut() {
                patch_returns(act);
            }
            if let Err(e) = self.copy_outs(outs, span) {
                res = Err(e);
            }
        }
        self.scopes.pop();
        let mut act = std::mem::replace(&mut self.act, saved_act).unwrap();
        self.ctx = saved_ctx;
        res?;
        patch_returns(&mut act);
        let mut name = base.clone();
        let mut k = 0;
        while self.ir.actions.iter().any(|x| x.name == name) {
            k += 1;
            name = format!("{}_{}", base, k);
        }
        self.ir.actions.push(IrAction {
            name,
            decl: a.name.clone(),
            params,
            prims: act.prims,
            synthetic: false,
            annos: a.annos.clone(),
        });
        let idx = self.ir.actions.len() - 1;
        self.action_cache.insert(key, idx);
        Ok(idx)
    }

    fn bind_arg(&mut self, p: &Param, t: &Type, arg: &Expr) -> PResult<Bind> {
        if p.dir == Dir::In {
            let (x, at) = self.rv(arg, Some(t))?;
            self.check_assign(t, &at, arg.span)?;
            if let X::Hex(v, _) = x {
                return Ok(Bind::Const(v, t.clone()));
            }
            return Ok(Bind::Val(x, t.clone()));
        }
        let pl = self.place(arg)?;
        let pt = pl.ty();
        if !types_compatible(t, &pt) {
            return Err(Error::new(
                arg.span,
                format!(
                    "argument type {} does not match parameter '{}' of type {}",
                    pt.name(),
                    p.name,
                    t.name()
                ),
            ));
        }
        Ok(Bind::Place(pl))
    }

    fn lower_table(&mut self, t: &Table, span: Span) -> PResult<String> {
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let fq = match anno_str(&t.annos, "name") {
            Some(n) => n
                .strip_prefix('.')
                .map(|s| s.to_string())
                .unwrap_or_else(|| format!("{}.{}", ctl, n)),
            None => format!("{}.{}", ctl, t.name),
        };
        self.key_prims.clear();
        if !self.ctl.as_mut().unwrap().applied.insert(t.name.clone())
            || self.table_names.contains(&fq)
        {
            return Err(Error::new(
                span,
                format!(
                    "table '{}' is applied more than once; BMv2 allows one application per table",
                    t.name
                ),
            ));
        }
        self.table_names.insert(fq.clone());
        self.ctx = Ctx::Cond;
        // keys
        let mut keys = vec![];
        let mut selector_inputs = vec![];
        for k in &t.keys {
            if !self.env.match_kinds.contains(&k.match_kind) {
                self.err(k.span, format!("unknown match kind '{}'", k.match_kind));
                continue;
            }
            let kname = anno_str(&k.annos, "name").unwrap_or_else(|| self.src(k.expr.span));
            // isValid() key
            let (target, width, kmask) = match self.key_target(&k.expr) {
                Ok(x) => x,
                Err(e) => {
                    self.sink.push(e);
                    continue;
                }
            };
            if k.match_kind == "selector" {
                selector_inputs.push(json!({"type": "field", "value": target}));
                continue;
            }
            let mt = match k.match_kind.as_str() {
                "optional" => "ternary",
                m => m,
            };
            keys.push(IrKey {
                match_type: mt.to_string(),
                p4_kind: k.match_kind.clone(),
                target,
                name: kname,
                width,
                mask: kmask,
                annos: k.annos.clone(),
            });
        }
        if keys.iter().filter(|k| k.match_type == "lpm").count() > 1 {
            self.err(t.span, "a table can have at most one lpm key");
        }
        let match_type = if keys.iter().any(|k| k.match_type == "range") {
            "range"
        } else if keys.iter().any(|k| k.match_type == "ternary") {
            "ternary"
        } else if keys.iter().any(|k| k.match_type == "lpm") {
            "lpm"
        } else {
            "exact"
        };
        // actions
        let mut actions = vec![];
        let mut action_annos = vec![];
        for ar in &t.actions {
            let (a, global) = match self.find_action(&ar.name) {
                Some(x) => x,
                None => {
                    self.err(ar.span, format!("unknown action '{}'", ar.name));
                    continue;
                }
            };
            match self.get_action(&a, global, &ar.args, ar.span) {
                Ok(i) => {
                    if !actions.contains(&i) {
                        actions.push(i);
                        action_annos.push(ar.annos.clone());
                    }
                }
                Err(e) => self.sink.push(e),
            }
        }
        // default action
        let mut default = None;
        let da = t.default_action.clone();
        let (dref, dconst) = match &da {
            Some((r, c)) => (Some(r.clone()), *c),
            None => (None, false),
        };
        let dref = dref.unwrap_or(ActionRef {
            annos: vec![],
            name: "NoAction".into(),
            args: vec![],
            span: t.span,
        });
        if let Some((a, global)) = self.find_action(&dref.name) {
            let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
            let (bound, data) = dref.args.split_at(ndir.min(dref.args.len()));
            match self.get_action(&a, global, bound, dref.span) {
                Ok(i) => {
                    if !actions.contains(&i) {
                        // an implicit NoAction default joins the list as default-only;
                        // an explicit default must already be one of the table's actions
                        if t.default_action.is_some() {
                            self.err(
                                dref.span,
                                format!(
                                    "default action '{}' is not in the actions list of table '{}'",
                                    dref.name, t.name
                                ),
                            );
                        }
                        actions.push(i);
                        action_annos.push(vec![Annotation {
                            name: "defaultonly".into(),
                            args: vec![],
                            span: dref.span,
                        }]);
                    }
                    let params = self.ir.actions[i].params.clone();
                    if data.len() != params.len() {
                        self.err(
                            dref.span,
                            format!(
                                "action '{}' expects {} argument(s), got {}",
                                dref.name,
                                params.len(),
                                data.len()
                            ),
                        );
                    } else {
                        let mut vals = vec![];
                        for (arg, (_, w, _)) in data.iter().zip(params.iter()) {
                            let v = self.const_of(&arg.value, &Type::Bit(*w));
                            vals.push(hexw(v, *w));
                        }
                        default = Some((i, vals, dconst));
                    }
                }
                Err(e) => self.sink.push(e),
            }
        } else {
            self.err(dref.span, format!("unknown action '{}'", dref.name));
        }
        // size
        let size = match &t.size {
            Some(e) => self.const_of(e, &Type::InfInt) as u64,
            None => 1024,
        };
        // properties
        let mut kind = "simple".to_string();
        let mut profile = None;
        let mut with_counters = false;
        let mut direct_meter = None;
        let mut support_timeout = false;
        for (p, e, psp) in &t.props {
            match p.as_str() {
                "implementation" => {
                    let n = match &e.kind {
                        ExprKind::Name(n) => n.clone(),
                        // an anonymous instance: `implementation = action_selector(...);`
                        ExprKind::Call(f, targs, args) if matches!(&f.kind, ExprKind::Name(k) if k == "action_selector" || k == "action_profile") =>
                        {
                            let ExprKind::Name(k) = &f.kind else {
                                unreachable!()
                            };
                            let local = format!("{}_ap", t.name);
                            let inst = Instance {
                                annos: vec![],
                                ty: TypeRef::Named(k.clone(), targs.clone(), f.span),
                                args: args.clone(),
                                name: local.clone(),
                                span: e.span,
                            };
                            let ctl_name = self
                                .ctl
                                .as_ref()
                                .map(|c| c.name.clone())
                                .unwrap_or_default();
                            self.declare_instance(&inst, &ctl_name);
                            local
                        }
                        _ => {
                            self.err(e.span, "implementation must name an action_profile or action_selector instance");
                            continue;
                        }
                    };
                    match self.lookup(&n) {
                        Some(Bind::Extern { kind: k, name })
                            if k == "action_profile" || k == "action_selector" =>
                        {
                            kind = if k == "action_selector" {
                                "indirect_ws".into()
                            } else {
                                "indirect".into()
                            };
                            if let Some(pr) = self.pipelines[pipe]
                                .profiles
                                .iter_mut()
                                .find(|x| x.name == name)
                            {
                                pr.tables.push(fq.clone());
                                if let Some((_, inputs)) = &mut pr.selector {
                                    *inputs = selector_inputs.clone();
                                }
                            }
                            profile = Some(name);
                        }
                        _ => self.err(
                            e.span,
                            format!("'{}' is not an action_profile or action_selector", n),
                        ),
                    }
                }
                "counters" | "meters" => {
                    let n = match &e.kind {
                        ExprKind::Name(n) => n.clone(),
                        _ => {
                            self.err(
                                e.span,
                                "expected a direct_counter or direct_meter instance name",
                            );
                            continue;
                        }
                    };
                    match self.lookup(&n) {
                        Some(Bind::Extern { kind: k, name })
                            if (k == "direct_counter" && p == "counters")
                                || (k == "direct_meter" && p == "meters") =>
                        {
                            let mut dup = false;
                            if let Some(arr) = self.ir.arrays.iter_mut().find(|x| x.name == name) {
                                dup = arr.direct_table.is_some();
                                arr.direct_table = Some(fq.clone());
                            }
                            if dup {
                                self.err(
                                    e.span,
                                    format!("'{}' is already attached to another table", n),
                                );
                            }
                            if p == "counters" {
                                with_counters = true;
                            } else {
                                direct_meter = Some(name);
                            }
                        }
                        _ => self.err(
                            e.span,
                            format!(
                                "'{}' is not a {}",
                                n,
                                if p == "counters" {
                                    "direct_counter"
                                } else {
                                    "direct_meter"
                                }
                            ),
                        ),
                    }
                }
                "support_timeout" => {
                    support_timeout = matches!(e.kind, ExprKind::Bool(true));
                }
                _ => {
                    let _ = psp;
                }
            }
        }
        for arr in self.ir.arrays.iter_mut() {
            if arr.direct_table.as_deref() == Some(fq.as_str()) {
                arr.size = size;
            }
        }
        if kind == "indirect_ws" && selector_inputs.is_empty() {
            self.err(
                t.span,
                "a table with an action_selector needs at least one 'selector' key",
            );
        }
        if kind != "indirect_ws" && !selector_inputs.is_empty() {
            self.err(
                t.span,
                "'selector' keys need an action_selector implementation",
            );
        }
        // const entries
        let mut entries = vec![];
        let mut const_entries = false;
        if let Some((es, _c)) = &t.entries {
            const_entries = true;
            for (ei, en) in es.iter().enumerate() {
                match self.lower_entry(t, &keys, &actions, en, ei) {
                    Ok(j) => entries.push(j),
                    Err(e) => self.sink.push(e),
                }
            }
        }
        let mut nt = BTreeMap::new();
        for a in &actions {
            nt.insert(self.ir.actions[*a].name.clone(), None);
        }
        self.pipelines[pipe].tables.push(IrTable {
            name: fq.clone(),
            keys,
            match_type: match_type.into(),
            kind,
            profile,
            size,
            with_counters,
            direct_meter,
            actions,
            action_annos,
            next_tables: nt,
            default,
            entries,
            const_entries,
            synthetic: false,
            annos: t.annos.clone(),
            support_timeout,
        });
        Ok(fq)
    }

    fn key_target(&mut self, e: &Expr) -> PResult<(J, u32, Option<u128>)> {
        if let ExprKind::Call(f, _, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "isValid" && args.is_empty() {
                    if let Place::Header { inst, .. } = self.place(b)? {
                        return Ok((json!([inst, "$valid$"]), 1, None));
                    }
                }
            }
        }
        // a slice is computed into a temporary like any expression: the control plane gives
        // the slice's value, not the value at its position in the field (as p4c does)
        if let Ok(p) = self.place(e) {
            return match p {
                Place::Field { hdr, field, ty } => {
                    let w = match ty.width() {
                        Some(w) => w,
                        None => return Err(Error::new(e.span, format!("cannot match on a value of type {}", ty.name()))),
                    };
                    Ok((json!([hdr, field]), w, None))
                }
                _ => Err(Error::new(e.span, "table keys must be fields, field slices, header.isValid() or expressions of a fixed width")),
            };
        }
        // Any other expression: computed into a temporary just before the table.
        let made = self.pre_begin();
        let r = self.rv(e, None);
        self.pre_end(made);
        let (x, t) = r?;
        let w = match &t {
            Type::Bool => 1,
            t => match t.width() {
                Some(w) if *t != Type::InfInt => w,
                _ => {
                    return Err(Error::new(
                        e.span,
                        format!("a table key needs a fixed width, not {}", t.name()),
                    ))
                }
            },
        };
        let x = self.to_data(x, &t);
        let tmp = self.scalar(&format!("key_{}", self.tmp_count), &Type::Bit(w));
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = tmp else {
            unreachable!()
        };
        let frag = self.src(e.span);
        self.key_prims.push(json!({"op": "assign", "parameters": [{"type": "field", "value": [hdr, field]}, x.jp()], "source_info": {"source_fragment": frag}}));
        Ok((json!([hdr, field]), w, None))
    }

    /// If the table's keys needed temporaries, a synthetic table computing them
    /// runs first; returns the node to enter.
    fn table_entry(&mut self, tn: &str) -> String {
        if self.key_prims.is_empty() {
            return tn.to_string();
        }
        let prims = std::mem::take(&mut self.key_prims);
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let k = self.synth_count;
        self.synth_count += 1;
        let aname = format!("{}.key_act_{}", ctl, k);
        self.ir.actions.push(IrAction {
            name: aname.clone(),
            decl: String::new(),
            params: vec![],
            prims,
            synthetic: true,
            annos: vec![],
        });
        let aid = self.ir.actions.len() - 1;
        let tname = format!("tbl_key_{}", k);
        let mut nt = BTreeMap::new();
        nt.insert(aname, Some(tn.to_string()));
        self.pipelines[pipe].tables.push(IrTable {
            name: tname.clone(),
            keys: vec![],
            match_type: "exact".into(),
            kind: "simple".into(),
            profile: None,
            size: 1024,
            with_counters: false,
            direct_meter: None,
            actions: vec![aid],
            action_annos: vec![vec![]],
            next_tables: nt,
            default: Some((aid, vec![], true)),
            entries: vec![],
            const_entries: false,
            synthetic: true,
            annos: vec![],
            support_timeout: false,
        });
        tname
    }

    fn lower_entry(
        &mut self,
        t: &Table,
        keys: &[IrKey],
        actions: &[usize],
        en: &Entry,
        ei: usize,
    ) -> PResult<J> {
        let keysets: Vec<&Expr> =
            if en.keys.len() == 1 && keys.len() > 1 && matches!(en.keys[0].kind, ExprKind::Default)
            {
                vec![&en.keys[0]; keys.len()]
            } else {
                en.keys.iter().collect()
            };
        if keysets.len() != keys.len() {
            return Err(Error::new(
                en.span,
                format!(
                    "entry has {} key value(s) but table '{}' has {} key(s)",
                    keysets.len(),
                    t.name,
                    keys.len()
                ),
            ));
        }
        let mut mk = vec![];
        for (k, ks) in keys.iter().zip(keysets) {
            let w = k.width;
            let kt = Type::Bit(w);
            let j = match (k.p4_kind.as_str(), &ks.kind) {
                ("exact", ExprKind::Default) => {
                    return Err(Error::new(ks.span, "exact keys need a value"))
                }
                ("exact", _) => {
                    json!({"match_type": "exact", "key": hexw(self.const_of(ks, &kt), w)})
                }
                ("lpm", ExprKind::Default) => {
                    json!({"match_type": "lpm", "key": hexw(0, w), "prefix_length": 0})
                }
                ("lpm", ExprKind::Mask(v, m)) => {
                    let v = self.const_of(v, &kt);
                    let m = self.const_of(m, &kt);
                    let pl = m.count_ones();
                    if m != shl(mask(pl), (w - pl) as u128) & mask(w) {
                        return Err(Error::new(ks.span, "lpm mask must be a prefix mask"));
                    }
                    json!({"match_type": "lpm", "key": hexw(v & m, w), "prefix_length": pl})
                }
                ("lpm", _) => {
                    json!({"match_type": "lpm", "key": hexw(self.const_of(ks, &kt), w), "prefix_length": w})
                }
                ("ternary" | "optional", ExprKind::Default) => {
                    json!({"match_type": "ternary", "key": hexw(0, w), "mask": hexw(0, w)})
                }
                ("ternary", ExprKind::Mask(v, m)) => {
                    let v = self.const_of(v, &kt);
                    let m = self.const_of(m, &kt);
                    json!({"match_type": "ternary", "key": hexw(v & m, w), "mask": hexw(m, w)})
                }
                ("ternary" | "optional", _) => {
                    json!({"match_type": "ternary", "key": hexw(self.const_of(ks, &kt), w), "mask": hexw(mask(w), w)})
                }
                ("range", ExprKind::Default) => {
                    json!({"match_type": "range", "start": hexw(0, w), "end": hexw(mask(w), w)})
                }
                ("range", ExprKind::Range(a, b)) => {
                    let a = self.const_of(a, &kt);
                    let b = self.const_of(b, &kt);
                    json!({"match_type": "range", "start": hexw(a, w), "end": hexw(b, w)})
                }
                ("range", _) => {
                    let v = self.const_of(ks, &kt);
                    json!({"match_type": "range", "start": hexw(v, w), "end": hexw(v, w)})
                }
                (m, _) => {
                    return Err(Error::new(
                        ks.span,
                        format!("unsupported key kind '{}' in entries", m),
                    ))
                }
            };
            mk.push(j);
        }
        let (a, global) = self.find_action(&en.action.name).ok_or_else(|| {
            Error::new(
                en.action.span,
                format!("unknown action '{}'", en.action.name),
            )
        })?;
        let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
        let (bound, data) = en.action.args.split_at(ndir.min(en.action.args.len()));
        let ai = self.get_action(&a, global, bound, en.action.span)?;
        if !actions.contains(&ai) {
            return Err(Error::new(
                en.action.span,
                format!(
                    "action '{}' is not in the actions list of table '{}'",
                    en.action.name, t.name
                ),
            ));
        }
        let params = self.ir.actions[ai].params.clone();
        if data.len() != params.len() {
            return Err(Error::new(
                en.action.span,
                format!(
                    "action '{}' expects {} argument(s), got {}",
                    en.action.name,
                    params.len(),
                    data.len()
                ),
            ));
        }
        let mut vals = vec![];
        for (arg, (_, w, _)) in data.iter().zip(params.iter()) {
            vals.push(hexw(self.const_of(&arg.value, &Type::Bit(*w)), *w));
        }
        let prio = match (&en.priority, anno_int(&en.annos, "priority")) {
            (Some(p), _) => self.const_of(p, &Type::InfInt) as u64,
            (None, Some(p)) => p as u64,
            _ => ei as u64 + 1,
        };
        Ok(
            json!({"source_info": {"source_fragment": self.src(en.span)}, "match_key": mk,
            "action_entry": {"action_id": ai, "action_data": vals}, "priority": prio}),
        )
    }

    // ------------------------------------------------------------ places

    fn place(&mut self, e: &Expr) -> PResult<Place> {
        match &e.kind {
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Bind::Place(p)) => Ok(p),
                Some(Bind::Val(X::Field(hdr, field), ty)) => Ok(Place::Field { hdr, field, ty }),
                Some(_) => Err(Error::new(
                    e.span,
                    format!("'{}' cannot be used as a location here", n),
                )),
                None => Err(Error::new(e.span, format!("undeclared identifier '{}'", n))),
            },
            ExprKind::Member(b, m) => {
                let bp = self.place(b)?;
                match &bp {
                    Place::Struct { ty, members } | Place::Union { ty, members, .. } => {
                        match members.iter().find(|x| x.0 == *m) {
                            Some((_, p)) => Ok(p.clone()),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("type {} has no field '{}'", ty, m),
                            )),
                        }
                    }
                    Place::Header { inst, ty } => {
                        match self.env.field_type(&Type::Header(ty.clone()), m) {
                            Some(t) => Ok(Place::Field {
                                hdr: inst.clone(),
                                field: m.clone(),
                                ty: t,
                            }),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("header {} has no field '{}'", ty, m),
                            )),
                        }
                    }
                    Place::DynHeader { elem, deref, .. } => {
                        let def = self
                            .env
                            .composite(elem)
                            .cloned()
                            .ok_or_else(|| Error::new(e.span, "unknown header"))?;
                        match def.fields.iter().position(|f| f.0 == *m) {
                            Some(off) => Ok(Place::DynField {
                                x: X::op("access_field", deref.clone(), X::Raw(json!(off))),
                                ty: def.fields[off].1.clone(),
                            }),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("header {} has no field '{}'", elem, m),
                            )),
                        }
                    }
                    Place::DynField { ty, .. } => Err(Error::new(
                        e.span,
                        format!("a value of type {} has no field '{}'", ty.name(), m),
                    )),
                    Place::Stack { name, elem, .. } if m == "last" && self.ctx != Ctx::Parser => {
                        let idx = X::un("last_stack_index", X::Stack(name.clone()));
                        let deref = X::op("dereference_header_stack", X::Stack(name.clone()), idx);
                        Ok(Place::DynHeader {
                            stack: name.clone(),
                            elem: elem.clone(),
                            deref,
                        })
                    }
                    Place::Stack { .. } => Err(Error::new(
                        member_span(e, m),
                        format!("'.{}' on a header stack is not a location here", m),
                    )),
                    Place::Field { ty, .. } => Err(Error::new(
                        e.span,
                        format!("a value of type {} has no field '{}'", ty.name(), m),
                    )),
                }
            }
            ExprKind::Index(b, i) => {
                let bp = self.place(b)?;
                match bp {
                    Place::Stack { name, elem, size } => {
                        let idx = match self.const_expr(i, Some(&Type::Bit(32))) {
                            Ok(v) => v,
                            Err(_) => {
                                if self.ctx == Ctx::Parser {
                                    return Err(Error::new(i.span, "header stack indices in parsers must be compile-time constants"));
                                }
                                let (ix, it) = self.rv(i, Some(&Type::Bit(32)))?;
                                if !matches!(it, Type::Bit(_) | Type::Int(_)) {
                                    return Err(Error::new(
                                        i.span,
                                        format!(
                                            "a header stack index must be an integer, not {}",
                                            it.name()
                                        ),
                                    ));
                                }
                                let ix = if self.snap_index {
                                    self.snapshot(ix, &it)
                                } else {
                                    ix
                                };
                                let deref =
                                    X::op("dereference_header_stack", X::Stack(name.clone()), ix);
                                return Ok(Place::DynHeader {
                                    stack: name,
                                    elem,
                                    deref,
                                });
                            }
                        };
                        if idx >= size as u128 {
                            return Err(Error::new(
                                i.span,
                                format!(
                                    "index {} is out of bounds for a stack of size {}",
                                    idx, size
                                ),
                            ));
                        }
                        Ok(Place::Header {
                            inst: format!("{}[{}]", name, idx),
                            ty: elem,
                        })
                    }
                    _ => Err(Error::new(e.span, "only header stacks can be indexed")),
                }
            }
            _ => Err(Error::new(
                e.span,
                "expected a location (a variable, header or field)",
            )),
        }
    }

    // ------------------------------------------------------------ rvalues

    fn to_data(&self, x: X, t: &Type) -> X {
        if *t == Type::Bool && x.is_bool_op() {
            X::un("b2d", x)
        } else {
            x
        }
    }

    fn check_assign(&self, dst: &Type, src: &Type, span: Span) -> PResult<()> {
        if types_compatible(dst, src) {
            return Ok(());
        }
        Err(Error::new(
            span,
            format!(
                "cannot assign a value of type {} to a location of type {}",
                src.name(),
                dst.name()
            ),
        ))
    }

    /// Lower an r-value: returns the IR expression and its type. Bool-typed results
    /// are boolean expressions; everything else is data.
    pub fn rv(&mut self, e: &Expr, expect: Option<&Type>) -> PResult<(X, Type)> {
        self.inline_depth += 1;
        if self.inline_depth > 200 {
            self.inline_depth -= 1;
            return Err(Error::new(e.span, "expression too deep"));
        }
        let r = self.rv_inner(e, expect);
        self.inline_depth -= 1;
        r
    }

    fn lit(&self, v: u128, t: &Type) -> X {
        match t {
            Type::Bool => X::Bool(v != 0),
            Type::Int(w) => {
                let sv = sign_extend(v & mask(*w), t);
                if *w > 0 && (sv >> 127) & 1 == 1 {
                    X::Hex(0u128.wrapping_sub(sv), true)
                } else {
                    X::Hex(v & mask(*w), false)
                }
            }
            _ => X::Hex(v, false),
        }
    }

    fn wrap(&self, x: X, t: &Type) -> X {
        match t {
            Type::Bit(w) => X::op("&", x, X::Hex(mask(*w), false)),
            Type::Int(w) => X::op("two_comp_mod", x, X::Hex(*w as u128, false)),
            _ => x,
        }
    }

    fn rv_inner(&mut self, e: &Expr, expect: Option<&Type>) -> PResult<(X, Type)> {
        // constants first
        if is_const_shape(e) {
            let locals = self.const_locals();
            if let Ok((v, t)) = self.env.const_eval(e, &locals) {
                let t = match (&t, expect) {
                    (Type::InfInt, Some(et)) if et.is_int_like() => {
                        let w = et.width().unwrap_or(128);
                        let sv = v;
                        let neg = (sv >> 127) & 1 == 1;
                        if !neg && w < 128 && shr(sv, w as u128) != 0 {
                            return Err(Error::new(
                                e.span,
                                format!("value {} does not fit in type {}", sv, et.name()),
                            ));
                        }
                        let t2 = match et {
                            Type::SerEnum(_, w) => Type::Bit(*w),
                            t => t.clone(),
                        };
                        return Ok((self.lit(v & mask(w), &t2), t2));
                    }
                    _ => t,
                };
                if let Type::InfInt = t {
                    if (v >> 127) & 1 == 1 {
                        return Ok((X::Hex(0u128.wrapping_sub(v), true), t));
                    }
                }
                return Ok((self.lit(v, &t), t));
            }
        }
        match &e.kind {
            ExprKind::Int(..) | ExprKind::Bool(_) => unreachable!("constants handled above"),
            ExprKind::Str(s) => Ok((X::Str(s.clone()), Type::Str)),
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Bind::Place(p)) => self.place_value(p, e.span),
                Some(Bind::Val(x, t)) => {
                    if t == Type::Bool && !x.is_bool_op() {
                        return Ok((X::un("d2b", x), t));
                    }
                    Ok((x, t))
                }
                Some(Bind::Const(v, t)) => Ok((self.lit(v, &t), t)),
                Some(_) => Err(Error::new(
                    e.span,
                    format!("'{}' cannot be used as a value", n),
                )),
                None => {
                    if self.env.consts.contains_key(n) {
                        let (t, v) = self.env.consts[n].clone();
                        return Ok((self.lit(v, &t), t));
                    }
                    Err(Error::new(e.span, format!("undeclared identifier '{}'", n)))
                }
            },
            ExprKind::Member(b, m) => {
                if let ExprKind::Name(n) = &b.kind {
                    if n == "error" && self.lookup(n).is_none() {
                        return Err(Error::new(e.span, format!("unknown error '{}'", m)));
                    }
                    if self.env.enums.contains_key(n) && self.lookup(n).is_none() {
                        return Err(Error::new(
                            e.span,
                            format!("enum {} has no member '{}'", n, m),
                        ));
                    }
                }
                // stack properties
                if let Ok(Place::Stack { name, elem, size }) = self.place(b) {
                    return match m.as_str() {
                        "size" => Ok((X::Hex(size as u128, false), Type::Bit(32))),
                        "lastIndex" => {
                            Ok((X::un("last_stack_index", X::Stack(name)), Type::Bit(32)))
                        }
                        "last" | "next" => Err(Error::new(
                            e.span,
                            format!(
                                "'{}.{}' is a header; access one of its fields",
                                self.src(b.span),
                                m
                            ),
                        )),
                        _ => {
                            let _ = elem;
                            Err(Error::new(
                                e.span,
                                format!("header stacks have no member '{}'", m),
                            ))
                        }
                    };
                }
                if let ExprKind::Member(sb, l) = &b.kind {
                    if l == "last" {
                        if let Ok(Place::Stack { name, elem, .. }) = self.place(sb) {
                            let t = self
                                .env
                                .field_type(&Type::Header(elem), m)
                                .ok_or_else(|| Error::new(e.span, format!("no field '{}'", m)))?;
                            let x = X::StackField(name, m.clone());
                            return Ok(if t == Type::Bool {
                                (X::un("d2b", x), t)
                            } else {
                                (x, t)
                            });
                        }
                    }
                }
                if self.ctx == Ctx::Parser {
                    if let Some((_, Type::Header(h))) = self.lookahead_call(b)? {
                        let def = self
                            .env
                            .composite(&h)
                            .cloned()
                            .ok_or_else(|| Error::new(e.span, "unknown header"))?;
                        let mut off = 0;
                        for (n, t, _) in &def.fields {
                            let w = t.width().unwrap_or(0);
                            if n == m {
                                let x = self.parser_temp(X::Lookahead(off, w), t);
                                return Ok(if *t == Type::Bool {
                                    (X::un("d2b", x), t.clone())
                                } else {
                                    (x, t.clone())
                                });
                            }
                            off += w;
                        }
                        return Err(Error::new(
                            e.span,
                            format!("header {} has no field '{}'", h, m),
                        ));
                    }
                }
                let p = self.place(e)?;
                self.place_value(p, e.span)
            }
            ExprKind::Index(..) => {
                let p = self.place(e)?;
                self.place_value(p, e.span)
            }
            ExprKind::Slice(b, hi, lo) => {
                let (x, t) = self.rv(b, None)?;
                let w = match t {
                    Type::Bit(w) | Type::Int(w) => w,
                    _ => {
                        return Err(Error::new(
                            b.span,
                            format!("cannot slice a value of type {}", t.name()),
                        ))
                    }
                };
                let h = self.const_expr(hi, None)?;
                let l = self.const_expr(lo, None)?;
                if h < l || h >= w as u128 {
                    return Err(Error::new(
                        e.span,
                        format!("invalid slice [{}:{}] of a {}-bit value", h, l, w),
                    ));
                }
                let sw = (h - l + 1) as u32;
                let shifted = if l == 0 {
                    x
                } else {
                    X::op(">>", x, X::Hex(l, false))
                };
                Ok((X::op("&", shifted, X::Hex(mask(sw), false)), Type::Bit(sw)))
            }
            ExprKind::Call(..) => self.call_value(e),
            ExprKind::Unary(op, x) => {
                let (v, t) = self.rv(x, expect)?;
                match *op {
                    "!" => {
                        if t != Type::Bool {
                            return Err(Error::new(
                                e.span,
                                format!("'!' needs a bool operand, not {}", t.name()),
                            ));
                        }
                        Ok((X::un("not", v), Type::Bool))
                    }
                    "~" => {
                        if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                            return Err(Error::new(
                                e.span,
                                format!("'~' needs a bit<N> or int<N> operand, not {}", t.name()),
                            ));
                        }
                        Ok((self.wrap(X::un("~", v), &t), t))
                    }
                    "-" => {
                        if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                            return Err(Error::new(
                                e.span,
                                format!(
                                    "unary '-' needs a bit<N> or int<N> operand, not {}",
                                    t.name()
                                ),
                            ));
                        }
                        Ok((self.wrap(X::op("-", X::Hex(0, false), v), &t), t))
                    }
                    _ => Ok((v, t)),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(e, op, a, b, expect),
            ExprKind::Ternary(c, a, b) => {
                let (cx, ct) = self.rv(c, Some(&Type::Bool))?;
                if ct != Type::Bool {
                    return Err(Error::new(c.span, "condition of ?: must be bool"));
                }
                if (self.has_effects(a) || self.has_effects(b)) && self.act.is_some() {
                    return self.ternary_branches(e, cx, a, b, expect);
                }
                let (ax0, at0) = self.rv(a, expect)?;
                let (bx, bt) = self.rv(b, Some(&at0).filter(|t| **t != Type::InfInt).or(expect))?;
                let (ax, at) = if at0 == Type::InfInt && bt != Type::InfInt {
                    self.rv(a, Some(&bt))?
                } else {
                    (ax0, at0)
                };
                let t = unify(&at, &bt).ok_or_else(|| {
                    Error::new(
                        e.span,
                        format!(
                            "branches of ?: have different types {} and {}",
                            at.name(),
                            bt.name()
                        ),
                    )
                })?;
                if t == Type::InfInt {
                    return Err(Error::new(
                        e.span,
                        "cannot infer the width of ?: (give one branch a width)",
                    ));
                }
                let (ax, bx) = (self.to_data(ax, &t), self.to_data(bx, &t));
                let x = X::Tern(Box::new(cx), Box::new(ax), Box::new(bx));
                Ok(if t == Type::Bool {
                    (X::un("d2b", x), t)
                } else {
                    (x, t)
                })
            }
            ExprKind::Cast(ty, x) => {
                let t = self.env.resolve(ty)?;
                let (v, vt) = self.rv(x, Some(&t))?;
                self.cast(v, &vt, &t, e.span)
            }
            ExprKind::List(_) => Err(Error::new(e.span, "a list expression is not allowed here")),
            ExprKind::Mask(..) | ExprKind::Range(..) => Err(Error::new(
                e.span,
                "'&&&' and '..' are only allowed in select cases and table entries",
            )),
            ExprKind::Default => Err(Error::new(e.span, "'default'/'_' is not a value")),
            ExprKind::TypeExpr(_) => Err(Error::new(e.span, "a type is not a value")),
        }
    }

    fn cast(&mut self, v: X, from: &Type, to: &Type, span: Span) -> PResult<(X, Type)> {
        let r = match (from, to) {
            (f, t) if f == t => v,
            (Type::InfInt, _) => v,
            (Type::Bool, Type::Bit(1)) => X::un("b2d", v),
            (Type::Bit(1), Type::Bool) => X::un("d2b", v),
            (Type::Bit(a), Type::Bit(b)) | (Type::Int(a), Type::Bit(b)) => {
                if b < a || matches!(from, Type::Int(_)) {
                    X::op("&", v, X::Hex(mask(*b), false))
                } else {
                    v
                }
            }
            (Type::Bit(_), Type::Int(b)) | (Type::Int(_), Type::Int(b)) => {
                X::op("two_comp_mod", v, X::Hex(*b as u128, false))
            }
            (Type::SerEnum(_, a), Type::Bit(b)) if a == b => v,
            (Type::Bit(a), Type::SerEnum(_, b)) if a == b => v,
            (Type::SerEnum(_, _), Type::SerEnum(..)) => v,
            _ => {
                return Err(Error::new(
                    span,
                    format!("cannot cast {} to {}", from.name(), to.name()),
                ))
            }
        };
        Ok((r, to.clone()))
    }

    fn place_value(&mut self, p: Place, span: Span) -> PResult<(X, Type)> {
        match p {
            Place::Field { hdr, field, ty } => {
                let x = X::Field(hdr, field);
                if ty == Type::Bool {
                    Ok((X::un("d2b", x), ty))
                } else {
                    Ok((x, ty))
                }
            }
            Place::Header { inst, ty } => Ok((X::Header(inst), Type::Header(ty))),
            Place::Stack { name, elem, size } => Ok((
                X::Stack(name),
                Type::Stack(Box::new(Type::Header(elem)), size),
            )),
            Place::Struct { ty, .. } => {
                let _ = span;
                Ok((X::Str(String::new()), Type::Struct(ty)))
            }
            Place::Union { name, ty, .. } => Ok((X::Header(name), Type::Union(ty))),
            Place::DynHeader { deref, elem, .. } => Ok((deref, Type::Header(elem))),
            Place::DynField { x, ty } => {
                if ty == Type::Bool {
                    Ok((X::un("d2b", x), ty))
                } else {
                    Ok((x, ty))
                }
            }
        }
    }

    fn binary(
        &mut self,
        e: &Expr,
        op: &'static str,
        a: &Expr,
        b: &Expr,
        expect: Option<&Type>,
    ) -> PResult<(X, Type)> {
        match op {
            "&&" | "||" => {
                let (ax, at) = self.rv(a, Some(&Type::Bool))?;
                if self.has_effects(b) && self.act.is_some() && at == Type::Bool {
                    return self.short_circuit(op, ax, b);
                }
                let (bx, bt) = self.rv(b, Some(&Type::Bool))?;
                if at != Type::Bool || bt != Type::Bool {
                    return Err(Error::new(
                        e.span,
                        format!(
                            "'{}' needs bool operands, not {} and {}",
                            op,
                            at.name(),
                            bt.name()
                        ),
                    ));
                }
                return Ok((
                    X::op(if op == "&&" { "and" } else { "or" }, ax, bx),
                    Type::Bool,
                ));
            }
            "<<" | ">>" => {
                let first = if self.has_effects(b) {
                    // left to right: the left operand is read before the right one's effects
                    let (ax, at) = self.rv(a, None)?;
                    Some((self.snapshot(ax, &at), at))
                } else {
                    None
                };
                let (bx, bt) = self.rv(b, None)?;
                let right_const = matches!(bx, X::Hex(..));
                let (ax, at) = match first {
                    Some(f) => f,
                    None => self.rv(a, if right_const { expect } else { None })?,
                };
                if !at.is_int_like() || !bt.is_int_like() {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' needs integer operands", op),
                    ));
                }
                if at == Type::InfInt {
                    return Err(Error::new(
                        a.span,
                        "the left operand of a shift needs a width (e.g. 8w1)",
                    ));
                }
                if matches!(bt, Type::Int(_)) {
                    return Err(Error::new(b.span, "shift amounts must be unsigned"));
                }
                let x = X::op(op, ax, bx);
                return Ok((if op == "<<" { self.wrap(x, &at) } else { x }, at));
            }
            "++" => {
                let (ax, at) = self.rv(a, None)?;
                let ax = if self.has_effects(b) {
                    self.snapshot(ax, &at)
                } else {
                    ax
                };
                let (bx, bt) = self.rv(b, None)?;
                let (wa, wb) = match (&at, &bt) {
                    (Type::Bit(x) | Type::Int(x), Type::Bit(y) | Type::Int(y)) => (*x, *y),
                    _ => {
                        return Err(Error::new(
                            e.span,
                            format!(
                                "'++' needs bit<N> operands with known widths, not {} and {}",
                                at.name(),
                                bt.name()
                            ),
                        ))
                    }
                };
                let _ = wa;
                let rt = match at {
                    Type::Int(_) => Type::Int(wa + wb),
                    _ => Type::Bit(wa + wb),
                };
                let bx = if matches!(bt, Type::Int(_)) {
                    X::op("&", bx, X::Hex(mask(wb), false))
                } else {
                    bx
                };
                let ax = if matches!(at, Type::Int(_)) {
                    X::op("&", ax, X::Hex(mask(wa), false))
                } else {
                    ax
                };
                return Ok((
                    X::op("|", X::op("<<", ax, X::Hex(wb as u128, false)), bx),
                    rt,
                ));
            }
            _ => {}
        }
        // typed binary: infer the literal side from the other
        let (mut ax, mut at) = self.rv(a, None)?;
        if self.has_effects(b) {
            ax = self.snapshot(ax, &at);
        }
        let (bx, bt) = self.rv(b, if at != Type::InfInt { Some(&at) } else { None })?;
        if at == Type::InfInt && bt != Type::InfInt {
            let r = self.rv(a, Some(&bt))?;
            ax = r.0;
            at = r.1;
        }
        let t = match unify(&at, &bt) {
            Some(t) => t,
            None => {
                return Err(Error::new(
                    e.span,
                    format!(
                        "operands of '{}' have different types: {} and {}",
                        op,
                        at.name(),
                        bt.name()
                    ),
                ));
            }
        };
        let t = match (&t, expect) {
            (Type::InfInt, Some(et))
                if et.is_int_like() && !matches!(op, "==" | "!=" | "<" | ">" | "<=" | ">=") =>
            {
                et.clone()
            }
            _ => t,
        };
        match op {
            "==" | "!=" => {
                if matches!(
                    t,
                    Type::Header(_) | Type::Struct(_) | Type::Stack(..) | Type::Union(_)
                ) {
                    let eq = self.composite_eq(e, a, b)?;
                    return Ok((if op == "==" { eq } else { X::un("not", eq) }, Type::Bool));
                }
                if t == Type::Bool {
                    // compare as data
                    return Ok((X::op(op, X::un("b2d", ax), X::un("b2d", bx)), Type::Bool));
                }
                Ok((X::op(op, ax, bx), Type::Bool))
            }
            "<" | ">" | "<=" | ">=" => {
                if !t.is_int_like() {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' needs integer operands, not {}", op, t.name()),
                    ));
                }
                Ok((X::op(op, ax, bx), Type::Bool))
            }
            "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "|+|" | "|-|" => {
                if !matches!(t, Type::Bit(_) | Type::Int(_) | Type::InfInt) {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' needs bit<N> or int<N> operands, not {}", op, t.name()),
                    ));
                }
                if matches!(op, "/" | "%") && matches!(t, Type::Int(_)) {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' is not defined on signed integers", op),
                    ));
                }
                let x = match op {
                    "|+|" => {
                        let w = t.width().unwrap_or(32);
                        match t {
                            Type::Int(_) => {
                                X::op("sat_cast", X::op("+", ax, bx), X::Hex(w as u128, false))
                            }
                            _ => X::op("usat_cast", X::op("+", ax, bx), X::Hex(w as u128, false)),
                        }
                    }
                    "|-|" => {
                        let w = t.width().unwrap_or(32);
                        match t {
                            Type::Int(_) => {
                                X::op("sat_cast", X::op("-", ax, bx), X::Hex(w as u128, false))
                            }
                            _ => X::op("usat_cast", X::op("-", ax, bx), X::Hex(w as u128, false)),
                        }
                    }
                    "+" | "-" | "*" => self.wrap(X::op(op, ax, bx), &t),
                    _ => X::op(op, ax, bx),
                };
                Ok((x, t))
            }
            _ => Err(Error::new(e.span, format!("unsupported operator '{}'", op))),
        }
    }

    fn call_value(&mut self, e: &Expr) -> PResult<(X, Type)> {
        let ExprKind::Call(f, _, args) = &e.kind else {
            unreachable!()
        };
        if let ExprKind::Member(b, m) = &f.kind {
            if m == "isValid" && args.is_empty() {
                match self.place(b)? {
                    Place::Header { inst, .. } => {
                        return Ok((X::un("d2b", X::Field(inst, "$valid$".into())), Type::Bool))
                    }
                    Place::Union { members, .. } => {
                        let mut x: Option<X> = None;
                        for (_, m) in members {
                            if let Place::Header { inst, .. } = m {
                                let v = X::un("d2b", X::Field(inst, "$valid$".into()));
                                x = Some(match x {
                                    Some(p) => X::op("or", p, v),
                                    None => v,
                                });
                            }
                        }
                        return Ok((x.unwrap_or(X::Bool(false)), Type::Bool));
                    }
                    Place::DynHeader { deref, .. } => {
                        return Ok((X::un("valid", deref), Type::Bool))
                    }
                    _ => return Err(Error::new(e.span, "isValid() needs a header")),
                }
            }
            if m == "lookahead" {
                if let Some((w, t)) = self.lookahead_call(e)? {
                    if self.ctx != Ctx::Parser {
                        return Err(Error::new(e.span, "lookahead is only allowed in parsers"));
                    }
                    if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                        return Err(Error::new(e.span, "only lookahead of bit<N>/int<N> values (or a field of a looked-ahead header) can be used in expressions"));
                    }
                    let x = self.parser_temp(X::Lookahead(0, w), &t);
                    return Ok((x, t));
                }
            }
            if m == "apply" {
                return Err(Error::new(e.span, "table application results can only be used as `t.apply().hit`, `.miss` or in `switch (t.apply().action_run)`"));
            }
        }
        if let ExprKind::Name(n) = &f.kind {
            if let Some(Decl::Function {
                ret, params, body, ..
            }) = self.functions.get(n).cloned()
            {
                return self.inline_function(e, n, &ret, &params, &body, args);
            }
        }
        // calls with side effects used as values: lower into a temporary when in an action
        Err(Error::new(
            e.span,
            format!("'{}' cannot be used as a value here", self.src(f.span)),
        ))
    }

    /// Inlines a function body as statements (in the current action, or before the
    /// current condition/table in an apply block); the result is a temporary.
    fn inline_function_stmts(
        &mut self,
        e: &Expr,
        n: &str,
        rt: &Type,
        params: &[Param],
        body: &[Stmt],
        args: &[Arg],
    ) -> PResult<(X, Type)> {
        if self.ctx == Ctx::Parser || self.ctx == Ctx::Checksum || self.ctx == Ctx::Deparser {
            return Err(Error::new(e.span, format!("function '{}' cannot be inlined here (only `return expr;` bodies are supported in parsers)", n)));
        }
        let ret = if *rt == Type::Void {
            None
        } else {
            Some(self.scalar(&format!("{}_ret_{}", n, self.tmp_count), rt))
        };
        self.tmp_count += 1;
        let a = Action {
            annos: vec![],
            name: n.to_string(),
            params: params
                .iter()
                .map(|p| {
                    let mut p = p.clone();
                    if p.dir == Dir::None {
                        p.dir = Dir::In;
                    }
                    p
                })
                .collect(),
            body: body.to_vec(),
            span: e.span,
        };
        let saved_ret = std::mem::replace(&mut self.fn_ret, ret.clone());
        let made = self.pre_begin();
        let saved_ctx = self.ctx;
        self.ctx = Ctx::Action;
        let r = self.inline_action(&a, true, args, e.span);
        self.ctx = saved_ctx;
        self.fn_ret = saved_ret;
        self.pre_end(made);
        r?;
        match ret {
            Some(Place::Field { hdr, field, ty }) => Ok((
                if ty == Type::Bool {
                    X::un("d2b", X::Field(hdr, field))
                } else {
                    X::Field(hdr, field)
                },
                ty,
            )),
            _ => Err(Error::new(
                e.span,
                format!("function '{}' returns no value", n),
            )),
        }
    }

    fn inline_function(
        &mut self,
        e: &Expr,
        n: &str,
        ret: &TypeRef,
        params: &[Param],
        body: &[Stmt],
        args: &[Arg],
    ) -> PResult<(X, Type)> {
        // Only functions of the form `{ return expr; }` (after local consts) are inlined as values.
        let rt = self.env.resolve(ret)?;
        if args.len() != params.len() {
            return Err(Error::new(
                e.span,
                format!(
                    "function '{}' expects {} argument(s), got {}",
                    n,
                    params.len(),
                    args.len()
                ),
            ));
        }
        if self.inline_depth > 60 {
            return Err(Error::new(
                e.span,
                "function calls nested too deeply (recursion?)",
            ));
        }
        if !fn_is_simple(params, body) {
            return self.inline_function_stmts(e, n, &rt, params, body, args);
        }
        let mut binds = vec![];
        for (p, a) in params.iter().zip(args) {
            let pt = self.env.resolve(&p.ty)?;
            let (x, t) = self.rv(&a.value, Some(&pt))?;
            self.check_assign(&pt, &t, a.value.span)?;
            binds.push((
                p.name.clone(),
                match x {
                    X::Hex(v, false) => Bind::Const(v, pt),
                    x => Bind::Val(x, pt),
                },
            ));
        }
        let ret_expr = match body.iter().find_map(|s| match &s.kind {
            StmtKind::Return(Some(x)) => Some(x.clone()),
            _ => None,
        }) {
            Some(x) if body.iter().all(|s| matches!(s.kind, StmtKind::Return(_) | StmtKind::Const(..))) => x,
            _ => return Err(Error::new(e.span, format!("function '{}' is too complex to inline in an expression (only `return expr;` bodies are supported)", n))),
        };
        self.scopes.push(HashMap::new());
        for (k, b) in binds {
            self.bind(&k, b);
        }
        for s in body {
            if let StmtKind::Const(ty, cn, v) = &s.kind {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(cn, Bind::Const(val, t));
            }
        }
        let r = self.rv(&ret_expr, Some(&rt));
        self.scopes.pop();
        let (x, t) = r?;
        self.check_assign(&rt, &t, ret_expr.span)?;
        Ok((x, if t == Type::InfInt { rt } else { t }))
    }

    // ------------------------------------------------------------ action statements

    fn push(&mut self, op: &str, params: Vec<J>, span: Span) {
        let frag = self.src(span);
        if let Some(a) = self.act.as_mut() {
            a.prims.push(
                json!({"op": op, "parameters": params, "source_info": {"source_fragment": frag}}),
            );
        }
    }

    fn action_stmt(&mut self, s: &Stmt) -> PResult<()> {
        match &s.kind {
            StmtKind::Assign(l, r) => self.assign(l, r, s.span),
            StmtKind::Call(c) => self.call_stmt(c, s.span),
            StmtKind::Block(v) => {
                self.scopes.push(HashMap::new());
                let mut res = Ok(());
                for x in v {
                    if let Err(e) = self.action_stmt(x) {
                        self.sink.push(e.clone());
                        res = Ok(());
                    }
                }
                self.scopes.pop();
                res
            }
            StmtKind::If(c, a, b) => {
                let (cx, ct) = self.rv(c, Some(&Type::Bool))?;
                if ct != Type::Bool {
                    return Err(Error::new(
                        c.span,
                        format!("condition must be bool, not {}", ct.name()),
                    ));
                }
                let jz_at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                let cond_data = X::un("b2d", cx);
                self.push(
                    "_jump_if_zero",
                    vec![cond_data.jp(), json!({"type": "hexstr", "value": "0x0"})],
                    c.span,
                );
                self.action_stmt(a)?;
                if let Some(b) = b {
                    let j_at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.push(
                        "_jump",
                        vec![json!({"type": "hexstr", "value": "0x0"})],
                        b.span,
                    );
                    let else_start = j_at + 1;
                    self.set_jump(jz_at, 1, else_start);
                    self.action_stmt(b)?;
                    let end = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.set_jump(j_at, 0, end);
                } else {
                    let end = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.set_jump(jz_at, 1, end);
                }
                Ok(())
            }
            StmtKind::Var(_, ty, n, init) => {
                let t = self.env.resolve(ty)?;
                let ctl = self
                    .ctl
                    .as_ref()
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                let p = self.make_place(
                    "",
                    &format!("{}.{}", ctl, n),
                    t,
                    true,
                    &format!("{}_{}", ctl, n),
                );
                self.bind(n, Bind::Place(p));
                if let Some(i) = init {
                    let lhs = Expr {
                        kind: ExprKind::Name(n.clone()),
                        span: s.span,
                    };
                    self.assign(&lhs, i, s.span)?;
                }
                Ok(())
            }
            StmtKind::Const(ty, n, v) => {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(n, Bind::Const(val, t));
                Ok(())
            }
            StmtKind::Exit => {
                self.copy_outs_before_exit(s.span)?;
                self.push("exit", vec![], s.span);
                Ok(())
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    match self.fn_ret.clone() {
                        Some(Place::Field { hdr, field, ty }) => {
                            let (x, t) = self.rv(v, Some(&ty))?;
                            self.check_assign(&ty, &t, v.span)?;
                            let x = self.to_data(x, &t);
                            self.push(
                                "assign",
                                vec![json!({"type": "field", "value": [hdr, field]}), x.jp()],
                                s.span,
                            );
                        }
                        _ => return Err(Error::new(s.span, "actions cannot return a value")),
                    }
                }
                let at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                self.push(
                    "_jump",
                    vec![json!({"type": "hexstr", "value": "0x0"})],
                    s.span,
                );
                if let Some(a) = self.act.as_mut() {
                    a.returns.push(at);
                }
                Ok(())
            }
            StmtKind::Empty => Ok(()),
            StmtKind::Switch(e, cases) => {
                if matches!(&e.kind, ExprKind::Member(_, m) if m == "action_run") {
                    return Err(Error::new(
                        s.span,
                        "tables cannot be applied inside actions",
                    ));
                }
                let s2 = desugar_switch(e, cases, s.span)?;
                self.action_stmt(&s2)
            }
            StmtKind::Inst(i) => Err(Error::new(i.span, "instantiations are not allowed here")),
        }
    }

    /// Outside actions (conditions, table keys), primitives of side effects go into an
    /// action context whose primitives are then queued in `key_prims` (run by a synthetic
    /// table before the condition or table); returns whether a context was made.
    fn pre_begin(&mut self) -> bool {
        let made = self.act.is_none();
        if made {
            self.act = Some(ActionCtx {
                prims: vec![],
                returns: vec![],
            });
        }
        made
    }

    fn pre_end(&mut self, made: bool) {
        if !made {
            return;
        }
        let mut act = self.act.take().unwrap();
        patch_returns(&mut act);
        // jump targets are indices into the primitive list they end up in
        let base = self.key_prims.len();
        for p in act.prims.iter_mut() {
            let param = match p["op"].as_str() {
                Some("_jump") => 0,
                Some("_jump_if_zero") => 1,
                _ => continue,
            };
            let t = p["parameters"][param]["value"]
                .as_str()
                .and_then(|v| usize::from_str_radix(v.trim_start_matches("0x"), 16).ok())
                .unwrap_or(0);
            p["parameters"][param] =
                json!({"type": "hexstr", "value": format!("0x{:x}", t + base)});
        }
        self.key_prims.extend(act.prims);
    }

    fn set_jump(&mut self, at: usize, param: usize, target: usize) {
        if let Some(a) = self.act.as_mut() {
            if let Some(p) = a.prims.get_mut(at) {
                p["parameters"][param] =
                    json!({"type": "hexstr", "value": format!("0x{:x}", target)});
            }
        }
    }

    fn assign(&mut self, l: &Expr, r: &Expr, span: Span) -> PResult<()> {
        if let ExprKind::Slice(b, hi, lo) = &l.kind {
            // x[h:l] = v  →  x = (x & ~m) | ((v << l) & m)
            let (hdr, field, ty) = match self.place(b)? {
                Place::Field { hdr, field, ty } => (hdr, field, ty),
                _ => {
                    return Err(Error::new(
                        b.span,
                        "only fields can be sliced on the left of '='",
                    ))
                }
            };
            let w = match ty {
                Type::Bit(w) | Type::Int(w) => w,
                _ => {
                    return Err(Error::new(
                        b.span,
                        format!("cannot slice a value of type {}", ty.name()),
                    ))
                }
            };
            let h = self.const_expr(hi, None)?;
            let lo = self.const_expr(lo, None)?;
            if h < lo || h >= w as u128 {
                return Err(Error::new(
                    l.span,
                    format!("invalid slice [{}:{}] of a {}-bit value", h, lo, w),
                ));
            }
            let sw = (h - lo + 1) as u32;
            let (x, t) = self.rv(r, Some(&Type::Bit(sw)))?;
            self.check_assign(&Type::Bit(sw), &t, r.span)?;
            let m = shl(mask(sw), lo);
            let keep = X::op(
                "&",
                X::Field(hdr.clone(), field.clone()),
                X::Hex(!m & mask(w), false),
            );
            let shifted = X::op("&", X::op("<<", x, X::Hex(lo, false)), X::Hex(m, false));
            let v = X::op("|", keep, shifted);
            self.push(
                "assign",
                vec![json!({"type": "field", "value": [hdr, field]}), v.jp()],
                span,
            );
            return Ok(());
        }
        // the target's index is read before the right-hand side's effects when the target
        // contains a call itself (as p4c orders it; a plain `s[i] = f(i)` reads i after f)
        self.snap_index = self.has_effects(r) && crate::effects::has_call(l);
        let lp = self.place(l);
        self.snap_index = false;
        let lp = lp?;
        match &lp {
            Place::DynField { x: lx, ty } => {
                let (x, t) = self.rv(r, Some(ty))?;
                self.check_assign(ty, &t, r.span)?;
                let x = self.to_data(x, &t);
                self.push(
                    "assign",
                    vec![json!({"type": "expression", "value": lx.je()}), x.jp()],
                    span,
                );
                Ok(())
            }
            Place::DynHeader { deref, elem, .. } => {
                let rp = self.place(r)?;
                match rp {
                    Place::Header { inst, ty } if ty == *elem => {
                        self.push(
                            "assign_header",
                            vec![
                                json!({"type": "expression", "value": deref.je()}),
                                json!({"type": "header", "value": inst}),
                            ],
                            span,
                        );
                        Ok(())
                    }
                    p => Err(Error::new(
                        r.span,
                        format!(
                            "cannot assign {} to a header of type {}",
                            p.ty().name(),
                            elem
                        ),
                    )),
                }
            }
            Place::Field { hdr, field, ty } => {
                let (x, t) = self.rv(r, Some(ty))?;
                self.check_assign(ty, &t, r.span)?;
                if let Type::Varbit(_) = ty {
                    self.push(
                        "assign_VL",
                        vec![json!({"type": "field", "value": [hdr, field]}), x.jp()],
                        span,
                    );
                    return Ok(());
                }
                let x = self.to_data(x, &t);
                self.push(
                    "assign",
                    vec![json!({"type": "field", "value": [hdr, field]}), x.jp()],
                    span,
                );
                Ok(())
            }
            Place::Header { inst, ty } => {
                if let ExprKind::List(items) = &r.kind {
                    // header = { f1, f2, ... }: set valid and assign fields
                    let def = self
                        .env
                        .composite(ty)
                        .cloned()
                        .ok_or_else(|| Error::new(l.span, "unknown header"))?;
                    if items.len() != def.fields.len() {
                        return Err(Error::new(
                            r.span,
                            format!(
                                "header {} has {} fields, the list has {}",
                                ty,
                                def.fields.len(),
                                items.len()
                            ),
                        ));
                    }
                    self.push(
                        "add_header",
                        vec![json!({"type": "header", "value": inst})],
                        span,
                    );
                    for ((fname, ft, _), (_, it)) in def.fields.iter().zip(items) {
                        let (x, t) = self.rv(it, Some(ft))?;
                        self.check_assign(ft, &t, it.span)?;
                        let x = self.to_data(x, &t);
                        self.push(
                            "assign",
                            vec![json!({"type": "field", "value": [inst, fname]}), x.jp()],
                            span,
                        );
                    }
                    return Ok(());
                }
                let rp = self.place(r)?;
                match rp {
                    Place::Header { inst: ri, ty: rt } if rt == *ty => {
                        self.push(
                            "assign_header",
                            vec![
                                json!({"type": "header", "value": inst}),
                                json!({"type": "header", "value": ri}),
                            ],
                            span,
                        );
                        Ok(())
                    }
                    Place::DynHeader { deref, elem, .. } if elem == *ty => {
                        self.push(
                            "assign_header",
                            vec![
                                json!({"type": "header", "value": inst}),
                                json!({"type": "expression", "value": deref.je()}),
                            ],
                            span,
                        );
                        Ok(())
                    }
                    p => Err(Error::new(
                        r.span,
                        format!("cannot assign {} to a header of type {}", p.ty().name(), ty),
                    )),
                }
            }
            Place::Struct { ty, members } => {
                if let ExprKind::List(items) = &r.kind {
                    if items.len() != members.len() {
                        return Err(Error::new(
                            r.span,
                            format!(
                                "struct {} has {} fields, the list has {}",
                                ty,
                                members.len(),
                                items.len()
                            ),
                        ));
                    }
                    for ((_, mp), (_, it)) in members.clone().iter().zip(items) {
                        self.assign_place(mp, it, span)?;
                    }
                    return Ok(());
                }
                let rp = self.place(r)?;
                match rp {
                    Place::Struct {
                        ty: rt,
                        members: rm,
                    } if rt == *ty => {
                        for ((_, a), (_, b)) in members.clone().iter().zip(rm.iter()) {
                            self.copy_place(a, b, span)?;
                        }
                        Ok(())
                    }
                    p => Err(Error::new(
                        r.span,
                        format!("cannot assign {} to a struct of type {}", p.ty().name(), ty),
                    )),
                }
            }
            Place::Stack { name, elem, .. } => match self.place(r)? {
                Place::Stack {
                    name: rn, elem: re, ..
                } if re == *elem => {
                    self.push(
                        "assign_header_stack",
                        vec![
                            json!({"type": "header_stack", "value": name}),
                            json!({"type": "header_stack", "value": rn}),
                        ],
                        span,
                    );
                    Ok(())
                }
                _ => Err(Error::new(
                    r.span,
                    "type mismatch in header stack assignment",
                )),
            },
            Place::Union { name, ty, .. } => match self.place(r)? {
                Place::Union {
                    name: rn, ty: rt, ..
                } if rt == *ty => {
                    self.push(
                        "assign_union",
                        vec![
                            json!({"type": "header_union", "value": name}),
                            json!({"type": "header_union", "value": rn}),
                        ],
                        span,
                    );
                    Ok(())
                }
                _ => Err(Error::new(
                    r.span,
                    "type mismatch in header union assignment",
                )),
            },
        }
    }

    fn assign_place(&mut self, p: &Place, r: &Expr, span: Span) -> PResult<()> {
        // assign to a place that was reached structurally (not by a name)
        let tmp = format!("__tmp_place_{}", self.tmp_count);
        self.tmp_count += 1;
        self.scopes.push(HashMap::new());
        self.bind(&tmp, Bind::Place(p.clone()));
        let res = self.assign(
            &Expr {
                kind: ExprKind::Name(tmp),
                span,
            },
            r,
            span,
        );
        self.scopes.pop();
        res
    }

    fn copy_place(&mut self, dst: &Place, src: &Place, span: Span) -> PResult<()> {
        match (dst, src) {
            (
                Place::Field { hdr, field, .. },
                Place::Field {
                    hdr: h2, field: f2, ..
                },
            ) => {
                self.push(
                    "assign",
                    vec![
                        json!({"type": "field", "value": [hdr, field]}),
                        json!({"type": "field", "value": [h2, f2]}),
                    ],
                    span,
                );
            }
            (Place::Header { inst, .. }, Place::Header { inst: i2, .. }) => {
                self.push(
                    "assign_header",
                    vec![
                        json!({"type": "header", "value": inst}),
                        json!({"type": "header", "value": i2}),
                    ],
                    span,
                );
            }
            (Place::Struct { members: a, .. }, Place::Struct { members: b, .. }) => {
                for ((_, x), (_, y)) in a.iter().zip(b.iter()) {
                    self.copy_place(x, y, span)?;
                }
            }
            (Place::Stack { name, .. }, Place::Stack { name: n2, .. }) => {
                self.push(
                    "assign_header_stack",
                    vec![
                        json!({"type": "header_stack", "value": name}),
                        json!({"type": "header_stack", "value": n2}),
                    ],
                    span,
                );
            }
            (Place::Union { name, .. }, Place::Union { name: n2, .. }) => {
                self.push(
                    "assign_union",
                    vec![
                        json!({"type": "header_union", "value": name}),
                        json!({"type": "header_union", "value": n2}),
                    ],
                    span,
                );
            }
            // run-time stack elements (copy-in/copy-out of `s[i].f`, `s[i]`)
            (Place::DynField { x, .. }, Place::Field { hdr, field, .. }) => {
                self.push(
                    "assign",
                    vec![
                        json!({"type": "expression", "value": x.je()}),
                        json!({"type": "field", "value": [hdr, field]}),
                    ],
                    span,
                );
            }
            (Place::Field { hdr, field, .. }, Place::DynField { x, .. }) => {
                self.push(
                    "assign",
                    vec![
                        json!({"type": "field", "value": [hdr, field]}),
                        json!({"type": "expression", "value": x.je()}),
                    ],
                    span,
                );
            }
            (Place::DynHeader { deref, .. }, Place::Header { inst, .. }) => {
                self.push(
                    "assign_header",
                    vec![
                        json!({"type": "expression", "value": deref.je()}),
                        json!({"type": "header", "value": inst}),
                    ],
                    span,
                );
            }
            (Place::Header { inst, .. }, Place::DynHeader { deref, .. }) => {
                self.push(
                    "assign_header",
                    vec![
                        json!({"type": "header", "value": inst}),
                        json!({"type": "expression", "value": deref.je()}),
                    ],
                    span,
                );
            }
            _ => return Err(Error::new(span, "type mismatch in assignment")),
        }
        Ok(())
    }

    fn arg_count(&self, span: Span, name: &str, args: &[Arg], n: usize) -> PResult<()> {
        if args.len() != n {
            return Err(Error::new(
                span,
                format!("'{}' expects {} argument(s), got {}", name, n, args.len()),
            ));
        }
        Ok(())
    }

    fn field_dst(&mut self, e: &Expr) -> PResult<(J, Type)> {
        match self.place(e)? {
            Place::Field { hdr, field, ty } => {
                Ok((json!({"type": "field", "value": [hdr, field]}), ty))
            }
            p => Err(Error::new(
                e.span,
                format!("expected a field, found {}", p.ty().name()),
            )),
        }
    }

    fn data_arg(&mut self, e: &Expr, t: &Type) -> PResult<J> {
        let (x, xt) = self.rv(e, Some(t))?;
        let x = self.to_data(x, &xt);
        Ok(x.jp())
    }

    fn call_stmt(&mut self, c: &Expr, span: Span) -> PResult<()> {
        let ExprKind::Call(f, targs, args) = &c.kind else {
            return Err(Error::new(c.span, "expected a call"));
        };
        match &f.kind {
            ExprKind::Member(b, m) => {
                // header methods
                if let Ok(p) = self.place(b) {
                    match (&p, m.as_str()) {
                        (Place::Header { inst, .. }, "setValid") => {
                            self.push(
                                "add_header",
                                vec![json!({"type": "header", "value": inst})],
                                span,
                            );
                            return Ok(());
                        }
                        (Place::Header { inst, .. }, "setInvalid") => {
                            self.push(
                                "remove_header",
                                vec![json!({"type": "header", "value": inst})],
                                span,
                            );
                            return Ok(());
                        }
                        (Place::DynHeader { deref, .. }, "setValid")
                        | (Place::DynHeader { deref, .. }, "setInvalid") => {
                            let op = if m == "setValid" {
                                "add_header"
                            } else {
                                "remove_header"
                            };
                            self.push(
                                op,
                                vec![json!({"type": "expression", "value": deref.je()})],
                                span,
                            );
                            return Ok(());
                        }
                        (Place::Stack { name, .. }, "push_front")
                        | (Place::Stack { name, .. }, "pop_front") => {
                            self.arg_count(c.span, m, args, 1)?;
                            let n = self.const_expr(&args[0].value, Some(&Type::Bit(32)))?;
                            let op = if m == "push_front" { "push" } else { "pop" };
                            self.push(
                                op,
                                vec![
                                    json!({"type": "header_stack", "value": name}),
                                    json!({"type": "hexstr", "value": hexs(n, false)}),
                                ],
                                span,
                            );
                            return Ok(());
                        }
                        (_, "isValid") => return Ok(()),
                        _ => {
                            return Err(Error::new(
                                f.span,
                                format!("unknown method '{}' for {}", m, p.ty().name()),
                            ))
                        }
                    }
                }
                let n = match &b.kind {
                    ExprKind::Name(n) => n.clone(),
                    _ => return Err(Error::new(b.span, "unsupported method call")),
                };
                match self.lookup(&n) {
                    Some(Bind::Extern { kind, name }) => {
                        self.extern_method(&kind, &name, m, args, c.span, span)
                    }
                    Some(Bind::Table(_)) => Err(Error::new(
                        c.span,
                        "tables can only be applied in apply blocks, not in actions",
                    )),
                    Some(Bind::PacketIn) | Some(Bind::PacketOut) => Err(Error::new(
                        c.span,
                        format!("'{}.{}' is not allowed here", n, m),
                    )),
                    _ => Err(Error::new(b.span, format!("undeclared identifier '{}'", n))),
                }
            }
            ExprKind::Name(n) => {
                if let Some((a, global)) = self.find_action(n) {
                    return self.inline_action(&a, global, args, c.span);
                }
                self.extern_function(n, targs, args, c.span, span)
            }
            _ => Err(Error::new(f.span, "unsupported call")),
        }
    }

    fn inline_action(
        &mut self,
        a: &Action,
        _global: bool,
        args: &[Arg],
        span: Span,
    ) -> PResult<()> {
        if args.len() != a.params.len() {
            return Err(Error::new(
                span,
                format!(
                    "action '{}' expects {} argument(s), got {}",
                    a.name,
                    a.params.len(),
                    args.len()
                ),
            ));
        }
        if self.inline_depth > 50 {
            return Err(Error::new(
                span,
                "actions call each other too deeply (recursion?)",
            ));
        }
        self.inline_depth += 1;
        let mut pairs = vec![];
        for (p, arg) in a.params.iter().zip(args) {
            let t = self.env.resolve(&p.ty)?;
            let mut pp = p.clone();
            if pp.dir == Dir::None {
                pp.dir = Dir::In;
            }
            pairs.push((pp, t, arg.value.clone()));
        }
        let (binds, outs) = match self.bind_params(a, &pairs, span) {
            Ok(x) => x,
            Err(e) => {
                self.inline_depth -= 1;
                return Err(e);
            }
        };
        self.scopes.push(HashMap::new());
        for (k, b) in binds {
            self.bind(&k, b);
        }
        // `return` inside an inlined action jumps to the end of the inlined body
        let saved_returns = self
            .act
            .as_mut()
            .map(|x| std::mem::take(&mut x.returns))
            .unwrap_or_default();
        let mut res = Ok(());
        self.copy_frames.push(outs.clone());
        for s in &a.body {
            if let Err(e) = self.action_stmt(s) {
                res = Err(e);
                break;
            }
        }
        self.copy_frames.pop();
        if let Some(act) = self.act.as_mut() {
            let end = act.prims.len();
            for r in std::mem::replace(&mut act.returns, saved_returns) {
                if let Some(p) = act.prims.get_mut(r) {
                    p["parameters"][0] = json!({"type": "hexstr", "value": format!("0x{:x}", end)});
                }
            }
        }
        self.scopes.pop();
        self.inline_depth -= 1;
        res?;
        self.copy_outs(outs, span)
    }

    fn extern_method(
        &mut self,
        kind: &str,
        name: &str,
        m: &str,
        args: &[Arg],
        cspan: Span,
        span: Span,
    ) -> PResult<()> {
        let idx_t = Type::Bit(32);
        match (kind, m) {
            ("counter", "count") => {
                self.arg_count(cspan, m, args, 1)?;
                let i = self.data_arg(&args[0].value, &idx_t)?;
                self.push(
                    "count",
                    vec![json!({"type": "counter_array", "value": name}), i],
                    span,
                );
            }
            ("direct_counter", "count") => {
                self.arg_count(cspan, m, args, 0)?;
            }
            ("meter", "execute_meter") => {
                self.arg_count(cspan, m, args, 2)?;
                let i = self.data_arg(&args[0].value, &idx_t)?;
                let (d, _) = self.field_dst(&args[1].value)?;
                self.push(
                    "execute_meter",
                    vec![json!({"type": "meter_array", "value": name}), i, d],
                    span,
                );
            }
            ("direct_meter", "read") => {
                self.arg_count(cspan, m, args, 1)?;
                let (d, _) = self.field_dst(&args[0].value)?;
                if let Some(arr) = self.ir.arrays.iter_mut().find(|x| x.name == name) {
                    arr.result_target = Some(d["value"].clone());
                }
            }
            ("register", "read") => {
                self.arg_count(cspan, m, args, 2)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let bw = self
                    .ir
                    .arrays
                    .iter()
                    .find(|x| x.name == name)
                    .map(|x| x.bitwidth)
                    .unwrap_or(0);
                if dt.width() != Some(bw) {
                    return Err(Error::new(
                        args[0].value.span,
                        format!(
                            "register '{}' holds bit<{}> values but the destination is {}",
                            name,
                            bw,
                            dt.name()
                        ),
                    ));
                }
                let i = self.data_arg(&args[1].value, &idx_t)?;
                self.push(
                    "register_read",
                    vec![d, json!({"type": "register_array", "value": name}), i],
                    span,
                );
            }
            ("register", "write") => {
                self.arg_count(cspan, m, args, 2)?;
                let bw = self
                    .ir
                    .arrays
                    .iter()
                    .find(|x| x.name == name)
                    .map(|x| x.bitwidth)
                    .unwrap_or(32);
                let i = self.data_arg(&args[0].value, &idx_t)?;
                let (x, xt) = self.rv(&args[1].value, Some(&Type::Bit(bw)))?;
                if xt.width() != Some(bw) && xt != Type::InfInt {
                    return Err(Error::new(
                        args[1].value.span,
                        format!(
                            "register '{}' holds bit<{}> values, not {}",
                            name,
                            bw,
                            xt.name()
                        ),
                    ));
                }
                let x = self.to_data(x, &xt);
                self.push(
                    "register_write",
                    vec![json!({"type": "register_array", "value": name}), i, x.jp()],
                    span,
                );
            }
            _ => {
                return Err(Error::new(
                    cspan,
                    format!("{} has no method '{}' usable here", kind, m),
                ))
            }
        }
        Ok(())
    }

    fn extern_function(
        &mut self,
        n: &str,
        targs: &[TypeRef],
        args: &[Arg],
        cspan: Span,
        span: Span,
    ) -> PResult<()> {
        match n {
            "mark_to_drop" => {
                self.arg_count(cspan, n, args, 1)?;
                self.push(
                    "mark_to_drop",
                    vec![json!({"type": "header", "value": "standard_metadata"})],
                    span,
                );
            }
            "NoAction" => {}
            "random" => {
                self.arg_count(cspan, n, args, 3)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let lo = self.data_arg(&args[1].value, &dt)?;
                let hi = self.data_arg(&args[2].value, &dt)?;
                self.push("modify_field_rng_uniform", vec![d, lo, hi], span);
            }
            "truncate" => {
                self.arg_count(cspan, n, args, 1)?;
                let l = self.data_arg(&args[0].value, &Type::Bit(32))?;
                self.push("truncate", vec![l], span);
            }
            "assert" | "assume" => {
                self.arg_count(cspan, n, args, 1)?;
                let (x, t) = self.rv(&args[0].value, Some(&Type::Bool))?;
                if t != Type::Bool {
                    return Err(Error::new(
                        args[0].value.span,
                        format!("{} needs a bool", n),
                    ));
                }
                self.push(
                    n,
                    vec![json!({"type": "expression", "value": x.je()})],
                    span,
                );
            }
            "log_msg" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(Error::new(
                        cspan,
                        "log_msg takes a format string and an optional list of values",
                    ));
                }
                let fmt = match &args[0].value.kind {
                    ExprKind::Str(s) => s.clone(),
                    _ => {
                        return Err(Error::new(
                            args[0].value.span,
                            "log_msg needs a string literal",
                        ))
                    }
                };
                let mut vals = vec![];
                if let Some(a) = args.get(1) {
                    let items: Vec<Expr> = match &a.value.kind {
                        ExprKind::List(v) => v.iter().map(|x| x.1.clone()).collect(),
                        _ => vec![a.value.clone()],
                    };
                    for it in items {
                        let (x, t) = self.rv(&it, None)?;
                        vals.push(self.to_data(x, &t).je());
                    }
                }
                self.push(
                    "log_msg",
                    vec![
                        json!({"type": "string", "value": fmt}),
                        json!({"type": "parameters_vector", "value": vals}),
                    ],
                    span,
                );
            }
            "hash" => {
                self.arg_count(cspan, n, args, 5)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let algo = self.algo_name(&args[1].value)?;
                let base = self.data_arg(&args[2].value, &dt)?;
                let inputs = self.field_list_inputs(&args[3].value)?;
                let max = self.data_arg(&args[4].value, &Type::Bit(32))?;
                let cid = self.ir.calculations.len();
                let cname = format!("calc_{}", cid);
                self.ir
                    .calculations
                    .push(json!({"name": cname, "id": cid, "algo": algo, "input": inputs}));
                self.push(
                    "modify_field_with_hash_based_offset",
                    vec![d, base, json!({"type": "calculation", "value": cname}), max],
                    span,
                );
            }
            "digest" => {
                self.arg_count(cspan, n, args, 2)?;
                let recv = self.const_expr(&args[0].value, Some(&Type::Bit(32)))?;
                let tname =
                    match targs.first() {
                        Some(t) => match self.env.resolve(t)? {
                            Type::Struct(s) => s,
                            t => {
                                return Err(Error::new(
                                    cspan,
                                    format!("digest type must be a struct, not {}", t.name()),
                                ))
                            }
                        },
                        None => match self.place(&args[1].value) {
                            Ok(Place::Struct { ty, .. }) => ty,
                            _ => return Err(Error::new(
                                cspan,
                                "digest needs a type argument, e.g. digest<my_digest_t>(1, {...})",
                            )),
                        },
                    };
                let def = self
                    .env
                    .composite(&tname)
                    .cloned()
                    .ok_or_else(|| Error::new(cspan, "unknown digest type"))?;
                let inputs = self.field_list_inputs(&args[1].value)?;
                if inputs.len() != def.fields.len() {
                    return Err(Error::new(
                        args[1].value.span,
                        format!(
                            "digest type {} has {} fields, the data has {}",
                            tname,
                            def.fields.len(),
                            inputs.len()
                        ),
                    ));
                }
                for i in &inputs {
                    if i["type"] != "field" {
                        return Err(Error::new(args[1].value.span, "digest data must consist of fields (BMv2 learn lists hold fields only)"));
                    }
                }
                let id = match self.ir.digests.iter().find(|d| d.name == tname) {
                    Some(d) => d.id,
                    None => {
                        let id = self.ir.digests.len() + 1;
                        let fields = def
                            .fields
                            .iter()
                            .zip(inputs.iter())
                            .map(|((f, t, _), j)| {
                                (f.clone(), j["value"].clone(), t.width().unwrap_or(0))
                            })
                            .collect();
                        self.ir.digests.push(DigestInfo {
                            name: tname.clone(),
                            id,
                            fields,
                        });
                        self.ir.digest_structs.push((
                            tname.clone(),
                            def.fields
                                .iter()
                                .map(|(f, t, _)| (f.clone(), t.width().unwrap_or(0)))
                                .collect(),
                        ));
                        id
                    }
                };
                self.push(
                    "generate_digest",
                    vec![
                        json!({"type": "hexstr", "value": hexs(recv, false)}),
                        json!({"type": "hexstr", "value": hexs(id as u128, false)}),
                    ],
                    span,
                );
            }
            "clone" | "clone3" | "clone_preserving_field_list" => {
                let want = if n == "clone" { 2 } else { 3 };
                self.arg_count(cspan, n, args, want)?;
                let ct = match &args[0].value.kind {
                    ExprKind::Member(_, m) if m == "I2E" || m == "E2E" => m.clone(),
                    _ => {
                        return Err(Error::new(
                            args[0].value.span,
                            "expected CloneType.I2E or CloneType.E2E",
                        ))
                    }
                };
                let sess = self.data_arg(&args[1].value, &Type::Bit(32))?;
                let fl = if want == 3 {
                    self.field_list(&args[2].value)?
                } else {
                    self.empty_field_list()
                };
                let op = if ct == "I2E" {
                    "clone_ingress_pkt_to_egress"
                } else {
                    "clone_egress_pkt_to_egress"
                };
                self.push(
                    op,
                    vec![
                        sess,
                        json!({"type": "hexstr", "value": hexs(fl as u128, false)}),
                    ],
                    span,
                );
            }
            "resubmit_preserving_field_list"
            | "recirculate_preserving_field_list"
            | "resubmit"
            | "recirculate" => {
                let fl = if n.ends_with("field_list") {
                    self.arg_count(cspan, n, args, 1)?;
                    self.field_list(&args[0].value)?
                } else {
                    0
                };
                let op = if n.starts_with("resubmit") {
                    "resubmit"
                } else {
                    "recirculate"
                };
                self.push(
                    op,
                    vec![json!({"type": "hexstr", "value": hexs(fl as u128, false)})],
                    span,
                );
            }
            "verify_checksum"
            | "update_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum_with_payload" => {
                return Err(Error::new(
                    cspan,
                    format!("{} is only allowed in the checksum controls of V1Switch", n),
                ));
            }
            "verify" => return Err(Error::new(cspan, "verify is only allowed in parsers")),
            _ => {
                if let Some(Decl::Function { params, body, .. }) = self.functions.get(n).cloned() {
                    // inline a void function as statements
                    if args.len() != params.len() {
                        return Err(Error::new(
                            cspan,
                            format!(
                                "function '{}' expects {} argument(s), got {}",
                                n,
                                params.len(),
                                args.len()
                            ),
                        ));
                    }
                    let rt = match self.functions.get(n) {
                        Some(Decl::Function { ret, .. }) => self.env.resolve(&ret.clone())?,
                        _ => Type::Void,
                    };
                    let ret = if rt == Type::Void {
                        None
                    } else {
                        Some(self.scalar(&format!("{}_ret_{}", n, self.tmp_count), &rt))
                    };
                    self.tmp_count += 1;
                    let saved_ret = std::mem::replace(&mut self.fn_ret, ret);
                    let a = Action {
                        annos: vec![],
                        name: n.to_string(),
                        params: params
                            .iter()
                            .map(|p| {
                                let mut p = p.clone();
                                if p.dir == Dir::None {
                                    p.dir = Dir::In;
                                }
                                p
                            })
                            .collect(),
                        body,
                        span: cspan,
                    };
                    let r = self.inline_action(&a, true, args, cspan);
                    self.fn_ret = saved_ret;
                    return r;
                }
                return Err(Error::new(
                    cspan,
                    format!("unknown function or action '{}'", n),
                ));
            }
        }
        Ok(())
    }

    /// An empty field list (what a plain clone preserves), as p4c emits it.
    fn empty_field_list(&mut self) -> usize {
        if let Some(i) = self.ir.field_lists.iter().position(|f| f.0 == "fl") {
            return i + 1;
        }
        self.ir.field_lists.push(("fl".into(), vec![]));
        self.ir.field_lists.len()
    }

    /// The BMv2 field list id for `@field_list(N)` metadata fields.
    fn field_list(&mut self, e: &Expr) -> PResult<usize> {
        let idx = self.const_expr(e, Some(&Type::Bit(8)))?;
        let key = format!("field_list_{}", idx);
        if let Some(i) = self.ir.field_lists.iter().position(|f| f.0 == key) {
            return Ok(i + 1);
        }
        let mut elems = vec![];
        if let Some(m) = self.meta_struct.clone() {
            if let Some(Place::Struct { members, .. }) = self.root_places.get(&m).cloned() {
                let def = self.env.composite(&m).cloned();
                if let Some(def) = def {
                    for ((f, _, annos), (_, p)) in def.fields.iter().zip(members.iter()) {
                        let hit = annos.iter().any(|a| {
                            a.name == "field_list"
                                && a.args
                                    .iter()
                                    .any(|x| matches!(x.kind, ExprKind::Int(v, _) if v == idx))
                        });
                        if hit {
                            let _ = f;
                            if let Place::Field { hdr, field, .. } = p {
                                elems.push(json!({"type": "field", "value": [hdr, field]}));
                            }
                        }
                    }
                }
            }
        }
        self.ir.field_lists.push((key, elems));
        Ok(self.ir.field_lists.len())
    }
}

/// Cover [lo, hi] on a `w`-bit key with (value, mask) prefix blocks.
fn range_to_masks(lo: u128, hi: u128, w: u32) -> Vec<(u128, u128)> {
    let mut out = vec![];
    let mut cur = lo;
    loop {
        // largest aligned block starting at cur that stays within hi
        let mut size_bits = 0u32;
        while size_bits < w {
            let nb = size_bits + 1;
            let block = 1u128 << nb;
            if !cur.is_multiple_of(block) || cur + (block - 1) > hi {
                break;
            }
            size_bits = nb;
        }
        let m = mask(w) & !(mask(size_bits));
        out.push((cur, m));
        let end = cur + mask(size_bits);
        if end >= hi || out.len() > 256 {
            break;
        }
        cur = end + 1;
    }
    out
}

/// `switch (e) { a: b: {..} default: {..} }` on a value → an if/else chain.
fn desugar_switch(e: &Expr, cases: &[SwitchCase], span: Span) -> PResult<Stmt> {
    let mut groups: Vec<(Vec<Expr>, Stmt)> = vec![];
    let mut default: Option<Stmt> = None;
    let mut pending: Vec<Expr> = vec![];
    for c in cases {
        pending.push(c.label.clone());
        if let Some(b) = &c.body {
            let labels = std::mem::take(&mut pending);
            if labels.iter().any(|l| matches!(l.kind, ExprKind::Default)) {
                if default.is_some() {
                    return Err(Error::new(
                        c.label.span,
                        "switch has more than one default case",
                    ));
                }
                default = Some(b.clone());
                let rest: Vec<Expr> = labels
                    .into_iter()
                    .filter(|l| !matches!(l.kind, ExprKind::Default))
                    .collect();
                if !rest.is_empty() {
                    groups.push((rest, b.clone()));
                }
            } else {
                groups.push((labels, b.clone()));
            }
        }
    }
    if let Some(l) = pending.first() {
        return Err(Error::new(l.span, "the last switch case needs a body"));
    }
    let mut acc: Option<Stmt> = default;
    for (labels, body) in groups.into_iter().rev() {
        let mut cond: Option<Expr> = None;
        for l in labels {
            let sp = l.span;
            let eq = Expr {
                kind: ExprKind::Binary("==", Box::new(e.clone()), Box::new(l)),
                span: sp,
            };
            cond = Some(match cond {
                None => eq,
                Some(c) => Expr {
                    kind: ExprKind::Binary("||", Box::new(c), Box::new(eq)),
                    span: sp,
                },
            });
        }
        let cond = cond.unwrap();
        acc = Some(Stmt {
            kind: StmtKind::If(cond, Box::new(body), acc.map(Box::new)),
            span,
        });
    }
    Ok(acc.unwrap_or(Stmt {
        kind: StmtKind::Empty,
        span,
    }))
}

/// The span of the member name at the end of `base.member`.
fn member_span(e: &Expr, m: &str) -> Span {
    let hi = e.span.hi;
    let lo = hi.saturating_sub(m.len() as u32).max(e.span.lo);
    Span { lo, hi }
}

fn patch_returns(a: &mut ActionCtx) {
    let end = a.prims.len();
    for r in a.returns.drain(..) {
        if let Some(p) = a.prims.get_mut(r) {
            p["parameters"][0] = json!({"type": "hexstr", "value": format!("0x{:x}", end)});
        }
    }
}

fn d_span(d: &Decl) -> Span {
    match d {
        Decl::Parser { span, .. } | Decl::Control { span, .. } => *span,
        _ => Span::default(),
    }
}

fn e_is_neg(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Unary("-", _))
}

fn is_const_shape(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(..) | ExprKind::Bool(_) => true,
        ExprKind::Name(_) => true,
        ExprKind::Member(b, _) => matches!(&b.kind, ExprKind::Name(_)),
        ExprKind::Unary(_, x) => is_const_shape(x),
        ExprKind::Binary(_, a, b) => is_const_shape(a) && is_const_shape(b),
        ExprKind::Cast(_, x) => is_const_shape(x),
        ExprKind::Slice(x, _, _) => is_const_shape(x),
        ExprKind::Ternary(a, b, c) => is_const_shape(a) && is_const_shape(b) && is_const_shape(c),
        _ => false,
    }
}

pub fn types_compatible(dst: &Type, src: &Type) -> bool {
    match (dst, src) {
        (a, b) if a == b => true,
        (Type::Bit(_) | Type::Int(_) | Type::SerEnum(..), Type::InfInt) => true,
        (Type::SerEnum(_, a), Type::Bit(b)) | (Type::Bit(b), Type::SerEnum(_, a)) => a == b,
        (_, Type::Unknown) | (Type::Unknown, _) => true,
        _ => false,
    }
}
