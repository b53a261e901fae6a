//! Lowering: walks the v1model program (from `main`) and flattens it into the
//! BMv2 intermediate representation: header types and instances, parse states,
//! deparser order, actions with primitives, tables and conditionals per
//! pipeline, extern arrays, calculations, checksums, field lists and digests.
//! Expression typing and width rules come from `check`.

use crate::ast::*;
use crate::diag::{Error, PResult, Sink, Span};
pub use crate::ir::*;
pub use crate::sema::types::types_compatible;
use crate::sema::types::{mask, shl, shr, sign_extend, unify, Type, TypeEnv};
use crate::sema::Checked;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The argument count of calls and table entries, which sema checked (`sema::calls`, and
/// `sema::structure` for entries): a mismatch here is an internal error.
fn arity(span: Span, what: &str, name: &str, expected: usize, got: usize) -> PResult<()> {
    if expected == got {
        return Ok(());
    }
    let subject = if what.is_empty() {
        format!("'{}'", name)
    } else {
        format!("{} '{}'", what, name)
    };
    Err(Error::new(
        span,
        format!(
            "internal compiler error: {} argument count {} instead of {} (checked by sema::calls)",
            subject, got, expected
        ),
    ))
}

mod action;
mod control;
mod deparser;
mod equality;
mod expr;
mod instances;
mod params;
mod parser;
mod table;
use params::fn_is_simple;

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
    /// A stack of header unions; its elements are `Place::Union`s.
    UnionStack {
        name: String,
        ty: String,
        elems: Vec<Place>,
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
    /// Bits `hi..=lo` of a `Field` or `DynField` (nested slices folded into one), as an
    /// assignment target or `out`/`inout` argument: written by rewriting the whole field.
    Slice {
        base: Box<Place>,
        hi: u32,
        lo: u32,
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
            Place::UnionStack { ty, elems, .. } => {
                Type::Stack(Box::new(Type::Union(ty.clone())), elems.len() as u32)
            }
            Place::DynHeader { elem, .. } => Type::Header(elem.clone()),
            Place::DynField { ty, .. } => ty.clone(),
            Place::Slice { hi, lo, .. } => Type::Bit(hi - lo + 1),
        }
    }
}

#[derive(Clone, Debug)]
enum Bind {
    Place(Place),
    Val(X, Type),
    Const(u128, Type),
    Extern { kind: ExternKind, name: String },
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
    prims: Vec<Prim>,
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
    /// Where `return` in the apply block goes: the node after the call of an inlined
    /// control, `None` (end of the pipeline) for the top-level control.
    ret: Option<String>,
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
    parser_extra_ops: Vec<ParserOp>,
    inlined: HashMap<String, usize>,
    /// A control instance applied again is inlined under another name (`I.c1_1`) but
    /// owns no state of its own: its externs are those of its first application
    /// (`I.c1`), as the specification shares an instance's state between its
    /// applications. Maps the name of every such re-application to that owner.
    state_owner: HashMap<String, String>,
    key_prims: Vec<Prim>,
    pstate_prefix: String,
    pstate_accept: Option<String>,
    fn_ret: Option<Place>,
    /// Set while lowering an assignment target whose right-hand side has side effects.
    snap_index: bool,
    /// Taking apart a location that is written (an assignment's target, an `out`/`inout`
    /// argument): sema::directions checked it is one, so "not a location" is a bug here.
    writing: bool,
    /// Copy-outs of the inlined bodies being lowered (outermost first), for `exit`.
    copy_frames: Vec<Vec<(Place, Place)>>,
    too_big: bool,
    /// Constructor arguments of sub-control instances (by instance name): bindings of
    /// the control's constructor parameters while its apply block is inlined.
    ctor_binds: HashMap<String, Vec<(String, Bind)>>,
    header_names: HashSet<String>,
    scalar_names: HashSet<String>,
}

/// Lowers a program `sema` accepted; `None` when it has no `main`.
pub fn lower<'a>(checked: Checked<'a>, text: &'a str, sink: &'a mut Sink) -> Option<Ir> {
    let Checked { prog, env, blocks } = checked;
    let blocks = blocks?;
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
        state_owner: HashMap::new(),
        key_prims: vec![],
        pstate_prefix: String::new(),
        pstate_accept: None,
        fn_ret: None,
        snap_index: false,
        writing: false,
        copy_frames: vec![],
        too_big: false,
        ctor_binds: HashMap::new(),
        header_names: HashSet::new(),
        scalar_names: HashSet::new(),
    };
    l.run(&blocks)
}

impl<'a> Lower<'a> {
    fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.sink.err(span, msg);
    }

    /// A broken invariant: something sema guarantees did not hold. Reported (not a
    /// panic) so the compiler still fails cleanly, naming the place; never a user error.
    fn internal(&mut self, span: Span, what: impl std::fmt::Display) {
        self.sink
            .err(span, format!("internal compiler error: {}", what));
    }

    /// "`e` is not a location": the user's error where a location is read (a header or
    /// struct value this compiler takes only from a location), a bug where it is written.
    fn not_location(&self, span: Span, msg: String) -> Error {
        if self.writing {
            Error::new(
                span,
                format!(
                    "internal compiler error: {} (sema::directions checks targets)",
                    msg
                ),
            )
        } else {
            Error::new(span, msg)
        }
    }

    /// A name with no binding where it is used. sema::bodies found it declared (every
    /// name a body uses is, or the program was refused), so it is one lowering does not
    /// bind: a top-level parser's or control's constructor parameter (p4c's
    /// parser-unroll-t1-cond), this compiler's limit.
    fn unbound(&self, span: Span, n: &str) -> Error {
        Error::new(
            span,
            format!(
                "'{}' is not supported here by this compiler (it binds no value to it here, e.g. to a constructor parameter of a top-level parser or control)",
                n
            ),
        )
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
        crate::sema::structure::block_decl(self.prog, name)
    }

    fn run(&mut self, blocks: &[&'a Decl]) -> Option<Ir> {
        // globals
        for d in &self.prog.decls {
            match d {
                Decl::Action(a) => {
                    self.global_actions.insert(a.name.clone(), a.clone());
                }
                Decl::Function { name, .. } => {
                    self.functions.insert(name.clone(), d.clone());
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
        // the roots from the parser's parameter types
        self.scalar_fields.clear();
        if let Decl::Parser { params, .. } = blocks[0] {
            if let Ok(Type::Struct(h)) = self.env.resolve(&params[1].ty) {
                self.hdr_struct = Some(h);
            }
            if let Ok(Type::Struct(m)) = self.env.resolve(&params[2].ty) {
                self.meta_struct = Some(m);
            }
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
            p.params[0] = PrimArg::hex(end as u128);
        }
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
