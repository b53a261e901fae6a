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

/// The top-level parser's structure: no actions or tables among its locals, state
/// names declared once and not `accept` or `reject` (its `start` state: `local_names`).
fn parser_structure(d: &Decl, sink: &mut Sink) {
    let Decl::Parser { locals, states, .. } = d else {
        return;
    };
    for l in locals {
        match l {
            Local::Action(a) => sink.err(a.span, "actions are not allowed in parsers"),
            Local::Table(t) => sink.err(t.span, "tables are not allowed in parsers"),
            _ => {}
        }
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

/// Top-level functions overloaded by their parameters: P4 allows them, but lowering
/// resolves a callee by its name alone, so a second declaration is refused here (at that
/// declaration) instead of running or rejecting calls of the wrong one. Actions may not
/// share a name at all (p4c: "duplicates").
pub fn overloads(prog: &Program, sink: &mut Sink) {
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    for d in &prog.decls {
        let (name, span, function) = match d {
            Decl::Function { name, span, .. } => (name, span, true),
            Decl::Action(a) => (&a.name, &a.span, false),
            _ => continue,
        };
        if seen.insert(name.as_str()) {
            continue;
        }
        let msg = if function {
            format!("function '{name}' is declared more than once: overloaded functions are not supported by this compiler")
        } else {
            format!("action '{name}' is declared twice")
        };
        sink.err(*span, msg);
    }
}

/// Names declared inside every parser and control, used or not (p4c checks them all;
/// lowering sees only what `main` reaches): each `transition` and `select` case names
/// a state of its own parser (or `accept`/`reject`), and a control declares each action
/// and each table once.
pub fn local_names(prog: &Program, sink: &mut Sink) {
    for d in &prog.decls {
        match d {
            Decl::Parser {
                name,
                states,
                has_body,
                ..
            } => {
                // every parser (not a parser type), the sub-parsers others apply too
                if *has_body && !states.iter().any(|s| s.name == "start") {
                    sink.err(
                        decl_span(d),
                        format!("parser '{}' has no 'start' state", name),
                    );
                }
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
///
/// An explicit default action and each entry's action must also be one of the table's
/// actions, the same action with the same directional arguments (as lowering tells its
/// action copies apart: by `@name` or name, and the source text of those arguments).
pub fn table_action_names(prog: &Program, text: &str, sink: &mut Sink) {
    let globals = prog.global_actions();
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
        // which copy of an action a reference runs (see `action_copy`)
        let copy = |r: &ActionRef| {
            let n = r.name.trim_start_matches('.');
            let (a, global) = match local.get(n).filter(|_| !r.name.starts_with('.')) {
                Some(a) => (*a, false),
                None => (*globals.get(n)?, true),
            };
            Some(action_copy(a, global, &r.args, text))
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            let before = sink.errors.len();
            for ar in &t.actions {
                if let Some(a) = find(&ar.name, ar.span, sink) {
                    directional_args(a, ar.args.len(), ar.span, sink);
                }
            }
            // whether a reference is one of the listed copies, asked only when the list
            // and the reference resolved with their directional arguments (lowering
            // stops at those errors)
            let list_ok = sink.errors.len() == before;
            let mut listed: std::collections::HashSet<String> =
                t.actions.iter().filter_map(copy).collect();
            if t.default_action.is_none() {
                // lowering adds the implicit default NoAction to the table's actions
                // (default-only), so entries may run it
                listed.extend(copy(&ActionRef {
                    annos: vec![],
                    name: "NoAction".into(),
                    args: vec![],
                    span: t.span,
                }));
            }
            let unlisted = |r: &ActionRef| list_ok && copy(r).is_some_and(|c| !listed.contains(&c));
            match &t.default_action {
                Some((dref, _)) => {
                    let before = sink.errors.len();
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
                    if sink.errors.len() == before && unlisted(dref) {
                        sink.err(
                            dref.span,
                            format!(
                                "default action '{}' is not in the actions list of table '{}'",
                                dref.name, t.name
                            ),
                        );
                    }
                }
                None => {
                    find("NoAction", t.span, sink);
                }
            }
            for en in t.entries.iter().flat_map(|e| e.0.iter()) {
                let before = sink.errors.len();
                if let Some(a) = find(&en.action.name, en.action.span, sink) {
                    let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
                    let given = en.action.args.len();
                    // the action data: one value per directionless parameter
                    if directional_args(a, given.min(ndir), en.action.span, sink)
                        && given - ndir != a.params.len() - ndir
                    {
                        sink.err(
                            en.action.span,
                            format!(
                                "action '{}' expects {} argument(s), got {}",
                                en.action.name,
                                a.params.len() - ndir,
                                given - ndir
                            ),
                        );
                    }
                }
                if sink.errors.len() == before && unlisted(&en.action) {
                    sink.err(
                        en.action.span,
                        format!(
                            "action '{}' is not in the actions list of table '{}'",
                            en.action.name, t.name
                        ),
                    );
                }
            }
        }
    }
}

/// The copy of action `a` a table reference with arguments `args` runs, as lowering keys
/// its copies (`lower::table::get_action`): the `@name` (or the name; a control's own
/// action apart from a top-level one) and the source text of the arguments bound to the
/// directional parameters.
fn action_copy(a: &Action, global: bool, args: &[Arg], text: &str) -> String {
    let base = match anno_str(&a.annos, "name") {
        Some(n) => match n.strip_prefix('.') {
            Some(s) => s.to_string(),
            None if global => n,
            None => format!("<control>.{}", n),
        },
        None if global => a.name.clone(),
        None => format!("<control>.{}", a.name),
    };
    let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
    let bound: Vec<&str> = args
        .iter()
        .take(ndir)
        .map(|x| {
            let lo = (x.value.span.lo as usize).min(text.len());
            let hi = (x.value.span.hi as usize).min(text.len()).max(lo);
            text.get(lo..hi).unwrap_or("")
        })
        .collect();
    format!("{}|{}", base, bound.join(","))
}

/// Each const entry of every table has one key value per key (the `selector` keys
/// excepted: they feed the action selector), or a lone `_` for all of them.
pub fn table_entry_keys(prog: &Program, sink: &mut Sink) {
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            let nkeys = t.keys.iter().filter(|k| k.match_kind != "selector").count();
            for en in t.entries.iter().flat_map(|e| e.0.iter()) {
                let all_default =
                    en.keys.len() == 1 && nkeys > 1 && matches!(en.keys[0].kind, ExprKind::Default);
                if !all_default && en.keys.len() != nkeys {
                    sink.err(
                        en.span,
                        format!(
                            "entry has {} key value(s) but table '{}' has {} key(s)",
                            en.keys.len(),
                            t.name,
                            nkeys
                        ),
                    );
                }
            }
        }
    }
}

/// Every instance of a v1model extern has the constructor arguments lowering reads
/// (`lower::instances::declare_instance`): a size for `counter`, `meter`, `register`
/// and `action_profile`, an algorithm and a size for `action_selector` (an anonymous
/// one in a table's `implementation` too), and a `register` its value type. Instances at
/// the top level, among a parser's or control's locals, and in their bodies.
pub fn instance_arguments(prog: &Program, sink: &mut Sink) {
    type Found<'p> = Vec<(&'p str, &'p [TypeRef], usize, Span)>;
    let mut found: Found = vec![];
    fn inst<'p>(i: &'p Instance, found: &mut Found<'p>) {
        if let TypeRef::Named(n, targs, _) = &i.ty {
            found.push((n.as_str(), targs.as_slice(), i.args.len(), i.span));
        }
    }
    fn stmts<'p>(v: &'p [Stmt], out: &mut Vec<&'p Instance>) {
        for s in v {
            match &s.kind {
                StmtKind::Inst(i) => out.push(i),
                StmtKind::Block(b) => stmts(b, out),
                StmtKind::If(_, a, b) => {
                    stmts(std::slice::from_ref(a), out);
                    if let Some(b) = b {
                        stmts(std::slice::from_ref(b), out);
                    }
                }
                StmtKind::Switch(_, cases) => {
                    for c in cases.iter().filter_map(|c| c.body.as_ref()) {
                        stmts(std::slice::from_ref(c), out);
                    }
                }
                _ => {}
            }
        }
    }
    for d in &prog.decls {
        let mut nested: Vec<&Instance> = vec![];
        match d {
            Decl::Instance(i) => inst(i, &mut found),
            Decl::Control { locals, .. } | Decl::Parser { locals, .. } => {
                for l in locals {
                    match l {
                        Local::Inst(i) => nested.push(i),
                        Local::Var(s) => stmts(std::slice::from_ref(s), &mut nested),
                        Local::Action(a) => stmts(&a.body, &mut nested),
                        Local::Table(t) => {
                            for (p, e, _) in &t.props {
                                if let (true, ExprKind::Call(f, targs, args)) =
                                    (p == "implementation", &e.kind)
                                {
                                    if let ExprKind::Name(k) = &f.kind {
                                        if k == "action_selector" || k == "action_profile" {
                                            found.push((k, targs, args.len(), e.span));
                                        }
                                    }
                                }
                            }
                        }
                        Local::ValueSet { .. } => {}
                    }
                }
                match d {
                    Decl::Control { apply, .. } => stmts(apply, &mut nested),
                    Decl::Parser { states, .. } => {
                        for st in states {
                            stmts(&st.stmts, &mut nested);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        for i in nested {
            inst(i, &mut found);
        }
    }
    for (kind, targs, nargs, span) in found {
        let needed = match kind {
            "counter" | "meter" | "register" | "action_profile" => 1,
            "action_selector" => 2,
            _ => 0,
        };
        // in lowering's order: the size first
        if nargs < needed {
            sink.err(span, format!("missing constructor argument for {}", kind));
        }
        if kind == "register" && targs.is_empty() {
            sink.err(
                span,
                "register needs a type argument, e.g. register<bit<32>>(N)",
            );
        }
    }
}

/// The shape of every table's `implementation` (an instance's name, or an anonymous
/// `action_profile(...)`/`action_selector(...)`) and `counters`/`meters` (an instance's
/// name); what the names name is lowering's to resolve.
pub fn table_property_shapes(prog: &Program, sink: &mut Sink) {
    for d in &prog.decls {
        let Decl::Control { locals, .. } = d else {
            continue;
        };
        for l in locals {
            let Local::Table(t) = l else { continue };
            for (p, e, _) in &t.props {
                let named = matches!(e.kind, ExprKind::Name(_));
                match p.as_str() {
                    "implementation" => {
                        let anonymous = matches!(&e.kind, ExprKind::Call(f, _, _)
                            if matches!(&f.kind, ExprKind::Name(k)
                                if k == "action_selector" || k == "action_profile"));
                        if !named && !anonymous {
                            sink.err(
                                e.span,
                                "implementation must name an action_profile or action_selector instance",
                            );
                        }
                    }
                    "counters" | "meters" if !named => sink.err(
                        e.span,
                        "expected a direct_counter or direct_meter instance name",
                    ),
                    _ => {}
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
