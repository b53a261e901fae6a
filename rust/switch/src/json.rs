//! BMv2 JSON loader: reads the format p4c-bm2-ss emits and compiles it into the
//! `pipeline::Program` the executor runs. All name resolution happens here; errors name
//! the JSON object (e.g. `actions[3] "MyIngress.fwd": primitive 2 "foo": unsupported`).

use crate::pipeline::*;
use crate::tables::Table;
use serde_json::Value;
use std::collections::HashMap;

type R<T> = Result<T, String>;

pub fn load_file(path: &str) -> R<Program> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {}", path, e))?;
    load_str(&text).map_err(|e| format!("{}: {}", path, e))
}

pub fn load_str(text: &str) -> R<Program> {
    let v: Value = serde_json::from_str(text).map_err(|e| format!("invalid JSON: {}", e))?;
    crate::json_shape::check(&v)?;
    let mut prog = Loader::new(&v)?.build()?;
    prog.fingerprint = fnv1a(text.as_bytes());
    Ok(prog)
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    })
}

fn arr<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(|x| x.as_array())
        .map(|a| a.as_slice())
        .unwrap_or(&[])
}
fn s<'a>(v: &'a Value, key: &str) -> R<&'a str> {
    v.get(key)
        .and_then(|x| x.as_str())
        .ok_or_else(|| format!("missing string \"{}\" in {}", key, short(v)))
}
fn short(v: &Value) -> String {
    let t = v.to_string();
    match t.char_indices().nth(120) {
        Some((cut, _)) => format!("{}...", &t[..cut]),
        None => t,
    }
}

pub fn parse_hex(st: &str) -> R<u128> {
    let (neg, body) = match st.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, st),
    };
    let body = body.trim_start_matches("0x").trim_start_matches("0X");
    let body = body.trim_start_matches('0');
    if body.len() > 32 {
        return Err(format!("hex value {} wider than 128 bits", st));
    }
    let v = if body.is_empty() {
        0
    } else {
        u128::from_str_radix(body, 16).map_err(|e| format!("bad hex {}: {}", st, e))?
    };
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// Widest header field accepted (fields over 128 bits are stored in 128-bit pieces).
const MAX_FIELD_BITS: u64 = 1 << 16;

struct Loader<'a> {
    j: &'a Value,
    headers: Vec<HeaderInfo>,
    fields: Vec<FieldInfo>,
    hdr_idx: HashMap<String, HeaderId>,
    field_idx: HashMap<String, FieldId>,
    stacks: Vec<StackInfo>,
    stack_idx: HashMap<String, u32>,
    /// header type name -> field names, for stack field offsets
    type_fields: HashMap<String, Vec<String>>,
    stack_type: Vec<String>,
    aliases: HashMap<String, FieldId>,
    errors: Vec<(String, u32)>,
    counters: Vec<CounterSpec>,
    meters: Vec<MeterSpec>,
    registers: Vec<RegisterSpec>,
    calcs: Vec<Calculation>,
    action_idx: HashMap<i64, u32>,
    varbit_max: Vec<u32>,
    vsets: Vec<ValueSet>,
    unions: Vec<(String, Vec<HeaderId>)>,
    union_idx: HashMap<String, u32>,
    /// header union stack -> (member name, synthetic member stack)
    union_stacks: HashMap<String, Vec<(String, u32)>>,
    /// "header.field" -> width, for fields wider than 128 bits (stored in pieces)
    wide: HashMap<String, u32>,
    /// headers holding such a field (their field positions differ from the JSON's)
    has_wide: std::collections::HashSet<HeaderId>,
}

impl<'a> Loader<'a> {
    fn new(j: &'a Value) -> R<Loader<'a>> {
        let mut l = Loader {
            j,
            headers: vec![],
            fields: vec![],
            hdr_idx: HashMap::new(),
            field_idx: HashMap::new(),
            stacks: vec![],
            stack_idx: HashMap::new(),
            type_fields: HashMap::new(),
            stack_type: vec![],
            aliases: HashMap::new(),
            errors: vec![],
            counters: vec![],
            meters: vec![],
            registers: vec![],
            calcs: vec![],
            action_idx: HashMap::new(),
            varbit_max: vec![],
            vsets: vec![],
            unions: vec![],
            union_idx: HashMap::new(),
            union_stacks: HashMap::new(),
            wide: HashMap::new(),
            has_wide: Default::default(),
        };
        l.load_headers()?;
        Ok(l)
    }

    fn load_headers(&mut self) -> R<()> {
        let mut types: HashMap<String, Vec<(String, u32, bool)>> = HashMap::new();
        let mut type_maxlen: HashMap<String, u32> = HashMap::new();
        // each header's type name: a stack's elements must all be of the stack's type
        let mut header_type: Vec<String> = vec![];
        // header type -> its fields wider than 128 bits (name, width)
        let mut wide_fields: HashMap<String, Vec<(String, u32)>> = HashMap::new();
        for ht in arr(self.j, "header_types") {
            let name = s(ht, "name")?.to_string();
            let mut fs = vec![];
            for f in arr(ht, "fields") {
                let fa = f
                    .as_array()
                    .ok_or_else(|| format!("header_types \"{}\": bad field {}", name, f))?;
                let fname = fa
                    .first()
                    .and_then(|x| x.as_str())
                    .unwrap_or("")
                    .to_string();
                let width = match fa.get(1) {
                    Some(Value::Number(n)) => n.as_u64().unwrap_or(0),
                    // varbit: remember as width 0; extract_VL is rejected later
                    _ => 0,
                };
                if width > MAX_FIELD_BITS {
                    return Err(format!(
                        "header_types \"{}\" field \"{}\": width {} > {} bits is not supported",
                        name, fname, width, MAX_FIELD_BITS
                    ));
                }
                let width = width as u32;
                // a boolean, or a number as p4c writes for bool fields (BMv2: asBool)
                let signed = match fa.get(2) {
                    Some(Value::Bool(b)) => *b,
                    Some(Value::Number(n)) => n.as_u64() != Some(0),
                    _ => false,
                };
                if width > 128 {
                    // Values are u128 (the fast path). A wider field is stored as 128-bit
                    // pieces "f$0", "f$1", ... laid out like the field, so parsing,
                    // deparsing and whole-header copies are exact; naming the field in an
                    // expression, key or action is refused (see `field`).
                    if signed {
                        return Err(format!(
                            "header_types \"{}\" field \"{}\": signed fields wider than 128 bits are not supported",
                            name, fname
                        ));
                    }
                    let mut left = width;
                    let mut k = 0;
                    while left > 0 {
                        let w = left.min(128);
                        fs.push((format!("{}${}", fname, k), w, false));
                        left -= w;
                        k += 1;
                    }
                    wide_fields
                        .entry(name.clone())
                        .or_default()
                        .push((fname, width));
                    continue;
                }
                fs.push((fname, width, signed));
            }
            if let Some(m) = ht.get("max_length").and_then(|x| x.as_u64()) {
                type_maxlen.insert(name.clone(), m as u32);
            }
            self.type_fields
                .insert(name.clone(), fs.iter().map(|f| f.0.clone()).collect());
            types.insert(name, fs);
        }
        for h in arr(self.j, "headers") {
            let name = s(h, "name")?.to_string();
            let ty = s(h, "header_type")?;
            let fs = types
                .get(ty)
                .ok_or_else(|| format!("headers \"{}\": unknown header_type {}", name, ty))?;
            header_type.push(ty.to_string());
            for (f, w) in wide_fields.get(ty).into_iter().flatten() {
                self.wide.insert(format!("{}.{}", name, f), *w);
                self.has_wide.insert(self.headers.len() as HeaderId);
            }
            let metadata = h.get("metadata").and_then(|x| x.as_bool()).unwrap_or(false);
            let hid = self.headers.len() as HeaderId;
            let first = self.fields.len() as FieldId;
            let mut off = 0;
            let mut varbit = None;
            for (k, (fname, w, _)) in fs.iter().enumerate() {
                if *w == 0 {
                    if k + 1 != fs.len() {
                        return Err(format!(
                            "headers \"{}\": varbit field {} must be the last field",
                            name, fname
                        ));
                    }
                    let fixed: u32 = fs.iter().map(|f| f.1).sum();
                    let max = type_maxlen
                        .get(ty)
                        .copied()
                        .unwrap_or(0)
                        .saturating_sub(fixed / 8);
                    varbit = Some((self.varbit_max.len() as u32, max));
                    self.varbit_max.push(max);
                }
            }
            for (fname, w, signed) in fs {
                let full = format!("{}.{}", name, fname);
                self.field_idx
                    .insert(full.clone(), self.fields.len() as FieldId);
                self.fields.push(FieldInfo {
                    name: full,
                    header: hid,
                    width: *w,
                    offset: off,
                    mask: width_mask(*w),
                    signed: *signed,
                });
                off += w;
            }
            self.hdr_idx.insert(name.clone(), hid);
            self.headers.push(HeaderInfo {
                name,
                first_field: first,
                num_fields: fs.len() as u32,
                bits: off,
                metadata,
                varbit,
                union: None,
                stack_of: None,
            });
        }
        for st in arr(self.j, "header_stacks") {
            let name = s(st, "name")?.to_string();
            let ids: Vec<HeaderId> = arr(st, "header_ids")
                .iter()
                .filter_map(|x| x.as_u64())
                .map(|x| x as HeaderId)
                .collect();
            let ty = s(st, "header_type")?;
            // a zero-size stack (`h_t[0]`, which p4c emits with no header_ids) is valid: its
            // `size` is 0 and every element access is out of range at run time
            for &i in &ids {
                match header_type.get(i as usize) {
                    None => return Err(format!("header_stacks \"{}\": bad header id {}", name, i)),
                    // field offsets are computed from the stack's type for every element
                    Some(t) if t != ty => {
                        return Err(format!(
                            "header_stacks \"{}\": header id {} is a {}, not a {}",
                            name, i, t, ty
                        ))
                    }
                    Some(_) => {}
                }
            }
            let si = self.stacks.len() as u32;
            for (k, &h) in ids.iter().enumerate() {
                self.headers[h as usize].stack_of = Some((si, k as u32));
            }
            self.stack_idx.insert(name.clone(), si);
            self.stack_type.push(ty.to_string());
            self.stacks.push(StackInfo { name, headers: ids });
        }
        for u in arr(self.j, "header_unions") {
            let name = s(u, "name")?.to_string();
            let ids: Vec<HeaderId> = arr(u, "header_ids")
                .iter()
                .filter_map(|x| x.as_u64())
                .map(|x| x as HeaderId)
                .collect();
            let ui = self.unions.len() as u32;
            for &h in &ids {
                let hi = self
                    .headers
                    .get_mut(h as usize)
                    .ok_or_else(|| format!("header_unions \"{}\": bad header id {}", name, h))?;
                hi.union = Some(ui);
            }
            self.union_idx.insert(name.clone(), ui);
            self.unions.push((name, ids));
        }
        for us in arr(self.j, "header_union_stacks") {
            self.load_union_stack(us, &header_type)?;
        }
        for a in arr(self.j, "field_aliases") {
            if let (Some(alias), Some(t)) = (
                a.get(0).and_then(|x| x.as_str()),
                a.get(1).and_then(|x| x.as_array()),
            ) {
                if t.len() == 2 {
                    let tn = format!(
                        "{}.{}",
                        t[0].as_str().unwrap_or(""),
                        t[1].as_str().unwrap_or("")
                    );
                    if let Some(&f) = self.field_idx.get(&tn) {
                        self.aliases.insert(alias.to_string(), f);
                    }
                }
            }
        }
        for e in arr(self.j, "errors") {
            if let (Some(n), Some(v)) = (
                e.get(0).and_then(|x| x.as_str()),
                e.get(1).and_then(|x| x.as_u64()),
            ) {
                self.errors.push((n.to_string(), v as u32));
            }
        }
        Ok(())
    }

    /// A stack of header unions (`U[2] u`) becomes one synthetic stack per union member
    /// ("u.byte" = [u[0].byte, u[1].byte]); `extract(u.next.byte)` extracts into the member
    /// stack at the union stack's next index: the largest next index of its member stacks.
    fn load_union_stack(&mut self, us: &Value, header_type: &[String]) -> R<()> {
        let name = s(us, "name")?.to_string();
        let ctx = |e: String| format!("header_union_stacks \"{}\": {}", name, e);
        let mut elems = vec![];
        for id in arr(us, "header_union_ids") {
            let u = id
                .as_u64()
                .and_then(|i| self.unions.get(i as usize))
                .ok_or_else(|| ctx(format!("bad header union id {}", id)))?;
            elems.push(u);
        }
        let first = elems
            .first()
            .ok_or_else(|| ctx("no header_union_ids".into()))?;
        let mut members = vec![];
        for (k, &h) in first.1.iter().enumerate() {
            let hname = &self.headers[h as usize].name;
            let member = hname
                .strip_prefix(&format!("{}.", first.0))
                .ok_or_else(|| ctx(format!("header {} is not a member of {}", hname, first.0)))?
                .to_string();
            let mut ids = vec![];
            for u in &elems {
                let m =
                    u.1.get(k)
                        .copied()
                        .filter(|&m| header_type.get(m as usize) == header_type.get(h as usize));
                ids.push(m.ok_or_else(|| ctx(format!("{} has no member {}", u.0, member)))?);
            }
            members.push((member, header_type[h as usize].clone(), ids));
        }
        let mut stacks = vec![];
        for (member, ty, ids) in members {
            let si = self.stacks.len() as u32;
            for (i, &h) in ids.iter().enumerate() {
                self.headers[h as usize].stack_of = Some((si, i as u32));
            }
            self.stack_type.push(ty);
            self.stacks.push(StackInfo {
                name: format!("{}.{}", name, member),
                headers: ids,
            });
            stacks.push((member, si));
        }
        self.union_stacks.insert(name, stacks);
        Ok(())
    }

    /// `extract(u.next.member)` on a header union stack.
    fn union_stack_next(&self, v: &Value) -> R<HeaderRef> {
        let part = |i: usize| v.get(i).and_then(|x| x.as_str()).unwrap_or("");
        let members = self
            .union_stacks
            .get(part(0))
            .ok_or_else(|| format!("unknown header union stack {}", part(0)))?;
        let st = members
            .iter()
            .find(|m| m.0 == part(1))
            .ok_or_else(|| format!("header union stack {}: unknown member {}", part(0), part(1)))?
            .1;
        // the union stack's next index: the largest next index of its member stacks
        let mut next = Expr::StackSize(members[0].1);
        for m in &members[1..] {
            let here = Expr::StackSize(m.1);
            next = Expr::Cond(
                Box::new(Expr::Bin(
                    BinOp::Gt,
                    Box::new(here.clone()),
                    Box::new(next.clone()),
                )),
                Box::new(here),
                Box::new(next),
            );
        }
        Ok(HeaderRef::StackElem(st, next))
    }

    fn field(&self, v: &Value) -> R<FieldId> {
        let a = v
            .as_array()
            .ok_or_else(|| format!("expected [header, field], got {}", short(v)))?;
        let h = a.first().and_then(|x| x.as_str()).unwrap_or("");
        let f = a.get(1).and_then(|x| x.as_str()).unwrap_or("");
        let full = format!("{}.{}", h, f);
        if let Some(&id) = self.field_idx.get(&full) {
            return Ok(id);
        }
        if let Some(&id) = self.aliases.get(&full) {
            return Ok(id);
        }
        if let Some(w) = self.wide.get(&full) {
            return Err(format!(
                "field {} is {} bits wide: fields wider than 128 bits can only be parsed, \
                 deparsed and copied with their header",
                full, w
            ));
        }
        Err(format!("unknown field {}", full))
    }
    fn header(&self, name: &str) -> R<HeaderId> {
        self.hdr_idx
            .get(name)
            .copied()
            .ok_or_else(|| format!("unknown header {}", name))
    }
    fn stack(&self, name: &str) -> R<u32> {
        self.stack_idx
            .get(name)
            .copied()
            .ok_or_else(|| format!("unknown header stack {}", name))
    }
    fn stack_field_offset(&self, stack: u32, field: &str) -> R<u32> {
        let ty = &self.stack_type[stack as usize];
        if field == "$valid$" {
            return Ok(u32::MAX);
        }
        self.type_fields
            .get(ty)
            .and_then(|fs| fs.iter().position(|f| f == field))
            .map(|x| x as u32)
            .ok_or_else(|| {
                format!(
                    "stack {}: unknown field {}",
                    self.stacks[stack as usize].name, field
                )
            })
    }

    /// Width of field number `off` of a stack's elements (they all share one type).
    /// The first element of a stack: its header gives the type's layout to every element.
    fn stack_first(&self, stack: u32) -> R<HeaderId> {
        let st = &self.stacks[stack as usize];
        st.headers.first().copied().ok_or_else(|| {
            format!(
                "header stack {}: a field of a zero-size stack's element",
                st.name
            )
        })
    }

    fn stack_field_width(&self, stack: u32, off: u32) -> R<u32> {
        let h = self.stack_first(stack)?;
        let hi = &self.headers[h as usize];
        if off >= hi.num_fields {
            return Err(format!(
                "stack {}: field {} out of range",
                self.stacks[stack as usize].name, off
            ));
        }
        Ok(self.fields[(hi.first_field + off) as usize].width)
    }

    fn std_field(&self, name: &str) -> Option<FieldId> {
        for cand in [
            format!("standard_metadata.{}", name),
            format!("intrinsic_metadata.{}", name),
            format!("queueing_metadata.{}", name),
        ] {
            if let Some(&f) = self.field_idx.get(&cand) {
                return Some(f);
            }
            if let Some(&f) = self.aliases.get(&cand) {
                return Some(f);
            }
        }
        None
    }

    // ------------------------------------------------------------ expressions
    fn expr(&self, v: &Value) -> R<Expr> {
        let ty = v.get("type").and_then(|x| x.as_str());
        let val = v.get("value").unwrap_or(&Value::Null);
        match ty {
            Some("field") => {
                let a = val.as_array().ok_or("bad field operand")?;
                if a.get(1).and_then(|x| x.as_str()) == Some("$valid$") {
                    return Ok(Expr::Valid(self.header(a[0].as_str().unwrap_or(""))?));
                }
                let f = self.field(val)?;
                let fi = &self.fields[f as usize];
                if let (0, Some((slot, max))) = (fi.width, self.headers[fi.header as usize].varbit)
                {
                    // a varbit field's value (header equality compares it)
                    if max > 16 {
                        return Err(format!(
                            "varbit field {} wider than 128 bits used in an expression",
                            fi.name
                        ));
                    }
                    return Ok(Expr::VarBit(slot));
                }
                if fi.signed && fi.width > 0 && fi.width < 128 {
                    Ok(Expr::SignedField(f, fi.width))
                } else {
                    Ok(Expr::Field(f))
                }
            }
            Some("hexstr") => Ok(Expr::Const(parse_hex(val.as_str().ok_or("bad hexstr")?)?)),
            Some("bool") => Ok(Expr::Const(val.as_bool().unwrap_or(false) as u128)),
            Some("runtime_data") | Some("local") => {
                Ok(Expr::Param(val.as_u64().ok_or("bad runtime_data")? as u32))
            }
            Some("expression") => self.op_expr(val),
            Some("header") => Err(format!("header operand {} used as a value", short(v))),
            Some("stack_field") => {
                let a = val.as_array().ok_or("bad stack_field")?;
                let st = self.stack(a.first().and_then(|x| x.as_str()).unwrap_or(""))?;
                let off =
                    self.stack_field_offset(st, a.get(1).and_then(|x| x.as_str()).unwrap_or(""))?;
                Ok(Expr::StackField(
                    st,
                    Box::new(Expr::LastStackIndex(st)),
                    off,
                ))
            }
            Some("lookahead") => {
                let n = |i: usize| {
                    val.get(i)
                        .and_then(|x| x.as_u64())
                        .and_then(|x| u32::try_from(x).ok())
                        .ok_or_else(|| format!("lookahead: bad [offset, width] {}", short(val)))
                };
                let (off, w) = (n(0)?, n(1)?);
                if w > 128 {
                    return Err(format!("lookahead: width {} > 128 bits", w));
                }
                Ok(Expr::Lookahead(off, w))
            }
            Some("string") => Ok(Expr::Const(0)),
            None if v.get("op").is_some() => self.op_expr(v),
            other => Err(format!(
                "unsupported operand type {:?} in {}",
                other,
                short(v)
            )),
        }
    }

    fn op_expr(&self, v: &Value) -> R<Expr> {
        if v.get("type").is_some() && v.get("op").is_none() {
            return self.expr(v);
        }
        let op = s(v, "op")?;
        let left = v.get("left").filter(|x| !x.is_null());
        let right = v.get("right").filter(|x| !x.is_null());
        let l = || {
            left.ok_or_else(|| format!("op {} missing left", op))
                .and_then(|x| self.expr(x))
        };
        let r = || {
            right
                .ok_or_else(|| format!("op {} missing right", op))
                .and_then(|x| self.expr(x))
        };
        let bin = |b: BinOp| -> R<Expr> { Ok(Expr::Bin(b, Box::new(l()?), Box::new(r()?))) };
        match op {
            "+" => bin(BinOp::Add),
            "-" => {
                if left.is_none() {
                    Ok(Expr::Un(UnOp::Neg, Box::new(r()?)))
                } else {
                    bin(BinOp::Sub)
                }
            }
            "*" => bin(BinOp::Mul),
            "/" => bin(BinOp::Div),
            "%" => bin(BinOp::Mod),
            "<<" => bin(BinOp::Shl),
            ">>" => bin(BinOp::Shr),
            "==" => bin(BinOp::Eq),
            "!=" => bin(BinOp::Ne),
            ">" => bin(BinOp::Gt),
            ">=" => bin(BinOp::Ge),
            "<" => bin(BinOp::Lt),
            "<=" => bin(BinOp::Le),
            "and" => bin(BinOp::And),
            "or" => bin(BinOp::Or),
            "&" => bin(BinOp::BitAnd),
            "|" => bin(BinOp::BitOr),
            "^" => bin(BinOp::BitXor),
            "not" => Ok(Expr::Un(UnOp::Not, Box::new(r()?))),
            "~" => Ok(Expr::Un(UnOp::BitNot, Box::new(r()?))),
            "d2b" => Ok(Expr::Un(UnOp::D2B, Box::new(r()?))),
            "b2d" => Ok(Expr::Un(UnOp::B2D, Box::new(r()?))),
            "valid_union" => {
                let rv = right.ok_or("valid_union without operand")?;
                let un = rv.get("value").and_then(|x| x.as_str()).unwrap_or("");
                let ui = *self
                    .union_idx
                    .get(un)
                    .ok_or_else(|| format!("unknown header union {}", un))?;
                let mut e = Expr::Const(0);
                for &h in &self.unions[ui as usize].1 {
                    e = Expr::Bin(BinOp::Or, Box::new(e), Box::new(Expr::Valid(h)));
                }
                Ok(e)
            }
            "valid" => {
                let rv = right.ok_or("valid without operand")?;
                match rv.get("type").and_then(|x| x.as_str()) {
                    Some("header") => Ok(Expr::Valid(
                        self.header(rv["value"].as_str().unwrap_or(""))?,
                    )),
                    Some("expression") => Ok(valid_of(self.header_ref(rv)?)),
                    _ => Err(format!("valid on {}", short(rv))),
                }
            }
            "?" => {
                let c = v.get("cond").ok_or("? without cond")?;
                Ok(Expr::Cond(
                    Box::new(self.expr(c)?),
                    Box::new(l()?),
                    Box::new(r()?),
                ))
            }
            "two_comp_mod" => {
                let w = match r()? {
                    Expr::Const(w) => w as u32,
                    _ => return Err("two_comp_mod width must be constant".into()),
                };
                Ok(Expr::Trunc(Box::new(l()?), w))
            }
            "sat_cast" | "usat_cast" => {
                let w = match r()? {
                    Expr::Const(w) => w as u32,
                    _ => return Err("sat_cast width must be constant".into()),
                };
                Ok(Expr::SatCast(Box::new(l()?), w, op == "sat_cast"))
            }
            "last_stack_index" => {
                let rv = right.ok_or("last_stack_index without stack")?;
                Ok(Expr::LastStackIndex(
                    self.stack(rv["value"].as_str().unwrap_or(""))?,
                ))
            }
            "size_stack" => {
                let rv = right.ok_or("size_stack without stack")?;
                Ok(Expr::StackSize(
                    self.stack(rv["value"].as_str().unwrap_or(""))?,
                ))
            }
            "access_field" => {
                let lv = left.ok_or("access_field without header")?;
                // bmv2 writes the field offset as a bare number; accept {"value": n} too
                let off = right
                    .and_then(|x| {
                        x.as_u64()
                            .or_else(|| x.get("value").and_then(|v| v.as_u64()))
                    })
                    .ok_or("access_field offset")? as u32;
                match self.header_ref(lv)? {
                    HeaderRef::Fixed(h) => {
                        let hi = &self.headers[h as usize];
                        if self.has_wide.contains(&h) {
                            return Err(format!(
                                "access_field on {}, which has a field wider than 128 bits",
                                hi.name
                            ));
                        }
                        if off >= hi.num_fields {
                            return Err("access_field out of range".into());
                        }
                        Ok(Expr::Field(hi.first_field + off))
                    }
                    HeaderRef::StackElem(st, idx) => {
                        if self.has_wide.contains(&self.stack_first(st)?) {
                            return Err(
                                "access_field on a stack with a field wider than 128 bits".into()
                            );
                        }
                        self.stack_field_width(st, off)?;
                        Ok(Expr::StackField(st, Box::new(idx), off))
                    }
                    HeaderRef::Cond(..) => Err("access_field on a ?: of headers".into()),
                }
            }
            other => Err(format!("unsupported expression op \"{}\"", other)),
        }
    }

    /// A header operand: {"type":"header"} or a dereference_header_stack expression.
    fn header_ref(&self, v: &Value) -> R<HeaderRef> {
        match v.get("type").and_then(|x| x.as_str()) {
            Some("header") => Ok(HeaderRef::Fixed(
                self.header(v["value"].as_str().unwrap_or(""))?,
            )),
            Some("expression") => {
                let e = &v["value"];
                self.header_ref(e)
            }
            None if v.get("op").is_some() => {
                let op = s(v, "op")?;
                if op == "dereference_header_stack" {
                    let st = self.stack(v["left"]["value"].as_str().unwrap_or(""))?;
                    let idx = self.expr(&v["right"])?;
                    if let Expr::Const(i) = idx {
                        if let Some(&h) = self.stacks[st as usize].headers.get(i as usize) {
                            return Ok(HeaderRef::Fixed(h));
                        }
                    }
                    Ok(HeaderRef::StackElem(st, idx))
                } else if op == "?" {
                    let part = |k: &str| -> R<&Value> {
                        v.get(k)
                            .filter(|x| !x.is_null())
                            .ok_or_else(|| format!("? on headers without {}", k))
                    };
                    Ok(HeaderRef::Cond(
                        Box::new(self.expr(part("cond")?)?),
                        Box::new(self.header_ref(part("left")?)?),
                        Box::new(self.header_ref(part("right")?)?),
                    ))
                } else {
                    Err(format!("unsupported header expression op {}", op))
                }
            }
            _ => Err(format!("expected header, got {}", short(v))),
        }
    }

    fn lvalue(&self, v: &Value) -> R<LValue> {
        match self.expr(v)? {
            Expr::Field(f) | Expr::SignedField(f, _) => Ok(LValue::Field(f)),
            Expr::StackField(st, idx, off) if off != u32::MAX => {
                Ok(LValue::StackField(st, idx, off))
            }
            _ => Err(format!("not assignable: {}", short(v))),
        }
    }

    fn named_id(&self, v: &Value, key: &str, names: &[&str]) -> R<u32> {
        let n = v
            .get("value")
            .and_then(|x| x.as_str())
            .ok_or_else(|| format!("expected {} name, got {}", key, short(v)))?;
        names
            .iter()
            .position(|x| *x == n)
            .map(|x| x as u32)
            .ok_or_else(|| format!("unknown {} {}", key, n))
    }

    fn prim(&self, p: &Value) -> R<Prim> {
        let op = s(p, "op")?;
        let ps = arr(p, "parameters");
        let pv = |i: usize| -> R<&Value> {
            ps.get(i)
                .ok_or_else(|| format!("{}: missing parameter {}", op, i))
        };
        let pe = |i: usize| -> R<Expr> {
            ps.get(i)
                .ok_or_else(|| format!("{}: missing parameter {}", op, i))
                .and_then(|x| self.expr(x))
        };
        let pl = |i: usize| -> R<LValue> {
            ps.get(i)
                .ok_or_else(|| format!("{}: missing parameter {}", op, i))
                .and_then(|x| self.lvalue(x))
        };
        let ph = |i: usize| -> R<HeaderRef> {
            ps.get(i)
                .ok_or_else(|| format!("{}: missing parameter {}", op, i))
                .and_then(|x| self.header_ref(x))
        };
        let pint = |i: usize| -> R<u32> {
            match pe(i)? {
                Expr::Const(c) => Ok(c as u32),
                _ => Err(format!("{}: parameter {} must be constant", op, i)),
            }
        };
        let pstack = |i: usize| -> R<u32> {
            self.stack(pv(i)?.get("value").and_then(|x| x.as_str()).unwrap_or(""))
        };
        let counters: Vec<&str> = self.counters.iter().map(|c| c.name.as_str()).collect();
        let meters: Vec<&str> = self.meters.iter().map(|c| c.name.as_str()).collect();
        let regs: Vec<&str> = self.registers.iter().map(|c| c.name.as_str()).collect();
        let calcs: Vec<&str> = self.calcs.iter().map(|c| c.name.as_str()).collect();
        let fl_or_zero = |i: usize| -> R<Expr> {
            if ps.len() > i {
                pe(i)
            } else {
                Ok(Expr::Const(0))
            }
        };
        Ok(match op {
            "assign" | "modify_field" => Prim::Assign(pl(0)?, pe(1)?),
            "add_to_field" => {
                let d = pl(0)?;
                Prim::Assign(
                    d.clone(),
                    Expr::Bin(BinOp::Add, Box::new(lv_expr(&d)), Box::new(pe(1)?)),
                )
            }
            "subtract_from_field" => {
                let d = pl(0)?;
                Prim::Assign(
                    d.clone(),
                    Expr::Bin(BinOp::Sub, Box::new(lv_expr(&d)), Box::new(pe(1)?)),
                )
            }
            "assign_VL" => {
                let slot = |i: usize| -> R<u32> {
                    let f = self.field(pv(i)?.get("value").unwrap_or(&Value::Null))?;
                    let fi = &self.fields[f as usize];
                    match self.headers[fi.header as usize].varbit {
                        Some((slot, _)) if fi.width == 0 => Ok(slot),
                        _ => Err(format!("assign_VL: {} is not a varbit field", fi.name)),
                    }
                };
                Prim::AssignVL(slot(0)?, slot(1)?)
            }
            "assign_header" | "copy_header" => Prim::AssignHeader(ph(0)?, ph(1)?),
            "add_header" | "setValid" => Prim::SetValid(ph(0)?),
            "remove_header" | "setInvalid" => Prim::SetInvalid(ph(0)?),
            "mark_to_drop" | "drop" => Prim::MarkToDrop,
            "exit" => Prim::Exit,
            "clone_ingress_pkt_to_egress" => Prim::CloneI2E(pe(0)?, fl_or_zero(1)?),
            "clone_egress_pkt_to_egress" => Prim::CloneE2E(pe(0)?, fl_or_zero(1)?),
            "recirculate" => Prim::Recirculate(fl_or_zero(0)?),
            "resubmit" => Prim::Resubmit(fl_or_zero(0)?),
            "truncate" => Prim::Truncate(pe(0)?),
            "count" => Prim::Count(self.named_id(pv(0)?, "counter", &counters)?, pe(1)?),
            "execute_meter" => {
                Prim::ExecuteMeter(self.named_id(pv(0)?, "meter", &meters)?, pe(1)?, pl(2)?)
            }
            "register_read" => {
                Prim::RegisterRead(pl(0)?, self.named_id(pv(1)?, "register", &regs)?, pe(2)?)
            }
            "register_write" => {
                Prim::RegisterWrite(self.named_id(pv(0)?, "register", &regs)?, pe(1)?, pe(2)?)
            }
            "modify_field_with_hash_based_offset" => Prim::Hash(
                pl(0)?,
                pe(1)?,
                self.named_id(pv(2)?, "calculation", &calcs)?,
                pe(3)?,
            ),
            "modify_field_rng_uniform" => Prim::Random(pl(0)?, pe(1)?, pe(2)?),
            "generate_digest" => Prim::Digest(pe(0)?, pint(1)?),
            "assign_union" => {
                let u = |i: usize| -> R<u32> {
                    let n = ps
                        .get(i)
                        .and_then(|x| x.get("value"))
                        .and_then(|x| x.as_str())
                        .unwrap_or("");
                    self.union_idx
                        .get(n)
                        .copied()
                        .ok_or_else(|| format!("unknown header union {}", n))
                };
                Prim::AssignUnion(u(0)?, u(1)?)
            }
            "assign_header_stack" => Prim::AssignStack(pstack(0)?, pstack(1)?),
            "push" => Prim::Push(pstack(0)?, pint(1)?),
            "pop" => Prim::Pop(pstack(0)?, pint(1)?),
            "_jump" => Prim::Jump(pint(0)?),
            "_jump_if_zero" => Prim::JumpIfZero(pe(0)?, pint(1)?),
            "log_msg" | "assert" | "assume" | "no_op" | "_nop" => Prim::Nop,
            other => return Err(format!("unsupported primitive \"{}\"", other)),
        })
    }

    fn calc(&self, c: &Value) -> R<Calculation> {
        let name = s(c, "name")?.to_string();
        let algo = match s(c, "algo")? {
            "crc16" => Algo::Crc16,
            "crc32" => Algo::Crc32,
            "csum16" | "cksum16" => Algo::Csum16,
            "identity" => Algo::Identity,
            "xor16" => Algo::Xor16,
            "crc16_custom" => Algo::Crc16Custom,
            "crc32_custom" => Algo::Crc32Custom,
            "random" => Algo::Random,
            other => {
                return Err(format!(
                    "calculations \"{}\": unsupported algo {}",
                    name, other
                ))
            }
        };
        let mut inputs = vec![];
        let mut has_payload = false;
        for i in arr(c, "input") {
            let ty = i.get("type").and_then(|x| x.as_str()).unwrap_or("");
            inputs.push(match ty {
                "field" => {
                    let f = self
                        .field(&i["value"])
                        .map_err(|e| format!("calculations \"{}\": {}", name, e))?;
                    let fi = &self.fields[f as usize];
                    match self.headers[fi.header as usize].varbit {
                        Some((slot, _)) if fi.width == 0 => CalcInput::VarBit(slot),
                        _ => CalcInput::Field(f),
                    }
                }
                "hexstr" => CalcInput::Const(
                    parse_hex(i["value"].as_str().unwrap_or("0"))
                        .map_err(|e| format!("calculations \"{}\": {}", name, e))?,
                    i.get("bitwidth").and_then(|x| x.as_u64()).unwrap_or(8) as u32,
                ),
                "header" => CalcInput::Header(
                    self.header(i["value"].as_str().unwrap_or(""))
                        .map_err(|e| format!("calculations \"{}\": {}", name, e))?,
                ),
                "payload" => {
                    has_payload = true;
                    CalcInput::Payload
                }
                other => {
                    return Err(format!(
                        "calculations \"{}\": unsupported input type {}",
                        name, other
                    ))
                }
            });
        }
        Ok(Calculation {
            name,
            algo,
            inputs,
            has_payload,
        })
    }

    fn build(mut self) -> R<Program> {
        let j = self.j;
        for v in arr(j, "parse_vsets") {
            self.vsets.push(ValueSet {
                name: s(v, "name")?.to_string(),
                width: v
                    .get("compressed_bitwidth")
                    .and_then(|x| x.as_u64())
                    .unwrap_or(0) as u32,
                values: vec![],
                max_size: v.get("max_size").and_then(|x| x.as_u64()).unwrap_or(0) as usize,
            });
        }
        for c in arr(j, "counter_arrays") {
            self.counters.push(CounterSpec {
                name: s(c, "name")?.to_string(),
                size: c.get("size").and_then(|x| x.as_u64()).unwrap_or(0) as usize,
                direct: if c
                    .get("is_direct")
                    .and_then(|x| x.as_bool())
                    .unwrap_or(false)
                {
                    c.get("binding")
                        .and_then(|x| x.as_str())
                        .map(|x| x.to_string())
                } else {
                    None
                },
            });
        }
        for m in arr(j, "meter_arrays") {
            let name = s(m, "name")?.to_string();
            let result = match m.get("result_target") {
                Some(v) if !v.is_null() => Some(
                    self.field(v)
                        .map_err(|e| format!("meter_arrays \"{}\": {}", name, e))?,
                ),
                _ => None,
            };
            self.meters.push(MeterSpec {
                size: m.get("size").and_then(|x| x.as_u64()).unwrap_or(0) as usize,
                bytes: m.get("type").and_then(|x| x.as_str()) == Some("bytes"),
                direct: if m
                    .get("is_direct")
                    .and_then(|x| x.as_bool())
                    .unwrap_or(false)
                {
                    m.get("binding")
                        .and_then(|x| x.as_str())
                        .map(|x| x.to_string())
                } else {
                    None
                },
                result,
                name,
            });
        }
        for r in arr(j, "register_arrays") {
            let name = s(r, "name")?.to_string();
            let width = r.get("bitwidth").and_then(|x| x.as_u64()).unwrap_or(32) as u32;
            if width > 128 {
                return Err(format!(
                    "register_arrays \"{}\": width {} > 128 not supported",
                    name, width
                ));
            }
            self.registers.push(RegisterSpec {
                name,
                size: r.get("size").and_then(|x| x.as_u64()).unwrap_or(0) as usize,
                width,
            });
        }
        for c in arr(j, "calculations") {
            let calc = self.calc(c)?;
            self.calcs.push(calc);
        }
        // actions
        let mut actions = vec![];
        for (ai, a) in arr(j, "actions").iter().enumerate() {
            let name = s(a, "name")?.to_string();
            let id = a.get("id").and_then(|x| x.as_i64()).unwrap_or(ai as i64);
            let params = arr(a, "runtime_data")
                .iter()
                .map(|r| {
                    (
                        r["name"].as_str().unwrap_or("").to_string(),
                        r["bitwidth"].as_u64().unwrap_or(0) as u32,
                    )
                })
                .collect();
            let mut prims = vec![];
            for (pi, p) in arr(a, "primitives").iter().enumerate() {
                prims.push(self.prim(p).map_err(|e| {
                    format!("actions[{}] \"{}\": primitive {}: {}", ai, name, pi, e)
                })?);
            }
            self.action_idx.insert(id, actions.len() as u32);
            actions.push(Action {
                name,
                params,
                prims,
            });
        }
        // field lists
        let mut field_lists = vec![];
        for fl in arr(j, "field_lists") {
            let id = fl.get("id").and_then(|x| x.as_u64()).unwrap_or(0) as u32;
            let mut fs = vec![];
            for e in arr(fl, "elements") {
                if e.get("type").and_then(|x| x.as_str()) == Some("field") {
                    fs.push(
                        self.field(&e["value"])
                            .map_err(|er| format!("field_lists {}: {}", id, er))?,
                    );
                }
            }
            field_lists.push((id, fs));
        }
        let mut learn_lists = vec![];
        for fl in arr(j, "learn_lists") {
            let id = fl.get("id").and_then(|x| x.as_u64()).unwrap_or(0) as u32;
            let mut fs = vec![];
            for e in arr(fl, "elements") {
                if e.get("type").and_then(|x| x.as_str()) == Some("field") {
                    fs.push(
                        self.field(&e["value"])
                            .map_err(|er| format!("learn_lists {}: {}", id, er))?,
                    );
                }
            }
            learn_lists.push((
                id,
                LearnList {
                    name: fl["name"].as_str().unwrap_or("").to_string(),
                    fields: fs,
                },
            ));
        }
        // parser (the first one)
        let parser = match arr(j, "parsers").first() {
            Some(p) => self.parser(p).map_err(|e| format!("parsers[0]: {}", e))?,
            None => Parser {
                init: None,
                states: vec![],
            },
        };
        let mut max_header_bytes = 0usize;
        for h in &self.headers {
            if !h.metadata {
                max_header_bytes += (h.bits as usize).div_ceil(8);
            }
        }
        // deparser
        let mut deparser = vec![];
        if let Some(d) = arr(j, "deparsers").first() {
            for h in arr(d, "order") {
                let n = h.as_str().unwrap_or("");
                deparser.push(self.header(n).map_err(|e| format!("deparsers: {}", e))?);
            }
        }
        // pipelines
        let mut tables = vec![];
        let mut conds = vec![];
        let mut profiles = vec![];
        let mut ingress = Control {
            name: "ingress".into(),
            init: None,
        };
        let mut egress = Control {
            name: "egress".into(),
            init: None,
        };
        for (pi, p) in arr(j, "pipelines").iter().enumerate() {
            let pname = s(p, "name")?.to_string();
            let init = self
                .pipeline(p, &actions, &mut tables, &mut conds, &mut profiles)
                .map_err(|e| format!("pipelines \"{}\": {}", pname, e))?;
            let c = Control {
                name: pname.clone(),
                init,
            };
            if pname == "ingress" || (pi == 0 && pname != "egress") {
                ingress = c;
            } else {
                egress = c;
            }
        }
        // checksums
        let mut checksums = vec![];
        for c in arr(j, "checksums") {
            let name = s(c, "name")?.to_string();
            let target = self
                .field(&c["target"])
                .map_err(|e| format!("checksums \"{}\": {}", name, e))?;
            let cn = s(c, "calculation")?;
            let calc = self
                .calcs
                .iter()
                .position(|x| x.name == cn)
                .ok_or_else(|| format!("checksums \"{}\": unknown calculation {}", name, cn))?
                as u32;
            let cond = match c.get("if_cond") {
                Some(v) if !v.is_null() => Some(
                    self.expr(v)
                        .map_err(|e| format!("checksums \"{}\": {}", name, e))?,
                ),
                _ => None,
            };
            checksums.push(Checksum {
                name,
                target,
                calc,
                verify: c.get("verify").and_then(|x| x.as_bool()).unwrap_or(true),
                update: c.get("update").and_then(|x| x.as_bool()).unwrap_or(true),
                cond,
            });
        }
        let std = StdMeta {
            ingress_port: self.std_field("ingress_port"),
            egress_spec: self.std_field("egress_spec"),
            egress_port: self.std_field("egress_port"),
            instance_type: self.std_field("instance_type"),
            packet_length: self.std_field("packet_length"),
            enq_timestamp: self.std_field("enq_timestamp"),
            enq_qdepth: self.std_field("enq_qdepth"),
            deq_timedelta: self.std_field("deq_timedelta"),
            deq_qdepth: self.std_field("deq_qdepth"),
            ingress_global_timestamp: self.std_field("ingress_global_timestamp"),
            egress_global_timestamp: self.std_field("egress_global_timestamp"),
            mcast_grp: self.std_field("mcast_grp"),
            egress_rid: self.std_field("egress_rid"),
            checksum_error: self.std_field("checksum_error"),
            parser_error: self.std_field("parser_error"),
            priority: self.std_field("priority"),
        };
        let err = |n: &str, d: u32| {
            self.errors
                .iter()
                .find(|e| e.0 == n)
                .map(|e| e.1)
                .unwrap_or(d)
        };
        let err_packet_too_short = err("PacketTooShort", 1);
        let err_stack_out_of_bounds = err("StackOutOfBounds", 3);
        Ok(Program {
            fingerprint: 0,
            unions: self.unions,
            profiles,
            vsets: self.vsets,
            varbit_max: self.varbit_max,
            headers: self.headers,
            fields: self.fields,
            stacks: self.stacks,
            field_lists,
            errors: self.errors,
            parser,
            deparser,
            actions,
            tables,
            conds,
            ingress,
            egress,
            calcs: self.calcs,
            checksums,
            counters: self.counters,
            meters: self.meters,
            registers: self.registers,
            learn_lists,
            std,
            err_packet_too_short,
            err_stack_out_of_bounds,
            max_header_bytes,
        })
    }

    fn parser(&self, p: &Value) -> R<Parser> {
        let states = arr(p, "parse_states");
        let names: Vec<&str> = states
            .iter()
            .map(|st| st["name"].as_str().unwrap_or(""))
            .collect();
        let mut out = vec![];
        for st in states {
            let name = s(st, "name")?.to_string();
            let ctx = |e: String| format!("parser state \"{}\": {}", name, e);
            let mut ops = vec![];
            for op in arr(st, "parser_ops") {
                let o = s(op, "op")?;
                let ps = arr(op, "parameters");
                let pv = |i: usize| -> R<&Value> {
                    ps.get(i)
                        .ok_or_else(|| ctx(format!("{}: missing parameter {}", o, i)))
                };
                let op = match o {
                    "extract" => {
                        let p0 = ps
                            .first()
                            .ok_or_else(|| ctx("extract without parameter".into()))?;
                        match p0.get("type").and_then(|x| x.as_str()) {
                            Some("regular") => HeaderRef::Fixed(
                                self.header(p0["value"].as_str().unwrap_or(""))
                                    .map_err(ctx)?,
                            ),
                            Some("union_stack") => {
                                self.union_stack_next(&p0["value"]).map_err(ctx)?
                            }
                            Some("stack") => {
                                ops.push(ParserOp::ExtractNext(
                                    self.stack(p0["value"].as_str().unwrap_or(""))
                                        .map_err(ctx)?,
                                ));
                                continue;
                            }
                            _ => self.header_ref(p0).map_err(ctx)?,
                        }
                        .into_extract()
                    }
                    "extract_VL" => {
                        let p0 = ps
                            .first()
                            .ok_or_else(|| ctx("extract_VL without parameter".into()))?;
                        let name = p0["value"].as_str().unwrap_or("");
                        // {"type": "stack"}: the stack's next element (`hdr.a.next`)
                        let (h, target) =
                            if p0.get("type").and_then(|x| x.as_str()) == Some("stack") {
                                let st = self.stack(name).map_err(ctx)?;
                                (
                                    self.stack_first(st).map_err(ctx)?,
                                    HeaderRef::StackElem(st, Expr::StackSize(st)),
                                )
                            } else {
                                let h = self.header(name).map_err(ctx)?;
                                (h, HeaderRef::Fixed(h))
                            };
                        if self.headers[h as usize].varbit.is_none() {
                            return Err(ctx("extract_VL on a header without varbit field".into()));
                        }
                        let e = self
                            .expr(
                                ps.get(1)
                                    .ok_or_else(|| ctx("extract_VL without length".into()))?,
                            )
                            .map_err(ctx)?;
                        ParserOp::ExtractVL(target, e)
                    }
                    "set" => {
                        let value = self.expr(pv(1)?).map_err(ctx)?;
                        // BMv2 rejects with PacketTooShort when a lookahead reads past the
                        // packet's end (p4c lowers `pkt.lookahead<T>();` to such a set)
                        let need = lookahead_extent(&value);
                        if need > 0 {
                            ops.push(ParserOp::NeedBits(need));
                        }
                        ParserOp::Set(self.lvalue(pv(0)?).map_err(ctx)?, value)
                    }
                    "verify" => ParserOp::Verify(
                        self.expr(pv(0)?).map_err(ctx)?,
                        self.expr(pv(1)?).map_err(ctx)?,
                    ),
                    "advance" => ParserOp::Advance(self.expr(pv(0)?).map_err(ctx)?),
                    "shift" => ParserOp::Advance(Expr::Bin(
                        BinOp::Mul,
                        Box::new(self.expr(pv(0)?).map_err(ctx)?),
                        Box::new(Expr::Const(8)),
                    )),
                    "primitive" => ParserOp::Prim(self.prim(pv(0)?).map_err(ctx)?),
                    other => return Err(ctx(format!("unsupported parser op \"{}\"", other))),
                };
                ops.push(op);
            }
            let mut key = vec![];
            for k in arr(st, "transition_key") {
                let e = self.expr(k).map_err(ctx)?;
                let w = match &e {
                    Expr::Field(f) | Expr::SignedField(f, _) => self.fields[*f as usize].width,
                    Expr::Lookahead(_, w) => *w,
                    Expr::StackField(st, _, off) => {
                        self.stack_field_width(*st, *off).map_err(ctx)?
                    }
                    Expr::Valid(_) => 1,
                    _ => return Err(ctx("unsupported transition key".into())),
                };
                key.push((e, w));
            }
            let mut transitions = vec![];
            for t in arr(st, "transitions") {
                let ty = t.get("type").and_then(|x| x.as_str()).unwrap_or("hexstr");
                let next = match t.get("next_state").and_then(|x| x.as_str()) {
                    None => None,
                    Some(n) => Some(
                        names
                            .iter()
                            .position(|x| *x == n)
                            .ok_or_else(|| ctx(format!("unknown next_state {}", n)))?
                            as u32,
                    ),
                };
                match ty {
                    "default" => transitions.push(Transition {
                        vset: None,
                        value: 0,
                        mask: 0,
                        default: true,
                        next,
                    }),
                    "parse_vset" => {
                        let vn = t["value"].as_str().unwrap_or("");
                        let vi = self
                            .vsets
                            .iter()
                            .position(|x| x.name == vn)
                            .ok_or_else(|| ctx(format!("unknown parse_vset {}", vn)))?;
                        let mask = match t.get("mask").and_then(|x| x.as_str()) {
                            Some(m) => parse_hex(m).map_err(ctx)?,
                            None => u128::MAX,
                        };
                        transitions.push(Transition {
                            vset: Some(vi as u32),
                            value: 0,
                            mask,
                            default: false,
                            next,
                        });
                    }
                    "hexstr" => {
                        let value = parse_hex(t["value"].as_str().unwrap_or("0")).map_err(ctx)?;
                        let mask = match t.get("mask").and_then(|x| x.as_str()) {
                            Some(m) => parse_hex(m).map_err(ctx)?,
                            None => u128::MAX,
                        };
                        transitions.push(Transition {
                            vset: None,
                            value: value & mask,
                            mask,
                            default: false,
                            next,
                        });
                    }
                    other => return Err(ctx(format!("unsupported transition type {}", other))),
                }
            }
            out.push(ParseState {
                name,
                ops,
                key,
                transitions,
            });
        }
        let init = match p.get("init_state").and_then(|x| x.as_str()) {
            Some(n) => Some(
                names
                    .iter()
                    .position(|x| *x == n)
                    .ok_or_else(|| format!("parser: unknown init_state {}", n))?
                    as u32,
            ),
            None => None,
        };
        Ok(Parser { init, states: out })
    }

    fn pipeline(
        &self,
        p: &Value,
        actions: &[Action],
        tables: &mut Vec<TableDef>,
        conds: &mut Vec<Conditional>,
        profiles: &mut Vec<ActionProfile>,
    ) -> R<Option<Node>> {
        for ap in arr(p, "action_profiles") {
            let name = s(ap, "name")?.to_string();
            let selector = match ap.get("selector") {
                Some(sel) if !sel.is_null() => {
                    let mut c = serde_json::Map::new();
                    c.insert("name".into(), Value::String(format!("{}$selector", name)));
                    c.insert(
                        "algo".into(),
                        sel.get("algo")
                            .cloned()
                            .unwrap_or(Value::String("crc16".into())),
                    );
                    c.insert(
                        "input".into(),
                        sel.get("input").cloned().unwrap_or(Value::Array(vec![])),
                    );
                    Some(
                        self.calc(&Value::Object(c))
                            .map_err(|e| format!("action_profiles \"{}\": {}", name, e))?,
                    )
                }
                _ => None,
            };
            profiles.push(ActionProfile {
                name,
                members: vec![],
                groups: vec![],
                selector,
            });
        }
        let tbase = tables.len() as u32;
        let cbase = conds.len() as u32;
        let tjs = arr(p, "tables");
        let cjs = arr(p, "conditionals");
        let mut names: HashMap<&str, Node> = HashMap::new();
        for (i, t) in tjs.iter().enumerate() {
            names.insert(
                t["name"].as_str().unwrap_or(""),
                Node::Table(tbase + i as u32),
            );
        }
        for (i, c) in cjs.iter().enumerate() {
            names.insert(
                c["name"].as_str().unwrap_or(""),
                Node::Cond(cbase + i as u32),
            );
        }
        let node = |v: Option<&Value>| -> R<Option<Node>> {
            match v.and_then(|x| x.as_str()) {
                None => Ok(None),
                Some(n) => names
                    .get(n)
                    .copied()
                    .map(Some)
                    .ok_or_else(|| format!("unknown table/conditional {}", n)),
            }
        };
        let action_id = |v: &Value| -> R<u32> {
            let id = v.as_i64().ok_or("bad action_id")?;
            self.action_idx
                .get(&id)
                .copied()
                .ok_or_else(|| format!("unknown action id {}", id))
        };
        for t in tjs {
            let name = s(t, "name")?.to_string();
            let ctx = |e: String| format!("table \"{}\": {}", name, e);
            let mut keys = vec![];
            for k in arr(t, "key") {
                let kind_s = k["match_type"].as_str().unwrap_or("");
                let kind = MatchKind::parse(kind_s)
                    .ok_or_else(|| ctx(format!("unsupported match_type {}", kind_s)))?;
                let kname = k
                    .get("name")
                    .and_then(|x| x.as_str())
                    .unwrap_or("")
                    .to_string();
                let target = &k["target"];
                let (src, width) = if let Some(hn) = target.as_str() {
                    (KeySrc::Valid(self.header(hn).map_err(ctx)?), 1)
                } else if target.get(1).and_then(|x| x.as_str()) == Some("$valid$") {
                    (
                        KeySrc::Valid(self.header(target[0].as_str().unwrap_or("")).map_err(ctx)?),
                        1,
                    )
                } else {
                    let f = self.field(target).map_err(ctx)?;
                    (KeySrc::Field(f), self.fields[f as usize].width)
                };
                let mask = match k.get("mask").and_then(|x| x.as_str()) {
                    Some(m) => Some(parse_hex(m).map_err(ctx)?),
                    None => None,
                };
                let kname = if kname.is_empty() {
                    match src {
                        KeySrc::Field(f) => self.fields[f as usize].name.clone(),
                        KeySrc::Valid(h) => format!("{}.$valid$", self.headers[h as usize].name),
                    }
                } else {
                    kname
                };
                keys.push(KeySpec {
                    name: kname,
                    kind: if kind == MatchKind::Valid {
                        MatchKind::Exact
                    } else {
                        kind
                    },
                    src,
                    mask,
                    width,
                });
            }
            let mut tb = TableDef::new(name.clone(), keys);
            if matches!(
                t.get("type").and_then(|x| x.as_str()),
                Some("indirect") | Some("indirect_ws")
            ) {
                let pn = t
                    .get("action_profile")
                    .and_then(|x| x.as_str())
                    .unwrap_or("");
                let pi = profiles
                    .iter()
                    .position(|x| x.name == pn)
                    .ok_or_else(|| ctx(format!("unknown action_profile {}", pn)))?;
                tb.profile = Some(pi as u32);
            }
            tb.max_size = t.get("max_size").and_then(|x| x.as_u64()).unwrap_or(0) as usize;
            tb.with_counters = t
                .get("with_counters")
                .and_then(|x| x.as_bool())
                .unwrap_or(false);
            if let Some(m) = t.get("direct_meters").and_then(|x| x.as_str()) {
                tb.direct_meter = Some(
                    self.meters
                        .iter()
                        .position(|x| x.name == m)
                        .ok_or_else(|| ctx(format!("unknown meter {}", m)))?,
                );
            }
            for a in arr(t, "action_ids") {
                tb.action_ids.push(action_id(a).map_err(ctx)?);
            }
            tb.next_by_action = vec![None; actions.len()];
            tb.base_next = node(t.get("base_default_next")).map_err(ctx)?;
            if let Some(nt) = t.get("next_tables").and_then(|x| x.as_object()) {
                if nt.contains_key("__HIT__") || nt.contains_key("__MISS__") {
                    tb.hit_miss = Some((
                        node(nt.get("__HIT__")).map_err(ctx)?,
                        node(nt.get("__MISS__")).map_err(ctx)?,
                    ));
                } else {
                    for (an, nx) in nt {
                        let n = node(Some(nx)).map_err(ctx)?;
                        // next_tables is keyed by action name; map every action of that name in this table
                        for &aid in &tb.action_ids {
                            if actions[aid as usize].name == *an {
                                tb.next_by_action[aid as usize] = n;
                            }
                        }
                    }
                }
            }
            if let Some(d) = t.get("default_entry") {
                tb.default_action = action_id(&d["action_id"]).map_err(ctx)?;
                tb.default_const = d
                    .get("action_const")
                    .and_then(|x| x.as_bool())
                    .unwrap_or(false);
                let mut data = vec![];
                for x in arr(d, "action_data") {
                    data.push(parse_hex(x.as_str().unwrap_or("0")).map_err(ctx)?);
                }
                tb.default_data = data.into_boxed_slice();
            } else if tb.profile.is_some() {
                tb.default_action = NO_ACTION;
            } else if let Some(&a) = tb.action_ids.first() {
                tb.default_action = a;
            } else {
                // a table without actions: use a synthetic no-op action id (first action) if any
                tb.default_action = 0;
            }
            // const entries are checked against a scratch state now, so a bad one is refused
            // at load naming its index (the engine adds them to its own state)
            let mut check = Table::new(&tb);
            for (ei, e) in arr(t, "entries").iter().enumerate() {
                let ectx = |er: String| ctx(format!("entries[{}]: {}", ei, er));
                let mut key = vec![];
                let mut aux = vec![];
                let mut prefix = 0;
                for (ki, mk) in arr(e, "match_key").iter().enumerate() {
                    let mt = mk["match_type"].as_str().unwrap_or("");
                    let kv = |k: &str| -> R<u128> {
                        match mk.get(k) {
                            Some(Value::String(x)) => parse_hex(x),
                            Some(Value::Bool(b)) => Ok(*b as u128),
                            _ => Err(format!("match_key {} missing {}", ki, k)),
                        }
                    };
                    match mt {
                        "range" => {
                            key.push(kv("start").map_err(ectx)?);
                            aux.push(kv("end").map_err(ectx)?);
                        }
                        "lpm" => {
                            key.push(kv("key").map_err(ectx)?);
                            prefix = mk
                                .get("prefix_length")
                                .and_then(|x| x.as_u64())
                                .unwrap_or(0) as u32;
                            let w = tb.keys.get(ki).map(|k| k.width).unwrap_or(0);
                            aux.push(crate::tables::prefix_mask(prefix, w));
                        }
                        "ternary" | "optional" => {
                            key.push(kv("key").map_err(ectx)?);
                            aux.push(kv("mask").unwrap_or(u128::MAX));
                        }
                        _ => {
                            key.push(kv("key").map_err(ectx)?);
                            aux.push(u128::MAX);
                        }
                    }
                }
                let ae = &e["action_entry"];
                let act = action_id(&ae["action_id"]).map_err(ectx)?;
                let mut data = vec![];
                for x in arr(ae, "action_data") {
                    data.push(parse_hex(x.as_str().unwrap_or("0")).map_err(ectx)?);
                }
                let prio = e.get("priority").and_then(|x| x.as_i64());
                let entry = ConstEntry {
                    key,
                    aux,
                    prefix,
                    priority: prio,
                    action: act,
                    data,
                };
                check
                    .add(
                        entry.key.clone(),
                        entry.aux.clone(),
                        prefix,
                        prio,
                        act,
                        entry.data.clone(),
                    )
                    .map_err(|e| ectx(e.to_string()))?;
                tb.const_entries.push(entry);
            }
            tables.push(tb);
        }
        for c in cjs {
            let name = s(c, "name")?.to_string();
            let expr = self
                .expr(&c["expression"])
                .map_err(|e| format!("conditional \"{}\": {}", name, e))?;
            conds.push(Conditional {
                expr,
                true_next: node(c.get("true_next"))
                    .map_err(|e| format!("conditional \"{}\": {}", name, e))?,
                false_next: node(c.get("false_next"))
                    .map_err(|e| format!("conditional \"{}\": {}", name, e))?,
                name,
            });
        }
        node(p.get("init_table"))
    }
}

/// The validity bit of a header operand.
fn valid_of(h: HeaderRef) -> Expr {
    match h {
        HeaderRef::Fixed(h) => Expr::Valid(h),
        HeaderRef::StackElem(st, idx) => Expr::StackField(st, Box::new(idx), u32::MAX),
        HeaderRef::Cond(c, a, b) => Expr::Cond(c, Box::new(valid_of(*a)), Box::new(valid_of(*b))),
    }
}

fn lv_expr(l: &LValue) -> Expr {
    match l {
        LValue::Field(f) => Expr::Field(*f),
        LValue::StackField(s, i, o) => Expr::StackField(*s, i.clone(), *o),
    }
}

impl HeaderRef {
    fn into_extract(self) -> ParserOp {
        ParserOp::Extract(self)
    }
}

/// How many bits past the parser's cursor the lookaheads in `e` read (0: none).
fn lookahead_extent(e: &Expr) -> u32 {
    match e {
        Expr::Lookahead(off, w) => off + w,
        Expr::Un(_, a) | Expr::Trunc(a, _) | Expr::SatCast(a, _, _) => lookahead_extent(a),
        Expr::Bin(_, a, b) => lookahead_extent(a).max(lookahead_extent(b)),
        Expr::Cond(c, a, b) => lookahead_extent(c)
            .max(lookahead_extent(a))
            .max(lookahead_extent(b)),
        _ => 0,
    }
}
