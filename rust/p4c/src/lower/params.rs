//! Copy-in/copy-out of parameters of inlined actions and functions (P4_16 §6.8), and
//! snapshots that keep left-to-right evaluation order when a later operand has side
//! effects. Arguments are bound by reference (no primitive) unless the body could tell the
//! difference: it writes a location an `in` argument reads, or reaches the location of an
//! `out`/`inout` argument under another name (a second parameter, a control local). The
//! decision uses `effects` (syntactic, over-approximating) and the storage the names resolve
//! to at the call site.

use super::*;
use crate::effects;

/// Storage keys (`hdr.field`, header instance, stack name) a place covers.
fn place_keys(p: &Place, out: &mut Vec<String>) {
    match p {
        Place::Field { hdr, field, .. } => out.push(format!("{}.{}", hdr, field)),
        Place::Header { inst, .. } => out.push(inst.clone()),
        Place::Stack { name, .. } | Place::DynHeader { stack: name, .. } => out.push(name.clone()),
        Place::Struct { members, .. } | Place::Union { members, .. } => {
            members.iter().for_each(|m| place_keys(&m.1, out))
        }
        Place::UnionStack { name, elems, .. } => {
            out.push(name.clone());
            elems.iter().for_each(|e| place_keys(e, out))
        }
        Place::DynField { x, .. } => x_keys(x, out),
        Place::Slice { base, .. } => place_keys(base, out),
    }
}

fn x_keys(x: &X, out: &mut Vec<String>) {
    match x {
        X::Field(h, f) => out.push(format!("{}.{}", h, f)),
        X::Header(h) | X::Stack(h) => out.push(h.clone()),
        X::StackField(h, _) => out.push(h.clone()),
        X::Op(_, l, r) => {
            if let Some(l) = l {
                x_keys(l, out);
            }
            x_keys(r, out);
        }
        X::Tern(c, a, b) => {
            x_keys(c, out);
            x_keys(a, out);
            x_keys(b, out);
        }
        _ => {}
    }
}

/// Two keys overlap when equal or one is a part of the other (`h` / `h.f`, `s` / `s[0].f`).
fn overlap(a: &[String], b: &[String]) -> bool {
    let within = |x: &str, y: &str| {
        x.len() > y.len() && x.starts_with(y) && matches!(x.as_bytes()[y.len()], b'.' | b'[')
    };
    a.iter()
        .any(|x| b.iter().any(|y| x == y || within(x, y) || within(y, x)))
}

/// Whether a location is a header or a struct with a header inside.
fn holds_header(p: &Place) -> bool {
    match p {
        Place::Header { .. } => true,
        Place::Struct { members, .. } => members.iter().any(|m| holds_header(&m.1)),
        _ => false,
    }
}

/// Whether a function is inlined as a plain expression (no statements, no out/inout).
pub(super) fn fn_is_simple(params: &[Param], body: &[Stmt]) -> bool {
    params
        .iter()
        .all(|p| p.dir != Dir::Out && p.dir != Dir::InOut)
        && body
            .iter()
            .all(|s| matches!(s.kind, StmtKind::Return(_) | StmtKind::Const(..)))
        && body
            .iter()
            .any(|s| matches!(s.kind, StmtKind::Return(Some(_))))
}

impl<'a> Lower<'a> {
    /// Storage the names resolve to in the current scope (unknown names: none).
    fn names_keys<'n>(&self, names: impl IntoIterator<Item = &'n String>) -> Vec<String> {
        let mut out = vec![];
        for n in names {
            match self.lookup(n) {
                Some(Bind::Place(p)) => place_keys(&p, &mut out),
                Some(Bind::Val(x, _)) => x_keys(&x, &mut out),
                _ => {}
            }
        }
        out
    }

    /// Whether evaluating `e` may change state (calls other than pure functions).
    pub(super) fn has_effects(&self, e: &Expr) -> bool {
        effects::has_effects(
            e,
            &|n| matches!(self.functions.get(n), Some(Decl::Function { params, body, .. }) if fn_is_simple(params, body)),
        )
    }

    fn callee_bodies(&self) -> impl Fn(&str) -> Option<Vec<Stmt>> + '_ {
        move |n: &str| {
            if let Some((a, _)) = self.find_action(n) {
                return Some(a.body.clone());
            }
            match self.functions.get(n) {
                Some(Decl::Function { body, .. }) => Some(body.clone()),
                _ => None,
            }
        }
    }

    /// Binds the parameters of an inlined body (`a`) to `args` (in the action's parameter
    /// order, `dir` already defaulted), emitting copy-in primitives where needed; returns
    /// the bindings and the copy-outs (destination, temporary) to emit after the body.
    #[allow(clippy::type_complexity)] // (bindings, copy-outs): named at the one caller
    pub(super) fn bind_params(
        &mut self,
        a: &Action,
        args: &[(Param, Type, Expr)],
        span: Span,
    ) -> PResult<(Vec<(String, Bind)>, Vec<(Place, Place)>)> {
        if args.is_empty() {
            return Ok((vec![], vec![]));
        }
        let access = effects::body_access(&a.body, &self.callee_bodies());
        // where each argument lives; out/inout arguments are evaluated once, here
        let mut places: Vec<Option<Place>> = vec![];
        let mut keys: Vec<Vec<String>> = vec![];
        for (p, _, e) in args {
            if p.dir == Dir::In {
                keys.push(self.names_keys(&effects::roots(e)));
                places.push(None);
            } else {
                // the location is fixed at the call: a run-time index is read once, here
                let saved = std::mem::replace(&mut self.snap_index, true);
                let pl = self.place_or_slice(e);
                self.snap_index = saved;
                let pl = pl?;
                let mut k = vec![];
                place_keys(&pl, &mut k);
                keys.push(k);
                places.push(Some(pl));
            }
        }
        let mut written = self.names_keys(&access.written);
        let mut mentioned: Vec<Vec<String>> = vec![];
        for (j, (p, _, _)) in args.iter().enumerate() {
            if p.dir != Dir::In && access.written.contains(&p.name) {
                written.extend(keys[j].iter().cloned());
            }
        }
        let body_names = self.names_keys(access.names.iter());
        for i in 0..args.len() {
            let mut m = body_names.clone();
            for (j, (p, _, _)) in args.iter().enumerate() {
                if j != i && access.names.contains(&p.name) {
                    m.extend(keys[j].iter().cloned());
                }
            }
            mentioned.push(m);
        }
        let mut binds = vec![];
        let mut outs = vec![];
        for (i, (p, t, e)) in args.iter().enumerate() {
            let later_effects = args[i + 1..].iter().any(|x| self.has_effects(&x.2));
            let copy = match p.dir {
                Dir::In => {
                    !keys[i].is_empty() && (later_effects || overlap(&keys[i], &written))
                        || access.written.contains(&p.name)
                        // a header or struct value given as a list lives in a temporary
                        || matches!(e.kind, ExprKind::List(_))
                }
                // a slice is no location the body could name: always a temporary
                _ => {
                    overlap(&keys[i], &mentioned[i])
                        || matches!(places[i], Some(Place::Slice { .. }))
                        // §6.8: an `inout` value is copied in before later arguments are
                        // evaluated (`f(a, g(a))` with `g` writing `a`: `f` sees the old `a`)
                        || (p.dir == Dir::InOut && later_effects)
                        // §6.8: an `out` header starts invalid, and the caller's header
                        // is invalid after the call unless the body makes it valid: the
                        // temporary is invalidated and copied out with its validity
                        || (p.dir == Dir::Out && places[i].as_ref().is_some_and(holds_header))
                }
            } && !matches!(t, Type::Stack(..) | Type::Union(_));
            if !copy {
                let b = match places[i].take() {
                    Some(pl) => Bind::Place(pl),
                    None => self.bind_arg(p, t, e)?,
                };
                binds.push((p.name.clone(), b));
                continue;
            }
            let tname = format!("{}_{}_{}", a.name, p.name, self.tmp_count);
            self.tmp_count += 1;
            let tmp = self.make_place("", &tname, t.clone(), true, &tname);
            match (p.dir, places[i].take()) {
                (Dir::In, _) => self.assign_place(&tmp, e, span)?,
                (Dir::InOut, Some(pl)) => {
                    self.copy_place(&tmp, &pl, span)?;
                    outs.push((pl, tmp.clone()));
                }
                (_, Some(pl)) => {
                    // an `out` argument starts uninitialized: headers invalid
                    self.invalidate_headers(&tmp, span);
                    outs.push((pl, tmp.clone()));
                }
                (_, None) => unreachable!("directional arguments have places"),
            }
            binds.push((p.name.clone(), Bind::Place(tmp)));
        }
        Ok((binds, outs))
    }

    fn invalidate_headers(&mut self, p: &Place, span: Span) {
        match p {
            Place::Header { inst, .. } => {
                self.push("remove_header", vec![PrimArg::header(inst)], span)
            }
            Place::Struct { members, .. } => members
                .clone()
                .iter()
                .for_each(|m| self.invalidate_headers(&m.1, span)),
            _ => {}
        }
    }

    pub(super) fn copy_outs(&mut self, outs: Vec<(Place, Place)>, span: Span) -> PResult<()> {
        for (dst, tmp) in outs {
            self.copy_place(&dst, &tmp, span)?;
        }
        Ok(())
    }

    /// `exit` inside inlined bodies: the pending copy-outs still happen (innermost first),
    /// as p4c does.
    pub(super) fn copy_outs_before_exit(&mut self, span: Span) -> PResult<()> {
        for frame in self.copy_frames.clone().into_iter().rev() {
            self.copy_outs(frame, span)?;
        }
        Ok(())
    }

    /// Keeps the value of an already evaluated operand when a later operand has side
    /// effects: stores it in a temporary (constants and action data need none).
    pub(super) fn snapshot(&mut self, x: X, t: &Type) -> X {
        if matches!(x, X::Hex(..) | X::Bool(_) | X::Runtime(_) | X::Str(_))
            || !matches!(
                t,
                Type::Bit(_) | Type::Int(_) | Type::Bool | Type::SerEnum(..)
            )
        {
            return x;
        }
        let tmp = self.scalar(&format!("tmp_{}", self.tmp_count), t);
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = tmp else {
            unreachable!()
        };
        let data = self.to_data(x, t);
        self.push(
            "assign",
            vec![PrimArg::field(&hdr, &field), data.as_arg()],
            Span::default(),
        );
        let f = X::Field(hdr, field);
        if *t == Type::Bool {
            X::un("d2b", f)
        } else {
            f
        }
    }

    fn jump_at(&self) -> usize {
        self.act.as_ref().map(|a| a.prims.len()).unwrap_or(0)
    }

    /// `a && b` / `a || b` where `b` has side effects: `b` runs only when `a` does not
    /// decide the result (a conditional jump over it inside the action).
    pub(super) fn short_circuit(&mut self, op: &str, ax: X, b: &Expr) -> PResult<(X, Type)> {
        let r = self.scalar(&format!("tmp_{}", self.tmp_count), &Type::Bool);
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = r else {
            unreachable!()
        };
        let rf = X::Field(hdr.clone(), field.clone());
        let dst = PrimArg::field(&hdr, &field);
        let a_data = self.to_data(ax, &Type::Bool);
        self.push("assign", vec![dst.clone(), a_data.as_arg()], b.span);
        // jump over `b` when `a` is false (&&) or true (||)
        let skip_when_zero = if op == "&&" {
            rf.clone()
        } else {
            X::un("b2d", X::un("not", X::un("d2b", rf.clone())))
        };
        let at = self.jump_at();
        self.push(
            "_jump_if_zero",
            vec![skip_when_zero.as_arg(), PrimArg::hex(0)],
            b.span,
        );
        let (bx, bt) = self.rv(b, Some(&Type::Bool))?;
        if bt != Type::Bool {
            return Err(Error::new(
                b.span,
                format!(
                    "internal compiler error: '{}' needs bool operands, not {} (checked by sema::exprs)",
                    op,
                    bt.name()
                ),
            ));
        }
        let b_data = self.to_data(bx, &Type::Bool);
        self.push("assign", vec![dst, b_data.as_arg()], b.span);
        let end = self.jump_at();
        self.set_jump(at, 1, end);
        Ok((X::un("d2b", rf), Type::Bool))
    }

    /// `c ? a : b` where a branch has side effects: only the chosen branch runs.
    pub(super) fn ternary_branches(
        &mut self,
        e: &Expr,
        cx: X,
        a: &Expr,
        b: &Expr,
        expect: Option<&Type>,
    ) -> PResult<(X, Type)> {
        // an untyped constant `a` takes the type of `b`, known once `b` (with its
        // effects) is lowered: lower the branches the other way round, on `!c`
        if is_const_shape(a)
            && !is_const_shape(b)
            && matches!(self.rv(a, None), Ok((_, Type::InfInt)))
        {
            return self.ternary_branches(e, X::un("not", cx), b, a, expect);
        }
        let c_data = self.to_data(cx, &Type::Bool);
        let jz = self.jump_at();
        self.push(
            "_jump_if_zero",
            vec![c_data.as_arg(), PrimArg::hex(0)],
            e.span,
        );
        let (ax, at) = self.rv(a, expect)?;
        let t = if at == Type::InfInt {
            expect.cloned().unwrap_or(Type::InfInt)
        } else {
            at.clone()
        };
        if t == Type::InfInt {
            return Err(Error::new(
                e.span,
                "internal compiler error: cannot infer the width of ?: (give one branch a width) (checked by sema::exprs)",
            ));
        }
        let r = self.scalar(&format!("tmp_{}", self.tmp_count), &t);
        self.tmp_count += 1;
        let Place::Field { hdr, field, .. } = r else {
            unreachable!()
        };
        let dst = PrimArg::field(&hdr, &field);
        let ax = if at == Type::InfInt {
            self.rv(a, Some(&t))?.0
        } else {
            ax
        };
        let a_data = self.to_data(ax, &t);
        self.push("assign", vec![dst.clone(), a_data.as_arg()], a.span);
        let j = self.jump_at();
        self.push("_jump", vec![PrimArg::hex(0)], e.span);
        self.set_jump(jz, 1, j + 1);
        let (bx, bt) = self.rv(b, Some(&t))?;
        if unify(&t, &bt).is_none() {
            return Err(Error::new(
                e.span,
                format!(
                    "internal compiler error: branches of ?: have different types {} and {} (checked by sema::exprs)",
                    t.name(),
                    bt.name()
                ),
            ));
        }
        let b_data = self.to_data(bx, &bt);
        self.push("assign", vec![dst, b_data.as_arg()], b.span);
        let end = self.jump_at();
        self.set_jump(j, 0, end);
        let f = X::Field(hdr, field);
        Ok(if t == Type::Bool {
            (X::un("d2b", f), t)
        } else {
            (f, t)
        })
    }
}
