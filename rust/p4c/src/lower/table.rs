//! Lowering of tables: actions, keys, entries.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn find_action(&self, name: &str) -> Option<(Action, bool)> {
        let n = name.trim_start_matches('.');
        if !name.starts_with('.') {
            if let Some(a) = self.ctl.as_ref().and_then(|c| c.actions.get(n)) {
                return Some((a.clone(), false));
            }
        }
        self.global_actions.get(n).map(|a| (a.clone(), true))
    }

    /// The BMv2 action for `a` in the current control with directional args bound.
    pub(super) fn get_action(
        &mut self,
        a: &Action,
        global: bool,
        bound: &[Arg],
        span: Span,
    ) -> PResult<usize> {
        let ctl = self
            .ctl
            .as_ref()
            .map(|c| c.name.clone())
            .unwrap_or_default();
        let base = match anno_str(&a.annos, "name") {
            Some(n) => {
                if let Some(s) = n.strip_prefix('.') {
                    s.to_string()
                } else if global {
                    n
                } else {
                    format!("{}.{}", ctl, n)
                }
            }
            None => {
                if global {
                    a.name.clone()
                } else {
                    format!("{}.{}", ctl, a.name)
                }
            }
        };
        let key = format!(
            "{}|{}",
            base,
            bound
                .iter()
                .map(|x| self.src(x.value.span))
                .collect::<Vec<_>>()
                .join(",")
        );
        if let Some(i) = self.action_cache.get(&key) {
            return Ok(*i);
        }
        let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
        if bound.len() != ndir {
            // sema::structure::table_action_names counts every table's arguments
            return Err(Error::new(
                span,
                format!(
                    "internal compiler error: action '{}' bound with {} of its {} directional argument(s) (not checked by sema)",
                    a.name,
                    bound.len(),
                    ndir
                ),
            ));
        }
        // lower the body
        let saved_ctx = self.ctx;
        let saved_act = self.act.take();
        self.ctx = Ctx::Action;
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.scopes.push(HashMap::new());
        let mut params = vec![];
        let mut res = Ok(());
        let mut bi = 0;
        let mut dir_pairs = vec![];
        for p in &a.params {
            let t = match self.env.resolve(&p.ty) {
                Ok(t) => t,
                Err(e) => {
                    res = Err(e);
                    break;
                }
            };
            if p.dir != Dir::None {
                dir_pairs.push((p.clone(), t, bound[bi].value.clone()));
                bi += 1;
            } else {
                let w = match t.width() {
                    Some(w) => w,
                    None => {
                        res = Err(Error::new(
                            p.span,
                            format!(
                                "internal compiler error: action parameter '{}' of type {} (checked by sema::tables::action_data_widths)",
                                p.name,
                                t.name()
                            ),
                        ));
                        break;
                    }
                };
                let idx = params.len();
                params.push((p.name.clone(), w, p.annos.clone()));
                self.bind(&p.name, Bind::Val(X::Runtime(idx), t));
            }
        }
        let mut outs = vec![];
        if res.is_ok() {
            match self.bind_params(a, &dir_pairs, span) {
                Ok((binds, o)) => {
                    binds.into_iter().for_each(|(n, b)| self.bind(&n, b));
                    outs = o;
                }
                Err(e) => res = Err(e),
            }
        }
        if res.is_ok() {
            let saved_frames = std::mem::replace(&mut self.copy_frames, vec![outs.clone()]);
            for s in &a.body {
                if let Err(e) = self.action_stmt(s) {
                    self.sink.push(e);
                }
            }
            self.copy_frames = saved_frames;
            // `return` jumps to the copy-outs
            if let Some(act) = self.act.as_mut() {
                patch_returns(act);
            }
            if let Err(e) = self.copy_outs(outs, span) {
                res = Err(e);
            }
        }
        self.scopes.pop();
        let mut act = std::mem::replace(&mut self.act, saved_act).unwrap();
        self.ctx = saved_ctx;
        res?;
        patch_returns(&mut act);
        let name = self.copy_name(&base, &a.name, &params);
        self.ir.actions.push(IrAction {
            name,
            decl: a.name.clone(),
            params,
            prims: act.prims,
            synthetic: false,
            annos: a.annos.clone(),
        });
        let idx = self.ir.actions.len() - 1;
        self.action_cache.insert(key, idx);
        Ok(idx)
    }

    /// The name of a new copy of action `decl` (one per binding of its directional
    /// parameters): as p4c does, every copy keeps the action's name, so a control plane
    /// finds it by that name in each table's action list (the copies share one P4Info
    /// action). Another action that happens to have that name (`@name` clashes) gets
    /// `base_1`, `base_2`, ... so one name never stands for actions with different
    /// parameters.
    fn copy_name(&self, base: &str, decl: &str, params: &[(String, u32, Annos)]) -> String {
        let same_action = |x: &IrAction| {
            x.decl == decl
                && x.params.len() == params.len()
                && x.params
                    .iter()
                    .zip(params)
                    .all(|(p, q)| p.0 == q.0 && p.1 == q.1)
        };
        let mut name = base.to_string();
        let mut k = 0;
        while self
            .ir
            .actions
            .iter()
            .any(|x| x.name == name && !same_action(x))
        {
            k += 1;
            name = format!("{}_{}", base, k);
        }
        name
    }

    pub(super) fn bind_arg(&mut self, p: &Param, t: &Type, arg: &Expr) -> PResult<Bind> {
        // an `in` header, struct or tuple is read through its location (bind_params makes
        // a copy when the body could tell the difference)
        let composite = matches!(
            t,
            Type::Header(_) | Type::Struct(_) | Type::Union(_) | Type::Tuple(_) | Type::Stack(..)
        );
        if p.dir == Dir::In && !composite {
            let (x, at) = self.rv(arg, Some(t))?;
            self.check_assign(t, &at, arg.span)?;
            if let X::Hex(v, _) = x {
                return Ok(Bind::Const(v, t.clone()));
            }
            return Ok(Bind::Val(x, t.clone()));
        }
        let pl = self.place(arg)?;
        let pt = pl.ty();
        if !types_compatible(t, &pt) {
            return Err(Error::new(
                arg.span,
                format!(
                    "internal compiler error: argument type {} for parameter '{}' of type {} (checked by sema::calls)",
                    pt.name(),
                    p.name,
                    t.name()
                ),
            ));
        }
        Ok(Bind::Place(pl))
    }

    pub(super) fn lower_table(&mut self, t: &Table, span: Span) -> PResult<String> {
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let fq = match anno_str(&t.annos, "name") {
            Some(n) => n
                .strip_prefix('.')
                .map(|s| s.to_string())
                .unwrap_or_else(|| format!("{}.{}", ctl, n)),
            None => format!("{}.{}", ctl, t.name),
        };
        self.key_prims.clear();
        if self.owner_of(&ctl) != ctl {
            return Err(Error::new(
                span,
                format!(
                    "table '{}' is applied more than once (control instance '{}' is applied more than once); BMv2 allows one application per table",
                    t.name,
                    self.owner_of(&ctl)
                ),
            ));
        }
        if !self.ctl.as_mut().unwrap().applied.insert(t.name.clone())
            || self.table_names.contains(&fq)
        {
            return Err(Error::new(
                span,
                format!(
                    "table '{}' is applied more than once; BMv2 allows one application per table",
                    t.name
                ),
            ));
        }
        self.table_names.insert(fq.clone());
        self.ctx = Ctx::Cond;
        // keys
        let mut keys = vec![];
        let mut selector_inputs = vec![];
        for k in &t.keys {
            // declared match kinds were checked by sema; here: the ones BMv2 runs
            let Some(kind) = MatchKind::from_name(&k.match_kind) else {
                self.err(
                    k.span,
                    format!("match kind '{}' is not supported on BMv2", k.match_kind),
                );
                continue;
            };
            let kname = anno_str(&k.annos, "name").unwrap_or_else(|| self.src(k.expr.span));
            // isValid() key
            let (target, width, kmask) = match self.key_target(&k.expr) {
                Ok(x) => x,
                Err(e) => {
                    self.sink.push(e);
                    continue;
                }
            };
            if kind == MatchKind::Selector {
                selector_inputs.push(CalcInput::Field(target.0, target.1));
                continue;
            }
            keys.push(IrKey {
                kind,
                target,
                name: kname,
                width,
                mask: kmask,
                annos: k.annos.clone(),
            });
        }
        let has = |m: MatchKind| keys.iter().any(|k| k.kind.bmv2() == m);
        if keys.iter().filter(|k| k.kind == MatchKind::Lpm).count() > 1 {
            self.err(t.span, "a table can have at most one lpm key");
        }
        let match_type = if has(MatchKind::Range) {
            MatchKind::Range
        } else if has(MatchKind::Ternary) {
            MatchKind::Ternary
        } else if has(MatchKind::Lpm) {
            MatchKind::Lpm
        } else {
            MatchKind::Exact
        };
        // actions
        let mut actions = vec![];
        let mut action_annos = vec![];
        for ar in &t.actions {
            let (a, global) = match self.find_action(&ar.name) {
                Some(x) => x,
                None => {
                    // sema::structure::table_action_names resolved every table's actions
                    self.internal(
                        ar.span,
                        format!("action '{}' not resolved by sema", ar.name),
                    );
                    continue;
                }
            };
            match self.get_action(&a, global, &ar.args, ar.span) {
                Ok(i) => {
                    if !actions.contains(&i) {
                        actions.push(i);
                        action_annos.push(ar.annos.clone());
                    }
                }
                Err(e) => self.sink.push(e),
            }
        }
        // default action
        let mut default = None;
        let da = t.default_action.clone();
        let (dref, dconst) = match &da {
            Some((r, c)) => (Some(r.clone()), *c),
            None => (None, false),
        };
        let dref = dref.unwrap_or(ActionRef {
            annos: vec![],
            name: "NoAction".into(),
            args: vec![],
            span: t.span,
        });
        if let Some((a, global)) = self.find_action(&dref.name) {
            let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
            let (bound, data) = dref.args.split_at(ndir.min(dref.args.len()));
            match self.get_action(&a, global, bound, dref.span) {
                Ok(i) => {
                    if !actions.contains(&i) {
                        // an implicit NoAction default joins the list as default-only;
                        // an explicit default must already be one of the table's actions
                        if t.default_action.is_some() {
                            // sema::structure::table_action_names checked it is listed
                            self.internal(
                                dref.span,
                                format!(
                                    "default action '{}' of table '{}' not listed (sema checks it)",
                                    dref.name, t.name
                                ),
                            );
                        }
                        actions.push(i);
                        action_annos.push(vec![Annotation {
                            name: "defaultonly".into(),
                            args: vec![],
                            span: dref.span,
                        }]);
                    }
                    let params = self.ir.actions[i].params.clone();
                    if data.len() != params.len() {
                        // sema::structure::table_action_names counts them
                        self.internal(
                            dref.span,
                            format!(
                                "default action '{}' given {} of its {} argument(s) (not checked by sema)",
                                dref.name,
                                data.len(),
                                params.len()
                            ),
                        );
                    } else {
                        let mut vals = vec![];
                        for (arg, (_, w, _)) in data.iter().zip(params.iter()) {
                            let v = self.const_of(&arg.value, &Type::Bit(*w));
                            vals.push(hexw(v, *w));
                        }
                        default = Some((i, vals, dconst));
                    }
                }
                Err(e) => self.sink.push(e),
            }
        } else {
            // sema::structure::table_action_names resolved it (`NoAction` included)
            self.internal(
                dref.span,
                format!("action '{}' not resolved by sema", dref.name),
            );
        }
        // size
        let size = match &t.size {
            Some(e) => self.const_of(e, &Type::InfInt) as u64,
            None => 1024,
        };
        // properties
        let mut kind = TableKind::Simple;
        let mut profile = None;
        let mut with_counters = false;
        let mut direct_meter = None;
        let mut support_timeout = false;
        for (p, e, psp) in &t.props {
            match p.as_str() {
                "implementation" => {
                    let n = match &e.kind {
                        ExprKind::Name(n) => n.clone(),
                        // an anonymous instance: `implementation = action_selector(...);`
                        ExprKind::Call(f, targs, args) if matches!(&f.kind, ExprKind::Name(k) if k == "action_selector" || k == "action_profile") =>
                        {
                            let ExprKind::Name(k) = &f.kind else {
                                unreachable!()
                            };
                            let local = format!("{}_ap", t.name);
                            let inst = Instance {
                                annos: vec![],
                                ty: TypeRef::Named(k.clone(), targs.clone(), f.span),
                                args: args.clone(),
                                name: local.clone(),
                                span: e.span,
                            };
                            let ctl_name = self
                                .ctl
                                .as_ref()
                                .map(|c| c.name.clone())
                                .unwrap_or_default();
                            self.declare_instance(&inst, &ctl_name);
                            local
                        }
                        _ => {
                            // sema::structure::table_property_shapes checked it
                            self.internal(
                                e.span,
                                "implementation of an unchecked shape (sema checks it)",
                            );
                            continue;
                        }
                    };
                    match self.lookup(&n) {
                        Some(Bind::Extern { kind: k, name })
                            if matches!(
                                k,
                                ExternKind::ActionProfile | ExternKind::ActionSelector
                            ) =>
                        {
                            kind = if k == ExternKind::ActionSelector {
                                TableKind::IndirectWs
                            } else {
                                TableKind::Indirect
                            };
                            if let Some(pr) = self.pipelines[pipe]
                                .profiles
                                .iter_mut()
                                .find(|x| x.name == name)
                            {
                                pr.tables.push(fq.clone());
                                if let Some((_, inputs)) = &mut pr.selector {
                                    *inputs = selector_inputs.clone();
                                }
                            }
                            profile = Some(name);
                        }
                        _ => self.internal(
                            e.span,
                            format!("implementation '{}' of another kind (checked by sema::tables::attachments)", n),
                        ),
                    }
                }
                "counters" | "meters" => {
                    let n = match &e.kind {
                        ExprKind::Name(n) => n.clone(),
                        _ => {
                            // sema::structure::table_property_shapes checked it
                            self.internal(
                                e.span,
                                "counters/meters of an unchecked shape (sema checks it)",
                            );
                            continue;
                        }
                    };
                    match self.lookup(&n) {
                        Some(Bind::Extern { kind: k, name })
                            if (k == ExternKind::DirectCounter && p == "counters")
                                || (k == ExternKind::DirectMeter && p == "meters") =>
                        {
                            let mut dup = false;
                            if let Some(arr) = self.ir.arrays.iter_mut().find(|x| x.name == name) {
                                dup = arr.direct_table.is_some();
                                arr.direct_table = Some(fq.clone());
                            }
                            if dup {
                                self.err(
                                    e.span,
                                    format!("'{}' is already attached to another table", n),
                                );
                            }
                            if p == "counters" {
                                with_counters = true;
                            } else {
                                direct_meter = Some(name);
                            }
                        }
                        _ => self.internal(
                            e.span,
                            format!(
                                "{} '{}' of another kind (checked by sema::tables::attachments)",
                                p, n
                            ),
                        ),
                    }
                }
                "support_timeout" => {
                    support_timeout = matches!(e.kind, ExprKind::Bool(true));
                }
                _ => {
                    let _ = psp;
                }
            }
        }
        for arr in self.ir.arrays.iter_mut() {
            if arr.direct_table.as_deref() == Some(fq.as_str()) {
                arr.size = size;
            }
        }
        if kind == TableKind::IndirectWs && selector_inputs.is_empty() {
            self.err(
                t.span,
                "a table with an action_selector needs at least one 'selector' key",
            );
        }
        if kind != TableKind::IndirectWs && !selector_inputs.is_empty() {
            self.internal(
                t.span,
                "'selector' keys without an action_selector (checked by sema::tables::attachments)",
            );
        }
        // const entries
        let mut entries = vec![];
        let mut const_entries = false;
        if let Some((es, _c)) = &t.entries {
            const_entries = true;
            for (ei, en) in es.iter().enumerate() {
                match self.lower_entry(t, &keys, &actions, en, ei) {
                    Ok(j) => entries.push(j),
                    Err(e) => self.sink.push(e),
                }
            }
        }
        let mut nt = BTreeMap::new();
        for a in &actions {
            nt.insert(self.ir.actions[*a].name.clone(), None);
        }
        self.pipelines[pipe].tables.push(IrTable {
            name: fq.clone(),
            keys,
            match_type,
            kind,
            profile,
            size,
            with_counters,
            direct_meter,
            actions,
            action_annos,
            next_tables: nt,
            default,
            entries,
            const_entries,
            synthetic: false,
            annos: t.annos.clone(),
            support_timeout,
        });
        Ok(fq)
    }

    pub(super) fn key_target(
        &mut self,
        e: &Expr,
    ) -> PResult<((String, String), u32, Option<u128>)> {
        if let ExprKind::Call(f, _, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "isValid" && args.is_empty() {
                    if let Place::Header { inst, .. } = self.place(b)? {
                        return Ok(((inst, "$valid$".to_string()), 1, None));
                    }
                }
            }
        }
        // a slice is computed into a temporary like any expression: the control plane gives
        // the slice's value, not the value at its position in the field (as p4c does)
        if let Ok(p) = self.place(e) {
            return match p {
                Place::Field { hdr, field, ty } => {
                    let w = ty.width().ok_or_else(|| {
                        Error::new(
                            e.span,
                            format!(
                                "internal compiler error: a key of type {} (checked by sema::tables)",
                                ty.name()
                            ),
                        )
                    })?;
                    Ok(((hdr, field), w, None))
                }
                Place::DynField { .. } | Place::DynHeader { .. } => Err(Error::new(
                    e.span,
                    "table keys with a run-time stack index are not supported (BMv2 matches fixed fields)",
                )),
                p => Err(Error::new(
                    e.span,
                    format!(
                        "internal compiler error: a table key of type {} (checked by sema::tables)",
                        p.ty().name()
                    ),
                )),
            };
        }
        // Any other expression: computed into a temporary just before the table.
        let made = self.pre_begin();
        let r = self.rv(e, None);
        self.pre_end(made);
        let (x, t) = r?;
        let w = match &t {
            Type::Bool => 1,
            t => match t.width() {
                Some(w) if *t != Type::InfInt => w,
                _ => {
                    return Err(Error::new(
                        e.span,
                        format!(
                        "internal compiler error: a table key of type {} (checked by sema::tables)",
                        t.name()
                    ),
                    ))
                }
            },
        };
        let x = self.to_data(x, &t);
        let tmp = self.scalar(&format!("key_{}", self.tmp_count), &Type::Bit(w));
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = tmp else {
            unreachable!()
        };
        self.key_prims.push(Prim {
            op: "assign".into(),
            params: vec![PrimArg::field(&hdr, &field), x.as_arg()],
            source: self.src(e.span),
        });
        Ok(((hdr, field), w, None))
    }

    /// If the table's keys needed temporaries, a synthetic table computing them
    /// runs first; returns the node to enter.
    pub(super) fn table_entry(&mut self, tn: &str) -> String {
        if self.key_prims.is_empty() {
            return tn.to_string();
        }
        let prims = std::mem::take(&mut self.key_prims);
        let ctl = self.ctl.as_ref().unwrap().name.clone();
        let pipe = self.ctl.as_ref().unwrap().pipe;
        let k = self.synth_count;
        self.synth_count += 1;
        let aname = format!("{}.key_act_{}", ctl, k);
        self.ir.actions.push(IrAction {
            name: aname.clone(),
            decl: String::new(),
            params: vec![],
            prims,
            synthetic: true,
            annos: vec![],
        });
        let aid = self.ir.actions.len() - 1;
        let tname = format!("tbl_key_{}", k);
        let mut nt = BTreeMap::new();
        nt.insert(aname, Some(tn.to_string()));
        self.pipelines[pipe]
            .tables
            .push(IrTable::synthetic(tname.clone(), aid, nt));
        tname
    }

    pub(super) fn lower_entry(
        &mut self,
        t: &Table,
        keys: &[IrKey],
        actions: &[usize],
        en: &Entry,
        ei: usize,
    ) -> PResult<TableEntry> {
        let keysets: Vec<&Expr> =
            if en.keys.len() == 1 && keys.len() > 1 && matches!(en.keys[0].kind, ExprKind::Default)
            {
                vec![&en.keys[0]; keys.len()]
            } else {
                en.keys.iter().collect()
            };
        if keysets.len() != keys.len() {
            // sema::structure::table_entry_keys counted them
            return Err(Error::new(
                en.span,
                format!(
                    "internal compiler error: entry has {} key value(s) but table '{}' has {} key(s) (sema counts them)",
                    keysets.len(),
                    t.name,
                    keys.len()
                ),
            ));
        }
        let mut mk = vec![];
        for (k, ks) in keys.iter().zip(keysets) {
            let w = k.width;
            let kt = Type::Bit(w);
            let j = match (k.kind, &ks.kind) {
                (MatchKind::Exact, ExprKind::Default) => {
                    return Err(Error::new(ks.span, "exact keys need a value"))
                }
                (MatchKind::Exact, _) => EntryKey::Exact(self.const_of(ks, &kt)),
                (MatchKind::Lpm, ExprKind::Default) => EntryKey::Lpm(0, 0),
                (MatchKind::Lpm, ExprKind::Mask(v, m)) => {
                    let v = self.const_of(v, &kt);
                    let m = self.const_of(m, &kt);
                    let pl = m.count_ones();
                    if m != shl(mask(pl), (w - pl) as u128) & mask(w) {
                        return Err(Error::new(ks.span, "lpm mask must be a prefix mask"));
                    }
                    EntryKey::Lpm(v & m, pl)
                }
                (MatchKind::Lpm, _) => EntryKey::Lpm(self.const_of(ks, &kt), w),
                (MatchKind::Ternary | MatchKind::Optional, ExprKind::Default) => {
                    EntryKey::Ternary(0, 0)
                }
                (MatchKind::Ternary, ExprKind::Mask(v, m)) => {
                    let v = self.const_of(v, &kt);
                    let m = self.const_of(m, &kt);
                    EntryKey::Ternary(v & m, m)
                }
                (MatchKind::Ternary | MatchKind::Optional, _) => {
                    EntryKey::Ternary(self.const_of(ks, &kt), mask(w))
                }
                (MatchKind::Range, ExprKind::Default) => EntryKey::Range(0, mask(w)),
                (MatchKind::Range, ExprKind::Range(a, b)) => {
                    let a = self.const_of(a, &kt);
                    let b = self.const_of(b, &kt);
                    EntryKey::Range(a, b)
                }
                (MatchKind::Range, _) => {
                    let v = self.const_of(ks, &kt);
                    EntryKey::Range(v, v)
                }
                (m, _) => {
                    return Err(Error::new(
                        ks.span,
                        format!("unsupported key kind '{}' in entries", m.name()),
                    ))
                }
            };
            mk.push((j, w));
        }
        let (a, global) = self.find_action(&en.action.name).ok_or_else(|| {
            // sema::structure::table_action_names resolved every entry's action
            Error::new(
                en.action.span,
                format!(
                    "internal compiler error: action '{}' not resolved by sema",
                    en.action.name
                ),
            )
        })?;
        let ndir = a.params.iter().filter(|p| p.dir != Dir::None).count();
        let (bound, data) = en.action.args.split_at(ndir.min(en.action.args.len()));
        let ai = self.get_action(&a, global, bound, en.action.span)?;
        if !actions.contains(&ai) {
            // sema::structure::table_action_names checked every entry's action is listed
            return Err(Error::new(
                en.action.span,
                format!(
                    "internal compiler error: entry action '{}' of table '{}' not listed (sema checks it)",
                    en.action.name, t.name
                ),
            ));
        }
        let params = self.ir.actions[ai].params.clone();
        arity(
            en.action.span,
            "action",
            &en.action.name,
            params.len(),
            data.len(),
        )?;
        let mut vals = vec![];
        for (arg, (_, w, _)) in data.iter().zip(params.iter()) {
            vals.push(hexw(self.const_of(&arg.value, &Type::Bit(*w)), *w));
        }
        let prio = match (&en.priority, anno_int(&en.annos, "priority")) {
            (Some(p), _) => self.const_of(p, &Type::InfInt) as u64,
            (None, Some(p)) => p as u64,
            _ => ei as u64 + 1,
        };
        Ok(TableEntry {
            source: self.src(en.span),
            keys: mk,
            action: ai,
            data: vals,
            priority: prio,
        })
    }
}
