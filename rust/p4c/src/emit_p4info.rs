//! P4Info (P4Runtime, p4/config/v1/p4info.proto) built as a small protobuf message
//! tree, printed in text format or encoded in the binary wire format. Field numbers
//! follow the P4Runtime specification. Ids use the spec's prefix scheme
//! (actions 0x01, tables 0x02, value sets 0x03, controller headers 0x04, action
//! profiles 0x11, counters 0x12, direct counters 0x13, meters 0x14, direct meters
//! 0x15, registers 0x16, digests 0x17), honouring `@id`.

use crate::ast::{anno_int, anno_str, Annos};
use crate::ir::{Ir, MatchKind};
use std::collections::HashSet;

#[derive(Clone, Debug)]
pub enum V {
    U(u64),
    I(i64),
    S(String),
    B(Vec<u8>),
    E(&'static str, i32),
    Bool(bool),
    M(Msg),
}

#[derive(Clone, Debug, Default)]
pub struct Msg {
    pub fields: Vec<(u32, &'static str, V)>,
}

impl Msg {
    pub fn new() -> Msg {
        Msg::default()
    }
    fn u(mut self, n: u32, name: &'static str, v: u64) -> Msg {
        self.fields.push((n, name, V::U(v)));
        self
    }
    fn i(mut self, n: u32, name: &'static str, v: i64) -> Msg {
        self.fields.push((n, name, V::I(v)));
        self
    }
    fn s(mut self, n: u32, name: &'static str, v: &str) -> Msg {
        self.fields.push((n, name, V::S(v.to_string())));
        self
    }
    fn e(mut self, n: u32, name: &'static str, ename: &'static str, v: i32) -> Msg {
        self.fields.push((n, name, V::E(ename, v)));
        self
    }
    fn b(mut self, n: u32, name: &'static str, v: bool) -> Msg {
        self.fields.push((n, name, V::Bool(v)));
        self
    }
    fn bytes(mut self, n: u32, name: &'static str, v: Vec<u8>) -> Msg {
        self.fields.push((n, name, V::B(v)));
        self
    }
    fn m(mut self, n: u32, name: &'static str, v: Msg) -> Msg {
        self.fields.push((n, name, V::M(v)));
        self
    }

    pub fn to_text(&self) -> String {
        let mut s = String::new();
        self.text_into(&mut s, 0);
        s
    }

    fn text_into(&self, out: &mut String, ind: usize) {
        let pad = "  ".repeat(ind);
        for (_, name, v) in &self.fields {
            match v {
                V::U(x) => out.push_str(&format!("{}{}: {}\n", pad, name, x)),
                V::I(x) => out.push_str(&format!("{}{}: {}\n", pad, name, x)),
                V::S(x) => {
                    out.push_str(&format!("{}{}: \"{}\"\n", pad, name, escape(x.as_bytes())))
                }
                V::B(x) => out.push_str(&format!("{}{}: \"{}\"\n", pad, name, escape(x))),
                V::E(e, _) => out.push_str(&format!("{}{}: {}\n", pad, name, e)),
                V::Bool(b) => out.push_str(&format!("{}{}: {}\n", pad, name, b)),
                V::M(m) => {
                    out.push_str(&format!("{}{} {{\n", pad, name));
                    m.text_into(out, ind + 1);
                    out.push_str(&format!("{}}}\n", pad));
                }
            }
        }
    }

    pub fn to_binary(&self) -> Vec<u8> {
        let mut out = vec![];
        for (n, _, v) in &self.fields {
            match v {
                V::U(x) => {
                    varint(&mut out, (*n as u64) << 3);
                    varint(&mut out, *x);
                }
                V::I(x) => {
                    varint(&mut out, (*n as u64) << 3);
                    varint(&mut out, *x as u64);
                }
                V::E(_, x) => {
                    varint(&mut out, (*n as u64) << 3);
                    varint(&mut out, *x as i64 as u64);
                }
                V::Bool(b) => {
                    varint(&mut out, (*n as u64) << 3);
                    varint(&mut out, *b as u64);
                }
                V::S(s) => {
                    varint(&mut out, ((*n as u64) << 3) | 2);
                    varint(&mut out, s.len() as u64);
                    out.extend_from_slice(s.as_bytes());
                }
                V::B(b) => {
                    varint(&mut out, ((*n as u64) << 3) | 2);
                    varint(&mut out, b.len() as u64);
                    out.extend_from_slice(b);
                }
                V::M(m) => {
                    let inner = m.to_binary();
                    varint(&mut out, ((*n as u64) << 3) | 2);
                    varint(&mut out, inner.len() as u64);
                    out.extend_from_slice(&inner);
                }
            }
        }
        out
    }
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

fn escape(b: &[u8]) -> String {
    let mut s = String::new();
    for &c in b {
        match c {
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            b'\n' => s.push_str("\\n"),
            0x20..=0x7e => s.push(c as char),
            _ => s.push_str(&format!("\\{:03o}", c)),
        }
    }
    s
}

/// Id allocator: prefix << 24 | 24-bit hash of the name (or @id), unique.
pub struct Ids {
    used: HashSet<u32>,
}

pub fn name_hash(s: &str) -> u32 {
    // FNV-1a, folded to 24 bits
    let mut h: u32 = 0x811c9dc5;
    for b in s.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x01000193);
    }
    (h >> 24) ^ (h & 0xffffff)
}

impl Ids {
    fn new() -> Ids {
        Ids {
            used: HashSet::new(),
        }
    }
    fn get(&mut self, prefix: u32, name: &str, annos: &Annos) -> u32 {
        if let Some(id) = anno_int(annos, "id") {
            let id = id as u32;
            let id = if id >> 24 == 0 {
                (prefix << 24) | id
            } else {
                id
            };
            self.used.insert(id);
            return id;
        }
        let mut low = name_hash(name) & 0xffffff;
        loop {
            let id = (prefix << 24) | low;
            if low != 0 && !self.used.contains(&id) {
                self.used.insert(id);
                return id;
            }
            low = (low + 1) & 0xffffff;
        }
    }
}

fn alias_of(name: &str) -> String {
    name.rsplit('.').next().unwrap_or(name).to_string()
}

fn preamble(id: u32, name: &str, annos: &Annos) -> Msg {
    let mut p = Msg::new()
        .u(1, "id", id as u64)
        .s(2, "name", name)
        .s(3, "alias", &alias_of(name));
    for a in annos {
        if matches!(a.name.as_str(), "name" | "id" | "hidden" | "noWarn") {
            continue;
        }
        if a.name == "controller_header" || a.name == "brief" || a.name == "description" {
            if let Some(v) = anno_str(annos, &a.name) {
                p = p.s(4, "annotations", &format!("@{}(\"{}\")", a.name, v));
            }
        }
    }
    p
}

fn unit_enum(u: &str, meter: bool) -> (&'static str, i32) {
    match (u, meter) {
        ("bytes", _) => ("BYTES", 1),
        ("packets", _) => ("PACKETS", 2),
        ("packets_and_bytes", false) => ("BOTH", 3),
        _ => ("UNSPECIFIED", 0),
    }
}

fn hidden(annos: &Annos) -> bool {
    annos.iter().any(|a| a.name == "hidden")
}

/// Build the P4Info message for a lowered program.
pub fn build(ir: &Ir) -> Msg {
    let mut ids = Ids::new();
    let mut root = Msg::new().m(1, "pkg_info", Msg::new().s(5, "arch", "v1model"));
    // action ids first (tables refer to them)
    let mut action_ids = vec![0u32; ir.actions.len()];
    // Reserve explicit @id values first.
    for a in ir.actions.iter() {
        if let Some(id) = anno_int(&a.annos, "id") {
            ids.used.insert(if (id as u32) >> 24 == 0 {
                (1 << 24) | id as u32
            } else {
                id as u32
            });
        }
    }
    let mut seen_names = std::collections::HashMap::new();
    for (i, a) in ir.actions.iter().enumerate() {
        if a.synthetic {
            continue;
        }
        // Specialised copies of one P4 action (name_1, ...) share the P4Info entry.
        if let Some(id) = seen_names.get(&a.name) {
            action_ids[i] = *id;
            continue;
        }
        action_ids[i] = if let Some(id) = anno_int(&a.annos, "id") {
            if (id as u32) >> 24 == 0 {
                (1 << 24) | id as u32
            } else {
                id as u32
            }
        } else {
            ids.get(1, &a.name, &vec![])
        };
        seen_names.insert(a.name.clone(), action_ids[i]);
    }
    let mut table_ids = std::collections::HashMap::new();
    let mut tables = vec![];
    for p in &ir.pipelines {
        for t in &p.tables {
            if t.synthetic || hidden(&t.annos) {
                continue;
            }
            let id = ids.get(2, &t.name, &t.annos);
            table_ids.insert(t.name.clone(), id);
            tables.push((t, id));
        }
    }
    let mut profile_ids = std::collections::HashMap::new();
    for p in &ir.pipelines {
        for pr in &p.profiles {
            profile_ids.insert(pr.name.clone(), ids.get(0x11, &pr.name, &pr.annos));
        }
    }
    let mut direct_ids = std::collections::HashMap::new();
    let mut arrays_msgs: Vec<(u32, &'static str, Msg)> = vec![];
    for a in &ir.arrays {
        let (field, fname, prefix) = match (a.kind, a.direct_table.is_some()) {
            ("counter", false) => (5, "counters", 0x12),
            ("counter", true) => (6, "direct_counters", 0x13),
            ("meter", false) => (7, "meters", 0x14),
            ("meter", true) => (8, "direct_meters", 0x15),
            _ => (11, "registers", 0x16),
        };
        let id = ids.get(prefix, &a.name, &a.annos);
        let pre = preamble(id, &a.name, &a.annos);
        let m = match (a.kind, &a.direct_table) {
            ("counter", None) => {
                let (e, v) = unit_enum(&a.unit, false);
                Msg::new()
                    .m(1, "preamble", pre)
                    .m(2, "spec", Msg::new().e(1, "unit", e, v))
                    .i(3, "size", a.size as i64)
            }
            ("counter", Some(t)) => {
                let (e, v) = unit_enum(&a.unit, false);
                direct_ids
                    .entry(t.clone())
                    .or_insert_with(Vec::new)
                    .push(id);
                Msg::new()
                    .m(1, "preamble", pre)
                    .m(2, "spec", Msg::new().e(1, "unit", e, v))
                    .u(3, "direct_table_id", *table_ids.get(t).unwrap_or(&0) as u64)
            }
            ("meter", None) => {
                let (e, v) = unit_enum(&a.unit, true);
                Msg::new()
                    .m(1, "preamble", pre)
                    .m(2, "spec", Msg::new().e(1, "unit", e, v))
                    .i(3, "size", a.size as i64)
            }
            ("meter", Some(t)) => {
                let (e, v) = unit_enum(&a.unit, true);
                direct_ids
                    .entry(t.clone())
                    .or_insert_with(Vec::new)
                    .push(id);
                Msg::new()
                    .m(1, "preamble", pre)
                    .m(2, "spec", Msg::new().e(1, "unit", e, v))
                    .u(3, "direct_table_id", *table_ids.get(t).unwrap_or(&0) as u64)
            }
            _ => Msg::new()
                .m(1, "preamble", pre)
                .m(
                    2,
                    "type_spec",
                    Msg::new().m(
                        1,
                        "bitstring",
                        Msg::new().m(1, "bit", Msg::new().i(1, "bitwidth", a.bitwidth as i64)),
                    ),
                )
                .i(3, "size", a.size as i64),
        };
        arrays_msgs.push((field, fname, m));
    }
    for (t, id) in &tables {
        let mut m = Msg::new().m(1, "preamble", preamble(*id, &t.name, &t.annos));
        for (ki, k) in t.keys.iter().enumerate() {
            let (e, v) = match k.kind {
                MatchKind::Exact => ("EXACT", 2),
                MatchKind::Lpm => ("LPM", 3),
                MatchKind::Ternary => ("TERNARY", 4),
                MatchKind::Range => ("RANGE", 5),
                MatchKind::Optional => ("OPTIONAL", 6),
                MatchKind::Selector => ("UNSPECIFIED", 0),
            };
            let kid = anno_int(&k.annos, "id")
                .map(|x| x as u64)
                .unwrap_or(ki as u64 + 1);
            m = m.m(
                2,
                "match_fields",
                Msg::new()
                    .u(1, "id", kid)
                    .s(2, "name", &k.name)
                    .i(4, "bitwidth", k.width as i64)
                    .e(5, "match_type", e, v),
            );
        }
        let mut seen = HashSet::new();
        for (ai, a) in t.actions.iter().enumerate() {
            let aid = action_ids[*a];
            if !seen.insert(aid) {
                continue;
            }
            let annos = &t.action_annos[ai];
            let mut r = Msg::new().u(1, "id", aid as u64);
            if annos.iter().any(|x| x.name == "defaultonly") {
                r = r
                    .s(2, "annotations", "@defaultonly")
                    .e(3, "scope", "DEFAULT_ONLY", 2);
            } else if annos.iter().any(|x| x.name == "tableonly") {
                r = r
                    .s(2, "annotations", "@tableonly")
                    .e(3, "scope", "TABLE_ONLY", 1);
            }
            m = m.m(3, "action_refs", r);
        }
        if let Some((a, _, true)) = &t.default {
            m = m.u(4, "const_default_action_id", action_ids[*a] as u64);
        }
        if let Some(p) = &t.profile {
            m = m.u(
                6,
                "implementation_id",
                *profile_ids.get(p).unwrap_or(&0) as u64,
            );
        }
        if let Some(d) = direct_ids.get(&t.name) {
            for x in d {
                m = m.u(7, "direct_resource_ids", *x as u64);
            }
        }
        m = m.i(8, "size", t.size as i64);
        if t.support_timeout {
            m = m.e(9, "idle_timeout_behavior", "NOTIFY_CONTROL", 1);
        }
        if t.const_entries {
            m = m.b(10, "is_const_table", true);
        }
        root = root.m(2, "tables", m);
    }
    let mut emitted = HashSet::new();
    for (i, a) in ir.actions.iter().enumerate() {
        if a.synthetic || !emitted.insert(action_ids[i]) {
            continue;
        }
        let mut m = Msg::new().m(1, "preamble", preamble(action_ids[i], &a.name, &a.annos));
        for (pi, (n, w, pa)) in a.params.iter().enumerate() {
            let pid = anno_int(pa, "id")
                .map(|x| x as u64)
                .unwrap_or(pi as u64 + 1);
            m = m.m(
                2,
                "params",
                Msg::new()
                    .u(1, "id", pid)
                    .s(2, "name", n)
                    .i(4, "bitwidth", *w as i64),
            );
        }
        root = root.m(3, "actions", m);
    }
    for p in &ir.pipelines {
        for pr in &p.profiles {
            let mut m = Msg::new().m(
                1,
                "preamble",
                preamble(profile_ids[&pr.name], &pr.name, &pr.annos),
            );
            for t in &pr.tables {
                if let Some(id) = table_ids.get(t) {
                    m = m.u(2, "table_ids", *id as u64);
                }
            }
            if pr.selector.is_some() {
                m = m.b(3, "with_selector", true);
            }
            m = m.i(4, "size", pr.size as i64);
            if pr.selector.is_some() {
                m = m.i(5, "max_group_size", pr.size as i64);
            }
            root = root.m(4, "action_profiles", m);
        }
    }
    arrays_msgs.sort_by_key(|x| x.0);
    for (f, n, m) in arrays_msgs.iter().filter(|x| x.0 < 9) {
        root = root.m(*f, n, m.clone());
    }
    for ch in &ir.ctrl_headers {
        let id = ids.get(4, &ch.name, &ch.annos);
        let mut pre = Msg::new()
            .u(1, "id", id as u64)
            .s(2, "name", &ch.name)
            .s(3, "alias", &ch.name);
        pre = pre.s(
            4,
            "annotations",
            &format!("@controller_header(\"{}\")", ch.name),
        );
        let mut m = Msg::new().m(1, "preamble", pre);
        for (i, (n, w, fa)) in ch.fields.iter().enumerate() {
            let fid = anno_int(fa, "id").map(|x| x as u64).unwrap_or(i as u64 + 1);
            m = m.m(
                2,
                "metadata",
                Msg::new()
                    .u(1, "id", fid)
                    .s(2, "name", n)
                    .i(4, "bitwidth", *w as i64),
            );
        }
        root = root.m(9, "controller_packet_metadata", m);
    }
    for vs in &ir.value_sets {
        let id = ids.get(3, &vs.name, &vs.annos);
        let mut m = Msg::new().m(1, "preamble", preamble(id, &vs.name, &vs.annos));
        if vs.fields.is_empty() {
            m = m.m(
                2,
                "match",
                Msg::new()
                    .u(1, "id", 1)
                    .i(4, "bitwidth", vs.width as i64)
                    .e(5, "match_type", "EXACT", 2),
            );
        } else {
            for (i, (n, w)) in vs.fields.iter().enumerate() {
                m = m.m(
                    2,
                    "match",
                    Msg::new()
                        .u(1, "id", i as u64 + 1)
                        .s(2, "name", n)
                        .i(4, "bitwidth", *w as i64)
                        .e(5, "match_type", "EXACT", 2),
                );
            }
        }
        m = m.i(3, "size", vs.size as i64);
        root = root.m(10, "value_sets", m);
    }
    for (f, n, m) in arrays_msgs.iter().filter(|x| x.0 == 11) {
        root = root.m(*f, n, m.clone());
    }
    for d in &ir.digests {
        let id = ids.get(0x17, &d.name, &vec![]);
        let m = Msg::new()
            .m(
                1,
                "preamble",
                Msg::new()
                    .u(1, "id", id as u64)
                    .s(2, "name", &d.name)
                    .s(3, "alias", &d.name),
            )
            .m(
                2,
                "type_spec",
                Msg::new().m(4, "struct", Msg::new().s(1, "name", &d.name)),
            );
        root = root.m(12, "digests", m);
    }
    if !ir.digest_structs.is_empty() {
        let mut ti = Msg::new();
        let mut structs = ir.digest_structs.clone();
        structs.sort_by(|a, b| a.0.cmp(&b.0));
        for (n, fields) in &structs {
            let mut st = Msg::new();
            for (f, w) in fields {
                st = st.m(
                    1,
                    "members",
                    Msg::new().s(1, "name", f).m(
                        2,
                        "type_spec",
                        Msg::new().m(
                            1,
                            "bitstring",
                            Msg::new().m(1, "bit", Msg::new().i(1, "bitwidth", *w as i64)),
                        ),
                    ),
                );
            }
            // map<string, P4StructTypeSpec> entry: key = 1, value = 2
            ti = ti.m(1, "structs", Msg::new().s(1, "key", n).m(2, "value", st));
        }
        root = root.m(200, "type_info", ti);
    }
    let _ = Msg::bytes;
    root
}
