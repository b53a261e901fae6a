//! The program's v1model structure, checked without lowering: the `main` package and
//! the kinds of its six blocks, the top-level parser's locals and states, and the
//! actions of each table listed once, the match kinds of table keys declared.

use crate::ast::*;
use crate::diag::{Sink, Span};

/// The blocks of `main = V1Switch(parser, verifyChecksum, ingress, egress,
/// computeChecksum, deparser)`, in that order. `None` with no error when the program
/// has no `main` (the caller says so); `None` with errors in `sink` when `main` cannot
/// be lowered. Blocks of the wrong kind are reported here and skipped by `lower`.
pub fn v1switch<'a>(prog: &'a Program, sink: &mut Sink) -> Option<Vec<&'a Decl>> {
    let main = prog.decls.iter().find_map(|d| match d {
        Decl::Instance(i) if i.name == "main" => Some(i),
        _ => None,
    })?;
    match &main.ty {
        TypeRef::Named(n, _, _) if n == "V1Switch" => {}
        _ => {
            sink.err(
                main.span,
                "only the v1model package V1Switch is supported for 'main'",
            );
            return None;
        }
    }
    if main.args.len() != 6 {
        sink.err(main.span, format!("V1Switch expects 6 arguments (parser, verifyChecksum, ingress, egress, computeChecksum, deparser), got {}", main.args.len()));
        return None;
    }
    let mut blocks = vec![];
    for a in &main.args {
        let name = match &a.value.kind {
            ExprKind::Call(f, _, _) => match &f.kind {
                ExprKind::Name(n) => Some(n.clone()),
                _ => None,
            },
            ExprKind::Name(n) => Some(n.clone()),
            _ => None,
        };
        match name.and_then(|n| block_decl(prog, &n)) {
            Some(d) => blocks.push(d),
            None => {
                sink.err(
                    a.value.span,
                    "expected an instantiation of a parser or control declared in this program",
                );
                return None;
            }
        }
    }
    if let Decl::Parser { params, .. } = blocks[0] {
        if params.len() != 4 {
            sink.err(main.args[0].value.span, "the v1model parser must have 4 parameters (packet_in, out headers, inout metadata, inout standard_metadata_t)");
            return None;
        }
    } else {
        sink.err(
            main.args[0].value.span,
            "the first argument of V1Switch must be a parser",
        );
        return None;
    }
    parser_structure(blocks[0], sink);
    v1switch_controls(&blocks, sink);
    table_actions_once(prog, sink);
    Some(blocks)
}

/// The declaration (with a body, for parsers and controls) named `name`.
pub fn block_decl<'a>(prog: &'a Program, name: &str) -> Option<&'a Decl> {
    prog.decls.iter().find(|d| {
        d.name() == Some(name)
            && match d {
                Decl::Parser { has_body, .. } | Decl::Control { has_body, .. } => *has_body,
                _ => true,
            }
    })
}

/// Parsers and controls declared with a body have a span; anything else reports at the start.
pub fn decl_span(d: &Decl) -> Span {
    match d {
        Decl::Parser { span, .. } | Decl::Control { span, .. } => *span,
        _ => Span::default(),
    }
}

/// Blocks 1 to 5 of V1Switch must be controls (`lower` skips the others).
fn v1switch_controls(blocks: &[&Decl], sink: &mut Sink) {
    const WHAT: [&str; 5] = [
        "checksum blocks must be controls",
        "ingress and egress must be controls",
        "ingress and egress must be controls",
        "checksum blocks must be controls",
        "the deparser must be a control",
    ];
    for (d, msg) in blocks[1..].iter().zip(WHAT) {
        if !matches!(d, Decl::Control { .. }) {
            sink.err(decl_span(d), msg);
        }
    }
}

/// An action listed twice in one table's `actions` (`{ set(hdr.a); set(hdr.b); }`) is
/// refused, as p4c does: its copies keep the action's name, which must name one action
/// per table for a control plane.
fn table_actions_once(prog: &Program, sink: &mut Sink) {
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            let mut seen = std::collections::HashSet::new();
            for a in &t.actions {
                if !seen.insert(a.name.as_str()) {
                    sink.err(
                        a.span,
                        format!(
                            "action '{}' is listed twice in the actions of table '{}'",
                            a.name, t.name
                        ),
                    );
                }
            }
        }
    }
}

/// The top-level parser's structure: no actions or tables among its locals, a `start`
/// state, state names declared once and not `accept` or `reject`.
fn parser_structure(d: &Decl, sink: &mut Sink) {
    let Decl::Parser {
        name,
        locals,
        states,
        ..
    } = d
    else {
        return;
    };
    for l in locals {
        match l {
            Local::Action(a) => sink.err(a.span, "actions are not allowed in parsers"),
            Local::Table(t) => sink.err(t.span, "tables are not allowed in parsers"),
            _ => {}
        }
    }
    if !states.iter().any(|s| s.name == "start") {
        sink.err(
            decl_span(d),
            format!("parser '{}' has no 'start' state", name),
        );
    }
    let mut seen = std::collections::HashSet::new();
    for st in states {
        if !seen.insert(st.name.as_str()) {
            sink.err(st.span, format!("state '{}' is declared twice", st.name));
        }
        if st.name == "accept" || st.name == "reject" {
            sink.err(st.span, format!("state '{}' is reserved", st.name));
        }
    }
}

/// Every table key's match kind is a declared `match_kind` (tables applied or not).
pub fn table_match_kinds(prog: &Program, declared: &[String], sink: &mut Sink) {
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            for k in &t.keys {
                if !declared.contains(&k.match_kind) {
                    sink.err(k.span, format!("unknown match kind '{}'", k.match_kind));
                }
            }
        }
    }
}

/// Names declared inside every parser and control, used or not (p4c checks them all;
/// lowering sees only what `main` reaches): each `transition` and `select` case names
/// a state of its own parser (or `accept`/`reject`), and a control declares each action
/// and each table once.
pub fn local_names(prog: &Program, sink: &mut Sink) {
    for d in &prog.decls {
        match d {
            Decl::Parser { states, .. } => {
                let names: std::collections::HashSet<&str> =
                    states.iter().map(|s| s.name.as_str()).collect();
                let known = |n: &str| n == "accept" || n == "reject" || names.contains(n);
                for st in states {
                    match &st.transition {
                        Some(Transition::Direct(n, sp)) if !known(n.as_str()) => {
                            sink.err(*sp, format!("unknown parser state '{}'", n));
                        }
                        Some(Transition::Select(_, cases, _)) => {
                            for c in cases.iter().filter(|c| !known(c.next.as_str())) {
                                sink.err(c.span, format!("unknown parser state '{}'", c.next));
                            }
                        }
                        _ => {}
                    }
                }
            }
            Decl::Control { locals, .. } => {
                let mut actions = std::collections::HashSet::new();
                let mut tables = std::collections::HashSet::new();
                for l in locals {
                    match l {
                        Local::Action(a) if !actions.insert(a.name.as_str()) => {
                            sink.err(a.span, format!("action '{}' is declared twice", a.name));
                        }
                        Local::Table(t) if !tables.insert(t.name.as_str()) => {
                            sink.err(t.span, format!("table '{}' is declared twice", t.name));
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// Every action a table names (its actions list, its default action, implicitly
/// `NoAction`, and the actions of its entries) is declared in its control or at the top
/// level, found as lowering finds it (a leading `.` skips the control's own actions).
/// Each reference gives the action's directional arguments (in the actions list exactly
/// those; a default action or an entry also its action data, counted too for the
/// default action).
pub fn table_action_names(prog: &Program, sink: &mut Sink) {
    let globals: std::collections::HashMap<&str, &Action> = prog
        .decls
        .iter()
        .filter_map(|d| match d {
            Decl::Action(a) => Some((a.name.as_str(), a)),
            _ => None,
        })
        .collect();
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        let local: std::collections::HashMap<&str, &Action> = locals
            .iter()
            .filter_map(|l| match l {
                Local::Action(a) => Some((a.name.as_str(), a)),
                _ => None,
            })
            .collect();
        let find = |name: &str, span: Span, sink: &mut Sink| {
            let n = name.trim_start_matches('.');
            let found = local
                .get(n)
                .filter(|_| !name.starts_with('.'))
                .or_else(|| globals.get(n))
                .copied();
            if found.is_none() {
                sink.err(span, format!("unknown action '{}'", name));
            }
            found
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            for ar in &t.actions {
                if let Some(a) = find(&ar.name, ar.span, sink) {
                    directional_args(a, ar.args.len(), ar.span, sink);
                }
            }
            match &t.default_action {
                Some((dref, _)) => {
                    if let Some(a) = find(&dref.name, dref.span, sink) {
                        let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
                        let given = dref.args.len();
                        if directional_args(a, given.min(ndir), dref.span, sink)
                            && given - ndir != a.params.len() - ndir
                        {
                            sink.err(
                                dref.span,
                                format!(
                                    "action '{}' expects {} argument(s), got {}",
                                    dref.name,
                                    a.params.len() - ndir,
                                    given - ndir
                                ),
                            );
                        }
                    }
                }
                None => {
                    find("NoAction", t.span, sink);
                }
            }
            for en in t.entries.iter().flat_map(|e| e.0.iter()) {
                if let Some(a) = find(&en.action.name, en.action.span, sink) {
                    let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
                    directional_args(a, en.action.args.len().min(ndir), en.action.span, sink);
                }
            }
        }
    }
}

/// Whether `given` arguments bind the directional parameters of `a`; reported if not.
fn directional_args(a: &Action, given: usize, span: Span, sink: &mut Sink) -> bool {
    let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
    if given != ndir {
        sink.err(
            span,
            format!(
                "action '{}' has {} directional parameter(s) but {} argument(s) are given here",
                a.name, ndir, given
            ),
        );
    }
    given == ndir
}
