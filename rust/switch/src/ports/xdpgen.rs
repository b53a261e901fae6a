//! In-kernel packet generator for benchmarks: an XDP program that returns XDP_TX, run
//! with BPF_PROG_TEST_RUN in "live frames" mode (Linux ≥ 5.18). The kernel builds the
//! frames once from a template (page pool, no skb) and transmits each one out of the
//! given interface through its ndo_xdp_xmit; on a veth that puts xdp_frames straight into
//! the peer's receive ring. This offers several Mpps from one core where AF_PACKET
//! (one skb and one copy per frame, in a syscall) stays far below 1 Mpps.
//!
//! The peer veth only accepts xdp_frames while its NAPI is on: it has an XDP program
//! (our switch's AF_XDP ports attach one) or GRO enabled (`ethtool -K PEER gro on`).
//! Frames the peer refuses are counted by the kernel as `xdp_xmit_errors` in
//! `ethtool -S IFACE`; `xdp_xmit` there counts the accepted ones (the offered load).
//!
//! Also: an XDP_DROP program to attach as a cheap sink (`attach_drop`).

use crate::bpf::{attach_xdp, bpf, insn, load_xdp, put32, put64, BPF_XDP};

use crate::bpf::BPF_PROG_TEST_RUN;
const BPF_F_TEST_XDP_LIVE_FRAMES: u32 = 1 << 1;
const XDP_DROP: i32 = 1;
const XDP_TX: i32 = 3;
/// frames per batch inside the kernel (its maximum is 256)
const KBATCH: u32 = 256;

/// Loads `r0 = action; exit` as an XDP program; returns its fd.
fn load_const_prog(action: i32, attach_type: u32) -> Result<i32, String> {
    let prog: [u64; 2] = [insn(0xb7, 0, 0, 0, action), insn(0x95, 0, 0, 0, 0)];
    load_xdp(&prog, attach_type).map(|fd| fd.into_raw())
}

/// The generator: one template frame, sent `n` times per `send` call.
pub struct XdpGen {
    prog_fd: i32,
    ifindex: u32,
    frame: Vec<u8>,
}

impl XdpGen {
    pub fn new(iface: &str, frame: &[u8]) -> Result<XdpGen, String> {
        let ifindex =
            super::afpacket::ifindex(iface).map_err(|e| format!("{}: {}", iface, e))? as u32;
        let prog_fd = load_const_prog(XDP_TX, 0)
            .map_err(|e| format!("{}: xdp generator: prog load: {}", iface, e))?;
        Ok(XdpGen {
            prog_fd,
            ifindex,
            frame: frame.to_vec(),
        })
    }

    /// Transmits the frame `n` times (in kernel batches of 256); returns when done.
    pub fn send(&mut self, n: u32) -> Result<(), String> {
        // struct xdp_md { data, data_end, data_meta, ingress_ifindex, rx_queue_index, egress_ifindex }
        let ctx: [u32; 6] = [0, self.frame.len() as u32, 0, self.ifindex, 0, 0];
        let mut a = [0u8; 128];
        put32(&mut a, 0, self.prog_fd as u32);
        put32(&mut a, 8, self.frame.len() as u32);
        put64(&mut a, 16, self.frame.as_ptr() as u64);
        put32(&mut a, 32, n.max(1));
        put32(&mut a, 40, std::mem::size_of_val(&ctx) as u32);
        put64(&mut a, 48, ctx.as_ptr() as u64);
        put32(&mut a, 64, BPF_F_TEST_XDP_LIVE_FRAMES);
        put32(&mut a, 72, KBATCH);
        bpf(BPF_PROG_TEST_RUN, &mut a).map(|_| ()).map_err(|e| {
            format!(
                "xdp generator: BPF_PROG_TEST_RUN (live frames; needs Linux >= 5.18): {}",
                e
            )
        })
    }
}

impl Drop for XdpGen {
    fn drop(&mut self) {
        unsafe { libc::close(self.prog_fd) };
    }
}

/// Attaches an XDP_DROP program to `iface` (native mode where the driver has it) and
/// returns the link fd: the program stays attached until the fd is closed (or the
/// process exits). Dropped frames show as `xdp_drops` in `ethtool -S IFACE` on veth.
pub fn attach_drop(iface: &str) -> Result<i32, String> {
    let ifindex = super::afpacket::ifindex(iface).map_err(|e| format!("{}: {}", iface, e))? as u32;
    let prog_fd = load_const_prog(XDP_DROP, BPF_XDP)
        .map_err(|e| format!("{}: xdp sink: prog load: {}", iface, e))?;
    let r = attach_xdp(prog_fd, ifindex).map_err(|e| format!("{}: xdp sink: attach: {}", iface, e));
    unsafe { libc::close(prog_fd) };
    r
}
