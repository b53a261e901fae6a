//! sdnperf-probe: a controller benchmark load generator.
//!
//! Layout (two southbound protocols, one engine and one report):
//! - `config`: the protocol-independent load schedule (modes, windows, counts) and its checks;
//! - `cli`: the command line (clap) that fills a `config::Config`;
//! - `hist`, `report`: RTT histogram and the JSON output (schema in README.md), shared;
//! - `engine`: the load engine (`Flight`, timeline) and the OpenFlow switches' event loop;
//! - `of13`, `frame`: OpenFlow 1.3 encoding; the Ethernet/IPv4/TCP frame packet-ins carry;
//! - `echo`: our OpenFlow echo controller (measures the probe's ceiling);
//! - `p4rt`: the P4Runtime mode: emulated devices (gRPC servers the controller dials) that
//!   drive the same `engine::Flight`s and produce the same `engine::SwResult`s, and a
//!   P4Runtime echo controller. `report` and the Python side serve both protocols.

pub mod cli;
pub mod config;
pub mod echo;
pub mod engine;
pub mod frame;
pub mod hist;
pub mod of13;
pub mod p4rt;
pub mod report;
