//! The data-plane thread of sdnperf-switch-grpc: the same loop as `sdnperf-switch run`
//! (poll AF_PACKET rings, run the pipeline, service queues, transmit in batches), plus
//! - control closures from the gRPC side, run between batches (so tables need no locks),
//!   with an eventfd to wake the loop at once;
//! - packets the pipeline sends to the CPU port become packet-ins;
//! - packet-outs are injected at the CPU port (the program parses its packet_out header);
//! - digests and idle-timeout notifications are polled after each batch.

use crate::device::{Device, Event};
use sdnperf_switch::exec::Job;
use sdnperf_switch::ports::afpacket::{AfPacketPort, BATCH};
use sdnperf_switch::switch::MAX_PORTS;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

pub type Cmd = Box<dyn FnOnce(&mut Device) + Send>;

pub static STOP: AtomicBool = AtomicBool::new(false);

/// Sends work to the data-plane thread.
#[derive(Clone)]
pub struct DpHandle {
    tx: mpsc::Sender<Cmd>,
    efd: i32,
}

impl DpHandle {
    pub fn send(&self, c: Cmd) -> bool {
        let ok = self.tx.send(c).is_ok();
        let one: u64 = 1;
        unsafe {
            libc::write(self.efd, &one as *const u64 as *const libc::c_void, 8);
        }
        ok
    }

    /// Runs `f` on the data-plane thread and awaits its result.
    pub async fn call<T: Send + 'static>(&self, f: impl FnOnce(&mut Device) -> T + Send + 'static) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if !self.send(Box::new(move |d| {
            let _ = tx.send(f(d));
        })) {
            return None;
        }
        rx.await.ok()
    }
}

pub struct Port {
    pub num: u32,
    pub io: AfPacketPort,
}

pub fn channel() -> (DpHandle, mpsc::Receiver<Cmd>) {
    let (tx, rx) = mpsc::channel();
    let efd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    (DpHandle { tx, efd }, rx)
}

pub struct Opts {
    pub busy_poll: bool,
}

/// Runs until STOP is set or an interface vanishes. `events` receives packet-ins, digests
/// and idle-timeout notifications (dropped when the channel is full: a slow controller
/// never stalls forwarding).
pub fn run(mut dev: Device, mut ports: Vec<Port>, h: &DpHandle, rx: mpsc::Receiver<Cmd>, events: tokio::sync::mpsc::Sender<Event>, opts: Opts) -> String {
    let mut by_num: Vec<Option<usize>> = vec![None; MAX_PORTS];
    for (i, p) in ports.iter().enumerate() {
        by_num[p.num as usize] = Some(i);
    }
    let mut pollfds: Vec<libc::pollfd> = ports.iter().map(|p| libc::pollfd { fd: p.io.fd, events: libc::POLLIN, revents: 0 }).collect();
    pollfds.push(libc::pollfd { fd: h.efd, events: libc::POLLIN, revents: 0 });
    let mut sent: Vec<Box<Job>> = Vec::with_capacity(1024);
    let mut evbuf: Vec<Event> = vec![];
    let mut pkt = Vec::with_capacity(2048);
    let mut idle_spins = 0u32;
    let mut last_check = std::time::Instant::now();
    let mut reason = String::from("signal");
    while !STOP.load(Ordering::Relaxed) {
        if last_check.elapsed() >= std::time::Duration::from_millis(50) {
            last_check = std::time::Instant::now();
            if let Some(p) = ports.iter().find(|p| sdnperf_switch::ports::afpacket::ifindex(&p.io.name).is_err()) {
                reason = format!("interface {} vanished", p.io.name);
                break;
            }
            dev.poll_events(&mut evbuf);
        }
        let mut got = 0;
        while let Ok(c) = rx.try_recv() {
            // a bug in request handling must not stop forwarding: the caller sees the
            // dropped reply channel (UNAVAILABLE/INTERNAL), packets keep flowing
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c(&mut dev))).is_err() {
                eprintln!("sdnperf-switch-grpc: internal error while handling a request (see the message above); forwarding continues");
            }
            got += 1;
        }
        let Some(sw) = dev.sw.as_mut() else {
            // no pipeline yet: drain the rings (packets are dropped) and wait for commands
            for p in ports.iter_mut() {
                p.io.rx_burst(BATCH, |_, _| {});
            }
            unsafe {
                libc::poll(pollfds.as_mut_ptr(), pollfds.len() as u64, 50);
                let mut v = 0u64;
                libc::read(h.efd, &mut v as *mut u64 as *mut libc::c_void, 8);
            }
            continue;
        };
        let now = sw.eng.now_ns();
        for p in ports.iter_mut() {
            let num = p.num;
            got += p.io.rx_burst(BATCH, |data, vnet| sw.receive(num, data, vnet, now));
        }
        sw.service(now);
        let had_tx = !sw.ready.is_empty();
        let cpu_port = dev.cpu_port;
        let ready = std::mem::take(&mut sw.ready);
        for j in ready {
            if Some(j.egress_port) == cpu_port {
                pkt.clear();
                j.out_bytes(&mut pkt);
                if let Some(t) = j.truncate {
                    pkt.truncate(t);
                }
                match dev.packet_in(&pkt) {
                    Some(pi) => {
                        if events.try_send(Event::Packet(pi)).is_err() {
                            dev.packet_in_dropped += 1;
                        }
                    }
                    None => dev.packet_in_dropped += 1,
                }
                dev.sw.as_mut().unwrap().eng.recycle(j);
                continue;
            }
            let sw = dev.sw.as_mut().unwrap();
            match by_num.get(j.egress_port as usize).copied().flatten() {
                Some(i) => {
                    let delta = j.out.len() as isize - j.payload_off as isize;
                    let port = &mut ports[i].io;
                    if port.vnet || j.vnet.is_none() || j.out_len() <= 9216 {
                        port.queue(&j.out, &j.buf[j.payload_off..], j.truncate, j.vnet, delta);
                    } else {
                        port.tx_dropped += 1;
                    }
                    sent.push(j);
                    if sent.len() >= 512 {
                        for p in ports.iter_mut() {
                            p.io.flush();
                        }
                        for j in sent.drain(..) {
                            sw.eng.recycle(j);
                        }
                    }
                }
                None => sw.eng.recycle(j),
            }
        }
        if had_tx {
            for p in ports.iter_mut() {
                p.io.flush();
            }
            let sw = dev.sw.as_mut().unwrap();
            for j in sent.drain(..) {
                sw.eng.recycle(j);
            }
        }
        if !dev.sw.as_ref().unwrap().eng.digests.is_empty() {
            dev.poll_events(&mut evbuf);
        }
        for e in evbuf.drain(..) {
            let _ = events.try_send(e);
        }
        if got == 0 && !had_tx {
            idle_spins += 1;
            if idle_spins < 64 || opts.busy_poll {
                std::hint::spin_loop();
                continue;
            }
            let sw = dev.sw.as_ref().unwrap();
            let now = sw.eng.now_ns();
            let mut timeout_ms = 1i32;
            if sw.pending() {
                if let Some(t) = sw.next_deadline() {
                    let wait = t.saturating_sub(now);
                    if wait < 1_000_000 {
                        unsafe {
                            libc::poll(pollfds.as_mut_ptr(), pollfds.len() as u64, 0);
                        }
                        std::thread::sleep(std::time::Duration::from_nanos(wait.min(50_000)));
                        continue;
                    }
                }
            } else {
                timeout_ms = 20;
            }
            unsafe {
                libc::poll(pollfds.as_mut_ptr(), pollfds.len() as u64, timeout_ms);
                let mut v = 0u64;
                libc::read(h.efd, &mut v as *mut u64 as *mut libc::c_void, 8);
            }
        } else {
            idle_spins = 0;
        }
    }
    if let Some(sw) = &dev.sw {
        let s = sw.eng.stats;
        eprintln!(
            "sdnperf-switch-grpc: counters: rx={} tx={} dropped={} parser_errors={} recirculations={} queue_dropped={} packet_in_dropped={}",
            s.rx, s.tx, s.dropped, s.parser_errors, s.recirculations, sw.queue_dropped, dev.packet_in_dropped
        );
    }
    for p in &ports {
        eprintln!("  port {} {}: rx={} tx={} tx_dropped={}", p.num, p.io.name, p.io.rx_count, p.io.tx_count, p.io.tx_dropped);
    }
    reason
}

/// Injects a packet-out at the CPU port.
pub fn inject(dev: &mut Device, bytes: &[u8]) {
    let Some(port) = dev.cpu_port else { return };
    if let Some(sw) = dev.sw.as_mut() {
        let now = sw.eng.now_ns();
        sw.receive(port, bytes, None, now);
    }
}
