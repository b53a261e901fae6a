//! The compiler's integration tests as one test binary: every file here is a module (each
//! test binary links the whole dependency tree, with thin LTO under `--release`: seven
//! binaries, one per file, were most of the crate's test build on a fresh clone). Run one
//! file's tests by its module name: `cargo test --release -p sdnperf-p4c --test it errors::`.
//!
//! Tests of different modules share one process and run on parallel threads: nothing here
//! changes process-wide state (cli's scratch folders are named by tag and process id).

mod cli;
mod corpus;
mod errors;
mod fuzz_regressions;
mod p4info;
mod speed;
mod widths;
