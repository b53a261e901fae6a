//! Lowering of action bodies: statements, assignments, calls, externs.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn push(&mut self, op: &str, params: Vec<PrimArg>, span: Span) {
        let source = self.src(span);
        if let Some(a) = self.act.as_mut() {
            a.prims.push(Prim {
                op: op.to_string(),
                params,
                source,
            });
        }
    }

    pub(super) fn action_stmt(&mut self, s: &Stmt) -> PResult<()> {
        match &s.kind {
            StmtKind::Assign(l, r) => self.assign(l, r, s.span),
            StmtKind::Call(c) => self.call_stmt(c, s.span),
            StmtKind::Block(v) => {
                self.scopes.push(HashMap::new());
                let mut res = Ok(());
                for x in v {
                    if let Err(e) = self.action_stmt(x) {
                        self.sink.push(e.clone());
                        res = Ok(());
                    }
                }
                self.scopes.pop();
                res
            }
            StmtKind::If(c, a, b) => {
                let (cx, ct) = self.rv(c, Some(&Type::Bool))?;
                if ct != Type::Bool {
                    return Err(Error::new(
                        c.span,
                        format!("internal compiler error: condition must be bool, not {} (checked by sema::exprs)", ct.name()),
                    ));
                }
                let jz_at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                let cond_data = X::un("b2d", cx);
                self.push(
                    "_jump_if_zero",
                    vec![cond_data.as_arg(), PrimArg::hex(0)],
                    c.span,
                );
                self.action_stmt(a)?;
                if let Some(b) = b {
                    let j_at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.push("_jump", vec![PrimArg::hex(0)], b.span);
                    let else_start = j_at + 1;
                    self.set_jump(jz_at, 1, else_start);
                    self.action_stmt(b)?;
                    let end = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.set_jump(j_at, 0, end);
                } else {
                    let end = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                    self.set_jump(jz_at, 1, end);
                }
                Ok(())
            }
            StmtKind::Var(_, ty, n, init) => {
                let t = self.env.resolve(ty)?;
                self.bind_local(&self.ctl_name(), n, t);
                if let Some(i) = init {
                    let lhs = Expr {
                        kind: ExprKind::Name(n.clone()),
                        span: s.span,
                    };
                    self.assign(&lhs, i, s.span)?;
                }
                Ok(())
            }
            StmtKind::Const(ty, n, v) => {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(n, Bind::Const(val, t));
                Ok(())
            }
            StmtKind::Exit => {
                self.copy_outs_before_exit(s.span)?;
                self.push("exit", vec![], s.span);
                Ok(())
            }
            StmtKind::Return(v) => {
                if let Some(v) = v {
                    match self.fn_ret.clone() {
                        Some(Place::Field { hdr, field, ty }) => {
                            let (x, t) = self.rv(v, Some(&ty))?;
                            self.check_assign(&ty, &t, v.span)?;
                            let x = self.to_data(x, &t);
                            self.push(
                                "assign",
                                vec![PrimArg::field(&hdr, &field), x.as_arg()],
                                s.span,
                            );
                        }
                        Some(p) => self.assign_place(&p, v, s.span)?,
                        None => return Err(Error::new(s.span, "actions cannot return a value")),
                    }
                }
                let at = self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0);
                self.push("_jump", vec![PrimArg::hex(0)], s.span);
                if let Some(a) = self.act.as_mut() {
                    a.returns.push(at);
                }
                Ok(())
            }
            StmtKind::Empty => Ok(()),
            StmtKind::Switch(e, cases) => {
                if matches!(&e.kind, ExprKind::Member(_, m) if m == "action_run") {
                    return Err(Error::new(
                        s.span,
                        "tables cannot be applied inside actions",
                    ));
                }
                let s2 = desugar_switch(e, cases, s.span)?;
                self.action_stmt(&s2)
            }
            StmtKind::Inst(i) => Err(Error::new(i.span, "instantiations are not allowed here")),
        }
    }

    /// Outside actions (conditions, table keys), primitives of side effects go into an
    /// action context whose primitives are then queued in `key_prims` (run by a synthetic
    /// table before the condition or table); returns whether a context was made.
    pub(super) fn pre_begin(&mut self) -> bool {
        let made = self.act.is_none();
        if made {
            self.act = Some(ActionCtx {
                prims: vec![],
                returns: vec![],
            });
        }
        made
    }

    pub(super) fn pre_end(&mut self, made: bool) {
        if !made {
            return;
        }
        let mut act = self.act.take().unwrap();
        patch_returns(&mut act);
        // jump targets are indices into the primitive list they end up in
        let base = self.key_prims.len();
        for p in act.prims.iter_mut() {
            let param = match p.op.as_str() {
                "_jump" => 0,
                "_jump_if_zero" => 1,
                _ => continue,
            };
            if let PrimArg::Op(X::Hex(t, false)) = &mut p.params[param] {
                *t += base as u128;
            }
        }
        self.key_prims.extend(act.prims);
    }

    pub(super) fn set_jump(&mut self, at: usize, param: usize, target: usize) {
        if let Some(a) = self.act.as_mut() {
            if let Some(p) = a.prims.get_mut(at) {
                p.params[param] = PrimArg::hex(target as u128);
            }
        }
    }

    pub(super) fn assign(&mut self, l: &Expr, r: &Expr, span: Span) -> PResult<()> {
        // the target's index is read before the right-hand side's effects when the target
        // contains a call itself (as p4c orders it; a plain `s[i] = f(i)` reads i after f)
        self.snap_index = self.has_effects(r) && crate::effects::has_call(l);
        let lp = self.place_or_slice(l);
        self.snap_index = false;
        let lp = lp?;
        match &lp {
            Place::Slice { base, hi, lo } => {
                let sw = Type::Bit(hi - lo + 1);
                let (x, t) = self.rv(r, Some(&sw))?;
                self.check_assign(&sw, &t, r.span)?;
                self.store_slice(base, *hi, *lo, x, span);
                Ok(())
            }
            Place::DynField { x: lx, ty } => {
                let (x, t) = self.rv(r, Some(ty))?;
                self.check_assign(ty, &t, r.span)?;
                let x = self.to_data(x, &t);
                self.push("assign", vec![PrimArg::Expr(lx.clone()), x.as_arg()], span);
                Ok(())
            }
            Place::DynHeader { deref, elem, .. } => {
                let rp = self.place(r)?;
                match rp {
                    Place::Header { inst, ty } if ty == *elem => {
                        self.push(
                            "assign_header",
                            vec![PrimArg::Expr(deref.clone()), PrimArg::header(&inst)],
                            span,
                        );
                        Ok(())
                    }
                    Place::DynHeader { elem: re, .. } if re == *elem => Err(Error::new(
                        r.span,
                        "assigning a header with a run-time stack index to another one is not supported by this compiler",
                    )),
                    p => Err(Error::new(
                        r.span,
                        format!(
                            "internal compiler error: cannot assign {} to a header of type {} (checked by sema::exprs)",
                            p.ty().name(),
                            elem
                        ),
                    )),
                }
            }
            Place::Field { hdr, field, ty } => {
                let (x, t) = self.rv(r, Some(ty))?;
                self.check_assign(ty, &t, r.span)?;
                if let Type::Varbit(_) = ty {
                    self.push(
                        "assign_VL",
                        vec![PrimArg::field(hdr, field), x.as_arg()],
                        span,
                    );
                    return Ok(());
                }
                let x = self.to_data(x, &t);
                self.push("assign", vec![PrimArg::field(hdr, field), x.as_arg()], span);
                Ok(())
            }
            Place::Header { inst, ty } => {
                if let ExprKind::List(items) = &r.kind {
                    // header = { f1, f2, ... }: set valid and assign fields
                    let def = self
                        .env
                        .composite(ty)
                        .cloned()
                        .ok_or_else(|| Error::new(l.span, "internal compiler error: unknown header type (types are resolved by sema::types)"))?;
                    if items.len() != def.fields.len() {
                        return Err(Error::new(
                            r.span,
                            format!(
                                "internal compiler error: header {} has {} fields, the list has {} (checked by sema::exprs)",
                                ty,
                                def.fields.len(),
                                items.len()
                            ),
                        ));
                    }
                    self.push("add_header", vec![PrimArg::header(inst)], span);
                    for ((fname, ft, _), (_, it)) in def.fields.iter().zip(items) {
                        let (x, t) = self.rv(it, Some(ft))?;
                        self.check_assign(ft, &t, it.span)?;
                        let x = self.to_data(x, &t);
                        self.push(
                            "assign",
                            vec![PrimArg::field(inst, fname), x.as_arg()],
                            span,
                        );
                    }
                    return Ok(());
                }
                let rp = self.place(r)?;
                match rp {
                    Place::Header { inst: ri, ty: rt } if rt == *ty => {
                        self.push(
                            "assign_header",
                            vec![PrimArg::header(inst), PrimArg::header(&ri)],
                            span,
                        );
                        Ok(())
                    }
                    Place::DynHeader { deref, elem, .. } if elem == *ty => {
                        self.push(
                            "assign_header",
                            vec![PrimArg::header(inst), PrimArg::Expr(deref.clone())],
                            span,
                        );
                        Ok(())
                    }
                    p => Err(Error::new(
                        r.span,
                        format!("internal compiler error: cannot assign {} to a header of type {} (checked by sema::exprs)", p.ty().name(), ty),
                    )),
                }
            }
            Place::Struct { ty, members } => {
                if let ExprKind::List(items) = &r.kind {
                    if items.len() != members.len() {
                        return Err(Error::new(
                            r.span,
                            format!(
                                "internal compiler error: struct {} has {} fields, the list has {} (checked by sema::exprs)",
                                ty,
                                members.len(),
                                items.len()
                            ),
                        ));
                    }
                    for ((_, mp), (_, it)) in members.clone().iter().zip(items) {
                        self.assign_place(mp, it, span)?;
                    }
                    return Ok(());
                }
                let rp = self.place(r)?;
                match rp {
                    Place::Struct {
                        ty: rt,
                        members: rm,
                    } if rt == *ty => {
                        for ((_, a), (_, b)) in members.clone().iter().zip(rm.iter()) {
                            self.copy_place(a, b, span)?;
                        }
                        Ok(())
                    }
                    p => Err(Error::new(
                        r.span,
                        format!("internal compiler error: cannot assign {} to a struct of type {} (checked by sema::exprs)", p.ty().name(), ty),
                    )),
                }
            }
            Place::Stack { elem, .. } => match &self.place(r)? {
                rp @ Place::Stack { elem: re, .. } if re == elem => self.copy_place(&lp, rp, span),
                _ => Err(Error::new(
                    r.span,
                    "internal compiler error: type mismatch in header stack assignment (checked by sema::exprs)",
                )),
            },
            Place::Union { ty, .. } => match &self.place(r)? {
                rp @ Place::Union { ty: rt, .. } if rt == ty => self.copy_place(&lp, rp, span),
                _ => Err(Error::new(
                    r.span,
                    "internal compiler error: type mismatch in header union assignment (checked by sema::exprs)",
                )),
            },
            // element by element (BMv2's switch runs `assign_union` but no stack form)
            Place::UnionStack { .. } => {
                let rp = self.place(r)?;
                if rp.ty() != lp.ty() {
                    return Err(Error::new(
                        r.span,
                        "internal compiler error: type mismatch in header union stack assignment (checked by sema::exprs)",
                    ));
                }
                self.copy_place(&lp, &rp, span)
            }
        }
    }

    pub(super) fn assign_place(&mut self, p: &Place, r: &Expr, span: Span) -> PResult<()> {
        // assign to a place that was reached structurally (not by a name)
        let tmp = format!("__tmp_place_{}", self.tmp_count);
        self.tmp_count += 1;
        self.scopes.push(HashMap::new());
        self.bind(&tmp, Bind::Place(p.clone()));
        let res = self.assign(
            &Expr {
                kind: ExprKind::Name(tmp),
                span,
            },
            r,
            span,
        );
        self.scopes.pop();
        res
    }

    pub(super) fn copy_place(&mut self, dst: &Place, src: &Place, span: Span) -> PResult<()> {
        match (dst, src) {
            (
                Place::Field { hdr, field, .. },
                Place::Field {
                    hdr: h2, field: f2, ..
                },
            ) => {
                self.push(
                    "assign",
                    vec![PrimArg::field(hdr, field), PrimArg::field(h2, f2)],
                    span,
                );
            }
            (Place::Header { inst, .. }, Place::Header { inst: i2, .. }) => {
                self.push(
                    "assign_header",
                    vec![PrimArg::header(inst), PrimArg::header(i2)],
                    span,
                );
            }
            (Place::Struct { members: a, .. }, Place::Struct { members: b, .. }) => {
                for ((_, x), (_, y)) in a.iter().zip(b.iter()) {
                    self.copy_place(x, y, span)?;
                }
            }
            (Place::Stack { name, .. }, Place::Stack { name: n2, .. }) => {
                self.push(
                    "assign_header_stack",
                    vec![
                        PrimArg::Op(X::Stack(name.clone())),
                        PrimArg::Op(X::Stack(n2.clone())),
                    ],
                    span,
                );
            }
            (Place::UnionStack { elems: a, .. }, Place::UnionStack { elems: b, .. }) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    self.copy_place(x, y, span)?;
                }
            }
            (Place::Union { name, .. }, Place::Union { name: n2, .. }) => {
                self.push(
                    "assign_union",
                    vec![
                        PrimArg::HeaderUnion(name.clone()),
                        PrimArg::HeaderUnion(n2.clone()),
                    ],
                    span,
                );
            }
            // slices (copy-in/copy-out of `f[7:4]`)
            (Place::Slice { base, hi, lo }, src) => {
                let (x, _) = self.place_value(src.clone(), span)?;
                self.store_slice(base, *hi, *lo, x, span);
            }
            (Place::Field { hdr, field, .. }, src @ Place::Slice { .. }) => {
                let (x, _) = self.place_value(src.clone(), span)?;
                self.push("assign", vec![PrimArg::field(hdr, field), x.as_arg()], span);
            }
            // run-time stack elements (copy-in/copy-out of `s[i].f`, `s[i]`)
            (Place::DynField { x, .. }, Place::Field { hdr, field, .. }) => {
                self.push(
                    "assign",
                    vec![PrimArg::Expr(x.clone()), PrimArg::field(hdr, field)],
                    span,
                );
            }
            (Place::Field { hdr, field, .. }, Place::DynField { x, .. }) => {
                self.push(
                    "assign",
                    vec![PrimArg::field(hdr, field), PrimArg::Expr(x.clone())],
                    span,
                );
            }
            (Place::DynHeader { deref, .. }, Place::Header { inst, .. }) => {
                self.push(
                    "assign_header",
                    vec![PrimArg::Expr(deref.clone()), PrimArg::header(inst)],
                    span,
                );
            }
            (Place::Header { inst, .. }, Place::DynHeader { deref, .. }) => {
                self.push(
                    "assign_header",
                    vec![PrimArg::header(inst), PrimArg::Expr(deref.clone())],
                    span,
                );
            }
            // the types of assignments (sema::exprs) and of the arguments copied in and
            // out (sema::calls) were checked
            _ => {
                return Err(Error::new(
                    span,
                    "internal compiler error: type mismatch in assignment (checked by sema::exprs and sema::calls)",
                ))
            }
        }
        Ok(())
    }

    pub(super) fn arg_count(&self, span: Span, name: &str, args: &[Arg], n: usize) -> PResult<()> {
        arity(span, "", name, n, args.len())
    }

    pub(super) fn field_dst(&mut self, e: &Expr) -> PResult<(X, Type)> {
        match self.place(e)? {
            Place::Field { hdr, field, ty } => Ok((X::Field(hdr, field), ty)),
            Place::DynField { .. } | Place::DynHeader { .. } => Err(Error::new(
                e.span,
                "a destination with a run-time stack index is not supported here (BMv2 writes fixed fields)",
            )),
            p => Err(Error::new(
                e.span,
                format!(
                    "internal compiler error: a destination of type {} (checked by sema::calls)",
                    p.ty().name()
                ),
            )),
        }
    }

    pub(super) fn data_arg(&mut self, e: &Expr, t: &Type) -> PResult<PrimArg> {
        let (x, xt) = self.rv(e, Some(t))?;
        let x = self.to_data(x, &xt);
        Ok(x.as_arg())
    }

    pub(super) fn call_stmt(&mut self, c: &Expr, span: Span) -> PResult<()> {
        let ExprKind::Call(f, targs, args) = &c.kind else {
            // the parser makes call statements only of calls
            return Err(Error::new(
                c.span,
                "internal compiler error: a call statement without a call",
            ));
        };
        match &f.kind {
            ExprKind::Member(b, m) => {
                // header methods
                if let Ok(p) = self.place(b) {
                    match (&p, m.as_str()) {
                        (Place::Header { inst, .. }, "setValid") => {
                            self.push("add_header", vec![PrimArg::header(inst)], span);
                            return Ok(());
                        }
                        (Place::Header { inst, .. }, "setInvalid") => {
                            self.push("remove_header", vec![PrimArg::header(inst)], span);
                            return Ok(());
                        }
                        (Place::DynHeader { deref, .. }, "setValid")
                        | (Place::DynHeader { deref, .. }, "setInvalid") => {
                            let op = if m == "setValid" {
                                "add_header"
                            } else {
                                "remove_header"
                            };
                            self.push(op, vec![PrimArg::Expr(deref.clone())], span);
                            return Ok(());
                        }
                        (Place::Stack { name, .. }, "push_front")
                        | (Place::Stack { name, .. }, "pop_front") => {
                            self.arg_count(c.span, m, args, 1)?;
                            let n = self.const_expr(&args[0].value, Some(&Type::Bit(32)))?;
                            let op = if m == "push_front" { "push" } else { "pop" };
                            self.push(
                                op,
                                vec![PrimArg::Op(X::Stack(name.clone())), PrimArg::hex(n)],
                                span,
                            );
                            return Ok(());
                        }
                        (_, "isValid") => return Ok(()),
                        (Place::UnionStack { .. }, "push_front" | "pop_front") => {
                            return Err(Error::new(
                                f.span,
                                format!("{} on a header union stack is not supported", m),
                            ))
                        }
                        _ => {
                            return Err(Error::new(
                                f.span,
                                format!(
                                    "internal compiler error: method '{}' of {} (checked by sema::calls)",
                                    m,
                                    p.ty().name()
                                ),
                            ))
                        }
                    }
                }
                let n = match &b.kind {
                    ExprKind::Name(n) => n.clone(),
                    _ => return Err(Error::new(b.span, "unsupported method call")),
                };
                match self.lookup(&n) {
                    Some(Bind::Extern { kind, name }) => {
                        self.extern_method(&kind, &name, m, args, c.span, span)
                    }
                    Some(Bind::Table(_)) => Err(Error::new(
                        c.span,
                        "tables can only be applied in apply blocks, not in actions",
                    )),
                    Some(Bind::PacketIn) | Some(Bind::PacketOut) => Err(Error::new(
                        c.span,
                        format!("'{}.{}' is not allowed here", n, m),
                    )),
                    // sema::calls refused methods of values and value sets
                    Some(_) => Err(Error::new(
                        b.span,
                        format!(
                            "internal compiler error: method '{}' of '{}' (checked by sema::calls)",
                            m, n
                        ),
                    )),
                    None => Err(self.unbound(b.span, &n)),
                }
            }
            ExprKind::Name(n) => {
                if let Some((a, global)) = self.find_action(n) {
                    return self.inline_action(&a, global, args, c.span);
                }
                self.extern_function(n, targs, args, c.span, span)
            }
            _ => Err(Error::new(f.span, "unsupported call")),
        }
    }

    pub(super) fn inline_action(
        &mut self,
        a: &Action,
        _global: bool,
        args: &[Arg],
        span: Span,
    ) -> PResult<()> {
        // sema checked the argument count of every call
        if self.inline_depth > 50 {
            return Err(Error::new(
                span,
                "actions call each other too deeply (recursion?)",
            ));
        }
        self.inline_depth += 1;
        let mut pairs = vec![];
        for (p, arg) in a.params.iter().zip(args) {
            let t = self.env.resolve(&p.ty)?;
            let mut pp = p.clone();
            if pp.dir == Dir::None {
                pp.dir = Dir::In;
            }
            pairs.push((pp, t, arg.value.clone()));
        }
        let (binds, outs) = match self.bind_params(a, &pairs, span) {
            Ok(x) => x,
            Err(e) => {
                self.inline_depth -= 1;
                return Err(e);
            }
        };
        self.scopes.push(HashMap::new());
        for (k, b) in binds {
            self.bind(&k, b);
        }
        // `return` inside an inlined action jumps to the end of the inlined body
        let saved_returns = self
            .act
            .as_mut()
            .map(|x| std::mem::take(&mut x.returns))
            .unwrap_or_default();
        let mut res = Ok(());
        self.copy_frames.push(outs.clone());
        for s in &a.body {
            if let Err(e) = self.action_stmt(s) {
                res = Err(e);
                break;
            }
        }
        self.copy_frames.pop();
        if let Some(act) = self.act.as_mut() {
            let end = act.prims.len();
            for r in std::mem::replace(&mut act.returns, saved_returns) {
                if let Some(p) = act.prims.get_mut(r) {
                    p.params[0] = PrimArg::hex(end as u128);
                }
            }
        }
        self.scopes.pop();
        self.inline_depth -= 1;
        res?;
        self.copy_outs(outs, span)
    }

    pub(super) fn extern_method(
        &mut self,
        kind: &ExternKind,
        name: &str,
        m: &str,
        args: &[Arg],
        cspan: Span,
        span: Span,
    ) -> PResult<()> {
        let idx_t = Type::Bit(32);
        match (kind, m) {
            (ExternKind::Counter, "count") => {
                self.arg_count(cspan, m, args, 1)?;
                let i = self.data_arg(&args[0].value, &idx_t)?;
                self.push(
                    "count",
                    vec![PrimArg::CounterArray(name.to_string()), i],
                    span,
                );
            }
            (ExternKind::DirectCounter, "count") => {
                self.arg_count(cspan, m, args, 0)?;
            }
            (ExternKind::Meter, "execute_meter") => {
                self.arg_count(cspan, m, args, 2)?;
                let i = self.data_arg(&args[0].value, &idx_t)?;
                let (d, _) = self.field_dst(&args[1].value)?;
                self.push(
                    "execute_meter",
                    vec![PrimArg::MeterArray(name.to_string()), i, PrimArg::Op(d)],
                    span,
                );
            }
            (ExternKind::DirectMeter, "read") => {
                self.arg_count(cspan, m, args, 1)?;
                let (d, _) = self.field_dst(&args[0].value)?;
                if let (Some(arr), X::Field(h, f)) =
                    (self.ir.arrays.iter_mut().find(|x| x.name == name), d)
                {
                    arr.result_target = Some((h, f));
                }
            }
            (ExternKind::Register, "read") => {
                self.arg_count(cspan, m, args, 2)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let bw = self
                    .ir
                    .arrays
                    .iter()
                    .find(|x| x.name == name)
                    .map(|x| x.bitwidth)
                    .unwrap_or(0);
                if dt.width() != Some(bw) {
                    return Err(Error::new(
                        args[0].value.span,
                        format!(
                            "internal compiler error: register '{}' read into {} (checked by sema::calls)",
                            name,
                            dt.name()
                        ),
                    ));
                }
                let i = self.data_arg(&args[1].value, &idx_t)?;
                self.push(
                    "register_read",
                    vec![PrimArg::Op(d), PrimArg::RegisterArray(name.to_string()), i],
                    span,
                );
            }
            (ExternKind::Register, "write") => {
                self.arg_count(cspan, m, args, 2)?;
                let bw = self
                    .ir
                    .arrays
                    .iter()
                    .find(|x| x.name == name)
                    .map(|x| x.bitwidth)
                    .unwrap_or(32);
                let i = self.data_arg(&args[0].value, &idx_t)?;
                let (x, xt) = self.rv(&args[1].value, Some(&Type::Bit(bw)))?;
                if xt.width() != Some(bw) && xt != Type::InfInt {
                    return Err(Error::new(
                        args[1].value.span,
                        format!(
                            "internal compiler error: register '{}' written with {} (checked by sema::calls)",
                            name,
                            xt.name()
                        ),
                    ));
                }
                let x = self.to_data(x, &xt);
                self.push(
                    "register_write",
                    vec![PrimArg::RegisterArray(name.to_string()), i, x.as_arg()],
                    span,
                );
            }
            _ => {
                // sema::calls checked the method is declared: this one lowering cannot run
                return Err(Error::new(
                    cspan,
                    format!("{} method '{}' is not supported here", kind.name(), m),
                ));
            }
        }
        Ok(())
    }

    pub(super) fn extern_function(
        &mut self,
        n: &str,
        targs: &[TypeRef],
        args: &[Arg],
        cspan: Span,
        span: Span,
    ) -> PResult<()> {
        match n {
            "mark_to_drop" => {
                self.arg_count(cspan, n, args, 1)?;
                self.push(
                    "mark_to_drop",
                    vec![PrimArg::header("standard_metadata")],
                    span,
                );
            }
            "NoAction" => {}
            "random" => {
                self.arg_count(cspan, n, args, 3)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let lo = self.data_arg(&args[1].value, &dt)?;
                let hi = self.data_arg(&args[2].value, &dt)?;
                self.push(
                    "modify_field_rng_uniform",
                    vec![PrimArg::Op(d), lo, hi],
                    span,
                );
            }
            "truncate" => {
                self.arg_count(cspan, n, args, 1)?;
                let l = self.data_arg(&args[0].value, &Type::Bit(32))?;
                self.push("truncate", vec![l], span);
            }
            "assert" | "assume" => {
                self.arg_count(cspan, n, args, 1)?;
                let (x, t) = self.rv(&args[0].value, Some(&Type::Bool))?;
                if t != Type::Bool {
                    return Err(Error::new(
                        args[0].value.span,
                        format!(
                            "internal compiler error: {} of a non-bool (checked by sema::calls)",
                            n
                        ),
                    ));
                }
                self.push(n, vec![PrimArg::Expr(x.clone())], span);
            }
            "log_msg" => {
                if args.is_empty() || args.len() > 2 {
                    return Err(Error::new(
                        cspan,
                        "internal compiler error: log_msg's argument count (not checked by sema::bodies)",
                    ));
                }
                let fmt = match &args[0].value.kind {
                    ExprKind::Str(s) => s.clone(),
                    _ => {
                        return Err(Error::new(
                            args[0].value.span,
                            "internal compiler error: log_msg without a string literal (not checked by sema::bodies)",
                        ))
                    }
                };
                let mut vals = vec![];
                if let Some(a) = args.get(1) {
                    let items: Vec<Expr> = match &a.value.kind {
                        ExprKind::List(v) => v.iter().map(|x| x.1.clone()).collect(),
                        _ => vec![a.value.clone()],
                    };
                    for it in items {
                        let (x, t) = self.rv(&it, None)?;
                        vals.push(self.to_data(x, &t));
                    }
                }
                self.push(
                    "log_msg",
                    vec![PrimArg::Op(X::Str(fmt)), PrimArg::ParamsVector(vals)],
                    span,
                );
            }
            "hash" => {
                self.arg_count(cspan, n, args, 5)?;
                let (d, dt) = self.field_dst(&args[0].value)?;
                let algo = self.algo_name(&args[1].value)?;
                let base = self.data_arg(&args[2].value, &dt)?;
                let inputs = self.field_list_inputs(&args[3].value)?;
                let max = self.data_arg(&args[4].value, &Type::Bit(32))?;
                let cname = self.add_calculation(algo, inputs);
                self.push(
                    "modify_field_with_hash_based_offset",
                    vec![PrimArg::Op(d), base, PrimArg::Calculation(cname), max],
                    span,
                );
            }
            "digest" => {
                self.arg_count(cspan, n, args, 2)?;
                let recv = self.const_expr(&args[0].value, Some(&Type::Bit(32)))?;
                let tname =
                    match targs.first() {
                        Some(t) => match self.env.resolve(t)? {
                            Type::Struct(s) => s,
                            t => {
                                return Err(Error::new(
                                    cspan,
                                    format!("internal compiler error: digest of {} (checked by sema::calls)", t.name()),
                                ))
                            }
                        },
                        None => match self.place(&args[1].value) {
                            Ok(Place::Struct { ty, .. }) => ty,
                            _ => return Err(Error::new(
                                cspan,
                                "internal compiler error: digest without a struct type (checked by sema::calls)",
                            )),
                        },
                    };
                let def = self
                    .env
                    .composite(&tname)
                    .cloned()
                    .ok_or_else(|| {
                        Error::new(
                            cspan,
                            "internal compiler error: unknown digest type (struct types are resolved by sema::types)",
                        )
                    })?;
                let inputs = self.field_list_inputs(&args[1].value)?;
                if inputs.len() != def.fields.len() {
                    return Err(Error::new(
                        args[1].value.span,
                        format!(
                            "internal compiler error: digest type {} and its data differ in size (checked by sema::calls)",
                            tname
                        ),
                    ));
                }
                for i in &inputs {
                    if !matches!(i, CalcInput::Field(..)) {
                        return Err(Error::new(args[1].value.span, "digest data must consist of fields (BMv2 learn lists hold fields only)"));
                    }
                }
                let id = match self.ir.digests.iter().find(|d| d.name == tname) {
                    Some(d) => d.id,
                    None => {
                        let id = self.ir.digests.len() + 1;
                        let fields = def
                            .fields
                            .iter()
                            .zip(inputs.iter())
                            .map(|((f, t, _), i)| {
                                let hf = match i {
                                    CalcInput::Field(h, f) => (h.clone(), f.clone()),
                                    _ => Default::default(),
                                };
                                (f.clone(), hf, t.width().unwrap_or(0))
                            })
                            .collect();
                        self.ir.digests.push(DigestInfo {
                            name: tname.clone(),
                            id,
                            fields,
                        });
                        self.ir.digest_structs.push((
                            tname.clone(),
                            def.fields
                                .iter()
                                .map(|(f, t, _)| (f.clone(), t.width().unwrap_or(0)))
                                .collect(),
                        ));
                        id
                    }
                };
                self.push(
                    "generate_digest",
                    vec![PrimArg::hex(recv), PrimArg::hex(id as u128)],
                    span,
                );
            }
            "clone" | "clone3" | "clone_preserving_field_list" => {
                let want = if n == "clone" { 2 } else { 3 };
                self.arg_count(cspan, n, args, want)?;
                let ct = match &args[0].value.kind {
                    ExprKind::Member(_, m) if m == "I2E" || m == "E2E" => m.clone(),
                    _ => {
                        return Err(Error::new(
                            args[0].value.span,
                            "internal compiler error: clone type (not checked by sema::bodies)",
                        ))
                    }
                };
                let sess = self.data_arg(&args[1].value, &Type::Bit(32))?;
                let fl = if want == 3 {
                    self.field_list(&args[2].value)?
                } else {
                    self.empty_field_list()
                };
                let op = if ct == "I2E" {
                    "clone_ingress_pkt_to_egress"
                } else {
                    "clone_egress_pkt_to_egress"
                };
                self.push(op, vec![sess, PrimArg::hex(fl as u128)], span);
            }
            "resubmit_preserving_field_list"
            | "recirculate_preserving_field_list"
            | "resubmit"
            | "recirculate" => {
                let fl = if n.ends_with("field_list") {
                    self.arg_count(cspan, n, args, 1)?;
                    self.field_list(&args[0].value)?
                } else {
                    0
                };
                let op = if n.starts_with("resubmit") {
                    "resubmit"
                } else {
                    "recirculate"
                };
                self.push(op, vec![PrimArg::hex(fl as u128)], span);
            }
            "verify_checksum"
            | "update_checksum"
            | "verify_checksum_with_payload"
            | "update_checksum_with_payload" => {
                return Err(Error::new(
                    cspan,
                    format!("{} is only allowed in the checksum controls of V1Switch", n),
                ));
            }
            "verify" => return Err(Error::new(cspan, "verify is only allowed in parsers")),
            _ => {
                if let Some(Decl::Function { params, body, .. }) = self.functions.get(n).cloned() {
                    // inline a void function as statements (sema checked the argument count)
                    let rt = match self.functions.get(n) {
                        Some(Decl::Function { ret, .. }) => self.env.resolve(&ret.clone())?,
                        _ => Type::Void,
                    };
                    let ret = self.fn_ret_place(n, &rt);
                    let saved_ret = std::mem::replace(&mut self.fn_ret, ret);
                    let a = Action {
                        annos: vec![],
                        name: n.to_string(),
                        params: params
                            .iter()
                            .map(|p| {
                                let mut p = p.clone();
                                if p.dir == Dir::None {
                                    p.dir = Dir::In;
                                }
                                p
                            })
                            .collect(),
                        body,
                        span: cspan,
                    };
                    let r = self.inline_action(&a, true, args, cspan);
                    self.fn_ret = saved_ret;
                    return r;
                }
                // sema::bodies resolved the callee; an extern function declared in
                // the program but not one of v1model's is this compiler's limit
                let declared = self
                    .prog
                    .decls
                    .iter()
                    .any(|d| matches!(d, Decl::ExternFn(m) if m.name == n));
                if declared {
                    return Err(Error::new(
                        cspan,
                        format!("extern function '{}' is not supported by this compiler", n),
                    ));
                }
                return Err(Error::new(
                    cspan,
                    format!(
                        "internal compiler error: unknown function or action '{}' (checked by sema::bodies)",
                        n
                    ),
                ));
            }
        }
        Ok(())
    }

    /// An empty field list (what a plain clone preserves), as p4c emits it.
    pub(super) fn empty_field_list(&mut self) -> usize {
        if let Some(i) = self.ir.field_lists.iter().position(|f| f.0 == "fl") {
            return i + 1;
        }
        self.ir.field_lists.push(("fl".into(), vec![]));
        self.ir.field_lists.len()
    }

    /// The BMv2 field list id for `@field_list(N)` metadata fields.
    pub(super) fn field_list(&mut self, e: &Expr) -> PResult<usize> {
        let idx = self.const_expr(e, Some(&Type::Bit(8)))?;
        let key = format!("field_list_{}", idx);
        if let Some(i) = self.ir.field_lists.iter().position(|f| f.0 == key) {
            return Ok(i + 1);
        }
        let mut elems = vec![];
        if let Some(m) = self.meta_struct.clone() {
            if let Some(Place::Struct { members, .. }) = self.root_places.get(&m).cloned() {
                let def = self.env.composite(&m).cloned();
                if let Some(def) = def {
                    for ((f, _, annos), (_, p)) in def.fields.iter().zip(members.iter()) {
                        let hit = annos.iter().any(|a| {
                            a.name == "field_list"
                                && a.args
                                    .iter()
                                    .any(|x| matches!(x.kind, ExprKind::Int(v, _) if v == idx))
                        });
                        if hit {
                            let _ = f;
                            if let Place::Field { hdr, field, .. } = p {
                                elems.push((hdr.clone(), field.clone()));
                            }
                        }
                    }
                }
            }
        }
        self.ir.field_lists.push((key, elems));
        Ok(self.ir.field_lists.len())
    }
}
