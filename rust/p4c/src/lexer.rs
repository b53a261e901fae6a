//! Lexer: preprocessed text → tokens with spans.

use crate::diag::{Sink, Span};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    /// Integer literal: value, optional (width, signed).
    Int(u128, Option<(u32, bool)>),
    Str(String),
    Punct(&'static str),
    Eof,
}

#[derive(Clone, Debug)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// True if the next token follows immediately (no whitespace): used to
    /// recognise `>>` and `>=` from separate `>` tokens.
    pub joined: bool,
}

const PUNCTS: &[&str] = &[
    "&&&", "|+|", "|-|", "<<", "<=", ">=", "==", "!=", "&&", "||", "++", "..", "+", "-", "*", "/",
    "%", "&", "|", "^", "~", "!", "<", ">", "=", "?", ":", ";", ",", ".", "(", ")", "{", "}", "[",
    "]", "@",
];

pub fn lex(text: &str, sink: &mut Sink) -> Vec<Token> {
    let b = text.as_bytes();
    let mut toks: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            if let Some(t) = toks.last_mut() {
                t.joined = false;
            }
            i += 1;
            continue;
        }
        let start = i;
        if c.is_ascii_alphabetic() || c == b'_' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            toks.push(Token {
                tok: Tok::Ident(text[start..i].to_string()),
                span: Span::new(start, i),
                joined: true,
            });
            continue;
        }
        if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            let s = &text[start..i];
            match parse_int(s) {
                Ok((v, w)) => toks.push(Token {
                    tok: Tok::Int(v, w),
                    span: Span::new(start, i),
                    joined: true,
                }),
                Err(m) => {
                    sink.err(Span::new(start, i), m);
                    toks.push(Token {
                        tok: Tok::Int(0, None),
                        span: Span::new(start, i),
                        joined: true,
                    });
                }
            }
            continue;
        }
        if c == b'"' {
            i += 1;
            let mut s = String::new();
            let mut closed = false;
            while i < b.len() {
                let ch = b[i];
                if ch == b'"' {
                    closed = true;
                    i += 1;
                    break;
                }
                if ch == b'\n' {
                    break;
                }
                if ch == b'\\' && i + 1 < b.len() {
                    let e = b[i + 1];
                    s.push(match e {
                        b'n' => '\n',
                        b't' => '\t',
                        b'\\' => '\\',
                        b'"' => '"',
                        _ => e as char,
                    });
                    i += 2;
                    continue;
                }
                // copy one UTF-8 char
                let ch_len = utf8_len(ch);
                let end = (i + ch_len).min(b.len());
                s.push_str(&String::from_utf8_lossy(&b[i..end]));
                i = end;
            }
            if !closed {
                sink.err(Span::new(start, i), "unterminated string literal");
            }
            toks.push(Token {
                tok: Tok::Str(s),
                span: Span::new(start, i),
                joined: true,
            });
            continue;
        }
        let mut matched = false;
        for p in PUNCTS {
            if text[i..].starts_with(p) {
                toks.push(Token {
                    tok: Tok::Punct(p),
                    span: Span::new(i, i + p.len()),
                    joined: true,
                });
                i += p.len();
                matched = true;
                break;
            }
        }
        if !matched {
            let ch_len = utf8_len(c);
            let end = (i + ch_len).min(b.len());
            let s = String::from_utf8_lossy(&b[i..end]).into_owned();
            sink.err(Span::new(i, end), format!("unexpected character '{}'", s));
            i = end;
        }
    }
    if let Some(t) = toks.last_mut() {
        t.joined = false;
    }
    toks.push(Token {
        tok: Tok::Eof,
        span: Span::new(text.len(), text.len()),
        joined: false,
    });
    toks
}

fn utf8_len(b: u8) -> usize {
    if b < 0x80 {
        1
    } else if b >= 0xf0 {
        4
    } else if b >= 0xe0 {
        3
    } else if b >= 0xc0 {
        2
    } else {
        1
    }
}

/// Parse an integer literal such as `42`, `0x2A`, `8w255`, `16s-1` (no sign here), `0b1010`.
pub fn parse_int(s: &str) -> Result<(u128, Option<(u32, bool)>), String> {
    let mut width = None;
    let mut body = s;
    if let Some(p) = s.find(['w', 's']) {
        let (w, rest) = s.split_at(p);
        if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) {
            let wv: u32 = w.parse().map_err(|_| format!("invalid width in '{}'", s))?;
            if wv == 0 || wv > 2048 {
                return Err(format!("invalid width {} in integer literal '{}'", wv, s));
            }
            width = Some((wv, rest.starts_with('s')));
            body = &rest[1..];
        }
    }
    let clean: String = body.chars().filter(|&c| c != '_').collect();
    let lower = clean.to_ascii_lowercase();
    let (radix, digits) = if let Some(r) = lower.strip_prefix("0x") {
        (16, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0b") {
        (2, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0o") {
        (8, r.to_string())
    } else if let Some(r) = lower.strip_prefix("0d") {
        (10, r.to_string())
    } else {
        (10, lower.clone())
    };
    if digits.is_empty() {
        return Err(format!("invalid integer literal '{}'", s));
    }
    let v = u128::from_str_radix(&digits, radix).map_err(|e| {
        if e.to_string().contains("too large") {
            format!(
                "integer literal '{}' is too large (at most 128 bits are supported)",
                s
            )
        } else {
            format!("invalid integer literal '{}'", s)
        }
    })?;
    Ok((v, width))
}
