//! sdnperf-p4rt: a P4Runtime (gRPC) server for the sdnperf P4 switch.

/// The generated P4Runtime code lives in its own crate (shared with sdnperf-probe).
pub use sdnperf_p4rt_proto as proto;

pub mod device;
pub mod hooks;
pub mod members;
pub mod meter_units;
pub mod pipe;
pub mod server;
