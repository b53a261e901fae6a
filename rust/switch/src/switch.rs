//! The switch core shared by every port back end (memory ports for STF, AF_PACKET for
//! Linux interfaces): per-port egress queues between ingress and egress (optional rate
//! in packets/s and depth, like simple_switch's set_queue_rate / set_queue_depth),
//! recirculation, and per-port impairment before transmission.

use crate::exec::{Engine, Job};
use crate::impair::{Impair, ImpairCfg};
use std::collections::VecDeque;

pub const MAX_PORTS: usize = 512;
pub const DEFAULT_DEPTH: usize = 64 * 1024;
/// recirculation passes run per `service` call (the rest wait for the next call)
pub const RECIRC_BUDGET: usize = 256;
/// packets waiting for another pass; beyond this, recirculated packets are dropped
pub const RECIRC_QUEUE_LIMIT: usize = 1024;

pub struct PortQueue {
    pub q: VecDeque<Box<Job>>,
    pub depth: usize,
    /// packets per second; 0 = unlimited
    pub rate_pps: u64,
    next_ns: u64,
    pub dropped: u64,
}

impl Default for PortQueue {
    fn default() -> Self {
        PortQueue { q: VecDeque::new(), depth: DEFAULT_DEPTH, rate_pps: 0, next_ns: 0, dropped: 0 }
    }
}

pub struct Switch {
    pub eng: Engine,
    pub queues: Vec<PortQueue>,
    pub impair: Vec<Option<Impair<Box<Job>>>>,
    /// packets ready to transmit (egress_port set, `out` deparsed)
    pub ready: Vec<Box<Job>>,
    to_egress: Vec<Box<Job>>,
    tx: Vec<Box<Job>>,
    recirc: Vec<Box<Job>>,
    recirc_q: VecDeque<Box<Job>>,
    active: Vec<u32>,
    /// ports with an impairment configured
    impaired: Vec<u32>,
    pub queue_dropped: u64,
    pub impair_dropped: u64,
    pub recirc_dropped: u64,
    /// port whose packets go to the control plane (packet-in) instead of an interface
    pub cpu_port: Option<u32>,
    /// packet-in queue: (egress port, bytes), bounded by PACKET_IN_LIMIT
    pub packet_in: VecDeque<(u32, Vec<u8>)>,
    pub packet_in_dropped: u64,
}

pub const PACKET_IN_LIMIT: usize = 4096;

impl Switch {
    pub fn new(eng: Engine) -> Switch {
        Switch {
            eng,
            queues: (0..MAX_PORTS).map(|_| PortQueue::default()).collect(),
            impair: (0..MAX_PORTS).map(|_| None).collect(),
            ready: Vec::with_capacity(256),
            to_egress: Vec::with_capacity(256),
            tx: Vec::with_capacity(256),
            recirc: Vec::with_capacity(64),
            recirc_q: VecDeque::new(),
            active: Vec::new(),
            impaired: Vec::new(),
            queue_dropped: 0,
            impair_dropped: 0,
            recirc_dropped: 0,
            cpu_port: None,
            packet_in: VecDeque::new(),
            packet_in_dropped: 0,
        }
    }

    pub fn set_impair(&mut self, port: u32, cfg: ImpairCfg) -> Result<(), String> {
        let slot = self.impair.get_mut(port as usize).ok_or_else(|| format!("port {} out of range", port))?;
        if cfg.is_noop() && slot.as_ref().map(|i| i.is_empty()).unwrap_or(true) {
            *slot = None;
        } else {
            match slot {
                Some(im) => im.cfg = cfg,
                None => *slot = Some(Impair::new(cfg, 0x9E37_79B9_7F4A_7C15 ^ port as u64)),
            }
        }
        // a port whose impairment was removed keeps draining its delay line
        self.impaired = (0..MAX_PORTS as u32).filter(|&p| self.impair[p as usize].is_some()).collect();
        Ok(())
    }

    /// Hands a finished packet to the control plane (CPU port).
    pub fn to_packet_in(&mut self, j: Box<Job>) {
        if self.packet_in.len() >= PACKET_IN_LIMIT {
            self.packet_in_dropped += 1;
        } else {
            let mut v = Vec::with_capacity(j.out_len());
            j.out_bytes(&mut v);
            self.packet_in.push_back((j.egress_port, v));
        }
        self.eng.recycle(j);
    }

    /// A packet arrives on `port`.
    pub fn receive(&mut self, port: u32, bytes: &[u8], vnet: Option<[u8; 10]>, now: u64) {
        let j = self.eng.new_packet(port, bytes, vnet);
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
    pub fn service(&mut self, now: u64) {
        let mut rounds = 0;
        let mut budget = RECIRC_BUDGET;
        loop {
            rounds += 1;
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
                    self.eng.egress(j, now, depth, &mut self.tx, &mut self.recirc, &mut self.to_egress);
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
                    self.recirc_q.push_back(j);
                }
            }
            while budget > 0 {
                let Some(j) = self.recirc_q.pop_front() else { break };
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
                        if let Err(j) = im.offer(now, len, j) {
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
            }
        }
    }

    /// Earliest future time at which `service` has work (rate-limited queues, delay lines).
    pub fn next_deadline(&self) -> Option<u64> {
        if !self.recirc_q.is_empty() {
            return Some(0);
        }
        let mut t: Option<u64> = None;
        for &p in &self.active {
            let q = &self.queues[p as usize];
            if !q.q.is_empty() {
                t = Some(t.map_or(q.next_ns, |x| x.min(q.next_ns)));
            }
        }
        for im in self.impaired.iter().filter_map(|&p| self.impair[p as usize].as_ref()) {
            if let Some(r) = im.next_release() {
                t = Some(t.map_or(r, |x| x.min(r)));
            }
        }
        t
    }

    pub fn pending(&self) -> bool {
        !self.active.is_empty() || !self.recirc_q.is_empty() || self.impaired.iter().any(|&p| self.impair[p as usize].as_ref().map(|i| !i.is_empty()).unwrap_or(false))
    }
}
