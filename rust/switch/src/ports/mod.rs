//! Packet I/O back ends. Memory ports are what the STF runner uses (see `stf`);
//! `afpacket` (TPACKET_V2 ring + sendmmsg, offloads via PACKET_VNET_HDR) and `afxdp`
//! (AF_XDP copy mode, for runs with host offloads off) bind Linux interfaces.
use crate::xdpfast::shaper::Slot;

pub mod afpacket;
pub mod afxdp;
pub mod rings;
pub mod xdpgen;

pub use rings::{check_rx_frames, RX_FRAMES_DEFAULT};

use afpacket::AfPacketPort;
use afxdp::AfXdpPort;

pub enum PortIo {
    Packet(AfPacketPort),
    Xdp(AfXdpPort),
}

impl PortIo {
    pub fn name(&self) -> &str {
        match self {
            PortIo::Packet(p) => &p.name,
            PortIo::Xdp(p) => &p.name,
        }
    }
    pub fn fd(&self) -> i32 {
        match self {
            PortIo::Packet(p) => p.fd,
            PortIo::Xdp(p) => p.fd,
        }
    }
    pub fn kind(&self) -> &'static str {
        match self {
            PortIo::Packet(_) => "af_packet",
            PortIo::Xdp(_) => "af_xdp",
        }
    }
    /// True when the port carries virtio_net_hdr (offloaded super-packets).
    pub fn vnet(&self) -> bool {
        matches!(self, PortIo::Packet(p) if p.vnet)
    }
    /// Delivers up to `max` received frames to `f(bytes, vnet_hdr, slot)`; `slot`: the
    /// link slot the XDP fast path claimed for the frame (AF_XDP only, shaper.rs).
    #[inline]
    pub fn rx_burst(
        &mut self,
        max: usize,
        mut f: impl FnMut(&[u8], Option<[u8; 10]>, Option<Slot>),
    ) -> usize {
        match self {
            PortIo::Packet(p) => p.rx_burst(max, |d, v| f(d, v, None)),
            PortIo::Xdp(p) => p.rx_burst(max, f),
        }
    }
    #[inline]
    pub fn queue(
        &mut self,
        hdrs: &[u8],
        payload: &[u8],
        trunc: Option<usize>,
        vnet: Option<[u8; 10]>,
        delta: isize,
    ) {
        match self {
            PortIo::Packet(p) => p.queue(hdrs, payload, trunc, vnet, delta),
            PortIo::Xdp(p) => p.queue(hdrs, payload, trunc),
        }
    }
    pub fn flush(&mut self) {
        match self {
            PortIo::Packet(p) => p.flush(),
            PortIo::Xdp(p) => p.flush(),
        }
    }
    /// (rx, tx, tx_dropped, extra description)
    pub fn counters(&self) -> (u64, u64, u64, String) {
        match self {
            PortIo::Packet(p) => {
                let (_, drops) = p.kernel_stats();
                (
                    p.rx_count,
                    p.tx_count,
                    p.tx_dropped,
                    format!("large via copy path {}, rx ring drops {}", p.copied, drops),
                )
            }
            PortIo::Xdp(p) => {
                let (d, full, empty) = p.kernel_stats();
                (
                    p.rx_count,
                    p.tx_count,
                    p.tx_dropped,
                    format!(
                        "kernel rx dropped {} (rx ring full {}, fill ring empty {})",
                        d, full, empty
                    ),
                )
            }
        }
    }
}
