//! Expression typing: the type of every expression in every body of the program
//! (top-level functions and actions, the actions and apply blocks of controls, the
//! states of parsers), called or not, and the type errors found on the way (unary,
//! binary and `?:` operands, casts, slices, `if` conditions, stack indices and members,
//! `isValid`, functions and header and stack methods returning no value used as values;
//! the arguments of `verify`, `extract`, `lookahead` assignments and the checksum
//! functions), with lowering's messages and spans.
//!
//! The rules are lowering's (`lower::expr`): an expression lowering folds as a
//! constant takes the folded type (no operator errors inside it), an untyped constant
//! takes the type the context expects, and `unify` joins operand types. A type this
//! pass cannot know (an extern method's result, a name sema::bodies reports) is
//! `Type::Unknown`; it draws no error and makes the operators over it `Unknown` too.
//! Names are sema::bodies' to check; this pass reports no name errors.
//!
//! API for other passes: [`Scope`] (what a body can name, with types) and
//! [`type_of`] (the type of one expression in a scope, or its first type error).

use super::types::{mask, shr, sign_extend, types_compatible, unify, Type, TypeEnv};
use crate::ast::*;
use crate::diag::{Error, PResult, Sink};
use std::collections::HashMap;

/// What a name in a body denotes, for typing.
#[derive(Clone, Debug)]
enum Entry {
    /// A variable or parameter of this type.
    Value(Type),
    /// A compile-time constant (as lowering folds it).
    Const(Type, u128),
    /// An instance, table or value set: no value of a known type.
    Opaque,
}

/// The names a body can use, innermost scope last.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    frames: Vec<HashMap<String, Entry>>,
}

impl Scope {
    /// An empty scope (top-level constants are found through the `TypeEnv`).
    pub fn new() -> Scope {
        Scope {
            frames: vec![HashMap::new()],
        }
    }
    /// Declares a variable or parameter `name` of type `t` in the innermost frame.
    pub fn value(&mut self, name: &str, t: Type) {
        self.top().insert(name.to_string(), Entry::Value(t));
    }
    /// Declares an instance, table or value set `name` (no value of a known type).
    pub fn opaque(&mut self, name: &str) {
        self.top().insert(name.to_string(), Entry::Opaque);
    }
    /// Declares a constant `name` of declared type `t` with initializer `init`:
    /// folded as lowering folds it, else a plain value of type `t`.
    pub fn constant(&mut self, env: &TypeEnv, name: &str, t: Type, init: &Expr) {
        let entry = match env.const_eval(init, &self.constants()) {
            Ok((v, _)) => Entry::Const(t, v),
            Err(_) => Entry::Value(t),
        };
        self.top().insert(name.to_string(), entry);
    }
    /// The scope of a body with parameters `params` inside `outer` (its own frame).
    pub fn of_body(outer: &Scope, env: &TypeEnv, params: &[Param]) -> Scope {
        let mut s = outer.clone();
        s.push();
        for p in params {
            s.value(&p.name, env.resolve(&p.ty).unwrap_or(Type::Unknown));
        }
        s
    }
    /// Opens an inner frame (a block).
    pub fn push(&mut self) {
        self.frames.push(HashMap::new());
    }
    /// Closes the innermost frame.
    pub fn pop(&mut self) {
        self.frames.pop();
    }
    fn top(&mut self) -> &mut HashMap<String, Entry> {
        if self.frames.is_empty() {
            self.frames.push(HashMap::new());
        }
        self.frames.last_mut().expect("a frame")
    }
    fn lookup(&self, n: &str) -> Option<&Entry> {
        self.frames.iter().rev().find_map(|f| f.get(n))
    }
    /// The constants in scope, an inner non-constant hiding an outer constant (as
    /// lowering's `const_locals`).
    pub fn constants(&self) -> HashMap<String, (Type, u128)> {
        let mut m = HashMap::new();
        for f in &self.frames {
            for (k, e) in f {
                match e {
                    Entry::Const(t, v) => {
                        m.insert(k.clone(), (t.clone(), *v));
                    }
                    _ => {
                        m.remove(k);
                    }
                }
            }
        }
        m
    }
}

/// The type of `e` in `scope` (`Unknown` where this pass cannot know it), or the first
/// operator type error inside it. `functions` are the top-level functions' return
/// types by name (see [`function_returns`]); `expect` is the type the context gives an
/// untyped constant (`None` for none).
pub fn type_of(
    env: &TypeEnv,
    functions: &HashMap<String, Type>,
    scope: &Scope,
    e: &Expr,
    expect: Option<&Type>,
) -> PResult<Type> {
    Typer {
        env,
        functions,
        scope,
    }
    .ty(e, expect)
}

/// What the bodies of a parser or control can name, for `type_of`: its parameters,
/// constructor parameters and locals.
pub fn block_scope(
    env: &TypeEnv,
    params: &[Param],
    ctor_params: &[Param],
    locals: &[Local],
) -> Scope {
    let resolve = |t: &TypeRef| env.resolve(t).unwrap_or(Type::Unknown);
    let mut s = Scope::new();
    for p in params.iter().chain(ctor_params) {
        s.value(&p.name, resolve(&p.ty));
    }
    for l in locals {
        match l {
            Local::Var(st) => match &st.kind {
                StmtKind::Var(_, ty, name, _) => s.value(name, resolve(ty)),
                StmtKind::Const(ty, name, init) => s.constant(env, name, resolve(ty), init),
                StmtKind::Inst(i) => s.opaque(&i.name),
                _ => {}
            },
            Local::Inst(i) => s.opaque(&i.name),
            Local::Table(t) => s.opaque(&t.name),
            Local::ValueSet { name, .. } => s.opaque(name),
            Local::Action(_) => {}
        }
    }
    s
}

/// The return types of the top-level functions by name; an overloaded name (declared
/// more than once among functions, actions and extern functions) is left out, as
/// lowering picks one by its arguments.
pub fn function_returns(prog: &Program, env: &TypeEnv) -> HashMap<String, Type> {
    let count = prog.callable_name_counts();
    prog.decls
        .iter()
        .filter_map(|d| match d {
            Decl::Function { name, ret, .. } if count.get(name.as_str()) == Some(&1) => {
                Some((name.clone(), env.resolve(ret).unwrap_or(Type::Unknown)))
            }
            _ => None,
        })
        .collect()
}

/// Types every expression of every body in `prog`, reporting the first operator type
/// error of each statement (and of each `select`).
pub fn check(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    let functions = function_returns(prog, env);
    let mut w = Walker {
        env,
        functions: &functions,
        scope: Scope::new(),
        ret: None,
        in_parser: false,
        sink,
    };
    for d in &prog.decls {
        match d {
            Decl::Function {
                ret, params, body, ..
            } => {
                w.ret = Some(env.resolve(ret).unwrap_or(Type::Unknown));
                w.body(&Scope::new(), params, body);
                w.ret = None;
            }
            Decl::Action(a) => w.body(&Scope::new(), &a.params, &a.body),
            Decl::Control {
                params,
                ctor_params,
                locals,
                apply,
                ..
            } => {
                let outer = block_scope(w.env, params, ctor_params, locals);
                for l in locals {
                    match l {
                        Local::Action(a) => w.body(&outer, &a.params, &a.body),
                        Local::Table(t) => {
                            w.scope = outer.clone();
                            let keys = t.keys.iter().map(|k| &k.expr);
                            let args = t
                                .actions
                                .iter()
                                .chain(t.default_action.iter().map(|d| &d.0))
                                .flat_map(|r| r.args.iter().map(|a| &a.value));
                            w.exprs(keys.chain(args));
                        }
                        Local::Inst(i) => {
                            w.scope = outer.clone();
                            w.exprs(i.args.iter().map(|a| &a.value));
                        }
                        _ => {}
                    }
                }
                w.body(&outer, &[], apply);
            }
            Decl::Parser {
                params,
                ctor_params,
                locals,
                states,
                ..
            } => {
                let outer = block_scope(w.env, params, ctor_params, locals);
                w.in_parser = true;
                for st in states {
                    w.scope = outer.clone();
                    w.scope.push();
                    for s in &st.stmts {
                        w.stmt_reported(s);
                    }
                    if let Some(Transition::Select(keys, _, _)) = &st.transition {
                        if let Err(e) = keys.iter().try_for_each(|k| w.ty(k, None).map(|_| ())) {
                            w.sink.push(e);
                        }
                    }
                }
                w.in_parser = false;
            }
            Decl::Instance(i) => {
                w.scope = Scope::new();
                w.exprs(i.args.iter().map(|a| &a.value));
            }
            _ => {}
        }
    }
}

struct Walker<'p, 's> {
    env: &'p TypeEnv,
    functions: &'p HashMap<String, Type>,
    scope: Scope,
    /// The return type of the function being checked.
    ret: Option<Type>,
    /// Checking a parser's states (where lowering takes `verify`, `extract` and
    /// `lookahead`).
    in_parser: bool,
    sink: &'s mut Sink,
}

impl Walker<'_, '_> {
    fn resolve(&self, t: &TypeRef) -> Type {
        self.env.resolve(t).unwrap_or(Type::Unknown)
    }

    fn ty(&self, e: &Expr, expect: Option<&Type>) -> PResult<Type> {
        type_of(self.env, self.functions, &self.scope, e, expect)
    }

    /// Types each of `xs` (no context type), reporting the first error.
    fn exprs<'e>(&mut self, mut xs: impl Iterator<Item = &'e Expr>) {
        if let Err(e) = xs.try_for_each(|x| self.ty(x, None).map(|_| ())) {
            self.sink.push(e);
        }
    }

    fn body(&mut self, outer: &Scope, params: &[Param], body: &[Stmt]) {
        self.scope = Scope::of_body(outer, self.env, params);
        self.block(body);
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.scope.push();
        for s in stmts {
            self.stmt_reported(s);
        }
        self.scope.pop();
    }

    fn stmt_reported(&mut self, s: &Stmt) {
        if let Err(e) = self.stmt(s) {
            self.sink.push(e);
        }
    }

    fn nested(&mut self, s: &Stmt) {
        self.scope.push();
        self.stmt_reported(s);
        self.scope.pop();
    }

    fn stmt(&mut self, s: &Stmt) -> PResult<()> {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                let lt = self.ty(l, None)?;
                let expect = Some(&lt).filter(|t| **t != Type::Unknown);
                self.ty(r, expect)?;
                if self.in_parser {
                    self.lookahead_assign(&lt, r)?;
                }
                self.assign_types(&lt, r)?;
            }
            StmtKind::Call(c) => {
                self.stmt_call_ty(c)?;
                self.call_stmt(c)?;
            }
            StmtKind::If(c, a, b) => {
                let t = self.ty(c, Some(&Type::Bool))?;
                if known(&t) && t != Type::Bool {
                    return Err(Error::new(
                        c.span,
                        format!("condition must be bool, not {}", t.name()),
                    ));
                }
                self.nested(a);
                if let Some(b) = b {
                    self.nested(b);
                }
            }
            StmtKind::Block(v) => self.block(v),
            StmtKind::Switch(e, cases) => {
                let r = self.ty(e, None);
                for c in cases {
                    if let Some(b) = &c.body {
                        self.nested(b);
                    }
                }
                r?;
            }
            // the name is declared even when its initializer has an error
            StmtKind::Var(_, ty, name, init) => {
                let t = self.resolve(ty);
                let expect = Some(&t).filter(|t| **t != Type::Unknown);
                let r = init.as_ref().map(|x| self.ty(x, expect)).transpose();
                let r = r.and_then(|_| match init {
                    Some(x) => self.assign_types(&t, x),
                    None => Ok(()),
                });
                self.scope.value(name, t);
                r?;
            }
            StmtKind::Const(ty, name, init) => {
                let t = self.resolve(ty);
                let expect = Some(&t).filter(|t| **t != Type::Unknown);
                let r = self.ty(init, expect);
                self.scope.constant(self.env, name, t, init);
                r?;
            }
            StmtKind::Return(Some(e)) => {
                let expect = self.ret.clone().filter(|t| *t != Type::Unknown);
                self.ty(e, expect.as_ref())?;
                if let Some(rt) = expect.filter(|t| *t != Type::Void) {
                    self.assign_types(&rt, e)?;
                }
            }
            StmtKind::Inst(i) => self.scope.opaque(&i.name),
            StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty => {}
        }
        Ok(())
    }
}

impl Walker<'_, '_> {
    /// Types a call statement's call: a function or method returning no value is called
    /// here for its effects (only its arguments, and a method's object, are typed).
    fn stmt_call_ty(&self, c: &Expr) -> PResult<()> {
        if let ExprKind::Call(f, _, args) = &c.kind {
            let void = match &f.kind {
                ExprKind::Name(n) => {
                    self.scope.lookup(n).is_none() && self.functions.get(n) == Some(&Type::Void)
                }
                ExprKind::Member(b, m) => void_method(&self.ty(b, None)?, m),
                _ => false,
            };
            if void {
                for a in args {
                    self.ty(&a.value, None)?;
                }
                return Ok(());
            }
        }
        self.ty(c, None).map(|_| ())
    }

    /// Whether `n` names an extern function or method lowering takes by its name (no
    /// local, function or action of that name).
    fn is_builtin(&self, n: &str) -> bool {
        self.scope.lookup(n).is_none() && !self.functions.contains_key(n)
    }

    /// The argument types of the calls lowering takes apart as statements: `verify` and
    /// `packet_in.extract` in parsers, the checksum functions (lowering's messages).
    fn call_stmt(&self, c: &Expr) -> PResult<()> {
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(());
        };
        match &f.kind {
            ExprKind::Name(n) if n == "verify" && self.in_parser && self.is_builtin(n) => {
                if args.len() != 2 {
                    return Ok(());
                }
                let ct = self.ty(&args[0].value, Some(&Type::Bool))?;
                if known(&ct) && ct != Type::Bool {
                    return Err(Error::new(
                        args[0].value.span,
                        format!("verify condition must be bool, not {}", ct.name()),
                    ));
                }
                let et = self.ty(&args[1].value, Some(&Type::Error))?;
                if known(&et) && et != Type::Error {
                    return Err(Error::new(
                        args[1].value.span,
                        format!("verify needs an error value, not {}", et.name()),
                    ));
                }
            }
            ExprKind::Name(n)
                if matches!(
                    n.as_str(),
                    "verify_checksum"
                        | "verify_checksum_with_payload"
                        | "update_checksum"
                        | "update_checksum_with_payload"
                ) && self.is_builtin(n)
                    && args.len() == 4 =>
            {
                let ct = self.ty(&args[0].value, Some(&Type::Bool))?;
                if known(&ct) && ct != Type::Bool {
                    return Err(Error::new(
                        args[0].value.span,
                        "checksum condition must be bool",
                    ));
                }
                // lowering writes the checksum into a field (a header's or metadata's)
                let target = &args[2].value;
                let tt = self.ty(target, None)?;
                let slice = matches!(target.kind, ExprKind::Slice(..));
                if slice || (known(&tt) && tt.width().is_none()) {
                    return Err(Error::new(
                        target.span,
                        "checksum target must be a header field",
                    ));
                }
            }
            ExprKind::Member(b, m) if m == "extract" && self.in_parser && !args.is_empty() => {
                if self.ty(b, None)? != Type::Extern("packet_in".into()) {
                    return Ok(());
                }
                self.extract_target(&args[0].value)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// What `extract(x)` writes: a header, the next element of a header stack, or a
    /// member of the next element of a header union stack (`u.next.member`).
    fn extract_target(&self, x: &Expr) -> PResult<()> {
        if matches!(x.kind, ExprKind::Default) {
            return Ok(());
        }
        if let ExprKind::Member(n, member) = &x.kind {
            if let ExprKind::Member(b, m) = &n.kind {
                if m == "next" {
                    if let Type::Stack(elem, _) = self.ty(b, None)? {
                        if let Type::Union(u) = *elem {
                            let has = self
                                .env
                                .composite(&u)
                                .is_some_and(|d| d.fields.iter().any(|f| f.0 == *member));
                            if !has {
                                return Err(Error::new(
                                    x.span,
                                    format!("header union {} has no member '{}'", u, member),
                                ));
                            }
                            return Ok(());
                        }
                    }
                }
            }
        }
        let t = self.ty(x, None)?;
        if known(&t) && !matches!(t, Type::Header(_)) {
            return Err(Error::new(
                x.span,
                format!("extract needs a header, not {}", t.name()),
            ));
        }
        Ok(())
    }

    /// `l = r` where `l` has type `lt` (also a variable's initializer and a function's
    /// `return`): the types lowering's `assign` takes, with its messages and spans. A
    /// list is taken apart field by field (`{a, b}` for a header or struct); the types
    /// of headers, structs and stacks are compared as lowering compares its places (a
    /// header stack by its element type). `lookahead` in a parser is
    /// `lookahead_assign`'s.
    fn assign_types(&self, lt: &Type, r: &Expr) -> PResult<()> {
        if is_lookahead_call(r) {
            return Ok(());
        }
        let mismatch = |msg: String| Err(Error::new(r.span, msg));
        if let (Type::Header(n) | Type::Struct(n), ExprKind::List(items)) = (lt, &r.kind) {
            let Some(def) = self.env.composite(n) else {
                return Ok(());
            };
            if items.len() != def.fields.len() {
                let what = if matches!(lt, Type::Header(_)) {
                    "header"
                } else {
                    "struct"
                };
                return mismatch(format!(
                    "{} {} has {} fields, the list has {}",
                    what,
                    n,
                    def.fields.len(),
                    items.len()
                ));
            }
            for ((_, ft, _), (_, it)) in def.fields.iter().zip(items) {
                self.assign_types(ft, it)?;
            }
            return Ok(());
        }
        match lt {
            Type::Header(h) => {
                let rt = self.ty(r, None)?;
                if known(&rt) && rt != *lt {
                    return mismatch(format!(
                        "cannot assign {} to a header of type {}",
                        rt.name(),
                        h
                    ));
                }
            }
            Type::Struct(s) => {
                let rt = self.ty(r, None)?;
                if known(&rt) && rt != *lt {
                    return mismatch(format!(
                        "cannot assign {} to a struct of type {}",
                        rt.name(),
                        s
                    ));
                }
            }
            Type::Union(_) => {
                let rt = self.ty(r, None)?;
                if known(&rt) && rt != *lt {
                    return mismatch("type mismatch in header union assignment".into());
                }
            }
            Type::Stack(elem, _) => {
                let rt = self.ty(r, None)?;
                let same = match (&**elem, &rt) {
                    (Type::Header(_), Type::Stack(re, _)) => **re == **elem,
                    _ => rt == *lt,
                };
                if known(&rt) && !same {
                    return mismatch(
                        if matches!(**elem, Type::Union(_)) {
                            "type mismatch in header union stack assignment"
                        } else {
                            "type mismatch in header stack assignment"
                        }
                        .into(),
                    );
                }
            }
            Type::Unknown | Type::Tuple(_) | Type::Extern(_) | Type::Void => {}
            _ => {
                let rt = self.ty(r, Some(lt))?;
                if known(&rt) && !types_compatible(lt, &rt) {
                    return mismatch(format!(
                        "cannot assign a value of type {} to a location of type {}",
                        rt.name(),
                        lt.name()
                    ));
                }
            }
        }
        Ok(())
    }

    /// `field = pkt.lookahead<T>()` in a parser: `T` is as wide as the field.
    fn lookahead_assign(&self, lt: &Type, r: &Expr) -> PResult<()> {
        let ExprKind::Call(f, targs, args) = &r.kind else {
            return Ok(());
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return Ok(());
        };
        if m != "lookahead" || !args.is_empty() || targs.len() != 1 {
            return Ok(());
        }
        if !matches!(b.kind, ExprKind::Name(_))
            || self.ty(b, None)? != Type::Extern("packet_in".into())
        {
            return Ok(());
        }
        let Some(tw) = lt.width().filter(|_| known(lt)) else {
            return Ok(());
        };
        let Ok(t) = self.env.resolve(&targs[0]) else {
            return Ok(());
        };
        let w = match &t {
            Type::Header(h) => self.env.header_width(h),
            t => t.width().unwrap_or(0),
        };
        if w != tw {
            return Err(Error::new(
                r.span,
                format!(
                    "cannot assign lookahead of {} bits to a field of {} bits",
                    w, tw
                ),
            ));
        }
        Ok(())
    }
}

struct Typer<'a> {
    env: &'a TypeEnv,
    functions: &'a HashMap<String, Type>,
    scope: &'a Scope,
}

fn known(t: &Type) -> bool {
    *t != Type::Unknown
}

/// Whether `m` is a method of a value of type `t` that returns nothing: a header's
/// `setValid` / `setInvalid`, a header stack's `push_front` / `pop_front`.
fn void_method(t: &Type, m: &str) -> bool {
    matches!(
        (t, m),
        (Type::Header(_), "setValid" | "setInvalid")
            | (Type::Stack(..), "push_front" | "pop_front")
    )
}

impl Typer<'_> {
    fn ty(&self, e: &Expr, expect: Option<&Type>) -> PResult<Type> {
        // what lowering folds as a constant takes the folded type (and the context's,
        // when untyped)
        if is_const_shape(e) {
            if let Ok((_, t)) = self.env.const_eval(e, &self.scope.constants()) {
                return Ok(match (&t, expect) {
                    (Type::InfInt, Some(et)) if et.is_int_like() => match et {
                        Type::SerEnum(_, w) => Type::Bit(*w),
                        t => t.clone(),
                    },
                    _ => t,
                });
            }
        }
        Ok(match &e.kind {
            ExprKind::Int(_, Some((w, true))) => Type::Int(*w),
            ExprKind::Int(_, Some((w, false))) => Type::Bit(*w),
            ExprKind::Int(_, None) => Type::InfInt,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Str(_) => Type::Str,
            ExprKind::Name(n) => match self.scope.lookup(n) {
                Some(Entry::Value(t)) | Some(Entry::Const(t, _)) => t.clone(),
                Some(Entry::Opaque) => Type::Unknown,
                None => match self.env.consts.get(n) {
                    Some((t, _)) => t.clone(),
                    None => Type::Unknown,
                },
            },
            ExprKind::Member(b, m) => self.member(e, b, m)?,
            ExprKind::Index(b, i) => self.index(e, b, i)?,
            ExprKind::Slice(b, hi, lo) => {
                let bt = self.ty(b, None)?;
                let w = match bt {
                    Type::Bit(w) | Type::Int(w) => w,
                    Type::Unknown => return Ok(Type::Unknown),
                    _ => {
                        return Err(Error::new(
                            b.span,
                            format!("cannot slice a value of type {}", bt.name()),
                        ))
                    }
                };
                // bounds that are no constants are lowering's to refuse
                let consts = self.scope.constants();
                let bound =
                    |x: &Expr| (self.env.const_eval(x, &consts)).map(|(v, t)| sign_extend(v, &t));
                let (Ok(h), Ok(l)) = (bound(hi), bound(lo)) else {
                    return Ok(Type::Unknown);
                };
                if h < l || h >= w as u128 {
                    return Err(Error::new(
                        e.span,
                        format!("invalid slice [{}:{}] of a {}-bit value", h, l, w),
                    ));
                }
                Type::Bit((h - l) as u32 + 1)
            }
            ExprKind::Call(f, targs, args) => {
                for a in args {
                    self.arg(&a.value)?;
                }
                match &f.kind {
                    ExprKind::Name(n) if self.scope.lookup(n).is_none() => {
                        match self.functions.get(n) {
                            // as a value (a call statement's own call is `stmt_call_ty`'s)
                            Some(Type::Void) => {
                                return Err(Error::new(
                                    e.span,
                                    format!("function '{}' returns no value", n),
                                ))
                            }
                            Some(t) => t.clone(),
                            None => Type::Unknown,
                        }
                    }
                    ExprKind::Member(b, m) => {
                        let bt = self.ty(b, None)?;
                        match (m.as_str(), &bt) {
                            ("isValid", Type::Header(_) | Type::Union(_) | Type::Unknown)
                                if args.is_empty() =>
                            {
                                Type::Bool
                            }
                            ("isValid", _) if args.is_empty() => {
                                return Err(Error::new(e.span, "isValid() needs a header"))
                            }
                            ("lookahead", Type::Extern(k))
                                if k == "packet_in" && targs.len() == 1 =>
                            {
                                self.env.resolve(&targs[0]).unwrap_or(Type::Unknown)
                            }
                            // as a value (a call statement's own call is `stmt_call_ty`'s)
                            _ if void_method(&bt, m) => {
                                let of = match bt {
                                    Type::Stack(..) => "header stack",
                                    _ => "header",
                                };
                                return Err(Error::new(
                                    e.span,
                                    format!("{} method '{}' returns no value", of, m),
                                ));
                            }
                            _ => Type::Unknown,
                        }
                    }
                    _ => Type::Unknown,
                }
            }
            ExprKind::Unary(op, x) => {
                let t = self.ty(x, expect)?;
                if !known(&t) {
                    return Ok(Type::Unknown);
                }
                match *op {
                    "!" if t != Type::Bool => {
                        return Err(Error::new(
                            e.span,
                            format!("'!' needs a bool operand, not {}", t.name()),
                        ))
                    }
                    "~" if !matches!(t, Type::Bit(_) | Type::Int(_)) => {
                        return Err(Error::new(
                            e.span,
                            format!("'~' needs a bit<N> or int<N> operand, not {}", t.name()),
                        ))
                    }
                    "-" if !matches!(t, Type::Bit(_) | Type::Int(_)) => {
                        return Err(Error::new(
                            e.span,
                            format!(
                                "unary '-' needs a bit<N> or int<N> operand, not {}",
                                t.name()
                            ),
                        ))
                    }
                    _ => t,
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(e, op, a, b, expect)?,
            ExprKind::Ternary(c, a, b) => self.ternary(e, c, a, b, expect)?,
            ExprKind::Cast(ty, x) => {
                let t = self.env.resolve(ty).unwrap_or(Type::Unknown);
                let vt = self.ty(x, Some(&t).filter(|t| known(t)))?;
                if known(&t) && known(&vt) && !cast_ok(&vt, &t) {
                    return Err(Error::new(
                        e.span,
                        format!("cannot cast {} to {}", vt.name(), t.name()),
                    ));
                }
                t
            }
            ExprKind::List(items) => {
                for (_, x) in items {
                    self.arg(x)?;
                }
                Type::Unknown
            }
            ExprKind::Mask(..)
            | ExprKind::Range(..)
            | ExprKind::Default
            | ExprKind::TypeExpr(_) => Type::Unknown,
        })
    }

    /// An argument or list element: typed for its errors (`_` and lists are no values
    /// lowering refuses here).
    fn arg(&self, x: &Expr) -> PResult<()> {
        self.ty(x, None).map(|_| ())
    }

    /// `b[i]`: only stacks are indexed (lowering's `place`), by an integer, a constant
    /// index within the stack's size.
    fn index(&self, e: &Expr, b: &Expr, i: &Expr) -> PResult<Type> {
        let bt = self.ty(b, None)?;
        let (elem, size) = match bt {
            Type::Stack(t, n) => (*t, n),
            Type::Unknown => {
                self.ty(i, Some(&Type::Bit(32)))?;
                return Ok(Type::Unknown);
            }
            _ => return Err(Error::new(e.span, "only header stacks can be indexed")),
        };
        let union = matches!(elem, Type::Union(_));
        match self.const_index(i) {
            Some(idx) if idx >= size as u128 => {
                return Err(Error::new(
                    i.span,
                    if union {
                        format!(
                            "index {} is out of bounds for a header union stack of size {}",
                            idx, size
                        )
                    } else {
                        format!(
                            "index {} is out of bounds for a stack of size {}",
                            idx, size
                        )
                    },
                ))
            }
            Some(_) => {}
            // a run-time index (where lowering takes one: not in parsers, not on
            // union stacks, its own refusals) is an integer
            None => {
                let it = self.ty(i, Some(&Type::Bit(32)))?;
                if !union && known(&it) && !matches!(it, Type::Bit(_) | Type::Int(_)) {
                    return Err(Error::new(
                        i.span,
                        format!("a header stack index must be an integer, not {}", it.name()),
                    ));
                }
            }
        }
        Ok(elem)
    }

    /// A stack index's value where lowering folds it (`Lower::const_expr` as a
    /// `bit<32>`), else `None` (a run-time index, or a constant lowering refuses itself).
    fn const_index(&self, i: &Expr) -> Option<u128> {
        let (v, vt) = self.env.const_eval(i, &self.scope.constants()).ok()?;
        let v = sign_extend(v, &vt);
        if vt == Type::InfInt
            && shr(v, 32) != 0
            && shr(v, 32) != mask(96)
            && !matches!(i.kind, ExprKind::Unary("-", _))
        {
            return None;
        }
        Some(v & mask(32))
    }

    fn member(&self, e: &Expr, b: &Expr, m: &str) -> PResult<Type> {
        // `error.m` and enum members lowering folded above; a missing one is bodies'
        if let ExprKind::Name(n) = &b.kind {
            if (n == "error" || self.env.enums.contains_key(n)) && self.scope.lookup(n).is_none() {
                return Ok(Type::Unknown);
            }
        }
        // `t.apply().hit` / `.miss`
        if (m == "hit" || m == "miss") && is_apply_call(b) {
            return Ok(Type::Bool);
        }
        let bt = self.ty(b, None)?;
        Ok(match &bt {
            Type::Stack(elem, _) => match m {
                "size" | "lastIndex" => Type::Bit(32),
                "last" | "next" => (**elem).clone(),
                _ => {
                    return Err(Error::new(
                        e.span,
                        format!("header stacks have no member '{}'", m),
                    ))
                }
            },
            // `s.last.m` (lowering reads it as the stack's last field, parsers only)
            Type::Header(_)
                if matches!(&b.kind, ExprKind::Member(sb, l)
                    if l == "last" && matches!(self.ty(sb, None), Ok(Type::Stack(..))))
                    && self.env.field_type(&bt, m).is_none()
                    && !self
                        .env
                        .header_structs
                        .contains_key(&(bt.name(), m.to_string())) =>
            {
                return Err(Error::new(e.span, format!("no field '{}'", m)));
            }
            Type::Header(n) => match self.env.header_structs.get(&(n.clone(), m.to_string())) {
                Some(s) => Type::Struct(s.clone()),
                None => self.env.field_type(&bt, m).unwrap_or(Type::Unknown),
            },
            Type::Struct(_) | Type::Union(_) => {
                self.env.field_type(&bt, m).unwrap_or(Type::Unknown)
            }
            _ => Type::Unknown,
        })
    }

    fn ternary(
        &self,
        e: &Expr,
        c: &Expr,
        a: &Expr,
        b: &Expr,
        expect: Option<&Type>,
    ) -> PResult<Type> {
        let ct = self.ty(c, Some(&Type::Bool))?;
        if known(&ct) && ct != Type::Bool {
            return Err(Error::new(c.span, "condition of ?: must be bool"));
        }
        // as lowering: an untyped constant branch takes the other branch's type, the
        // context's only when both are untyped
        let hint = |x: &Expr| if is_const_shape(x) { None } else { expect };
        let at0 = self.ty(a, hint(a))?;
        let b_hint = Some(&at0).filter(|t| **t != Type::InfInt).or(hint(b));
        let bt0 = self.ty(b, b_hint)?;
        let (at, bt) = match (at0 == Type::InfInt, bt0 == Type::InfInt) {
            (true, false) => (self.ty(a, Some(&bt0))?, bt0),
            (true, true) if expect.is_some() => (self.ty(a, expect)?, self.ty(b, expect)?),
            _ => (at0, bt0),
        };
        if !known(&at) || !known(&bt) {
            return Ok(Type::Unknown);
        }
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
        Ok(t)
    }

    fn binary(
        &self,
        e: &Expr,
        op: &str,
        a: &Expr,
        b: &Expr,
        expect: Option<&Type>,
    ) -> PResult<Type> {
        match op {
            "&&" | "||" => {
                let at = self.ty(a, Some(&Type::Bool))?;
                let bt = self.ty(b, Some(&Type::Bool))?;
                if known(&at) && known(&bt) && (at != Type::Bool || bt != Type::Bool) {
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
                return Ok(Type::Bool);
            }
            "<<" | ">>" => {
                let bt = self.ty(b, None)?;
                let at = self.ty(a, None)?;
                if !known(&at) || !known(&bt) {
                    return Ok(Type::Unknown);
                }
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
                return Ok(at);
            }
            "++" => {
                let at = self.ty(a, None)?;
                let bt = self.ty(b, None)?;
                if !known(&at) || !known(&bt) {
                    return Ok(Type::Unknown);
                }
                return match (&at, &bt) {
                    (Type::Int(x), Type::Bit(y) | Type::Int(y)) => Ok(Type::Int(x + y)),
                    (Type::Bit(x), Type::Bit(y) | Type::Int(y)) => Ok(Type::Bit(x + y)),
                    _ => Err(Error::new(
                        e.span,
                        format!(
                            "'++' needs bit<N> operands with known widths, not {} and {}",
                            at.name(),
                            bt.name()
                        ),
                    )),
                };
            }
            _ => {}
        }
        let mut at = self.ty(a, None)?;
        let bt = self.ty(b, Some(&at).filter(|t| **t != Type::InfInt && known(t)))?;
        if at == Type::InfInt && bt != Type::InfInt && known(&bt) {
            at = self.ty(a, Some(&bt))?;
        }
        let compare = matches!(op, "==" | "!=" | "<" | ">" | "<=" | ">=");
        if !known(&at) || !known(&bt) {
            return Ok(if compare { Type::Bool } else { Type::Unknown });
        }
        let t = unify(&at, &bt).ok_or_else(|| {
            Error::new(
                e.span,
                format!(
                    "operands of '{}' have different types: {} and {}",
                    op,
                    at.name(),
                    bt.name()
                ),
            )
        })?;
        let t = match (&t, expect) {
            (Type::InfInt, Some(et)) if et.is_int_like() && !compare => et.clone(),
            _ => t,
        };
        match op {
            "==" | "!=" => Ok(Type::Bool),
            "<" | ">" | "<=" | ">=" => {
                if !t.is_int_like() {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' needs integer operands, not {}", op, t.name()),
                    ));
                }
                Ok(Type::Bool)
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
                Ok(t)
            }
            _ => Ok(Type::Unknown),
        }
    }
}

/// Whether lowering casts a value of type `from` to `to` (`lower::expr`'s `cast`).
pub fn cast_ok(from: &Type, to: &Type) -> bool {
    match (from, to) {
        (f, t) if f == t => true,
        (Type::InfInt, _) => true,
        (Type::Bool, Type::Bit(1)) | (Type::Bit(1), Type::Bool) => true,
        (Type::Bit(_) | Type::Int(_), Type::Bit(_) | Type::Int(_)) => true,
        (Type::SerEnum(_, a), Type::Bit(b)) | (Type::Bit(a), Type::SerEnum(_, b)) => a == b,
        (Type::SerEnum(..), Type::SerEnum(..)) => true,
        _ => false,
    }
}

/// Whether `e` is `x.lookahead<T>()` (a parser's; where lowering takes it, its width is
/// `lookahead_assign`'s check).
fn is_lookahead_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _, _) if matches!(&f.kind, ExprKind::Member(_, m) if m == "lookahead"))
}

/// Whether `e` is `x.apply(...)`.
fn is_apply_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call(f, _, _) if matches!(&f.kind, ExprKind::Member(_, m) if m == "apply"))
}

/// The expressions lowering tries to fold as constants first (`lower::is_const_shape`).
pub fn is_const_shape(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(..) | ExprKind::Bool(_) | ExprKind::Name(_) => true,
        ExprKind::Member(b, _) => matches!(&b.kind, ExprKind::Name(_)),
        ExprKind::Unary(_, x) | ExprKind::Cast(_, x) | ExprKind::Slice(x, _, _) => {
            is_const_shape(x)
        }
        ExprKind::Binary(_, a, b) => is_const_shape(a) && is_const_shape(b),
        ExprKind::Ternary(a, b, c) => is_const_shape(a) && is_const_shape(b) && is_const_shape(c),
        _ => false,
    }
}
