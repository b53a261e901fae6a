//! Packet I/O back ends. `memory` ports are what the STF runner uses (see `stf`);
//! `afpacket` binds Linux interfaces.

pub mod afpacket;
