//! Lowering of control apply blocks: the pipeline graph of tables and conditionals.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn lower_control(&mut self, d: &'a Decl, pipe: usize) {
        let Decl::Control {
            name,
            params,
            locals,
            apply,
            ..
        } = d
        else {
            return; // reported by sema::structure::v1switch
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        let init = match self.control_body(name, locals, apply, pipe, None) {
            Ok(i) => i,
            Err(e) => {
                self.sink.push(e);
                None
            }
        };
        self.pipelines[pipe].init = init;
        self.scopes.pop();
    }

    /// Declares the locals of a control named `name` (fully qualified), lowers its
    /// apply block and returns the entry node. Restores the enclosing control.
    pub(super) fn control_body(
        &mut self,
        name: &str,
        locals: &[Local],
        apply: &[Stmt],
        pipe: usize,
        next: Option<String>,
    ) -> PResult<Option<String>> {
        let saved = self.ctl.take();
        let mut info = CtlInfo {
            name: name.to_string(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            applied: HashSet::new(),
            pipe,
            ret: next.clone(),
        };
        self.ctl = Some(info.clone());
        self.scopes.push(HashMap::new());
        let mut init_stmts = vec![];
        for l in locals {
            match l {
                Local::Action(a) => {
                    // declared once: sema::structure::local_names
                    info.actions.insert(a.name.clone(), a.clone());
                }
                Local::Table(t) => {
                    // declared once: sema::structure::local_names
                    info.tables.insert(t.name.clone(), t.clone());
                    self.bind(&t.name, Bind::Table(t.name.clone()));
                }
                Local::Inst(i) => self.declare_instance(i, name),
                Local::Var(s) => match &s.kind {
                    StmtKind::Var(_, ty, n, init) => match self.env.resolve(ty) {
                        Ok(t) => {
                            let p = self.make_place(
                                "",
                                &format!("{}.{}", name, n),
                                t,
                                true,
                                &format!("{}_{}", name.replace('.', "_"), n),
                            );
                            self.bind(n, Bind::Place(p));
                            if let Some(i) = init {
                                init_stmts.push(Stmt {
                                    kind: StmtKind::Assign(
                                        Expr {
                                            kind: ExprKind::Name(n.clone()),
                                            span: s.span,
                                        },
                                        i.clone(),
                                    ),
                                    span: s.span,
                                });
                            }
                        }
                        Err(e) => self.sink.push(e),
                    },
                    StmtKind::Const(ty, n, v) => match self.env.resolve(ty) {
                        Ok(t) => match self.const_expr(v, Some(&t)) {
                            Ok(val) => self.bind(n, Bind::Const(val, t)),
                            Err(e) => self.sink.push(e),
                        },
                        Err(e) => self.sink.push(e),
                    },
                    _ => {}
                },
                Local::ValueSet { span, .. } => {
                    self.err(*span, "value sets are only allowed in parsers")
                }
            }
        }
        self.ctl = Some(info);
        self.ctx = Ctx::Cond;
        let mut body = init_stmts;
        body.extend(apply.iter().cloned());
        let r = self.ctl_seq(&body, next);
        self.scopes.pop();
        self.ctl = saved;
        r
    }

    /// `inst.apply(args)` where `inst` is an instance of another control: inline it.
    pub(super) fn control_call(
        &mut self,
        c: &Expr,
        next: Option<String>,
    ) -> PResult<Option<Option<String>>> {
        let ExprKind::Call(f, _, args) = &c.kind else {
            return Ok(None);
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return Ok(None);
        };
        if m != "apply" {
            return Ok(None);
        }
        let ExprKind::Name(n) = &b.kind else {
            return Ok(None);
        };
        let (kind, ctor) = match self.lookup(n) {
            Some(Bind::Extern { kind, name }) => (
                kind.name().to_string(),
                self.ctor_binds.get(&name).cloned().unwrap_or_default(),
            ),
            // direct invocation of a control type: `C.apply(...)`
            None if matches!(self.find_decl(n), Some(Decl::Control { .. })) => (n.clone(), vec![]),
            _ => return Ok(None),
        };
        let Some(Decl::Control {
            params,
            locals,
            apply,
            ..
        }) = self.find_decl(&kind)
        else {
            return Ok(None);
        };
        if self.inline_depth > 30 {
            return Err(Error::new(
                c.span,
                "controls call each other too deeply (recursion?)",
            ));
        }
        arity(c.span, "control", &kind, params.len(), args.len())?;
        let mut binds = vec![];
        for (p, a) in params.iter().zip(args) {
            let t = self.env.resolve(&p.ty)?;
            let mut pp = p.clone();
            if pp.dir == Dir::None {
                pp.dir = Dir::In;
            }
            binds.push((p.name.clone(), self.bind_arg(&pp, &t, &a.value)?));
        }
        let outer = self
            .ctl
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let pipe = self.ctl.as_ref().map(|c| c.pipe).unwrap_or(0);
        let base = format!("{}.{}", outer, n);
        let k = self.inlined.entry(base.clone()).or_insert(0);
        let fq = if *k == 0 {
            base.clone()
        } else {
            format!("{}_{}", base, k)
        };
        *k += 1;
        let owner = format!("{}.{}", self.owner_of(&outer), n);
        if owner != fq {
            self.state_owner.insert(fq.clone(), owner);
        }
        self.scopes.push(HashMap::new());
        for (k, b) in ctor.into_iter().chain(binds) {
            self.bind(&k, b);
        }
        self.inline_depth += 1;
        let r = self.control_body(&fq, locals, apply, pipe, next);
        self.inline_depth -= 1;
        self.scopes.pop();
        r.map(Some)
    }

    /// The control instance whose state (externs) the inlined control `ctl` uses: `ctl`
    /// itself, or for another application of an instance, its first one.
    pub(super) fn owner_of(&self, ctl: &str) -> String {
        self.state_owner
            .get(ctl)
            .cloned()
            .unwrap_or_else(|| ctl.to_string())
    }

    /// `c.apply(e)` where `c`'s parameter is `in bit<N> x`: the control must see the
    /// value `e` had at the call (copy-in), not `e` re-read after the control's own
    /// writes, so a non-constant argument becomes `bit<N> ctl_in_K = e;` before the call
    /// and the call takes `ctl_in_K`. (`inout`/`out` arguments stay bound to their
    /// location.)
    fn copy_in_control_args(&mut self, c: &Expr) -> Option<Stmt> {
        let ExprKind::Call(f, targs, args) = &c.kind else {
            return None;
        };
        let ExprKind::Member(b, m) = &f.kind else {
            return None;
        };
        let ExprKind::Name(n) = &b.kind else {
            return None;
        };
        if m != "apply" {
            return None;
        }
        let kind = match self.lookup(n) {
            Some(Bind::Extern { kind, .. }) => kind.name().to_string(),
            None => n.clone(),
            _ => return None,
        };
        let Some(Decl::Control {
            params,
            type_params,
            ..
        }) = self.find_decl(&kind)
        else {
            return None;
        };
        if !type_params.is_empty() || params.len() != args.len() {
            return None;
        }
        let mut pre = vec![];
        let mut new_args = args.clone();
        for (p, a) in params.iter().zip(new_args.iter_mut()) {
            let scalar = matches!(
                self.env.resolve(&p.ty),
                Ok(Type::Bit(_) | Type::Int(_) | Type::Bool)
            );
            let snapped = matches!(&a.value.kind, ExprKind::Name(x) if x.starts_with("ctl_in_"));
            let constant = matches!(a.value.kind, ExprKind::Int(..) | ExprKind::Bool(_));
            if !matches!(p.dir, Dir::In | Dir::None) || !scalar || snapped || constant {
                continue;
            }
            let tmp = format!("ctl_in_{}", self.tmp_count);
            self.tmp_count += 1;
            let sp = a.value.span;
            pre.push(Stmt {
                kind: StmtKind::Var(vec![], p.ty.clone(), tmp.clone(), Some(a.value.clone())),
                span: sp,
            });
            a.value = Expr {
                kind: ExprKind::Name(tmp),
                span: sp,
            };
        }
        if pre.is_empty() {
            return None;
        }
        let call = Expr {
            kind: ExprKind::Call(f.clone(), targs.clone(), new_args),
            span: c.span,
        };
        pre.push(Stmt {
            kind: StmtKind::Call(call),
            span: c.span,
        });
        Some(Stmt {
            kind: StmtKind::Block(pre),
            span: c.span,
        })
    }

    pub(super) fn new_node_name(&mut self) -> String {
        let n = format!("node_{}", self.node_count);
        self.node_count += 1;
        n
    }

    pub(super) fn is_simple(&self, s: &Stmt) -> bool {
        match &s.kind {
            StmtKind::Assign(_, r) => !self.has_apply(r),
            StmtKind::Call(c) => !self.has_apply(c),
            StmtKind::Var(_, _, _, i) => i.as_ref().map(|e| !self.has_apply(e)).unwrap_or(true),
            StmtKind::Const(..) | StmtKind::Empty => true,
            _ => false,
        }
    }

    pub(super) fn has_apply(&self, e: &Expr) -> bool {
        match &e.kind {
            ExprKind::Call(f, _, args) => {
                if let ExprKind::Member(b, m) = &f.kind {
                    if m == "apply" {
                        return true;
                    }
                    if self.has_apply(b) {
                        return true;
                    }
                }
                args.iter().any(|a| self.has_apply(&a.value))
            }
            ExprKind::Member(b, _) => self.has_apply(b),
            ExprKind::Unary(_, x) => self.has_apply(x),
            ExprKind::Binary(_, a, b) => self.has_apply(a) || self.has_apply(b),
            ExprKind::Ternary(a, b, c) => {
                self.has_apply(a) || self.has_apply(b) || self.has_apply(c)
            }
            _ => false,
        }
    }

    /// `if (t.apply().hit && c) ...` and `x = t.apply().hit ? a : b;`: a table applied as
    /// the first thing an `if` condition or an assignment's value evaluates becomes
    /// `bool tmp; if (t.apply().hit) { tmp = true; } else { tmp = false; }` before the
    /// statement, which then reads `tmp` (the order of evaluation is unchanged, as nothing
    /// is evaluated before the table). Applications in later operands stay refused: they
    /// run only when the operands before them allow it.
    fn hoist_table_hit(&mut self, s: &Stmt) -> Option<Stmt> {
        let tmp = format!("tbl_hit_{}", self.tmp_count);
        let (hit, rewritten) = match &s.kind {
            StmtKind::If(cond, a, b) => {
                let plain = match &cond.kind {
                    ExprKind::Unary("!", x) => &**x,
                    _ => cond,
                };
                if leftmost_table_hit(plain).is_some_and(|h| h == *plain) {
                    return None; // `if (t.apply().hit)` is a table node with two successors
                }
                let h = leftmost_table_hit(cond)?;
                let c = leftmost_table_hit_replaced(cond, &tmp)?;
                (h, StmtKind::If(c, a.clone(), b.clone()))
            }
            StmtKind::Assign(l, r) if !self.has_apply(l) && !has_index(l) => {
                let h = leftmost_table_hit(r)?;
                let r = leftmost_table_hit_replaced(r, &tmp)?;
                (h, StmtKind::Assign(l.clone(), r))
            }
            _ => return None,
        };
        self.tmp_count += 1;
        let sp = s.span;
        let e = |kind| Expr { kind, span: sp };
        let st = |kind| Stmt { kind, span: sp };
        let set = |v| {
            Box::new(st(StmtKind::Assign(
                e(ExprKind::Name(tmp.clone())),
                e(ExprKind::Bool(v)),
            )))
        };
        Some(st(StmtKind::Block(vec![
            st(StmtKind::Var(vec![], TypeRef::Bool, tmp.clone(), None)),
            st(StmtKind::If(hit, set(true), Some(set(false)))),
            st(rewritten),
        ])))
    }

    /// Table applications that are not evaluated first but sit under `&&`, `||`, `?:` or
    /// `!` become control flow, which evaluates them exactly when the operator does:
    /// `l = a || e` is `if (a) { l = true; } else { l = e; }`, `l = a && e` is
    /// `if (a) { l = e; } else { l = false; }`, `l = c ? x : y` is `if (c) { l = x; } else
    /// { l = y; }`, `l = !e` is `if (e) { l = false; } else { l = true; }`; a condition
    /// `if (e) ..` of that kind goes through `bool tmp = e; if (tmp) ..`. The target `l`
    /// is written last either way, so it must not read anything the table may change
    /// (no run-time index).
    fn desugar_table_in_expr(&mut self, s: &Stmt) -> Option<Stmt> {
        let sp = s.span;
        let e = |kind| Expr { kind, span: sp };
        let st = |kind| Stmt { kind, span: sp };
        let branches = |c: &Expr, a: Stmt, b: Stmt| {
            st(StmtKind::If(c.clone(), Box::new(a), Some(Box::new(b))))
        };
        let shaped = |x: &Expr| {
            matches!(
                &x.kind,
                ExprKind::Binary("||" | "&&", ..) | ExprKind::Ternary(..) | ExprKind::Unary("!", _)
            )
        };
        match &s.kind {
            // `if (!t.apply().hit)` is a table node with two successors
            StmtKind::If(cond, a, b)
                if self.has_apply(cond)
                    && shaped(cond)
                    && !matches!(&cond.kind, ExprKind::Unary("!", x) if is_table_hit(x)) =>
            {
                let tmp = format!("tbl_cond_{}", self.tmp_count);
                self.tmp_count += 1;
                let name = e(ExprKind::Name(tmp.clone()));
                Some(st(StmtKind::Block(vec![
                    st(StmtKind::Var(vec![], TypeRef::Bool, tmp, None)),
                    st(StmtKind::Assign(name.clone(), cond.clone())),
                    st(StmtKind::If(name, a.clone(), b.clone())),
                ])))
            }
            StmtKind::Assign(l, r)
                if self.has_apply(r) && !self.has_apply(l) && !has_index(l) && shaped(r) =>
            {
                let set = |v: Expr| st(StmtKind::Assign(l.clone(), v));
                let lit = |v| e(ExprKind::Bool(v));
                Some(match &r.kind {
                    ExprKind::Binary("||", a, b) => branches(a, set(lit(true)), set((**b).clone())),
                    ExprKind::Binary("&&", a, b) => {
                        branches(a, set((**b).clone()), set(lit(false)))
                    }
                    ExprKind::Unary("!", x) => branches(x, set(lit(false)), set(lit(true))),
                    ExprKind::Ternary(c, a, b) => {
                        branches(c, set((**a).clone()), set((**b).clone()))
                    }
                    _ => return None,
                })
            }
            _ => None,
        }
    }

    /// Lower a statement sequence of an apply block; returns the entry node.
    pub(super) fn ctl_seq(
        &mut self,
        stmts: &[Stmt],
        next: Option<String>,
    ) -> PResult<Option<String>> {
        // cut at the first exit/return: what follows is dead
        let end = stmts
            .iter()
            .position(|s| matches!(s.kind, StmtKind::Exit | StmtKind::Return(_)))
            .map(|i| i + 1)
            .unwrap_or(stmts.len());
        let stmts = &stmts[..end];
        self.scopes.push(HashMap::new());
        // declare locals first
        let mut body: Vec<Stmt> = vec![];
        for s in stmts {
            match &s.kind {
                StmtKind::Var(_, ty, n, init) => {
                    let t = self.env.resolve(ty)?;
                    self.bind_local(&self.ctl_name(), n, t);
                    if let Some(i) = init {
                        body.push(Stmt {
                            kind: StmtKind::Assign(
                                Expr {
                                    kind: ExprKind::Name(n.clone()),
                                    span: s.span,
                                },
                                i.clone(),
                            ),
                            span: s.span,
                        });
                    }
                }
                StmtKind::Const(ty, n, v) => {
                    let t = self.env.resolve(ty)?;
                    let val = self.const_expr(v, Some(&t))?;
                    self.bind(n, Bind::Const(val, t));
                }
                _ => body.push(s.clone()),
            }
        }
        let mut cur = next;
        let mut i = body.len();
        let mut result = Ok(());
        while i > 0 {
            let s = &body[i - 1];
            if matches!(s.kind, StmtKind::Exit) {
                // exit: stop this control (the primitive also marks the packet)
                cur = Some(self.synth_table(&body[i - 1..i], None)?);
                i -= 1;
                continue;
            }
            if matches!(s.kind, StmtKind::Return(_)) {
                cur = self.ctl.as_ref().and_then(|c| c.ret.clone());
                i -= 1;
                continue;
            }
            if self.is_simple(s) {
                let mut j = i - 1;
                while j > 0 && self.is_simple(&body[j - 1]) {
                    j -= 1;
                }
                let run: Vec<Stmt> = body[j..i]
                    .iter()
                    .filter(|s| !matches!(s.kind, StmtKind::Empty))
                    .cloned()
                    .collect();
                if !run.is_empty() {
                    match self.synth_table(&run, cur.clone()) {
                        Ok(n) => cur = Some(n),
                        Err(e) => {
                            result = Err(e);
                            break;
                        }
                    }
                }
                i = j;
                continue;
            }
            match self.ctl_stmt(s, cur.clone()) {
                Ok(n) => cur = n,
                Err(e) => {
                    self.sink.push(e);
                }
            }
            i -= 1;
        }
        self.scopes.pop();
        result.map(|_| cur)
    }

    pub(super) fn ctl_stmt(&mut self, s: &Stmt, next: Option<String>) -> PResult<Option<String>> {
        if let Some(s) = self.hoist_table_hit(s) {
            return self.ctl_stmt(&s, next);
        }
        if let Some(s) = self.desugar_table_in_expr(s) {
            return self.ctl_stmt(&s, next);
        }
        match &s.kind {
            StmtKind::Block(v) => self.ctl_seq(v, next),
            StmtKind::Call(c) => {
                if let Some(s2) = self.copy_in_control_args(c) {
                    return self.ctl_stmt(&s2, next);
                }
                if let Some(entry) = self.control_call(c, next.clone())? {
                    return Ok(entry);
                }
                if let Some(t) = self.table_apply(c)? {
                    let tn = self.lower_table(&t, c.span)?;
                    let entry = self.table_entry(&tn);
                    self.set_next_all(&tn, next);
                    return Ok(Some(entry));
                }
                Err(Error::new(c.span, "unsupported call in apply block"))
            }
            StmtKind::If(cond, a, b) => {
                // t.apply().hit / .miss
                let (neg, inner) = match &cond.kind {
                    ExprKind::Unary("!", x) => (true, &**x),
                    _ => (false, cond),
                };
                if let ExprKind::Member(call, m) = &inner.kind {
                    if m == "hit" || m == "miss" {
                        if let Some(t) = self.table_apply(call)? {
                            let tn = self.lower_table(&t, call.span)?;
                            let entry = self.table_entry(&tn);
                            let tb = self.ctl_seq(std::slice::from_ref(a), next.clone())?;
                            let fb = match b {
                                Some(b) => self.ctl_seq(std::slice::from_ref(b), next.clone())?,
                                None => next.clone(),
                            };
                            let hit_first = (m == "hit") != neg;
                            let (h, ms) = if hit_first { (tb, fb) } else { (fb, tb) };
                            let pipe = self.ctl.as_ref().unwrap().pipe;
                            if let Some(t) = self.pipelines[pipe]
                                .tables
                                .iter_mut()
                                .find(|x| x.name == tn)
                            {
                                t.next_tables.clear();
                                t.next_tables.insert("__HIT__".into(), h);
                                t.next_tables.insert("__MISS__".into(), ms);
                            }
                            return Ok(Some(entry));
                        }
                    }
                }
                if self.has_apply(cond) {
                    return Err(Error::new(cond.span, "a table application inside a condition must be the first thing it evaluates (`if (t.apply().hit && c)`) or be an operand of `&&`, `||`, `?:` or `!`; apply the table in a statement of its own before this one"));
                }
                let tb = self.ctl_seq(std::slice::from_ref(a), next.clone())?;
                let fb = match b {
                    Some(b) => self.ctl_seq(std::slice::from_ref(b), next.clone())?,
                    None => next.clone(),
                };
                self.ctx = Ctx::Cond;
                self.key_prims.clear();
                let made = self.pre_begin();
                let r = self.rv(cond, Some(&Type::Bool));
                self.pre_end(made);
                let (x, t) = r?;
                if t != Type::Bool {
                    return Err(Error::new(
                        cond.span,
                        format!(
                            "internal compiler error: condition must be bool, not {} (checked by sema::exprs)",
                            t.name()
                        ),
                    ));
                }
                let name = self.new_node_name();
                let pipe = self.ctl.as_ref().unwrap().pipe;
                let id = self
                    .pipelines
                    .iter()
                    .map(|p| p.conditionals.len())
                    .sum::<usize>();
                let frag = self.src(cond.span);
                self.pipelines[pipe].conditionals.push(Conditional {
                    name: name.clone(),
                    id,
                    source: frag,
                    expr: x,
                    true_next: tb,
                    false_next: fb,
                });
                Ok(Some(self.table_entry(&name)))
            }
            StmtKind::Switch(e, cases) => {
                let call = match &e.kind {
                    ExprKind::Member(c, m) if m == "action_run" => c,
                    _ => {
                        let s2 = desugar_switch(e, cases, s.span)?;
                        return self.ctl_stmt(&s2, next);
                    }
                };
                let t = match self.table_apply(call)? {
                    Some(t) => t,
                    // sema::bodies checked the shape `n.apply()` in every apply block
                    None => {
                        return Err(Error::new(
                            e.span,
                            "internal compiler error: switch on action_run without a table application (sema checks it)",
                        ))
                    }
                };
                let tn = self.lower_table(&t, call.span)?;
                let entry = self.table_entry(&tn);
                let pipe = self.ctl.as_ref().unwrap().pipe;
                let table_actions: Vec<(usize, String)> = {
                    let tab = self.pipelines[pipe]
                        .tables
                        .iter()
                        .find(|x| x.name == tn)
                        .unwrap();
                    tab.actions
                        .iter()
                        .map(|a| (*a, self.ir.actions[*a].name.clone()))
                        .collect()
                };
                let mut map: BTreeMap<String, Option<String>> = BTreeMap::new();
                let mut default_next = next.clone();
                let mut pending: Vec<&Expr> = vec![];
                for c in cases {
                    pending.push(&c.label);
                    let body = match &c.body {
                        Some(b) => b,
                        None => continue,
                    };
                    let entry = self.ctl_seq(std::slice::from_ref(body), next.clone())?;
                    for l in pending.drain(..) {
                        match &l.kind {
                            ExprKind::Default => default_next = entry.clone(),
                            ExprKind::Name(an) => {
                                let found = table_actions
                                    .iter()
                                    .find(|(i, _)| self.ir.actions[*i].decl == *an);
                                match found {
                                    Some((_, n)) => {
                                        map.insert(n.clone(), entry.clone());
                                    }
                                    // sema::bodies checked the labels against the table
                                    None => self.internal(
                                        l.span,
                                        format!("'{}' is not an action of table '{}' (not checked by sema)", an, t.name),
                                    ),
                                }
                            }
                            _ => self.internal(
                                l.span,
                                "switch label that is no action name (not checked by sema)",
                            ),
                        }
                    }
                }
                for (_, n) in &table_actions {
                    map.entry(n.clone()).or_insert_with(|| default_next.clone());
                }
                if let Some(tab) = self.pipelines[pipe]
                    .tables
                    .iter_mut()
                    .find(|x| x.name == tn)
                {
                    tab.next_tables = map;
                }
                Ok(Some(entry))
            }
            StmtKind::Empty => Ok(next),
            StmtKind::Assign(l, r) if self.has_apply(r) => Err(Error::new(
                if has_index(l) { l.span } else { r.span },
                if has_index(l) {
                    "an assignment of a table application's result cannot have a run-time stack index in its target (the table may change it); assign to a local variable first"
                } else {
                    "a table application in a value must be evaluated first or be an operand of `&&`, `||`, `?:` or `!`; apply the table in a statement of its own before this one"
                },
            )),
            _ => Err(Error::new(s.span, "unsupported statement in apply block")),
        }
    }

    pub(super) fn set_next_all(&mut self, tn: &str, next: Option<String>) {
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let names: Vec<String> = {
            let t = self.pipelines[pipe]
                .tables
                .iter()
                .find(|x| x.name == tn)
                .unwrap();
            t.actions
                .iter()
                .map(|a| self.ir.actions[*a].name.clone())
                .collect()
        };
        if let Some(t) = self.pipelines[pipe]
            .tables
            .iter_mut()
            .find(|x| x.name == tn)
        {
            t.next_tables.clear();
            for n in names {
                t.next_tables.insert(n, next.clone());
            }
        }
    }

    /// If `e` is `t.apply()`, the table declaration.
    pub(super) fn table_apply(&mut self, e: &Expr) -> PResult<Option<Table>> {
        if let ExprKind::Call(f, _, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "apply" {
                    if let ExprKind::Name(n) = &b.kind {
                        if let Some(Bind::Table(tn)) = self.lookup(n) {
                            if !args.is_empty() {
                                // sema::bodies counts the arguments of every t.apply()
                                return Err(Error::new(
                                    e.span,
                                    "internal compiler error: table apply() with arguments (not checked by sema)",
                                ));
                            }
                            let t = self.ctl.as_ref().and_then(|c| c.tables.get(&tn).cloned());
                            return Ok(t);
                        }
                        if let Some(Bind::Extern { kind, .. }) = self.lookup(n) {
                            if let Some(Decl::Control { .. }) = self.find_decl(kind.name()) {
                                return Err(Error::new(
                                    e.span,
                                    "calling other controls is not supported by this compiler yet",
                                ));
                            }
                        }
                        // sema::bodies checks what an apply block applies
                        return Err(Error::new(
                            b.span,
                            format!("internal compiler error: '{}' is not a table (not checked by sema)", n),
                        ));
                    }
                }
            }
        }
        Ok(None)
    }

    pub(super) fn synth_table(&mut self, run: &[Stmt], next: Option<String>) -> PResult<String> {
        self.ctx = Ctx::Action;
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        for s in run {
            if let Err(e) = self.action_stmt(s) {
                self.sink.push(e);
            }
        }
        let a = self.act.take().unwrap();
        self.ctx = Ctx::Cond;
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let k = self.synth_count;
        self.synth_count += 1;
        let aname = if k == 0 {
            format!("{}.act", ctl)
        } else {
            format!("{}.act_{}", ctl, k)
        };
        self.ir.actions.push(IrAction {
            name: aname,
            decl: String::new(),
            params: vec![],
            prims: a.prims,
            synthetic: true,
            annos: vec![],
        });
        let aid = self.ir.actions.len() - 1;
        let tname = if k == 0 {
            "tbl_act".to_string()
        } else {
            format!("tbl_act_{}", k)
        };
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let mut nt = BTreeMap::new();
        nt.insert(self.ir.actions[aid].name.clone(), next);
        self.pipelines[pipe]
            .tables
            .push(IrTable::synthetic(tname.clone(), aid, nt));
        Ok(tname)
    }
}

/// The `t.apply().hit`/`.miss` that `e` evaluates first, if any: only left operands,
/// conditions of `?:`, operands of unary operators and casts and a function's first
/// argument are evaluated before everything else in `e`.
fn leftmost_table_hit(e: &Expr) -> Option<Expr> {
    match &e.kind {
        ExprKind::Member(c, m) if (m == "hit" || m == "miss") && is_apply_call(c) => {
            Some(e.clone())
        }
        ExprKind::Binary(_, l, _) => leftmost_table_hit(l),
        ExprKind::Ternary(c, _, _) => leftmost_table_hit(c),
        ExprKind::Unary(_, x) | ExprKind::Cast(_, x) => leftmost_table_hit(x),
        // a function's first argument (`f(t.apply().hit ? 1 : 2)`)
        ExprKind::Call(f, _, args) if matches!(f.kind, ExprKind::Name(_)) => {
            leftmost_table_hit(&args.first()?.value)
        }
        _ => None,
    }
}

/// `e` with its first-evaluated `t.apply().hit` (or `.miss`) replaced by `tmp`, which
/// holds that value.
fn leftmost_table_hit_replaced(e: &Expr, tmp: &str) -> Option<Expr> {
    let kind = match &e.kind {
        ExprKind::Member(c, m) if (m == "hit" || m == "miss") && is_apply_call(c) => {
            return Some(Expr {
                kind: ExprKind::Name(tmp.to_string()),
                span: e.span,
            });
        }
        ExprKind::Binary(op, l, r) => ExprKind::Binary(
            op,
            Box::new(leftmost_table_hit_replaced(l, tmp)?),
            r.clone(),
        ),
        ExprKind::Ternary(c, a, b) => ExprKind::Ternary(
            Box::new(leftmost_table_hit_replaced(c, tmp)?),
            a.clone(),
            b.clone(),
        ),
        ExprKind::Unary(op, x) => {
            ExprKind::Unary(op, Box::new(leftmost_table_hit_replaced(x, tmp)?))
        }
        ExprKind::Cast(t, x) => {
            ExprKind::Cast(t.clone(), Box::new(leftmost_table_hit_replaced(x, tmp)?))
        }
        ExprKind::Call(f, targs, args) if matches!(f.kind, ExprKind::Name(_)) => {
            let mut args = args.clone();
            let first = args.first_mut()?;
            first.value = leftmost_table_hit_replaced(&first.value, tmp)?;
            ExprKind::Call(f.clone(), targs.clone(), args)
        }
        _ => return None,
    };
    Some(Expr { kind, span: e.span })
}

/// `t.apply().hit` or `t.apply().miss`.
fn is_table_hit(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Member(c, m) if (m == "hit" || m == "miss") && is_apply_call(c))
}

fn is_apply_call(c: &Expr) -> bool {
    matches!(&c.kind, ExprKind::Call(f, _, args)
        if args.is_empty() && matches!(&f.kind, ExprKind::Member(_, m) if m == "apply"))
}

/// Whether the location `e` has a stack index that is not a literal (evaluated at run time).
fn has_index(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Index(b, i) => !matches!(i.kind, ExprKind::Int(..)) || has_index(b),
        ExprKind::Member(b, _) | ExprKind::Slice(b, _, _) => has_index(b),
        _ => false,
    }
}
