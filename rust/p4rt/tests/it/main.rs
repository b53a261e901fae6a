//! The P4Runtime server's tests as one test binary (the library keeps no unit tests: each
//! test binary links the switch, the compiler and the gRPC stack with thin LTO under
//! `--release`, and the library's own harness compiled the crate a second time for five
//! tests). Run one file's tests by its module name:
//! `cargo test --release -p sdnperf-p4rt --test it translate::`.

mod members;
mod meter_units;
mod translate;
