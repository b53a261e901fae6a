//! Diagnostics: source positions, error messages with file:line:col, the
//! offending source line and a caret under the column.

use std::fmt;

/// A byte range in the preprocessed text (see [`SourceMap`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Span {
    pub lo: u32,
    pub hi: u32,
}

impl Span {
    pub fn new(lo: usize, hi: usize) -> Span {
        Span {
            lo: lo as u32,
            hi: hi as u32,
        }
    }
    pub fn to(self, other: Span) -> Span {
        Span {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }
}

/// One original source file.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

/// The preprocessed text and, for every output line, the file and line it came from.
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    pub files: Vec<SourceFile>,
    pub text: String,
    /// (file index, 1-based line) for each line of `text`.
    pub origins: Vec<(usize, u32)>,
    line_starts: Vec<usize>,
}

impl SourceMap {
    pub fn new(files: Vec<SourceFile>, text: String, origins: Vec<(usize, u32)>) -> SourceMap {
        let mut line_starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                line_starts.push(i + 1);
            }
        }
        SourceMap {
            files,
            text,
            origins,
            line_starts,
        }
    }

    /// Resolve an offset in the preprocessed text to (file, line, col, source line).
    pub fn locate(&self, off: u32) -> Location {
        let off = (off as usize).min(self.text.len());
        let idx = match self.line_starts.binary_search(&off) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.line_starts.get(idx).copied().unwrap_or(0);
        let out_line: &str = self.text[start..].split('\n').next().unwrap_or("");
        let col = self.text[start..off].chars().count() as u32 + 1;
        let (file, line) = self
            .origins
            .get(idx)
            .copied()
            .unwrap_or((0, idx as u32 + 1));
        let (fname, src_line) = match self.files.get(file) {
            Some(f) => {
                let l = f
                    .text
                    .lines()
                    .nth(line.saturating_sub(1) as usize)
                    .unwrap_or("");
                // If the line was changed by macro expansion, show what the compiler saw.
                let shown = if l.trim_end() == out_line.trim_end() {
                    l
                } else {
                    out_line
                };
                (f.name.clone(), shown.to_string())
            }
            None => ("<unknown>".to_string(), out_line.to_string()),
        };
        Location {
            file: fname,
            line,
            col,
            source_line: src_line.trim_end_matches('\r').to_string(),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub file: String,
    pub line: u32,
    pub col: u32,
    pub source_line: String,
}

/// One error, already resolved to a location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub loc: Location,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_as(f, "error")
    }
}

/// A diagnostic that does not stop the compilation: the program means something definite
/// (e.g. a constant truncated to its type's width), but probably not what was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning(pub Diagnostic);

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.write_as(f, "warning")
    }
}

impl Diagnostic {
    /// `file:line:col: KIND: message`, the source line and a caret under the column.
    fn write_as(&self, f: &mut fmt::Formatter<'_>, kind: &str) -> fmt::Result {
        writeln!(
            f,
            "{}:{}:{}: {}: {}",
            self.loc.file, self.loc.line, self.loc.col, kind, self.message
        )?;
        // Very long lines (e.g. after macro expansion) are shown around the column.
        let chars: Vec<char> = self.loc.source_line.chars().collect();
        let col = (self.loc.col as usize).saturating_sub(1);
        let (start, prefix) = if chars.len() > 200 && col > 100 {
            (col - 100, "...")
        } else {
            (0, "")
        };
        let end = (start + 200).min(chars.len());
        let shown: String = chars[start.min(end)..end].iter().collect();
        let suffix = if end < chars.len() { "..." } else { "" };
        writeln!(f, "{}{}{}", prefix, shown, suffix)?;
        let mut pad = " ".repeat(prefix.len());
        for (i, c) in chars[start.min(end)..].iter().enumerate() {
            if start + i >= col {
                break;
            }
            pad.push(if *c == '\t' { '\t' } else { ' ' });
        }
        write!(f, "{}^", pad)
    }
}

/// All errors of one compilation. Display prints one block per error.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics {
    pub errors: Vec<Diagnostic>,
}

impl Diagnostics {
    pub fn is_empty(&self) -> bool {
        self.errors.is_empty()
    }
    pub fn single(file: &str, message: String) -> Diagnostics {
        Diagnostics {
            errors: vec![Diagnostic {
                loc: Location {
                    file: file.to_string(),
                    line: 0,
                    col: 0,
                    source_line: String::new(),
                },
                message,
            }],
        }
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            if e.loc.line == 0 {
                write!(f, "{}: error: {}", e.loc.file, e.message)?;
            } else {
                write!(f, "{}", e)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostics {}

/// An unresolved error: span into the preprocessed text plus message.
#[derive(Clone, Debug)]
pub struct Error {
    pub span: Span,
    pub msg: String,
}

impl Error {
    pub fn new(span: Span, msg: impl Into<String>) -> Error {
        Error {
            span,
            msg: msg.into(),
        }
    }
}

pub type PResult<T> = Result<T, Error>;

/// Collects errors and warnings (each deduplicated and capped: inlining lowers one
/// expression once per call site) and resolves them at the end.
#[derive(Default)]
pub struct Sink {
    pub errors: Vec<Error>,
    pub warnings: Vec<Error>,
}

impl Sink {
    pub fn push(&mut self, e: Error) {
        push_new(&mut self.errors, e);
    }
    pub fn err(&mut self, span: Span, msg: impl Into<String>) {
        self.push(Error::new(span, msg));
    }
    pub fn warn(&mut self, span: Span, msg: impl Into<String>) {
        push_new(&mut self.warnings, Error::new(span, msg));
    }
    pub fn resolve(&self, map: &SourceMap) -> Diagnostics {
        Diagnostics {
            errors: located(&self.errors, map),
        }
    }
    pub fn resolve_warnings(&self, map: &SourceMap) -> Vec<Warning> {
        located(&self.warnings, map)
            .into_iter()
            .map(Warning)
            .collect()
    }
}

fn push_new(list: &mut Vec<Error>, e: Error) {
    if list.len() < 50 && !list.iter().any(|x| x.span == e.span && x.msg == e.msg) {
        list.push(e);
    }
}

fn located(list: &[Error], map: &SourceMap) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = list
        .iter()
        .map(|e| Diagnostic {
            loc: map.locate(e.span.lo),
            message: e.msg.clone(),
        })
        .collect();
    out.dedup();
    out
}
