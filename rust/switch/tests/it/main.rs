//! The switch's integration tests as one test binary: every file here is a module (each
//! test binary links the whole dependency tree, with thin LTO under `--release`: one binary per
//! file made the test build the longest step of a fresh clone's `cargo test`). Run one file's tests
//! by its module name: `cargo test --release -p sdnperf-switch --test it xdp_fastpath::`.
//!
//! Tests of different modules now share one process and run on parallel threads: what is
//! process-wide must stay safe for that (no_alloc counts its own thread's allocations;
//! dataplane_epoll alone uses the data-plane loop's process-wide stop flag).

mod common;

mod cli;
mod ctl_server;
mod dataplane_epoll;
mod loader_fuzz;
mod no_alloc;
mod port_impair;
mod recirc_hold;
mod recirc_pace;
mod reference_programs;
mod stf_programs;
mod xdp_fastpath;
