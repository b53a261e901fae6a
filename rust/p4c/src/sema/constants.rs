//! Compile-time constants in every body of the program, called or not, where p4c's
//! front end requires one (so also in code `main` never reaches): local `const`
//! initializers (in functions, actions, apply blocks, parser states and the locals of
//! parsers and controls), slice bounds, `push_front`/`pop_front` counts, the field list
//! of `clone_preserving_field_list` and of resubmit's and recirculate's, and the action
//! data of default actions. The message and span are lowering's constant folder's
//! (`Lower::const_expr`).
//!
//! Not here, as p4c accepts them where no code reaches them (its BMv2 back end refuses
//! them only when used): select case values, tables' sizes, const entries, `digest`'s
//! receiver; nor "value does not fit", which p4c only warns about.

use super::exprs::{block_scope, function_returns, type_of, Scope};
use super::types::{Type, TypeEnv};
use crate::ast::*;
use crate::diag::{Error, PResult, Sink, Span};
use crate::effects::children;
use std::collections::{HashMap, HashSet};

/// Checks the constants of every body in `prog` (parsed from `text`, for the messages).
pub fn check(prog: &Program, env: &TypeEnv, text: &str, sink: &mut Sink) {
    let functions = function_returns(prog, env);
    let global_actions = prog.global_actions();
    let fn_names = prog.function_names();
    let mut w = Walker {
        env,
        fn_names: &fn_names,
        text,
        functions: &functions,
        global_actions: &global_actions,
        local_actions: HashMap::new(),
        scope: Scope::new(),
        sink,
    };
    for d in &prog.decls {
        match d {
            Decl::Function { params, body, .. } => w.body(&Scope::new(), params, body),
            Decl::Action(a) => w.body(&Scope::new(), &a.params, &a.body),
            Decl::Control {
                params,
                ctor_params,
                locals,
                apply,
                ..
            } => {
                let outer = block_scope(env, params, ctor_params, locals);
                w.local_consts(&outer, locals);
                w.local_actions = locals
                    .iter()
                    .filter_map(|l| match l {
                        Local::Action(a) => Some((a.name.as_str(), a)),
                        _ => None,
                    })
                    .collect();
                for l in locals {
                    match l {
                        Local::Action(a) => w.body(&outer, &a.params, &a.body),
                        Local::Table(t) => {
                            w.scope = outer.clone();
                            w.table(t);
                        }
                        _ => {}
                    }
                }
                w.body(&outer, &[], apply);
                w.local_actions.clear();
            }
            Decl::Parser {
                params,
                ctor_params,
                locals,
                states,
                ..
            } => {
                let outer = block_scope(env, params, ctor_params, locals);
                w.local_consts(&outer, locals);
                for st in states {
                    // the state's own frame: its constants are in scope in its select
                    w.scope = outer.clone();
                    w.scope.push();
                    for s in &st.stmts {
                        if let Err(e) = w.stmt(s) {
                            w.sink.push(e);
                        }
                    }
                    if let Some(Transition::Select(keys, _, _)) = &st.transition {
                        if let Err(e) = keys.iter().try_for_each(|k| w.slice_bounds(k)) {
                            w.sink.push(e);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

struct Walker<'p, 's> {
    env: &'p TypeEnv,
    text: &'p str,
    functions: &'p HashMap<String, Type>,
    global_actions: &'p HashMap<&'p str, &'p Action>,
    /// Names of the top-level functions.
    fn_names: &'p HashSet<&'p str>,
    /// The actions of the control being checked (a table names these first).
    local_actions: HashMap<&'p str, &'p Action>,
    scope: Scope,
    sink: &'s mut Sink,
}

impl Walker<'_, '_> {
    fn resolve(&self, t: &TypeRef) -> Type {
        self.env.resolve(t).unwrap_or(Type::Unknown)
    }

    fn src(&self, s: Span) -> &str {
        let lo = (s.lo as usize).min(self.text.len());
        let hi = (s.hi as usize).min(self.text.len()).max(lo);
        self.text.get(lo..hi).unwrap_or("")
    }

    /// `e` is a compile-time constant (it folds, as lowering's `const_expr` folds it).
    fn constant(&self, e: &Expr) -> PResult<()> {
        match self.env.const_eval(e, &self.scope.constants()) {
            Ok(_) => Ok(()),
            Err(_) => Err(Error::new(
                e.span,
                format!("'{}' is not a compile-time constant", self.src(e.span)),
            )),
        }
    }

    /// Like `constant`, reporting the error and going on (lowering's `const_of`).
    fn report(&mut self, e: &Expr) {
        if let Err(err) = self.constant(e) {
            self.sink.push(err);
        }
    }

    /// The `const` declarations among a parser's or control's locals.
    fn local_consts(&mut self, outer: &Scope, locals: &[Local]) {
        self.scope = outer.clone();
        for l in locals {
            if let Local::Var(Stmt {
                kind: StmtKind::Const(_, _, init),
                ..
            }) = l
            {
                self.report(init);
            }
        }
    }

    fn body(&mut self, outer: &Scope, params: &[Param], body: &[Stmt]) {
        self.scope = Scope::of_body(outer, self.env, params);
        self.stmts(body);
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        self.scope.push();
        for s in stmts {
            if let Err(e) = self.stmt(s) {
                self.sink.push(e);
            }
        }
        self.scope.pop();
    }

    fn nested(&mut self, s: &Stmt) {
        self.stmts(std::slice::from_ref(s));
    }

    fn stmt(&mut self, s: &Stmt) -> PResult<()> {
        for e in stmt_exprs(s) {
            self.slice_bounds(e)?;
        }
        match &s.kind {
            StmtKind::Const(ty, name, init) => {
                let t = self.resolve(ty);
                let r = self.constant(init);
                self.scope.constant(self.env, name, t, init);
                r?;
            }
            StmtKind::Var(_, ty, name, _) => {
                let t = self.resolve(ty);
                self.scope.value(name, t);
            }
            StmtKind::Inst(i) => self.scope.opaque(&i.name),
            StmtKind::Block(v) => self.stmts(v),
            StmtKind::If(_, a, b) => {
                self.nested(a);
                if let Some(b) = b {
                    self.nested(b);
                }
            }
            StmtKind::Switch(_, cases) => {
                for c in cases {
                    if let Some(b) = &c.body {
                        self.nested(b);
                    }
                }
            }
            StmtKind::Call(c) => {
                self.stack_count(c)?;
                self.extern_fn_constants(c)?;
            }
            _ => {}
        }
        Ok(())
    }

    /// The field list of `clone_preserving_field_list` and of resubmit's and
    /// recirculate's (when no action or function of that name runs instead).
    fn extern_fn_constants(&self, c: &Expr) -> PResult<()> {
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(());
        };
        let ExprKind::Name(n) = &f.kind else {
            return Ok(());
        };
        let n = n.as_str();
        if self.local_actions.contains_key(n)
            || self.global_actions.contains_key(n)
            || self.fn_names.contains(n)
        {
            return Ok(());
        }
        let arg = match (n, args.len()) {
            ("clone3" | "clone_preserving_field_list", 3) => 2,
            ("resubmit_preserving_field_list" | "recirculate_preserving_field_list", 1) => 0,
            _ => return Ok(()),
        };
        self.constant(&args[arg].value)?;
        Ok(())
    }

    /// The bounds of every slice in `e` (`x[hi:lo]`), folded in their own types.
    fn slice_bounds(&self, e: &Expr) -> PResult<()> {
        if let ExprKind::Slice(_, hi, lo) = &e.kind {
            self.constant(hi)?;
            self.constant(lo)?;
        }
        children(e)
            .into_iter()
            .try_for_each(|c| self.slice_bounds(c))
    }

    /// `s.push_front(n)` / `s.pop_front(n)` on a header stack: `n` folds as a `bit<32>`.
    fn stack_count(&self, c: &Expr) -> PResult<()> {
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(());
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return Ok(());
        };
        if !matches!(m.as_str(), "push_front" | "pop_front") || args.len() != 1 {
            return Ok(());
        }
        let bt = type_of(self.env, self.functions, &self.scope, b, None).unwrap_or(Type::Unknown);
        if matches!(bt, Type::Stack(ref e, _) if matches!(**e, Type::Header(_))) {
            self.constant(&args[0].value)?;
        }
        Ok(())
    }

    /// The action data of a table's default action.
    fn table(&mut self, t: &Table) {
        if let Some((d, _)) = &t.default_action {
            self.action_data(d);
        }
    }

    /// The action data of `r` (its arguments after those bound to directional
    /// parameters), each in its parameter's width.
    fn action_data(&mut self, r: &ActionRef) {
        let name = r.name.trim_start_matches('.');
        let local = (!r.name.starts_with('.'))
            .then(|| self.local_actions.get(name))
            .flatten();
        let Some(a) = local.or_else(|| self.global_actions.get(name)).copied() else {
            return;
        };
        let data: Vec<&Param> = a.params.iter().filter(|p| p.dir == Dir::None).collect();
        let ndir = a.params.len() - data.len();
        if r.args.len() != a.params.len() {
            return; // sema::structure counts them
        }
        for arg in &r.args[ndir..] {
            self.report(&arg.value);
        }
    }
}

/// The expressions a statement evaluates itself (not those of its nested statements).
fn stmt_exprs(s: &Stmt) -> Vec<&Expr> {
    match &s.kind {
        StmtKind::Assign(l, r) => vec![l, r],
        StmtKind::Call(c) => vec![c],
        StmtKind::If(c, _, _) | StmtKind::Switch(c, _) => vec![c],
        StmtKind::Var(_, _, _, Some(x)) | StmtKind::Return(Some(x)) => vec![x],
        _ => vec![],
    }
}
