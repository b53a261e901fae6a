//! Read-only parameters (P4_16 "Calling convention"): an `in` parameter, and a
//! directionless parameter of an action (action data, which behaves as `in`), cannot
//! be assigned, be the target of a header method that changes it (`setValid`, ...) or
//! be passed on as an `out`/`inout` argument (of a function, action, extern function or
//! extern method: `r.read(x, 0)`). Lowering binds such parameters by
//! reference where it can, so this is checked on the syntax tree before lowering.
//!
//! What is written (an assignment's target, an `out`/`inout` argument) is a location:
//! a variable or parameter, a field, header or stack element of one, a slice of one, or
//! a call of a function returning a header, struct or union; not a constant, instance,
//! table, value set, `packet_in`/`packet_out`, nor any other expression.

use crate::ast::*;
use crate::diag::Error;
use std::collections::{HashMap, HashSet};

/// Directions of the parameters of the program's functions, actions and extern
/// functions, by name (an action local to a control shadows a global one there), and
/// of the methods of extern instances in scope, by `instance.method/arity` (see
/// `instance_methods`).
type Sigs = HashMap<String, Vec<(String, Dir)>>;

/// The methods of extern instance `inst` (`register<bit<8>>(1) r;` gives `r.read/2`,
/// `r.write/2`), so `r.read(x, 0)` is checked as a call of a function with an `out`
/// first parameter. Overloads differ in arity (the key's `/N`).
fn instance_methods(prog: &Program, inst: &Instance, sigs: &mut Sigs) {
    let TypeRef::Named(tname, _, _) = &inst.ty else {
        return;
    };
    for d in &prog.decls {
        if let Decl::Extern { name, methods, .. } = d {
            if name == tname {
                for m in methods {
                    let key = format!("{}.{}/{}", inst.name, m.name, m.params.len());
                    sigs.insert(key, dirs(&m.params));
                }
            }
        }
    }
}

pub fn check(prog: &Program) -> Vec<Error> {
    let mut globals: Sigs = HashMap::new();
    for d in &prog.decls {
        match d {
            Decl::Function { name, params, .. } => {
                globals.insert(name.clone(), dirs(params));
            }
            Decl::Action(a) => {
                globals.insert(a.name.clone(), dirs(&a.params));
            }
            Decl::ExternFn(m) => {
                globals.insert(m.name.clone(), dirs(&m.params));
            }
            Decl::Instance(i) => instance_methods(prog, i, &mut globals),
            _ => {}
        }
    }
    let hdr_fns = header_functions(prog);
    let fixed: HashSet<String> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Const { name, .. } => Some(name.clone()),
            Decl::Instance(i) => Some(i.name.clone()),
            _ => None,
        })
        .collect();
    let shadowed = |params: &[Param], fixed: &HashSet<String>| {
        let mut f = fixed.clone();
        for p in params {
            f.remove(&p.name);
        }
        f
    };
    let mut errs = vec![];
    for d in &prog.decls {
        match d {
            Decl::Function { params, body, .. } => {
                let f = shadowed(params, &fixed);
                Walk::new(&globals, read_only(params, false), f, &hdr_fns, &mut errs).block(body)
            }
            Decl::Action(a) => {
                let f = shadowed(&a.params, &fixed);
                Walk::new(&globals, read_only(&a.params, true), f, &hdr_fns, &mut errs)
                    .block(&a.body)
            }
            Decl::Control {
                params,
                ctor_params,
                locals,
                apply,
                ..
            } => {
                let cfixed = local_fixed(params, ctor_params, locals, &fixed);
                let mut sigs = globals.clone();
                for l in locals {
                    match l {
                        Local::Action(a) => {
                            sigs.insert(a.name.clone(), dirs(&a.params));
                        }
                        Local::Inst(i) => instance_methods(prog, i, &mut sigs),
                        _ => {}
                    }
                }
                let outer = read_only(params, false);
                for l in locals {
                    match l {
                        Local::Action(a) => {
                            let mut ro = outer.clone();
                            for p in &a.params {
                                ro.remove(&p.name);
                            }
                            ro.extend(read_only(&a.params, true));
                            let f = shadowed(&a.params, &cfixed);
                            Walk::new(&sigs, ro, f, &hdr_fns, &mut errs).block(&a.body)
                        }
                        Local::Var(s) => {
                            Walk::new(&sigs, outer.clone(), cfixed.clone(), &hdr_fns, &mut errs)
                                .stmt(s)
                        }
                        _ => {}
                    }
                }
                Walk::new(&sigs, outer, cfixed, &hdr_fns, &mut errs).block(apply);
            }
            Decl::Parser {
                params,
                ctor_params,
                locals,
                states,
                ..
            } => {
                let pfixed = local_fixed(params, ctor_params, locals, &fixed);
                let ro = read_only(params, false);
                let mut sigs = globals.clone();
                for l in locals {
                    if let Local::Inst(i) = l {
                        instance_methods(prog, i, &mut sigs);
                    }
                }
                for l in locals {
                    if let Local::Var(s) = l {
                        Walk::new(&sigs, ro.clone(), pfixed.clone(), &hdr_fns, &mut errs).stmt(s);
                    }
                }
                for st in states {
                    Walk::new(&sigs, ro.clone(), pfixed.clone(), &hdr_fns, &mut errs)
                        .block(&st.stmts);
                }
            }
            _ => {}
        }
    }
    errs
}

/// Top-level functions returning a header, struct or union: a call of one is a
/// location (lowering inlines it into a temporary).
fn header_functions(prog: &Program) -> HashSet<String> {
    let aggregates: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Header { name, .. }
            | Decl::HeaderUnion { name, .. }
            | Decl::Struct { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let mut typedefs: HashMap<&str, &TypeRef> = HashMap::new();
    for d in &prog.decls {
        if let Decl::Typedef { name, ty, .. } = d {
            typedefs.insert(name.as_str(), ty);
        }
    }
    let is_aggregate = |t: &TypeRef| {
        let mut t = t;
        for _ in 0..32 {
            match t {
                TypeRef::Named(n, _, _) if aggregates.contains(n.as_str()) => return true,
                TypeRef::Named(n, _, _) => match typedefs.get(n.as_str()) {
                    Some(next) => t = next,
                    None => return false,
                },
                _ => return false,
            }
        }
        false
    };
    prog.decls
        .iter()
        .filter_map(|d| match d {
            Decl::Function { name, ret, .. } if is_aggregate(ret) => Some(name.clone()),
            _ => None,
        })
        .collect()
}

/// The names a parser's or control's bodies see that are no locations: the top-level
/// ones (`fixed`), its `packet_in`/`packet_out` parameters, constructor parameters,
/// constants, instances, tables and value sets (a parameter of the same name hides a
/// top-level one).
fn local_fixed(
    params: &[Param],
    ctor_params: &[Param],
    locals: &[Local],
    fixed: &HashSet<String>,
) -> HashSet<String> {
    let mut f = fixed.clone();
    for p in params {
        let packet =
            matches!(&p.ty, TypeRef::Named(n, _, _) if n == "packet_in" || n == "packet_out");
        if packet {
            f.insert(p.name.clone());
        } else {
            f.remove(&p.name);
        }
    }
    for p in ctor_params {
        f.insert(p.name.clone());
    }
    for l in locals {
        match l {
            Local::Var(s) => match &s.kind {
                StmtKind::Const(_, n, _) => {
                    f.insert(n.clone());
                }
                StmtKind::Inst(i) => {
                    f.insert(i.name.clone());
                }
                StmtKind::Var(_, _, n, _) => {
                    f.remove(n);
                }
                _ => {}
            },
            Local::Inst(i) => {
                f.insert(i.name.clone());
            }
            Local::Table(t) => {
                f.insert(t.name.clone());
            }
            Local::ValueSet { name, .. } => {
                f.insert(name.clone());
            }
            Local::Action(_) => {}
        }
    }
    f
}

fn dirs(params: &[Param]) -> Vec<(String, Dir)> {
    params.iter().map(|p| (p.name.clone(), p.dir)).collect()
}

/// Read-only parameters by name, with what makes them so (for the message): `in`
/// ones, and directionless ones of actions (action data).
type ReadOnly = HashMap<String, &'static str>;

fn read_only(params: &[Param], action: bool) -> ReadOnly {
    params
        .iter()
        .filter_map(|p| match p.dir {
            Dir::In => Some((p.name.clone(), "an `in` parameter")),
            Dir::None if action => {
                Some((p.name.clone(), "action data (a directionless parameter)"))
            }
            _ => None,
        })
        .collect()
}

/// The variable an l-value expression names (`x` of `x.f[3].g[7:0]`).
fn root(e: &Expr) -> Option<&str> {
    match &e.kind {
        ExprKind::Name(n) => Some(n),
        ExprKind::Member(b, _) | ExprKind::Index(b, _) | ExprKind::Slice(b, _, _) => root(b),
        _ => None,
    }
}

struct Walk<'s, 'e> {
    sigs: &'s Sigs,
    /// read-only parameters in scope (a local of the same name hides one)
    ro: ReadOnly,
    /// names in scope that are no locations (see `local_fixed`)
    fixed: HashSet<String>,
    /// functions whose calls are locations (see `header_functions`)
    hdr_fns: &'s HashSet<String>,
    errs: &'e mut Vec<Error>,
}

impl<'s, 'e> Walk<'s, 'e> {
    fn new(
        sigs: &'s Sigs,
        ro: ReadOnly,
        fixed: HashSet<String>,
        hdr_fns: &'s HashSet<String>,
        errs: &'e mut Vec<Error>,
    ) -> Self {
        Walk {
            sigs,
            ro,
            fixed,
            hdr_fns,
            errs,
        }
    }

    fn block(&mut self, body: &[Stmt]) {
        let saved = (self.ro.clone(), self.fixed.clone());
        for s in body {
            self.stmt(s);
        }
        (self.ro, self.fixed) = saved;
    }

    /// `target` is assigned or passed as an `out`/`inout` argument: a location that is
    /// not read-only.
    fn stored(&mut self, target: &Expr, what: &str) {
        if !self.written(target, what) {
            let mut base = target;
            while let ExprKind::Slice(b, _, _) = &base.kind {
                base = b;
            }
            self.location(base);
        }
    }

    /// Whether `target` is a read-only parameter (reported) or part of one.
    fn written(&mut self, target: &Expr, what: &str) -> bool {
        if let Some(n) = root(target) {
            if let Some(kind) = self.ro.get(n) {
                self.errs.push(Error::new(
                    target.span,
                    format!(
                        "'{}' is {}, which is read-only: it cannot {}",
                        n, kind, what
                    ),
                ));
                return true;
            }
        }
        false
    }

    /// `e` (no slice) names a location, as lowering's `place` takes one apart.
    fn location(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Name(n) if self.fixed.contains(n) => self.errs.push(Error::new(
                e.span,
                format!("'{}' cannot be used as a location here", n),
            )),
            ExprKind::Name(_) => {}
            ExprKind::Member(b, _) | ExprKind::Index(b, _) => self.location(b),
            ExprKind::Call(f, _, _) if matches!(&f.kind, ExprKind::Name(n) if self.hdr_fns.contains(n)) =>
                {}
            _ => self.errs.push(Error::new(
                e.span,
                "expected a location (a variable, header or field)",
            )),
        }
    }

    /// The arguments given to `out`/`inout` parameters (directions `ds`) are written.
    fn out_args(&mut self, ds: &[(String, Dir)], args: &[Arg]) {
        for (i, a) in args.iter().enumerate() {
            let d = match &a.name {
                Some(name) => ds.iter().find(|p| p.0 == *name),
                None => ds.get(i),
            };
            if matches!(d, Some((_, Dir::Out | Dir::InOut))) {
                self.stored(&a.value, "be passed as an out or inout argument");
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                self.stored(l, "be assigned");
                self.expr(l);
                self.expr(r);
            }
            StmtKind::Call(c) => self.expr(c),
            StmtKind::If(c, a, b) => {
                self.expr(c);
                self.block(std::slice::from_ref(a));
                if let Some(b) = b {
                    self.block(std::slice::from_ref(b));
                }
            }
            StmtKind::Block(v) => self.block(v),
            StmtKind::Switch(e, cases) => {
                self.expr(e);
                for c in cases {
                    if let Some(b) = &c.body {
                        self.block(std::slice::from_ref(b));
                    }
                }
            }
            StmtKind::Var(_, _, n, init) => {
                if let Some(i) = init {
                    self.expr(i);
                }
                self.ro.remove(n);
                self.fixed.remove(n);
            }
            StmtKind::Const(_, n, v) => {
                self.expr(v);
                self.ro.remove(n);
                self.fixed.insert(n.clone());
            }
            StmtKind::Inst(i) => {
                self.fixed.insert(i.name.clone());
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        let sigs = self.sigs;
        if let ExprKind::Call(f, _, args) = &e.kind {
            match &f.kind {
                ExprKind::Name(n) => {
                    if let Some(ds) = sigs.get(n) {
                        self.out_args(ds, args);
                    }
                }
                // a method of an extern instance: `r.read(x, 0)`
                ExprKind::Member(b, m)
                    if matches!(&b.kind, ExprKind::Name(inst)
                        if sigs.contains_key(&format!("{}.{}/{}", inst, m, args.len()))) =>
                {
                    if let ExprKind::Name(inst) = &b.kind {
                        self.out_args(&sigs[&format!("{}.{}/{}", inst, m, args.len())], args);
                    }
                }
                ExprKind::Member(b, m)
                    if matches!(
                        m.as_str(),
                        "setValid" | "setInvalid" | "push_front" | "pop_front"
                    ) =>
                {
                    self.written(b, &format!("be changed by {}()", m));
                }
                _ => {}
            }
        }
        match &e.kind {
            ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => self.expr(b),
            ExprKind::Index(a, b)
            | ExprKind::Binary(_, a, b)
            | ExprKind::Mask(a, b)
            | ExprKind::Range(a, b) => {
                self.expr(a);
                self.expr(b);
            }
            ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
                self.expr(a);
                self.expr(b);
                self.expr(c);
            }
            ExprKind::Call(f, _, args) => {
                self.expr(f);
                args.iter().for_each(|a| self.expr(&a.value));
            }
            ExprKind::List(items) => items.iter().for_each(|(_, x)| self.expr(x)),
            _ => {}
        }
    }
}
