//! Names and types in every body of the program, used or not (p4c checks them all;
//! lowering only sees what `main` reaches): top-level functions and actions; in each
//! parser and control, in its scope (parameters, constructor parameters, locals), its
//! actions, parser states (statements and `select` keys) and apply block.
//!
//! Calls of functions and actions have as many arguments as parameters.
//!
//! An expression's type is worked out only as far as it is certain; anything else is
//! `Type::Unknown` and draws no error, so this pass never refuses a program lowering
//! would accept. Each statement reports its first error (as lowering does), and the
//! messages are lowering's own.

use super::types::{unify, Type, TypeEnv};
use crate::ast::*;
use crate::diag::{Error, PResult, Sink, Span};
use std::collections::{HashMap, HashSet};

/// Checks the body of every function and action in `prog`.
pub fn check(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    // what a bare name in an expression can be besides the body's own scope (as
    // lowering binds them): constants (also one whose initializer sema::types refused:
    // no follow-on error) and the top-level instances other than `main`
    let mut values: HashSet<&str> = env.consts.keys().map(|k| k.as_str()).collect();
    for d in &prog.decls {
        match d {
            Decl::Instance(i) if i.name != "main" => {
                values.insert(i.name.as_str());
            }
            Decl::Const { name, .. } => {
                values.insert(name.as_str());
            }
            _ => {}
        }
    }
    let functions: HashMap<&str, (&TypeRef, usize)> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Function {
                name, ret, params, ..
            } => Some((name.as_str(), (ret, params.len()))),
            _ => None,
        })
        .collect();
    let global_actions: HashMap<&str, usize> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Action(a) => Some((a.name.as_str(), a.params.len())),
            _ => None,
        })
        .collect();
    // names declared more than once among functions, actions and extern functions are
    // overloads (by argument count): lowering picks one by its arguments
    let mut callables: HashMap<&str, usize> = HashMap::new();
    for d in &prog.decls {
        if let Decl::Function { name, .. } | Decl::Action(Action { name, .. }) = d {
            *callables.entry(name.as_str()).or_default() += 1;
        }
        if let Decl::ExternFn(m) = d {
            *callables.entry(m.name.as_str()).or_default() += 1;
        }
    }
    let mut overloaded: HashSet<&str> = callables
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(name, _)| *name)
        .collect();
    // a control's action named like a top-level function, action or extern function
    // (`action hash() { hash(...); }`): also resolved by lowering
    for d in &prog.decls {
        if let Decl::Control { locals, .. } = d {
            for l in locals {
                if let Local::Action(a) = l {
                    if callables.contains_key(a.name.as_str()) {
                        overloaded.insert(a.name.as_str());
                    }
                }
            }
        }
    }
    let control_actions = prog.control_action_names();
    // the extern functions by name, and whether one of that name returns a value
    let mut extern_fns: HashMap<&str, bool> = HashMap::new();
    for d in &prog.decls {
        if let Decl::ExternFn(m) = d {
            let value = !matches!(m.ret, None | Some(TypeRef::Void));
            *extern_fns.entry(m.name.as_str()).or_default() |= value;
        }
    }
    // controls and parsers by name (as lowering's find_decl picks them), and the
    // top-level instances of controls: what `x.apply(...)` can apply besides a table
    let control_types: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| d.name())
        .filter(|n| {
            matches!(
                super::structure::block_decl(prog, n),
                Some(Decl::Control { .. })
            )
        })
        .collect();
    let control_names: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Control { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let block_types: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Control { name, .. } | Decl::Parser { name, .. } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    let top_controls: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Instance(i) if instance_of(i, &control_types) => Some(i.name.as_str()),
            _ => None,
        })
        .collect();
    let top_instances: HashSet<&str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Instance(i) if i.name != "main" => {
                matches!(env.resolve(&i.ty), Ok(Type::Extern(_))).then_some(i.name.as_str())
            }
            _ => None,
        })
        .collect();
    let mut w = Walker {
        control_types: &control_types,
        block_types: &block_types,
        top_controls: &top_controls,
        top_instances: &top_instances,
        appliable: HashSet::new(),
        stmt_call: None,
        env,
        values: &values,
        functions: &functions,
        global_actions: &global_actions,
        control_actions: &control_actions,
        extern_fns: &extern_fns,
        overloaded: &overloaded,
        local_actions: HashMap::new(),
        tables: HashMap::new(),
        scopes: vec![],
        in_apply: false,
        in_control: false,
        sink,
    };
    for d in &prog.decls {
        match d {
            Decl::Function { params, body, .. } => w.body(&[], params, body),
            Decl::Action(a) => w.body(&[], &a.params, &a.body),
            Decl::Control {
                params,
                ctor_params,
                locals,
                apply,
                ..
            } => {
                let scope = w.control_scope(params, ctor_params, locals);
                w.appliable = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::Table(t) => Some(t.name.clone()),
                        Local::Inst(i) if instance_of(i, &control_types) => Some(i.name.clone()),
                        Local::Var(Stmt {
                            kind: StmtKind::Inst(i),
                            ..
                        }) if instance_of(i, &control_types) => Some(i.name.clone()),
                        _ => None,
                    })
                    // a constructor parameter of a control type (declared with or
                    // without a body) takes an instance of a control
                    .chain(ctor_params.iter().filter_map(|p| match &p.ty {
                        TypeRef::Named(n, _, _) if control_names.contains(n.as_str()) => {
                            Some(p.name.clone())
                        }
                        _ => None,
                    }))
                    .collect();
                w.tables = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::Table(t) => Some((t.name.clone(), table_action_names(t))),
                        _ => None,
                    })
                    .collect();
                w.in_control = true;
                w.local_actions = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::Action(a) => Some((a.name.clone(), a.params.len())),
                        _ => None,
                    })
                    .collect();
                for l in locals {
                    match l {
                        Local::Action(a) => w.body(&scope, &a.params, &a.body),
                        Local::Table(t) => w.table(&scope, t),
                        _ => {}
                    }
                }
                w.in_apply = true;
                w.body(&scope, &[], apply);
                w.in_apply = false;
                w.in_control = false;
                w.appliable.clear();
                w.local_actions.clear();
                w.tables.clear();
            }
            Decl::Parser {
                params,
                ctor_params,
                locals,
                states,
                ..
            } => {
                let scope = w.control_scope(params, ctor_params, locals);
                let value_sets: HashSet<&str> = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::ValueSet { name, .. } => Some(name.as_str()),
                        _ => None,
                    })
                    .collect();
                for st in states {
                    w.state(&scope, &value_sets, st);
                }
            }
            _ => {}
        }
    }
}

struct Walker<'p, 's> {
    env: &'p TypeEnv,
    /// Names of the controls (see `check`).
    control_types: &'p HashSet<&'p str>,
    /// Names of the controls and parsers with or without a body (`C.apply(...)` invokes
    /// one directly).
    block_types: &'p HashSet<&'p str>,
    /// Top-level instances of controls.
    top_controls: &'p HashSet<&'p str>,
    /// Top-level instances of externs (no values).
    top_instances: &'p HashSet<&'p str>,
    /// What the control being checked declares that its apply block can apply: its
    /// tables and its instances of controls.
    appliable: HashSet<String>,
    /// The span of the call a call statement makes (`t.apply();`, `C.apply(...);`).
    stmt_call: Option<Span>,
    /// The top-level names a bare name in an expression can denote (see `check`).
    values: &'p HashSet<&'p str>,
    /// Return types and parameter counts of the top-level functions.
    functions: &'p HashMap<&'p str, (&'p TypeRef, usize)>,
    /// Parameter counts of the top-level actions.
    global_actions: &'p HashMap<&'p str, usize>,
    /// Overloaded names (see `check`): their calls are left to lowering, which resolves
    /// them.
    overloaded: &'p HashSet<&'p str>,
    /// Names of the actions declared inside any control.
    control_actions: &'p HashSet<&'p str>,
    /// The declared extern functions, and whether one of that name returns a value.
    extern_fns: &'p HashMap<&'p str, bool>,
    /// Parameter counts of the actions of the control being checked (empty outside
    /// controls: a top-level body's calls of actions are checked only against global ones
    /// when no control declares an action of that name, as lowering looks in the calling
    /// control first).
    local_actions: HashMap<String, usize>,
    /// The tables of the control being checked, with the names of the actions each can
    /// run (see `table_action_names`).
    tables: HashMap<String, HashSet<String>>,
    scopes: Vec<HashMap<String, Type>>,
    /// Checking a body inside a control (its actions, tables and apply block).
    in_control: bool,
    /// Checking a control's apply block (where `switch (t.apply().action_run)` is
    /// lowered; inside actions lowering refuses it as a placement).
    in_apply: bool,
    sink: &'s mut Sink,
}

impl Walker<'_, '_> {
    fn resolve(&self, t: &TypeRef) -> Type {
        self.env.resolve(t).unwrap_or(Type::Unknown)
    }

    fn params(&self, params: &[Param]) -> Vec<(String, Type)> {
        params
            .iter()
            .map(|p| (p.name.clone(), self.resolve(&p.ty)))
            .collect()
    }

    /// Everything the bodies of a control or parser can name: its parameters,
    /// constructor parameters and locals (variables, constants, instances, tables, value
    /// sets, actions).
    fn control_scope(
        &self,
        params: &[Param],
        ctor_params: &[Param],
        locals: &[Local],
    ) -> Vec<(String, Type)> {
        let mut scope = self.params(params);
        scope.extend(self.params(ctor_params));
        for l in locals {
            match l {
                Local::Var(s) => match &s.kind {
                    StmtKind::Var(_, ty, name, _) | StmtKind::Const(ty, name, _) => {
                        scope.push((name.clone(), self.resolve(ty)));
                    }
                    StmtKind::Inst(i) => scope.push((i.name.clone(), self.instance_type(i))),
                    _ => {}
                },
                Local::Inst(i) => scope.push((i.name.clone(), self.instance_type(i))),
                // an action's name is no value (lowering binds none); calls of it are
                // resolved through `local_actions`
                Local::Action(_) => {}
                Local::Table(t) => scope.push((t.name.clone(), Type::Extern("table".into()))),
                Local::ValueSet { name, .. } => {
                    scope.push((name.clone(), Type::Extern("value_set".into())))
                }
            }
        }
        scope
    }

    fn body(&mut self, outer: &[(String, Type)], params: &[Param], body: &[Stmt]) {
        let mut scope: HashMap<String, Type> = outer.iter().cloned().collect();
        scope.extend(self.params(params));
        self.scopes = vec![scope];
        self.block(body);
        self.scopes.clear();
    }

    /// A table's expressions: keys, arguments of its actions and default action, entries.
    fn table(&mut self, outer: &[(String, Type)], t: &Table) {
        self.scopes = vec![outer.iter().cloned().collect()];
        let args = t
            .action_refs()
            .flat_map(|r| r.args.iter().map(|a| &a.value));
        let keys = t.keys.iter().map(|k| &k.expr);
        let entry_keys = t
            .entries
            .iter()
            .flat_map(|e| e.0.iter().flat_map(|en| en.keys.iter()));
        for x in keys.chain(args).chain(entry_keys) {
            if let Err(e) = self.ty(x) {
                self.sink.push(e);
            }
        }
        self.scopes.clear();
    }

    /// A parser state: its statements, then the keys of its `select`; each case has one
    /// value per key, or is `default`/`_` or the name of one of the parser's value sets
    /// (`value_sets`) not hidden by a local of the state.
    fn state(&mut self, outer: &[(String, Type)], value_sets: &HashSet<&str>, st: &ParserState) {
        self.scopes = vec![outer.iter().cloned().collect(), HashMap::new()];
        for s in &st.stmts {
            if let Err(e) = self.stmt(s) {
                self.sink.push(e);
            }
        }
        if let Some(Transition::Select(keys, cases, _)) = &st.transition {
            // a case can name a value set
            let r = keys
                .iter()
                .try_for_each(|k| self.ty(k).map(|_| ()))
                .and_then(|_| {
                    cases
                        .iter()
                        .flat_map(|c| c.keys.iter())
                        .try_for_each(|k| self.base_ty(k).map(|_| ()))
                });
            if let Err(e) = r {
                self.sink.push(e);
            }
            for c in cases {
                let whole = c.keys.len() == 1
                    && match &c.keys[0].kind {
                        ExprKind::Default => true,
                        ExprKind::Name(n) => {
                            value_sets.contains(n.as_str())
                                && !self.scopes.last().is_some_and(|s| s.contains_key(n))
                        }
                        _ => false,
                    };
                if !whole && c.keys.len() != keys.len() {
                    self.sink.err(
                        c.span,
                        format!(
                            "select has {} key(s) but this case has {} value(s)",
                            keys.len(),
                            c.keys.len()
                        ),
                    );
                }
            }
        }
        self.scopes.clear();
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.scopes.push(HashMap::new());
        for s in stmts {
            if let Err(e) = self.stmt(s) {
                self.sink.push(e);
            }
        }
        self.scopes.pop();
    }

    fn bind(&mut self, name: &str, t: Type) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), t);
        }
    }

    fn stmt(&mut self, s: &Stmt) -> PResult<()> {
        match &s.kind {
            StmtKind::Assign(l, r) => {
                // a target is no value: what it may be is sema::directions' check
                self.base_ty(l)?;
                self.ty(r)?;
            }
            StmtKind::Call(c) => {
                self.stmt_call = Some(c.span);
                let r = self.ty(c);
                self.stmt_call = None;
                r?;
            }
            StmtKind::If(c, a, b) => {
                // its type (bool, whatever it is instead) is sema::exprs's check
                self.ty(c)?;
                self.nested(a);
                if let Some(b) = b {
                    self.nested(b);
                }
            }
            StmtKind::Block(v) => self.block(v),
            StmtKind::Switch(e, cases) => {
                if let ExprKind::Member(call, m) = &e.kind {
                    if self.in_apply && m == "action_run" && !is_name_apply(call) {
                        return Err(Error::new(e.span, "expected a table application"));
                    }
                }
                self.ty(e)?;
                self.switch_labels(e, cases);
                for c in cases {
                    if let Some(b) = &c.body {
                        self.nested(b);
                    }
                }
            }
            // the name is declared even when its initializer has an error
            StmtKind::Var(_, ty, name, init) => {
                let r = init.as_ref().map(|x| self.ty(x)).transpose();
                let t = self.resolve(ty);
                self.bind(name, t);
                r?;
            }
            StmtKind::Const(ty, name, init) => {
                let r = self.ty(init);
                let t = self.resolve(ty);
                self.bind(name, t);
                r?;
            }
            StmtKind::Return(Some(e)) => {
                self.ty(e)?;
            }
            StmtKind::Inst(i) => {
                let t = self.instance_type(i);
                self.bind(&i.name, t);
            }
            StmtKind::Return(None) | StmtKind::Exit | StmtKind::Empty => {}
        }
        Ok(())
    }

    /// In `switch (t.apply().action_run)` each label that leads to a body is `default`
    /// or the name of an action table `t` can run (as lowering maps them).
    fn switch_labels(&mut self, e: &Expr, cases: &[SwitchCase]) {
        let ExprKind::Member(call, m) = &e.kind else {
            return;
        };
        let ExprKind::Call(f, _, _) = &call.kind else {
            return;
        };
        let ExprKind::Member(t, apply) = &f.kind else {
            return;
        };
        let ExprKind::Name(tn) = &t.kind else {
            return;
        };
        if m != "action_run" || apply != "apply" {
            return;
        }
        let Some(actions) = self.tables.get(tn) else {
            return;
        };
        // labels after the last body are lowering's ("the last switch case needs a body")
        let with_body = cases
            .iter()
            .rposition(|c| c.body.is_some())
            .map_or(0, |i| i + 1);
        for c in &cases[..with_body] {
            match &c.label.kind {
                ExprKind::Default => {}
                ExprKind::Name(an) if actions.contains(an) => {}
                ExprKind::Name(an) => self.sink.err(
                    c.label.span,
                    format!("'{}' is not an action of table '{}'", an, tn),
                ),
                _ => self.sink.err(
                    c.label.span,
                    "switch labels must be action names or default",
                ),
            }
        }
    }

    /// A branch of `if` or `switch`: its own scope, its errors reported.
    fn nested(&mut self, s: &Stmt) {
        self.scopes.push(HashMap::new());
        if let Err(e) = self.stmt(s) {
            self.sink.push(e);
        }
        self.scopes.pop();
    }

    /// The type of `e` where it is certain (else `Unknown`), after checking the names
    /// it uses and the operand types of its operators.
    fn ty(&mut self, e: &Expr) -> PResult<Type> {
        Ok(match &e.kind {
            ExprKind::Int(_, Some((w, true))) => Type::Int(*w),
            ExprKind::Int(_, Some((w, false))) => Type::Bit(*w),
            ExprKind::Int(_, None) => Type::InfInt,
            ExprKind::Bool(_) => Type::Bool,
            ExprKind::Str(_) => Type::Str,
            ExprKind::Name(n) => match self.base_ty(e)? {
                // an extern instance, table, value set or packet (lowering's message)
                Type::Extern(_) => {
                    return Err(Error::new(
                        e.span,
                        format!("'{}' cannot be used as a value", n),
                    ))
                }
                t => t,
            },
            ExprKind::Member(b, m) => {
                if let ExprKind::Name(n) = &b.kind {
                    if let Some(t) = self.enum_member(e, n, m)? {
                        return Ok(t);
                    }
                }
                let bt = self.base_ty(b)?;
                self.member_type(e, b, &bt, m)?
            }
            ExprKind::Index(b, i) => {
                let bt = self.ty(b)?;
                self.ty(i)?;
                match bt {
                    Type::Stack(t, _) => *t,
                    _ => Type::Unknown,
                }
            }
            ExprKind::Slice(x, hi, lo) => {
                self.ty(x)?;
                self.ty(hi)?;
                self.ty(lo)?;
                Type::Unknown
            }
            ExprKind::Call(f, targs, args) => {
                if let ExprKind::Name(n) = &f.kind {
                    let as_stmt = self.stmt_call == Some(e.span);
                    self.callee(e, n, as_stmt)?;
                    if self.is_extern_fn(n) {
                        self.extern_fn_shape(e, n, args)?;
                    }
                }
                let rt = match &f.kind {
                    // the callee's own name is lowering's to resolve (action, function,
                    // extern function, or a call it refuses with its own message)
                    ExprKind::Name(n) if self.action_count(n).is_some() => {
                        let count = self.action_count(n).unwrap_or_default();
                        if count != args.len() {
                            return Err(Error::new(
                                e.span,
                                format!(
                                    "action '{}' expects {} argument(s), got {}",
                                    n,
                                    count,
                                    args.len()
                                ),
                            ));
                        }
                        Type::Void
                    }
                    // core.p4's verify(condition, error), as lowering takes it in parsers
                    ExprKind::Name(n)
                        if n == "verify"
                            && args.len() != 2
                            && self.lookup_local(n).is_none()
                            && !self.functions.contains_key("verify") =>
                    {
                        return Err(Error::new(
                            e.span,
                            "verify takes two arguments (condition, error)",
                        ));
                    }
                    ExprKind::Name(n) => match self.functions.get(n.as_str()) {
                        Some((r, count))
                            if self.lookup_local(n).is_none()
                                && !self.overloaded.contains(n.as_str()) =>
                        {
                            if *count != args.len() {
                                return Err(Error::new(
                                    e.span,
                                    format!(
                                        "function '{}' expects {} argument(s), got {}",
                                        n,
                                        count,
                                        args.len()
                                    ),
                                ));
                            }
                            self.resolve(r)
                        }
                        _ => Type::Unknown,
                    },
                    ExprKind::Member(b, m) => {
                        let as_stmt = self.stmt_call == Some(e.span);
                        self.stmt_call = None;
                        // `C.apply(...)` of a control or parser type (no instance)
                        let direct = matches!(&b.kind, ExprKind::Name(n)
                            if m == "apply"
                                && self.lookup_value(n).is_none()
                                && self.block_types.contains(n.as_str()));
                        // `lookahead<H>()` of a header type: a header (its fields are checked)
                        let mut header = None;
                        if !direct {
                            if let Type::Extern(k) = self.base_ty(b)? {
                                if matches!(b.kind, ExprKind::Name(_)) {
                                    packet_call_shape(e, &k, m, targs, args)?;
                                    header = self.packet_in_header(&k, m, targs, args)?;
                                }
                            }
                        }
                        if let ExprKind::Name(n) = &b.kind {
                            if self.in_apply && m == "apply" && !self.can_apply(n, as_stmt) {
                                return Err(Error::new(b.span, format!("'{}' is not a table", n)));
                            }
                        }
                        let table =
                            matches!(&b.kind, ExprKind::Name(n) if self.tables.contains_key(n));
                        if m == "apply" && table && !args.is_empty() {
                            return Err(Error::new(e.span, "table apply() takes no arguments"));
                        }
                        if m == "isValid" {
                            Type::Bool
                        } else {
                            header.unwrap_or(Type::Unknown)
                        }
                    }
                    _ => {
                        self.ty(f)?;
                        Type::Unknown
                    }
                };
                // what `x.apply(...)` passes can be a packet (no value)
                let apply = matches!(&f.kind, ExprKind::Member(_, m) if m == "apply");
                for a in args {
                    if apply {
                        self.base_ty(&a.value)?;
                    } else {
                        self.ty(&a.value)?;
                    }
                }
                rt
            }
            ExprKind::Unary(op, x) => {
                let t = self.ty(x)?;
                match *op {
                    "!" => Type::Bool,
                    "-" | "~" if matches!(t, Type::Bit(_) | Type::Int(_)) => t,
                    _ => Type::Unknown,
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(e, op, a, b)?,
            ExprKind::Ternary(c, a, b) => {
                self.ty(c)?;
                let at = self.ty(a)?;
                let bt = self.ty(b)?;
                if at == bt && certain(&at) {
                    at
                } else {
                    Type::Unknown
                }
            }
            ExprKind::Cast(t, x) => {
                self.ty(x)?;
                self.resolve(t)
            }
            ExprKind::List(items) => {
                for (_, x) in items {
                    self.ty(x)?;
                }
                Type::Unknown
            }
            ExprKind::Mask(a, b) | ExprKind::Range(a, b) => {
                self.ty(a)?;
                self.ty(b)?;
                Type::Unknown
            }
            ExprKind::Default | ExprKind::TypeExpr(_) => Type::Unknown,
        })
    }

    /// The callee `n` of the call `e` is an action, a function or an extern function, as
    /// lowering resolves it (the control's own actions, the top-level ones; outside a
    /// control any control's, as the body may be inlined into it); a call used as a
    /// value (not `as_stmt`) calls a function or an extern function returning a value
    /// (lowering's messages and spans).
    fn callee(&self, e: &Expr, n: &str, as_stmt: bool) -> PResult<()> {
        let action = self.local_actions.contains_key(n)
            || self.global_actions.contains_key(n)
            || (!self.in_control && self.control_actions.contains(n));
        let function = self.functions.contains_key(n);
        let extern_fn = self.extern_fns.get(n).copied();
        if !action && !function && extern_fn.is_none() && !LOWERED_EXTERN_FNS.contains(&n) {
            return Err(Error::new(
                e.span,
                format!("unknown function or action '{}'", n),
            ));
        }
        if !as_stmt && !function && extern_fn != Some(true) {
            return Err(Error::new(
                e.span,
                format!("'{}' cannot be used as a value here", n),
            ));
        }
        Ok(())
    }

    /// The type of `b` where it need be no value (the base of `b.m`, an argument of
    /// `x.apply(...)`, a select case naming a value set): as `ty`, but an instance,
    /// table, value set or packet is `Type::Extern` (of its type's name, `table`,
    /// `value_set`, `packet_in`/`packet_out`; a top-level instance of an empty name).
    fn base_ty(&mut self, b: &Expr) -> PResult<Type> {
        let ExprKind::Name(n) = &b.kind else {
            return self.ty(b);
        };
        match self.lookup_value(n) {
            Some(t) => Ok(t),
            None => Err(Error::new(b.span, format!("undeclared identifier '{}'", n))),
        }
    }

    /// What an instance declared in a body is: an extern instance `Type::Extern`, an
    /// instance of a parser or control `Unknown`.
    fn instance_type(&self, i: &Instance) -> Type {
        match self.env.resolve(&i.ty) {
            Ok(t @ Type::Extern(_)) => t,
            _ => Type::Unknown,
        }
    }

    /// The parameter count of the action a call of `n` runs, where certain.
    fn action_count(&self, n: &str) -> Option<usize> {
        if self.overloaded.contains(n) {
            return None;
        }
        if let Some(c) = self.local_actions.get(n) {
            return Some(*c);
        }
        if self.lookup_local(n).is_some() || self.control_actions.contains(n) {
            return None;
        }
        self.global_actions.get(n).copied()
    }

    /// `error.m` or `E.m` of an enum type `E` (unless a local of that name hides it):
    /// its type, or the error that it is not a member.
    fn enum_member(&self, e: &Expr, n: &str, m: &str) -> PResult<Option<Type>> {
        if self.lookup_local(n).is_some() {
            return Ok(None);
        }
        if n == "error" {
            if !self.env.errors.iter().any(|x| x == m) {
                return Err(Error::new(e.span, format!("unknown error '{}'", m)));
            }
            return Ok(Some(Type::Error));
        }
        let Some(ed) = self.env.enums.get(n) else {
            return Ok(None);
        };
        if !ed.members.iter().any(|x| x.0 == m) {
            return Err(Error::new(
                e.span,
                format!("enum {} has no member '{}'", n, m),
            ));
        }
        Ok(Some(match ed.width {
            Some(w) => Type::SerEnum(n.to_string(), w),
            None => Type::Enum(n.to_string()),
        }))
    }

    /// The type of a bare name used as a value: the body's scope, then the top-level
    /// constants and instances (a type, function or action name is no value).
    fn lookup_value(&self, n: &str) -> Option<Type> {
        if let Some(t) = self.lookup_local(n) {
            return Some(t);
        }
        if let Some((t, _)) = self.env.consts.get(n) {
            return Some(t.clone());
        }
        if self.top_instances.contains(n) {
            return Some(Type::Extern(String::new()));
        }
        self.values.contains(n).then_some(Type::Unknown)
    }

    /// The type of member `m` of a value of type `bt` (`e` is `b.m`), or lowering's
    /// error where `bt` is a header, struct or union without that field, or a scalar
    /// location (a call's scalar result is no location: lowering's own error).
    fn member_type(&self, e: &Expr, b: &Expr, bt: &Type, m: &str) -> PResult<Type> {
        let span = member_span(e, m);
        match bt {
            // a header's struct-typed fields are kept apart from its bit fields
            Type::Header(n) => match self.env.header_structs.get(&(n.clone(), m.to_string())) {
                Some(s) => Ok(Type::Struct(s.clone())),
                None => self
                    .env
                    .field_type(bt, m)
                    .ok_or_else(|| Error::new(span, format!("header {} has no field '{}'", n, m))),
            },
            Type::Struct(n) | Type::Union(n) => self
                .env
                .field_type(bt, m)
                .ok_or_else(|| Error::new(span, format!("type {} has no field '{}'", n, m))),
            Type::Bit(_) | Type::Int(_) | Type::Bool if !matches!(b.kind, ExprKind::Call(..)) => {
                Err(Error::new(
                    e.span,
                    format!("a value of type {} has no field '{}'", bt.name(), m),
                ))
            }
            _ => Ok(Type::Unknown),
        }
    }

    /// Whether a call of `n` is one of v1model's extern functions as lowering takes
    /// them: no action of that name runs instead (the control's own, then the top-level
    /// ones; outside a control, any control's, as the body may be inlined into it).
    fn is_extern_fn(&self, n: &str) -> bool {
        let control_action = if self.in_control {
            self.local_actions.contains_key(n)
        } else {
            self.control_actions.contains(n)
        };
        !control_action && !self.global_actions.contains_key(n)
    }

    /// The arguments of the extern functions lowering takes apart by their shape
    /// (`log_msg`'s format string, `clone`'s CloneType, the checksum functions' argument
    /// count and algorithm, `hash`'s algorithm), as p4c's type checker refuses them, with
    /// lowering's messages and spans. Argument counts are lowering's, and checked first.
    fn extern_fn_shape(&self, e: &Expr, n: &str, args: &[Arg]) -> PResult<()> {
        match n {
            "log_msg" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(Error::new(
                        e.span,
                        "log_msg takes a format string and an optional list of values",
                    ));
                }
                if !matches!(args[0].value.kind, ExprKind::Str(_)) {
                    return Err(Error::new(
                        args[0].value.span,
                        "log_msg needs a string literal",
                    ));
                }
            }
            "clone" | "clone3" | "clone_preserving_field_list" => {
                let want = if n == "clone" { 2 } else { 3 };
                let clone_type = |a: &Arg| matches!(&a.value.kind, ExprKind::Member(_, m) if m == "I2E" || m == "E2E");
                if args.len() == want && !clone_type(&args[0]) {
                    return Err(Error::new(
                        args[0].value.span,
                        "expected CloneType.I2E or CloneType.E2E",
                    ));
                }
            }
            "verify_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum"
            | "update_checksum_with_payload" => {
                if args.len() != 4 {
                    return Err(Error::new(
                        e.span,
                        "checksum functions take 4 arguments (condition, data, checksum field, algorithm)",
                    ));
                }
                hash_algorithm(&args[3].value)?;
            }
            "hash" if args.len() == 5 => hash_algorithm(&args[1].value)?,
            _ => {}
        }
        Ok(())
    }

    /// The header type `extract<T>(_)` reads (which must be a header) and that
    /// `lookahead<T>()` returns when `T` is a header (else `None`), on a `packet_in`
    /// (`kind`) with the argument counts `packet_call_shape` checked.
    fn packet_in_header(
        &self,
        kind: &str,
        m: &str,
        targs: &[TypeRef],
        args: &[Arg],
    ) -> PResult<Option<Type>> {
        if kind != "packet_in" {
            return Ok(None);
        }
        let Some(t) = targs.first().and_then(|t| self.env.resolve(t).ok()) else {
            return Ok(None);
        };
        match m {
            "extract" if matches!(args.first().map(|a| &a.value.kind), Some(ExprKind::Default)) => {
                if !matches!(t, Type::Header(_)) {
                    return Err(Error::new(
                        args[0].value.span,
                        format!("extract needs a header, not {}", t.name()),
                    ));
                }
                Ok(None)
            }
            "lookahead" if matches!(t, Type::Header(_)) => Ok(Some(t)),
            _ => Ok(None),
        }
    }

    /// Whether `n.apply(...)` in an apply block applies something lowering takes: a
    /// table or an instance of a control (its own error if it cannot), or, as a
    /// statement, a control type invoked directly; the innermost declaration of `n` counts.
    fn can_apply(&self, n: &str, as_stmt: bool) -> bool {
        match self.scopes.iter().rposition(|s| s.contains_key(n)) {
            Some(0) => self.appliable.contains(n),
            Some(_) => false,
            None if self.values.contains(n) => self.top_controls.contains(n),
            None => as_stmt && self.control_types.contains(n),
        }
    }

    fn lookup_local(&self, n: &str) -> Option<Type> {
        self.scopes.iter().rev().find_map(|s| s.get(n).cloned())
    }

    fn binary(&mut self, e: &Expr, op: &str, a: &Expr, b: &Expr) -> PResult<Type> {
        let at = self.ty(a)?;
        let bt = self.ty(b)?;
        Ok(match op {
            "&&" | "||" => Type::Bool,
            "<<" | ">>" if matches!(at, Type::Bit(_) | Type::Int(_)) => at,
            "<<" | ">>" | "++" => Type::Unknown,
            _ => {
                let t = if certain(&at) && certain(&bt) {
                    match unify(&at, &bt) {
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
                            ))
                        }
                    }
                } else {
                    Type::Unknown
                };
                match op {
                    "==" | "!=" | "<" | ">" | "<=" | ">=" => Type::Bool,
                    _ => t,
                }
            }
        })
    }
}

/// The extern functions lowering takes by name, v1model's older spellings included
/// (`clone3`, `resubmit`, `recirculate`: no declaration in today's v1model.p4).
const LOWERED_EXTERN_FNS: &[&str] = &[
    "mark_to_drop",
    "random",
    "truncate",
    "assert",
    "assume",
    "log_msg",
    "hash",
    "digest",
    "clone",
    "clone3",
    "clone_preserving_field_list",
    "resubmit",
    "recirculate",
    "resubmit_preserving_field_list",
    "recirculate_preserving_field_list",
    "verify_checksum",
    "update_checksum",
    "verify_checksum_with_payload",
    "update_checksum_with_payload",
    "verify",
];

/// The actions table `t` can run, by declared name: its actions list and its default
/// action (`NoAction` when it has none: lowering adds it as default-only).
fn table_action_names(t: &Table) -> HashSet<String> {
    let default = match &t.default_action {
        Some((d, _)) => d.name.trim_start_matches('.').to_string(),
        None => "NoAction".to_string(),
    };
    t.actions
        .iter()
        .map(|a| a.name.trim_start_matches('.').to_string())
        .chain(std::iter::once(default))
        .collect()
}

/// The argument counts of the methods of `packet_in`/`packet_out` (`call` is
/// `n.m<targs>(args)` on a parameter or local `n` of extern type `kind`), with
/// lowering's messages and spans.
fn packet_call_shape(
    call: &Expr,
    kind: &str,
    m: &str,
    targs: &[TypeRef],
    args: &[Arg],
) -> PResult<()> {
    let bad = match (kind, m) {
        ("packet_out", "emit") if args.len() != 1 => "emit takes one argument",
        ("packet_in", "extract") if args.is_empty() || args.len() > 2 => {
            "extract takes one or two arguments"
        }
        ("packet_in", "extract")
            if targs.is_empty() && matches!(args[0].value.kind, ExprKind::Default) =>
        {
            return Err(Error::new(
                args[0].value.span,
                "extract(_) needs the header type as a type argument: extract<T>(_)",
            ));
        }
        ("packet_in", "advance") if args.len() != 1 => "advance takes one argument",
        ("packet_in", "lookahead") if !args.is_empty() || targs.len() != 1 => {
            "lookahead takes one type argument and no arguments"
        }
        _ => return Ok(()),
    };
    Err(Error::new(call.span, bad))
}

/// Whether `e` is `n.apply(...)` for a name `n` (lowering's shape of a table
/// application; what `n` names is checked where it is lowered).
fn is_name_apply(e: &Expr) -> bool {
    let ExprKind::Call(f, _, _) = &e.kind else {
        return false;
    };
    matches!(&f.kind, ExprKind::Member(b, m) if m == "apply" && matches!(b.kind, ExprKind::Name(_)))
}

/// Types this pass knows exactly, as lowering would type the same expression.
fn certain(t: &Type) -> bool {
    matches!(t, Type::Bit(_) | Type::Int(_) | Type::Bool)
}

/// The span of the member name in `b.m` (as lowering reports a missing field).
fn member_span(e: &Expr, m: &str) -> Span {
    let hi = e.span.hi;
    let lo = hi.saturating_sub(m.len() as u32).max(e.span.lo);
    Span { lo, hi }
}

/// A hash algorithm argument names a member of `HashAlgorithm` (which member,
/// `enum_member` checks), as lowering reads it.
fn hash_algorithm(algo: &Expr) -> PResult<()> {
    if matches!(&algo.kind, ExprKind::Member(b, _)
        if matches!(&b.kind, ExprKind::Name(h) if h == "HashAlgorithm"))
    {
        return Ok(());
    }
    Err(Error::new(
        algo.span,
        "expected a HashAlgorithm member, e.g. HashAlgorithm.csum16",
    ))
}

/// Whether `i` instantiates one of `controls`.
fn instance_of(i: &Instance, controls: &HashSet<&str>) -> bool {
    matches!(&i.ty, TypeRef::Named(n, _, _) if controls.contains(n.as_str()))
}
