//! A small C-like preprocessor: comments, line continuations, #include (with the
//! built-in `core.p4` and `v1model.p4`), #define (object-like and function-like
//! macros), #undef, #if/#ifdef/#ifndef/#elif/#else/#endif, #error. Produces one text
//! plus, for every output line, the file and line it came from.

use crate::diag::{Diagnostic, Diagnostics, Location, SourceFile, SourceMap};
use crate::Options;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

pub const CORE_P4: &str = include_str!("include/core.p4");
pub const V1MODEL_P4: &str = include_str!("include/v1model.p4");

#[derive(Clone, Debug)]
struct Macro {
    params: Option<Vec<String>>,
    body: String,
}

struct Pp<'a> {
    opts: &'a Options,
    files: Vec<SourceFile>,
    out: String,
    origins: Vec<(usize, u32)>,
    macros: HashMap<String, Macro>,
    errors: Vec<Diagnostic>,
    depth: usize,
    included_builtin: HashSet<String>,
    /// Characters macro expansion may still produce for the current line.
    budget: std::cell::Cell<usize>,
}

pub fn preprocess(name: &str, text: &str, opts: &Options) -> Result<SourceMap, Diagnostics> {
    let mut pp = Pp {
        opts,
        files: vec![],
        out: String::new(),
        origins: vec![],
        macros: HashMap::new(),
        errors: vec![],
        depth: 0,
        included_builtin: HashSet::new(),
        budget: std::cell::Cell::new(0),
    };
    for (k, v) in &opts.defines {
        pp.macros.insert(
            k.clone(),
            Macro {
                params: None,
                body: v.clone(),
            },
        );
    }
    pp.macros.insert(
        "__P4C_SDNPERF__".into(),
        Macro {
            params: None,
            body: "1".into(),
        },
    );
    pp.process_file(name.to_string(), text.to_string(), None);
    if !pp.errors.is_empty() {
        return Err(Diagnostics { errors: pp.errors });
    }
    Ok(SourceMap::new(pp.files, pp.out, pp.origins))
}

/// Replace comments with spaces (keeping newlines) and join continuation lines
/// (keeping the line count by appending the removed newlines after the joined line).
fn strip_comments(text: &str) -> Vec<String> {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '"' {
            out.push(c);
            i += 1;
            while i < b.len() && b[i] != '"' && b[i] != '\n' {
                if b[i] == '\\' && i + 1 < b.len() && b[i + 1] != '\n' {
                    out.push(b[i]);
                    i += 1;
                }
                out.push(b[i]);
                i += 1;
            }
            if i < b.len() && b[i] == '"' {
                out.push('"');
                i += 1;
            }
        } else if c == '/' && i + 1 < b.len() && b[i + 1] == '/' {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && i + 1 < b.len() && b[i + 1] == '*' {
            out.push(' ');
            i += 2;
            while i < b.len() && !(b[i] == '*' && i + 1 < b.len() && b[i + 1] == '/') {
                if b[i] == '\n' {
                    out.push('\n');
                }
                i += 1;
            }
            i = (i + 2).min(b.len());
        } else {
            out.push(c);
            i += 1;
        }
    }
    // line continuations
    let raw: Vec<&str> = out.split('\n').collect();
    let mut lines = Vec::with_capacity(raw.len());
    let mut k = 0;
    while k < raw.len() {
        let mut l = raw[k].trim_end_matches('\r').to_string();
        let mut joined = 0;
        while l.ends_with('\\') && k + 1 < raw.len() {
            l.pop();
            k += 1;
            l.push(' ');
            l.push_str(raw[k].trim_end_matches('\r'));
            joined += 1;
        }
        lines.push(l);
        for _ in 0..joined {
            lines.push(String::new());
        }
        k += 1;
    }
    lines
}

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}
fn is_ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

impl<'a> Pp<'a> {
    fn err(&mut self, file: usize, line: u32, col: u32, src: &str, msg: String) {
        let name = self.files[file].name.clone();
        self.errors.push(Diagnostic {
            loc: Location {
                file: name,
                line,
                col,
                source_line: src.to_string(),
            },
            message: msg,
        });
    }

    fn process_file(&mut self, name: String, text: String, _from: Option<(usize, u32)>) {
        let fidx = self.files.len();
        self.files.push(SourceFile {
            name,
            text: text.clone(),
        });
        self.depth += 1;
        let lines = strip_comments(&text);
        // stack of (active, taken_any, parent_active)
        let mut cond: Vec<(bool, bool, bool)> = vec![];
        let mut opened: Vec<(u32, u32, String)> = vec![];
        let active = |c: &Vec<(bool, bool, bool)>| c.last().map(|x| x.0).unwrap_or(true);
        // Indexed once: looking each line up from the start (`text.lines().nth(li)`) made
        // preprocessing quadratic in the file's length (bench/p4c/scaling.py).
        let orig_lines: Vec<&str> = text.lines().collect();
        for (li, line) in lines.iter().enumerate() {
            let lno = li as u32 + 1;
            let t = line.trim_start();
            if let Some(rest) = t.strip_prefix('#') {
                let orig_line = orig_lines.get(li).copied().unwrap_or("").to_string();
                let col = (line.len() - t.len()) as u32 + 1;
                let rest = rest.trim_start();
                let (dir, arg) = match rest.find(|c: char| !is_ident_char(c)) {
                    Some(p) => (&rest[..p], rest[p..].trim()),
                    None => (rest, ""),
                };
                let is_active = active(&cond);
                match dir {
                    "ifdef" | "ifndef" => {
                        let name = arg.split_whitespace().next().unwrap_or("");
                        let def = self.macros.contains_key(name);
                        let v = if dir == "ifdef" { def } else { !def };
                        cond.push((is_active && v, v, is_active));
                        opened.push((lno, col, orig_line.clone()));
                    }
                    "if" => {
                        let v = if is_active {
                            self.eval_cond(arg, fidx, lno, col, &orig_line)
                        } else {
                            false
                        };
                        cond.push((is_active && v, v, is_active));
                        opened.push((lno, col, orig_line.clone()));
                    }
                    "elif" => match cond.pop() {
                        Some((_, taken, parent)) => {
                            let v = if parent && !taken {
                                self.eval_cond(arg, fidx, lno, col, &orig_line)
                            } else {
                                false
                            };
                            cond.push((parent && !taken && v, taken || v, parent));
                        }
                        None => self.err(fidx, lno, col, &orig_line, "#elif without #if".into()),
                    },
                    "else" => match cond.pop() {
                        Some((_, taken, parent)) => cond.push((parent && !taken, true, parent)),
                        None => self.err(fidx, lno, col, &orig_line, "#else without #if".into()),
                    },
                    "endif" => {
                        opened.pop();
                        if cond.pop().is_none() {
                            self.err(fidx, lno, col, &orig_line, "#endif without #if".into());
                        }
                    }
                    _ if !is_active => {}
                    "define" => self.define(arg, fidx, lno, col, &orig_line),
                    "undef" => {
                        self.macros
                            .remove(arg.split_whitespace().next().unwrap_or(""));
                    }
                    "include" => {
                        self.emit_line(String::new(), fidx, lno);
                        self.include(arg, fidx, lno, col, &orig_line);
                        continue;
                    }
                    "error" => self.err(fidx, lno, col, &orig_line, format!("#error {}", arg)),
                    "pragma" | "line" | "warning" | "" => {}
                    _ => self.err(
                        fidx,
                        lno,
                        col,
                        &orig_line,
                        format!("unknown preprocessor directive '#{}'", dir),
                    ),
                }
                self.emit_line(String::new(), fidx, lno);
                continue;
            }
            if active(&cond) {
                let expanded = self.expand(line, 0);
                self.emit_line(expanded, fidx, lno);
            } else {
                self.emit_line(String::new(), fidx, lno);
            }
        }
        if let Some((l, c, src)) = opened.pop() {
            self.err(
                fidx,
                l,
                c,
                &src,
                "this #if/#ifdef has no matching #endif".into(),
            );
        }
        self.depth -= 1;
    }

    fn emit_line(&mut self, s: String, file: usize, line: u32) {
        // Keep each output line on one line (macro bodies never contain newlines).
        self.out.push_str(&s.replace('\n', " "));
        self.out.push('\n');
        self.origins.push((file, line));
    }

    fn define(&mut self, arg: &str, f: usize, l: u32, c: u32, src: &str) {
        let name_end = arg.find(|ch: char| !is_ident_char(ch)).unwrap_or(arg.len());
        let name = &arg[..name_end];
        if name.is_empty() || !is_ident_start(name.chars().next().unwrap()) {
            self.err(f, l, c, src, "#define needs a macro name".into());
            return;
        }
        let rest = &arg[name_end..];
        if let Some(r) = rest.strip_prefix('(') {
            let close = match r.find(')') {
                Some(p) => p,
                None => {
                    self.err(f, l, c, src, "missing ')' in macro parameter list".into());
                    return;
                }
            };
            let params: Vec<String> = r[..close]
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            self.macros.insert(
                name.to_string(),
                Macro {
                    params: Some(params),
                    body: r[close + 1..].trim().to_string(),
                },
            );
        } else {
            self.macros.insert(
                name.to_string(),
                Macro {
                    params: None,
                    body: rest.trim().to_string(),
                },
            );
        }
    }

    fn include(&mut self, arg: &str, f: usize, l: u32, c: u32, src: &str) {
        let arg = self.expand(arg, 0);
        let arg = arg.trim();
        let (name, system) = if let Some(r) = arg.strip_prefix('<') {
            (r.split('>').next().unwrap_or("").to_string(), true)
        } else if let Some(r) = arg.strip_prefix('"') {
            (r.split('"').next().unwrap_or("").to_string(), false)
        } else {
            self.err(f, l, c, src, "#include expects \"FILE\" or <FILE>".into());
            return;
        };
        if self.depth > 40 {
            self.err(f, l, c, src, "#include nested too deeply".into());
            return;
        }
        let builtin = match name.as_str() {
            "core.p4" => Some(CORE_P4),
            "v1model.p4" => Some(V1MODEL_P4),
            _ => None,
        };
        if let Some(b) = builtin {
            if system || self.find_file(&name, f).is_none() {
                if self.included_builtin.insert(name.clone()) {
                    self.process_file(format!("<{}>", name), b.to_string(), Some((f, l)));
                }
                return;
            }
        }
        match self.find_file(&name, f) {
            Some(p) => match std::fs::read(&p) {
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    self.process_file(p.display().to_string(), text, Some((f, l)));
                }
                Err(e) => self.err(f, l, c, src, format!("cannot read '{}': {}", p.display(), e)),
            },
            // other architectures are out of scope: say so instead of "not found"
            None if matches!(name.rsplit('/').next(), Some("psa.p4" | "pna.p4" | "ebpf_model.p4" | "ubpf_model.p4" | "tna.p4" | "t2na.p4")) => {
                self.err(f, l, c, src, format!("'{}' is another architecture: sdnperf-p4c compiles v1model programs only (PSA, PNA, eBPF, TNA are out of scope)", name))
            }
            None => self.err(f, l, c, src, format!("cannot find include file '{}'", name)),
        }
    }

    fn find_file(&self, name: &str, from: usize) -> Option<PathBuf> {
        let mut dirs: Vec<PathBuf> = vec![];
        let cur = PathBuf::from(&self.files[from].name);
        if let Some(d) = cur.parent() {
            dirs.push(if d.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                d.to_path_buf()
            });
        }
        dirs.extend(self.opts.include_dirs.iter().cloned());
        for d in dirs {
            let p = d.join(name);
            if p.is_file() {
                return Some(p);
            }
        }
        None
    }

    /// Expand macros in a line (identifier-aware, skips string literals).
    fn expand(&self, line: &str, depth: usize) -> String {
        let _ = depth;
        if self.macros.is_empty() {
            return line.to_string();
        }
        self.budget.set(4 << 20);
        let mut disabled = Vec::new();
        self.expand_with(line, &mut disabled)
    }

    /// One expansion pass; as in C, a macro is not expanded again inside its own
    /// expansion (`disabled`), which also keeps self-referencing macros finite.
    fn expand_with(&self, line: &str, disabled: &mut Vec<String>) -> String {
        const MAX_LEN: usize = 1 << 20;
        let chars: Vec<char> = line.chars().collect();
        let mut out = String::with_capacity(line.len());
        let mut i = 0;
        while i < chars.len() {
            if out.len() > MAX_LEN || disabled.len() > 64 {
                out.extend(chars[i..].iter());
                break;
            }
            let c = chars[i];
            if c == '"' {
                out.push(c);
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    out.push(chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    out.push('"');
                    i += 1;
                }
            } else if c.is_ascii_digit() {
                while i < chars.len() && is_ident_char(chars[i]) {
                    out.push(chars[i]);
                    i += 1;
                }
            } else if is_ident_start(c) {
                let s = i;
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
                let word: String = chars[s..i].iter().collect();
                let cost = self
                    .macros
                    .get(&word)
                    .map(|m| m.body.len() + 16)
                    .unwrap_or(0);
                if disabled.contains(&word) || cost > self.budget.get() {
                    out.push_str(&word);
                    continue;
                }
                self.budget.set(self.budget.get() - cost);
                match self.macros.get(&word) {
                    Some(Macro { params: None, body }) => {
                        disabled.push(word.clone());
                        let e = self.expand_with(body, disabled);
                        disabled.pop();
                        out.push_str(&e);
                    }
                    Some(Macro {
                        params: Some(ps),
                        body,
                    }) => {
                        let mut j = i;
                        while j < chars.len() && chars[j].is_whitespace() {
                            j += 1;
                        }
                        if j < chars.len() && chars[j] == '(' {
                            let mut args = vec![String::new()];
                            let mut lvl = 0;
                            j += 1;
                            let mut closed = false;
                            while j < chars.len() {
                                let ch = chars[j];
                                if ch == '(' {
                                    lvl += 1;
                                } else if ch == ')' {
                                    if lvl == 0 {
                                        closed = true;
                                        j += 1;
                                        break;
                                    }
                                    lvl -= 1;
                                } else if ch == ',' && lvl == 0 {
                                    args.push(String::new());
                                    j += 1;
                                    continue;
                                }
                                args.last_mut().unwrap().push(ch);
                                j += 1;
                            }
                            if closed {
                                if ps.is_empty() && args.len() == 1 && args[0].trim().is_empty() {
                                    args.clear();
                                }
                                // arguments are expanded before substitution
                                let args: Vec<String> =
                                    args.iter().map(|a| self.expand_with(a, disabled)).collect();
                                let body = substitute(body, ps, &args);
                                disabled.push(word.clone());
                                let e = self.expand_with(&body, disabled);
                                disabled.pop();
                                out.push_str(&e);
                                i = j;
                            } else {
                                out.push_str(&word);
                            }
                        } else {
                            out.push_str(&word);
                        }
                    }
                    None => out.push_str(&word),
                }
            } else {
                out.push(c);
                i += 1;
            }
        }
        out
    }

    fn eval_cond(&mut self, expr: &str, f: usize, l: u32, c: u32, src: &str) -> bool {
        // replace defined(X) / defined X first
        let mut s = String::new();
        let chars: Vec<char> = expr.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            if is_ident_start(chars[i]) {
                let st = i;
                while i < chars.len() && is_ident_char(chars[i]) {
                    i += 1;
                }
                let w: String = chars[st..i].iter().collect();
                if w == "defined" {
                    let mut j = i;
                    while j < chars.len() && (chars[j].is_whitespace() || chars[j] == '(') {
                        j += 1;
                    }
                    let ns = j;
                    while j < chars.len() && is_ident_char(chars[j]) {
                        j += 1;
                    }
                    let n: String = chars[ns..j].iter().collect();
                    while j < chars.len() && (chars[j].is_whitespace() || chars[j] == ')') {
                        j += 1;
                    }
                    s.push_str(if self.macros.contains_key(&n) {
                        " 1 "
                    } else {
                        " 0 "
                    });
                    i = j;
                } else {
                    s.push_str(&w);
                }
            } else {
                s.push(chars[i]);
                i += 1;
            }
        }
        let e = self.expand(&s, 0);
        match CondEval::new(&e).eval() {
            Ok(v) => v != 0,
            Err(m) => {
                self.err(f, l, c, src, format!("invalid #if expression: {}", m));
                false
            }
        }
    }
}

fn substitute(body: &str, params: &[String], args: &[String]) -> String {
    let chars: Vec<char> = body.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while i < chars.len() {
        if is_ident_start(chars[i]) {
            let s = i;
            while i < chars.len() && is_ident_char(chars[i]) {
                i += 1;
            }
            let w: String = chars[s..i].iter().collect();
            match params.iter().position(|p| *p == w) {
                Some(k) => out.push_str(args.get(k).map(|a| a.trim()).unwrap_or("")),
                None => out.push_str(&w),
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

/// Integer expression evaluator for #if.
struct CondEval {
    toks: Vec<String>,
    pos: usize,
}

impl CondEval {
    fn new(s: &str) -> CondEval {
        let mut toks = vec![];
        let c: Vec<char> = s.chars().collect();
        let mut i = 0;
        while i < c.len() {
            if c[i].is_whitespace() {
                i += 1;
                continue;
            }
            if is_ident_char(c[i]) {
                let st = i;
                while i < c.len() && is_ident_char(c[i]) {
                    i += 1;
                }
                toks.push(c[st..i].iter().collect());
                continue;
            }
            let two: String = c[i..(i + 2).min(c.len())].iter().collect();
            if ["&&", "||", "==", "!=", "<=", ">=", "<<", ">>"].contains(&two.as_str()) {
                toks.push(two);
                i += 2;
            } else {
                toks.push(c[i].to_string());
                i += 1;
            }
        }
        CondEval { toks, pos: 0 }
    }
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|s| s.as_str())
    }
    fn eval(&mut self) -> Result<i64, String> {
        let v = self.bin(0)?;
        if let Some(t) = self.peek() {
            return Err(format!("unexpected '{}'", t));
        }
        Ok(v)
    }
    fn bin(&mut self, prec: usize) -> Result<i64, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", ">", "<=", ">="],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        if prec >= LEVELS.len() {
            return self.unary();
        }
        let mut l = self.bin(prec + 1)?;
        while let Some(op) = self.peek().map(|s| s.to_string()) {
            if !LEVELS[prec].contains(&op.as_str()) {
                break;
            }
            self.pos += 1;
            let r = self.bin(prec + 1)?;
            l = match op.as_str() {
                "||" => ((l != 0) || (r != 0)) as i64,
                "&&" => ((l != 0) && (r != 0)) as i64,
                "|" => l | r,
                "^" => l ^ r,
                "&" => l & r,
                "==" => (l == r) as i64,
                "!=" => (l != r) as i64,
                "<" => (l < r) as i64,
                ">" => (l > r) as i64,
                "<=" => (l <= r) as i64,
                ">=" => (l >= r) as i64,
                "<<" => l.wrapping_shl(r as u32),
                ">>" => l.wrapping_shr(r as u32),
                "+" => l.wrapping_add(r),
                "-" => l.wrapping_sub(r),
                "*" => l.wrapping_mul(r),
                "/" | "%" => {
                    if r == 0 {
                        return Err("division by zero".into());
                    }
                    if op == "/" {
                        l.wrapping_div(r)
                    } else {
                        l.wrapping_rem(r)
                    }
                }
                _ => unreachable!(),
            };
        }
        Ok(l)
    }
    fn unary(&mut self) -> Result<i64, String> {
        match self.peek().map(|s| s.to_string()) {
            Some(t) if t == "!" => {
                self.pos += 1;
                Ok((self.unary()? == 0) as i64)
            }
            Some(t) if t == "-" => {
                self.pos += 1;
                Ok(self.unary()?.wrapping_neg())
            }
            Some(t) if t == "~" => {
                self.pos += 1;
                Ok(!self.unary()?)
            }
            Some(t) if t == "(" => {
                self.pos += 1;
                let v = self.bin(0)?;
                if self.peek() != Some(")") {
                    return Err("missing ')'".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(t) => {
                self.pos += 1;
                if t.chars()
                    .next()
                    .map(|c| c.is_ascii_digit())
                    .unwrap_or(false)
                {
                    let t2 = t.trim_end_matches(['u', 'U', 'l', 'L']);
                    let v = if let Some(h) = t2.strip_prefix("0x").or_else(|| t2.strip_prefix("0X"))
                    {
                        i64::from_str_radix(h, 16)
                    } else {
                        t2.parse::<i64>()
                    };
                    v.map_err(|_| format!("bad number '{}'", t))
                } else if is_ident_start(t.chars().next().unwrap_or(' ')) {
                    Ok(0) // undefined identifiers are 0, as in C
                } else {
                    Err(format!("unexpected '{}'", t))
                }
            }
            None => Err("unexpected end of expression".into()),
        }
    }
}
