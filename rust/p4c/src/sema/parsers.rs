//! Declarations inside every parser, reached from `main` or not (lowering's
//! `lower::parser` sees only the parsers `main` runs): a `value_set`'s element type is
//! `bit<N>` or a struct of `bit<N>` fields (what a select key is matched against).

use super::types::{Type, TypeEnv};
use crate::ast::*;
use crate::diag::Sink;

/// Every parser's value sets have an element type of a known, non-zero width (a
/// struct's: the sum of its fields', as lowering lays them out).
pub fn value_set_types(prog: &Program, env: &TypeEnv, sink: &mut Sink) {
    for d in &prog.decls {
        let Decl::Parser { locals, .. } = d else {
            continue;
        };
        for l in locals {
            let Local::ValueSet { ty, span, .. } = l else {
                continue;
            };
            // an unresolved type is reported by sema::types
            let Ok(t) = env.resolve(ty) else { continue };
            let w: u32 = match &t {
                Type::Struct(sn) => env
                    .composite(sn)
                    .map(|c| c.fields.iter().map(|f| f.1.width().unwrap_or(0)).sum())
                    .unwrap_or(0),
                t => t.width().unwrap_or(0),
            };
            if w == 0 {
                sink.err(
                    *span,
                    "value_set element type must be bit<N> or a struct of bit<N> fields",
                );
            }
        }
    }
}
