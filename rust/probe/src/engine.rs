//! The load engine, shared by both southbound protocols, and the OpenFlow 1.3 switches.
//!
//! Protocol-independent: `Flight` (one emulated switch's load schedule, ring of in-flight
//! packet-ins, counters, time series and RTT histogram), `Shared`/`Clock` (the timeline)
//! and `run_timeline` (connect → settle → warm-up → measure → drain, probe CPU). The
//! P4Runtime devices (`p4rt`) drive the same `Flight`s and return the same `SwResult`s.
//!
//! OpenFlow: N switches, each one TCP connection to the controller, spread over `threads`
//! worker threads, each running a mio event loop. Hot path: packet-ins are built by
//! copying a per-switch template into the connection's reusable write buffer and patching
//! a few fields; answers are parsed in place from the reusable read buffer; in-flight
//! packet-ins live in a fixed ring of slots. Nothing is allocated per packet.
//!
//! Timeline (shared by all workers, offsets from `Shared::base`):
//!   connect + handshake → settle → warm-up → measurement → drain → end.
//! Only packet-ins *sent* in the measurement window count for sent/answered/lost/RTT;
//! the per-interval time series covers warm-up, measurement and drain.

use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::config::{Config, Mode};
use crate::frame;
use crate::hist::Histogram;
use crate::of13::{self, t};

/// Read buffer: room for two maximum-size (64 KiB) OpenFlow messages.
const RBUF: usize = 128 * 1024;
/// Stop generating packet-ins while this much is waiting to be written (controller not
/// reading): the socket, not our memory, holds the backlog. Per switch: 1 MiB, less with
/// many switches (64 MiB in all), at least 64 KiB.
fn wbuf_limit(switches: usize) -> usize {
    ((64usize << 20) / switches.max(1)).clamp(64 << 10, 1 << 20)
}
pub const NOT_SET: u64 = u64::MAX;

const F_MEASURED: u8 = 1;
const F_ANSWERED: u8 = 2;
const F_EXPIRED: u8 = 4;

#[derive(Clone, Copy)]
struct Slot {
    seq: u64,
    sent_ns: u64,
    flags: u8,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Tick {
    pub sent: u64,
    pub answered: u64,
    pub outstanding: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SwState {
    Connecting,
    Handshake,
    Ready,
    Closed,
}

/// Coordination between the main thread and the workers.
pub struct Shared {
    pub base: Instant,
    pub ready: AtomicUsize,
    pub failed: AtomicUsize,
    pub done: AtomicUsize,
    /// ns offsets from base; NOT_SET until known
    pub load_start: AtomicU64,
    pub measure_end: AtomicU64,
    pub ready_at_start: AtomicUsize,
    pub stop: AtomicBool,
}

impl Shared {
    pub fn new() -> Self {
        Shared {
            base: Instant::now(),
            ready: AtomicUsize::new(0),
            failed: AtomicUsize::new(0),
            done: AtomicUsize::new(0),
            load_start: AtomicU64::new(NOT_SET),
            measure_end: AtomicU64::new(NOT_SET),
            ready_at_start: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
        }
    }
    #[inline]
    pub fn now(&self) -> u64 {
        self.base.elapsed().as_nanos() as u64
    }
}

impl Default for Shared {
    fn default() -> Self {
        Self::new()
    }
}

/// What one switch reports at the end.
pub struct SwResult {
    pub index: usize,
    pub dpid: u64,
    pub state: SwState,
    pub ever_ready: bool,
    pub error: Option<String>,
    pub closed_at_s: Option<f64>,
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub late: u64,
    pub duplicates: u64,
    pub unmatched: u64,
    pub schedule_slips: u64,
    pub backpressure_skipped: u64,
    pub backpressure_ns: u64,
    pub ctl_errors: u64,
    /// messages received from the controller, by type name
    pub messages: Vec<(String, u64)>,
    pub ticks: Vec<Tick>,
    pub hist: Histogram,
}

/// Where in the timeline `now` is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    Before,
    Warmup,
    Measure,
    Drain,
    End,
}

/// The timeline as one worker sees it (ns from `Shared::base`; NOT_SET until the load starts).
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub load_start: u64,
    pub measure_start: u64,
    pub measure_end: u64,
    pub run_end: u64,
}

impl Clock {
    pub fn unset() -> Clock {
        Clock {
            load_start: NOT_SET,
            measure_start: NOT_SET,
            measure_end: NOT_SET,
            run_end: NOT_SET,
        }
    }

    /// Pick up the load start and an early end (packet count reached) from `sh`.
    pub fn sync(&mut self, cfg: &Config, sh: &Shared) {
        if self.load_start == NOT_SET {
            let ls = sh.load_start.load(Ordering::SeqCst);
            if ls != NOT_SET {
                self.load_start = ls;
                self.measure_start = ls + secs(cfg.warmup);
                self.measure_end = self.measure_start + secs(cfg.duration);
                self.run_end = self.measure_end + secs(cfg.drain);
            }
        }
        if self.load_start != NOT_SET {
            let me = sh.measure_end.load(Ordering::SeqCst);
            if me != NOT_SET && me < self.measure_end {
                self.measure_end = me;
                self.run_end = me + secs(cfg.drain);
            }
        }
    }

    pub fn phase(&self, now: u64) -> Phase {
        if self.load_start == NOT_SET || now < self.load_start {
            Phase::Before
        } else if now < self.measure_start {
            Phase::Warmup
        } else if now < self.measure_end {
            Phase::Measure
        } else if now < self.run_end {
            Phase::Drain
        } else {
            Phase::End
        }
    }
}

pub fn secs(s: f64) -> u64 {
    (s * 1e9) as u64
}

/// One emulated switch's load, independent of the protocol: when to send, the ring of
/// in-flight packet-ins, matching answers to them, counters, time series, histogram.
/// The protocol side asks `due` how many to send, calls `record` for each one it sends
/// (and encodes the packet with the returned sequence number), and reports answers with
/// `answer_id` / `answer_seq` / `answer_buffer` / `seq_for_macs`.
pub struct Flight {
    pub index: usize,
    ring: Vec<Slot>,
    mask: u64,
    next_seq: u64,
    low: u64,
    pub outstanding: u64,
    hosts: u64,
    load_sent: u64,
    // measurement-window counters
    pub sent: u64,
    pub answered: u64,
    pub lost: u64,
    pub late: u64,
    pub duplicates: u64,
    pub unmatched: u64,
    pub schedule_slips: u64,
    pub backpressure_skipped: u64,
    pub backpressure_ns: u64,
    blocked_since: Option<u64>,
    pub ctl_errors: u64,
    // time series
    ticks: Vec<Tick>,
    cur: Tick,
    hist: Histogram,
    counted_done: bool,
}

impl Flight {
    pub fn new(index: usize, cfg: &Config) -> Flight {
        let ring_size = cfg.ring_size();
        let n_ticks = ((cfg.warmup + cfg.duration.min(3600.0) + cfg.drain) / cfg.interval).ceil()
            as usize
            + 2;
        Flight {
            index,
            ring: vec![
                Slot {
                    seq: NOT_SET,
                    sent_ns: 0,
                    flags: 0
                };
                ring_size
            ],
            mask: ring_size as u64 - 1,
            next_seq: 0,
            low: 0,
            outstanding: 0,
            hosts: cfg.hosts as u64,
            load_sent: 0,
            sent: 0,
            answered: 0,
            lost: 0,
            late: 0,
            duplicates: 0,
            unmatched: 0,
            schedule_slips: 0,
            backpressure_skipped: 0,
            backpressure_ns: 0,
            blocked_since: None,
            ctl_errors: 0,
            ticks: Vec::with_capacity(n_ticks.min(1 << 20)),
            cur: Tick::default(),
            hist: Histogram::new(),
            counted_done: false,
        }
    }

    pub fn ring_len(&self) -> usize {
        self.ring.len()
    }

    /// The 64-bit id a packet-in carries in its frame: switch index << 40 | sequence.
    #[inline]
    pub fn id_of(&self, seq: u64) -> u64 {
        ((self.index as u64) << 40) | seq
    }

    /// How many packet-ins the load mode calls for now, and whether they are measured.
    /// `blocked`: the controller is not reading (the write side is full); `room`: how
    /// many more fit into the write side.
    pub fn due(
        &mut self,
        cfg: &Config,
        clk: &Clock,
        now: u64,
        phase: Phase,
        blocked: bool,
        room: u64,
    ) -> (u64, bool) {
        if !(phase == Phase::Warmup || phase == Phase::Measure) {
            return (0, false);
        }
        let measured = phase == Phase::Measure;
        if blocked {
            // The controller is not reading: what the schedule asks for now is not sent,
            // and counted as the controller's backpressure, not as the probe's slip.
            if self.blocked_since.is_none() {
                self.blocked_since = Some(now);
            }
            if cfg.mode == Mode::Rate {
                let target = ((now - clk.load_start) as f64 * 1e-9 * cfg.rate) as u64;
                let skip = target.saturating_sub(self.load_sent);
                self.load_sent += skip;
                if measured {
                    self.backpressure_skipped += skip;
                }
            }
            return (0, measured);
        }
        if let Some(since) = self.blocked_since.take() {
            if measured {
                self.backpressure_ns += now - since.max(clk.measure_start);
            }
        }
        let mut n = match cfg.mode {
            Mode::Rate => {
                let target = ((now - clk.load_start) as f64 * 1e-9 * cfg.rate) as u64;
                let mut due = target.saturating_sub(self.load_sent);
                // More than 50 ms behind schedule: the probe (or the socket) could not keep
                // up; skip the backlog rather than burst it, and say so.
                let slack = (cfg.rate * 0.05) as u64 + 16;
                if due > slack {
                    let skip = due - slack;
                    self.load_sent += skip;
                    if measured {
                        self.schedule_slips += skip;
                    }
                    due = slack;
                }
                if due > room {
                    // the write side fills up: the controller reads too slowly
                    let skip = due - room;
                    self.load_sent += skip;
                    if measured {
                        self.backpressure_skipped += skip;
                    }
                    due = room;
                }
                due
            }
            Mode::Throughput | Mode::Latency => {
                let window = cfg.window_per_switch() as u64;
                window.saturating_sub(self.outstanding).min(room)
            }
        };
        if let (Some(limit), true) = (cfg.packets, measured) {
            n = n.min(limit.saturating_sub(self.sent));
        }
        (n, measured)
    }

    /// Book one packet-in sent now; returns its sequence number.
    #[inline]
    pub fn record(&mut self, now: u64, measured: bool) -> u64 {
        if self.next_seq - self.low >= self.ring.len() as u64 {
            // ring full (rate mode far ahead of the answers): the oldest is given up as lost
            let slot = &mut self.ring[(self.low & self.mask) as usize];
            if slot.flags & (F_ANSWERED | F_EXPIRED) == 0 {
                slot.flags |= F_EXPIRED;
                self.outstanding -= 1;
                if slot.flags & F_MEASURED != 0 {
                    self.lost += 1;
                }
            }
            self.low += 1;
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        let idx = (seq & self.mask) as usize;
        self.ring[idx] = Slot {
            seq,
            sent_ns: now,
            flags: if measured { F_MEASURED } else { 0 },
        };
        self.outstanding += 1;
        self.load_sent += 1;
        self.cur.sent += 1;
        if measured {
            self.sent += 1;
        }
        seq
    }

    /// Source and destination host of packet-in `seq` (host h sends seq ≡ h mod hosts).
    #[inline]
    pub fn hosts_of(&self, seq: u64) -> (u32, u32) {
        ((seq % self.hosts) as u32, ((seq + 1) % self.hosts) as u32)
    }

    /// The packet-in an answer naming one of our host MACs answers: the oldest one from
    /// that host still waiting (a controller handles packet-ins in order). Host h sends
    /// the sequence numbers ≡ h (mod hosts), so this walks at most outstanding/hosts slots.
    pub fn seq_for_macs(&self, src: Option<[u8; 6]>, dst: Option<[u8; 6]>) -> Option<u64> {
        let hosts = self.hosts;
        for m in [src, dst].into_iter().flatten() {
            let Some((sw, host)) = frame::decode_host_mac(&m) else {
                continue;
            };
            if sw as usize != (self.index & 0xffff) || host as u64 >= hosts {
                continue;
            }
            let h = host as u64;
            let mut seq = self.low + (h + hosts - self.low % hosts) % hosts;
            while seq < self.next_seq {
                let slot = &self.ring[(seq & self.mask) as usize];
                if slot.seq == seq && slot.flags & (F_ANSWERED | F_EXPIRED) == 0 {
                    return Some(seq);
                }
                seq += hosts;
            }
        }
        None
    }

    pub fn answer_buffer(&mut self, buffer_id: u32, clk: &Clock, now: u64) {
        let slot = self.ring[(buffer_id as u64 & self.mask) as usize];
        if slot.seq != NOT_SET && (slot.seq as u32 & 0x7fff_ffff) == buffer_id {
            self.answer_seq(slot.seq, clk, now);
        } else {
            self.unmatched += 1;
        }
    }

    pub fn answer_id(&mut self, id: u64, clk: &Clock, now: u64) {
        if (id >> 40) as usize != self.index {
            self.unmatched += 1;
            return;
        }
        self.answer_seq(id & ((1 << 40) - 1), clk, now);
    }

    #[inline]
    pub fn answer_seq(&mut self, seq: u64, clk: &Clock, now: u64) {
        let slot = &mut self.ring[(seq & self.mask) as usize];
        if slot.seq != seq {
            if seq < self.next_seq {
                self.late += 1;
            } else {
                self.unmatched += 1;
            }
            return;
        }
        if slot.flags & F_ANSWERED != 0 {
            self.duplicates += 1;
            return;
        }
        if slot.flags & F_EXPIRED != 0 {
            self.late += 1;
            return;
        }
        slot.flags |= F_ANSWERED;
        let measured = slot.flags & F_MEASURED != 0;
        let rtt = now.saturating_sub(slot.sent_ns);
        self.outstanding -= 1;
        if clk.phase(now) != Phase::Before {
            self.cur.answered += 1;
        }
        if measured {
            self.answered += 1;
            self.hist.record(rtt);
        }
    }

    /// Free the slots of answered and timed-out packet-ins at the tail of the ring.
    pub fn expire(&mut self, now: u64, timeout: u64) {
        while self.low < self.next_seq {
            let slot = &mut self.ring[(self.low & self.mask) as usize];
            if slot.flags & (F_ANSWERED | F_EXPIRED) != 0 {
                self.low += 1;
            } else if now.saturating_sub(slot.sent_ns) > timeout {
                slot.flags |= F_EXPIRED;
                self.outstanding -= 1;
                if slot.flags & F_MEASURED != 0 {
                    self.lost += 1;
                }
                self.low += 1;
            } else {
                break;
            }
        }
    }

    pub fn close_ticks(&mut self, upto: usize) {
        while self.ticks.len() < upto {
            let mut t = self.cur;
            t.outstanding = self.outstanding;
            self.ticks.push(t);
            self.cur = Tick::default();
        }
    }

    /// Per-iteration bookkeeping after events: count mode (a switch is done when it has
    /// sent its packets, or is gone; all done ends the measurement) and the time series.
    pub fn housekeeping(
        &mut self,
        cfg: &Config,
        sh: &Shared,
        clk: &Clock,
        now: u64,
        closed: bool,
        ever_ready: bool,
    ) {
        if clk.load_start == NOT_SET {
            return;
        }
        let phase = clk.phase(now);
        let finished =
            closed || (phase == Phase::Measure && cfg.packets.is_some_and(|n| self.sent >= n));
        if finished && !self.counted_done && ever_ready {
            self.counted_done = true;
            sh.done.fetch_add(1, Ordering::SeqCst);
        }
        if now >= clk.load_start {
            self.close_ticks(((now - clk.load_start) / secs(cfg.interval)) as usize);
        }
    }

    /// The end of the run: the last ticks, backpressure still in force, and the result.
    /// `end`: the end of the run (ns), the same for every switch so their series align.
    #[allow(clippy::too_many_arguments)]
    pub fn finish(
        mut self,
        end: u64,
        clk: &Clock,
        cfg: &Config,
        dpid: u64,
        state: SwState,
        ever_ready: bool,
        error: Option<String>,
        closed_at: Option<u64>,
        messages: Vec<(String, u64)>,
    ) -> SwResult {
        let total_ticks = if clk.load_start == NOT_SET {
            0
        } else {
            (end.saturating_sub(clk.load_start) / secs(cfg.interval)) as usize + 1
        };
        self.close_ticks(total_ticks);
        if let Some(since) = self.blocked_since.take() {
            if clk.measure_start != NOT_SET && since < clk.measure_end {
                self.backpressure_ns +=
                    clk.measure_end.saturating_sub(since.max(clk.measure_start));
            }
        }
        // whatever was sent in the window and never answered is lost
        while self.low < self.next_seq {
            let slot = self.ring[(self.low & self.mask) as usize];
            if slot.seq == self.low
                && slot.flags & (F_ANSWERED | F_EXPIRED) == 0
                && slot.flags & F_MEASURED != 0
            {
                self.lost += 1;
            }
            self.low += 1;
        }
        let closed_at_s = closed_at.map(|c| {
            if clk.load_start == NOT_SET {
                0.0
            } else {
                (c as f64 - clk.load_start as f64) * 1e-9
            }
        });
        SwResult {
            index: self.index,
            dpid,
            state,
            ever_ready,
            error,
            closed_at_s,
            sent: self.sent,
            answered: self.answered,
            lost: self.lost,
            late: self.late,
            duplicates: self.duplicates,
            unmatched: self.unmatched,
            schedule_slips: self.schedule_slips,
            backpressure_skipped: self.backpressure_skipped,
            backpressure_ns: self.backpressure_ns,
            ctl_errors: self.ctl_errors,
            messages,
            ticks: self.ticks,
            hist: self.hist,
        }
    }
}

/// Count mode: end the measurement once every switch that was ready at the start is done.
pub fn check_count_done(cfg: &Config, sh: &Shared, clk: &Clock, now: u64) {
    if cfg.packets.is_some() && clk.phase(now) == Phase::Measure {
        let need = sh.ready_at_start.load(Ordering::SeqCst);
        if need > 0 && sh.done.load(Ordering::SeqCst) >= need {
            let _ = sh.measure_end.fetch_min(now, Ordering::SeqCst);
        }
    }
}

// ---- OpenFlow 1.3 switches ------------------------------------------------------------------

struct Sw {
    dpid: u64,
    stream: Option<TcpStream>,
    state: SwState,
    ever_ready: bool,
    error: Option<String>,
    closed_at: Option<u64>,
    rbuf: Vec<u8>,
    rstart: usize,
    rend: usize,
    wbuf: Vec<u8>,
    wpos: usize,
    wbuf_limit: usize,
    template: Vec<u8>,
    xid: u32,
    miss_send_len: u16,
    config_flags: u16,
    /// cookie put in packet-ins: that of the last flow the controller added (a real
    /// switch reports the cookie of the table-miss flow; Faucet checks it)
    pi_cookie: u64,
    msg_counts: [u64; 32],
    fl: Flight,
}

impl Sw {
    fn new(index: usize, cfg: &Config) -> Sw {
        let mut template = Vec::with_capacity(of13::PI_LEN + 4);
        let reason = if cfg.reason_action {
            of13::REASON_ACTION
        } else {
            of13::REASON_NO_MATCH
        };
        of13::packet_in_template(&mut template, reason, cfg.table_id, cfg.vlan);
        Sw {
            dpid: cfg.dpid_base + index as u64,
            stream: None,
            state: SwState::Connecting,
            ever_ready: false,
            error: None,
            closed_at: None,
            rbuf: vec![0; RBUF],
            rstart: 0,
            rend: 0,
            wbuf: Vec::with_capacity(wbuf_limit(cfg.switches) + 16 * 1024),
            wbuf_limit: wbuf_limit(cfg.switches),
            wpos: 0,
            template,
            xid: 1,
            miss_send_len: 128,
            config_flags: 0,
            pi_cookie: 0,
            msg_counts: [0; 32],
            fl: Flight::new(index, cfg),
        }
    }

    fn close(&mut self, poll: &Poll, now: u64, why: Option<String>) {
        if self.state == SwState::Closed {
            return;
        }
        if let Some(mut s) = self.stream.take() {
            let _ = poll.registry().deregister(&mut s);
        }
        self.state = SwState::Closed;
        self.closed_at = Some(now);
        if self.error.is_none() {
            self.error = why;
        }
    }

    /// Write what is buffered; returns Err(reason) when the connection is gone.
    fn flush(&mut self) -> Result<(), String> {
        let Some(stream) = self.stream.as_mut() else {
            return Ok(());
        };
        while self.wpos < self.wbuf.len() {
            match stream.write(&self.wbuf[self.wpos..]) {
                Ok(0) => return Err("controller closed the connection (write returned 0)".into()),
                Ok(n) => self.wpos += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("write to controller failed: {e}")),
            }
        }
        if self.wpos == self.wbuf.len() {
            self.wbuf.clear();
            self.wpos = 0;
        } else if self.wpos > self.wbuf_limit {
            self.wbuf.drain(..self.wpos);
            self.wpos = 0;
        }
        Ok(())
    }

    fn pending(&self) -> usize {
        self.wbuf.len() - self.wpos
    }
    /// Read everything available and handle every whole message.
    fn read(&mut self, cfg: &Config, sh: &Shared, clk: &Clock, now: u64) -> Result<(), String> {
        loop {
            if self.rend == self.rbuf.len() {
                if self.rstart == 0 {
                    return Err("internal: read buffer full".into());
                }
                self.rbuf.copy_within(self.rstart..self.rend, 0);
                self.rend -= self.rstart;
                self.rstart = 0;
            }
            let Some(stream) = self.stream.as_mut() else {
                return Ok(());
            };
            match stream.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => return Err("controller closed the connection".into()),
                Ok(n) => {
                    self.rend += n;
                    self.parse(cfg, sh, clk, now)?;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(format!("read from controller failed: {e}")),
            }
        }
    }

    fn parse(&mut self, cfg: &Config, sh: &Shared, clk: &Clock, now: u64) -> Result<(), String> {
        while self.rend - self.rstart >= of13::HEADER_LEN {
            let len = u16::from_be_bytes([self.rbuf[self.rstart + 2], self.rbuf[self.rstart + 3]])
                as usize;
            if len < of13::HEADER_LEN {
                return Err(format!(
                    "malformed message from controller: length {len} < 8"
                ));
            }
            if self.rend - self.rstart < len {
                break;
            }
            let (s, e) = (self.rstart, self.rstart + len);
            self.rstart = e;
            self.handle(s, e, cfg, sh, clk, now)?;
        }
        if self.rstart == self.rend {
            self.rstart = 0;
            self.rend = 0;
        }
        Ok(())
    }

    fn handle(
        &mut self,
        s: usize,
        e: usize,
        cfg: &Config,
        sh: &Shared,
        clk: &Clock,
        now: u64,
    ) -> Result<(), String> {
        let msg = &self.rbuf[s..e];
        let version = msg[0];
        let typ = msg[1];
        let xid = u32::from_be_bytes([msg[4], msg[5], msg[6], msg[7]]);
        self.msg_counts[(typ as usize).min(31)] += 1;
        if typ == t::HELLO {
            if !of13::hello_accepts_13(msg) {
                return Err(format!(
                    "controller does not offer OpenFlow 1.3 (hello version {version})"
                ));
            }
            if self.state == SwState::Connecting {
                self.state = SwState::Handshake;
            }
            return Ok(());
        }
        if version != of13::VERSION {
            return Err(format!(
                "controller sent a version {version} message (type {typ}); expected OpenFlow 1.3"
            ));
        }
        let w = &mut self.wbuf;
        match typ {
            t::ERROR => {
                self.fl.ctl_errors += 1;
            }
            t::ECHO_REQUEST => of13::echo_reply(w, xid, &msg[8..]),
            t::FEATURES_REQUEST => {
                let n_buffers = if cfg.buffer_ids {
                    self.fl.ring_len() as u32
                } else {
                    0
                };
                of13::features_reply(w, xid, self.dpid, n_buffers);
                if !self.ever_ready {
                    self.ever_ready = true;
                    self.state = SwState::Ready;
                    sh.ready.fetch_add(1, Ordering::SeqCst);
                }
            }
            t::GET_CONFIG_REQUEST => {
                of13::get_config_reply(w, xid, self.config_flags, self.miss_send_len)
            }
            t::SET_CONFIG => {
                if msg.len() >= 12 {
                    self.config_flags = u16::from_be_bytes([msg[8], msg[9]]);
                    self.miss_send_len = u16::from_be_bytes([msg[10], msg[11]]);
                }
            }
            t::BARRIER_REQUEST => of13::simple(w, t::BARRIER_REPLY, xid),
            t::MULTIPART_REQUEST => {
                let ok = msg.len() >= 16
                    && of13::multipart_reply(
                        w,
                        xid,
                        u16::from_be_bytes([msg[8], msg[9]]),
                        self.dpid,
                        cfg.ports,
                    );
                if !ok {
                    of13::error(w, xid, of13::ET_BAD_REQUEST, of13::BRC_BAD_MULTIPART, msg);
                }
            }
            t::ROLE_REQUEST => {
                let role = of13::be32(msg, 8).unwrap_or(0);
                let gen = of13::be64(msg, 16).unwrap_or(0);
                of13::role_reply(w, xid, if role == 0 { 1 } else { role }, gen);
            }
            t::GET_ASYNC_REQUEST => of13::get_async_reply(w, xid),
            t::QUEUE_GET_CONFIG_REQUEST => {
                of13::queue_get_config_reply(w, xid, of13::be32(msg, 8).unwrap_or(0))
            }
            t::PACKET_OUT => match of13::parse_packet_out(msg) {
                Some(po) => {
                    if po.buffer_id != of13::NO_BUFFER {
                        let b = po.buffer_id;
                        self.fl.answer_buffer(b, clk, now);
                    } else if let Some(id) = frame::frame_id(po.data) {
                        self.fl.answer_id(id, clk, now);
                    } else {
                        self.fl.unmatched += 1;
                    }
                }
                None => return Err("malformed PACKET_OUT from controller".into()),
            },
            t::FLOW_MOD => match of13::parse_flow_mod(msg) {
                Some(fm) => {
                    if fm.command == 0
                        && fm.cookie != 0
                        && fm.eth_src.is_none()
                        && fm.eth_dst.is_none()
                    {
                        self.pi_cookie = fm.cookie;
                    }
                    if fm.buffer_id != of13::NO_BUFFER && cfg.buffer_ids {
                        self.fl.answer_buffer(fm.buffer_id, clk, now);
                    } else if let Some(seq) = self.fl.seq_for_macs(fm.eth_src, fm.eth_dst) {
                        self.fl.answer_seq(seq, clk, now);
                    }
                }
                None => return Err("malformed FLOW_MOD from controller".into()),
            },
            t::SET_ASYNC
            | t::GROUP_MOD
            | t::PORT_MOD
            | t::TABLE_MOD
            | t::METER_MOD
            | t::ECHO_REPLY
            | t::EXPERIMENTER => {}
            _ => {
                self.fl.ctl_errors += 1;
                of13::error(w, xid, of13::ET_BAD_REQUEST, of13::BRC_BAD_TYPE, msg);
            }
        }
        Ok(())
    }

    #[inline]
    fn send_one(&mut self, cfg: &Config, now: u64, measured: bool) {
        let seq = self.fl.record(now, measured);
        let (src_h, dst_h) = self.fl.hosts_of(seq);
        let sw = (self.fl.index & 0xffff) as u32;
        let id = self.fl.id_of(seq);
        let start = self.wbuf.len();
        self.wbuf.extend_from_slice(&self.template);
        let m = &mut self.wbuf[start..];
        m[4..8].copy_from_slice(&self.xid.to_be_bytes());
        m[of13::PI_COOKIE_OFF..of13::PI_COOKIE_OFF + 8]
            .copy_from_slice(&self.pi_cookie.to_be_bytes());
        self.xid = self.xid.wrapping_add(1);
        let buffer_id = if cfg.buffer_ids {
            (seq as u32) & 0x7fff_ffff
        } else {
            of13::NO_BUFFER
        };
        m[of13::PI_BUFFER_OFF..of13::PI_BUFFER_OFF + 4].copy_from_slice(&buffer_id.to_be_bytes());
        let in_port = src_h % cfg.ports + 1;
        m[of13::PI_IN_PORT_OFF..of13::PI_IN_PORT_OFF + 4].copy_from_slice(&in_port.to_be_bytes());
        frame::patch_frame(
            &mut m[of13::PI_DATA_OFF..],
            frame::host_mac(sw, dst_h),
            frame::host_mac(sw, src_h),
            id,
        );
    }

    /// Send the packet-ins the load mode calls for now.
    fn generate(&mut self, cfg: &Config, clk: &Clock, now: u64, phase: Phase) {
        if self.state != SwState::Ready {
            return;
        }
        let blocked = self.pending() >= self.wbuf_limit;
        let room = (self.wbuf_limit.saturating_sub(self.pending()) / self.template.len()) as u64;
        let (n, measured) = self.fl.due(cfg, clk, now, phase, blocked, room);
        for _ in 0..n {
            self.send_one(cfg, now, measured);
        }
    }

    fn result(self, end: u64, clk: &Clock, cfg: &Config) -> SwResult {
        let mut messages = Vec::new();
        for (ty, c) in self.msg_counts.iter().enumerate() {
            if *c > 0 {
                let name = if ty < t::COUNT {
                    t::name(ty as u8).to_string()
                } else {
                    format!("type_{ty}")
                };
                messages.push((name, *c));
            }
        }
        self.fl.finish(
            end,
            clk,
            cfg,
            self.dpid,
            self.state,
            self.ever_ready,
            self.error,
            self.closed_at,
            messages,
        )
    }
}

/// Run the OpenFlow switches `indices` until the end of the timeline; returns their results.
pub fn worker(cfg: Arc<Config>, sh: Arc<Shared>, indices: Vec<usize>) -> Vec<SwResult> {
    let mut poll = match Poll::new() {
        Ok(p) => p,
        Err(e) => {
            return indices
                .into_iter()
                .map(|i| {
                    let mut s = Sw::new(i, &cfg);
                    s.error = Some(format!("cannot create poller: {e}"));
                    s.state = SwState::Closed;
                    sh.failed.fetch_add(1, Ordering::SeqCst);
                    s.result(sh.now(), &Clock::unset(), &cfg)
                })
                .collect()
        }
    };
    let mut sws: Vec<Sw> = indices.iter().map(|&i| Sw::new(i, &cfg)).collect();
    let connect_timeout = Duration::from_secs_f64(cfg.connect_timeout.min(5.0));
    for (k, sw) in sws.iter_mut().enumerate() {
        match std::net::TcpStream::connect_timeout(&cfg.controller, connect_timeout) {
            Ok(s) => {
                let _ = s.set_nodelay(true);
                if let Err(e) = s.set_nonblocking(true) {
                    sw.error = Some(format!("set_nonblocking: {e}"));
                    sw.state = SwState::Closed;
                    sh.failed.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                let mut ms = TcpStream::from_std(s);
                if let Err(e) = poll.registry().register(
                    &mut ms,
                    Token(k),
                    Interest::READABLE | Interest::WRITABLE,
                ) {
                    sw.error = Some(format!("register: {e}"));
                    sw.state = SwState::Closed;
                    sh.failed.fetch_add(1, Ordering::SeqCst);
                    continue;
                }
                sw.stream = Some(ms);
                of13::hello(&mut sw.wbuf, 0);
                sw.xid = 1;
            }
            Err(e) => {
                sw.error = Some(format!("cannot connect to {}: {e}", cfg.controller));
                sw.state = SwState::Closed;
                sw.closed_at = Some(sh.now());
                sh.failed.fetch_add(1, Ordering::SeqCst);
            }
        }
    }
    let mut events = Events::with_capacity(1024);
    let timeout = secs(cfg.timeout);
    let mut clk = Clock::unset();
    let mut to_close: Vec<(usize, String)> = Vec::new();
    loop {
        let now = sh.now();
        clk.sync(&cfg, &sh);
        let phase = clk.phase(now);
        if phase == Phase::End || sh.stop.load(Ordering::Relaxed) {
            break;
        }
        for sw in sws.iter_mut() {
            if sw.state == SwState::Closed {
                continue;
            }
            sw.fl.expire(now, timeout);
            sw.generate(&cfg, &clk, now, phase);
        }
        for (k, sw) in sws.iter_mut().enumerate() {
            if sw.pending() > 0 {
                if let Err(e) = sw.flush() {
                    to_close.push((k, e));
                }
            }
        }
        let wait = if phase == Phase::Before {
            Duration::from_millis(5)
        } else {
            Duration::from_millis(1)
        };
        if let Err(e) = poll.poll(&mut events, Some(wait)) {
            if e.kind() != ErrorKind::Interrupted {
                for (k, _) in sws.iter().enumerate() {
                    to_close.push((k, format!("poll failed: {e}")));
                }
            }
        }
        let now = sh.now();
        for ev in events.iter() {
            let k = ev.token().0;
            let Some(sw) = sws.get_mut(k) else { continue };
            if sw.state == SwState::Closed {
                continue;
            }
            if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                if let Err(e) = sw.read(&cfg, &sh, &clk, now) {
                    to_close.push((k, e));
                    continue;
                }
            }
            if ev.is_writable() && sw.pending() > 0 {
                if let Err(e) = sw.flush() {
                    to_close.push((k, e));
                }
            }
        }
        for (k, why) in to_close.drain(..) {
            let sw = &mut sws[k];
            if sw.state != SwState::Closed {
                if !sw.ever_ready {
                    sh.failed.fetch_add(1, Ordering::SeqCst);
                }
                sw.close(&poll, now, Some(why));
            }
        }
        for sw in sws.iter_mut() {
            let closed = sw.state == SwState::Closed;
            sw.fl
                .housekeeping(&cfg, &sh, &clk, now, closed, sw.ever_ready);
        }
        check_count_done(&cfg, &sh, &clk, now);
    }
    let end = sh.now();
    sws.into_iter()
        .map(|sw| sw.result(end, &clk, &cfg))
        .collect()
}

/// Timeline actually used by a run (seconds).
pub struct Timeline {
    pub connected_s: f64,
    pub load_started: bool,
    pub warmup_s: f64,
    pub measure_s: f64,
    pub drain_s: f64,
    pub load_start_ns: u64,
}

static STOP_REQUESTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop_signal(_sig: libc::c_int) {
    STOP_REQUESTED.store(true, Ordering::SeqCst); // async-signal-safe: one atomic store
}

/// SIGTERM / SIGINT end the run early instead of killing the probe: no new load, the
/// measurement window ends, the drain runs, the report is printed (the orchestrator uses
/// this when the controller died).
pub fn install_stop_handler() {
    // SAFETY: the handler only stores to an atomic.
    unsafe {
        libc::signal(
            libc::SIGTERM,
            on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
        libc::signal(
            libc::SIGINT,
            on_stop_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

pub fn stop_requested() -> bool {
    STOP_REQUESTED.load(Ordering::Relaxed)
}

/// CPU time of this process, in nanoseconds (user + system).
pub fn process_cpu_ns() -> u64 {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: getrusage writes into the struct we pass.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0;
    }
    let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000_000 + t.tv_usec as u64 * 1000;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

pub struct RunOutput {
    pub results: Vec<SwResult>,
    /// P4Runtime: the devices' addresses, by index (empty for OpenFlow)
    pub endpoints: Vec<String>,
    pub timeline: Timeline,
    pub cpu_measure_pct: f64,
    pub cpu_run_pct: f64,
}

/// Run a whole OpenFlow benchmark: connect, handshake, settle, warm-up, measure, drain.
pub fn run(cfg: Config) -> RunOutput {
    run_timeline(cfg, |cfg, sh| {
        let threads = cfg.threads.min(cfg.switches).max(1);
        (0..threads)
            .map(|w| {
                let idx: Vec<usize> = (0..cfg.switches).filter(|i| i % threads == w).collect();
                let (c, s) = (cfg.clone(), sh.clone());
                std::thread::spawn(move || worker(c, s, idx))
            })
            .collect()
    })
}

/// The timeline of a run, whatever the protocol: start the workers (`spawn`), wait until
/// every switch is ready or failed (bounded by the connect timeout), settle, then start
/// the load (warm-up, measurement with the probe's CPU sampled, drain) and collect the
/// workers' results.
pub fn run_timeline(
    cfg: Config,
    spawn: impl FnOnce(&Arc<Config>, &Arc<Shared>) -> Vec<std::thread::JoinHandle<Vec<SwResult>>>,
) -> RunOutput {
    let cfg = Arc::new(cfg);
    let sh = Arc::new(Shared::new());
    let cpu0 = process_cpu_ns();
    let handles = spawn(&cfg, &sh);
    // wait for every switch to finish its handshake (or fail), bounded
    let deadline = sh.now() + secs(cfg.connect_timeout);
    while sh.ready.load(Ordering::SeqCst) + sh.failed.load(Ordering::SeqCst) < cfg.switches
        && sh.now() < deadline
        && !stop_requested()
    {
        std::thread::sleep(Duration::from_millis(2));
    }
    let connected_s = sh.now() as f64 * 1e-9;
    let ready = sh.ready.load(Ordering::SeqCst);
    let mut timeline = Timeline {
        connected_s,
        load_started: false,
        warmup_s: 0.0,
        measure_s: 0.0,
        drain_s: 0.0,
        load_start_ns: 0,
    };
    let mut cpu_measure_pct = 0.0;
    if ready > 0 && !stop_requested() {
        std::thread::sleep(Duration::from_secs_f64(cfg.settle));
        sh.ready_at_start
            .store(sh.ready.load(Ordering::SeqCst), Ordering::SeqCst);
        let ls = sh.now();
        sh.load_start.store(ls, Ordering::SeqCst);
        timeline.load_started = true;
        timeline.load_start_ns = ls;
        let ms = ls + secs(cfg.warmup);
        let planned_end = ms + secs(cfg.duration);
        while sh.now() < ms {
            if stop_requested() {
                // stopped in the warm-up: an empty measurement window, then the drain
                let _ = sh.measure_end.fetch_min(ms, Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let (c1, t1) = (process_cpu_ns(), sh.now());
        loop {
            let now = sh.now();
            let me = sh.measure_end.load(Ordering::SeqCst);
            if now >= planned_end || (me != NOT_SET && now >= me) {
                break;
            }
            if stop_requested() {
                // SIGTERM/SIGINT: the measurement ends now; the drain still collects answers
                let _ = sh.measure_end.fetch_min(now.max(ms), Ordering::SeqCst);
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let (c2, t2) = (process_cpu_ns(), sh.now());
        cpu_measure_pct = if t2 > t1 {
            100.0 * (c2 - c1) as f64 / (t2 - t1) as f64
        } else {
            0.0
        };
        let me = sh.measure_end.load(Ordering::SeqCst);
        let end = if me != NOT_SET {
            me.min(planned_end).max(ms)
        } else {
            planned_end
        };
        timeline.warmup_s = cfg.warmup;
        timeline.measure_s = (end - ms) as f64 * 1e-9;
        timeline.drain_s = cfg.drain;
    } else {
        sh.stop.store(true, Ordering::SeqCst);
    }
    let mut results: Vec<SwResult> = Vec::new();
    for h in handles {
        // a worker panic loses its switches; reported as missing below
        if let Ok(r) = h.join() {
            results.extend(r);
        }
    }
    results.sort_by_key(|r| r.index);
    let wall = sh.now().max(1);
    let cpu_run_pct = 100.0 * (process_cpu_ns() - cpu0) as f64 / wall as f64;
    RunOutput {
        results,
        endpoints: Vec::new(),
        timeline,
        cpu_measure_pct,
        cpu_run_pct,
    }
}
