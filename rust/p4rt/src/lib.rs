//! sdnperf-p4rt: a P4Runtime (gRPC) server for the sdnperf P4 switch.

pub mod proto {
    pub mod google {
        pub mod rpc {
            include!(concat!(env!("OUT_DIR"), "/google.rpc.rs"));
        }
    }
    pub mod p4 {
        pub mod v1 {
            include!(concat!(env!("OUT_DIR"), "/p4.v1.rs"));
        }
        pub mod config {
            pub mod v1 {
                include!(concat!(env!("OUT_DIR"), "/p4.config.v1.rs"));
            }
        }
    }
}

pub mod device;
pub mod dp;
pub mod pipe;
pub mod server;
