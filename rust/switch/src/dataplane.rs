//! The Linux data-plane loop: one thread polls every port's RX ring, runs the pipeline
//! on each batch, services queues / recirculation / impairment, transmits in batches,
//! and executes control requests between batches (so tables never need locks).
//! A full or stuck port only drops its own packets (non-blocking sends).

use crate::ctl::{self, Request};
use crate::exec::Job;
/// packets taken from each port per round (a larger batch means fewer transmit kicks,
/// each of which also runs the receiving veth's softirq)
const RX_BATCH: usize = 256;
use crate::ports::PortIo;
use crate::switch::{Switch, MAX_PORTS};
use crate::xdpfast::FastPath;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;

pub static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: i32) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn install_signal_handlers() {
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}

/// The `fastpath` control command's answer: state and the kernel-side counters.
fn fast_status(fast: &Option<FastPath>, on: bool) -> String {
    match fast {
        None => "not running (start with --xdp-fastpath; AF_XDP ports and a program in its subset)".into(),
        Some(fp) => {
            let [fwd, dropped, punted] = fp.counters();
            format!("{} forwarded={} dropped={} to_engine={}", if on { "on" } else { "off" }, fwd, dropped, punted)
        }
    }
}

pub struct Port {
    pub num: u32,
    pub io: PortIo,
}

/// Run-loop options.
#[derive(Clone, Copy, Default)]
pub struct Opts {
    pub cpu_port: Option<u32>,
    /// never sleep: spin on the rings (lowest latency, one core at 100 %)
    pub busy_poll: bool,
    /// keep spinning this long after the last packet before sleeping in poll()
    pub spin_ns: u64,
}

/// Runs the loop. `fast`: the XDP fast path serving these ports (see `xdpfast`): its
/// maps follow every control request, and it is off while the switch shapes traffic.
pub fn run(mut sw: Switch, mut ports: Vec<Port>, ctl_rx: Option<Receiver<Request>>, opts: Opts, mut fast: Option<FastPath>) -> Result<(), String> {
    let cpu_port = opts.cpu_port;
    let mut fast_on = fast.is_some();
    let follow_control = |sw: &Switch, fast: &mut Option<FastPath>, fast_on: &mut bool| {
        if let Some(fp) = fast.as_mut() {
            let want = !sw.shapes_traffic();
            match fp.sync(&sw.eng.prog) {
                Err(e) => {
                    if *fast_on {
                        eprintln!("sdnperf-switch: xdp fast path off: {}", e);
                    }
                    *fast_on = false;
                }
                Ok(()) => {
                    if want != *fast_on {
                        eprintln!("sdnperf-switch: xdp fast path {}", if want { "on" } else { "off while ports are impaired or rate-limited" });
                    }
                    *fast_on = want;
                    let _ = fp.set_enabled(want);
                }
            }
        }
    };
    follow_control(&sw, &mut fast, &mut fast_on);
    let mut by_num: Vec<Option<usize>> = vec![None; MAX_PORTS];
    for (i, p) in ports.iter().enumerate() {
        by_num[p.num as usize] = Some(i);
    }
    let mut pollfds: Vec<libc::pollfd> = ports.iter().map(|p| libc::pollfd { fd: p.io.fd(), events: libc::POLLIN, revents: 0 }).collect();
    let mut sent: Vec<Box<Job>> = Vec::with_capacity(1024);
    let mut cpu_dropped = 0u64; // packets handed to the packet-in queue
    let mut cpu_packets: Vec<Box<Job>> = Vec::new();
    sw.cpu_port = cpu_port;
    let mut last_work = 0u64;
    let mut last_check = std::time::Instant::now();
    let mut exit_reason = String::from("signal");
    while !STOP.load(Ordering::Relaxed) {
        // once a second: stop if an interface vanished (e.g. Mininet deleted the links)
        if last_check.elapsed() >= std::time::Duration::from_secs(1) {
            last_check = std::time::Instant::now();
            if let Some(p) = ports.iter().find(|p| crate::ports::afpacket::ifindex(p.io.name()).is_err()) {
                exit_reason = format!("interface {} vanished", p.io.name());
                break;
            }
        }
        if let Some(rx) = &ctl_rx {
            let mut changed = false;
            while let Ok(req) = rx.try_recv() {
                let ans = if req.line.trim() == "fastpath" {
                    Ok(fast_status(&fast, fast_on))
                } else {
                    changed |= ctl::changes_forwarding(&req.line);
                    ctl::execute(&mut sw, &req.line)
                };
                let _ = req.reply.send(ans);
            }
            if changed {
                follow_control(&sw, &mut fast, &mut fast_on);
            }
        }
        let now = sw.eng.now_ns();
        let mut got = 0;
        for p in ports.iter_mut() {
            let num = p.num;
            got += p.io.rx_burst(RX_BATCH, |data, vnet| sw.receive(num, data, vnet, now));
        }
        sw.service(now);
        let had_tx = !sw.ready.is_empty();
        for j in sw.ready.drain(..) {
            match by_num.get(j.egress_port as usize).copied().flatten() {
                Some(i) => {
                    let delta = j.out.len() as isize - j.payload_off as isize;
                    let port = &mut ports[i].io;
                    // a super-packet cannot leave through a port without offload support
                    if port.vnet() || j.vnet.is_none() || j.out_len() <= 9216 {
                        port.queue(&j.out, &j.buf[j.payload_off..], j.truncate, j.vnet, delta);
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
                None => {
                    if Some(j.egress_port) == cpu_port {
                        cpu_packets.push(j);
                    } else {
                        sent.push(j);
                    }
                }
            }
        }
        for j in cpu_packets.drain(..) {
            cpu_dropped += 1;
            sw.to_packet_in(j);
        }
        if had_tx {
            for p in ports.iter_mut() {
                p.io.flush();
            }
            for j in sent.drain(..) {
                sw.eng.recycle(j);
            }
        }
        if got == 0 && !had_tx {
            // keep polling the rings for a short while after the last packet: at moderate
            // rates the next one usually comes before a sleep/wake-up would have finished
            if opts.busy_poll || now.saturating_sub(last_work) < opts.spin_ns {
                std::hint::spin_loop();
                continue;
            }
            // sleep until a port has data, the next queue/impairment deadline, or 1 ms
            let now = sw.eng.now_ns();
            let mut timeout_ms = 1i32;
            if let Some(t) = sw.next_deadline() {
                if t <= now {
                    timeout_ms = 0;
                }
            }
            if sw.pending() && timeout_ms > 0 {
                // deadlines need sub-millisecond precision: short sleep instead of poll timeout
                if let Some(t) = sw.next_deadline() {
                    let wait = t.saturating_sub(now).min(1_000_000);
                    if wait < 1_000_000 {
                        unsafe {
                            libc::poll(pollfds.as_mut_ptr(), pollfds.len() as u64, 0);
                        }
                        std::thread::sleep(std::time::Duration::from_nanos(wait.min(50_000)));
                        continue;
                    }
                }
            }
            unsafe {
                libc::poll(pollfds.as_mut_ptr(), pollfds.len() as u64, timeout_ms);
            }
        } else {
            last_work = now;
        }
    }
    let s = sw.eng.stats;
    eprintln!("sdnperf-switch: stopping ({})", exit_reason);
    eprintln!(
        "sdnperf-switch: counters: rx={} tx={} dropped={} parser_errors={} recirculations={} recirc_dropped={} queue_dropped={} impair_dropped={} cpu_port_packets={}",
        s.rx, s.tx, s.dropped, s.parser_errors, s.recirculations, sw.recirc_dropped, sw.queue_dropped, sw.impair_dropped, cpu_dropped
    );
    if fast.is_some() {
        eprintln!("sdnperf-switch: xdp fast path: {}", fast_status(&fast, fast_on));
    }
    for p in &ports {
        let (rx, tx, txd, extra) = p.io.counters();
        eprintln!("  port {} {} ({}): rx={} tx={} tx_dropped={} {}", p.num, p.io.name(), p.io.kind(), rx, tx, txd, extra);
    }
    Ok(())
}
