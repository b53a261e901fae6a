//! The parameters of the v1model blocks and the constructor arguments of control
//! instances, checked for every declaration (lowering's `lower::instances` binds them
//! only for what `main` reaches):
//!
//! - a struct-typed parameter of one of the six V1Switch blocks has the parser's
//!   headers or metadata type, or `standard_metadata_t` (the only structs lowering has
//!   storage for);
//! - an instance of a control (at the top level or among a parser's or control's
//!   locals) gives one argument per constructor parameter, each the name of an instance
//!   declared before it or a compile-time constant.

use super::types::{mask, shr, sign_extend, Type, TypeEnv};
use crate::ast::*;
use crate::diag::Sink;
use std::collections::{HashMap, HashSet};

/// Struct-typed parameters of the V1Switch `blocks` (parser first) name a root type.
pub fn block_params(blocks: &[&Decl], env: &TypeEnv, sink: &mut Sink) {
    let Some(Decl::Parser { params, .. }) = blocks.first() else {
        return;
    };
    let mut roots: HashSet<String> = HashSet::from(["standard_metadata_t".to_string()]);
    for p in params.iter().skip(1).take(2) {
        if let Ok(Type::Struct(n)) = env.resolve(&p.ty) {
            roots.insert(n);
        }
    }
    for d in blocks {
        let (Decl::Parser { params, .. } | Decl::Control { params, .. }) = d else {
            continue;
        };
        for p in params {
            if let Ok(Type::Struct(n)) = env.resolve(&p.ty) {
                if !roots.contains(&n) {
                    sink.err(p.span, format!("parameter '{}' of type {} does not match the headers or metadata type of the parser", p.name, n));
                }
            }
        }
    }
}

/// Every instance of a control has the constructor arguments its control declares.
pub fn control_ctor_args(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    // the top-level instances visible to all (declaration order as lowering binds them)
    let mut top: HashSet<&str> = HashSet::new();
    for d in &prog.decls {
        match d {
            Decl::Instance(i) => {
                ctor_args(prog, env, i, &top, &HashMap::new(), sink);
                if i.name != "main" {
                    top.insert(i.name.as_str());
                }
            }
            Decl::Control {
                ctor_params,
                locals,
                ..
            }
            | Decl::Parser {
                ctor_params,
                locals,
                ..
            } => {
                // a constructor parameter holds a compile-time constant (a scalar type)
                // or an instance; a local constant is one too. Their values do not
                // matter here, only that an argument is constant: each counts as 1.
                let mut instances = top.clone();
                let mut consts: HashMap<String, (Type, u128)> = HashMap::new();
                for p in ctor_params {
                    match env.resolve(&p.ty) {
                        Ok(t) if t.width().is_some() => {
                            consts.insert(p.name.clone(), (t, 1));
                        }
                        _ => {
                            instances.insert(p.name.as_str());
                        }
                    }
                }
                for l in locals {
                    let i = match l {
                        Local::Inst(i) => i,
                        Local::Var(Stmt {
                            kind: StmtKind::Inst(i),
                            ..
                        }) => i,
                        Local::Var(Stmt {
                            kind: StmtKind::Const(ty, n, _),
                            ..
                        }) => {
                            if let Ok(t) = env.resolve(ty) {
                                consts.insert(n.clone(), (t, 1));
                            }
                            continue;
                        }
                        Local::Var(Stmt {
                            kind: StmtKind::Var(_, _, n, _),
                            ..
                        }) => {
                            // a variable hides a constant of its name
                            consts.remove(n);
                            instances.remove(n.as_str());
                            continue;
                        }
                        _ => continue,
                    };
                    ctor_args(prog, env, i, &instances, &consts, sink);
                    instances.insert(i.name.as_str());
                }
            }
            _ => {}
        }
    }
}

/// The arguments of instance `i` if it instantiates a control: `instances` are the names
/// an argument may give, `consts` the enclosing block's constants.
fn ctor_args(
    prog: &Program,
    env: &TypeEnv,
    i: &Instance,
    instances: &HashSet<&str>,
    consts: &HashMap<String, (Type, u128)>,
    sink: &mut Sink,
) {
    let TypeRef::Named(tname, _, _) = &i.ty else {
        return;
    };
    let Some(Decl::Control { ctor_params, .. }) = super::structure::block_decl(prog, tname) else {
        return;
    };
    if i.args.len() != ctor_params.len() {
        sink.err(
            i.span,
            format!(
                "control '{}' takes {} constructor argument(s), got {}",
                tname,
                ctor_params.len(),
                i.args.len()
            ),
        );
        return;
    }
    for (p, a) in ctor_params.iter().zip(&i.args) {
        let e = &a.value;
        if matches!(&e.kind, ExprKind::Name(n) if instances.contains(n.as_str())) {
            continue;
        }
        // an integer literal must also fit the parameter's width (lowering's
        // `const_expr`; a negative literal wraps)
        let fits = |(v, vt): (u128, Type)| {
            let w = env.resolve(&p.ty).ok().and_then(|t| t.width());
            match (w, vt) {
                (Some(w), Type::InfInt)
                    if w < 128 && !matches!(e.kind, ExprKind::Unary("-", _)) =>
                {
                    let v = sign_extend(v, &Type::InfInt);
                    shr(v, w as u128) == 0 || shr(v, w as u128) == mask(128 - w)
                }
                _ => true,
            }
        };
        if !env.const_eval(e, consts).is_ok_and(fits) {
            sink.err(
                e.span,
                format!(
                    "constructor argument '{}' must name an instance or be a compile-time constant",
                    p.name
                ),
            );
        }
    }
}
