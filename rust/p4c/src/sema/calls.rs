//! Call statements in every body of the program, called or not (top-level functions and
//! actions, the actions and apply blocks of controls, parser states): the argument
//! counts of v1model's extern functions, of the methods of its extern instances and of
//! header stacks, and of parser and control invocations (`p.apply(...)`, `C.apply(...)`);
//! the argument types of `assert`/`assume`, `digest` and register reads and writes.
//! Messages and spans are lowering's (`lower::action`, `lower::control`, `lower::parser`).
//!
//! A type this pass cannot know (`Type::Unknown`) draws no error, and a name a local
//! declaration hides is not taken for the extern or block it would otherwise be.

use super::exprs::{function_returns, type_of, Scope};
use super::types::{types_compatible, Type, TypeEnv};
use crate::ast::*;
use crate::diag::{Error, PResult, Sink, Span};
use std::collections::{HashMap, HashSet};

/// What a name in a body denotes, for the calls this pass checks.
#[derive(Clone, Debug)]
enum Named {
    /// An instance of the extern or parser/control type of this name, with its type
    /// arguments and its name as lowering reports it (`Control.name` inside a control).
    Instance(String, Vec<TypeRef>, String),
    /// A parser's value set (no methods).
    ValueSet,
    /// Anything else (a parameter, variable, constant, table).
    Other,
}

/// Checks the call statements of every body in `prog`.
pub fn check(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    let functions = function_returns(prog, env);
    let fn_names = prog.function_names();
    let global_actions: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Action(a) => Some(a.name.as_str()),
            _ => None,
        })
        .collect();
    let control_actions = prog.control_action_names();
    // names declared more than once among functions, actions and extern functions are
    // overloads (by argument count), and a control's action may share a top-level
    // callable's name: lowering picks one by its arguments, so their arguments are left to it
    let count = prog.callable_name_counts();
    let single = |n: &str| count.get(n) == Some(&1) && !control_actions.contains(n);
    let callables: HashMap<&str, &[Param]> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Function { name, params, .. } | Decl::Action(Action { name, params, .. })
                if single(name) =>
            {
                Some((name.as_str(), params.as_slice()))
            }
            _ => None,
        })
        .collect();
    let mut top: HashMap<String, Named> = HashMap::new();
    for d in &prog.decls {
        match d {
            Decl::Instance(i) if i.name != "main" => {
                top.insert(i.name.clone(), instance(i, None));
            }
            Decl::Const { name, .. } => {
                top.insert(name.clone(), Named::Other);
            }
            _ => {}
        }
    }
    let mut w = Walker {
        prog,
        env,
        functions: &functions,
        fn_names: &fn_names,
        global_actions: &global_actions,
        control_actions: &control_actions,
        callables: &callables,
        local_actions: None,
        owner: None,
        local_params: HashMap::new(),
        scope: Scope::new(),
        names: vec![top],
        sink,
    };
    for d in &prog.decls {
        match d {
            Decl::Function { params, body, .. } => w.body(&[], &[], &[], params, body),
            Decl::Action(a) => w.body(&[], &[], &[], &a.params, &a.body),
            Decl::Control {
                name,
                params,
                ctor_params,
                locals,
                apply,
                ..
            } => {
                w.owner = Some(name.clone());
                w.local_actions = Some(
                    locals
                        .iter()
                        .filter_map(|l| match l {
                            Local::Action(a) => Some(a.name.clone()),
                            _ => None,
                        })
                        .collect(),
                );
                w.local_params = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::Action(a) => Some((a.name.as_str(), a.params.as_slice())),
                        _ => None,
                    })
                    .collect();
                for l in locals {
                    match l {
                        Local::Action(a) => w.body(params, ctor_params, locals, &a.params, &a.body),
                        Local::Table(t) => w.table(params, ctor_params, locals, t),
                        _ => {}
                    }
                }
                w.body(params, ctor_params, locals, &[], apply);
                w.local_actions = None;
                w.local_params.clear();
            }
            Decl::Parser {
                name,
                params,
                ctor_params,
                locals,
                states,
                ..
            } => {
                w.owner = Some(name.clone());
                for st in states {
                    w.body(params, ctor_params, locals, &[], &st.stmts);
                }
            }
            _ => {}
        }
        w.owner = None;
    }
}

/// What an instance declaration makes its name denote.
fn instance(i: &Instance, owner: Option<&str>) -> Named {
    let full = match owner {
        Some(o) => format!("{}.{}", o, i.name),
        None => i.name.clone(),
    };
    match &i.ty {
        TypeRef::Named(n, targs, _) => Named::Instance(n.clone(), targs.clone(), full),
        _ => Named::Other,
    }
}

struct Walker<'p, 's> {
    prog: &'p Program,
    /// The parameters of the top-level functions and actions that are no overloads.
    callables: &'p HashMap<&'p str, &'p [Param]>,
    /// The parameters of the actions of the control being checked.
    local_params: HashMap<&'p str, &'p [Param]>,
    env: &'p TypeEnv,
    functions: &'p HashMap<String, Type>,
    /// Names of the top-level functions.
    fn_names: &'p HashSet<&'p str>,
    /// Names of the top-level actions.
    global_actions: &'p HashSet<&'p str>,
    /// Names of the actions declared inside any control.
    control_actions: &'p HashSet<&'p str>,
    /// The parser or control being checked (its instances' names are qualified by it).
    owner: Option<String>,
    /// The actions of the control being checked (`None` outside controls).
    local_actions: Option<HashSet<String>>,
    /// For `exprs::type_of`.
    scope: Scope,
    /// What names denote, innermost frame last (the first frame is the top level).
    names: Vec<HashMap<String, Named>>,
    sink: &'s mut Sink,
}

impl<'p> Walker<'p, '_> {
    fn resolve(&self, t: &TypeRef) -> Type {
        self.env.resolve(t).unwrap_or(Type::Unknown)
    }

    fn declare_value(&mut self, name: &str, t: Type) {
        self.scope.value(name, t);
        self.declare(name, Named::Other);
    }

    fn declare(&mut self, name: &str, n: Named) {
        if let Some(f) = self.names.last_mut() {
            f.insert(name.to_string(), n);
        }
    }

    /// A body in the scope of its parser or control (`params`, `ctor_params`, `locals`;
    /// all empty at the top level), with its own parameters `own`.
    fn body(
        &mut self,
        params: &[Param],
        ctor_params: &[Param],
        locals: &[Local],
        own: &[Param],
        body: &[Stmt],
    ) {
        self.enter(params, ctor_params, locals);
        self.names.push(HashMap::new());
        for p in own {
            let t = self.resolve(&p.ty);
            self.declare_value(&p.name, t);
        }
        self.block(body);
        self.names.truncate(1);
    }

    /// The arguments a table binds to its actions' directional parameters (its actions
    /// list, default action and entries).
    fn table(&mut self, params: &[Param], ctor_params: &[Param], locals: &[Local], t: &Table) {
        self.enter(params, ctor_params, locals);
        for r in t.action_refs() {
            let name = r.name.trim_start_matches('.');
            let found = self
                .local_params
                .get(name)
                .or_else(|| self.callables.get(name));
            if let Some(ps) = found.copied() {
                let ndir = ps.iter().filter(|p| p.dir != Dir::None).count();
                let bound = &r.args[..ndir.min(r.args.len())];
                if let Err(e) = self.arg_types(ps, bound) {
                    self.sink.push(e);
                }
            }
        }
        self.names.truncate(1);
    }

    /// Enters the scope of a parser's or control's bodies (all empty at the top level).
    fn enter(&mut self, params: &[Param], ctor_params: &[Param], locals: &[Local]) {
        self.scope = Scope::new();
        self.names.truncate(1);
        self.names.push(HashMap::new());
        for p in params.iter().chain(ctor_params) {
            let t = self.resolve(&p.ty);
            self.declare_value(&p.name, t);
        }
        for l in locals {
            match l {
                Local::Var(st) => match &st.kind {
                    StmtKind::Var(_, ty, name, _) => {
                        let t = self.resolve(ty);
                        self.declare_value(name, t);
                    }
                    StmtKind::Const(ty, name, init) => {
                        let t = self.resolve(ty);
                        self.scope.constant(self.env, name, t, init);
                        self.declare(name, Named::Other);
                    }
                    StmtKind::Inst(i) => {
                        self.scope.opaque(&i.name);
                        self.declare(&i.name, instance(i, self.owner.as_deref()));
                    }
                    _ => {}
                },
                Local::Inst(i) => {
                    self.scope.opaque(&i.name);
                    self.declare(&i.name, instance(i, self.owner.as_deref()));
                }
                Local::Table(t) => {
                    self.scope.opaque(&t.name);
                    self.declare(&t.name, Named::Other);
                }
                Local::ValueSet { name, .. } => {
                    self.scope.opaque(name);
                    self.declare(name, Named::ValueSet);
                }
                Local::Action(_) => {}
            }
        }
    }

    /// The argument types of a call of an action or function with parameters `params`:
    /// an `out`/`inout` argument, or one of a header, struct, union, tuple or stack type,
    /// is bound as a location of the parameter's type, any other as a value of its type
    /// (lowering's `bind_arg`).
    fn arg_types(&self, params: &[Param], args: &[Arg]) -> PResult<()> {
        for (p, a) in params.iter().zip(args) {
            let t = self.resolve(&p.ty);
            let composite = matches!(
                t,
                Type::Header(_)
                    | Type::Struct(_)
                    | Type::Union(_)
                    | Type::Tuple(_)
                    | Type::Stack(..)
            );
            if matches!(p.dir, Dir::In | Dir::None) && !composite {
                // a value, typed in the parameter's type (an untyped constant too wide
                // for it is refused here), as lowering binds it (`bind_arg`)
                let at = type_of(self.env, self.functions, &self.scope, &a.value, Some(&t))?;
                if !types_compatible(&t, &at) {
                    return Err(Error::new(
                        a.value.span,
                        format!(
                            "cannot assign a value of type {} to a location of type {}",
                            at.name(),
                            t.name()
                        ),
                    ));
                }
                continue;
            }
            let at = self.ty(&a.value, Some(&t));
            if !types_compatible(&t, &at) {
                return Err(Error::new(
                    a.value.span,
                    format!(
                        "argument type {} does not match parameter '{}' of type {}",
                        at.name(),
                        p.name,
                        t.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The parameters of the action or function a call of `n` runs, where certain (as
    /// lowering resolves it: the control's own actions first).
    fn callee_params(&self, n: &str) -> Option<&'p [Param]> {
        if self.names[1..].iter().any(|f| f.contains_key(n)) {
            return None;
        }
        if let Some(ps) = self.local_params.get(n) {
            return Some(ps);
        }
        if self.local_actions.is_none() && self.control_actions.contains(n) {
            return None;
        }
        self.callables.get(n).copied()
    }

    /// The calls of actions and functions inside `e` (and `e` itself).
    fn expr_calls(&self, e: &Expr) -> PResult<()> {
        let mut r = Ok(());
        visit_calls(e, &mut |f, args| {
            if r.is_ok() {
                if let ExprKind::Name(n) = &f.kind {
                    if let Some(ps) = self.callee_params(n) {
                        r = self.arg_types(ps, args);
                    }
                }
            }
        });
        r
    }

    fn block(&mut self, stmts: &[Stmt]) {
        let saved = self.scope.clone();
        self.names.push(HashMap::new());
        for s in stmts {
            if let Err(e) = self.stmt(s) {
                self.sink.push(e);
            }
        }
        self.names.pop();
        self.scope = saved;
    }

    fn nested(&mut self, s: &Stmt) {
        self.block(std::slice::from_ref(s));
    }

    fn stmt(&mut self, s: &Stmt) -> PResult<()> {
        match &s.kind {
            StmtKind::Call(c) => {
                self.call(c)?;
                self.expr_calls(c)?;
            }
            StmtKind::Assign(l, r) => {
                self.expr_calls(l)?;
                self.expr_calls(r)?;
            }
            StmtKind::Return(Some(x)) => self.expr_calls(x)?,
            StmtKind::If(c, a, b) => {
                self.expr_calls(c)?;
                self.nested(a);
                if let Some(b) = b {
                    self.nested(b);
                }
            }
            StmtKind::Block(v) => self.block(v),
            StmtKind::Switch(_, cases) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        self.nested(b);
                    }
                }
            }
            StmtKind::Var(_, ty, name, init) => {
                let r = init.as_ref().map_or(Ok(()), |x| self.expr_calls(x));
                let t = self.resolve(ty);
                self.declare_value(name, t);
                r?;
            }
            StmtKind::Const(ty, name, init) => {
                let t = self.resolve(ty);
                self.scope.constant(self.env, name, t, init);
                self.declare(name, Named::Other);
            }
            StmtKind::Inst(i) => {
                self.scope.opaque(&i.name);
                self.declare(&i.name, instance(i, self.owner.as_deref()));
            }
            StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty => {}
        }
        Ok(())
    }

    fn lookup(&self, n: &str) -> Option<&Named> {
        self.names.iter().rev().find_map(|f| f.get(n))
    }

    fn ty(&self, e: &Expr, expect: Option<&Type>) -> Type {
        type_of(self.env, self.functions, &self.scope, e, expect).unwrap_or(Type::Unknown)
    }

    /// A call statement `c`.
    fn call(&mut self, c: &Expr) -> PResult<()> {
        let ExprKind::Call(f, targs, args) = &c.kind else {
            return Ok(());
        };
        match &f.kind {
            ExprKind::Member(b, m) => self.method(c.span, f.span, b, m, args),
            ExprKind::Name(n) if self.is_extern_fn(n) => self.extern_fn(c.span, n, targs, args),
            _ => Ok(()),
        }
    }

    /// Whether a call of `n` is one of v1model's extern functions as lowering takes
    /// them: no local, action or function of that name (inside a control its own
    /// actions; outside, any control's, as the body may be inlined into one).
    fn is_extern_fn(&self, n: &str) -> bool {
        let control_action = match &self.local_actions {
            Some(l) => l.contains(n),
            None => self.control_actions.contains(n),
        };
        self.names.len() > 1
            && self.names[1..].iter().all(|f| !f.contains_key(n))
            && !control_action
            && !self.global_actions.contains(n)
            && !self.fn_names.contains(n)
    }

    /// `b.m(args)` (`b.m` spanning `fspan`): a header's and a header stack's methods, an extern instance's methods, a parser's
    /// or control's `apply`.
    fn method(&mut self, span: Span, fspan: Span, b: &Expr, m: &str, args: &[Arg]) -> PResult<()> {
        if let ExprKind::Name(n) = &b.kind {
            match self.lookup(n).cloned() {
                Some(Named::Instance(kind, targs, full)) => {
                    return self.instance_method(span, &full, &kind, &targs, m, args)
                }
                Some(Named::ValueSet) => {
                    return Err(Error::new(
                        fspan,
                        format!("unknown method '{}' for value_set", m),
                    ))
                }
                Some(Named::Other) => {}
                // `C.apply(...)` of a control or parser type, invoked directly
                None if m == "apply" => return self.block_apply(span, n, args),
                None => {}
            }
        }
        let t = self.ty(b, None);
        let known = match &t {
            // what `x.apply()` can apply is sema::bodies' check
            Type::Unknown | Type::Extern(_) => return Ok(()),
            _ if m == "apply" => return Ok(()),
            _ if m == "isValid" => true,
            Type::Header(_) => m == "setValid" || m == "setInvalid",
            Type::Stack(..) => m == "push_front" || m == "pop_front",
            _ => false,
        };
        if !known {
            return Err(Error::new(
                fspan,
                format!("unknown method '{}' for {}", m, t.name()),
            ));
        }
        if let Type::Stack(..) = t {
            return arity(span, &format!("'{}'", m), 1, args.len());
        }
        Ok(())
    }

    /// `inst.apply(args)` of a parser or control: as many arguments as its parameters.
    fn block_apply(&self, span: Span, kind: &str, args: &[Arg]) -> PResult<()> {
        match super::structure::block_decl(self.prog, kind) {
            Some(Decl::Control { params, .. }) => {
                arity(
                    span,
                    &format!("control '{}'", kind),
                    params.len(),
                    args.len(),
                )?;
                self.arg_types(params, args)
            }
            Some(Decl::Parser { params, .. }) => {
                arity(
                    span,
                    &format!("parser '{}'", kind),
                    params.len(),
                    args.len(),
                )?;
                self.arg_types(params, args)
            }
            _ => Ok(()),
        }
    }

    /// `n.m(args)` of an instance `n` of `kind<targs>`.
    fn instance_method(
        &mut self,
        span: Span,
        n: &str,
        kind: &str,
        targs: &[TypeRef],
        m: &str,
        args: &[Arg],
    ) -> PResult<()> {
        let block = matches!(
            super::structure::block_decl(self.prog, kind),
            Some(Decl::Control { .. } | Decl::Parser { .. })
        );
        // a parser or control has only `apply`, an extern the methods it declares
        let declared = match self.env.externs.get(kind) {
            // what `x.apply()` can apply is sema::bodies' check
            _ if m == "apply" => true,
            _ if block => false,
            Some(methods) => m != kind && methods.iter().any(|x| x.name == m),
            None => true,
        };
        if !declared {
            return Err(Error::new(
                span,
                format!("{} has no method '{}' usable here", kind, m),
            ));
        }
        let count = match (kind, m) {
            (_, "apply") => return self.block_apply(span, kind, args),
            ("counter", "count") => 1,
            ("direct_counter", "count") => 0,
            ("meter", "execute_meter") => 2,
            ("direct_meter", "read") => 1,
            ("register", "read") | ("register", "write") => 2,
            _ => return Ok(()),
        };
        arity(span, &format!("'{}'", m), count, args.len())?;
        match (kind, m) {
            ("meter", _) => self.field_dst(&args[1].value)?,
            ("direct_meter", _) | ("register", "read") => self.field_dst(&args[0].value)?,
            _ => {}
        }
        if kind != "register" {
            return Ok(());
        }
        // the register's element width (lowering's BMv2 register array bitwidth)
        let bw = match targs.first().map(|t| self.resolve(t)) {
            Some(t) => match t.width() {
                Some(w) => w,
                None => return Ok(()),
            },
            None => return Ok(()),
        };
        if m == "read" {
            let dt = self.ty(&args[0].value, None);
            let field = matches!(
                dt,
                Type::Bit(_)
                    | Type::Int(_)
                    | Type::Bool
                    | Type::SerEnum(..)
                    | Type::Error
                    | Type::Enum(_)
                    | Type::Varbit(_)
            );
            if field && dt.width() != Some(bw) {
                return Err(Error::new(
                    args[0].value.span,
                    format!(
                        "register '{}' holds bit<{}> values but the destination is {}",
                        n,
                        bw,
                        dt.name()
                    ),
                ));
            }
        } else {
            let xt = self.ty(&args[1].value, Some(&Type::Bit(bw)));
            let scalar = matches!(
                xt,
                Type::Bit(_)
                    | Type::Int(_)
                    | Type::Bool
                    | Type::SerEnum(..)
                    | Type::Error
                    | Type::Enum(_)
            );
            if scalar && xt.width() != Some(bw) {
                return Err(Error::new(
                    args[1].value.span,
                    format!(
                        "register '{}' holds bit<{}> values, not {}",
                        n,
                        bw,
                        xt.name()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// A call of v1model's extern function `n`.
    fn extern_fn(&mut self, span: Span, n: &str, targs: &[TypeRef], args: &[Arg]) -> PResult<()> {
        let count = match n {
            "mark_to_drop" | "truncate" | "assert" | "assume" => 1,
            "random" => 3,
            "hash" => 5,
            "digest" | "clone" => 2,
            "clone3" | "clone_preserving_field_list" => 3,
            "resubmit_preserving_field_list" | "recirculate_preserving_field_list" => 1,
            _ => return Ok(()),
        };
        arity(span, &format!("'{}'", n), count, args.len())?;
        match n {
            "random" | "hash" => self.field_dst(&args[0].value)?,
            "assert" | "assume" => {
                let t = self.ty(&args[0].value, Some(&Type::Bool));
                if t != Type::Bool && t != Type::Unknown {
                    return Err(Error::new(
                        args[0].value.span,
                        format!("{} needs a bool", n),
                    ));
                }
            }
            "digest" => self.digest(span, targs, &args[1].value)?,
            _ => {}
        }
        Ok(())
    }

    /// A destination argument lowering writes as one field: no header, struct, union,
    /// stack or tuple.
    fn field_dst(&self, e: &Expr) -> PResult<()> {
        let t = self.ty(e, None);
        if matches!(
            t,
            Type::Header(_) | Type::Struct(_) | Type::Union(_) | Type::Stack(..) | Type::Tuple(_)
        ) {
            return Err(Error::new(
                e.span,
                format!("expected a field, found {}", t.name()),
            ));
        }
        Ok(())
    }

    /// `digest<T>(receiver, data)`: `T` (or the type of `data`) is a struct with as many
    /// fields as `data` has leaves.
    fn digest(&self, span: Span, targs: &[TypeRef], data: &Expr) -> PResult<()> {
        let tname = match targs.first() {
            Some(t) => match self.resolve(t) {
                Type::Struct(s) => s,
                Type::Unknown => return Ok(()),
                t => {
                    return Err(Error::new(
                        span,
                        format!("digest type must be a struct, not {}", t.name()),
                    ))
                }
            },
            None => match self.ty(data, None) {
                Type::Struct(s) if !matches!(data.kind, ExprKind::List(_)) => s,
                Type::Unknown if !matches!(data.kind, ExprKind::List(_)) => return Ok(()),
                _ => {
                    return Err(Error::new(
                        span,
                        "digest needs a type argument, e.g. digest<my_digest_t>(1, {...})",
                    ))
                }
            },
        };
        let Some(def) = self.env.composite(&tname) else {
            return Ok(());
        };
        if let Some(n) = self.leaves(data) {
            if n != def.fields.len() {
                return Err(Error::new(
                    data.span,
                    format!(
                        "digest type {} has {} fields, the data has {}",
                        tname,
                        def.fields.len(),
                        n
                    ),
                ));
            }
        }
        Ok(())
    }

    /// How many fields lowering flattens `e` into for a field list (lists, structs and
    /// headers by their leaves), where certain.
    fn leaves(&self, e: &Expr) -> Option<usize> {
        if let ExprKind::List(items) = &e.kind {
            return items.iter().map(|(_, x)| self.leaves(x)).sum();
        }
        match self.ty(e, None) {
            Type::Struct(s) => self.env.struct_leaves(&s).map(|l| l.len()),
            Type::Header(h) => self.env.composite(&h).map(|d| d.fields.len()),
            Type::Bit(_) | Type::Int(_) | Type::Bool | Type::SerEnum(..) => Some(1),
            _ => None,
        }
    }
}

/// Lowering's arity error: "SUBJECT expects N argument(s), got M".
fn arity(span: Span, subject: &str, expected: usize, got: usize) -> PResult<()> {
    if expected == got {
        return Ok(());
    }
    Err(Error::new(
        span,
        format!("{} expects {} argument(s), got {}", subject, expected, got),
    ))
}

/// Calls `f(callee, args)` for every call inside `e`, `e` included.
fn visit_calls(e: &Expr, f: &mut dyn FnMut(&Expr, &[Arg])) {
    match &e.kind {
        ExprKind::Call(callee, _, args) => {
            f(callee, args);
            visit_calls(callee, f);
            for a in args {
                visit_calls(&a.value, f);
            }
        }
        ExprKind::Member(b, _) | ExprKind::Unary(_, b) | ExprKind::Cast(_, b) => visit_calls(b, f),
        ExprKind::Index(a, b)
        | ExprKind::Binary(_, a, b)
        | ExprKind::Mask(a, b)
        | ExprKind::Range(a, b) => {
            visit_calls(a, f);
            visit_calls(b, f);
        }
        ExprKind::Slice(a, b, c) | ExprKind::Ternary(a, b, c) => {
            visit_calls(a, f);
            visit_calls(b, f);
            visit_calls(c, f);
        }
        ExprKind::List(items) => {
            for (_, x) in items {
                visit_calls(x, f);
            }
        }
        _ => {}
    }
}
