//! `sdnperf-p4c-fuzz gen`: random *valid* v1model programs with input packets, for
//! differential testing (bench/p4c/differential.py compiles each with sdnperf-p4c and with
//! p4c and compares what the switch does with both).
//!
//! The programs stay inside defined behaviour so that any difference is a bug: every local
//! is initialized, only `in`/`inout` parameters, no division, constant shift amounts, all
//! headers valid, stack indices masked into range. They exercise what the P4_16 semantics
//! make subtle: functions and actions with `inout` parameters (aliased arguments included)
//! called inside expressions, `&&`/`||`/`?:` around such calls, run-time stack indices,
//! slices and concatenation, casts, tables keyed on expressions with ternary const entries,
//! `exit` and `return` in nested blocks, a sub-parser applied in more than one state,
//! `switch (t.apply().action_run)` in nested blocks, the table applied under `&&`, `||`
//! and `?:`, assignments to stack elements at run-time indices out of range (ignored,
//! as the specification says; reads stay in range, their value would be unspecified),
//! functions returning headers (assigned whole or a field taken), nested slices as
//! assignment targets, slices as `inout` arguments and a list expression as an action's
//! `in` header argument, `?:` with an untyped constant branch under a cast.
//!
//! `gen --seed S --count N --out DIR` writes DIR/gNNNNN.p4 and DIR/gNNNNN.stf (packets only,
//! no expectations).

use super::Rng;
use std::fmt::Write;
use std::path::PathBuf;

/// Fields of header `h`, the stack `s[2]` and the metadata (all bit<8>).
const FIELDS: &[&str] = &[
    "hdr.h.a",
    "hdr.h.b",
    "hdr.h.c",
    "hdr.h.d",
    "hdr.h.e",
    "hdr.h.f",
    "hdr.s[0].v",
    "hdr.s[1].v",
    "m.x",
];

struct Gen {
    rng: Rng,
    /// functions declared so far: (name, returns bool, has a `return` inside an `if`,
    /// has an `if`/`else`)
    funcs: Vec<(String, bool, bool, bool)>,
    /// functions returning an `h_t` (called outside actions only, see `hcall`)
    hfuncs: Vec<String>,
    /// generating a function that returns `h_t`
    ret_header: bool,
    /// generating an action body. p4c 1.2.4.8 predicates the `if`s of actions wrongly
    /// (bench/p4c/README.md): it tests a function's returned-flag after its update, drops
    /// the branches of a function's `if`/`else` inlined under a condition, and evaluates
    /// an action's own `if`/`else` so that one branch sees the other's writes. So actions
    /// call only functions without `if`s that return or have an `else`, and their own
    /// `if`s have no `else`.
    in_action: bool,
    /// `if`s around the statement being generated in an action body. p4c 1.2.4.8 bug 6
    /// (bench/p4c/README.md): the inner `if` of nested `if`s in an action is predicated on
    /// the outer condition re-read after the outer body changed it, so actions get no `if`
    /// inside an `if`.
    action_ifs: usize,
    /// the `inout` locations the calls in the current action body were given (`hdr.s` for
    /// any stack element: a run-time index may alias). p4c 1.2.4.8 bug 5: under an action's
    /// `if`, the copy-out of a second call with the same location is predicated with the
    /// first call's temporary, so under an `if` a call gets no location used before.
    action_inouts: Vec<String>,
    /// the function being generated has a `return` inside an `if` (or calls one that has)
    cur_early: bool,
    /// the function being generated has an `if`/`else` (or calls one that has)
    cur_branch: bool,
    /// locals in scope (bit<8>)
    locals: Vec<String>,
    nlocal: usize,
    depth: usize,
    /// the table is applied at most once
    table_used: bool,
    /// inside a function body: `return` needs a value of this kind
    in_func: Option<bool>,
}

impl Gen {
    fn pick<'a>(&mut self, v: &'a [&'a str]) -> &'a str {
        v[self.rng.below(v.len())]
    }

    fn lvalue(&mut self) -> String {
        let n = self.rng.below(FIELDS.len() + self.locals.len() + 1);
        if n < FIELDS.len() {
            FIELDS[n].to_string()
        } else if n < FIELDS.len() + self.locals.len() {
            self.locals[n - FIELDS.len()].clone()
        } else {
            // a run-time stack index, always in range
            format!("hdr.s[{} & 1].v", self.leaf())
        }
    }

    /// An assignment target: sometimes a stack element whose run-time index may be out
    /// of range (`& 3` on a stack of 2), a write the switch must ignore.
    fn target(&mut self) -> String {
        if self.rng.below(12) == 0 {
            // not a constant: an index known out of range is a compile-time error
            format!("hdr.s[{} & 3].v", self.lvalue_simple())
        } else {
            self.lvalue()
        }
    }

    fn leaf(&mut self) -> String {
        match self.rng.below(4) {
            0 => format!("8w{}", self.rng.below(256)),
            _ => self.lvalue_simple(),
        }
    }

    fn lvalue_simple(&mut self) -> String {
        let n = self.rng.below(FIELDS.len() + self.locals.len());
        if n < FIELDS.len() {
            FIELDS[n].to_string()
        } else {
            self.locals[n - FIELDS.len()].clone()
        }
    }

    /// A bit<8> expression.
    fn expr(&mut self) -> String {
        if self.depth > 3 {
            return self.leaf();
        }
        self.depth += 1;
        let r = match self.rng.below(12) {
            0..=2 => self.leaf(),
            3 => {
                let op = self.pick(&["+", "-", "*", "&", "|", "^", "|+|", "|-|"]);
                format!("({} {} {})", self.expr(), op, self.expr())
            }
            4 => format!(
                "({} {} {})",
                self.expr(),
                self.pick(&["<<", ">>"]),
                self.rng.below(9)
            ),
            5 => format!("({} ? {} : {})", self.bexpr(), self.expr(), self.expr()),
            6 => format!("({}[3:0] ++ {}[7:4])", self.expr(), self.expr()),
            7 if self.rng.below(2) == 0 => format!("((bit<8>)(bit<4>){})", self.expr()),
            // an untyped constant branch of ?: takes the other branch's type (bit<4>),
            // not the cast's
            7 => format!(
                "((bit<8>)-({} ? {} : (bit<4>){}))",
                self.bexpr(),
                self.rng.below(16),
                self.expr()
            ),
            8 => format!("((bit<8>)(int<8>){} >> 1)", self.expr()),
            9 => format!("(~{})", self.expr()),
            _ => self.call(false).unwrap_or_else(|| self.leaf()),
        };
        self.depth -= 1;
        r
    }

    fn bexpr(&mut self) -> String {
        if self.depth > 3 {
            return format!("({} == {})", self.leaf(), self.leaf());
        }
        self.depth += 1;
        let r = match self.rng.below(9) {
            0..=2 => format!(
                "({} {} {})",
                self.expr(),
                self.pick(&["==", "!=", "<", ">", "<=", ">="]),
                self.expr()
            ),
            3 => format!("({} && {})", self.bexpr(), self.bexpr()),
            4 => format!("({} || {})", self.bexpr(), self.bexpr()),
            5 => format!("(!{})", self.bexpr()),
            6 => "hdr.h.isValid()".to_string(),
            7 => format!("((int<8>){} < (int<8>){})", self.expr(), self.expr()),
            _ => self.call(true).unwrap_or_else(|| "true".into()),
        };
        self.depth -= 1;
        r
    }

    /// A call of an earlier function returning bool (`want_bool`) or bit<8>.
    fn call(&mut self, want_bool: bool) -> Option<String> {
        let cands: Vec<String> = self
            .funcs
            .iter()
            .filter(|f| f.1 == want_bool && !(self.in_action && (f.2 || f.3)))
            .map(|f| f.0.clone())
            .collect();
        if cands.is_empty() {
            return None;
        }
        let f = cands[self.rng.below(cands.len())].clone();
        // (inout x, in y): the same location for both now and then (aliasing)
        let x = self.lvalue();
        if !self.action_call_ok(&[&x]) {
            return None;
        }
        let y = if self.rng.below(4) == 0 {
            x.clone()
        } else {
            self.expr()
        };
        Some(format!("{}({}, {})", f, x, y))
    }

    fn block(&mut self, n: usize) -> String {
        let saved = self.locals.len();
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(&self.stmt());
        }
        self.locals.truncate(saved);
        s
    }

    fn stmt(&mut self) -> String {
        if self.depth > 2 {
            return format!("{} = {};\n", self.lvalue(), self.expr());
        }
        self.depth += 1;
        let r = match self.rng.below(17) {
            0..=4 => format!("{} = {};\n", self.target(), self.expr()),
            5 => {
                let n = format!("l{}", self.nlocal);
                self.nlocal += 1;
                let s = format!("bit<8> {} = {};\n", n, self.expr());
                self.locals.push(n);
                s
            }
            6 | 7 if !(self.in_action && self.action_ifs > 0) => {
                let c = self.bexpr();
                let n = 1 + self.rng.below(2);
                self.action_ifs += self.in_action as usize;
                let a = self.block(n);
                self.action_ifs -= self.in_action as usize;
                if self.in_action || self.rng.below(2) == 0 {
                    format!("if ({}) {{\n{}}}\n", c, a)
                } else {
                    let n = 1 + self.rng.below(2);
                    let b = self.block(n);
                    format!("if ({}) {{\n{}}} else {{\n{}}}\n", c, a, b)
                }
            }
            8 => match self.call(false) {
                Some(c) => format!("{};\n", c),
                None => format!("{} = {};\n", self.lvalue(), self.expr()),
            },
            9 => {
                // x[7:4], or bits lo+4..lo+1 through a nested slice
                let target = match self.rng.below(2) {
                    0 => format!("{}[7:4]", self.lvalue_simple()),
                    _ => {
                        let lo = self.rng.below(4);
                        format!("{}[7:1][{}:{}]", self.lvalue_simple(), lo + 3, lo)
                    }
                };
                format!("{} = {}[3:0];\n", target, self.expr())
            }
            10 if self.in_func.is_none() => {
                let (a, b) = (self.lvalue(), self.lvalue());
                if self.action_call_ok(&[&a, &b]) {
                    format!("swap({}, {});\n", a, b)
                } else {
                    format!("{} = {};\n", a, b)
                }
            }
            11 if self.depth > 1 => match self.in_func {
                Some(true) => format!("return {};\n", self.bexpr()),
                Some(false) => format!("return {};\n", self.expr()),
                // p4c-bm2-ss refuses `exit` under a condition in an action
                None if self.rng.below(3) == 0 && !self.in_action => "exit;\n".to_string(),
                None => "return;\n".to_string(),
            },
            12 | 13 if self.in_func.is_none() && !self.table_used && self.depth <= 2 => {
                self.table_used = true;
                self.table_stmt()
            }
            14 => match self.hcall() {
                Some(c) if self.rng.below(2) == 0 => format!("hdr.h = {};\n", c),
                Some(c) => {
                    let f = self.pick(&["a", "b", "c", "d", "e", "f"]);
                    format!("{} = {}.{};\n", self.lvalue(), c, f)
                }
                None => format!("{} = {};\n", self.lvalue(), self.expr()),
            },
            // a slice as the inout argument of an action that may write the whole field
            15 if self.in_func.is_none() && !self.in_action => {
                let lo = self.rng.below(5);
                format!("nib({}[{}:{}]);\n", self.lvalue_simple(), lo + 3, lo)
            }
            // a header value given as a list expression
            16 if self.in_func.is_none() && !self.in_action => {
                let v: Vec<String> = (0..6).map(|_| self.expr()).collect();
                format!("lst({{ {} }});\n", v.join(", "))
            }
            _ => format!("{} = {};\n", self.lvalue(), self.expr()),
        };
        self.depth -= 1;
        r
    }

    /// Whether a call in an action body may take these `inout` locations (p4c bug 5, see
    /// `action_inouts`); records them when it may. Always true outside actions.
    fn action_call_ok(&mut self, inouts: &[&str]) -> bool {
        if !self.in_action {
            return true;
        }
        let keys: Vec<String> = inouts
            .iter()
            .map(|l| match l.starts_with("hdr.s[") {
                true => "hdr.s".to_string(),
                false => l.to_string(),
            })
            .collect();
        if self.action_ifs > 0 && keys.iter().any(|k| self.action_inouts.contains(k)) {
            return false;
        }
        self.action_inouts.extend(keys);
        true
    }

    /// A call of a function returning `h_t`, or None when there is none to call here.
    /// Not in actions: besides the predication bugs above, p4c 1.2.4.8 refuses the
    /// result's `setValid` under an action's `if` ("Conditional execution in actions").
    fn hcall(&mut self) -> Option<String> {
        let cands = self.hfuncs.clone();
        if cands.is_empty() || self.in_func.is_some() || self.in_action {
            return None;
        }
        let f = cands[self.rng.below(cands.len())].clone();
        // the inout argument may be a field of the header the result is assigned to
        let x = self.lvalue_simple();
        let y = self.expr();
        Some(format!("{}({}, {})", f, x, y))
    }
}

impl Gen {
    /// The one application of table `t`: a statement, a condition, a switch on the action
    /// it ran, or an operand of `&&`, `||`, `?:` that runs only when the operator
    /// evaluates it (the target has no run-time index: it would be read before the table).
    fn table_stmt(&mut self) -> String {
        match self.rng.below(6) {
            0 => "t.apply();\n".into(),
            1 => format!("if (t.apply().hit) {{\n{}}}\n", self.block(1)),
            2 => {
                let mut cases = String::new();
                for a in ["set", "inc", "NoAction"] {
                    match self.rng.below(3) {
                        0 => {}
                        1 => {
                            let _ = write!(cases, "{}: ", a);
                        }
                        _ => {
                            let _ = write!(cases, "{}: {{\n{}}}\n", a, self.block(1));
                        }
                    }
                }
                // the last label needs a body
                let _ = write!(cases, "default: {{\n{}}}\n", self.block(1));
                format!("switch (t.apply().action_run) {{\n{}}}\n", cases)
            }
            3 => {
                let op = self.pick(&["&&", "||"]);
                let c = self.bexpr();
                format!("if ({} {} t.apply().miss) {{\n{}}}\n", c, op, self.block(1))
            }
            4 => {
                let c = self.bexpr();
                format!(
                    "{} = {} ? (t.apply().hit ? {} : {}) : {};\n",
                    self.lvalue_simple(),
                    c,
                    self.expr(),
                    self.expr(),
                    self.expr()
                )
            }
            _ => {
                let c = self.bexpr();
                let n = format!("l{}", self.nlocal);
                self.nlocal += 1;
                let s = format!(
                    "bool {} = !({} || t.apply().hit);\nif ({}) {{\n{}}}\n",
                    n,
                    c,
                    n,
                    self.block(1)
                );
                s
            }
        }
    }
}

pub fn program(seed: u64) -> (String, String) {
    let mut g = Gen {
        rng: Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1),
        funcs: vec![],
        hfuncs: vec![],
        ret_header: false,
        in_action: false,
        action_ifs: 0,
        action_inouts: vec![],
        cur_early: false,
        cur_branch: false,
        locals: vec![],
        nlocal: 0,
        depth: 0,
        table_used: false,
        in_func: None,
    };
    let mut p = String::new();
    p.push_str("#include <core.p4>\n#include <v1model.p4>\n");
    p.push_str("header h_t { bit<8> a; bit<8> b; bit<8> c; bit<8> d; bit<8> e; bit<8> f; }\n");
    p.push_str("header s_t { bit<8> v; }\nstruct metadata_t { bit<8> x; }\nstruct headers_t { h_t h; s_t[2] s; }\n");
    // functions see only their parameters x (inout) and y (in)
    let nf = g.rng.below(4);
    for i in 0..nf {
        let f = g.function_params_only(i);
        p.push_str(&f);
    }
    for i in 0..g.rng.below(3) {
        let f = g.header_function(i);
        p.push_str(&f);
    }
    p.push_str("void swap(inout bit<8> a, inout bit<8> b) { bit<8> t = a; a = b; b = t; }\n");
    // its own random stream: the rest of a seed's program is what it was before sub-parsers
    p.push_str(&parser(&mut Rng(
        seed.wrapping_mul(0xD6E8_FEB8_6659_FD93) | 1
    )));
    p.push_str("control VC(inout headers_t hdr, inout metadata_t meta) { apply { } }\n");
    let _ = writeln!(
        p,
        "control Ing(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) {{"
    );
    let acts = g.rng.below(3);
    let mut body = String::new();
    let mut table = String::new();
    let keyx = g.expr();
    let keyy = g.lvalue_simple();
    let _ = write!(table, "action set(bit<8> v) {{ hdr.h.a = v; hdr.h.b = hdr.h.b + v; }}\naction inc() {{ hdr.h.c = hdr.h.c + 1; }}\n");
    let mut entries = String::new();
    for k in 0..g.rng.below(4) {
        let _ = writeln!(
            entries,
            "({} &&& 8w{}, 8w{}) : set(8w{});",
            g.rng.below(256),
            g.rng.below(256),
            g.rng.below(256),
            k * 7 + 1
        );
    }
    let _ = write!(
        table,
        "table t {{\n key = {{ {} : ternary @name(\"k0\"); {} : exact @name(\"k1\"); }}\n actions = {{ set; inc; NoAction; }}\n default_action = inc();\n{}}}\n",
        keyx,
        keyy,
        if entries.is_empty() { String::new() } else { format!(" const entries = {{\n{} }}\n", entries) }
    );
    // tables cannot be applied inside actions
    g.table_used = true;
    g.in_action = true;
    // p4c 1.2.4.8 drops an action's writes to the stack when the action's inout argument
    // is a stack element at a run-time index (it takes the copy-out for a write of every
    // element), so such actions get constant-index arguments
    let mut writes_stack = vec![];
    for i in 0..acts {
        let n = 1 + g.rng.below(2);
        g.action_inouts.clear();
        let a = g.block(n);
        writes_stack.push(a.contains("hdr.s["));
        let _ = writeln!(
            table,
            "action a{}(inout bit<8> x) {{\nx = x + 1;\n{}}}",
            i, a
        );
    }
    // an `in h_t` parameter, given a list expression at the call (arm 16 of stmt)
    g.action_inouts.clear();
    let lst = format!(
        "{} = v.{};\n{} = v.{};\n{}",
        g.lvalue_simple(),
        g.pick(&["a", "b", "c", "d", "e", "f"]),
        g.lvalue_simple(),
        g.pick(&["a", "b", "c", "d", "e", "f"]),
        g.block(1)
    );
    let _ = writeln!(table, "action lst(in h_t v) {{\n{}}}", lst);
    g.action_inouts.clear();
    let nib = g.block(1);
    let _ = writeln!(
        table,
        "action nib(inout bit<4> x) {{\nx = x ^ 4w{};\n{}}}",
        g.rng.below(16),
        nib
    );
    g.table_used = false;
    g.in_action = false;
    body.push_str("sm.egress_spec = 1;\n");
    for _ in 0..(2 + g.rng.below(5)) {
        if acts > 0 && g.rng.below(5) == 0 {
            let k = g.rng.below(acts);
            let arg = if writes_stack[k] {
                g.lvalue_simple()
            } else {
                g.lvalue()
            };
            let _ = writeln!(body, "a{}({});", k, arg);
        } else {
            body.push_str(&g.stmt());
        }
    }
    let _ = write!(p, "{}apply {{\n{}}}\n}}\n", table, body);
    p.push_str(
        "control Eg(inout headers_t hdr, inout metadata_t m, inout standard_metadata_t sm) { apply { } }\n\
         control CC(inout headers_t hdr, inout metadata_t m) { apply { } }\n\
         control Dep(packet_out pkt, in headers_t hdr) { apply { pkt.emit(hdr); } }\n\
         V1Switch(P(), VC(), Ing(), Eg(), CC(), Dep()) main;\n",
    );
    let mut stf = String::new();
    for _ in 0..3 {
        let bytes: Vec<String> = (0..12)
            .map(|_| format!("{:02x}", g.rng.below(256)))
            .collect();
        let _ = writeln!(stf, "packet 0 {}", bytes.join(""));
    }
    (p, stf)
}

/// The parser: `h` then both stack elements, either extracted directly or by one
/// sub-parser instance applied in two states (and a third one the packet does not
/// take), each application with its own continuation and its own copy of the
/// sub-parser's local.
fn parser(rng: &mut Rng) -> String {
    const HEAD: &str = "parser P(packet_in pkt, out headers_t hdr, inout metadata_t meta, inout standard_metadata_t sm) {\n";
    if rng.below(2) == 0 {
        return format!("{HEAD}state start {{ pkt.extract(hdr.h); pkt.extract(hdr.s.next); pkt.extract(hdr.s.next); transition accept; }}\n}}\n");
    }
    let k = rng.below(256);
    let sel = rng.below(4);
    format!(
        "parser Sub(packet_in pkt, out s_t e, inout metadata_t meta) {{\n\
         state start {{ pkt.extract(e); bit<8> t = e.v ^ 8w{k}; meta.x = meta.x + t; transition accept; }}\n}}\n\
         {HEAD}Sub() sub;\n\
         state start {{ pkt.extract(hdr.h); sub.apply(pkt, hdr.s[0], meta); transition select(hdr.h.b[1:0]) {{ {sel}: left; default: right; }} }}\n\
         state left {{ sub.apply(pkt, hdr.s[1], meta); meta.x = meta.x + 1; transition accept; }}\n\
         state right {{ sub.apply(pkt, hdr.s[1], meta); transition accept; }}\n}}\n"
    )
}

impl Gen {
    /// A function returning a header made from list expressions, over its parameters
    /// x (inout) and y (in), maybe with a `return` inside an `if`.
    fn header_function(&mut self, i: usize) -> String {
        let name = format!("g{}", i);
        self.in_func = Some(false);
        self.ret_header = true;
        self.cur_early = false;
        self.cur_branch = false;
        let saved = std::mem::take(&mut self.locals);
        self.locals = vec!["x".into(), "y".into()];
        let mut body = String::new();
        for _ in 0..self.rng.below(3) {
            body.push_str(&self.fstmt());
        }
        if self.rng.below(2) == 0 {
            self.cur_early = true;
            let c = self.fbexpr();
            let v = self.header_list();
            let _ = writeln!(body, "if ({}) {{\nreturn {};\n}}", c, v);
        }
        let last = self.header_list();
        self.locals = saved;
        self.in_func = None;
        self.ret_header = false;
        self.hfuncs.push(name.clone());
        format!(
            "h_t {}(inout bit<8> x, in bit<8> y) {{\n{}return {};\n}}\n",
            name, body, last
        )
    }

    /// `{ e1, ..., e6 }`: a value for every field of `h_t`.
    fn header_list(&mut self) -> String {
        let v: Vec<String> = (0..6).map(|_| self.fexpr()).collect();
        format!("{{ {} }}", v.join(", "))
    }

    /// A function over its parameters x (inout) and y (in) and its own locals.
    fn function_params_only(&mut self, i: usize) -> String {
        let ret_bool = self.rng.below(3) == 0;
        let name = format!("f{}", i);
        self.in_func = Some(ret_bool);
        self.cur_early = false;
        self.cur_branch = false;
        let saved = std::mem::take(&mut self.locals);
        self.locals = vec!["x".into(), "y".into()];
        let mut body = String::new();
        for _ in 0..(1 + self.rng.below(3)) {
            body.push_str(&self.fstmt());
        }
        let last = if ret_bool {
            self.fbexpr()
        } else {
            self.fexpr()
        };
        self.locals = saved;
        self.in_func = None;
        self.funcs
            .push((name.clone(), ret_bool, self.cur_early, self.cur_branch));
        format!(
            "{} {}(inout bit<8> x, in bit<8> y) {{\n{}return {};\n}}\n",
            if ret_bool { "bool" } else { "bit<8>" },
            name,
            body,
            last
        )
    }

    fn fleaf(&mut self) -> String {
        match self.rng.below(3) {
            0 => format!("8w{}", self.rng.below(256)),
            _ => self.locals[self.rng.below(self.locals.len())].clone(),
        }
    }

    fn fexpr(&mut self) -> String {
        match self.rng.below(5) {
            0 | 1 => self.fleaf(),
            2 => format!(
                "({} {} {})",
                self.fleaf(),
                self.pick(&["+", "-", "^", "&", "|", "|-|"]),
                self.fleaf()
            ),
            3 => format!("({} ? {} : {})", self.fbexpr(), self.fleaf(), self.fleaf()),
            _ => {
                // an earlier function, on the parameters
                let c: Vec<(String, bool, bool)> = self
                    .funcs
                    .iter()
                    .filter(|f| !f.1)
                    .map(|f| (f.0.clone(), f.2, f.3))
                    .collect();
                if c.is_empty() {
                    self.fleaf()
                } else {
                    let (f, early, branch) = c[self.rng.below(c.len())].clone();
                    self.cur_early |= early;
                    self.cur_branch |= branch;
                    format!("{}(x, {})", f, self.fleaf())
                }
            }
        }
    }

    fn fbexpr(&mut self) -> String {
        match self.rng.below(4) {
            0 => format!("({} && {})", self.fbexpr_leaf(), self.fbexpr_leaf()),
            1 => format!("({} || {})", self.fbexpr_leaf(), self.fbexpr_leaf()),
            _ => self.fbexpr_leaf(),
        }
    }

    fn fbexpr_leaf(&mut self) -> String {
        format!(
            "({} {} {})",
            self.fleaf(),
            self.pick(&["==", "!=", "<", ">"]),
            self.fleaf()
        )
    }

    fn fstmt(&mut self) -> String {
        match self.rng.below(6) {
            0 => {
                let n = format!("l{}", self.nlocal);
                self.nlocal += 1;
                let s = format!("bit<8> {} = {};\n", n, self.fexpr());
                self.locals.push(n);
                s
            }
            1 => {
                self.cur_early = true;
                let ret = if self.ret_header {
                    self.header_list()
                } else if self.in_func == Some(true) {
                    self.fbexpr()
                } else {
                    self.fexpr()
                };
                format!(
                    "if ({}) {{\nx = {};\nreturn {};\n}}\n",
                    self.fbexpr(),
                    self.fexpr(),
                    ret
                )
            }
            2 => {
                self.cur_branch = true;
                format!(
                    "if ({}) {{\nx = {};\n}} else {{\nx = {};\n}}\n",
                    self.fbexpr(),
                    self.fexpr(),
                    self.fexpr()
                )
            }
            _ => format!("x = {};\n", self.fexpr()),
        }
    }
}

/// `sdnperf-p4c-fuzz gen`: writes OUT/gNNNNNN.p4 + .stf for seeds seed..seed+count.
pub fn main(seed: u64, count: usize, out: PathBuf) {
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("error: {}: {}", out.display(), e);
        std::process::exit(1);
    }
    for k in 0..count {
        let s = seed.wrapping_add(k as u64);
        let (p, stf) = program(s);
        let base = out.join(format!("g{:06}", s));
        if let Err(e) = std::fs::write(base.with_extension("p4"), p)
            .and_then(|_| std::fs::write(base.with_extension("stf"), stf))
        {
            eprintln!("error: {}: {}", base.display(), e);
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::program;

    /// The action bodies of a generated program (`action ...` up to its closing brace).
    fn action_bodies(p: &str) -> Vec<Vec<&str>> {
        let mut out = vec![];
        let mut cur: Option<Vec<&str>> = None;
        let mut depth = 0;
        for line in p.lines() {
            if line.starts_with("action ") && !line.ends_with('}') {
                cur = Some(vec![]);
                depth = 0;
                continue;
            }
            let Some(c) = cur.as_mut() else { continue };
            depth += line.matches('{').count() as i32 - line.matches('}').count() as i32;
            if depth < 0 {
                out.push(cur.take().unwrap());
            } else {
                c.push(line);
            }
        }
        out
    }

    /// `inout` locations of the calls on a line in order (the first argument of `fN(`,
    /// both of `swap(`), a stack element as `hdr.s`.
    fn inouts(line: &str) -> Vec<String> {
        let args = |from: usize| {
            let (mut depth, mut start, mut v) = (0, from, vec![]);
            for (i, ch) in line[from..].char_indices().map(|(i, c)| (i + from, c)) {
                match ch {
                    '(' | '[' => depth += 1,
                    ')' | ']' if depth == 0 => {
                        v.push(line[start..i].trim().to_string());
                        break;
                    }
                    ')' | ']' => depth -= 1,
                    ',' if depth == 0 => {
                        v.push(line[start..i].trim().to_string());
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            v
        };
        let key = |l: &String| match l.starts_with("hdr.s[") {
            true => "hdr.s".to_string(),
            false => l.clone(),
        };
        let mut out = vec![];
        for (i, _) in line.match_indices('(') {
            let name_start = line[..i]
                .rfind(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .map_or(0, |j| j + 1);
            let name = &line[name_start..i];
            let a = args(i + 1);
            if name == "swap" {
                out.extend(a.iter().map(key));
            } else if name.starts_with('f') && name[1..].parse::<u32>().is_ok() {
                out.push(key(&a[0]));
            }
        }
        out
    }

    /// The kept seeds of p4c bugs 5 and 6 (bench/p4c/README.md) and a few hundred more:
    /// no action has an `if` inside an `if` (bug 6), and no call under an action's `if`
    /// takes an `inout` location an earlier call of the action took (bug 5).
    #[test]
    fn actions_avoid_p4c_predication_bugs_5_and_6() {
        let kept = [
            500228, 501028, 501566, 503303, 504518, 504954, 506886, 507155, 508048,
        ];
        let (mut ifs_seen, mut calls_seen) = (0, 0);
        for seed in kept.into_iter().chain(610000..610400) {
            let (p, _) = program(seed);
            for body in action_bodies(&p) {
                let (mut ifs, mut used) = (0usize, Vec::<String>::new());
                for line in body {
                    let locs = inouts(line);
                    if ifs > 0 {
                        for l in &locs {
                            assert!(
                                !used.contains(l),
                                "seed {seed}: {l} again under an if: {line}"
                            );
                        }
                    }
                    calls_seen += locs.len();
                    used.extend(locs);
                    if line.starts_with("if (") {
                        assert_eq!(ifs, 0, "seed {seed}: if inside an if in an action: {line}");
                        ifs_seen += 1;
                        ifs += 1;
                    } else if line.starts_with('}') {
                        ifs = ifs.saturating_sub(1);
                    }
                }
            }
        }
        // the check looked at something
        assert!(
            ifs_seen > 50 && calls_seen > 50,
            "{ifs_seen} ifs, {calls_seen} calls"
        );
    }
}
