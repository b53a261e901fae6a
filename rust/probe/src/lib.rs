//! sdnperf-probe: a controller benchmark load generator.
//!
//! Layout, so a second southbound protocol (P4Runtime) can be added beside OpenFlow:
//! - `config`: the protocol-independent load schedule (modes, windows, counts) + CLI parsing;
//! - `hist`, `report`: RTT histogram and the JSON output (schema in README.md), shared;
//! - `of13` + `engine`: OpenFlow 1.3 encoding and the emulated-switch event loop;
//! - `echo`: our echo controller (measures the probe's ceiling).
//! A P4Runtime mode adds `p4rt` (gRPC servers the controller dials) producing the same
//! `engine::SwResult`s, so `report` and the Python side stay unchanged.

pub mod config;
pub mod echo;
pub mod engine;
pub mod frame;
pub mod hist;
pub mod of13;
pub mod report;
