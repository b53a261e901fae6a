//! Lowering of expressions: places (l-values), r-values, casts, function calls as values.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn place(&mut self, e: &Expr) -> PResult<Place> {
        match &e.kind {
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Bind::Place(p)) => Ok(p),
                Some(Bind::Val(X::Field(hdr, field), ty)) => Ok(Place::Field { hdr, field, ty }),
                Some(_) => {
                    Err(self
                        .not_location(e.span, format!("'{}' cannot be used as a location here", n)))
                }
                None => Err(self.unbound(e.span, n)),
            },
            ExprKind::Member(b, m) => {
                let bp = self.place(b)?;
                match &bp {
                    Place::Struct { ty, members } | Place::Union { ty, members, .. } => {
                        match members.iter().find(|x| x.0 == *m) {
                            Some((_, p)) => Ok(p.clone()),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("internal compiler error: type {} has no field '{}' (not checked by sema::bodies)", ty, m),
                            )),
                        }
                    }
                    Place::Header { inst, ty } => {
                        let key = (ty.clone(), m.clone());
                        if let Some(s) = self.env.header_structs.get(&key) {
                            return Ok(self.header_struct_place(inst, m, s));
                        }
                        match self.env.field_type(&Type::Header(ty.clone()), m) {
                            Some(t) => Ok(Place::Field {
                                hdr: inst.clone(),
                                field: m.clone(),
                                ty: t,
                            }),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("internal compiler error: header {} has no field '{}' (not checked by sema::bodies)", ty, m),
                            )),
                        }
                    }
                    Place::DynHeader { elem, deref, .. } => {
                        let def = self
                            .env
                            .composite(elem)
                            .cloned()
                            .ok_or_else(|| Error::new(e.span, "internal compiler error: unknown header type (types are resolved by sema::types)"))?;
                        match def.fields.iter().position(|f| f.0 == *m) {
                            Some(off) => Ok(Place::DynField {
                                x: X::op("access_field", deref.clone(), X::Num(off)),
                                ty: def.fields[off].1.clone(),
                            }),
                            None => Err(Error::new(
                                member_span(e, m),
                                format!("internal compiler error: header {} has no field '{}' (not checked by sema::bodies)", elem, m),
                            )),
                        }
                    }
                    Place::DynField { ty, .. } => Err(Error::new(
                        e.span,
                        format!("internal compiler error: a value of type {} has no field '{}' (not checked by sema::bodies)", ty.name(), m),
                    )),
                    Place::Stack { .. } if m == "last" && self.ctx != Ctx::Parser => {
                        Err(Error::new(
                            member_span(e, m),
                            "'last' of a header stack can only be used in a parser",
                        ))
                    }
                    Place::Stack { .. } => Err(Error::new(
                        member_span(e, m),
                        format!("'.{}' on a header stack is not a location here", m),
                    )),
                    Place::UnionStack { .. } => Err(Error::new(
                        member_span(e, m),
                        format!("'.{}' on a header union stack is not supported here (only `extract(u.next.member)` in a parser)", m),
                    )),
                    Place::Field { ty, .. } => Err(Error::new(
                        e.span,
                        format!("internal compiler error: a value of type {} has no field '{}' (not checked by sema::bodies)", ty.name(), m),
                    )),
                    Place::Slice { hi, lo, .. } => Err(Error::new(
                        e.span,
                        format!("internal compiler error: a value of type bit<{}> has no field '{}' (checked by sema::bodies)", hi - lo + 1, m),
                    )),
                }
            }
            ExprKind::Index(b, i) => {
                let bp = self.place(b)?;
                match bp {
                    Place::Stack { name, elem, size } => {
                        let idx = match self.const_expr(i, Some(&Type::Bit(32))) {
                            Ok(v) => v,
                            Err(_) => {
                                if self.ctx == Ctx::Parser {
                                    return Err(Error::new(i.span, "header stack indices in parsers must be compile-time constants"));
                                }
                                let (ix, it) = self.rv(i, Some(&Type::Bit(32)))?;
                                if !matches!(it, Type::Bit(_) | Type::Int(_)) {
                                    return Err(Error::new(
                                        i.span,
                                        format!(
                                            "internal compiler error: a header stack index must be an integer, not {} (checked by sema::exprs)",
                                            it.name()
                                        ),
                                    ));
                                }
                                let ix = if self.snap_index {
                                    self.snapshot(ix, &it)
                                } else {
                                    ix
                                };
                                let deref =
                                    X::op("dereference_header_stack", X::Stack(name.clone()), ix);
                                return Ok(Place::DynHeader {
                                    stack: name,
                                    elem,
                                    deref,
                                });
                            }
                        };
                        // sema::exprs checks an index written as a constant; one that becomes
                        // constant only once a function is inlined (`f(5)` indexing with its
                        // parameter) is first seen here, and p4c refuses it too
                        if idx >= size as u128 {
                            return Err(Error::new(
                                i.span,
                                format!(
                                    "index {} is out of bounds for a stack of size {}",
                                    idx, size
                                ),
                            ));
                        }
                        Ok(Place::Header {
                            inst: format!("{}[{}]", name, idx),
                            ty: elem,
                        })
                    }
                    Place::UnionStack { elems, .. } => {
                        match self.const_expr(i, Some(&Type::Bit(32))) {
                            Ok(idx) if idx < elems.len() as u128 => Ok(elems[idx as usize].clone()),
                            Ok(idx) => Err(Error::new(
                                i.span,
                                format!(
                                    "index {} is out of bounds for a header union stack of size {}",
                                    idx,
                                    elems.len()
                                ),
                            )),
                            Err(_) => Err(Error::new(
                                i.span,
                                "header union stacks can only be indexed with compile-time constants",
                            )),
                        }
                    }
                    _ => Err(Error::new(
                        e.span,
                        "internal compiler error: only header stacks can be indexed (checked by sema::exprs)",
                    )),
                }
            }
            ExprKind::Call(..) => self.call_place(e),
            _ => Err(self.not_location(
                e.span,
                "expected a location (a variable, header or field)".into(),
            )),
        }
    }

    /// A struct-typed field `prefix` of header instance `inst`, as a struct of the
    /// header's flattened fields (`prefix.leaf`).
    fn header_struct_place(&self, inst: &str, prefix: &str, s: &str) -> Place {
        let fields = self
            .env
            .composite(s)
            .map(|d| d.fields.clone())
            .unwrap_or_default();
        let members = fields
            .into_iter()
            .map(|(f, t, _)| {
                let name = format!("{}.{}", prefix, f);
                let p = match &t {
                    Type::Struct(inner) => self.header_struct_place(inst, &name, inner),
                    _ => Place::Field {
                        hdr: inst.to_string(),
                        field: name,
                        ty: t,
                    },
                };
                (f, p)
            })
            .collect();
        Place::Struct {
            ty: s.to_string(),
            members,
        }
    }

    // ------------------------------------------------------------ rvalues

    pub(super) fn to_data(&self, x: X, t: &Type) -> X {
        if *t == Type::Bool && x.is_bool_op() {
            X::un("b2d", x)
        } else {
            x
        }
    }

    pub(super) fn check_assign(&self, dst: &Type, src: &Type, span: Span) -> PResult<()> {
        if types_compatible(dst, src) {
            return Ok(());
        }
        Err(Error::new(
            span,
            format!(
                "internal compiler error: cannot assign a value of type {} to a location of type {} (checked by sema::exprs and sema::calls)",
                src.name(),
                dst.name()
            ),
        ))
    }

    /// Lower an r-value: returns the IR expression and its type. Bool-typed results
    /// are boolean expressions; everything else is data.
    /// (width of the sliced value, hi, lo) of `base[hi:lo]`, checked against the width.
    pub(super) fn slice_bounds(
        &mut self,
        t: &Type,
        base: Span,
        hi: &Expr,
        lo: &Expr,
        slice: Span,
    ) -> PResult<(u32, u128, u128)> {
        let w = match t {
            Type::Bit(w) | Type::Int(w) => *w,
            _ => {
                return Err(Error::new(
                    base,
                    format!("internal compiler error: cannot slice a value of type {} (checked by sema::exprs)", t.name()),
                ))
            }
        };
        let h = self.const_expr(hi, None)?;
        let l = self.const_expr(lo, None)?;
        if h < l || h >= w as u128 {
            return Err(Error::new(
                slice,
                format!("internal compiler error: invalid slice [{}:{}] of a {}-bit value (checked by sema::exprs)", h, l, w),
            ));
        }
        Ok((w, h, l))
    }

    pub fn rv(&mut self, e: &Expr, expect: Option<&Type>) -> PResult<(X, Type)> {
        self.inline_depth += 1;
        if self.inline_depth > 200 {
            self.inline_depth -= 1;
            return Err(Error::new(e.span, "expression too deep"));
        }
        // what a location's index or a call in it reads is no location written
        let writing = std::mem::replace(&mut self.writing, false);
        let r = self.rv_inner(e, expect);
        self.writing = writing;
        self.inline_depth -= 1;
        r
    }

    pub(super) fn lit(&self, v: u128, t: &Type) -> X {
        match t {
            Type::Bool => X::Bool(v != 0),
            Type::Int(w) => {
                let sv = sign_extend(v & mask(*w), t);
                if *w > 0 && (sv >> 127) & 1 == 1 {
                    X::Hex(0u128.wrapping_sub(sv), true)
                } else {
                    X::Hex(v & mask(*w), false)
                }
            }
            _ => X::Hex(v, false),
        }
    }

    pub(super) fn wrap(&self, x: X, t: &Type) -> X {
        match t {
            Type::Bit(w) => X::op("&", x, X::Hex(mask(*w), false)),
            Type::Int(w) => X::op("two_comp_mod", x, X::Hex(*w as u128, false)),
            _ => x,
        }
    }

    pub(super) fn rv_inner(&mut self, e: &Expr, expect: Option<&Type>) -> PResult<(X, Type)> {
        // constants first
        if is_const_shape(e) {
            let locals = self.const_locals();
            if let Ok((v, t)) = self.env.const_eval(e, &locals) {
                let t = match (&t, expect) {
                    (Type::InfInt, Some(et)) if et.is_int_like() => {
                        let w = et.width().unwrap_or(128);
                        let sv = v;
                        let neg = (sv >> 127) & 1 == 1;
                        if !neg && w < 128 && shr(sv, w as u128) != 0 {
                            // valid P4: the value is taken modulo 2^w (p4c warns too)
                            self.sink.warn(
                                e.span,
                                format!(
                                    "value {} does not fit in type {}: truncated to {}",
                                    sv,
                                    et.name(),
                                    sv & mask(w)
                                ),
                            );
                        }
                        let t2 = match et {
                            Type::SerEnum(_, w) => Type::Bit(*w),
                            t => t.clone(),
                        };
                        return Ok((self.lit(v & mask(w), &t2), t2));
                    }
                    _ => t,
                };
                if let Type::InfInt = t {
                    if (v >> 127) & 1 == 1 {
                        return Ok((X::Hex(0u128.wrapping_sub(v), true), t));
                    }
                }
                return Ok((self.lit(v, &t), t));
            }
        }
        match &e.kind {
            ExprKind::Int(..) | ExprKind::Bool(_) => unreachable!("constants handled above"),
            ExprKind::Str(s) => Ok((X::Str(s.clone()), Type::Str)),
            ExprKind::Name(n) => match self.lookup(n) {
                Some(Bind::Place(p)) => self.place_value(p, e.span),
                Some(Bind::Val(x, t)) => {
                    if t == Type::Bool && !x.is_bool_op() {
                        return Ok((X::un("d2b", x), t));
                    }
                    Ok((x, t))
                }
                Some(Bind::Const(v, t)) => Ok((self.lit(v, &t), t)),
                Some(_) => Err(Error::new(
                    e.span,
                    format!(
                        "internal compiler error: '{}' cannot be used as a value (checked by sema::bodies)",
                        n
                    ),
                )),
                None => {
                    if self.env.consts.contains_key(n) {
                        let (t, v) = self.env.consts[n].clone();
                        return Ok((self.lit(v, &t), t));
                    }
                    Err(self.unbound(e.span, n))
                }
            },
            ExprKind::Member(b, m) => {
                // members of `error` and enums were folded as constants above; the
                // rest sema::bodies reported
                if let ExprKind::Name(n) = &b.kind {
                    if (n == "error" || self.env.enums.contains_key(n)) && self.lookup(n).is_none()
                    {
                        return Err(Error::new(
                            e.span,
                            format!(
                                "internal compiler error: '{}.{}' is no member (not checked by sema::bodies)",
                                n, m
                            ),
                        ));
                    }
                }
                // stack properties (a call's result is no stack: not inlined just to see)
                let stack = if matches!(b.kind, ExprKind::Call(..)) {
                    None
                } else {
                    self.place(b).ok()
                };
                if let Some(Place::Stack { name, elem, size }) = stack {
                    return match m.as_str() {
                        "size" => Ok((X::Hex(size as u128, false), Type::Bit(32))),
                        // P4_16 header stacks: "May only be used in a parser"
                        "lastIndex" if self.ctx != Ctx::Parser => Err(Error::new(
                            e.span,
                            "'lastIndex' of a header stack can only be used in a parser",
                        )),
                        "lastIndex" => {
                            Ok((X::un("last_stack_index", X::Stack(name)), Type::Bit(32)))
                        }
                        "last" | "next" => Err(Error::new(
                            e.span,
                            format!(
                                "reading the whole header '{}.{}' is not supported by this compiler; access one of its fields",
                                self.src(b.span),
                                m
                            ),
                        )),
                        _ => {
                            let _ = elem;
                            Err(Error::new(
                                e.span,
                                format!("internal compiler error: header stacks have no member '{}' (checked by sema::exprs)", m),
                            ))
                        }
                    };
                }
                if let ExprKind::Member(sb, l) = &b.kind {
                    if l == "last" && self.ctx != Ctx::Parser {
                        return Err(Error::new(
                            b.span,
                            "'last' of a header stack can only be used in a parser",
                        ));
                    }
                    if l == "last" {
                        if let Ok(Place::Stack { name, elem, .. }) = self.place(sb) {
                            let t = self
                                .env
                                .field_type(&Type::Header(elem), m)
                                .ok_or_else(|| {
                                    Error::new(
                                        e.span,
                                        format!("internal compiler error: no field '{}' (checked by sema::exprs)", m),
                                    )
                                })?;
                            let x = X::StackField(name, m.clone());
                            return Ok(if t == Type::Bool {
                                (X::un("d2b", x), t)
                            } else {
                                (x, t)
                            });
                        }
                    }
                }
                if self.ctx == Ctx::Parser {
                    if let Some((x, t)) = self.lookahead_field(b, m, e.span)? {
                        return Ok(if t == Type::Bool {
                            (X::un("d2b", x), t)
                        } else {
                            (x, t)
                        });
                    }
                }
                let p = self.place(e)?;
                self.place_value(p, e.span)
            }
            ExprKind::Index(..) => {
                let p = self.place(e)?;
                self.place_value(p, e.span)
            }
            ExprKind::Slice(b, hi, lo) => {
                let (x, t) = self.rv(b, None)?;
                let (_, h, l) = self.slice_bounds(&t, b.span, hi, lo, e.span)?;
                let (h, l) = (h as u32, l as u32);
                Ok((slice_of(x, h, l), Type::Bit(h - l + 1)))
            }
            ExprKind::Call(..) => self.call_value(e),
            ExprKind::Unary(op, x) => {
                let (v, t) = self.rv(x, expect)?;
                match *op {
                    "!" => {
                        if t != Type::Bool {
                            return Err(Error::new(
                                e.span,
                                format!("internal compiler error: '!' needs a bool operand, not {} (checked by sema::exprs)", t.name()),
                            ));
                        }
                        Ok((X::un("not", v), Type::Bool))
                    }
                    "~" => {
                        if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                            return Err(Error::new(
                                e.span,
                                format!("internal compiler error: '~' needs a bit<N> or int<N> operand, not {} (checked by sema::exprs)", t.name()),
                            ));
                        }
                        Ok((self.wrap(X::un("~", v), &t), t))
                    }
                    "-" => {
                        if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                            return Err(Error::new(
                                e.span,
                                format!(
                                    "internal compiler error: unary '-' needs a bit<N> or int<N> operand, not {} (checked by sema::exprs)",
                                    t.name()
                                ),
                            ));
                        }
                        Ok((self.wrap(X::op("-", X::Hex(0, false), v), &t), t))
                    }
                    _ => Ok((v, t)),
                }
            }
            ExprKind::Binary(op, a, b) => self.binary(e, op, a, b, expect),
            ExprKind::Ternary(c, a, b) => {
                let (cx, ct) = self.rv(c, Some(&Type::Bool))?;
                if ct != Type::Bool {
                    return Err(Error::new(c.span, "internal compiler error: condition of ?: must be bool (checked by sema::exprs)"));
                }
                if (self.has_effects(a) || self.has_effects(b)) && self.act.is_some() {
                    return self.ternary_branches(e, cx, a, b, expect);
                }
                // both branches have one type; an untyped constant branch takes the other
                // branch's (P4_16 "Implicit casts"), so the context's expected type
                // reaches a constant branch only when both are untyped
                let hint = |x: &Expr| if is_const_shape(x) { None } else { expect };
                let (ax0, at0) = self.rv(a, hint(a))?;
                let b_hint = Some(&at0).filter(|t| **t != Type::InfInt).or(hint(b));
                let (bx0, bt0) = self.rv(b, b_hint)?;
                let ((ax, at), (bx, bt)) = match (at0 == Type::InfInt, bt0 == Type::InfInt) {
                    (true, false) => (self.rv(a, Some(&bt0))?, (bx0, bt0)),
                    (true, true) if expect.is_some() => (self.rv(a, expect)?, self.rv(b, expect)?),
                    _ => ((ax0, at0), (bx0, bt0)),
                };
                let t = unify(&at, &bt).ok_or_else(|| {
                    Error::new(
                        e.span,
                        format!(
                            "internal compiler error: branches of ?: have different types {} and {} (checked by sema::exprs)",
                            at.name(),
                            bt.name()
                        ),
                    )
                })?;
                if t == Type::InfInt {
                    return Err(Error::new(
                        e.span,
                        "internal compiler error: cannot infer the width of ?: (give one branch a width) (checked by sema::exprs)",
                    ));
                }
                let (ax, bx) = (self.to_data(ax, &t), self.to_data(bx, &t));
                let x = X::Tern(Box::new(cx), Box::new(ax), Box::new(bx));
                Ok(if t == Type::Bool {
                    (X::un("d2b", x), t)
                } else {
                    (x, t)
                })
            }
            ExprKind::Cast(ty, x) => {
                let t = self.env.resolve(ty)?;
                let (v, vt) = self.rv(x, Some(&t))?;
                self.cast(v, &vt, &t, e.span)
            }
            ExprKind::List(_) => Err(Error::new(e.span, "a list expression is not allowed here")),
            ExprKind::Mask(..) | ExprKind::Range(..) => Err(Error::new(
                e.span,
                "'&&&' and '..' are only allowed in select cases and table entries",
            )),
            ExprKind::Default => Err(Error::new(e.span, "'default'/'_' is not a value")),
            ExprKind::TypeExpr(_) => Err(Error::new(e.span, "a type is not a value")),
        }
    }

    pub(super) fn cast(&mut self, v: X, from: &Type, to: &Type, span: Span) -> PResult<(X, Type)> {
        let r = match (from, to) {
            (f, t) if f == t => v,
            (Type::InfInt, _) => v,
            (Type::Bool, Type::Bit(1)) => X::un("b2d", v),
            (Type::Bit(1), Type::Bool) => X::un("d2b", v),
            (Type::Bit(a), Type::Bit(b)) | (Type::Int(a), Type::Bit(b)) => {
                if b < a || matches!(from, Type::Int(_)) {
                    X::op("&", v, X::Hex(mask(*b), false))
                } else {
                    v
                }
            }
            (Type::Bit(_), Type::Int(b)) | (Type::Int(_), Type::Int(b)) => {
                X::op("two_comp_mod", v, X::Hex(*b as u128, false))
            }
            (Type::SerEnum(_, a), Type::Bit(b)) if a == b => v,
            (Type::Bit(a), Type::SerEnum(_, b)) if a == b => v,
            (Type::SerEnum(_, _), Type::SerEnum(..)) => v,
            _ => {
                return Err(Error::new(
                    span,
                    format!(
                        "internal compiler error: cannot cast {} to {} (checked by sema::exprs)",
                        from.name(),
                        to.name()
                    ),
                ))
            }
        };
        Ok((r, to.clone()))
    }

    pub(super) fn place_value(&mut self, p: Place, span: Span) -> PResult<(X, Type)> {
        match p {
            Place::Field { hdr, field, ty } => {
                let x = X::Field(hdr, field);
                if ty == Type::Bool {
                    Ok((X::un("d2b", x), ty))
                } else {
                    Ok((x, ty))
                }
            }
            Place::Header { inst, ty } => Ok((X::Header(inst), Type::Header(ty))),
            Place::Stack { name, elem, size } => Ok((
                X::Stack(name),
                Type::Stack(Box::new(Type::Header(elem)), size),
            )),
            Place::Struct { ty, .. } => {
                let _ = span;
                Ok((X::Str(String::new()), Type::Struct(ty)))
            }
            Place::Union { name, ty, .. } => Ok((X::Header(name), Type::Union(ty))),
            Place::UnionStack { .. } => Err(Error::new(
                span,
                "a header union stack can only be indexed with a constant or extracted into with `.next` here (other uses are not supported by this compiler)",
            )),
            Place::DynHeader { deref, elem, .. } => Ok((deref, Type::Header(elem))),
            Place::DynField { x, ty } => {
                if ty == Type::Bool {
                    Ok((X::un("d2b", x), ty))
                } else {
                    Ok((x, ty))
                }
            }
            Place::Slice { base, hi, lo } => {
                let (x, _) = self.place_value(*base, span)?;
                Ok((slice_of(x, hi, lo), Type::Bit(hi - lo + 1)))
            }
        }
    }

    /// `place`, and also a slice of a field (`f[7:4]`, `f[7:4][1:0]`): the locations an
    /// assignment or an `out`/`inout` argument can name.
    pub(super) fn place_or_slice(&mut self, e: &Expr) -> PResult<Place> {
        let saved = std::mem::replace(&mut self.writing, true);
        let r = self.place_or_slice_inner(e);
        self.writing = saved;
        r
    }

    fn place_or_slice_inner(&mut self, e: &Expr) -> PResult<Place> {
        let ExprKind::Slice(b, hi, lo) = &e.kind else {
            return self.place(e);
        };
        let bp = self.place_or_slice_inner(b)?;
        let (_, h, l) = self.slice_bounds(&bp.ty(), b.span, hi, lo, e.span)?;
        let (h, l) = (h as u32, l as u32);
        Ok(match bp {
            Place::Slice { base, lo: l0, .. } => Place::Slice {
                base,
                hi: l0 + h,
                lo: l0 + l,
            },
            base => Place::Slice {
                base: Box::new(base),
                hi: h,
                lo: l,
            },
        })
    }

    /// `base[hi:lo] = x`: the whole field rewritten, its other bits kept.
    pub(super) fn store_slice(&mut self, base: &Place, hi: u32, lo: u32, x: X, span: Span) {
        let (dst, cur, w) = match base {
            Place::Field { hdr, field, ty } => (
                PrimArg::field(hdr, field),
                X::Field(hdr.clone(), field.clone()),
                ty.width().unwrap_or(0),
            ),
            Place::DynField { x, ty } => {
                (PrimArg::Expr(x.clone()), x.clone(), ty.width().unwrap_or(0))
            }
            _ => unreachable!("place_or_slice slices fields only"),
        };
        let m = shl(mask(hi - lo + 1), lo as u128);
        let keep = X::op("&", cur, X::Hex(!m & mask(w), false));
        let shifted = X::op(
            "&",
            X::op("<<", x, X::Hex(lo as u128, false)),
            X::Hex(m, false),
        );
        self.push(
            "assign",
            vec![dst, X::op("|", keep, shifted).as_arg()],
            span,
        );
    }

    pub(super) fn binary(
        &mut self,
        e: &Expr,
        op: &'static str,
        a: &Expr,
        b: &Expr,
        expect: Option<&Type>,
    ) -> PResult<(X, Type)> {
        match op {
            "&&" | "||" => {
                let (ax, at) = self.rv(a, Some(&Type::Bool))?;
                if self.has_effects(b) && self.act.is_some() && at == Type::Bool {
                    return self.short_circuit(op, ax, b);
                }
                let (bx, bt) = self.rv(b, Some(&Type::Bool))?;
                if at != Type::Bool || bt != Type::Bool {
                    return Err(Error::new(
                        e.span,
                        format!(
                            "internal compiler error: '{}' needs bool operands, not {} and {} (checked by sema::exprs)",
                            op,
                            at.name(),
                            bt.name()
                        ),
                    ));
                }
                return Ok((
                    X::op(if op == "&&" { "and" } else { "or" }, ax, bx),
                    Type::Bool,
                ));
            }
            "<<" | ">>" => {
                let first = if self.has_effects(b) {
                    // left to right: the left operand is read before the right one's effects
                    let (ax, at) = self.rv(a, None)?;
                    Some((self.snapshot(ax, &at), at))
                } else {
                    None
                };
                let (bx, bt) = self.rv(b, None)?;
                let right_const = matches!(bx, X::Hex(..));
                let (ax, at) = match first {
                    Some(f) => f,
                    None => self.rv(a, if right_const { expect } else { None })?,
                };
                if !at.is_int_like() || !bt.is_int_like() {
                    return Err(Error::new(
                        e.span,
                        format!("internal compiler error: '{}' needs integer operands (checked by sema::exprs)", op),
                    ));
                }
                if at == Type::InfInt {
                    return Err(Error::new(
                        a.span,
                        "internal compiler error: the left operand of a shift needs a width (e.g. 8w1) (checked by sema::exprs)",
                    ));
                }
                if matches!(bt, Type::Int(_)) {
                    return Err(Error::new(b.span, "internal compiler error: shift amounts must be unsigned (checked by sema::exprs)"));
                }
                let x = X::op(op, ax, bx);
                return Ok((if op == "<<" { self.wrap(x, &at) } else { x }, at));
            }
            "++" => {
                let (ax, at) = self.rv(a, None)?;
                let ax = if self.has_effects(b) {
                    self.snapshot(ax, &at)
                } else {
                    ax
                };
                let (bx, bt) = self.rv(b, None)?;
                let (wa, wb) = match (&at, &bt) {
                    (Type::Bit(x) | Type::Int(x), Type::Bit(y) | Type::Int(y)) => (*x, *y),
                    _ => {
                        return Err(Error::new(
                            e.span,
                            format!(
                                "internal compiler error: '++' needs bit<N> operands with known widths, not {} and {} (checked by sema::exprs)",
                                at.name(),
                                bt.name()
                            ),
                        ))
                    }
                };
                let _ = wa;
                let rt = match at {
                    Type::Int(_) => Type::Int(wa + wb),
                    _ => Type::Bit(wa + wb),
                };
                let bx = if matches!(bt, Type::Int(_)) {
                    X::op("&", bx, X::Hex(mask(wb), false))
                } else {
                    bx
                };
                let ax = if matches!(at, Type::Int(_)) {
                    X::op("&", ax, X::Hex(mask(wa), false))
                } else {
                    ax
                };
                return Ok((
                    X::op("|", X::op("<<", ax, X::Hex(wb as u128, false)), bx),
                    rt,
                ));
            }
            _ => {}
        }
        // typed binary: infer the literal side from the other
        let (mut ax, mut at) = self.rv(a, None)?;
        if self.has_effects(b) {
            ax = self.snapshot(ax, &at);
        }
        let (bx, bt) = self.rv(b, if at != Type::InfInt { Some(&at) } else { None })?;
        if at == Type::InfInt && bt != Type::InfInt {
            let r = self.rv(a, Some(&bt))?;
            ax = r.0;
            at = r.1;
        }
        let t = match unify(&at, &bt) {
            Some(t) => t,
            None => {
                return Err(Error::new(
                    e.span,
                    format!(
                        "internal compiler error: operands of '{}' have different types: {} and {} (checked by sema::exprs)",
                        op,
                        at.name(),
                        bt.name()
                    ),
                ));
            }
        };
        let t = match (&t, expect) {
            (Type::InfInt, Some(et))
                if et.is_int_like() && !matches!(op, "==" | "!=" | "<" | ">" | "<=" | ">=") =>
            {
                et.clone()
            }
            _ => t,
        };
        match op {
            "==" | "!=" => {
                if matches!(
                    t,
                    Type::Header(_) | Type::Struct(_) | Type::Stack(..) | Type::Union(_)
                ) {
                    let eq = self.composite_eq(e, a, b)?;
                    return Ok((if op == "==" { eq } else { X::un("not", eq) }, Type::Bool));
                }
                if t == Type::Bool {
                    // compare as data
                    return Ok((X::op(op, X::un("b2d", ax), X::un("b2d", bx)), Type::Bool));
                }
                Ok((X::op(op, ax, bx), Type::Bool))
            }
            "<" | ">" | "<=" | ">=" => {
                if !t.is_int_like() {
                    return Err(Error::new(
                        e.span,
                        format!("internal compiler error: '{}' needs integer operands, not {} (checked by sema::exprs)", op, t.name()),
                    ));
                }
                Ok((X::op(op, ax, bx), Type::Bool))
            }
            "+" | "-" | "*" | "/" | "%" | "&" | "|" | "^" | "|+|" | "|-|" => {
                if !matches!(t, Type::Bit(_) | Type::Int(_) | Type::InfInt) {
                    return Err(Error::new(
                        e.span,
                        format!("internal compiler error: '{}' needs bit<N> or int<N> operands, not {} (checked by sema::exprs)", op, t.name()),
                    ));
                }
                if matches!(op, "/" | "%") && matches!(t, Type::Int(_)) {
                    return Err(Error::new(
                        e.span,
                        format!("internal compiler error: '{}' is not defined on signed integers (checked by sema::exprs)", op),
                    ));
                }
                let x = match op {
                    "|+|" => {
                        let w = t.width().unwrap_or(32);
                        match t {
                            Type::Int(_) => {
                                X::op("sat_cast", X::op("+", ax, bx), X::Hex(w as u128, false))
                            }
                            _ => X::op("usat_cast", X::op("+", ax, bx), X::Hex(w as u128, false)),
                        }
                    }
                    "|-|" => {
                        let w = t.width().unwrap_or(32);
                        match t {
                            Type::Int(_) => {
                                X::op("sat_cast", X::op("-", ax, bx), X::Hex(w as u128, false))
                            }
                            _ => X::op("usat_cast", X::op("-", ax, bx), X::Hex(w as u128, false)),
                        }
                    }
                    "+" | "-" | "*" => self.wrap(X::op(op, ax, bx), &t),
                    _ => X::op(op, ax, bx),
                };
                Ok((x, t))
            }
            _ => Err(Error::new(e.span, format!("unsupported operator '{}'", op))),
        }
    }

    pub(super) fn call_value(&mut self, e: &Expr) -> PResult<(X, Type)> {
        let ExprKind::Call(f, _, args) = &e.kind else {
            unreachable!()
        };
        if let ExprKind::Member(b, m) = &f.kind {
            if m == "isValid" && args.is_empty() {
                match self.place(b)? {
                    Place::Header { inst, .. } => {
                        return Ok((X::un("d2b", X::Field(inst, "$valid$".into())), Type::Bool))
                    }
                    Place::Union { members, .. } => {
                        let mut x: Option<X> = None;
                        for (_, m) in members {
                            if let Place::Header { inst, .. } = m {
                                let v = X::un("d2b", X::Field(inst, "$valid$".into()));
                                x = Some(match x {
                                    Some(p) => X::op("or", p, v),
                                    None => v,
                                });
                            }
                        }
                        return Ok((x.unwrap_or(X::Bool(false)), Type::Bool));
                    }
                    Place::DynHeader { deref, .. } => {
                        return Ok((X::un("valid", deref), Type::Bool))
                    }
                    _ => {
                        return Err(Error::new(
                            e.span,
                            "internal compiler error: isValid() needs a header (checked by sema::exprs)",
                        ))
                    }
                }
            }
            if m == "lookahead" {
                if let Some((w, t)) = self.lookahead_call(e)? {
                    if self.ctx != Ctx::Parser {
                        return Err(Error::new(e.span, "lookahead is only allowed in parsers"));
                    }
                    if !matches!(t, Type::Bit(_) | Type::Int(_)) {
                        return Err(Error::new(e.span, "only lookahead of bit<N>/int<N> values (or a field of a looked-ahead header) can be used in expressions"));
                    }
                    let x = self.parser_temp(X::Lookahead(0, w), &t);
                    return Ok((x, t));
                }
            }
            if m == "apply" {
                return Err(Error::new(e.span, "table application results can only be used as `t.apply().hit`, `.miss` or in `switch (t.apply().action_run)`"));
            }
        }
        if let ExprKind::Name(n) = &f.kind {
            if let Some(Decl::Function {
                ret, params, body, ..
            }) = self.functions.get(n).cloned()
            {
                return self.inline_function(e, n, &ret, &params, &body, args);
            }
        }
        // sema::bodies refused unknown callees and actions or void extern functions used
        // as values; what is left returns a value this compiler cannot take in an
        // expression (an extern function or method declared with a result)
        Err(Error::new(
            e.span,
            format!(
                "'{}' as a value is not supported by this compiler (only functions, isValid() and lookahead<T>() are taken in expressions)",
                self.src(f.span)
            ),
        ))
    }

    /// Inlines a function body as statements (in the current action, or before the
    /// current condition/table in an apply block); the result is a temporary.
    pub(super) fn inline_function_stmts(
        &mut self,
        e: &Expr,
        n: &str,
        rt: &Type,
        params: &[Param],
        body: &[Stmt],
        args: &[Arg],
    ) -> PResult<(X, Type)> {
        match self.inline_function_body(e, n, rt, params, body, args)? {
            Some(Place::Field { hdr, field, ty }) => Ok((
                if ty == Type::Bool {
                    X::un("d2b", X::Field(hdr, field))
                } else {
                    X::Field(hdr, field)
                },
                ty,
            )),
            Some(p) => Err(Error::new(
                e.span,
                format!(
                    "a {} returned by a function can only be assigned or have its fields read (other uses are not supported by this compiler)",
                    p.ty().name()
                ),
            )),
            None => Err(Error::new(
                e.span,
                format!(
                    "internal compiler error: function '{}' returns no value (checked by sema::exprs)",
                    n
                ),
            )),
        }
    }

    /// The location that receives a function's return value while its body is inlined
    /// (`return v;` assigns it): a scalar, or a temporary header or struct.
    pub(super) fn fn_ret_place(&mut self, n: &str, rt: &Type) -> Option<Place> {
        let name = format!("{}_ret_{}", n, self.tmp_count);
        self.tmp_count += 1;
        match rt {
            Type::Void => None,
            Type::Header(_) | Type::Struct(_) | Type::Union(_) => {
                Some(self.make_place("", &name, rt.clone(), true, &name))
            }
            _ => Some(self.scalar(&name, rt)),
        }
    }

    /// A call of a function returning a header or struct, as a location: the body is
    /// inlined and its temporary return value is the place (`h = f();`, `f().field`).
    fn call_place(&mut self, e: &Expr) -> PResult<Place> {
        let not_location = || {
            self.not_location(
                e.span,
                "expected a location (a variable, header or field)".into(),
            )
        };
        let ExprKind::Call(f, _, args) = &e.kind else {
            return Err(not_location());
        };
        let ExprKind::Name(n) = &f.kind else {
            return Err(not_location());
        };
        let Some(Decl::Function {
            ret, params, body, ..
        }) = self.functions.get(n).cloned()
        else {
            return Err(not_location());
        };
        let rt = self.env.resolve(&ret)?;
        if !matches!(rt, Type::Header(_) | Type::Struct(_) | Type::Union(_)) {
            return Err(not_location());
        }
        // the body's statements read and write as anywhere else
        let writing = std::mem::replace(&mut self.writing, false);
        let r = self.inline_function_body(e, n, &rt, &params, &body, args);
        self.writing = writing;
        Ok(r?.expect("a function with a return type has a return place"))
    }

    /// Inlines a function body as statements; returns the place of its return value.
    pub(super) fn inline_function_body(
        &mut self,
        e: &Expr,
        n: &str,
        rt: &Type,
        params: &[Param],
        body: &[Stmt],
        args: &[Arg],
    ) -> PResult<Option<Place>> {
        if self.ctx == Ctx::Parser || self.ctx == Ctx::Checksum || self.ctx == Ctx::Deparser {
            return Err(Error::new(e.span, format!("function '{}' cannot be inlined here (only `return expr;` bodies are supported in parsers)", n)));
        }
        let ret = self.fn_ret_place(n, rt);
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
            body: body.to_vec(),
            span: e.span,
        };
        let saved_ret = std::mem::replace(&mut self.fn_ret, ret.clone());
        let made = self.pre_begin();
        let saved_ctx = self.ctx;
        self.ctx = Ctx::Action;
        let r = self.inline_action(&a, true, args, e.span);
        self.ctx = saved_ctx;
        self.fn_ret = saved_ret;
        self.pre_end(made);
        r?;
        Ok(ret)
    }

    pub(super) fn inline_function(
        &mut self,
        e: &Expr,
        n: &str,
        ret: &TypeRef,
        params: &[Param],
        body: &[Stmt],
        args: &[Arg],
    ) -> PResult<(X, Type)> {
        // Only functions of the form `{ return expr; }` (after local consts) are inlined as values.
        let rt = self.env.resolve(ret)?;
        if self.inline_depth > 60 {
            return Err(Error::new(
                e.span,
                "function calls nested too deeply (recursion?)",
            ));
        }
        // a header, struct or tuple parameter is bound to a location (a list argument
        // to a temporary), which the expression-only inlining below cannot do
        let mut composite = false;
        for p in params {
            composite |= matches!(
                self.env.resolve(&p.ty)?,
                Type::Header(_)
                    | Type::Struct(_)
                    | Type::Union(_)
                    | Type::Tuple(_)
                    | Type::Stack(..)
            );
        }
        if !fn_is_simple(params, body) || composite {
            return self.inline_function_stmts(e, n, &rt, params, body, args);
        }
        let mut binds = vec![];
        for (p, a) in params.iter().zip(args) {
            let pt = self.env.resolve(&p.ty)?;
            let (x, t) = self.rv(&a.value, Some(&pt))?;
            self.check_assign(&pt, &t, a.value.span)?;
            binds.push((
                p.name.clone(),
                match x {
                    X::Hex(v, false) => Bind::Const(v, pt),
                    x => Bind::Val(x, pt),
                },
            ));
        }
        let ret_expr = match body.iter().find_map(|s| match &s.kind {
            StmtKind::Return(Some(x)) => Some(x.clone()),
            _ => None,
        }) {
            Some(x) if body.iter().all(|s| matches!(s.kind, StmtKind::Return(_) | StmtKind::Const(..))) => x,
            _ => return Err(Error::new(e.span, format!("function '{}' is too complex to inline in an expression (only `return expr;` bodies are supported)", n))),
        };
        self.scopes.push(HashMap::new());
        for (k, b) in binds {
            self.bind(&k, b);
        }
        for s in body {
            if let StmtKind::Const(ty, cn, v) = &s.kind {
                let t = self.env.resolve(ty)?;
                let val = self.const_expr(v, Some(&t))?;
                self.bind(cn, Bind::Const(val, t));
            }
        }
        let r = self.rv(&ret_expr, Some(&rt));
        self.scopes.pop();
        let (x, t) = r?;
        self.check_assign(&rt, &t, ret_expr.span)?;
        Ok((x, if t == Type::InfInt { rt } else { t }))
    }
}

/// Bits `hi..=lo` of the value `x`.
fn slice_of(x: X, hi: u32, lo: u32) -> X {
    let shifted = if lo == 0 {
        x
    } else {
        X::op(">>", x, X::Hex(lo as u128, false))
    };
    X::op("&", shifted, X::Hex(mask(hi - lo + 1), false))
}
