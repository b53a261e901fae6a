//! The switch core shared by every port back end (memory ports for STF, AF_PACKET for
//! Linux interfaces): per-port egress queues between ingress and egress (optional rate
//! in packets/s and depth, like simple_switch's set_queue_rate / set_queue_depth),
//! recirculation, and per-port impairment: on egress before transmission, and on ingress
//! between the port and the pipeline (`receive` holds the packet, `service` runs it
//! through ingress once its time has come), so every data-plane loop gets both.

use crate::exec::{Engine, Job};
use crate::impair::{Direction, Impair, ImpairCfg};
use crate::xdpfast::shaper::{self, ShaperMap, Slot};
use std::collections::VecDeque;
use std::sync::Arc;

pub const MAX_PORTS: usize = 512;
pub const DEFAULT_DEPTH: usize = 64 * 1024;
/// recirculation passes run per `service` call (the rest wait for the next call)
pub const RECIRC_BUDGET: usize = 256;
/// packets waiting for another pass; beyond this, recirculated packets are dropped
pub const RECIRC_QUEUE_LIMIT: usize = 1024;

struct PortQueue {
    q: VecDeque<Box<Job>>,
    depth: usize,
    /// packets per second; 0 = unlimited
    rate_pps: u64,
    next_ns: u64,
    dropped: u64,
}

impl Default for PortQueue {
    fn default() -> Self {
        PortQueue {
            q: VecDeque::new(),
            depth: DEFAULT_DEPTH,
            rate_pps: 0,
            next_ns: 0,
            dropped: 0,
        }
    }
}

/// Packets the switch dropped outside the pipeline (the pipeline's own are in `Stats`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drops {
    /// egress queue full, or an egress port out of range
    pub queue: u64,
    /// lost or overflowed in a port's impairment
    pub impair: u64,
    /// recirculation path full
    pub recirc: u64,
    /// packet-in queue full (`packet_in_read` too slow)
    pub packet_in: u64,
}

pub struct Switch {
    pub(crate) eng: Engine,
    queues: Vec<PortQueue>,
    /// egress impairment per port (packets the switch transmits)
    impair: Vec<Option<Impair<Box<Job>>>>,
    /// ingress impairment per port (packets the switch receives, before the pipeline)
    impair_in: Vec<Option<Impair<Box<Job>>>>,
    /// packets ready to transmit (egress_port set, `out` deparsed); the data-plane loop
    /// drains it in place (no allocation), others through `take_ready` / `pop_ready`
    pub(crate) ready: Vec<Box<Job>>,
    to_egress: Vec<Box<Job>>,
    tx: Vec<Box<Job>>,
    recirc: Vec<Box<Job>>,
    /// packets waiting for another pass, with the time they may re-enter ingress
    recirc_q: VecDeque<(u64, Box<Job>)>,
    /// the recirculation path's latency (ns): a recirculated packet re-enters ingress no
    /// earlier than this after it left egress. 0 (the default): at once, so the data-plane
    /// thread runs pass after pass (and keeps a core busy) while a packet loops; > 0: it
    /// sleeps between a packet's passes (a timerfd wakes it), like a hardware switch's
    /// recirculation port, which takes time. Each pass then lasts at least this long, so a
    /// hold of N passes is about N times it.
    recirc_pace_ns: u64,
    active: Vec<u32>,
    /// ports with an egress / ingress impairment configured
    impaired: Vec<u32>,
    impaired_in: Vec<u32>,
    queue_dropped: u64,
    impair_dropped: u64,
    recirc_dropped: u64,
    /// port whose packets go to the control plane (packet-in) instead of an interface
    cpu_port: Option<u32>,
    /// packet-in queue: (egress port, bytes), bounded by PACKET_IN_LIMIT
    packet_in: VecDeque<(u32, Vec<u8>)>,
    packet_in_dropped: u64,
    /// the loaded program's version: a controller's cookie, else the program's fingerprint
    /// (read and set through the control API, control.rs)
    pub(crate) config_version: u64,
    /// `service` reads the engine's clock again before each round after the first, so the
    /// timestamps of a packet's later recirculation passes advance (a hold by time,
    /// recirc_hold.p4); off where callers drive a virtual clock (STF, tests)
    live_clock: bool,
    /// the XDP fast path's link clocks (xdpfast/shaper.rs): rate-shaped ports take
    /// their departures from them, shared with the kernel
    link_clock: Option<Arc<ShaperMap>>,
    /// CLOCK_MONOTONIC minus the engine's clock (the link clocks run on the former)
    mono_off: u64,
}

pub const PACKET_IN_LIMIT: usize = 4096;

impl Switch {
    pub fn new(eng: Engine) -> Switch {
        Switch {
            config_version: eng.prog.fingerprint,
            eng,
            queues: (0..MAX_PORTS).map(|_| PortQueue::default()).collect(),
            impair: (0..MAX_PORTS).map(|_| None).collect(),
            impair_in: (0..MAX_PORTS).map(|_| None).collect(),
            ready: Vec::with_capacity(256),
            to_egress: Vec::with_capacity(256),
            tx: Vec::with_capacity(256),
            recirc: Vec::with_capacity(64),
            recirc_q: VecDeque::new(),
            recirc_pace_ns: 0,
            active: Vec::new(),
            impaired: Vec::new(),
            impaired_in: Vec::new(),
            queue_dropped: 0,
            impair_dropped: 0,
            recirc_dropped: 0,
            cpu_port: None,
            packet_in: VecDeque::new(),
            packet_in_dropped: 0,
            live_clock: false,
            link_clock: None,
            mono_off: 0,
        }
    }

    /// Shares the fast path's link clocks (None: the engine shapes alone).
    pub fn set_link_clock(&mut self, lc: Option<Arc<ShaperMap>>) {
        self.mono_off = shaper::monotonic_ns().saturating_sub(self.eng.now_ns());
        if lc.is_none() {
            if let Some(old) = &self.link_clock {
                for &p in &self.impaired {
                    old.set_held(p, 0);
                }
            }
        }
        self.eng.link_clock = lc.clone();
        self.link_clock = lc;
    }

    /// How the fast path treats `port` (shaper.rs): egress mode, rate and token bucket
    /// depth (tau, ns), and whether its ingress needs the engine. A rate alone can be kept
    /// by the kernel and the engine together; delay, jitter, loss and serialisation need
    /// the engine.
    pub fn port_mode(&self, port: u32) -> (u64, u64, u64, bool) {
        let p = port as usize;
        let in_engine = self.impair_in.get(p).is_some_and(|x| x.is_some());
        let (mode, rate, tau) = match self.impair.get(p).and_then(|x| x.as_ref()) {
            None => (shaper::FREE, 0, 0),
            Some(im) => {
                let c = &im.cfg;
                if c.rate_bps > 0
                    && c.delay_ns == 0
                    && c.jitter_ns == 0
                    && c.loss == 0.0
                    && !c.serialise
                {
                    (shaper::SHAPED, c.rate_bps, c.tau_ns())
                } else {
                    (shaper::ENGINE, 0, 0)
                }
            }
        };
        (mode, rate, tau, in_engine)
    }

    /// True while an egress queue has a packet rate (set_queue_rate): only the engine
    /// paces those, so the fast path stays off.
    pub fn has_queue_rates(&self) -> bool {
        self.queues.iter().any(|q| q.rate_pps != 0)
    }

    /// Let `service` read the engine's real clock between its rounds (see `live_clock`).
    pub fn set_live_clock(&mut self, on: bool) {
        self.live_clock = on;
    }

    /// The recirculation path's latency in ns (see `recirc_pace_ns`; 0: none).
    pub fn set_recirc_pace_ns(&mut self, ns: u64) {
        self.recirc_pace_ns = ns;
    }

    /// The packets ready to transmit, oldest first (the switch starts a new list).
    pub fn take_ready(&mut self) -> Vec<Box<Job>> {
        std::mem::take(&mut self.ready)
    }

    /// One packet ready to transmit (newest first; no allocation).
    pub fn pop_ready(&mut self) -> Option<Box<Job>> {
        self.ready.pop()
    }

    pub fn drops(&self) -> Drops {
        Drops {
            queue: self.queue_dropped,
            impair: self.impair_dropped,
            recirc: self.recirc_dropped,
            packet_in: self.packet_in_dropped,
        }
    }

    /// The port whose packets go to the control plane instead of an interface.
    pub fn cpu_port(&self) -> Option<u32> {
        self.cpu_port
    }

    pub fn set_cpu_port(&mut self, port: Option<u32>) {
        self.cpu_port = port;
    }

    /// Sets the rate (packets/s, 0: unlimited) of `port`'s egress queue, or every port's.
    pub fn set_queue_rate(&mut self, port: Option<u32>, pps: u64) -> Result<(), String> {
        self.each_queue(port, |q| q.rate_pps = pps)
    }

    /// Sets the depth (packets, at least 1) of `port`'s egress queue, or every port's.
    pub fn set_queue_depth(&mut self, port: Option<u32>, depth: usize) -> Result<(), String> {
        self.each_queue(port, |q| q.depth = depth.max(1))
    }

    fn each_queue(
        &mut self,
        port: Option<u32>,
        f: impl FnMut(&mut PortQueue),
    ) -> Result<(), String> {
        match port {
            Some(p) => {
                let q = self
                    .queues
                    .get_mut(p as usize)
                    .ok_or_else(|| format!("port {} out of range", p))?;
                std::iter::once(q).for_each(f);
            }
            None => self.queues.iter_mut().for_each(f),
        }
        Ok(())
    }

    /// The oldest packet-in waiting for `packet_in_read`: (egress port, bytes).
    pub fn pop_packet_in(&mut self) -> Option<(u32, Vec<u8>)> {
        self.packet_in.pop_front()
    }

    /// Sets the egress impairment of `port` (see `set_port_impair`).
    pub fn set_impair(&mut self, port: u32, cfg: ImpairCfg) -> Result<(), String> {
        self.set_port_impair(port, Direction::Out, cfg)
    }

    /// Sets the impairment of one or both sides of `port`; a no-op config removes it (a
    /// delay line still holding packets keeps draining first). The two sides draw their
    /// losses from different random sequences unless the config names a seed.
    pub fn set_port_impair(
        &mut self,
        port: u32,
        dir: Direction,
        cfg: ImpairCfg,
    ) -> Result<(), String> {
        if port as usize >= MAX_PORTS {
            return Err(format!("port {} out of range", port));
        }
        let p = port as usize;
        // a rate change applies to the backlog from now (0: the latest time the port saw)
        let now = if self.live_clock {
            self.eng.now_ns()
        } else {
            0
        };
        if dir.has_out() {
            set_slot(
                &mut self.impair[p],
                cfg,
                0x9E37_79B9_7F4A_7C15 ^ port as u64,
                now,
            );
        }
        if dir.has_in() {
            set_slot(
                &mut self.impair_in[p],
                cfg,
                0xD1B5_4A32_D192_ED03 ^ port as u64,
                now,
            );
        }
        self.impaired = (0..MAX_PORTS as u32)
            .filter(|&p| self.impair[p as usize].is_some())
            .collect();
        self.impaired_in = (0..MAX_PORTS as u32)
            .filter(|&p| self.impair_in[p as usize].is_some())
            .collect();
        Ok(())
    }

    /// True while any port is impaired or has a rate-limited egress queue: traffic then
    /// needs the engine's timing (the XDP fast path is switched off meanwhile).
    pub fn shapes_traffic(&self) -> bool {
        !self.impaired.is_empty()
            || !self.impaired_in.is_empty()
            || self.queues.iter().any(|q| q.rate_pps != 0)
    }

    /// One line per impaired port side: "port 1 in: delay=...,loss=... held=N lost=N full=N
    /// offered=N released=N ..." (the counters of `ImpairStats`).
    pub fn describe_impairments(&self) -> String {
        let mut out = vec![];
        for p in 0..MAX_PORTS {
            for (side, slot) in [("in", &self.impair_in[p]), ("out", &self.impair[p])] {
                if let Some(im) = slot {
                    // packets the kernel forwarded on a shaped port left on an idle link,
                    // on time: offered and released at once, never waiting (so never in
                    // the busy spacing)
                    let (xp, xb, xs) = match (&self.link_clock, side) {
                        (Some(lc), "out") => lc.counters(p as u32),
                        _ => (0, 0, 0),
                    };
                    let mut st = im.stats;
                    st.offered += xp;
                    st.released += xp;
                    st.released_bytes += xb;
                    let s = &st;
                    out.push(format!(
                        "port {} {}: {} held={} lost={} full={} offered={} released={} \
                         bytes={} model_delay_ns={} late_ns={} late_max_ns={} busy_packets={} \
                         busy_bytes={} busy_span_ns={} busy_model_ns={} xdp_forwarded={} \
                         xdp_slotted={}",
                        p,
                        side,
                        im.cfg.describe(),
                        im.len(),
                        im.dropped_loss,
                        im.dropped_full,
                        s.offered,
                        s.released,
                        s.released_bytes,
                        s.model_delay_ns,
                        s.late_ns,
                        s.late_max_ns,
                        s.busy_packets,
                        s.busy_bytes,
                        s.busy_span_ns,
                        s.busy_model_ns,
                        xp,
                        xs
                    ));
                }
            }
        }
        out.join("\n")
    }

    /// Queues a packet the pipeline sent to the CPU port for `packet_in_read` (bounded:
    /// beyond PACKET_IN_LIMIT packets are counted and dropped).
    pub fn queue_packet_in(&mut self, egress_port: u32, bytes: &[u8]) {
        if self.packet_in.len() >= PACKET_IN_LIMIT {
            self.packet_in_dropped += 1;
        } else {
            self.packet_in.push_back((egress_port, bytes.to_vec()));
        }
    }

    /// A packet arrives on `port`. With an ingress impairment on the port it waits in
    /// the port's delay line (a pooled copy, no allocation) and `service` runs it later.
    pub fn receive(&mut self, port: u32, bytes: &[u8], vnet: Option<[u8; 10]>, now: u64) {
        self.receive_slotted(port, bytes, vnet, now, None)
    }

    /// `receive` for a packet the XDP fast path claimed a link slot for (shaper.rs).
    pub fn receive_slotted(
        &mut self,
        port: u32,
        bytes: &[u8],
        vnet: Option<[u8; 10]>,
        now: u64,
        slot: Option<Slot>,
    ) {
        let mut j = self.eng.new_packet(port, bytes, vnet);
        j.slot = slot;
        if let Some(im) = self
            .impair_in
            .get_mut(port as usize)
            .and_then(|x| x.as_mut())
        {
            if let Err(j) = im.offer(now, bytes.len(), j) {
                self.impair_dropped += 1;
                self.eng.recycle(j);
            }
            return;
        }
        self.eng.ingress(j, now, &mut self.to_egress);
        self.enqueue_pending(now);
    }

    fn enqueue_pending(&mut self, now: u64) {
        while let Some(mut j) = self.to_egress.pop() {
            let port = j.egress_port as usize;
            if port >= MAX_PORTS {
                self.queue_dropped += 1;
                self.eng.recycle(j);
                continue;
            }
            let q = &mut self.queues[port];
            if q.q.len() >= q.depth {
                q.dropped += 1;
                self.queue_dropped += 1;
                self.eng.recycle(j);
                continue;
            }
            j.enq_ns = now;
            j.enq_depth = q.q.len() as u32;
            if q.q.is_empty() {
                self.active.push(port as u32);
            }
            q.q.push_back(j);
        }
    }

    /// Runs egress for every queued packet that may leave now (respecting queue rates),
    /// including recirculations, then moves impaired packets whose time has come to `ready`.
    pub fn service(&mut self, mut now: u64) {
        // packets held by ingress impairment whose time has come enter the pipeline first
        for &p in &self.impaired_in {
            if let Some(im) = self.impair_in[p as usize].as_mut() {
                while let Some(j) = im.poll(now) {
                    self.eng.ingress(j, now, &mut self.to_egress);
                }
            }
        }
        if !self.to_egress.is_empty() {
            self.enqueue_pending(now);
        }
        let mut rounds = 0;
        let mut budget = RECIRC_BUDGET;
        loop {
            rounds += 1;
            if rounds > 1 && self.live_clock {
                // each round is one more pass of every recirculating packet: its egress
                // timestamps must see the time those passes took
                now = now.max(self.eng.now_ns());
            }
            let mut progressed = false;
            let mut i = 0;
            while i < self.active.len() {
                let port = self.active[i] as usize;
                loop {
                    let q = &mut self.queues[port];
                    if q.q.is_empty() {
                        break;
                    }
                    if q.rate_pps > 0 {
                        if q.next_ns > now {
                            break;
                        }
                        // strict pacing: one packet per 1/rate, no burst credit
                        let gap = 1_000_000_000 / q.rate_pps.max(1);
                        q.next_ns = q.next_ns.max(now) + gap;
                    }
                    let j = q.q.pop_front().unwrap();
                    let depth = q.q.len() as u32;
                    self.eng.egress(
                        j,
                        now,
                        depth,
                        &mut self.tx,
                        &mut self.recirc,
                        &mut self.to_egress,
                    );
                    progressed = true;
                }
                if self.queues[port].q.is_empty() {
                    self.active.swap_remove(i);
                } else {
                    i += 1;
                }
            }
            // recirculation: a bounded number of passes per call, oldest first, so a packet
            // looping many times (delay by recirculation) never starves the ports
            for j in self.recirc.drain(..) {
                if self.recirc_q.len() >= RECIRC_QUEUE_LIMIT {
                    // the recirculation path is full: drop, like a switch's recirculation port
                    self.recirc_dropped += 1;
                    self.eng.recycle(j);
                } else {
                    // one latency for all: the queue stays in re-entry order
                    self.recirc_q.push_back((now + self.recirc_pace_ns, j));
                }
            }
            while budget > 0 {
                match self.recirc_q.front() {
                    Some((at, _)) if *at <= now => {}
                    _ => break, // empty, or the oldest still on the recirculation path
                }
                let (_, j) = self.recirc_q.pop_front().unwrap();
                budget -= 1;
                self.eng.ingress_recirc(j, now, &mut self.to_egress);
                progressed = true;
            }
            if !self.to_egress.is_empty() {
                self.enqueue_pending(now);
                progressed = true;
            }
            for j in self.tx.drain(..) {
                let port = j.egress_port as usize;
                match self.impair.get_mut(port).and_then(|x| x.as_mut()) {
                    Some(im) => {
                        let len = j.out_len();
                        let shared = self
                            .link_clock
                            .as_ref()
                            .filter(|lc| lc.mode(port as u32) == shaper::SHAPED);
                        let r = match shared {
                            // the link clock shared with the kernel: the slot XDP claimed,
                            // else one claimed now
                            Some(lc) => {
                                let off = self.mono_off;
                                let (arrived, start) =
                                    // (the slot stays with the job: recycling it
                                    // counts it done, Engine::recycle)
                                    match j.slot.filter(|s| s.port == port as u32) {
                                        Some(s) if s.start != 0 => (s.arrived, s.start),
                                        Some(s) => {
                                            // the kernel lost the race for the bucket
                                            let t = now + off;
                                            (s.arrived, lc.claim(port as u32, t, len as u64))
                                        }
                                        None => {
                                            let t = now + off;
                                            (t, lc.claim(port as u32, t, len as u64))
                                        }
                                    };
                                im.offer_slotted(
                                    now,
                                    len,
                                    j,
                                    arrived.saturating_sub(off),
                                    start.saturating_sub(off),
                                )
                            }
                            None => im.offer(now, len, j),
                        };
                        if let Err(j) = r {
                            self.impair_dropped += 1;
                            self.eng.recycle(j);
                        }
                    }
                    None => self.ready.push(j),
                }
            }
            if !progressed || rounds > 10_000 {
                break;
            }
        }
        for &p in &self.impaired {
            if let Some(im) = self.impair[p as usize].as_mut() {
                while let Some(j) = im.poll(now) {
                    self.ready.push(j);
                }
                // the kernel forwards to the port only while nothing waits here (FIFO)
                if let Some(lc) = &self.link_clock {
                    lc.set_held(p, im.len() as u64);
                    if im.is_empty() && lc.unfinished(p) != 0 {
                        lc.resync(p, now + self.mono_off, shaper::LOST_AFTER_NS);
                    }
                }
            }
        }
    }

    /// Earliest future time at which `service` has work (rate-limited queues, delay lines).
    pub fn next_deadline(&self) -> Option<u64> {
        let mut t: Option<u64> = None;
        if let Some((at, _)) = self.recirc_q.front() {
            if self.recirc_pace_ns == 0 {
                return Some(0);
            }
            t = Some(*at);
        }
        for &p in &self.active {
            let q = &self.queues[p as usize];
            if !q.q.is_empty() {
                t = Some(t.map_or(q.next_ns, |x| x.min(q.next_ns)));
            }
        }
        let out = self
            .impaired
            .iter()
            .filter_map(|&p| self.impair[p as usize].as_ref());
        let inn = self
            .impaired_in
            .iter()
            .filter_map(|&p| self.impair_in[p as usize].as_ref());
        for im in out.chain(inn) {
            if let Some(r) = im.next_release() {
                t = Some(t.map_or(r, |x| x.min(r)));
            }
        }
        t
    }

    pub fn pending(&self) -> bool {
        let held = |slots: &[Option<Impair<Box<Job>>>], ports: &[u32]| {
            ports.iter().any(|&p| {
                slots[p as usize]
                    .as_ref()
                    .map(|i| !i.is_empty())
                    .unwrap_or(false)
            })
        };
        !self.active.is_empty()
            || !self.recirc_q.is_empty()
            || held(&self.impair, &self.impaired)
            || held(&self.impair_in, &self.impaired_in)
    }
}

fn set_slot(slot: &mut Option<Impair<Box<Job>>>, cfg: ImpairCfg, seed: u64, now: u64) {
    if cfg.is_noop() && slot.as_ref().map(|i| i.is_empty()).unwrap_or(true) {
        *slot = None;
    } else {
        match slot {
            Some(im) => im.reconfigure_at(now, cfg),
            None => *slot = Some(Impair::new(cfg, seed)),
        }
    }
}
