//! sdnperf-p4c: a P4_16 compiler for the v1model architecture.
//!
//! Pipeline, one module per job:
//! `preprocess` (C-like preprocessor, built-in core.p4/v1model.p4) → `lexer` → `parser`
//! (recursive descent, builds `ast`) → `sema` (names, types, widths, constants,
//! directions, the v1model structure: every error a valid program cannot have) →
//! `lower` (flattens the program into the BMv2 IR: header instances, parse states,
//! actions, tables, conditionals) → `emit_bmv2` (JSON) and `emit_p4info` (P4Runtime P4Info).
//! Errors are collected in `diag`.

pub mod ast;
pub mod diag;
pub mod effects;
pub mod emit_bmv2;
pub mod emit_p4info;
pub mod ir;
pub mod lexer;
pub mod lower;
pub mod parser;
pub mod preprocess;
pub mod sema;

pub use diag::{Diagnostic, Diagnostics, Warning};
use std::path::{Path, PathBuf};

/// Compiler options (like a C preprocessor's -D and -I).
#[derive(Clone, Debug, Default)]
pub struct Options {
    pub defines: Vec<(String, String)>,
    pub include_dirs: Vec<PathBuf>,
}

/// Compilation result.
#[derive(Clone, Debug)]
pub struct Output {
    /// BMv2 JSON (as p4c-bm2-ss emits it).
    pub bmv2_json: String,
    /// P4Info in protobuf text format.
    pub p4info_text: String,
    /// P4Info in protobuf binary encoding.
    pub p4info_binary: Vec<u8>,
    /// What compiled but probably not as written (a constant wider than its type).
    pub warnings: Vec<Warning>,
}

/// Compile a file from disk.
pub fn compile_file(path: &Path, opts: &Options) -> Result<Output, Diagnostics> {
    let text = std::fs::read(path).map_err(|e| {
        Diagnostics::single(
            &path.display().to_string(),
            format!("cannot read file: {}", e),
        )
    })?;
    let text = String::from_utf8_lossy(&text).into_owned();
    let mut opts = opts.clone();
    if let Some(dir) = path.parent() {
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        opts.include_dirs.insert(0, dir.to_path_buf());
    }
    compile_source(&path.display().to_string(), &text, &opts)
}

/// Compile source text; `name` is used in diagnostics.
///
/// Runs on a thread with a large stack, and turns an internal panic (a compiler
/// bug) into a diagnostic instead of unwinding into the caller.
pub fn compile_source(name: &str, text: &str, opts: &Options) -> Result<Output, Diagnostics> {
    let (n, t, o) = (name.to_string(), text.to_string(), opts.clone());
    let h = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || compile_source_unguarded(&n, &t, &o));
    match h {
        Ok(h) => match h.join() {
            Ok(r) => r,
            Err(_) => Err(Diagnostics::single(
                name,
                "internal compiler error (please report this program)".into(),
            )),
        },
        Err(_) => compile_source_unguarded(name, text, opts),
    }
}

/// Like [`compile_source`] but on the calling thread and without catching panics
/// (used by the fuzzer).
#[doc(hidden)]
pub fn compile_source_unguarded(
    name: &str,
    text: &str,
    opts: &Options,
) -> Result<Output, Diagnostics> {
    let map = preprocess::preprocess(name, text, opts)?;
    let mut sink = diag::Sink::default();
    let tokens = lexer::lex(&map.text, &mut sink);
    if !sink.errors.is_empty() {
        return Err(sink.resolve(&map));
    }
    let program = parser::parse(tokens, &mut sink);
    if !sink.errors.is_empty() {
        return Err(sink.resolve(&map));
    }
    let checked = sema::check(&program, &map.text, &mut sink);
    if !sink.errors.is_empty() {
        return Err(sink.resolve(&map));
    }
    let ir = lower::lower(checked, &map.text, &mut sink);
    if !sink.errors.is_empty() {
        return Err(sink.resolve(&map));
    }
    let ir = match ir {
        Some(ir) => ir,
        None => {
            return Err(Diagnostics::single(
                name,
                "no `main` package instance (V1Switch) found".into(),
            ))
        }
    };
    let bmv2_json = emit_bmv2::emit(&ir, name);
    let info = emit_p4info::build(&ir);
    Ok(Output {
        bmv2_json,
        p4info_text: info.to_text(),
        p4info_binary: info.to_binary(),
        warnings: sink.resolve_warnings(&map),
    })
}
