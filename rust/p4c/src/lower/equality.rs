//! `==`/`!=` on headers, header unions, stacks and structs (P4_16 §8.x): two headers are
//! equal when both are invalid, or both are valid with equal fields; unions, stacks and
//! structs compare member by member. Lowered to one boolean expression over the fields.

use super::*;

impl<'a> Lower<'a> {
    pub(super) fn composite_eq(&mut self, e: &Expr, a: &Expr, b: &Expr) -> PResult<X> {
        let pa = self.place(a)?;
        let pb = self.place(b)?;
        self.place_eq(&pa, &pb, e.span)
    }

    fn place_eq(&mut self, a: &Place, b: &Place, span: Span) -> PResult<X> {
        let and = |x: Option<X>, y: X| {
            Some(match x {
                Some(x) => X::op("and", x, y),
                None => y,
            })
        };
        match (a, b) {
            (Place::Field { hdr, field, .. }, Place::Field { hdr: h2, field: f2, .. }) => {
                Ok(X::op("==", X::Field(hdr.clone(), field.clone()), X::Field(h2.clone(), f2.clone())))
            }
            (Place::Header { inst, ty }, Place::Header { inst: i2, ty: t2 }) if ty == t2 => {
                let def = self.env.composite(ty).cloned().ok_or_else(|| Error::new(span, "internal compiler error: unknown header type (types are resolved by sema::types)"))?;
                let va = X::un("d2b", X::Field(inst.clone(), "$valid$".into()));
                let vb = X::un("d2b", X::Field(i2.clone(), "$valid$".into()));
                let mut fields = None;
                for (f, _, _) in &def.fields {
                    fields = and(fields, X::op("==", X::Field(inst.clone(), f.clone()), X::Field(i2.clone(), f.clone())));
                }
                let both_valid = X::op("and", va.clone(), vb.clone());
                let valid_eq = match fields {
                    Some(f) => X::op("and", both_valid, f),
                    None => both_valid,
                };
                Ok(X::op("or", X::op("and", X::un("not", va), X::un("not", vb)), valid_eq))
            }
            (Place::Struct { members: ma, ty }, Place::Struct { members: mb, ty: t2 })
            | (Place::Union { members: ma, ty, .. }, Place::Union { members: mb, ty: t2, .. })
                if ty == t2 =>
            {
                let mut x = None;
                for ((_, pa), (_, pb)) in ma.iter().zip(mb.iter()) {
                    let e = self.place_eq(pa, pb, span)?;
                    x = and(x, e);
                }
                Ok(x.unwrap_or(X::Bool(true)))
            }
            (Place::Stack { name, elem, size }, Place::Stack { name: n2, elem: e2, size: s2 }) if elem == e2 && size == s2 => {
                let mut x = None;
                for i in 0..*size {
                    let pa = Place::Header { inst: format!("{}[{}]", name, i), ty: elem.clone() };
                    let pb = Place::Header { inst: format!("{}[{}]", n2, i), ty: elem.clone() };
                    let e = self.place_eq(&pa, &pb, span)?;
                    x = and(x, e);
                }
                Ok(x.unwrap_or(X::Bool(true)))
            }
            (Place::DynHeader { .. }, _) | (_, Place::DynHeader { .. }) => {
                Err(Error::new(span, "comparing a header stack element with a run-time index is not supported by this compiler (use a constant index)"))
            }
            // equal types (sema::exprs unifies the operands) lowered to different
            // shapes: only union stacks, which this compiler does not compare
            (Place::UnionStack { .. }, _) | (_, Place::UnionStack { .. }) => {
                Err(Error::new(span, "comparing header union stacks is not supported by this compiler"))
            }
            _ => Err(Error::new(span, format!("internal compiler error: cannot compare {} with {} (checked by sema::exprs)", a.ty().name(), b.ty().name()))),
        }
    }
}
