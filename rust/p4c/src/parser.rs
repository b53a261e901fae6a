//! Recursive-descent parser for P4_16: tokens → [`ast::Program`].
//! Type names are tracked while parsing to tell declarations from expressions.

use crate::ast::*;
use crate::diag::{Error, PResult, Sink, Span};
use crate::lexer::{Tok, Token};
use std::collections::HashSet;

pub struct Parser<'s> {
    toks: Vec<Token>,
    pos: usize,
    type_names: HashSet<String>,
    sink: &'s mut Sink,
    depth: usize,
}

pub fn parse(toks: Vec<Token>, sink: &mut Sink) -> Program {
    let mut p = Parser {
        toks,
        pos: 0,
        type_names: HashSet::new(),
        sink,
        depth: 0,
    };
    for t in ["packet_in", "packet_out"] {
        p.type_names.insert(t.to_string());
    }
    let mut prog = Program::default();
    while !p.at_eof() {
        let start = p.pos;
        match p.decl() {
            Ok(Some(d)) => prog.decls.push(d),
            Ok(None) => {}
            Err(e) => {
                p.sink.push(e);
                p.recover_top(start);
            }
        }
    }
    prog
}

const KEYWORDS: &[&str] = &[
    "action",
    "apply",
    "bit",
    "bool",
    "const",
    "control",
    "default",
    "else",
    "enum",
    "error",
    "exit",
    "extern",
    "false",
    "header",
    "header_union",
    "if",
    "in",
    "inout",
    "int",
    "match_kind",
    "out",
    "package",
    "parser",
    "return",
    "select",
    "state",
    "struct",
    "switch",
    "table",
    "transition",
    "true",
    "tuple",
    "typedef",
    "type",
    "varbit",
    "void",
    "value_set",
    "entries",
    "key",
    "actions",
    "list",
];

fn describe(t: &Tok) -> String {
    match t {
        Tok::Ident(s) => format!("'{}'", s),
        Tok::Int(v, _) => format!("integer {}", v),
        Tok::Str(s) => format!("string \"{}\"", s),
        Tok::Punct(p) => format!("'{}'", p),
        Tok::Eof => "end of file".into(),
    }
}

impl<'s> Parser<'s> {
    fn peek(&self) -> &Tok {
        &self.toks[self.pos.min(self.toks.len() - 1)].tok
    }
    fn peek_at(&self, n: usize) -> &Tok {
        &self.toks[(self.pos + n).min(self.toks.len() - 1)].tok
    }
    fn span(&self) -> Span {
        self.toks[self.pos.min(self.toks.len() - 1)].span
    }
    fn prev_span(&self) -> Span {
        if self.pos == 0 {
            self.span()
        } else {
            self.toks[(self.pos - 1).min(self.toks.len() - 1)].span
        }
    }
    fn at_eof(&self) -> bool {
        matches!(self.peek(), Tok::Eof)
    }
    fn bump(&mut self) -> Token {
        let t = self.toks[self.pos.min(self.toks.len() - 1)].clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }
    fn is_p(&self, p: &str) -> bool {
        matches!(self.peek(), Tok::Punct(q) if *q == p)
    }
    fn is_kw(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(q) if q == k)
    }
    fn eat_p(&mut self, p: &str) -> bool {
        if self.is_p(p) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn eat_kw(&mut self, k: &str) -> bool {
        if self.is_kw(k) {
            self.bump();
            true
        } else {
            false
        }
    }
    fn unexpected(&self, what: &str) -> Error {
        Error::new(
            self.span(),
            format!("expected {}, found {}", what, describe(self.peek())),
        )
    }
    fn expect_p(&mut self, p: &str) -> PResult<Span> {
        if self.is_p(p) {
            Ok(self.bump().span)
        } else {
            // For a missing ';' point just after the previous token.
            if p == ";" && self.pos > 0 {
                let ps = self.prev_span();
                return Err(Error::new(
                    Span {
                        lo: ps.hi,
                        hi: ps.hi,
                    },
                    format!(
                        "expected ';' after {}",
                        describe(&self.toks[self.pos - 1].tok)
                    ),
                ));
            }
            if p == "}" && self.at_eof() {
                // point at the '{' that is never closed
                let mut stack = vec![];
                for t in &self.toks {
                    match t.tok {
                        Tok::Punct("{") => stack.push(t.span),
                        Tok::Punct("}") => {
                            stack.pop();
                        }
                        _ => {}
                    }
                }
                if let Some(sp) = stack.last() {
                    return Err(Error::new(
                        *sp,
                        "this '{' is never closed (end of file reached)",
                    ));
                }
            }
            Err(self.unexpected(&format!("'{}'", p)))
        }
    }
    fn expect_kw(&mut self, k: &str) -> PResult<Span> {
        if self.is_kw(k) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(&format!("'{}'", k)))
        }
    }
    fn ident(&mut self) -> PResult<(String, Span)> {
        match self.peek().clone() {
            Tok::Ident(s) => {
                let sp = self.bump().span;
                Ok((s, sp))
            }
            _ => Err(self.unexpected("an identifier")),
        }
    }
    /// Identifier that may be a non-reserved keyword-like word (apply, key, actions...).
    fn name(&mut self) -> PResult<(String, Span)> {
        self.ident()
    }

    fn recover_top(&mut self, start: usize) {
        // Skip the whole declaration that failed: from its first token to the
        // matching '}' (or ';' at depth 0).
        let err_pos = self.pos;
        self.pos = start;
        let mut depth: i32 = 0;
        while !self.at_eof() {
            if self.is_p("{") {
                depth += 1;
            } else if self.is_p("}") {
                depth -= 1;
                if depth <= 0 {
                    self.bump();
                    if self.is_p(";") {
                        self.bump();
                    }
                    break;
                }
            } else if self.is_p(";") && depth <= 0 {
                self.bump();
                break;
            }
            self.bump();
        }
        if self.pos <= err_pos && depth > 0 {
            // unbalanced braces: continue after the error position
            self.pos = err_pos + 1;
        }
        if self.pos == start {
            self.bump();
        }
    }

    fn annotations(&mut self) -> PResult<Annos> {
        let mut v = vec![];
        while self.is_p("@") {
            let at = self.bump().span;
            let (name, _) = self.ident()?;
            let mut args = vec![];
            if self.is_p("(") && self.toks[self.pos - 1].joined {
                self.bump();
                // parse comma-separated expressions; fall back to skipping
                let save = self.pos;
                let mut ok = true;
                if !self.is_p(")") {
                    loop {
                        match self.expr() {
                            Ok(e) => args.push(e),
                            Err(_) => {
                                ok = false;
                                break;
                            }
                        }
                        if !self.eat_p(",") {
                            break;
                        }
                    }
                }
                if !ok || !self.is_p(")") {
                    self.pos = save;
                    args.clear();
                    let mut d = 0;
                    while !self.at_eof() {
                        if self.is_p("(") {
                            d += 1;
                        } else if self.is_p(")") {
                            if d == 0 {
                                break;
                            }
                            d -= 1;
                        }
                        self.bump();
                    }
                }
                self.expect_p(")")?;
            } else if self.is_p("[") {
                // structured annotation: skip
                let mut d = 0;
                while !self.at_eof() {
                    if self.is_p("[") {
                        d += 1;
                    } else if self.is_p("]") {
                        d -= 1;
                        if d == 0 {
                            self.bump();
                            break;
                        }
                    }
                    self.bump();
                }
            }
            v.push(Annotation {
                name,
                args,
                span: at,
            });
        }
        Ok(v)
    }

    fn decl(&mut self) -> PResult<Option<Decl>> {
        if self.eat_p(";") {
            return Ok(None);
        }
        let annos = self.annotations()?;
        let start = self.span();
        let kw = match self.peek() {
            Tok::Ident(s) => s.clone(),
            _ => return Err(self.unexpected("a declaration")),
        };
        match kw.as_str() {
            "const" => {
                self.bump();
                let ty = self.type_ref()?;
                let (name, _) = self.ident()?;
                self.expect_p("=")?;
                let value = self.expr()?;
                self.expect_p(";")?;
                Ok(Some(Decl::Const {
                    annos,
                    ty,
                    name,
                    value,
                    span: start,
                }))
            }
            "typedef" | "type" => {
                self.bump();
                let ty = self.type_ref()?;
                let (name, _) = self.ident()?;
                self.expect_p(";")?;
                self.type_names.insert(name.clone());
                Ok(Some(Decl::Typedef {
                    annos,
                    ty,
                    name,
                    newtype: kw == "type",
                    span: start,
                }))
            }
            "header" | "header_union" | "struct" => {
                self.bump();
                let (name, nspan) = self.ident()?;
                self.type_names.insert(name.clone());
                if self.is_p("<") {
                    return Err(Error::new(
                        self.span(),
                        "generic structs/headers are not supported",
                    ));
                }
                self.expect_p("{")?;
                let mut fields = vec![];
                while !self.is_p("}") {
                    let fa = self.annotations()?;
                    let fs = self.span();
                    let ty = self.type_ref()?;
                    let (fname, _) = self.name()?;
                    self.expect_p(";")?;
                    if fields.iter().any(|f: &Field| f.name == fname) {
                        return Err(Error::new(
                            fs,
                            format!("duplicate field '{}' in '{}'", fname, name),
                        ));
                    }
                    fields.push(Field {
                        annos: fa,
                        ty,
                        name: fname,
                        span: fs,
                    });
                }
                self.expect_p("}")?;
                let span = nspan;
                Ok(Some(match kw.as_str() {
                    "header" => Decl::Header {
                        annos,
                        name,
                        fields,
                        span,
                    },
                    "header_union" => Decl::HeaderUnion {
                        annos,
                        name,
                        fields,
                        span,
                    },
                    _ => Decl::Struct {
                        annos,
                        name,
                        fields,
                        span,
                    },
                }))
            }
            "enum" => {
                self.bump();
                let underlying = if self.is_kw("bit") || self.is_kw("int") {
                    Some(self.type_ref()?)
                } else {
                    None
                };
                let (name, nspan) = self.ident()?;
                self.type_names.insert(name.clone());
                self.expect_p("{")?;
                let mut members = vec![];
                while !self.is_p("}") {
                    let (m, ms) = self.ident()?;
                    let v = if self.eat_p("=") {
                        Some(self.expr()?)
                    } else {
                        None
                    };
                    members.push((m, v, ms));
                    if !self.eat_p(",") {
                        break;
                    }
                }
                self.expect_p("}")?;
                Ok(Some(Decl::Enum {
                    annos,
                    name,
                    underlying,
                    members,
                    span: nspan,
                }))
            }
            "error" | "match_kind" => {
                self.bump();
                self.expect_p("{")?;
                let mut members = vec![];
                while !self.is_p("}") {
                    members.push(self.ident()?);
                    if !self.eat_p(",") {
                        break;
                    }
                }
                self.expect_p("}")?;
                Ok(Some(if kw == "error" {
                    Decl::Error {
                        members,
                        span: start,
                    }
                } else {
                    Decl::MatchKind {
                        members,
                        span: start,
                    }
                }))
            }
            "extern" => {
                self.bump();
                // extern function or extern object
                let is_obj = matches!(self.peek(), Tok::Ident(_))
                    && (matches!(self.peek_at(1), Tok::Punct("{"))
                        || matches!(self.peek_at(1), Tok::Punct("<"))
                            && self.extern_obj_lookahead());
                if is_obj {
                    let (name, nspan) = self.ident()?;
                    self.type_names.insert(name.clone());
                    let type_params = self.type_params()?;
                    self.expect_p("{")?;
                    let mut methods = vec![];
                    while !self.is_p("}") && !self.at_eof() {
                        let ma = self.annotations()?;
                        self.eat_kw("abstract");
                        let ms = self.span();
                        // constructor: Name(
                        if matches!(self.peek(), Tok::Ident(n) if *n == name)
                            && matches!(self.peek_at(1), Tok::Punct("("))
                        {
                            self.bump();
                            let params = self.params()?;
                            self.expect_p(";")?;
                            methods.push(Method {
                                annos: ma,
                                ret: None,
                                name: name.clone(),
                                type_params: vec![],
                                params,
                                span: ms,
                            });
                            continue;
                        }
                        let ret = self.type_ref()?;
                        let (mname, _) = self.name()?;
                        let tps = self.type_params()?;
                        let params = self.params()?;
                        self.expect_p(";")?;
                        methods.push(Method {
                            annos: ma,
                            ret: Some(ret),
                            name: mname,
                            type_params: tps,
                            params,
                            span: ms,
                        });
                    }
                    self.expect_p("}")?;
                    Ok(Some(Decl::Extern {
                        annos,
                        name,
                        type_params,
                        methods,
                        span: nspan,
                    }))
                } else {
                    let ret = self.type_ref()?;
                    let (name, nspan) = self.name()?;
                    let tps = self.type_params()?;
                    let params = self.params()?;
                    self.expect_p(";")?;
                    Ok(Some(Decl::ExternFn(Method {
                        annos,
                        ret: Some(ret),
                        name,
                        type_params: tps,
                        params,
                        span: nspan,
                    })))
                }
            }
            "parser" => {
                self.bump();
                let (name, nspan) = self.ident()?;
                self.type_names.insert(name.clone());
                let type_params = self.type_params()?;
                let params = self.params()?;
                if self.eat_p(";") {
                    return Ok(Some(Decl::Parser {
                        annos,
                        name,
                        type_params,
                        params,
                        ctor_params: vec![],
                        locals: vec![],
                        states: vec![],
                        has_body: false,
                        span: nspan,
                    }));
                }
                let ctor_params = if self.is_p("(") {
                    self.params()?
                } else {
                    vec![]
                };
                self.expect_p("{")?;
                let mut locals = vec![];
                let mut states = vec![];
                while !self.is_p("}") && !self.at_eof() {
                    let la = self.annotations()?;
                    if self.is_kw("state") {
                        let ss = self.bump().span;
                        let (sname, _) = self.ident()?;
                        self.expect_p("{")?;
                        let mut stmts = vec![];
                        let mut transition = None;
                        while !self.is_p("}") && !self.at_eof() {
                            if self.is_kw("transition") {
                                let ts = self.bump().span;
                                transition = Some(self.transition(ts)?);
                                break;
                            }
                            stmts.push(self.stmt()?);
                        }
                        self.expect_p("}")?;
                        let _ = ss;
                        states.push(ParserState {
                            annos: la,
                            name: sname,
                            stmts,
                            transition,
                            span: ss,
                        });
                    } else {
                        locals.push(self.local(la, true)?);
                    }
                }
                self.expect_p("}")?;
                Ok(Some(Decl::Parser {
                    annos,
                    name,
                    type_params,
                    params,
                    ctor_params,
                    locals,
                    states,
                    has_body: true,
                    span: nspan,
                }))
            }
            "control" => {
                self.bump();
                let (name, nspan) = self.ident()?;
                self.type_names.insert(name.clone());
                let type_params = self.type_params()?;
                let params = self.params()?;
                if self.eat_p(";") {
                    return Ok(Some(Decl::Control {
                        annos,
                        name,
                        type_params,
                        params,
                        ctor_params: vec![],
                        locals: vec![],
                        apply: vec![],
                        has_body: false,
                        span: nspan,
                    }));
                }
                let ctor_params = if self.is_p("(") {
                    self.params()?
                } else {
                    vec![]
                };
                self.expect_p("{")?;
                let mut locals = vec![];
                let mut apply = None;
                while !self.is_p("}") && !self.at_eof() {
                    let la = self.annotations()?;
                    if self.is_kw("apply") && matches!(self.peek_at(1), Tok::Punct("{")) {
                        self.bump();
                        apply = Some(self.block()?);
                    } else {
                        locals.push(self.local(la, false)?);
                    }
                }
                self.expect_p("}")?;
                let apply = match apply {
                    Some(s) => match s.kind {
                        StmtKind::Block(v) => v,
                        _ => vec![],
                    },
                    None => {
                        return Err(Error::new(
                            nspan,
                            format!("control '{}' has no apply block", name),
                        ))
                    }
                };
                Ok(Some(Decl::Control {
                    annos,
                    name,
                    type_params,
                    params,
                    ctor_params,
                    locals,
                    apply,
                    has_body: true,
                    span: nspan,
                }))
            }
            "package" => {
                self.bump();
                let (name, nspan) = self.ident()?;
                self.type_names.insert(name.clone());
                self.type_params()?;
                self.params()?;
                self.expect_p(";")?;
                Ok(Some(Decl::Package { name, span: nspan }))
            }
            "action" => Ok(Some(Decl::Action(self.action(annos)?))),
            _ => {
                // function, or instantiation
                let ty = self.type_ref()?;
                if self.is_p("(") {
                    let args = self.args()?;
                    let (name, nspan) = self.name()?;
                    self.expect_p(";")?;
                    return Ok(Some(Decl::Instance(Instance {
                        annos,
                        ty,
                        args,
                        name,
                        span: nspan,
                    })));
                }
                let (name, nspan) = self.name()?;
                let _tps = self.type_params()?;
                let params = self.params()?;
                let body = self.block()?;
                let body = match body.kind {
                    StmtKind::Block(v) => v,
                    _ => vec![],
                };
                Ok(Some(Decl::Function {
                    annos,
                    ret: ty,
                    name,
                    params,
                    body,
                    span: nspan,
                }))
            }
        }
    }

    fn extern_obj_lookahead(&self) -> bool {
        // extern Name<T> { ... }  vs  extern T name<...>(...)
        let mut i = self.pos + 1;
        let mut d = 0;
        while i < self.toks.len() {
            match &self.toks[i].tok {
                Tok::Punct("<") => d += 1,
                Tok::Punct(">") => {
                    d -= 1;
                    if d == 0 {
                        return matches!(
                            self.toks.get(i + 1).map(|t| &t.tok),
                            Some(Tok::Punct("{"))
                        );
                    }
                }
                Tok::Eof => return false,
                _ => {}
            }
            i += 1;
        }
        false
    }

    fn type_params(&mut self) -> PResult<Vec<String>> {
        let mut v = vec![];
        if self.eat_p("<") {
            loop {
                let (n, _) = self.ident()?;
                self.type_names.insert(n.clone());
                v.push(n);
                if !self.eat_p(",") {
                    break;
                }
            }
            self.expect_p(">")?;
        }
        Ok(v)
    }

    fn params(&mut self) -> PResult<Vec<Param>> {
        self.expect_p("(")?;
        let mut v = vec![];
        while !self.is_p(")") {
            let annos = self.annotations()?;
            let span = self.span();
            let dir = if self.eat_kw("inout") {
                Dir::InOut
            } else if self.eat_kw("in") {
                Dir::In
            } else if self.eat_kw("out") {
                Dir::Out
            } else {
                Dir::None
            };
            let ty = self.type_ref()?;
            let (name, _) = self.name()?;
            let default = if self.eat_p("=") {
                Some(self.expr()?)
            } else {
                None
            };
            v.push(Param {
                annos,
                dir,
                ty,
                name,
                default,
                span,
            });
            if !self.eat_p(",") {
                break;
            }
        }
        self.expect_p(")")?;
        Ok(v)
    }

    fn args(&mut self) -> PResult<Vec<Arg>> {
        self.expect_p("(")?;
        let mut v = vec![];
        while !self.is_p(")") {
            let name = if matches!(self.peek(), Tok::Ident(_))
                && matches!(self.peek_at(1), Tok::Punct("="))
            {
                let (n, _) = self.ident()?;
                self.bump();
                Some(n)
            } else {
                None
            };
            let value = if self.is_kw("_") {
                let s = self.bump().span;
                Expr {
                    kind: ExprKind::Default,
                    span: s,
                }
            } else {
                self.expr()?
            };
            v.push(Arg { name, value });
            if !self.eat_p(",") {
                break;
            }
        }
        self.expect_p(")")?;
        Ok(v)
    }

    fn transition(&mut self, ts: Span) -> PResult<Transition> {
        if self.eat_kw("select") {
            self.expect_p("(")?;
            let mut keys = vec![];
            while !self.is_p(")") {
                keys.push(self.expr()?);
                if !self.eat_p(",") {
                    break;
                }
            }
            self.expect_p(")")?;
            self.expect_p("{")?;
            let mut cases = vec![];
            while !self.is_p("}") && !self.at_eof() {
                let cs = self.span();
                let mut ks = vec![];
                if self.eat_p("(") {
                    while !self.is_p(")") {
                        ks.push(self.keyset_expr()?);
                        if !self.eat_p(",") {
                            break;
                        }
                    }
                    self.expect_p(")")?;
                } else {
                    ks.push(self.keyset_expr()?);
                }
                self.expect_p(":")?;
                let (next, _) = self.ident()?;
                self.expect_p(";")?;
                cases.push(SelectCase {
                    keys: ks,
                    next,
                    span: cs,
                });
            }
            self.expect_p("}")?;
            Ok(Transition::Select(keys, cases, ts))
        } else {
            let (n, s) = self.ident()?;
            self.expect_p(";")?;
            Ok(Transition::Direct(n, s))
        }
    }

    fn keyset_expr(&mut self) -> PResult<Expr> {
        if self.is_kw("default") || self.is_kw("_") {
            let s = self.bump().span;
            return Ok(Expr {
                kind: ExprKind::Default,
                span: s,
            });
        }
        let e = self.expr()?;
        if self.eat_p("&&&") {
            let m = self.expr()?;
            let sp = e.span.to(m.span);
            return Ok(Expr {
                kind: ExprKind::Mask(Box::new(e), Box::new(m)),
                span: sp,
            });
        }
        if self.eat_p("..") {
            let m = self.expr()?;
            let sp = e.span.to(m.span);
            return Ok(Expr {
                kind: ExprKind::Range(Box::new(e), Box::new(m)),
                span: sp,
            });
        }
        Ok(e)
    }

    fn action(&mut self, annos: Annos) -> PResult<Action> {
        self.expect_kw("action")?;
        let (name, span) = self.name()?;
        let params = self.params()?;
        let body = self.block()?;
        let body = match body.kind {
            StmtKind::Block(v) => v,
            _ => vec![],
        };
        Ok(Action {
            annos,
            name,
            params,
            body,
            span,
        })
    }

    fn local(&mut self, annos: Annos, in_parser: bool) -> PResult<Local> {
        if self.is_kw("action") {
            return Ok(Local::Action(self.action(annos)?));
        }
        if self.is_kw("table") && !in_parser {
            return Ok(Local::Table(self.table(annos)?));
        }
        if self.is_kw("value_set") {
            let span = self.bump().span;
            self.expect_p("<")?;
            let ty = self.type_ref()?;
            self.expect_p(">")?;
            self.expect_p("(")?;
            let size = self.expr()?;
            self.expect_p(")")?;
            let (name, nspan) = self.ident()?;
            self.expect_p(";")?;
            let _ = span;
            return Ok(Local::ValueSet {
                annos,
                ty,
                size,
                name,
                span: nspan,
            });
        }
        if self.is_kw("const") {
            let s = self.stmt()?;
            return Ok(Local::Var(s));
        }
        let st = self.span();
        let ty = self.type_ref()?;
        if self.is_p("(") {
            let args = self.args()?;
            let (name, nspan) = self.name()?;
            self.expect_p(";")?;
            let _ = st;
            return Ok(Local::Inst(Instance {
                annos,
                ty,
                args,
                name,
                span: nspan,
            }));
        }
        let (name, nspan) = self.name()?;
        let init = if self.eat_p("=") {
            Some(self.expr()?)
        } else {
            None
        };
        self.expect_p(";")?;
        Ok(Local::Var(Stmt {
            kind: StmtKind::Var(annos, ty, name, init),
            span: nspan,
        }))
    }

    fn table(&mut self, annos: Annos) -> PResult<Table> {
        self.expect_kw("table")?;
        let (name, span) = self.name()?;
        self.expect_p("{")?;
        let mut t = Table {
            annos,
            name,
            keys: vec![],
            actions: vec![],
            default_action: None,
            entries: None,
            size: None,
            props: vec![],
            span,
        };
        while !self.is_p("}") && !self.at_eof() {
            let _pa = self.annotations()?;
            let is_const = self.eat_kw("const");
            let (prop, pspan) = self.name()?;
            match prop.as_str() {
                "key" => {
                    self.expect_p("=")?;
                    self.expect_p("{")?;
                    while !self.is_p("}") && !self.at_eof() {
                        let ks = self.span();
                        let expr = self.expr()?;
                        self.expect_p(":")?;
                        let (mk, _) = self.ident()?;
                        let ka = self.annotations()?;
                        self.expect_p(";")?;
                        t.keys.push(KeyElem {
                            annos: ka,
                            expr,
                            match_kind: mk,
                            span: ks,
                        });
                    }
                    self.expect_p("}")?;
                }
                "actions" => {
                    self.expect_p("=")?;
                    self.expect_p("{")?;
                    while !self.is_p("}") && !self.at_eof() {
                        let aa = self.annotations()?;
                        let ar = self.action_ref(aa)?;
                        t.actions.push(ar);
                        self.expect_p(";")?;
                    }
                    self.expect_p("}")?;
                }
                "default_action" => {
                    self.expect_p("=")?;
                    let ar = self.action_ref(vec![])?;
                    self.expect_p(";")?;
                    t.default_action = Some((ar, is_const));
                }
                "entries" => {
                    self.expect_p("=")?;
                    self.expect_p("{")?;
                    let mut es = vec![];
                    while !self.is_p("}") && !self.at_eof() {
                        let mut ea = self.annotations()?;
                        let es0 = self.span();
                        let mut priority = None;
                        if self.eat_kw("priority") {
                            self.expect_p("=")?;
                            priority = Some(self.expr()?);
                            self.expect_p(":")?;
                        }
                        let mut keys = vec![];
                        if self.eat_p("(") {
                            while !self.is_p(")") {
                                keys.push(self.keyset_expr()?);
                                if !self.eat_p(",") {
                                    break;
                                }
                            }
                            self.expect_p(")")?;
                        } else {
                            keys.push(self.keyset_expr()?);
                        }
                        self.expect_p(":")?;
                        let aa = self.annotations()?;
                        let action = self.action_ref(aa)?;
                        // the grammar's place for entry annotations (`a(1) @priority(3);`)
                        ea.extend(self.annotations()?);
                        self.expect_p(";")?;
                        es.push(Entry {
                            annos: ea,
                            keys,
                            action,
                            priority,
                            span: es0,
                        });
                    }
                    self.expect_p("}")?;
                    t.entries = Some((es, is_const));
                }
                "size" => {
                    self.expect_p("=")?;
                    t.size = Some(self.expr()?);
                    self.expect_p(";")?;
                }
                _ => {
                    self.expect_p("=")?;
                    let e = self.expr()?;
                    self.expect_p(";")?;
                    t.props.push((prop, e, pspan));
                }
            }
        }
        self.expect_p("}")?;
        Ok(t)
    }

    fn action_ref(&mut self, annos: Annos) -> PResult<ActionRef> {
        let span = self.span();
        let mut name = String::new();
        if self.eat_p(".") {
            name.push('.');
        }
        let (n, _) = self.name()?;
        name.push_str(&n);
        // allow qualified names like Ctrl.act
        while self.is_p(".") && matches!(self.peek_at(1), Tok::Ident(_)) {
            self.bump();
            let (m, _) = self.ident()?;
            name.push('.');
            name.push_str(&m);
        }
        let args = if self.is_p("(") { self.args()? } else { vec![] };
        Ok(ActionRef {
            annos,
            name,
            args,
            span,
        })
    }

    pub fn type_ref(&mut self) -> PResult<TypeRef> {
        let base = self.base_type()?;
        if self.is_p("[") {
            self.bump();
            let n = self.expr()?;
            self.expect_p("]")?;
            return Ok(TypeRef::Stack(Box::new(base), Box::new(n)));
        }
        Ok(base)
    }

    fn width_arg(&mut self) -> PResult<Box<Expr>> {
        self.expect_p("<")?;
        let e = if let Tok::Int(..) = self.peek() {
            let t = self.bump();
            let Tok::Int(v, w) = t.tok else {
                unreachable!()
            };
            Expr {
                kind: ExprKind::Int(v, w),
                span: t.span,
            }
        } else if self.eat_p("(") {
            let e = self.expr()?;
            self.expect_p(")")?;
            e
        } else {
            let (n, s) = self.ident()?;
            Expr {
                kind: ExprKind::Name(n),
                span: s,
            }
        };
        self.expect_p(">")?;
        Ok(Box::new(e))
    }

    fn base_type(&mut self) -> PResult<TypeRef> {
        let (n, sp) = match self.peek().clone() {
            Tok::Ident(n) => (n, self.span()),
            Tok::Punct(".") => {
                self.bump();
                return self.base_type();
            }
            _ => return Err(self.unexpected("a type")),
        };
        match n.as_str() {
            "bit" | "int" | "varbit" => {
                self.bump();
                let w = if self.is_p("<") {
                    self.width_arg()?
                } else if n == "bit" {
                    Box::new(Expr {
                        kind: ExprKind::Int(1, None),
                        span: sp,
                    })
                } else if n == "int" {
                    return Ok(TypeRef::Named("int".into(), vec![], sp));
                } else {
                    return Err(self.unexpected("'<'"));
                };
                Ok(match n.as_str() {
                    "bit" => TypeRef::Bit(w),
                    "int" => TypeRef::Int(w),
                    _ => TypeRef::Varbit(w),
                })
            }
            "bool" => {
                self.bump();
                Ok(TypeRef::Bool)
            }
            "error" => {
                self.bump();
                Ok(TypeRef::Error)
            }
            "string" => {
                self.bump();
                Ok(TypeRef::Str)
            }
            "void" => {
                self.bump();
                Ok(TypeRef::Void)
            }
            "_" => {
                self.bump();
                Ok(TypeRef::DontCare)
            }
            "tuple" | "list" => {
                self.bump();
                self.expect_p("<")?;
                let mut v = vec![];
                while !self.is_p(">") {
                    v.push(self.type_ref()?);
                    if !self.eat_p(",") {
                        break;
                    }
                }
                self.expect_p(">")?;
                Ok(TypeRef::Tuple(v))
            }
            _ => {
                if KEYWORDS.contains(&n.as_str()) && n != "key" && n != "entries" && n != "actions"
                {
                    return Err(self.unexpected("a type"));
                }
                self.bump();
                let mut args = vec![];
                if self.is_p("<") {
                    self.bump();
                    while !self.is_p(">") {
                        args.push(self.type_ref()?);
                        if !self.eat_p(",") {
                            break;
                        }
                    }
                    self.expect_p(">")?;
                }
                Ok(TypeRef::Named(n, args, sp))
            }
        }
    }

    fn block(&mut self) -> PResult<Stmt> {
        let s = self.expect_p("{")?;
        let mut v = vec![];
        while !self.is_p("}") && !self.at_eof() {
            v.push(self.stmt()?);
        }
        self.expect_p("}")?;
        Ok(Stmt {
            kind: StmtKind::Block(v),
            span: s,
        })
    }

    fn is_decl_start(&self) -> bool {
        match self.peek() {
            Tok::Ident(n) => {
                let builtin = matches!(n.as_str(), "bit" | "int" | "varbit" | "bool" | "tuple");
                if builtin {
                    return true;
                }
                if !self.type_names.contains(n) {
                    return false;
                }
                matches!(
                    self.peek_at(1),
                    Tok::Ident(_) | Tok::Punct("<") | Tok::Punct("[")
                ) && !matches!(self.peek_at(1), Tok::Punct("[") if !self.stack_decl_lookahead())
            }
            _ => false,
        }
    }

    fn stack_decl_lookahead(&self) -> bool {
        // T[n] name;
        let mut i = self.pos + 2;
        let mut d = 1;
        while i < self.toks.len() && d > 0 {
            match self.toks[i].tok {
                Tok::Punct("[") => d += 1,
                Tok::Punct("]") => d -= 1,
                Tok::Eof => return false,
                _ => {}
            }
            i += 1;
        }
        matches!(self.toks.get(i).map(|t| &t.tok), Some(Tok::Ident(_)))
    }

    pub fn stmt(&mut self) -> PResult<Stmt> {
        self.depth += 1;
        if self.depth > 200 {
            self.depth -= 1;
            return Err(Error::new(self.span(), "statement nesting too deep"));
        }
        let r = self.stmt_inner();
        self.depth -= 1;
        r
    }

    fn stmt_inner(&mut self) -> PResult<Stmt> {
        let sp = self.span();
        let annos = if self.is_p("@") {
            self.annotations()?
        } else {
            vec![]
        };
        if self.is_p("{") {
            return self.block();
        }
        if self.eat_p(";") {
            return Ok(Stmt {
                kind: StmtKind::Empty,
                span: sp,
            });
        }
        if let Tok::Ident(k) = self.peek().clone() {
            match k.as_str() {
                "if" => {
                    self.bump();
                    self.expect_p("(")?;
                    let c = self.expr()?;
                    self.expect_p(")")?;
                    let t = self.stmt()?;
                    let e = if self.eat_kw("else") {
                        Some(Box::new(self.stmt()?))
                    } else {
                        None
                    };
                    return Ok(Stmt {
                        kind: StmtKind::If(c, Box::new(t), e),
                        span: sp,
                    });
                }
                "exit" => {
                    self.bump();
                    self.expect_p(";")?;
                    return Ok(Stmt {
                        kind: StmtKind::Exit,
                        span: sp,
                    });
                }
                "return" => {
                    self.bump();
                    let v = if self.is_p(";") {
                        None
                    } else {
                        Some(self.expr()?)
                    };
                    self.expect_p(";")?;
                    return Ok(Stmt {
                        kind: StmtKind::Return(v),
                        span: sp,
                    });
                }
                "switch" => {
                    self.bump();
                    self.expect_p("(")?;
                    let e = self.expr()?;
                    self.expect_p(")")?;
                    self.expect_p("{")?;
                    let mut cases = vec![];
                    while !self.is_p("}") && !self.at_eof() {
                        let label = if self.is_kw("default") {
                            let s = self.bump().span;
                            Expr {
                                kind: ExprKind::Default,
                                span: s,
                            }
                        } else {
                            self.expr()?
                        };
                        self.expect_p(":")?;
                        let body = if self.is_p("{") {
                            Some(self.block()?)
                        } else {
                            None
                        };
                        cases.push(SwitchCase { label, body });
                    }
                    self.expect_p("}")?;
                    return Ok(Stmt {
                        kind: StmtKind::Switch(e, cases),
                        span: sp,
                    });
                }
                "const" => {
                    self.bump();
                    let ty = self.type_ref()?;
                    let (n, ns) = self.ident()?;
                    self.expect_p("=")?;
                    let v = self.expr()?;
                    self.expect_p(";")?;
                    return Ok(Stmt {
                        kind: StmtKind::Const(ty, n, v),
                        span: ns,
                    });
                }
                _ => {}
            }
        }
        if self.is_decl_start() {
            let ty = self.type_ref()?;
            if self.is_p("(") {
                let args = self.args()?;
                let (name, nspan) = self.name()?;
                self.expect_p(";")?;
                return Ok(Stmt {
                    kind: StmtKind::Inst(Instance {
                        annos,
                        ty,
                        args,
                        name,
                        span: nspan,
                    }),
                    span: sp,
                });
            }
            let (n, ns) = self.name()?;
            let init = if self.eat_p("=") {
                Some(self.expr()?)
            } else {
                None
            };
            self.expect_p(";")?;
            return Ok(Stmt {
                kind: StmtKind::Var(annos, ty, n, init),
                span: ns,
            });
        }
        let lhs = self.expr()?;
        if self.eat_p("=") {
            let rhs = self.expr()?;
            let end = rhs.span;
            self.expect_p(";")?;
            return Ok(Stmt {
                kind: StmtKind::Assign(lhs, rhs),
                span: sp.to(end),
            });
        }
        if !matches!(lhs.kind, ExprKind::Call(..)) {
            if self.is_p(";") {
                return Err(Error::new(
                    lhs.span,
                    "expression is not a statement (expected a call or an assignment)",
                ));
            }
            return Err(self.unexpected("'=' or ';'"));
        }
        self.expect_p(";")?;
        let end = lhs.span;
        Ok(Stmt {
            kind: StmtKind::Call(lhs),
            span: sp.to(end),
        })
    }

    // ---------------- expressions ----------------

    pub fn expr(&mut self) -> PResult<Expr> {
        self.depth += 1;
        if self.depth > 200 {
            self.depth -= 1;
            return Err(Error::new(self.span(), "expression nesting too deep"));
        }
        let r = self.ternary();
        self.depth -= 1;
        r
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let c = self.binary(0)?;
        if self.eat_p("?") {
            let a = self.expr()?;
            self.expect_p(":")?;
            let b = self.expr()?;
            let sp = c.span.to(b.span);
            return Ok(Expr {
                kind: ExprKind::Ternary(Box::new(c), Box::new(a), Box::new(b)),
                span: sp,
            });
        }
        Ok(c)
    }

    /// Current binary operator (handles `>>` and `>=` made of joined tokens).
    fn peek_binop(&self) -> Option<(&'static str, usize)> {
        match self.peek() {
            Tok::Punct(">") => {
                let t = &self.toks[self.pos];
                if t.joined {
                    match self.peek_at(1) {
                        Tok::Punct(">") => return Some((">>", 2)),
                        Tok::Punct("=") if !matches!(self.peek_at(2), Tok::Punct("=")) => {
                            return Some((">=", 2))
                        }
                        Tok::Punct(">=") => return None,
                        _ => {}
                    }
                }
                Some((">", 1))
            }
            Tok::Punct(p) => Some((p, 1)),
            _ => None,
        }
    }

    fn binary(&mut self, level: usize) -> PResult<Expr> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["==", "!="],
            &["<", ">", "<=", ">="],
            &["|"],
            &["^"],
            &["&"],
            &["<<", ">>"],
            &["++", "+", "-", "|+|", "|-|"],
            &["*", "/", "%"],
        ];
        if level >= LEVELS.len() {
            return self.unary();
        }
        let mut l = self.binary(level + 1)?;
        while let Some((op, n)) = self.peek_binop() {
            if !LEVELS[level].contains(&op) {
                break;
            }
            for _ in 0..n {
                self.bump();
            }
            let r = self.binary(level + 1)?;
            let sp = l.span.to(r.span);
            let op: &'static str = LEVELS[level].iter().find(|x| **x == op).unwrap();
            l = Expr {
                kind: ExprKind::Binary(op, Box::new(l), Box::new(r)),
                span: sp,
            };
        }
        Ok(l)
    }

    fn unary(&mut self) -> PResult<Expr> {
        self.depth += 1;
        if self.depth > 300 {
            self.depth -= 1;
            return Err(Error::new(self.span(), "expression nesting too deep"));
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> PResult<Expr> {
        let sp = self.span();
        for op in ["!", "~", "-", "+"] {
            if self.is_p(op) {
                self.bump();
                let e = self.unary()?;
                let s = sp.to(e.span);
                let op: &'static str = match op {
                    "!" => "!",
                    "~" => "~",
                    "-" => "-",
                    _ => "+",
                };
                return Ok(Expr {
                    kind: ExprKind::Unary(op, Box::new(e)),
                    span: s,
                });
            }
        }
        // cast?
        if self.is_p("(") && self.is_cast() {
            self.bump();
            let ty = self.type_ref()?;
            self.expect_p(")")?;
            let e = self.unary()?;
            let s = sp.to(e.span);
            return Ok(Expr {
                kind: ExprKind::Cast(ty, Box::new(e)),
                span: s,
            });
        }
        let prim = self.primary()?;
        self.postfix(prim)
    }

    fn is_cast(&self) -> bool {
        match self.peek_at(1) {
            Tok::Ident(n) => {
                if matches!(n.as_str(), "bit" | "int" | "varbit" | "bool") {
                    return true;
                }
                if self.type_names.contains(n) {
                    // (T) expr  — T followed by ')' or '<'
                    return matches!(self.peek_at(2), Tok::Punct(")") | Tok::Punct("<"));
                }
                false
            }
            _ => false,
        }
    }

    fn primary(&mut self) -> PResult<Expr> {
        let sp = self.span();
        match self.peek().clone() {
            Tok::Int(v, w) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Int(v, w),
                    span: sp,
                })
            }
            Tok::Str(s) => {
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Str(s),
                    span: sp,
                })
            }
            Tok::Punct("(") => {
                self.bump();
                let e = self.expr()?;
                self.expect_p(")")?;
                Ok(e)
            }
            Tok::Punct("{") => {
                self.bump();
                let mut v = vec![];
                while !self.is_p("}") {
                    let name = if matches!(self.peek(), Tok::Ident(_))
                        && matches!(self.peek_at(1), Tok::Punct("="))
                        && !matches!(self.peek_at(2), Tok::Punct("="))
                    {
                        let (n, _) = self.ident()?;
                        self.bump();
                        Some(n)
                    } else {
                        None
                    };
                    v.push((name, self.expr()?));
                    if !self.eat_p(",") {
                        break;
                    }
                }
                let end = self.expect_p("}")?;
                Ok(Expr {
                    kind: ExprKind::List(v),
                    span: sp.to(end),
                })
            }
            Tok::Punct(".") => {
                self.bump();
                let (n, s) = self.ident()?;
                Ok(Expr {
                    kind: ExprKind::Name(n),
                    span: sp.to(s),
                })
            }
            Tok::Ident(n) => {
                match n.as_str() {
                    "true" => {
                        self.bump();
                        return Ok(Expr {
                            kind: ExprKind::Bool(true),
                            span: sp,
                        });
                    }
                    "false" => {
                        self.bump();
                        return Ok(Expr {
                            kind: ExprKind::Bool(false),
                            span: sp,
                        });
                    }
                    "default" | "_" => {
                        self.bump();
                        return Ok(Expr {
                            kind: ExprKind::Default,
                            span: sp,
                        });
                    }
                    "bit" | "int" | "varbit" | "bool" => {
                        let t = self.type_ref()?;
                        return Ok(Expr {
                            kind: ExprKind::TypeExpr(t),
                            span: sp,
                        });
                    }
                    _ => {}
                }
                if KEYWORDS.contains(&n.as_str())
                    && !matches!(
                        n.as_str(),
                        "error" | "key" | "entries" | "actions" | "apply" | "list" | "type"
                    )
                {
                    return Err(self.unexpected("an expression"));
                }
                self.bump();
                Ok(Expr {
                    kind: ExprKind::Name(n),
                    span: sp,
                })
            }
            _ => Err(self.unexpected("an expression")),
        }
    }

    fn postfix(&mut self, mut e: Expr) -> PResult<Expr> {
        loop {
            if self.is_p(".") {
                self.bump();
                let (m, ms) = self.name()?;
                let sp = e.span.to(ms);
                e = Expr {
                    kind: ExprKind::Member(Box::new(e), m),
                    span: sp,
                };
            } else if self.is_p("[") {
                self.bump();
                let a = self.expr()?;
                if self.eat_p(":") {
                    let b = self.expr()?;
                    let end = self.expect_p("]")?;
                    let sp = e.span.to(end);
                    e = Expr {
                        kind: ExprKind::Slice(Box::new(e), Box::new(a), Box::new(b)),
                        span: sp,
                    };
                } else {
                    let end = self.expect_p("]")?;
                    let sp = e.span.to(end);
                    e = Expr {
                        kind: ExprKind::Index(Box::new(e), Box::new(a)),
                        span: sp,
                    };
                }
            } else if self.is_p("(") {
                let args = self.args()?;
                let sp = e.span.to(self.prev_span());
                e = Expr {
                    kind: ExprKind::Call(Box::new(e), vec![], args),
                    span: sp,
                };
            } else if self.is_p("<") && matches!(e.kind, ExprKind::Name(_) | ExprKind::Member(..)) {
                // explicit type arguments: f<T>(...)
                let save = self.pos;
                let errs = self.sink.errors.len();
                match self.try_type_args() {
                    Some(tas) if self.is_p("(") => {
                        let args = self.args()?;
                        let sp = e.span.to(self.prev_span());
                        e = Expr {
                            kind: ExprKind::Call(Box::new(e), tas, args),
                            span: sp,
                        };
                    }
                    _ => {
                        self.pos = save;
                        self.sink.errors.truncate(errs);
                        return Ok(e);
                    }
                }
            } else {
                return Ok(e);
            }
        }
    }

    fn try_type_args(&mut self) -> Option<Vec<TypeRef>> {
        if !self.eat_p("<") {
            return None;
        }
        let mut v = vec![];
        loop {
            match self.peek() {
                Tok::Ident(n)
                    if matches!(n.as_str(), "bit" | "int" | "varbit" | "bool" | "tuple")
                        || self.type_names.contains(n) => {}
                _ => return None,
            }
            v.push(self.type_ref().ok()?);
            if !self.eat_p(",") {
                break;
            }
        }
        if self.eat_p(">") {
            Some(v)
        } else {
            None
        }
    }
}
