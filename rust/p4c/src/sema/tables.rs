//! What every table attaches and the action data it takes, checked for every table
//! (lowering's `lower::table` sees only the tables `main` applies):
//!
//! - `implementation` names an `action_profile` or `action_selector` instance (or is
//!   an anonymous one), `counters` a `direct_counter`, `meters` a `direct_meter`;
//! - `selector` keys only with an `action_selector` implementation;
//! - the action data (directionless parameters) of each action a table runs has a fixed
//!   width, for the control plane to give it;
//! - each key is a location or expression of a fixed width.

use super::types::{Type, TypeEnv};
use crate::ast::*;
use crate::diag::Sink;
use std::collections::{HashMap, HashSet};

/// The attachments of every table: what each name in `implementation`, `counters` and
/// `meters` is an instance of, found as lowering binds names (the control's own
/// instances and constructor parameters, then its parameters and variables, which are
/// no instances, then the top-level instances).
pub fn attachments(prog: &Program, sink: &mut Sink) {
    let top: HashMap<&str, &str> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Instance(i) => Some((i.name.as_str(), type_name(&i.ty))),
            _ => None,
        })
        .collect();
    for d in &prog.decls {
        let Decl::Control {
            params,
            ctor_params,
            locals,
            ..
        } = d
        else {
            continue;
        };
        // name -> the type it is an instance of ("" when it is no instance)
        let mut scope: HashMap<&str, &str> = HashMap::new();
        for p in params {
            scope.insert(p.name.as_str(), "");
        }
        for l in locals {
            match l {
                Local::Inst(i)
                | Local::Var(Stmt {
                    kind: StmtKind::Inst(i),
                    ..
                }) => {
                    scope.insert(i.name.as_str(), type_name(&i.ty));
                }
                Local::Var(Stmt {
                    kind: StmtKind::Var(_, _, n, _) | StmtKind::Const(_, n, _),
                    ..
                }) => {
                    scope.insert(n.as_str(), "");
                }
                _ => {}
            }
        }
        for p in ctor_params {
            scope.insert(p.name.as_str(), type_name(&p.ty));
        }
        let kind_of = |n: &str| scope.get(n).or_else(|| top.get(n)).copied();
        for l in locals {
            let Local::Table(t) = l else { continue };
            let mut selector = false;
            for (p, e, _) in &t.props {
                match (p.as_str(), &e.kind) {
                    ("implementation", ExprKind::Name(n)) => match kind_of(n) {
                        Some("action_selector") => selector = true,
                        Some("action_profile") => {}
                        _ => sink.err(
                            e.span,
                            format!("'{}' is not an action_profile or action_selector", n),
                        ),
                    },
                    ("implementation", ExprKind::Call(f, _, _)) => {
                        selector = matches!(&f.kind, ExprKind::Name(k) if k == "action_selector");
                    }
                    ("counters" | "meters", ExprKind::Name(n)) => {
                        let want = if p == "counters" {
                            "direct_counter"
                        } else {
                            "direct_meter"
                        };
                        if kind_of(n) != Some(want) {
                            sink.err(e.span, format!("'{}' is not a {}", n, want));
                        }
                    }
                    _ => {}
                }
            }
            if !selector && t.keys.iter().any(|k| k.match_kind == "selector") {
                sink.err(
                    t.span,
                    "'selector' keys need an action_selector implementation",
                );
            }
        }
    }
}

/// The action data of every action a table runs has a fixed width (its first parameter
/// without one reported, once per action).
pub fn action_data_widths(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    let globals = prog.global_actions();
    let mut seen: HashSet<*const Action> = HashSet::new();
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        let local: HashMap<&str, &Action> = locals
            .iter()
            .filter_map(|l| match l {
                Local::Action(a) => Some((a.name.as_str(), a)),
                _ => None,
            })
            .collect();
        for l in locals {
            let Local::Table(t) = l else { continue };
            for r in t.action_refs() {
                // found as sema::structure::table_action_names finds it (which reports
                // the unknown ones)
                let n = r.name.trim_start_matches('.');
                let found = local
                    .get(n)
                    .filter(|_| !r.name.starts_with('.'))
                    .or_else(|| globals.get(n));
                let Some(a) = found else { continue };
                if !seen.insert(*a as *const Action) {
                    continue;
                }
                for p in a.params.iter().filter(|p| p.dir == Dir::None) {
                    let Ok(ty) = env.resolve(&p.ty) else { break };
                    if ty.width().is_none() {
                        sink.err(
                            p.span,
                            format!(
                                "action parameter '{}' must have a fixed-width type, not {}",
                                p.name,
                                ty.name()
                            ),
                        );
                        break;
                    }
                }
            }
        }
    }
}

/// The name of a named type (`""` for any other).
fn type_name(t: &TypeRef) -> &str {
    match t {
        TypeRef::Named(n, _, _) => n,
        _ => "",
    }
}

/// The type of every table's keys: a location (field, variable) of a type with a fixed
/// width, `h.isValid()`, or any other expression of a fixed width (lowering computes it
/// into a temporary), with lowering's messages (`lower::table::key_target`). A key whose
/// type sema cannot know draws no error.
pub fn key_types(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    let functions = super::exprs::function_returns(prog, env);
    for d in &prog.decls {
        let Decl::Control {
            params,
            ctor_params,
            locals,
            ..
        } = d
        else {
            continue;
        };
        let scope = super::exprs::block_scope(env, params, ctor_params, locals);
        for t in locals.iter().filter_map(|l| match l {
            Local::Table(t) => Some(t),
            _ => None,
        }) {
            for k in &t.keys {
                let e = &k.expr;
                let Ok(ty) = super::exprs::type_of(env, &functions, &scope, e, None) else {
                    // an operator error inside the key: sema::exprs reports it
                    continue;
                };
                let location = matches!(
                    e.kind,
                    ExprKind::Name(_) | ExprKind::Member(..) | ExprKind::Index(..)
                );
                let msg = match ty {
                    Type::Header(_) | Type::Struct(_) | Type::Union(_) | Type::Stack(..)
                        if location =>
                    {
                        "table keys must be fields, field slices, header.isValid() or expressions of a fixed width".to_string()
                    }
                    Type::Varbit(_) if location => {
                        format!("cannot match on a value of type {}", ty.name())
                    }
                    Type::InfInt => format!("a table key needs a fixed width, not {}", ty.name()),
                    _ => continue,
                };
                sink.err(e.span, msg);
            }
        }
    }
}
