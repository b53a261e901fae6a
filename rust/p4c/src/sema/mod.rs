//! The semantic stage, between the parser and lowering: one pass over every
//! declaration that reports each error a program valid for p4c cannot have (names,
//! types, constants, directions, the v1model structure). Lowering runs only on a
//! program this stage accepted, and refuses only what BMv2 cannot run.
//!
//! `types` builds the type environment (and is used by lowering for widths and
//! constant folding), `structure` checks `main = V1Switch(...)` and its blocks and the names
//! declared inside parsers and controls (states, actions, tables),
//! `directions` checks writes to read-only parameters, `instances` the v1model blocks'
//! parameter types and control instances' constructor arguments, `tables` what every
//! table attaches and its action data widths, `parsers` every parser's value sets,
//! `bodies` the names and operand types in every function and action body, called or not,
//! `exprs` the type of every expression there (operator and cast type errors;
//! `exprs::type_of` for other passes), `calls` the argument counts and types of the
//! call statements there (extern functions and methods, parser and control invocations),
//! `constants` the compile-time constants p4c's front end requires there (local
//! constants, slice bounds, stack counts, field lists, default action data).

pub mod bodies;
pub mod calls;
pub mod constants;
pub mod directions;
pub mod exprs;
pub mod instances;
pub mod parsers;
pub mod structure;
pub mod tables;
pub mod types;

use crate::ast::{Decl, Program};
use crate::diag::Sink;
use types::TypeEnv;

/// A program that passed the semantic checks, with what they computed.
pub struct Checked<'a> {
    pub prog: &'a Program,
    pub env: TypeEnv,
    /// The six blocks of `main = V1Switch(...)`, in order; `None` when the program has
    /// no `main` (or errors were reported).
    pub blocks: Option<Vec<&'a Decl>>,
}

/// Checks `prog` (parsed from `text`), reporting into `sink`; the caller stops when `sink` has errors.
pub fn check<'a>(prog: &'a Program, text: &str, sink: &mut Sink) -> Checked<'a> {
    let mut errs = vec![];
    let mut env = TypeEnv::build(prog, &mut errs);
    env.other_constants(prog, &mut errs);
    for e in errs {
        sink.push(e);
    }
    let blocks = structure::v1switch(prog, sink);
    structure::table_match_kinds(prog, &env.match_kinds, sink);
    structure::local_names(prog, sink);
    structure::overloads(prog, sink);
    structure::table_action_names(prog, text, sink);
    structure::table_entry_keys(prog, sink);
    structure::instance_arguments(prog, sink);
    structure::table_property_shapes(prog, sink);
    if let Some(b) = &blocks {
        instances::block_params(b, &env, sink);
    }
    instances::control_ctor_args(prog, &env, sink);
    tables::attachments(prog, sink);
    tables::action_data_widths(prog, &env, sink);
    tables::key_types(prog, &env, sink);
    parsers::value_set_types(prog, &env, sink);
    for e in directions::check(prog) {
        sink.push(e);
    }
    bodies::check(prog, &env, sink);
    exprs::check(prog, &env, sink);
    calls::check(prog, &env, sink);
    constants::check(prog, &env, text, sink);
    Checked { prog, env, blocks }
}
