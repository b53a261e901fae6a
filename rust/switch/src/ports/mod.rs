//! Packet I/O back ends. Memory ports are what the STF runner uses (see `stf`);
//! `afpacket` (TPACKET_V2 ring + sendmmsg, offloads via PACKET_VNET_HDR) and `afxdp`
//! (AF_XDP copy mode, for runs with host offloads off) bind Linux interfaces.

pub mod afpacket;
pub mod afxdp;
pub mod xdpgen;

/// Receive ring of a port, in 2 KiB frames, for both back ends (`--rx-frames`). Ring memory
/// is resident for the switch's whole life (the kernel maps every AF_PACKET ring page at
/// mmap; the AF_XDP UMEM is populated), so it is sized by what a port needs, not
/// generously: 2048 frames = 4 MiB = ~2 ms of 64-byte line rate at 1 Mpps, or ~8 ms of
/// MTU-sized TCP at 3 Gbit/s, while the loop drains it every batch. (It was 8192 = 16 MiB
/// per port: an idle 2-port switch held 40 MB resident, twice BMv2's simple_switch.)
/// Benchmarks that want a deeper ring say so (bench/switch's 64-byte runs: 32768).
pub const RX_FRAMES_DEFAULT: usize = 2048;

/// `--rx-frames` is a power of two in this range (the AF_XDP rings require a power of two).
pub fn check_rx_frames(name: &str, rx_frames: usize) -> Result<(), String> {
    if !rx_frames.is_power_of_two() || !(64..=1 << 20).contains(&rx_frames) {
        return Err(format!(
            "{}: rx ring of {} frames (--rx-frames): expected a power of two in 64..=1048576",
            name, rx_frames
        ));
    }
    Ok(())
}

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
    #[inline]
    pub fn rx_burst(&mut self, max: usize, f: impl FnMut(&[u8], Option<[u8; 10]>)) -> usize {
        match self {
            PortIo::Packet(p) => p.rx_burst(max, f),
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
