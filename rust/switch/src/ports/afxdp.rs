//! AF_XDP port (copy mode, queue 0): a 6-instruction XDP program redirects every frame
//! of the interface into our XSK socket; frames are read from the RX ring and sent
//! through the TX ring. Attached through a BPF link, so the program disappears with the
//! process. No libbpf: the program, map and link are made with the bpf(2) syscall.
//!
//! The ports of one process share one such program (`Root`): it finds the socket by the
//! frame's ingress interface and first tail-calls the XDP fast path's program of that
//! interface, if one is set. The kernel's XDP dispatcher waits for an RCU grace period
//! each time a program it has not seen is attached or its last attachment goes (~10 ms
//! each, one after another under the rtnl lock): with a program per port that was a
//! network's 46 ports at start-up, at each pipeline (the fast path's programs) and at
//! tear-down; shared, once. An interface whose index does not fit `ROOT_SLOTS` gets a
//! program of its own, as before.
//!
//! Limits: one RX queue (queue 0; veth has one by default); MTU-sized frames only (no
//! TSO/GSO super-packets: attaching XDP to a veth turns GSO off on its peer), so this
//! back end is for runs with host offloads off.

use crate::bpf::{
    attach_xdp, bpf, insn, load_xdp_any, map_create, map_delete, map_update, put32, put64, Fd,
    BPF_LINK_UPDATE, BPF_MAP_CREATE, BPF_MAP_TYPE_PROG_ARRAY, BPF_MAP_TYPE_XSKMAP,
    BPF_MAP_UPDATE_ELEM,
};
use crate::xdpfast::shaper::{Slot, META_LEN};
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Interface indexes below this use the process's shared program (two maps of this many
/// 8-byte slots: 512 KiB each).
const ROOT_SLOTS: u32 = 1 << 16;

/// The XDP program every AF_XDP port of the process shares, with its two maps keyed by
/// the ingress interface's index: the fast path's program for that interface (a tail
/// call; none: the call falls through) and the interface's socket.
struct Root {
    prog: Fd,
    xskmap: Fd,
    progs: Fd,
}

/// Made on the first port; None inside when it could not be (each port then has its own).
static ROOT: Mutex<Option<Option<Arc<Root>>>> = Mutex::new(None);

impl Root {
    fn shared() -> Option<Arc<Root>> {
        let mut made = ROOT.lock().unwrap_or_else(|e| e.into_inner());
        made.get_or_insert_with(|| Root::new().ok().map(Arc::new))
            .clone()
    }

    fn new() -> Result<Root, String> {
        let xskmap = map_create(BPF_MAP_TYPE_XSKMAP, 4, 4, ROOT_SLOTS, 0)
            .map_err(|e| format!("xskmap: {}", e))?;
        let progs = map_create(BPF_MAP_TYPE_PROG_ARRAY, 4, 4, ROOT_SLOTS, 0)
            .map_err(|e| format!("prog array: {}", e))?;
        let code: [u64; 12] = [
            insn(0xbf, 6, 1, 0, 0),       // r6 = ctx
            insn(0x61, 3, 6, 12, 0),      // r3 = ctx->ingress_ifindex
            insn(0xbf, 1, 6, 0, 0),       // r1 = ctx
            insn(0x18, 2, 1, 0, progs.0), // r2 = progs
            0,
            insn(0x85, 0, 0, 0, 12), // bpf_tail_call(ctx, progs, ifindex): no return if set
            insn(0x61, 2, 6, 12, 0), // r2 = ctx->ingress_ifindex
            insn(0x18, 1, 1, 0, xskmap.0), // r1 = xskmap
            0,
            insn(0xb7, 3, 0, 0, 2),  // r3 = XDP_PASS (no socket)
            insn(0x85, 0, 0, 0, 51), // return bpf_redirect_map(xskmap, ifindex, XDP_PASS)
            insn(0x95, 0, 0, 0, 0),
        ];
        let prog = load_xdp_any(&code)?;
        Ok(Root {
            prog,
            xskmap,
            progs,
        })
    }
}

fn dup(fd: &Fd) -> io::Result<i32> {
    let r = unsafe { libc::fcntl(fd.0, libc::F_DUPFD_CLOEXEC, 0) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

const AF_XDP: i32 = 44;
const SOL_XDP: i32 = 283;
const XDP_MMAP_OFFSETS: i32 = 1;
const XDP_STATISTICS: i32 = 7;
const XDP_MAX_TX_SKB_BUDGET: i32 = 9;
const XDP_RX_RING: i32 = 2;
const XDP_TX_RING: i32 = 3;
const XDP_UMEM_REG: i32 = 4;
const XDP_UMEM_FILL_RING: i32 = 5;
const XDP_UMEM_COMPLETION_RING: i32 = 6;
const XDP_COPY: u16 = 1 << 1;
const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
const XDP_RING_NEED_WAKEUP: u32 = 1;
const PGOFF_RX: i64 = 0;
const PGOFF_TX: i64 = 0x8000_0000;
const PGOFF_FILL: i64 = 0x1_0000_0000;
const PGOFF_COMP: i64 = 0x1_8000_0000;

const FRAME: usize = 2048;
/// Receive side: fill and RX rings of `rx_frames` (default `super::rings::RX_FRAMES_DEFAULT`; the
/// kernel fills them in bursts of its NAPI polls, and a switch descheduled for a few ms on
/// a busy machine must not lose packets), the first `rx_frames` of the UMEM; transmit
/// side: TX and completion rings of TX_FRAMES, the rest.
pub use super::rings::RX_FRAMES_DEFAULT;
/// Transmit frames: the loop flushes at most a batch (64) per port before the kernel
/// copies them out (copy mode sends synchronously), so 1024 leaves room for a burst of
/// batches; the 2 MiB this saves per port are resident UMEM.
const TX_FRAMES: usize = 1024;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RingOff {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct MmapOffsets {
    rx: RingOff,
    tx: RingOff,
    fr: RingOff,
    cr: RingOff,
}

struct Ring {
    map: *mut u8,
    len: usize,
    producer: *const AtomicU32,
    consumer: *const AtomicU32,
    flags: *const AtomicU32,
    desc: *mut u8,
    mask: u32,
}

impl Ring {
    fn map(fd: i32, off: &RingOff, entries: u32, esize: usize, pgoff: i64) -> io::Result<Ring> {
        let len = off.desc as usize + entries as usize * esize;
        let m = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_POPULATE,
                fd,
                pgoff,
            )
        };
        if m == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let b = m as *mut u8;
        unsafe {
            Ok(Ring {
                map: b,
                len,
                producer: b.add(off.producer as usize) as *const AtomicU32,
                consumer: b.add(off.consumer as usize) as *const AtomicU32,
                flags: b.add(off.flags as usize) as *const AtomicU32,
                desc: b.add(off.desc as usize),
                mask: entries - 1,
            })
        }
    }
    fn prod(&self) -> &AtomicU32 {
        unsafe { &*self.producer }
    }
    fn cons(&self) -> &AtomicU32 {
        unsafe { &*self.consumer }
    }
    fn needs_wakeup(&self) -> bool {
        unsafe { (*self.flags).load(Ordering::Acquire) & XDP_RING_NEED_WAKEUP != 0 }
    }
    fn addr_slot(&self, i: u32) -> *mut u64 {
        unsafe { (self.desc as *mut u64).add((i & self.mask) as usize) }
    }
    /// xdp_desc { u64 addr; u32 len; u32 options }
    fn desc_slot(&self, i: u32) -> *mut u8 {
        unsafe { self.desc.add(((i & self.mask) as usize) * 16) }
    }
}

impl Drop for Ring {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.map as *mut libc::c_void, self.len) };
    }
}

pub struct AfXdpPort {
    pub name: String,
    pub fd: i32,
    umem: *mut u8,
    umem_len: usize,
    rx: Ring,
    tx: Ring,
    fill: Ring,
    comp: Ring,
    free_tx: Vec<u64>,
    tx_pending: u32,
    map_fd: i32,
    prog_fd: i32,
    link_fd: i32,
    /// the shared program (`Root`) and this interface's key in its maps, if it uses it
    root: Option<(Arc<Root>, u32)>,
    pub rx_count: u64,
    pub tx_count: u64,
    pub tx_dropped: u64,
}

unsafe impl Send for AfXdpPort {}

impl AfXdpPort {
    pub fn open(name: &str) -> Result<AfXdpPort, String> {
        Self::open_with(name, RX_FRAMES_DEFAULT)
    }

    /// `rx_frames`: receive ring size, a power of two.
    pub fn open_with(name: &str, rx_frames: usize) -> Result<AfXdpPort, String> {
        super::rings::check_rx_frames(name, rx_frames)?;
        let nframes = rx_frames + TX_FRAMES;
        let ctx = |what: &str, e: io::Error| format!("{}: af_xdp: {}: {}", name, what, e);
        let ifindex = super::afpacket::ifindex(name).map_err(|e| ctx("if_nametoindex", e))? as u32;
        let root = if ifindex < ROOT_SLOTS {
            Root::shared()
        } else {
            None
        };
        let (map_fd, prog_fd, key) = match &root {
            Some(r) => {
                let map_fd = dup(&r.xskmap).map_err(|e| ctx("dup", e))?;
                match dup(&r.prog) {
                    Ok(prog_fd) => (map_fd, prog_fd, ifindex),
                    Err(e) => {
                        unsafe { libc::close(map_fd) };
                        return Err(ctx("dup", e));
                    }
                }
            }
            None => {
                let (map_fd, prog_fd) = Self::own_program(name)?;
                (map_fd, prog_fd, 0)
            }
        };
        let close_all = |fds: &[i32]| {
            for &f in fds {
                if f >= 0 {
                    unsafe { libc::close(f) };
                }
            }
        };
        // socket + UMEM + rings
        let fd = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if fd < 0 {
            let e = io::Error::last_os_error();
            close_all(&[map_fd, prog_fd]);
            return Err(ctx("socket", e));
        }
        let fail = |what: &str, e: io::Error| {
            close_all(&[fd, map_fd, prog_fd]);
            ctx(what, e)
        };
        let umem_len = FRAME * nframes;
        let umem = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                umem_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
                0,
            )
        };
        if umem == libc::MAP_FAILED {
            return Err(fail("umem mmap", io::Error::last_os_error()));
        }
        let reg: [u64; 3] = [umem as u64, umem_len as u64, FRAME as u64]; // addr, len, chunk_size | headroom 0
        let r = unsafe {
            libc::setsockopt(
                fd,
                SOL_XDP,
                XDP_UMEM_REG,
                reg.as_ptr() as *const libc::c_void,
                24,
            )
        };
        if r < 0 {
            return Err(fail("XDP_UMEM_REG", io::Error::last_os_error()));
        }
        for (opt, n) in [
            (XDP_UMEM_FILL_RING, rx_frames as u32),
            (XDP_UMEM_COMPLETION_RING, TX_FRAMES as u32),
            (XDP_RX_RING, rx_frames as u32),
            (XDP_TX_RING, TX_FRAMES as u32),
        ] {
            let r = unsafe {
                libc::setsockopt(fd, SOL_XDP, opt, &n as *const u32 as *const libc::c_void, 4)
            };
            if r < 0 {
                return Err(fail("ring size", io::Error::last_os_error()));
            }
        }
        // copy-mode transmit handles at most this many frames per sendto (default 32;
        // settable since Linux 6.17, ignored before): fewer kicks per batch
        let budget = 256u32;
        let _ = unsafe {
            libc::setsockopt(
                fd,
                SOL_XDP,
                XDP_MAX_TX_SKB_BUDGET,
                &budget as *const u32 as *const libc::c_void,
                4,
            )
        };
        let mut off = MmapOffsets::default();
        let mut olen = std::mem::size_of::<MmapOffsets>() as u32;
        let r = unsafe {
            libc::getsockopt(
                fd,
                SOL_XDP,
                XDP_MMAP_OFFSETS,
                &mut off as *mut _ as *mut libc::c_void,
                &mut olen,
            )
        };
        if r < 0 {
            return Err(fail("XDP_MMAP_OFFSETS", io::Error::last_os_error()));
        }
        let rx = Ring::map(fd, &off.rx, rx_frames as u32, 16, PGOFF_RX)
            .map_err(|e| fail("rx ring", e))?;
        let tx = Ring::map(fd, &off.tx, TX_FRAMES as u32, 16, PGOFF_TX)
            .map_err(|e| fail("tx ring", e))?;
        let fill = Ring::map(fd, &off.fr, rx_frames as u32, 8, PGOFF_FILL)
            .map_err(|e| fail("fill ring", e))?;
        let comp = Ring::map(fd, &off.cr, TX_FRAMES as u32, 8, PGOFF_COMP)
            .map_err(|e| fail("completion ring", e))?;
        #[repr(C)]
        struct SockaddrXdp {
            family: u16,
            flags: u16,
            ifindex: u32,
            queue_id: u32,
            shared_umem_fd: u32,
        }
        let sa = SockaddrXdp {
            family: AF_XDP as u16,
            flags: XDP_COPY | XDP_USE_NEED_WAKEUP,
            ifindex,
            queue_id: 0,
            shared_umem_fd: 0,
        };
        // A switch that just exited still holds the queue for a moment: the kernel frees its
        // AF_XDP socket after the process is gone, and until then bind says EBUSY. So a
        // switch started right after another one on the same ports waits for it (2 s at most).
        let t0 = std::time::Instant::now();
        loop {
            let r = unsafe {
                libc::bind(
                    fd,
                    &sa as *const _ as *const libc::sockaddr,
                    std::mem::size_of::<SockaddrXdp>() as u32,
                )
            };
            if r == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EBUSY) || t0.elapsed().as_secs() >= 2 {
                return Err(fail("bind", e));
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // xskmap[key] = socket (key: queue 0 in its own map, the ifindex in the shared one)
        let val = fd as u32;
        let mut a = [0u8; 128];
        put32(&mut a, 0, map_fd as u32);
        put64(&mut a, 8, &key as *const u32 as u64);
        put64(&mut a, 16, &val as *const u32 as u64);
        bpf(BPF_MAP_UPDATE_ELEM, &mut a).map_err(|e| fail("xskmap update", e))?;
        let link_fd =
            attach_xdp(prog_fd, ifindex).map_err(|e| fail("attach (BPF_LINK_CREATE)", e))?;
        let p = AfXdpPort {
            name: name.to_string(),
            fd,
            umem: umem as *mut u8,
            umem_len,
            rx,
            tx,
            fill,
            comp,
            free_tx: (rx_frames..nframes).map(|i| (i * FRAME) as u64).collect(),
            tx_pending: 0,
            map_fd,
            prog_fd,
            link_fd,
            root: root.map(|r| (r, ifindex)),
            rx_count: 0,
            tx_count: 0,
            tx_dropped: 0,
        };
        // the first rx_frames of the UMEM receive
        let n = rx_frames as u32;
        let prod = p.fill.prod().load(Ordering::Relaxed);
        for i in 0..n {
            unsafe { *p.fill.addr_slot(prod + i) = (i as usize * FRAME) as u64 };
        }
        p.fill.prod().store(prod + n, Ordering::Release);
        Ok(p)
    }

    /// The port's own program (every frame into queue 0's socket): an XSKMAP with one
    /// slot and the 6-instruction program reading it. Returns (map fd, program fd).
    fn own_program(name: &str) -> Result<(i32, i32), String> {
        let ctx = |what: &str, e: io::Error| format!("{}: af_xdp: {}: {}", name, what, e);
        // XSKMAP with one slot (queue 0)
        let mut a = [0u8; 128];
        put32(&mut a, 0, BPF_MAP_TYPE_XSKMAP);
        put32(&mut a, 4, 4);
        put32(&mut a, 8, 4);
        put32(&mut a, 12, 1);
        let map_fd = bpf(BPF_MAP_CREATE, &mut a).map_err(|e| ctx("map create", e))?;
        // r2 = ctx->rx_queue_index; r1 = map; r3 = XDP_PASS; return bpf_redirect_map(r1, r2, r3)
        let prog: [u64; 6] = [
            insn(0x61, 2, 1, 16, 0),
            insn(0x18, 1, 1, 0, map_fd),
            0,
            insn(0xb7, 3, 0, 0, 2),
            insn(0x85, 0, 0, 0, 51),
            insn(0x95, 0, 0, 0, 0),
        ];
        match load_xdp_any(&prog) {
            Ok(fd) => Ok((map_fd, fd.into_raw())),
            Err(e) => {
                unsafe { libc::close(map_fd) };
                Err(format!("{}: af_xdp: prog load: {}", name, e))
            }
        }
    }

    pub fn rx_burst(
        &mut self,
        max: usize,
        mut f: impl FnMut(&[u8], Option<[u8; 10]>, Option<Slot>),
    ) -> usize {
        let cons = self.rx.cons().load(Ordering::Relaxed);
        let prod = self.rx.prod().load(Ordering::Acquire);
        let n = (prod.wrapping_sub(cons) as usize).min(max) as u32;
        if n == 0 {
            if self.fill.needs_wakeup() {
                unsafe {
                    libc::recvfrom(
                        self.fd,
                        std::ptr::null_mut(),
                        0,
                        libc::MSG_DONTWAIT,
                        std::ptr::null_mut(),
                        std::ptr::null_mut(),
                    )
                };
            }
            return 0;
        }
        let fprod = self.fill.prod().load(Ordering::Relaxed);
        for i in 0..n {
            let d = self.rx.desc_slot(cons + i);
            let (addr, len) = unsafe {
                (
                    std::ptr::read(d as *const u64),
                    std::ptr::read(d.add(8) as *const u32),
                )
            };
            let a = addr as usize;
            if a + len as usize <= self.umem_len {
                // the fast path's XDP metadata sits just before the frame (kernel copy mode
                // copies it along; shaper.rs)
                let m = META_LEN as usize;
                let slot = (a >= m).then(|| unsafe {
                    Slot::take(std::slice::from_raw_parts_mut(self.umem.add(a - m), m))
                });
                let data = unsafe { std::slice::from_raw_parts(self.umem.add(a), len as usize) };
                f(data, None, slot.flatten());
            }
            unsafe { *self.fill.addr_slot(fprod + i) = addr & !(FRAME as u64 - 1) };
        }
        self.rx.cons().store(cons + n, Ordering::Release);
        self.fill.prod().store(fprod + n, Ordering::Release);
        self.rx_count += n as u64;
        n as usize
    }

    fn reclaim(&mut self) {
        let cons = self.comp.cons().load(Ordering::Relaxed);
        let prod = self.comp.prod().load(Ordering::Acquire);
        let n = prod.wrapping_sub(cons);
        for i in 0..n {
            self.free_tx.push(unsafe { *self.comp.addr_slot(cons + i) });
        }
        if n > 0 {
            self.comp.cons().store(cons + n, Ordering::Release);
        }
    }

    /// Copies one packet into a TX frame (dropped if it does not fit or no frame is free).
    pub fn queue(&mut self, hdrs: &[u8], payload: &[u8], trunc: Option<usize>) {
        let total = hdrs.len() + payload.len();
        let len = trunc.unwrap_or(total).min(total);
        if self.free_tx.is_empty() {
            self.reclaim();
        }
        let tprod = self.tx.prod().load(Ordering::Relaxed);
        let tcons = self.tx.cons().load(Ordering::Acquire);
        if len > FRAME || tprod.wrapping_sub(tcons) >= TX_FRAMES as u32 {
            self.tx_dropped += 1;
            return;
        }
        let Some(addr) = self.free_tx.pop() else {
            self.tx_dropped += 1;
            return;
        };
        unsafe {
            let dst = self.umem.add(addr as usize);
            let h = hdrs.len().min(len);
            std::ptr::copy_nonoverlapping(hdrs.as_ptr(), dst, h);
            std::ptr::copy_nonoverlapping(payload.as_ptr(), dst.add(h), len - h);
            let d = self.tx.desc_slot(tprod);
            std::ptr::write(d as *mut u64, addr);
            std::ptr::write(d.add(8) as *mut u32, len as u32);
            std::ptr::write(d.add(12) as *mut u32, 0);
        }
        self.tx.prod().store(tprod + 1, Ordering::Release);
        self.tx_pending += 1;
        self.tx_count += 1;
    }

    pub fn flush(&mut self) {
        if self.tx_pending > 0 {
            // copy mode transmits on each kick, a limited batch (32) at a time
            let prod = self.tx.prod().load(Ordering::Relaxed);
            for _ in 0..(self.tx_pending / 16 + 4) {
                let r = unsafe {
                    libc::sendto(
                        self.fd,
                        std::ptr::null(),
                        0,
                        libc::MSG_DONTWAIT,
                        std::ptr::null(),
                        0,
                    )
                };
                if self.tx.cons().load(Ordering::Acquire) == prod {
                    break;
                }
                if r < 0 {
                    let e = io::Error::last_os_error().raw_os_error();
                    if e != Some(libc::EAGAIN) && e != Some(libc::EBUSY) && e != Some(libc::ENOBUFS)
                    {
                        break;
                    }
                }
            }
            self.tx_pending = 0;
        } else if self.tx.needs_wakeup() && self.free_tx.len() < TX_FRAMES {
            unsafe {
                libc::sendto(
                    self.fd,
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                )
            };
        }
        self.reclaim();
    }
}

impl AfXdpPort {
    /// Swaps the interface's XDP program for `prog_fd` (the XDP fast path's, which
    /// forwards what it can and redirects the rest into this socket).
    pub fn replace_program(&mut self, prog_fd: i32) -> Result<(), String> {
        if let Some((root, key)) = &self.root {
            // the shared program tail-calls it: nothing attached changes
            if map_update(
                &root.progs,
                &key.to_ne_bytes(),
                &(prog_fd as u32).to_ne_bytes(),
            )
            .is_ok()
            {
                return Ok(());
            }
            // a program the array refuses (another kind): attached instead, as without Root
        }
        self.link_update(prog_fd)
    }

    fn link_update(&mut self, prog_fd: i32) -> Result<(), String> {
        let mut a = [0u8; 128];
        put32(&mut a, 0, self.link_fd as u32);
        put32(&mut a, 4, prog_fd as u32);
        bpf(BPF_LINK_UPDATE, &mut a).map(|_| ()).map_err(|e| {
            format!(
                "{}: af_xdp: replace XDP program (BPF_LINK_UPDATE): {}",
                self.name, e
            )
        })
    }

    /// Puts the port's own program back (every packet to this socket), e.g. when the
    /// fast path cannot run a new program.
    pub fn restore_program(&mut self) -> Result<(), String> {
        self.forget_tail_call();
        let fd = self.prog_fd;
        self.link_update(fd)
    }

    /// The shared program calls no fast-path program for this interface any more.
    fn forget_tail_call(&self) {
        if let Some((root, key)) = &self.root {
            let _ = map_delete(&root.progs, &key.to_ne_bytes());
        }
    }

    /// Kernel counters of the socket: (rx dropped, rx ring full, fill ring empty).
    pub fn kernel_stats(&self) -> (u64, u64, u64) {
        // struct xdp_statistics { rx_dropped, rx_invalid_descs, tx_invalid_descs,
        //   rx_ring_full, rx_fill_ring_empty_descs, tx_ring_empty_descs }
        let mut st = [0u64; 6];
        let mut len = std::mem::size_of_val(&st) as u32;
        let r = unsafe {
            libc::getsockopt(
                self.fd,
                SOL_XDP,
                XDP_STATISTICS,
                st.as_mut_ptr() as *mut libc::c_void,
                &mut len,
            )
        };
        if r < 0 {
            (0, 0, 0)
        } else {
            (st[0], st[3], st[4])
        }
    }
}

impl Drop for AfXdpPort {
    fn drop(&mut self) {
        self.forget_tail_call();
        unsafe {
            libc::close(self.link_fd);
            libc::close(self.fd);
            libc::close(self.prog_fd);
            libc::close(self.map_fd);
            libc::munmap(self.umem as *mut libc::c_void, self.umem_len);
        }
    }
}
