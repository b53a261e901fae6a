//! Syntactic effect analysis on the AST, used by `lower` to decide where the P4_16
//! semantics need real copies: copy-in/copy-out of parameters that may alias, snapshots
//! of operands evaluated before a call with side effects, short-circuit branches.
//! Everything here over-approximates (a name that might be written counts as written):
//! an unneeded copy costs a primitive, a missed one miscompiles.

use crate::ast::{Arg, Expr, ExprKind, Stmt, StmtKind};
use std::collections::HashSet;

/// Looks up the body of a callable (action or function) by name.
pub type Bodies<'a> = dyn Fn(&str) -> Option<Vec<Stmt>> + 'a;

/// Depth limit for following calls (recursion is an error elsewhere).
const MAX_DEPTH: usize = 16;

/// Names read or written by a statement list, and the subset that may be written;
/// follows calls of actions and functions into their bodies.
#[derive(Default, Debug)]
pub struct Access {
    pub names: HashSet<String>,
    pub written: HashSet<String>,
}

pub fn body_access(body: &[Stmt], bodies: &Bodies) -> Access {
    let mut a = Access::default();
    let mut seen = HashSet::new();
    for s in body {
        stmt(s, bodies, &mut a, &mut seen, 0);
    }
    a
}

fn stmt(s: &Stmt, b: &Bodies, a: &mut Access, seen: &mut HashSet<String>, d: usize) {
    match &s.kind {
        StmtKind::Assign(l, r) => {
            roots_into(l, &mut a.written);
            expr(l, b, a, seen, d);
            expr(r, b, a, seen, d);
        }
        StmtKind::Call(c) => expr(c, b, a, seen, d),
        StmtKind::If(c, x, y) => {
            expr(c, b, a, seen, d);
            stmt(x, b, a, seen, d);
            if let Some(y) = y {
                stmt(y, b, a, seen, d);
            }
        }
        StmtKind::Block(v) => v.iter().for_each(|x| stmt(x, b, a, seen, d)),
        StmtKind::Switch(e, cases) => {
            expr(e, b, a, seen, d);
            for c in cases {
                expr(&c.label, b, a, seen, d);
                if let Some(x) = &c.body {
                    stmt(x, b, a, seen, d);
                }
            }
        }
        StmtKind::Var(_, _, n, init) => {
            a.written.insert(n.clone());
            a.names.insert(n.clone());
            if let Some(e) = init {
                expr(e, b, a, seen, d);
            }
        }
        StmtKind::Const(_, _, e) => expr(e, b, a, seen, d),
        StmtKind::Return(Some(e)) => expr(e, b, a, seen, d),
        StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty | StmtKind::Inst(_) => {}
    }
}

fn expr(e: &Expr, b: &Bodies, a: &mut Access, seen: &mut HashSet<String>, d: usize) {
    match &e.kind {
        ExprKind::Name(n) => {
            a.names.insert(n.clone());
        }
        ExprKind::Call(f, _, args) => {
            expr(f, b, a, seen, d);
            for x in args {
                expr(&x.value, b, a, seen, d);
            }
            match &f.kind {
                // a method may change its receiver (setValid, push_front, extract, ...)
                ExprKind::Member(recv, m) if m != "isValid" => roots_into(recv, &mut a.written),
                ExprKind::Name(n) if d < MAX_DEPTH && seen.insert(n.clone()) => {
                    if let Some(body) = b(n) {
                        for s in &body {
                            stmt(s, b, a, seen, d + 1);
                        }
                    }
                }
                _ => {}
            }
            // any argument may be bound to an out/inout parameter
            if !matches!(&f.kind, ExprKind::Member(_, m) if m == "isValid") {
                for x in args {
                    roots_into(&x.value, &mut a.written);
                }
            }
        }
        _ => children(e).into_iter().for_each(|c| expr(c, b, a, seen, d)),
    }
}

/// The direct sub-expressions of `e` (a call's callee and arguments included).
pub(crate) fn children(e: &Expr) -> Vec<&Expr> {
    match &e.kind {
        ExprKind::Member(x, _) | ExprKind::Unary(_, x) | ExprKind::Cast(_, x) => vec![x],
        ExprKind::Index(x, y)
        | ExprKind::Binary(_, x, y)
        | ExprKind::Mask(x, y)
        | ExprKind::Range(x, y) => vec![x, y],
        ExprKind::Slice(x, y, z) | ExprKind::Ternary(x, y, z) => vec![x, y, z],
        ExprKind::Call(f, _, args) => std::iter::once(&**f)
            .chain(args.iter().map(|a: &Arg| &a.value))
            .collect(),
        ExprKind::List(v) => v.iter().map(|x| &x.1).collect(),
        _ => vec![],
    }
}

/// Every name an expression mentions (for an l-value: its root and the names in its indices).
pub fn roots(e: &Expr) -> HashSet<String> {
    let mut s = HashSet::new();
    roots_into(e, &mut s);
    s
}

fn roots_into(e: &Expr, out: &mut HashSet<String>) {
    if let ExprKind::Name(n) = &e.kind {
        out.insert(n.clone());
    }
    for c in children(e) {
        roots_into(c, out);
    }
}

/// Whether evaluating `e` may change state: any call except `isValid()` and the calls
/// `pure_call` accepts (functions inlined as plain expressions).
pub fn has_effects(e: &Expr, pure_call: &dyn Fn(&str) -> bool) -> bool {
    if let ExprKind::Call(f, _, _) = &e.kind {
        let pure = match &f.kind {
            ExprKind::Member(_, m) => m == "isValid" || m == "lookahead",
            ExprKind::Name(n) => pure_call(n),
            _ => false,
        };
        if !pure {
            return true;
        }
    }
    children(e).into_iter().any(|c| has_effects(c, pure_call))
}

/// Whether `e` contains a call of any kind (also of pure functions).
pub fn has_call(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Call(..)) || children(e).into_iter().any(has_call)
}
