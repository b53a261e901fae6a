//! sdnperf-switch: a fast P4 software switch running BMv2 JSON programs.
//!
//! Module map (one job each):
//! - `json`     — BMv2 JSON loader, compiles names into indices
//! - `json_shape` — the JSON types of a program's sections, checked first (errors name the JSON path)
//! - `pipeline` — the compiled program (headers, fields, expressions, actions, parser, ...)
//! - `tables`   — match tables (exact / lpm / ternary / range / optional)
//! - `externs`  — registers, counters, meters, hash and checksum algorithms
//! - `exec`     — per-packet execution with v1model semantics
//! - `pre`      — packet replication (multicast groups, mirror sessions)
//! - `switch`   — queues between ingress and egress, recirculation, impairment hook
//! - `impair`   — per-port delay / jitter / loss / rate limit
//! - `ports`    — packet I/O back ends (memory for STF, AF_PACKET for Linux interfaces)
//! - `pcap`     — `--pcap DIR`: per-port capture files of received and sent packets
//! - `stf`      — STF test runner
//! - `cli`      — command-line options both switch binaries share (simple_switch's too)
//! - `control`  — adding/modifying/deleting entries with their direct counters and meters
//! - `control_error` — the control API's typed errors (front ends map them by kind, not text)
//! - `ctl`      — runtime control commands, server and client
//! - `bpf`      — the bpf(2) system call (maps, programs, XDP links, test runs)
//! - `xdpfast`  — XDP fast path: simple programs compiled to eBPF, run in the kernel
// Packets (`Job`s) move between the pool and the queues as boxes: one pointer per move,
// never the whole job.
#![allow(clippy::vec_box)]

pub mod bpf;
pub mod cli;
pub mod control;
pub mod control_error;
pub mod ctl;
pub mod dataplane;
pub mod exec;
pub mod externs;
pub mod impair;
pub mod json;
pub mod json_shape;
pub mod pcap;
pub mod pipeline;
pub mod ports;
pub mod pre;
pub mod stf;
pub mod switch;
pub mod tables;
pub mod wait;
pub mod xdpfast;

/// Loads a program: BMv2 JSON, or P4 source compiled through the p4c crate.
pub fn load_program(path: &str) -> Result<pipeline::Program, String> {
    if path.ends_with(".p4") {
        let json = compile_p4(path)?;
        json::load_str(&json).map_err(|e| format!("{} (compiled): {}", path, e))
    } else {
        json::load_file(path)
    }
}

/// Compiles a P4 file through the p4c crate, returning BMv2 JSON.
pub fn compile_p4(path: &str) -> Result<String, String> {
    compile_p4_impl(path)
}

#[cfg(feature = "p4")]
fn compile_p4_impl(path: &str) -> Result<String, String> {
    p4c::compile_file(std::path::Path::new(path), &p4c::Options::default())
        .map(|o| o.bmv2_json)
        .map_err(|d| format!("{}", d).trim_end().to_string())
}

#[cfg(not(feature = "p4"))]
fn compile_p4_impl(path: &str) -> Result<String, String> {
    Err(format!(
        "{}: built without the `p4` feature; pass BMv2 JSON",
        path
    ))
}
