//! Read-only parameters (P4_16 "Calling convention"): an `in` parameter, and a
//! directionless parameter of an action (action data, which behaves as `in`), cannot
//! be assigned, be the target of a header method that changes it (`setValid`, ...) or
//! be passed on as an `out`/`inout` argument. Lowering binds such parameters by
//! reference where it can, so this is checked on the syntax tree before lowering.

use crate::ast::*;
use crate::diag::Error;
use std::collections::HashMap;

/// Directions of the parameters of the program's functions, actions and extern
/// functions, by name (an action local to a control shadows a global one there).
type Sigs = HashMap<String, Vec<(String, Dir)>>;

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
            _ => {}
        }
    }
    let mut errs = vec![];
    for d in &prog.decls {
        match d {
            Decl::Function { params, body, .. } => {
                Walk::new(&globals, read_only(params, false), &mut errs).block(body)
            }
            Decl::Action(a) => {
                Walk::new(&globals, read_only(&a.params, true), &mut errs).block(&a.body)
            }
            Decl::Control {
                params,
                locals,
                apply,
                ..
            } => {
                let mut sigs = globals.clone();
                for l in locals {
                    if let Local::Action(a) = l {
                        sigs.insert(a.name.clone(), dirs(&a.params));
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
                            Walk::new(&sigs, ro, &mut errs).block(&a.body)
                        }
                        Local::Var(s) => Walk::new(&sigs, outer.clone(), &mut errs).stmt(s),
                        _ => {}
                    }
                }
                Walk::new(&sigs, outer, &mut errs).block(apply);
            }
            Decl::Parser {
                params,
                locals,
                states,
                ..
            } => {
                let ro = read_only(params, false);
                for l in locals {
                    if let Local::Var(s) = l {
                        Walk::new(&globals, ro.clone(), &mut errs).stmt(s);
                    }
                }
                for st in states {
                    Walk::new(&globals, ro.clone(), &mut errs).block(&st.stmts);
                }
            }
            _ => {}
        }
    }
    errs
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
    errs: &'e mut Vec<Error>,
}

impl<'s, 'e> Walk<'s, 'e> {
    fn new(sigs: &'s Sigs, ro: ReadOnly, errs: &'e mut Vec<Error>) -> Self {
        Walk { sigs, ro, errs }
    }

    fn block(&mut self, body: &[Stmt]) {
        let saved = self.ro.clone();
        for s in body {
            self.stmt(s);
        }
        self.ro = saved;
    }

    fn written(&mut self, target: &Expr, what: &str) {
        if let Some(n) = root(target) {
            if let Some(kind) = self.ro.get(n) {
                self.errs.push(Error::new(
                    target.span,
                    format!(
                        "'{}' is {}, which is read-only: it cannot {}",
                        n, kind, what
                    ),
                ));
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                self.written(l, "be assigned");
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
            }
            StmtKind::Const(_, n, v) => {
                self.expr(v);
                self.ro.remove(n);
            }
            StmtKind::Return(Some(e)) => self.expr(e),
            StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty | StmtKind::Inst(_) => {}
        }
    }

    fn expr(&mut self, e: &Expr) {
        if let ExprKind::Call(f, _, args) = &e.kind {
            match &f.kind {
                ExprKind::Name(n) => {
                    if let Some(ds) = self.sigs.get(n) {
                        for (i, a) in args.iter().enumerate() {
                            let d = match &a.name {
                                Some(name) => ds.iter().find(|p| p.0 == *name),
                                None => ds.get(i),
                            };
                            if matches!(d, Some((_, Dir::Out | Dir::InOut))) {
                                self.written(&a.value, "be passed as an out or inout argument");
                            }
                        }
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
