//! Types: the program's type environment (headers, structs, enums, typedefs,
//! constants), resolution of type references, constant evaluation, and the
//! width rules for P4 expressions (used by the rest of `sema` and by `lower`).

use crate::ast::*;
use crate::diag::{Error, PResult, Span};
use std::collections::HashMap;

#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Bit(u32),
    Int(u32),
    /// Arbitrary-precision integer (unsized literal / constant).
    InfInt,
    Varbit(u32),
    Bool,
    Str,
    Error,
    MatchKind,
    Void,
    Header(String),
    Union(String),
    Struct(String),
    Stack(Box<Type>, u32),
    Enum(String),
    /// Serializable enum with its underlying width.
    SerEnum(String, u32),
    Tuple(Vec<Type>),
    Extern(String),
    /// A type not known / not relevant (errors already reported).
    Unknown,
}

impl Type {
    pub fn width(&self) -> Option<u32> {
        match self {
            Type::Bit(w) | Type::Int(w) | Type::SerEnum(_, w) => Some(*w),
            Type::Bool => Some(1),
            Type::Error | Type::Enum(_) => Some(32),
            _ => None,
        }
    }
    pub fn is_int_like(&self) -> bool {
        matches!(
            self,
            Type::Bit(_) | Type::Int(_) | Type::InfInt | Type::SerEnum(..)
        )
    }
    pub fn name(&self) -> String {
        match self {
            Type::Bit(w) => format!("bit<{}>", w),
            Type::Int(w) => format!("int<{}>", w),
            Type::InfInt => "int".into(),
            Type::Varbit(w) => format!("varbit<{}>", w),
            Type::Bool => "bool".into(),
            Type::Str => "string".into(),
            Type::Error => "error".into(),
            Type::MatchKind => "match_kind".into(),
            Type::Void => "void".into(),
            Type::Header(n)
            | Type::Union(n)
            | Type::Struct(n)
            | Type::Enum(n)
            | Type::SerEnum(n, _)
            | Type::Extern(n) => n.clone(),
            Type::Stack(t, n) => format!("{}[{}]", t.name(), n),
            Type::Tuple(v) => format!(
                "tuple<{}>",
                v.iter().map(|t| t.name()).collect::<Vec<_>>().join(", ")
            ),
            Type::Unknown => "<unknown>".into(),
        }
    }
}

#[derive(Clone, Debug)]
pub struct CompositeDef {
    pub kind: Composite,
    pub name: String,
    pub fields: Vec<(String, Type, Annos)>,
    pub annos: Annos,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Composite {
    Header,
    Union,
    Struct,
}

#[derive(Clone, Debug)]
pub struct EnumDef {
    pub name: String,
    pub width: Option<u32>,
    pub members: Vec<(String, u128)>,
}

/// Global type environment.
#[derive(Default)]
pub struct TypeEnv {
    pub composites: HashMap<String, CompositeDef>,
    pub composite_order: Vec<String>,
    pub typedefs: HashMap<String, TypeRef>,
    pub enums: HashMap<String, EnumDef>,
    pub enum_order: Vec<String>,
    pub errors: Vec<String>,
    pub match_kinds: Vec<String>,
    pub consts: HashMap<String, (Type, u128)>,
    pub externs: HashMap<String, Vec<Method>>,
    pub type_params: Vec<String>,
    /// (header type, field) → struct type, for header fields of struct type: the header's
    /// own field list holds the struct's leaves as `field.leaf` (`row.e`, `row.t`, ...)
    pub header_structs: HashMap<(String, String), String>,
}

/// Shift left that yields 0 instead of overflowing.
pub fn shl(v: u128, n: u128) -> u128 {
    if n >= 128 {
        0
    } else {
        v << n
    }
}

/// Shift right that yields 0 instead of overflowing.
pub fn shr(v: u128, n: u128) -> u128 {
    if n >= 128 {
        0
    } else {
        v >> n
    }
}

pub fn mask(w: u32) -> u128 {
    if w >= 128 {
        u128::MAX
    } else {
        (1u128 << w) - 1
    }
}

impl TypeEnv {
    pub fn build(prog: &Program, errs: &mut Vec<Error>) -> TypeEnv {
        let mut env = TypeEnv::default();
        for d in &prog.decls {
            match d {
                Decl::Typedef { ty, name, .. } => {
                    env.typedefs.insert(name.clone(), ty.clone());
                }
                Decl::Header {
                    annos,
                    name,
                    fields,
                    span,
                }
                | Decl::HeaderUnion {
                    annos,
                    name,
                    fields,
                    span,
                }
                | Decl::Struct {
                    annos,
                    name,
                    fields,
                    span,
                } => {
                    let kind = match d {
                        Decl::Header { .. } => Composite::Header,
                        Decl::HeaderUnion { .. } => Composite::Union,
                        _ => Composite::Struct,
                    };
                    let mut fs = vec![];
                    for f in fields {
                        match env.resolve(&f.ty) {
                            Ok(Type::Struct(s)) if kind == Composite::Header => {
                                // P4_16 type nesting rules: a struct in a header holds only
                                // bit<W>, int<W>, bool and serializable enums (or such structs)
                                match env.struct_leaves(&s) {
                                    Some(leaves) => {
                                        env.header_structs
                                            .insert((name.clone(), f.name.clone()), s.clone());
                                        for (leaf, lt) in leaves {
                                            fs.push((
                                                format!("{}.{}", f.name, leaf),
                                                lt,
                                                f.annos.clone(),
                                            ));
                                        }
                                    }
                                    None => errs.push(Error::new(f.span, format!("header field '{}' has type {}; a struct in a header may only hold bit<N>, int<N>, bool, serializable enums or such structs", f.name, s))),
                                }
                            }
                            Ok(t) => {
                                if kind == Composite::Header
                                    && !matches!(
                                        t,
                                        Type::Bit(_)
                                            | Type::Int(_)
                                            | Type::Varbit(_)
                                            | Type::SerEnum(..)
                                            | Type::Bool
                                    )
                                {
                                    errs.push(Error::new(f.span, format!("header field '{}' has type {}; header fields must be bit<N>, int<N>, varbit<N>, bool or a serializable enum", f.name, t.name())));
                                }
                                if kind == Composite::Union && !matches!(t, Type::Header(_)) {
                                    errs.push(Error::new(
                                        f.span,
                                        format!(
                                            "header_union member '{}' must be a header",
                                            f.name
                                        ),
                                    ));
                                }
                                fs.push((f.name.clone(), t, f.annos.clone()));
                            }
                            Err(e) => errs.push(e),
                        }
                    }
                    if env.composites.contains_key(name) {
                        errs.push(Error::new(*span, format!("'{}' is declared twice", name)));
                    }
                    env.composites.insert(
                        name.clone(),
                        CompositeDef {
                            kind,
                            name: name.clone(),
                            fields: fs,
                            annos: annos.clone(),
                            span: *span,
                        },
                    );
                    env.composite_order.push(name.clone());
                }
                Decl::Enum {
                    name,
                    underlying,
                    members,
                    span,
                    ..
                } => {
                    let width = match underlying {
                        Some(t) => match env.resolve(t) {
                            Ok(Type::Bit(w)) | Ok(Type::Int(w)) => Some(w),
                            Ok(_) => {
                                errs.push(Error::new(
                                    *span,
                                    "enum underlying type must be bit<N> or int<N>",
                                ));
                                None
                            }
                            Err(e) => {
                                errs.push(e);
                                None
                            }
                        },
                        None => None,
                    };
                    let mut ms = vec![];
                    for (i, (m, v, ms_span)) in members.iter().enumerate() {
                        let val = match (v, width) {
                            (Some(e), Some(w)) => match env.const_eval(e, &HashMap::new()) {
                                Ok((x, _)) => x & mask(w),
                                Err(e) => {
                                    errs.push(e);
                                    0
                                }
                            },
                            (None, Some(_)) => {
                                errs.push(Error::new(
                                    *ms_span,
                                    format!("serializable enum member '{}' needs a value", m),
                                ));
                                0
                            }
                            _ => i as u128,
                        };
                        ms.push((m.clone(), val));
                    }
                    if env.enums.contains_key(name) {
                        errs.push(Error::new(*span, format!("'{}' is declared twice", name)));
                    } else {
                        env.enum_order.push(name.clone());
                    }
                    env.enums.insert(
                        name.clone(),
                        EnumDef {
                            name: name.clone(),
                            width,
                            members: ms,
                        },
                    );
                }
                Decl::Error { members, .. } => {
                    for (m, _) in members {
                        if !env.errors.contains(m) {
                            env.errors.push(m.clone());
                        }
                    }
                }
                Decl::MatchKind { members, .. } => {
                    for (m, _) in members {
                        env.match_kinds.push(m.clone());
                    }
                }
                Decl::Const {
                    ty,
                    name,
                    value,
                    span,
                    ..
                } => {
                    let t = match env.resolve(ty) {
                        Ok(t) => t,
                        Err(e) => {
                            errs.push(e);
                            continue;
                        }
                    };
                    match env.const_eval(value, &HashMap::new()) {
                        Ok((v, _)) => {
                            let v = match t.width() {
                                Some(w) => v & mask(w),
                                None => v,
                            };
                            env.consts.insert(name.clone(), (t, v));
                        }
                        Err(_) => {
                            // non-integer constants (e.g. enum members) resolved later
                            let _ = span;
                        }
                    }
                }
                Decl::Extern { name, methods, .. } => {
                    env.externs.insert(name.clone(), methods.clone());
                }
                _ => {}
            }
        }
        env
    }

    /// Constants `build` left out (those not folded as integers there, e.g. an enum
    /// member), evaluated as expressions in declaration order.
    pub fn other_constants(&mut self, prog: &Program, errs: &mut Vec<Error>) {
        for d in &prog.decls {
            let Decl::Const {
                ty,
                name,
                value,
                span,
                ..
            } = d
            else {
                continue;
            };
            if self.consts.contains_key(name) {
                continue;
            }
            let t = self.resolve(ty).unwrap_or(Type::Unknown);
            match self.const_eval(value, &HashMap::new()) {
                Ok((v, _)) => {
                    self.consts.insert(name.clone(), (t, v));
                }
                Err(_) => errs.push(Error::new(
                    *span,
                    format!(
                        "initializer of constant '{}' is not a compile-time constant",
                        name
                    ),
                )),
            }
        }
    }

    pub fn resolve(&self, t: &TypeRef) -> PResult<Type> {
        self.resolve_depth(t, 0)
    }

    fn resolve_depth(&self, t: &TypeRef, depth: u32) -> PResult<Type> {
        if depth > 50 {
            return Err(Error::new(Span::default(), "typedef cycle"));
        }
        Ok(match t {
            TypeRef::Bit(w) => Type::Bit(self.width(w)?),
            TypeRef::Int(w) => Type::Int(self.width(w)?),
            TypeRef::Varbit(w) => Type::Varbit(self.width(w)?),
            TypeRef::Bool => Type::Bool,
            TypeRef::Error => Type::Error,
            TypeRef::Str => Type::Str,
            TypeRef::Void => Type::Void,
            TypeRef::DontCare => Type::Unknown,
            TypeRef::Tuple(v) => Type::Tuple(
                v.iter()
                    .map(|x| self.resolve_depth(x, depth + 1))
                    .collect::<PResult<Vec<_>>>()?,
            ),
            TypeRef::Stack(e, n) => {
                let et = self.resolve_depth(e, depth + 1)?;
                let (n, _) = self.const_eval(n, &HashMap::new())?;
                // size 0 is allowed as p4c allows it: every index is out of range
                if n > 1024 {
                    return Err(Error::new(
                        n_span(t),
                        "header stack size must be between 0 and 1024",
                    ));
                }
                if !matches!(et, Type::Header(_) | Type::Union(_)) {
                    return Err(Error::new(
                        n_span(t),
                        format!(
                            "header stack element type must be a header, not {}",
                            et.name()
                        ),
                    ));
                }
                Type::Stack(Box::new(et), n as u32)
            }
            TypeRef::Named(n, _args, sp) => {
                if n == "int" {
                    return Ok(Type::InfInt);
                }
                if let Some(td) = self.typedefs.get(n) {
                    return self.resolve_depth(td, depth + 1);
                }
                if let Some(c) = self.composites.get(n) {
                    return Ok(match c.kind {
                        Composite::Header => Type::Header(n.clone()),
                        Composite::Union => Type::Union(n.clone()),
                        Composite::Struct => Type::Struct(n.clone()),
                    });
                }
                if let Some(e) = self.enums.get(n) {
                    return Ok(match e.width {
                        Some(w) => Type::SerEnum(n.clone(), w),
                        None => Type::Enum(n.clone()),
                    });
                }
                if self.externs.contains_key(n) || n == "packet_in" || n == "packet_out" {
                    return Ok(Type::Extern(n.clone()));
                }
                if self.type_params.contains(n) {
                    return Ok(Type::Unknown);
                }
                return Err(Error::new(*sp, format!("unknown type '{}'", n)));
            }
        })
    }

    fn width(&self, e: &Expr) -> PResult<u32> {
        let (v, _) = self.const_eval(e, &HashMap::new())?;
        if v == 0 && !matches!(e.kind, ExprKind::Int(0, _)) || v > 2048 {
            return Err(Error::new(e.span, format!("invalid width {}", v)));
        }
        Ok(v as u32)
    }

    pub fn composite(&self, n: &str) -> Option<&CompositeDef> {
        self.composites.get(n)
    }

    /// The fields of struct `s` flattened in order (`inner.f` for nested structs), when
    /// all are fixed-width scalars: what a struct-typed header field holds.
    pub fn struct_leaves(&self, s: &str) -> Option<Vec<(String, Type)>> {
        let def = self.composites.get(s)?;
        if def.kind != Composite::Struct {
            return None;
        }
        let mut out = vec![];
        for (f, t, _) in &def.fields {
            match t {
                Type::Bit(_) | Type::Int(_) | Type::Bool | Type::SerEnum(..) => {
                    out.push((f.clone(), t.clone()))
                }
                Type::Struct(inner) => {
                    for (leaf, lt) in self.struct_leaves(inner)? {
                        out.push((format!("{}.{}", f, leaf), lt));
                    }
                }
                _ => return None,
            }
        }
        Some(out)
    }

    pub fn field_type(&self, ty: &Type, f: &str) -> Option<Type> {
        match ty {
            Type::Header(n) | Type::Struct(n) | Type::Union(n) => self
                .composites
                .get(n)?
                .fields
                .iter()
                .find(|x| x.0 == f)
                .map(|x| x.1.clone()),
            _ => None,
        }
    }

    /// Total width of a header type in bits (varbit counted at its max).
    pub fn header_width(&self, n: &str) -> u32 {
        self.composites
            .get(n)
            .map(|c| {
                c.fields
                    .iter()
                    .map(|f| match &f.1 {
                        Type::Varbit(w) => *w,
                        t => t.width().unwrap_or(0),
                    })
                    .sum()
            })
            .unwrap_or(0)
    }

    /// Evaluate a compile-time constant integer expression. Returns value (two's
    /// complement, masked to the width if any) and its type.
    pub fn const_eval(
        &self,
        e: &Expr,
        locals: &HashMap<String, (Type, u128)>,
    ) -> PResult<(u128, Type)> {
        self.const_eval_d(e, locals, 0)
    }

    fn const_eval_d(
        &self,
        e: &Expr,
        locals: &HashMap<String, (Type, u128)>,
        d: u32,
    ) -> PResult<(u128, Type)> {
        if d > 100 {
            return Err(Error::new(e.span, "constant expression too deep"));
        }
        let fit = |v: u128, t: &Type| -> u128 {
            match t {
                Type::Bit(w) | Type::Int(w) => v & mask(*w),
                _ => v,
            }
        };
        match &e.kind {
            ExprKind::Int(v, w) => Ok(match w {
                Some((w, false)) => (v & mask(*w), Type::Bit(*w)),
                Some((w, true)) => (v & mask(*w), Type::Int(*w)),
                None => (*v, Type::InfInt),
            }),
            ExprKind::Bool(b) => Ok((*b as u128, Type::Bool)),
            ExprKind::Name(n) => {
                if let Some((t, v)) = locals.get(n).or_else(|| self.consts.get(n)) {
                    return Ok((*v, t.clone()));
                }
                Err(Error::new(
                    e.span,
                    format!("'{}' is not a compile-time constant", n),
                ))
            }
            ExprKind::Member(b, m) => {
                if let ExprKind::Name(en) = &b.kind {
                    if let Some(ed) = self.enums.get(en) {
                        if let Some((_, v)) = ed.members.iter().find(|x| x.0 == *m) {
                            return Ok((
                                *v,
                                match ed.width {
                                    Some(w) => Type::SerEnum(en.clone(), w),
                                    None => Type::Enum(en.clone()),
                                },
                            ));
                        }
                    }
                    if en == "error" {
                        if let Some(i) = self.errors.iter().position(|x| x == m) {
                            return Ok((i as u128, Type::Error));
                        }
                    }
                }
                Err(Error::new(e.span, "not a compile-time constant"))
            }
            ExprKind::Cast(t, x) => {
                let t = self.resolve(t)?;
                let (v, xt) = self.const_eval_d(x, locals, d + 1)?;
                let v = sign_extend(v, &xt);
                Ok((fit(v, &t), t))
            }
            ExprKind::Unary(op, x) => {
                let (v, t) = self.const_eval_d(x, locals, d + 1)?;
                let r = match *op {
                    "-" => 0u128.wrapping_sub(v),
                    "~" => !v,
                    "!" => (v == 0) as u128,
                    _ => v,
                };
                Ok((fit(r, &t), t))
            }
            ExprKind::Binary(op, a, b) => {
                let (x, tx) = self.const_eval_d(a, locals, d + 1)?;
                let (y, ty) = self.const_eval_d(b, locals, d + 1)?;
                let t = if tx == Type::InfInt {
                    ty.clone()
                } else {
                    tx.clone()
                };
                let t = if matches!(*op, "<<" | ">>") {
                    tx.clone()
                } else {
                    t
                };
                // an unsized operand takes the other side's type first (8w255 == -1 is true)
                let (x, y) = if matches!(*op, "<<" | ">>" | "++") {
                    (x, y)
                } else {
                    (fit(x, &t), fit(y, &t))
                };
                // signed types and unsized integers compare and shift right as signed values
                let signed = matches!(t, Type::Int(_) | Type::InfInt);
                let (sx, sy) = (sign_extend(x, &t) as i128, sign_extend(y, &t) as i128);
                let ord = if signed { sx.cmp(&sy) } else { x.cmp(&y) };
                let r = match *op {
                    "+" => x.wrapping_add(y),
                    "-" => x.wrapping_sub(y),
                    "*" => x.wrapping_mul(y),
                    "/" | "%" => {
                        if y == 0 {
                            return Err(Error::new(e.span, "division by zero"));
                        }
                        if *op == "/" {
                            x / y
                        } else {
                            x % y
                        }
                    }
                    "<<" => {
                        if y >= 128 {
                            0
                        } else {
                            x << y
                        }
                    }
                    ">>" if signed => (sx >> y.min(127)) as u128,
                    ">>" => {
                        if y >= 128 {
                            0
                        } else {
                            x >> y
                        }
                    }
                    "&" => x & y,
                    "|" => x | y,
                    "^" => x ^ y,
                    "==" => return Ok(((x == y) as u128, Type::Bool)),
                    "!=" => return Ok(((x != y) as u128, Type::Bool)),
                    "<" => return Ok((ord.is_lt() as u128, Type::Bool)),
                    ">" => return Ok((ord.is_gt() as u128, Type::Bool)),
                    "<=" => return Ok((ord.is_le() as u128, Type::Bool)),
                    ">=" => return Ok((ord.is_ge() as u128, Type::Bool)),
                    "&&" => return Ok((((x != 0) && (y != 0)) as u128, Type::Bool)),
                    "||" => return Ok((((x != 0) || (y != 0)) as u128, Type::Bool)),
                    "++" => {
                        let wy = ty.width().unwrap_or(0);
                        let wx = tx.width().unwrap_or(0);
                        let r = if wy >= 128 { y } else { (x << wy) | y };
                        return Ok((r & mask(wx + wy), Type::Bit(wx + wy)));
                    }
                    "|+|" => {
                        let w = t.width().unwrap_or(128);
                        x.saturating_add(y).min(mask(w))
                    }
                    "|-|" => x.saturating_sub(y),
                    _ => return Err(Error::new(e.span, "not a compile-time constant")),
                };
                Ok((fit(r, &t), t))
            }
            ExprKind::Slice(x, hi, lo) => {
                let (v, _) = self.const_eval_d(x, locals, d + 1)?;
                let (h, _) = self.const_eval_d(hi, locals, d + 1)?;
                let (l, _) = self.const_eval_d(lo, locals, d + 1)?;
                if h < l || h >= 128 {
                    return Err(Error::new(e.span, "invalid slice"));
                }
                let w = (h - l + 1) as u32;
                Ok((shr(v, l) & mask(w), Type::Bit(w)))
            }
            ExprKind::Ternary(c, a, b) => {
                let (cv, _) = self.const_eval_d(c, locals, d + 1)?;
                let (taken, other) = if cv != 0 { (a, b) } else { (b, a) };
                let (v, t) = self.const_eval_d(taken, locals, d + 1)?;
                if t != Type::InfInt {
                    return Ok((v, t));
                }
                // an untyped constant branch takes the other branch's type (P4_16
                // implicit casts), which must then be known here too
                match self.const_eval_d(other, locals, d + 1)?.1 {
                    ot @ (Type::Bit(_) | Type::Int(_)) => Ok((fit(v, &ot), ot)),
                    _ => Ok((v, t)),
                }
            }
            _ => Err(Error::new(e.span, "not a compile-time constant")),
        }
    }
}

fn n_span(t: &TypeRef) -> Span {
    match t {
        TypeRef::Stack(_, n) => n.span,
        TypeRef::Named(_, _, s) => *s,
        _ => Span::default(),
    }
}

/// Interpret a value of a signed type as a sign-extended 128-bit pattern.
pub fn sign_extend(v: u128, t: &Type) -> u128 {
    if let Type::Int(w) = t {
        if *w < 128 && *w > 0 && (v >> (w - 1)) & 1 == 1 {
            return v | !mask(*w);
        }
    }
    v
}

/// Result type of a binary arithmetic operator under P4's rules: operands must
/// have the same type, except that an unsized integer adopts the other side's type.
pub fn unify(a: &Type, b: &Type) -> Option<Type> {
    match (a, b) {
        (Type::InfInt, t) | (t, Type::InfInt) => Some(t.clone()),
        (x, y) if x == y => Some(x.clone()),
        _ => None,
    }
}

/// Whether a value of type `src` can be bound where `dst` is expected (an unknown type
/// matches anything).
pub fn types_compatible(dst: &Type, src: &Type) -> bool {
    match (dst, src) {
        (a, b) if a == b => true,
        (Type::Bit(_) | Type::Int(_) | Type::SerEnum(..), Type::InfInt) => true,
        (Type::SerEnum(_, a), Type::Bit(b)) | (Type::Bit(b), Type::SerEnum(_, a)) => a == b,
        (_, Type::Unknown) | (Type::Unknown, _) => true,
        _ => false,
    }
}
