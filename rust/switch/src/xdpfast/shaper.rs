//! Rate-shaped ports on the XDP fast path: one link clock per egress port, shared by the
//! kernel and the engine.
//!
//! The engine's shaper (impair.rs) is a token bucket kept as one number (GCRA,
//! `impair::gcra`): the link's theoretical arrival time TAT; a packet starts on the link
//! at max(its arrival, TAT - tau), tau = burst / rate (tau = 0: strict pacing), and moves
//! TAT to max(TAT, arrival) + len x 8 / rate. TAT (CLOCK_MONOTONIC ns) lives in a BPF
//! array map, one 128-byte element per port, mapped into the switch's memory
//! (BPF_F_MMAPABLE), so both sides take from the bucket with the same atomic
//! compare-and-swap:
//!
//! - the XDP program, for a packet to a rate-shaped port, claims its start the same way.
//!   start = now (the bucket held tokens) and no packet of the port held by the engine:
//!   forwarded at once (XDP redirect), counted per port. Otherwise the packet goes to the
//!   engine (AF_XDP) carrying its claimed start and arrival in the XDP metadata (`Slot`,
//!   32 bytes before the frame), and the engine sends it at that start. Arrival and
//!   departure are the kernel's, so the queue is exactly the engine's model, timed from
//!   when the packet reached the switch.
//! - the engine claims a slot the same way for any packet it sends on such a port that
//!   carries none (punted for another reason: packet-out, multicast, a lost race).
//! - while the engine holds packets for the port (`held`), or any packet the kernel
//!   handed it for the port has not left yet (`SLOTTED` != `DONE`: still in the
//!   socket's RX ring, or on its way out through the engine's TX), the kernel forwards
//!   nothing to it (FIFO per port: a packet forwarded in the kernel past one still in
//!   the engine arrives before it, and TCP takes the reordering for loss and
//!   retransmits), and every claim takes from the one bucket, so the two together never
//!   send more than rate x time + burst. A slotted packet lost before the engine saw it
//!   (its ring full) would stop the port's fast path for good: the engine stops
//!   waiting for it `LOST_AFTER_NS` after the last punt (`resync`).
//!
//! Delay, jitter, loss, serialisation (netem's rate) and ingress impairment need the
//! engine's delay line and random draws: such ports are `ENGINE` (everything to them
//! goes to the engine). A rate change applies to claims from then on (claims already
//! made keep their times), unlike the engine alone, which re-times its backlog; the
//! study's schedules therefore keep the fast path off (sdnperf/arch/p4_datapath.py).

use crate::bpf::{map_create, Fd, BPF_MAP_TYPE_ARRAY};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes per port in the map (two cache lines; the first holds what every packet reads).
pub const VALUE_SIZE: u32 = 128;
// field offsets in a port's element
/// the bucket's theoretical arrival time (GCRA's TAT, CLOCK_MONOTONIC ns)
pub const TAT: i16 = 0;
pub const RATE: i16 = 8;
pub const MODE: i16 = 16;
pub const HELD: i16 = 24;
pub const XDP_PACKETS: i16 = 32;
pub const XDP_BYTES: i16 = 40;
pub const IN_ENGINE: i16 = 48;
pub const SLOTTED: i16 = 56;
/// the bucket's depth as time at the rate (GCRA's tau, ns)
pub const TAU: i16 = 64;
/// packets handed to the engine with a slot (SLOTTED) that the engine has sent or dropped
pub const DONE: i16 = 72;
/// when the kernel last handed the engine a slotted packet (CLOCK_MONOTONIC ns)
pub const PUNTED_AT: i16 = 80;
/// A slotted packet the engine has not seen this long after the last punt was lost on
/// the way (the socket's ring full): the engine stops waiting for it (`resync`).
pub const LOST_AFTER_NS: u64 = 100_000_000;

/// Egress modes of a port.
pub const FREE: u64 = 0;
pub const SHAPED: u64 = 1;
pub const ENGINE: u64 = 2;

/// XDP metadata a slotted punt carries: MAGIC, arrival, start, egress port (u64 each).
pub const META_LEN: i32 = 32;
pub const MAGIC: u64 = 0x5344_4e50_534c_4f54; // "SDNPSLOT"

const BPF_F_MMAPABLE: u32 = 1 << 10;

/// A packet's claim on a shaped port's link, made by the XDP program (CLOCK_MONOTONIC).
/// `start` 0: the program lost the race for the bucket to another CPU; the engine claims
/// the packet's slot itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub port: u32,
    pub arrived: u64,
    pub start: u64,
}

impl Slot {
    /// The slot in the `META_LEN` bytes before a received frame, if the fast path wrote
    /// one there; the magic is cleared so a stale copy in a reused frame is never read.
    pub fn take(meta: &mut [u8]) -> Option<Slot> {
        if meta.len() < META_LEN as usize {
            return None;
        }
        let at = meta.len() - META_LEN as usize;
        let m = &mut meta[at..];
        let word = |i: usize| u64::from_ne_bytes(m[8 * i..8 * i + 8].try_into().unwrap());
        if word(0) != MAGIC {
            return None;
        }
        let s = Slot {
            arrived: word(1),
            start: word(2),
            port: word(3) as u32,
        };
        m[..8].fill(0);
        Some(s)
    }
}

/// Serialisation time of `len` bytes at `rate_bps` in ns, as the XDP program computes it
/// (and as impair.rs does: truncated).
pub fn serialisation_ns(len: u64, rate_bps: u64) -> u64 {
    (len * 8_000_000_000).checked_div(rate_bps).unwrap_or(0)
}

/// Whether the last punt (`punted_at`) is more than `stale_after` ns before `now`.
pub fn stale(punted_at: u64, now: u64, stale_after: u64) -> bool {
    now.saturating_sub(punted_at) > stale_after
}

/// The claim both sides make on a port's bucket (`impair::gcra`): (start, new TAT).
pub fn claim(tat: u64, now: u64, ser_ns: u64, tau_ns: u64) -> (u64, u64) {
    crate::impair::gcra(tat, now, ser_ns, tau_ns)
}

/// The port modes map, mapped into this process.
pub struct ShaperMap {
    pub fd: Fd,
    base: *mut u8,
    len: usize,
    ports: u32,
}

// the mapping is plain shared memory, used only through atomics
unsafe impl Send for ShaperMap {}
unsafe impl Sync for ShaperMap {}

impl Drop for ShaperMap {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.len) };
    }
}

/// Nanoseconds of CLOCK_MONOTONIC (bpf_ktime_get_ns's clock).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl ShaperMap {
    pub fn new(ports: u32) -> Result<ShaperMap, String> {
        let fd = map_create(BPF_MAP_TYPE_ARRAY, 4, VALUE_SIZE, ports, BPF_F_MMAPABLE)
            .map_err(|e| format!("xdp fast path: shaper map: {}", e))?;
        let page = 4096usize;
        let len = (ports as usize * VALUE_SIZE as usize).div_ceil(page) * page;
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd.0,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(format!(
                "xdp fast path: shaper map mmap: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(ShaperMap {
            fd,
            base: base as *mut u8,
            len,
            ports,
        })
    }

    fn word(&self, port: u32, off: i16) -> Option<&AtomicU64> {
        (port < self.ports).then(|| unsafe {
            &*(self
                .base
                .add(port as usize * VALUE_SIZE as usize + off as usize)
                as *const AtomicU64)
        })
    }

    fn get(&self, port: u32, off: i16) -> u64 {
        self.word(port, off)
            .map(|w| w.load(Ordering::Acquire))
            .unwrap_or(0)
    }

    /// Sets a port's egress mode, rate and bucket depth (tau, ns), and whether its
    /// ingress needs the engine.
    pub fn set_port(&self, port: u32, mode: u64, rate_bps: u64, tau_ns: u64, in_engine: bool) {
        if let (Some(m), Some(r), Some(t), Some(i)) = (
            self.word(port, MODE),
            self.word(port, RATE),
            self.word(port, TAU),
            self.word(port, IN_ENGINE),
        ) {
            r.store(rate_bps, Ordering::Release);
            t.store(tau_ns, Ordering::Release);
            m.store(mode, Ordering::Release);
            i.store(in_engine as u64, Ordering::Release);
        }
    }

    pub fn mode(&self, port: u32) -> u64 {
        self.get(port, MODE)
    }

    /// The engine holds `n` packets for the port (the kernel forwards to it only at 0).
    pub fn set_held(&self, port: u32, n: u64) {
        if let Some(w) = self.word(port, HELD) {
            if w.load(Ordering::Relaxed) != n {
                w.store(n, Ordering::Release);
            }
        }
    }

    /// Claims the link of `port` for `len` bytes at `now` (CLOCK_MONOTONIC): the start.
    pub fn claim(&self, port: u32, now: u64, len: u64) -> u64 {
        let rate = self.get(port, RATE);
        let tau = self.get(port, TAU);
        let Some(busy) = self.word(port, TAT) else {
            return now;
        };
        let ser = serialisation_ns(len, rate);
        let mut old = busy.load(Ordering::Acquire);
        loop {
            let (start, new) = claim(old, now, ser, tau);
            match busy.compare_exchange_weak(old, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return start,
                Err(o) => old = o,
            }
        }
    }

    /// A packet the kernel handed the engine for `port` with a slot has left (sent or
    /// dropped): the kernel may forward to the port again once all have.
    pub fn done(&self, port: u32) {
        if let Some(w) = self.word(port, DONE) {
            w.fetch_add(1, Ordering::AcqRel);
        }
    }

    /// Slotted packets for `port` the engine has not finished (wrapping difference).
    pub fn unfinished(&self, port: u32) -> u64 {
        self.get(port, SLOTTED).wrapping_sub(self.get(port, DONE))
    }

    /// Called when the engine holds nothing for `port` at `now` (CLOCK_MONOTONIC): if
    /// slotted packets are still unfinished long after the last punt (`stale_after`
    /// ns), they were lost before the engine saw them (or counted by an earlier fast
    /// path): stop waiting for them. True if it resynchronised.
    pub fn resync(&self, port: u32, now: u64, stale_after: u64) -> bool {
        let (Some(slotted), Some(done)) = (self.word(port, SLOTTED), self.word(port, DONE)) else {
            return false;
        };
        let s = slotted.load(Ordering::Acquire);
        if s == done.load(Ordering::Acquire) {
            return false;
        }
        if !stale(self.get(port, PUNTED_AT), now, stale_after) {
            return false;
        }
        done.store(s, Ordering::Release);
        true
    }

    /// Packets and bytes the kernel forwarded on `port`, and packets it handed to the
    /// engine with a slot.
    pub fn counters(&self, port: u32) -> (u64, u64, u64) {
        (
            self.get(port, XDP_PACKETS),
            self.get(port, XDP_BYTES),
            self.get(port, SLOTTED),
        )
    }

    pub fn tat(&self, port: u32) -> u64 {
        self.get(port, TAT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_space_packets_at_the_rate() {
        // 1500 B at 100 Mbit/s = 120 us
        assert_eq!(serialisation_ns(1500, 100_000_000), 120_000);
        assert_eq!(serialisation_ns(1500, 0), 0);
        // strict pacing (tau 0): an idle link starts now
        assert_eq!(claim(0, 1_000, 120_000, 0), (1_000, 121_000));
        // a busy one: after the previous packet
        assert_eq!(claim(121_000, 50_000, 120_000, 0), (121_000, 241_000));
        // a bucket of 1600 B (128 us at 100 Mbit/s, Mininet's htb): the second 1500-B
        // packet of a burst still leaves at once, the third waits until TAT - tau
        let tau = serialisation_ns(1600, 100_000_000);
        assert_eq!(claim(121_000, 50_000, 120_000, tau), (50_000, 241_000));
        assert_eq!(claim(241_000, 50_000, 120_000, tau), (113_000, 361_000));
    }

    #[test]
    fn a_punt_is_given_up_only_long_after_it_was_made() {
        let ms = 1_000_000;
        assert!(!stale(100 * ms, 100 * ms, LOST_AFTER_NS));
        assert!(!stale(100 * ms, 100 * ms + LOST_AFTER_NS, LOST_AFTER_NS));
        assert!(stale(100 * ms, 100 * ms + LOST_AFTER_NS + 1, LOST_AFTER_NS));
        // a punt stamped after `now` (another CPU's clock read later) is fresh
        assert!(!stale(200 * ms, 100 * ms, LOST_AFTER_NS));
    }

    #[test]
    fn slot_is_read_once() {
        let mut m = vec![0u8; 40];
        let s = Slot {
            port: 3,
            arrived: 7,
            start: 9,
        };
        let b = &mut m[8..];
        b[..8].copy_from_slice(&MAGIC.to_ne_bytes());
        b[8..16].copy_from_slice(&s.arrived.to_ne_bytes());
        b[16..24].copy_from_slice(&s.start.to_ne_bytes());
        b[24..32].copy_from_slice(&(s.port as u64).to_ne_bytes());
        assert_eq!(Slot::take(&mut m), Some(s));
        assert_eq!(Slot::take(&mut m), None);
        assert_eq!(Slot::take(&mut [0u8; 8]), None);
    }
}
