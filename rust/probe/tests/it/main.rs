//! The probe's integration tests as one test binary: every file here is a module (each
//! test binary links the whole tokio/tonic tree, with thin LTO under `--release`). Run one
//! file's tests by its module name: `cargo test --release -p sdnperf-probe --test it p4runtime::`.
//!
//! Tests of different modules share one process and run on parallel threads (no_alloc
//! counts its own thread's allocations; the fake controllers listen on port 0).

mod misbehaving_controller;
mod no_alloc;
mod p4runtime;
