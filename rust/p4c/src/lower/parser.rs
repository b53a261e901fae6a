//! Lowering of parsers: states, select transitions, sub-parsers, lookahead.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn lower_parser(&mut self, d: &'a Decl) {
        let Decl::Parser {
            name,
            params,
            locals,
            states,
            ..
        } = d
        else {
            return;
        };
        self.scopes.push(HashMap::new());
        self.bind_block_params(params);
        self.ctx = Ctx::Parser;
        self.ctl = Some(CtlInfo {
            name: name.clone(),
            actions: HashMap::new(),
            tables: HashMap::new(),
            applied: HashSet::new(),
            pipe: 0,
            ret: None,
        });
        let mut init_ops = vec![];
        for l in locals {
            match l {
                Local::Var(s) => {
                    self.act = Some(ActionCtx {
                        prims: vec![],
                        returns: vec![],
                    });
                    let ops = self.parser_stmt(s, name);
                    init_ops.extend(ops);
                }
                Local::Inst(i) => self.declare_instance(i, name),
                Local::ValueSet {
                    annos,
                    ty,
                    size,
                    name: vn,
                    span,
                } => {
                    let t = match self.env.resolve(ty) {
                        Ok(t) => t,
                        Err(e) => {
                            self.sink.push(e);
                            continue;
                        }
                    };
                    let (w, fields) = match &t {
                        Type::Struct(sn) => {
                            let fs: Vec<(String, u32)> = self
                                .env
                                .composite(sn)
                                .map(|c| {
                                    c.fields
                                        .iter()
                                        .map(|f| (f.0.clone(), f.1.width().unwrap_or(0)))
                                        .collect()
                                })
                                .unwrap_or_default();
                            (fs.iter().map(|f| f.1).sum(), fs)
                        }
                        t => (t.width().unwrap_or(0), vec![]),
                    };
                    if w == 0 {
                        self.internal(
                            *span,
                            "value_set element type without a width (checked by sema::parsers::value_set_types)",
                        );
                    }
                    let sz = self
                        .env
                        .const_eval(size, &HashMap::new())
                        .map(|x| x.0 as u64)
                        .unwrap_or(0);
                    let fq = format!("{}.{}", name, vn);
                    self.ir.value_sets.push(ValueSetInfo {
                        name: fq.clone(),
                        width: w,
                        size: sz,
                        annos: annos.clone(),
                        fields,
                    });
                    self.bind(vn, Bind::ValueSet(fq));
                }
                // reported by sema::structure::v1switch
                Local::Action(_) | Local::Table(_) => {}
            }
        }
        let names: HashSet<&str> = states.iter().map(|s| s.name.as_str()).collect();
        self.pstate_prefix = String::new();
        self.pstate_accept = None;
        self.parser_states(name, states, &names, init_ops);
        self.ir.parser_init = "start".into();
        self.act = None;
        self.scopes.pop();
        self.ctl = None;
    }

    /// Lowers the states of a parser whose state names get `self.pstate_prefix`
    /// and whose `accept` continues at `self.pstate_accept`. Sub-parser calls
    /// split a state: the sub-parser's states are inlined (prefixed with the
    /// instance name) and its accept continues with the rest of the state.
    pub(super) fn parser_states(
        &mut self,
        pname: &str,
        states: &'a [ParserState],
        names: &HashSet<&str>,
        init_ops: Vec<ParserOp>,
    ) {
        for st in states.iter() {
            self.scopes.push(HashMap::new());
            let mut cur = format!("{}{}", self.pstate_prefix, st.name);
            let mut ops = if st.name == "start" {
                init_ops.clone()
            } else {
                vec![]
            };
            let mut k = 0;
            for s in &st.stmts {
                match self.subparser_call(s) {
                    Ok(Some((sub_states, sub_params, inst, args))) => {
                        let cont = format!(
                            "{}.after_{}{}",
                            cur,
                            inst,
                            if k == 0 {
                                String::new()
                            } else {
                                format!("_{}", k)
                            }
                        );
                        k += 1;
                        let sub_prefix = self.subparser_prefix(&inst);
                        let id = self.ir.parser_states.len();
                        self.ir.parser_states.push(ParseState {
                            name: cur.clone(),
                            id,
                            ops,
                            key: vec![],
                            transitions: vec![ParserTransition {
                                value: TransitionValue::Default,
                                next: Some(format!("{}start", sub_prefix)),
                            }],
                        });
                        // bind the sub-parser's parameters
                        self.scopes.push(HashMap::new());
                        let mut ok = true;
                        for (p, a) in sub_params.iter().zip(args.iter()) {
                            let t = match self.env.resolve(&p.ty) {
                                Ok(t) => t,
                                Err(e) => {
                                    self.sink.push(e);
                                    ok = false;
                                    break;
                                }
                            };
                            if matches!(&t, Type::Extern(n) if n == "packet_in") {
                                self.bind(&p.name, Bind::PacketIn);
                                continue;
                            }
                            let mut pp = p.clone();
                            if pp.dir == Dir::None {
                                pp.dir = Dir::In;
                            }
                            match self.bind_arg(&pp, &t, &a.value) {
                                Ok(b) => self.bind(&p.name, b),
                                Err(e) => {
                                    self.sink.push(e);
                                    ok = false;
                                }
                            }
                        }
                        if ok {
                            // the sub-parser's own locals
                            if let Some(Decl::Parser { locals, .. }) =
                                self.find_decl_parser_by_states(sub_states)
                            {
                                for l in locals {
                                    match l {
                                        Local::Var(v) => {
                                            if let StmtKind::Var(_, ty, vn, _) = &v.kind {
                                                match self.env.resolve(ty) {
                                                    Ok(t) => {
                                                        let fq = format!("{}{}", self.pstate_prefix, inst);
                                                        let p = self.make_place("", &format!("{}.{}", fq, vn), t, true, &format!("{}_{}", fq.replace('.', "_"), vn));
                                                        self.bind(vn, Bind::Place(p));
                                                    }
                                                    Err(e) => self.sink.push(e),
                                                }
                                            }
                                        }
                                        Local::Inst(i) => self.declare_instance(i, pname),
                                        _ => self.err(st.span, "only variables and instances are supported as locals of a sub-parser"),
                                    }
                                }
                            }
                            let saved = (self.pstate_prefix.clone(), self.pstate_accept.clone());
                            self.pstate_prefix = sub_prefix;
                            self.pstate_accept = Some(cont.clone());
                            let sub_names: HashSet<&str> =
                                sub_states.iter().map(|s| s.name.as_str()).collect();
                            self.inline_depth += 1;
                            self.parser_states(pname, sub_states, &sub_names, vec![]);
                            self.inline_depth -= 1;
                            self.pstate_prefix = saved.0;
                            self.pstate_accept = saved.1;
                        }
                        self.scopes.pop();
                        cur = cont;
                        ops = vec![];
                        continue;
                    }
                    Ok(None) => {}
                    Err(e) => {
                        self.sink.push(e);
                        continue;
                    }
                }
                if let StmtKind::If(c, a, b) = &s.kind {
                    // split the state: evaluate the condition into a temporary and
                    // select on it; both branches continue in a join state
                    let (ncur, nops) = self.parser_if(pname, cur, ops, c, a, b.as_deref(), &mut k);
                    cur = ncur;
                    ops = nops;
                    continue;
                }
                self.state_stmt(s, pname, &mut ops);
            }
            let (key, trans) = match &st.transition {
                None => (
                    vec![],
                    vec![ParserTransition {
                        value: TransitionValue::Default,
                        next: None,
                    }],
                ),
                Some(Transition::Direct(n, sp)) => {
                    let ns = self.state_ref(n, *sp, names);
                    (
                        vec![],
                        vec![ParserTransition {
                            value: TransitionValue::Default,
                            next: ns,
                        }],
                    )
                }
                Some(Transition::Select(keys, cases, _)) => {
                    self.parser_extra_ops.clear();
                    let r = self.lower_select(keys, cases, names);
                    ops.append(&mut self.parser_extra_ops);
                    r
                }
            };
            self.scopes.pop();
            let id = self.ir.parser_states.len();
            self.ir.parser_states.push(ParseState {
                name: cur,
                id,
                ops,
                key,
                transitions: trans,
            });
        }
    }

    /// The state-name prefix of one inlined application of sub-parser instance
    /// `inst`: `inst.` the first time, `inst.N.` for the N-th further application,
    /// so a sub-parser applied in two states gets two copies of its states (one
    /// shared copy would continue every application where the last one does).
    /// A state name is an identifier, so `N.` cannot collide with a state.
    fn subparser_prefix(&self, inst: &str) -> String {
        let first = format!("{}{}.", self.pstate_prefix, inst);
        let taken = |p: &str| self.ir.parser_states.iter().any(|s| s.name.starts_with(p));
        if !taken(&first) {
            return first;
        }
        (1..)
            .map(|n| format!("{first}{n}."))
            .find(|p| !taken(p))
            .expect("an unused prefix")
    }

    /// Lowers `if (c) a else b` inside parser state `cur` (with `ops` so far);
    /// returns the join state's name and (empty) ops.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn parser_if(
        &mut self,
        pname: &str,
        cur: String,
        mut ops: Vec<ParserOp>,
        c: &Expr,
        a: &Stmt,
        b: Option<&Stmt>,
        k: &mut usize,
    ) -> (String, Vec<ParserOp>) {
        let tag = *k;
        *k += 1;
        let then_name = format!("{}.then{}", cur, tag);
        let else_name = format!("{}.else{}", cur, tag);
        let join = format!("{}.join{}", cur, tag);
        self.parser_extra_ops.clear();
        let cond = self.rv(c, Some(&Type::Bool));
        ops.append(&mut self.parser_extra_ops);
        let key = match cond {
            Ok((x, Type::Bool)) => {
                let tmp = self.parser_temp(X::un("b2d", x), &Type::Bit(1));
                ops.append(&mut self.parser_extra_ops);
                match tmp {
                    X::Field(..) => Some(tmp),
                    _ => None,
                }
            }
            Ok((_, t)) => {
                self.internal(
                    c.span,
                    format!(
                        "condition must be bool, not {} (checked by sema::exprs)",
                        t.name()
                    ),
                );
                None
            }
            Err(e) => {
                self.sink.push(e);
                None
            }
        };
        let id = self.ir.parser_states.len();
        let else_target = if b.is_some() {
            else_name.clone()
        } else {
            join.clone()
        };
        self.ir.parser_states.push(ParseState {
            name: cur,
            id,
            ops,
            key: key.into_iter().collect(),
            transitions: vec![
                ParserTransition {
                    value: TransitionValue::Hex("01".into(), None),
                    next: Some(then_name.clone()),
                },
                ParserTransition {
                    value: TransitionValue::Default,
                    next: Some(else_target),
                },
            ],
        });
        for (name, body) in [(then_name, Some(a)), (else_name, b)] {
            let Some(body) = body else { continue };
            let stmts: Vec<Stmt> = match &body.kind {
                StmtKind::Block(v) => v.clone(),
                _ => vec![body.clone()],
            };
            self.scopes.push(HashMap::new());
            let mut bcur = name;
            let mut bops: Vec<ParserOp> = vec![];
            let mut bk = 0;
            for s in &stmts {
                if let StmtKind::If(c2, a2, b2) = &s.kind {
                    let (n2, o2) =
                        self.parser_if(pname, bcur, bops, c2, a2, b2.as_deref(), &mut bk);
                    bcur = n2;
                    bops = o2;
                    continue;
                }
                self.state_stmt(s, pname, &mut bops);
            }
            self.scopes.pop();
            let id = self.ir.parser_states.len();
            self.ir.parser_states.push(ParseState {
                name: bcur,
                id,
                ops: bops,
                key: vec![],
                transitions: vec![ParserTransition {
                    value: TransitionValue::Default,
                    next: Some(join.clone()),
                }],
            });
        }
        (join, vec![])
    }

    /// Appends the ops of statement `s` of a parser state (after the temporaries it needs).
    fn state_stmt(&mut self, s: &Stmt, pname: &str, ops: &mut Vec<ParserOp>) {
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.parser_extra_ops.clear();
        let r = self.parser_stmt(s, pname);
        ops.append(&mut self.parser_extra_ops);
        ops.extend(r);
    }

    pub(super) fn find_decl_parser_by_states(&self, states: &[ParserState]) -> Option<&'a Decl> {
        self.prog.decls.iter().find(|d| matches!(d, Decl::Parser { states: s, has_body: true, .. } if std::ptr::eq(s.as_slice(), states)))
    }

    /// `inst.apply(args)` on a sub-parser instance: its states, parameters and args.
    #[allow(clippy::type_complexity)]
    pub(super) fn subparser_call(
        &mut self,
        s: &Stmt,
    ) -> PResult<Option<(&'a [ParserState], &'a [Param], String, Vec<Arg>)>> {
        let StmtKind::Call(c) = &s.kind else {
            return Ok(None);
        };
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
        let kind = match self.lookup(n) {
            Some(Bind::Extern { kind, .. }) => kind.name().to_string(),
            None => n.clone(),
            _ => return Ok(None),
        };
        let Some(Decl::Parser { params, states, .. }) = self.find_decl(&kind) else {
            return Ok(None);
        };
        if self.inline_depth > 20 {
            return Err(Error::new(
                c.span,
                "parsers call each other too deeply (recursion?)",
            ));
        }
        arity(c.span, "parser", &kind, params.len(), args.len())?;
        if !states.iter().any(|s| s.name == "start") {
            // sema::structure::local_names checked every parser has one
            return Err(Error::new(
                c.span,
                format!(
                    "internal compiler error: parser '{}' has no start state (sema checks it)",
                    kind
                ),
            ));
        }
        Ok(Some((
            states.as_slice(),
            params.as_slice(),
            n.clone(),
            args.clone(),
        )))
    }

    pub(super) fn state_ref(&mut self, n: &str, sp: Span, names: &HashSet<&str>) -> Option<String> {
        if n == "accept" {
            self.pstate_accept.clone()
        } else if n == "reject" {
            None
        } else if names.contains(n) {
            Some(format!("{}{}", self.pstate_prefix, n))
        } else {
            // sema::structure::local_names checked every transition of every parser
            self.internal(sp, format!("parser state '{}' not resolved by sema", n));
            None
        }
    }

    pub(super) fn lower_select(
        &mut self,
        keys: &[Expr],
        cases: &[SelectCase],
        names: &HashSet<&str>,
    ) -> (Vec<X>, Vec<ParserTransition>) {
        let mut kj = vec![];
        let mut widths = vec![];
        let mut ktypes = vec![];
        for k in keys {
            match self.select_key(k) {
                Ok((j, w, t)) => {
                    kj.push(j);
                    widths.push(w);
                    ktypes.push(t);
                }
                Err(e) => {
                    self.sink.push(e);
                    return (vec![], vec![]);
                }
            }
        }
        let mut trans = vec![];
        for c in cases {
            let next = self.state_ref(&c.next, c.span, names);
            if c.keys.len() == 1 && matches!(c.keys[0].kind, ExprKind::Default) {
                trans.push(ParserTransition {
                    value: TransitionValue::Default,
                    next,
                });
                continue;
            }
            // value set?
            if c.keys.len() == 1 {
                if let ExprKind::Name(n) = &c.keys[0].kind {
                    if let Some(Bind::ValueSet(vs)) = self.lookup(n) {
                        trans.push(ParserTransition {
                            value: TransitionValue::ValueSet(vs),
                            next,
                        });
                        continue;
                    }
                }
            }
            if c.keys.len() != keys.len() {
                // sema::bodies counts the values of every select case
                self.internal(
                    c.span,
                    format!(
                        "select has {} key(s) but this case has {} value(s) (sema counts them)",
                        keys.len(),
                        c.keys.len()
                    ),
                );
                continue;
            }
            // Each key component is a list of (value, mask) alternatives; ranges
            // expand into prefix masks and the case into their cross product.
            let mut comps: Vec<Vec<(u128, u128)>> = vec![];
            let mut has_mask = false;
            for (i, k) in c.keys.iter().enumerate() {
                let w = widths[i];
                let alts = match &k.kind {
                    ExprKind::Default => {
                        has_mask = true;
                        vec![(0, 0)]
                    }
                    ExprKind::Mask(a, b) => {
                        has_mask = true;
                        let v = self.const_of(a, &ktypes[i]);
                        let m = self.const_of(b, &ktypes[i]);
                        vec![(v & m, m)]
                    }
                    ExprKind::Range(a, b) => {
                        has_mask = true;
                        let lo = self.const_of(a, &ktypes[i]);
                        let hi = self.const_of(b, &ktypes[i]);
                        if lo > hi || w > 64 {
                            self.err(
                                k.span,
                                "select range must be low .. high on a key of at most 64 bits",
                            );
                            vec![]
                        } else {
                            range_to_masks(lo, hi, w)
                        }
                    }
                    _ => vec![(self.const_of(k, &ktypes[i]), mask(w))],
                };
                comps.push(alts);
            }
            let total: usize = comps.iter().map(|c| c.len()).product();
            if total > 4096 {
                self.err(c.span, "this select case expands to too many transitions");
                continue;
            }
            let mut combos: Vec<Vec<(u128, u128)>> = vec![vec![]];
            for alts in &comps {
                let mut next_combos = vec![];
                for c0 in &combos {
                    for a in alts {
                        let mut c1 = c0.clone();
                        c1.push(*a);
                        next_combos.push(c1);
                    }
                }
                combos = next_combos;
            }
            for combo in combos {
                let mut val = String::new();
                let mut msk = String::new();
                for (i, (v, m)) in combo.iter().enumerate() {
                    let w = widths[i];
                    let digits = (w.div_ceil(8) * 2) as usize;
                    val.push_str(&format!("{:0d$x}", v & mask(w), d = digits));
                    msk.push_str(&format!("{:0d$x}", m & mask(w), d = digits));
                }
                trans.push(ParserTransition {
                    value: TransitionValue::Hex(val, has_mask.then_some(msk)),
                    next: next.clone(),
                });
            }
        }
        if !cases
            .iter()
            .any(|c| c.keys.len() == 1 && matches!(c.keys[0].kind, ExprKind::Default))
        {
            // no match: BMv2 signals NoMatch itself when nothing matches
        }
        (kj, trans)
    }

    pub(super) fn const_of(&mut self, e: &Expr, t: &Type) -> u128 {
        match self.const_expr(e, Some(t)) {
            Ok(v) => v,
            Err(err) => {
                self.sink.push(err);
                0
            }
        }
    }

    /// Constant value of an expression (enum members, consts, literals), typed by `t`.
    pub(super) fn const_expr(&mut self, e: &Expr, t: Option<&Type>) -> PResult<u128> {
        let locals = self.const_locals();
        match self.env.const_eval(e, &locals) {
            Ok((v, vt)) => {
                let v = sign_extend(v, &vt);
                let w = t.and_then(|t| t.width()).or(vt.width());
                if let (Some(w), Type::InfInt) = (w, &vt) {
                    if w < 128
                        && shr(v, w as u128) != 0
                        && shr(v, w as u128) != mask(128 - w)
                        && !e_is_neg(e)
                    {
                        // valid P4: the value is taken modulo 2^w (p4c warns too)
                        self.sink.warn(
                            e.span,
                            format!(
                                "value {} does not fit in {} bits: truncated to {}",
                                v,
                                w,
                                v & mask(w)
                            ),
                        );
                    }
                }
                Ok(match w {
                    Some(w) => v & mask(w),
                    None => v,
                })
            }
            Err(_) => Err(Error::new(
                e.span,
                format!("'{}' is not a compile-time constant", self.src(e.span)),
            )),
        }
    }

    pub(super) fn const_locals(&self) -> HashMap<String, (Type, u128)> {
        // outer scopes first, so that an inner binding of the same name (an inlined
        // callee's parameter) shadows an outer constant instead of reading it
        let mut m = HashMap::new();
        for s in &self.scopes {
            for (k, b) in s {
                if let Bind::Const(v, t) = b {
                    m.insert(k.clone(), (t.clone(), *v));
                } else {
                    m.remove(k);
                }
            }
        }
        m
    }

    pub(super) fn select_key(&mut self, k: &Expr) -> PResult<(X, u32, Type)> {
        // lookahead<T>() and lookahead<H>().field: read into a temporary by a parser
        // `set`, as p4c does, so that a packet too short for it ends the parse with
        // PacketTooShort (a select key reading past the end is not checked by BMv2)
        if let Some((w, t)) = self.lookahead_call(k)? {
            let x = self.parser_temp(X::Lookahead(0, w), &t);
            return Ok((x, w, t));
        }
        if let ExprKind::Member(b, f) = &k.kind {
            if let Some((x, t)) = self.lookahead_field(b, f, k.span)? {
                return Ok((x, t.width().unwrap_or(0), t));
            }
        }
        // stack.last.field
        if let ExprKind::Member(b, f) = &k.kind {
            if let ExprKind::Member(s, l) = &b.kind {
                if l == "last" {
                    if let Ok(Place::Stack { name, elem, .. }) = self.place(s) {
                        let t = self
                            .env
                            .field_type(&Type::Header(elem), f)
                            .unwrap_or(Type::Unknown);
                        return Ok((X::StackField(name, f.clone()), t.width().unwrap_or(0), t));
                    }
                }
            }
        }
        if let Ok(Place::Field { hdr, field, ty }) = self.place(k) {
            let w = ty.width().unwrap_or(0);
            return Ok((X::Field(hdr, field), w, ty));
        }
        // general expression: compute into a temporary
        let (x, t) = self.rv(k, None)?;
        let t = if t == Type::InfInt { Type::Bit(32) } else { t };
        let x = self.to_data(x, &t);
        let p = self.scalar(&format!("tmp_{}", self.tmp_count), &t);
        self.tmp_count += 1;
        if let Place::Field { hdr, field, .. } = &p {
            self.parser_extra_ops
                .push(ParserOp::Set((hdr.clone(), field.clone()), x.as_arg()));
            return Ok((
                X::Field(hdr.clone(), field.clone()),
                t.width().unwrap_or(0),
                t,
            ));
        }
        Err(Error::new(k.span, "unsupported select key"))
    }

    /// `lookahead<H>().field` (None when `b` is not a header lookahead): the field, read
    /// into a parser temporary. The whole header must be in the packet (the spec's
    /// PacketTooShort otherwise), so when the field ends before the header does, the
    /// header's last bit is read too: both BMv2 and sdnperf-switch check a lookahead's
    /// reach when it is `set`.
    pub(super) fn lookahead_field(
        &mut self,
        b: &Expr,
        f: &str,
        span: Span,
    ) -> PResult<Option<(X, Type)>> {
        let Some((_, Type::Header(h))) = self.lookahead_call(b)? else {
            return Ok(None);
        };
        let def = self.env.composite(&h).cloned().ok_or_else(|| {
            Error::new(
                span,
                "internal compiler error: unknown header type (types are resolved by sema::types)",
            )
        })?;
        let header_bits = self.env.header_width(&h);
        let mut off = 0;
        for (n, t, _) in &def.fields {
            let w = t.width().unwrap_or(0);
            if n == f {
                if off + w < header_bits {
                    self.parser_temp(X::Lookahead(header_bits - 1, 1), &Type::Bit(1));
                }
                return Ok(Some((self.parser_temp(X::Lookahead(off, w), t), t.clone())));
            }
            off += w;
        }
        Err(Error::new(
            span,
            format!(
                "internal compiler error: header {} has no field '{}' (checked by sema::bodies)",
                h, f
            ),
        ))
    }

    /// A parser temporary set from `x` (e.g. a lookahead) before the current statement.
    pub(super) fn parser_temp(&mut self, x: X, t: &Type) -> X {
        let p = self.scalar(&format!("tmp_{}", self.tmp_count), t);
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = p else {
            unreachable!()
        };
        self.parser_extra_ops
            .push(ParserOp::Set((hdr.clone(), field.clone()), PrimArg::Op(x)));
        X::Field(hdr, field)
    }

    /// Width in bits of a value of type `t` laid out in a packet (headers and structs:
    /// the sum of their fields).
    fn bit_width(&self, t: &Type) -> u32 {
        match t {
            Type::Header(h) => self.env.header_width(h),
            Type::Struct(s) => self
                .env
                .composite(s)
                .map(|d| d.fields.iter().map(|f| self.bit_width(&f.1)).sum())
                .unwrap_or(0),
            t => t.width().unwrap_or(0),
        }
    }

    pub(super) fn lookahead_call(&mut self, e: &Expr) -> PResult<Option<(u32, Type)>> {
        if let ExprKind::Call(f, targs, args) = &e.kind {
            if let ExprKind::Member(b, m) = &f.kind {
                if m == "lookahead" {
                    if let ExprKind::Name(n) = &b.kind {
                        if matches!(self.lookup(n), Some(Bind::PacketIn)) {
                            if !args.is_empty() || targs.len() != 1 {
                                // sema::bodies counts the arguments of packet methods
                                return Err(Error::new(
                                    e.span,
                                    "internal compiler error: lookahead with unchecked arguments (sema counts them)",
                                ));
                            }
                            let t = self.env.resolve(&targs[0])?;
                            let w = match &t {
                                Type::Header(h) => self.env.header_width(h),
                                t => t.width().unwrap_or(0),
                            };
                            return Ok(Some((w, t)));
                        }
                    }
                }
            }
        }
        Ok(None)
    }

    pub(super) fn parser_stmt(&mut self, s: &Stmt, pname: &str) -> Vec<ParserOp> {
        match self.parser_stmt_r(s, pname) {
            Ok(v) => v,
            Err(e) => {
                self.sink.push(e);
                vec![]
            }
        }
    }

    pub(super) fn parser_stmt_r(&mut self, s: &Stmt, pname: &str) -> PResult<Vec<ParserOp>> {
        match &s.kind {
            StmtKind::Call(c) => {
                let ExprKind::Call(f, targs, args) = &c.kind else {
                    return Ok(vec![]);
                };
                if let ExprKind::Member(b, m) = &f.kind {
                    if let ExprKind::Name(n) = &b.kind {
                        if matches!(self.lookup(n), Some(Bind::PacketIn)) {
                            match m.as_str() {
                                "extract" => {
                                    if args.is_empty() || args.len() > 2 {
                                        // sema::bodies counts the arguments of packet methods
                                        return Err(Error::new(
                                            c.span,
                                            "internal compiler error: extract with an unchecked argument count (sema counts them)",
                                        ));
                                    }
                                    let target = match &args[0].value.kind {
                                        ExprKind::Default => {
                                            self.extract_discarded(targs, &args[0].value)?
                                        }
                                        _ => self.extract_target(&args[0].value)?,
                                    };
                                    if args.len() == 2 {
                                        let (x, t) =
                                            self.rv(&args[1].value, Some(&Type::Bit(32)))?;
                                        let x = self.to_data(x, &t);
                                        return Ok(vec![ParserOp::ExtractVl(target, x)]);
                                    }
                                    return Ok(vec![ParserOp::Extract(target)]);
                                }
                                "advance" => {
                                    if args.len() != 1 {
                                        // sema::bodies counts the arguments of packet methods
                                        return Err(Error::new(
                                            c.span,
                                            "internal compiler error: advance with an unchecked argument count (sema counts them)",
                                        ));
                                    }
                                    let (x, t) = self.rv(&args[0].value, Some(&Type::Bit(32)))?;
                                    let x = self.to_data(x, &t);
                                    return Ok(vec![ParserOp::Advance(operand_or_expr(x))]);
                                }
                                // `packet.lookahead<T>();`: the value is dropped, but a packet
                                // shorter than T still fails with PacketTooShort (as p4c
                                // lowers it: a temporary set from the lookahead)
                                "lookahead" => {
                                    let Some((_, t)) = self.lookahead_call(c)? else {
                                        return Ok(vec![]);
                                    };
                                    let w = self.bit_width(&t);
                                    if w == 0 {
                                        return Ok(vec![]);
                                    }
                                    let tmp = format!("tmp_{}", self.tmp_count);
                                    self.tmp_count += 1;
                                    let Place::Field { hdr, field, .. } =
                                        self.scalar(&tmp, &Type::Bit(w))
                                    else {
                                        unreachable!()
                                    };
                                    return Ok(vec![ParserOp::Set(
                                        (hdr, field),
                                        PrimArg::Op(X::Lookahead(0, w)),
                                    )]);
                                }
                                _ => {
                                    return Err(Error::new(
                                        f.span,
                                        format!(
                                            "packet_in.{} cannot be called as a statement here",
                                            m
                                        ),
                                    ))
                                }
                            }
                        }
                        if let Some(Bind::Extern { kind, .. }) = self.lookup(n) {
                            if m == "apply" {
                                if let Some(Decl::Parser { .. }) = self.find_decl(kind.name()) {
                                    return Err(Error::new(
                                        c.span,
                                        "sub-parser calls are not supported by this compiler yet",
                                    ));
                                }
                            }
                        }
                    }
                }
                if let ExprKind::Name(n) = &f.kind {
                    if n == "verify" {
                        if args.len() != 2 {
                            // sema::bodies counts the arguments of verify
                            return Err(Error::new(
                                c.span,
                                "internal compiler error: verify with an unchecked argument count (sema counts them)",
                            ));
                        }
                        let (cx, ct) = self.rv(&args[0].value, Some(&Type::Bool))?;
                        if ct != Type::Bool {
                            return Err(Error::new(
                                args[0].value.span,
                                format!("internal compiler error: verify condition must be bool, not {} (checked by sema::exprs)", ct.name()),
                            ));
                        }
                        let (ex, et) = self.rv(&args[1].value, Some(&Type::Error))?;
                        if et != Type::Error {
                            return Err(Error::new(
                                args[1].value.span,
                                format!("internal compiler error: verify needs an error value, not {} (checked by sema::exprs)", et.name()),
                            ));
                        }
                        return Ok(vec![ParserOp::Verify(cx, ex)]);
                    }
                }
                let prims = self.prims_of(s)?;
                Ok(prims.into_iter().map(ParserOp::Primitive).collect())
            }
            StmtKind::Assign(lhs, rhs) => {
                if let Ok(Place::Field { hdr, field, ty }) = self.place(lhs) {
                    if let Some((w, _)) = self.lookahead_call(rhs)? {
                        let tw = ty.width().unwrap_or(0);
                        if w != tw {
                            return Err(Error::new(
                                rhs.span,
                                format!(
                                    "internal compiler error: cannot assign lookahead of {} bits to a field of {} bits (checked by sema::exprs)",
                                    w, tw
                                ),
                            ));
                        }
                        return Ok(vec![ParserOp::Set(
                            (hdr, field),
                            PrimArg::Op(X::Lookahead(0, w)),
                        )]);
                    }
                    let (x, t) = self.rv(rhs, Some(&ty))?;
                    self.check_assign(&ty, &t, rhs.span)?;
                    let x = self.to_data(x, &t);
                    return Ok(vec![ParserOp::Set((hdr, field), operand_or_expr(x))]);
                }
                let prims = self.prims_of(s)?;
                Ok(prims.into_iter().map(ParserOp::Primitive).collect())
            }
            StmtKind::Var(_, ty, n, init) => {
                let t = self.env.resolve(ty)?;
                self.bind_local(pname, n, t);
                if let Some(i) = init {
                    let st = Stmt {
                        kind: StmtKind::Assign(
                            Expr {
                                kind: ExprKind::Name(n.clone()),
                                span: s.span,
                            },
                            i.clone(),
                        ),
                        span: s.span,
                    };
                    return self.parser_stmt_r(&st, pname);
                }
                Ok(vec![])
            }
            StmtKind::Const(ty, n, v) => {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(n, Bind::Const(val, t));
                Ok(vec![])
            }
            StmtKind::Block(v) => {
                let mut out = vec![];
                for s in v {
                    out.extend(self.parser_stmt_r(s, pname)?);
                }
                Ok(out)
            }
            StmtKind::Empty => Ok(vec![]),
            StmtKind::Inst(i) => {
                self.declare_instance(i, pname);
                Ok(vec![])
            }
            StmtKind::If(..) => Err(Error::new(
                s.span,
                "if statements are not supported inside nested blocks of parser states",
            )),
            _ => Err(Error::new(
                s.span,
                "statement not allowed in a parser state",
            )),
        }
    }

    /// Lower a statement through the action lowering and return its primitives.
    pub(super) fn prims_of(&mut self, s: &Stmt) -> PResult<Vec<Prim>> {
        let saved = self.ctx;
        let saved_act = self.act.take();
        self.act = Some(ActionCtx {
            prims: vec![],
            returns: vec![],
        });
        self.ctx = Ctx::Action;
        let r = self.action_stmt(s);
        self.ctx = saved;
        let a = std::mem::replace(&mut self.act, saved_act).unwrap();
        r?;
        Ok(a.prims)
    }

    /// `extract<T>(_)`: the header is read (the packet advances by its size) into a
    /// temporary nobody reads.
    fn extract_discarded(&mut self, targs: &[TypeRef], e: &Expr) -> PResult<ExtractTarget> {
        let Some(t) = targs.first() else {
            // sema::bodies checked every extract(_) has its type argument
            return Err(Error::new(
                e.span,
                "internal compiler error: extract(_) without a type argument (sema checks it)",
            ));
        };
        let t = self.env.resolve(t)?;
        if !matches!(t, Type::Header(_)) {
            return Err(Error::new(
                e.span,
                format!(
                    "internal compiler error: extract<{}>(_) of no header (checked by sema::bodies)",
                    t.name()
                ),
            ));
        }
        let name = format!("extract_discard_{}", self.tmp_count);
        self.tmp_count += 1;
        match self.make_place("", &name, t, true, &name) {
            Place::Header { inst, .. } => Ok(ExtractTarget::Regular(inst)),
            _ => unreachable!("a header type makes a header"),
        }
    }

    pub(super) fn extract_target(&mut self, e: &Expr) -> PResult<ExtractTarget> {
        // `u.next.member` on a stack of header unions
        if let ExprKind::Member(n, member) = &e.kind {
            if let ExprKind::Member(b, m) = &n.kind {
                if m == "next" {
                    if let Place::UnionStack { name, ty, .. } = self.place(b)? {
                        let known = self
                            .env
                            .composite(&ty)
                            .is_some_and(|d| d.fields.iter().any(|f| f.0 == *member));
                        if !known {
                            return Err(Error::new(
                                e.span,
                                format!("internal compiler error: header union {} has no member '{}' (checked by sema::exprs)", ty, member),
                            ));
                        }
                        return Ok(ExtractTarget::UnionStack(name, member.clone()));
                    }
                }
            }
        }
        if let ExprKind::Member(b, m) = &e.kind {
            if m == "next" {
                if let Place::Stack { name, .. } = self.place(b)? {
                    return Ok(ExtractTarget::Stack(name));
                }
            }
        }
        match self.place(e)? {
            Place::Header { inst, .. } => Ok(ExtractTarget::Regular(inst)),
            p => Err(Error::new(
                e.span,
                format!(
                    "internal compiler error: extract needs a header, not {} (checked by sema::exprs)",
                    p.ty().name()
                ),
            )),
        }
    }
}

/// A parser-op value: fields and constants as they are, anything else as an expression.
fn operand_or_expr(x: X) -> PrimArg {
    match x {
        X::Hex(..) | X::Field(..) => PrimArg::Op(x),
        _ => PrimArg::Expr(x),
    }
}
