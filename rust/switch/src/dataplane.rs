//! The Linux data-plane loop, shared by `sdnperf-switch run` and `sdnperf-switch-grpc`:
//! one thread polls every port's receive ring, runs the pipeline on each batch, services
//! queues / recirculation / impairment, transmits in batches, and between batches lets
//! its front end (`Hooks`) run control requests, so tables never need locks. A full or
//! stuck port only drops its own packets (non-blocking sends).
//!
//! The front end decides what a control request is (ctl text commands, P4Runtime
//! closures), receives the packets the pipeline sends to the CPU port, and turns
//! per-batch state into events (digests, idle timeouts). The loop owns the ports and the
//! XDP fast path, which follows every control change (`Changed`).

use crate::exec::Job;
use crate::ports::afpacket::AfPacketPort;
use crate::ports::afxdp::AfXdpPort;
use crate::ports::PortIo;
use crate::switch::{Switch, MAX_PORTS};
use crate::xdpfast::FastPath;
use std::sync::atomic::Ordering;
use std::sync::mpsc;

/// packets taken from each port per round (a larger batch means fewer transmit kicks,
/// each of which also runs the receiving veth's softirq)
const RX_BATCH: usize = 256;
/// how often the front end's periodic work runs (idle-timeout scans) while it has any
const TICK: std::time::Duration = std::time::Duration::from_millis(50);

pub use crate::wait::{install_signal_handlers, request_stop, STOP};

pub struct Port {
    pub num: u32,
    pub io: PortIo,
}

/// Which packet I/O a port uses (`--io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoKind {
    /// AF_XDP when offloads are off (`vnet` false), AF_PACKET otherwise or as fallback
    Auto,
    AfPacket,
    AfXdp,
}

impl IoKind {
    pub fn parse(s: &str) -> Result<IoKind, String> {
        match s {
            "auto" => Ok(IoKind::Auto),
            "af_packet" => Ok(IoKind::AfPacket),
            "af_xdp" => Ok(IoKind::AfXdp),
            _ => Err(format!("--io {}: expected auto, af_packet or af_xdp", s)),
        }
    }
}

/// Opens one port per (number, interface). AF_XDP needs MTU-sized frames (no offloads),
/// so `Auto` picks it only without vnet headers and falls back to AF_PACKET; `notes`
/// says why.
pub fn open_ports(
    ifaces: &[(u32, String)],
    io: IoKind,
    vnet: bool,
    rx_frames: usize,
    notes: &mut Vec<String>,
) -> Result<Vec<Port>, String> {
    let mut ports = vec![];
    for (n, name) in ifaces {
        let want_xdp = io == IoKind::AfXdp || (io == IoKind::Auto && !vnet);
        let port = if want_xdp {
            match AfXdpPort::open_with(name, rx_frames) {
                Ok(p) => PortIo::Xdp(p),
                Err(e) if io == IoKind::Auto => {
                    notes.push(format!(
                        "{}: AF_XDP unavailable ({}), using AF_PACKET",
                        name, e
                    ));
                    PortIo::Packet(AfPacketPort::open_with(name, vnet, rx_frames)?)
                }
                Err(e) => return Err(e),
            }
        } else {
            PortIo::Packet(AfPacketPort::open_with(name, vnet, rx_frames)?)
        };
        ports.push(Port { num: *n, io: port });
    }
    Ok(ports)
}

/// What the control requests run between two batches changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Changed {
    Nothing,
    /// entries, defaults, port shaping: the fast path re-syncs its maps
    Forwarding,
    /// a new program (P4Runtime SetForwardingPipelineConfig): the fast path is rebuilt
    Pipeline,
}

/// A data-plane front end.
pub trait Hooks {
    /// The switch packets run through; None while no program is loaded (received
    /// packets are then dropped).
    fn switch(&mut self) -> Option<&mut Switch>;
    /// Runs the control requests that arrived since the last batch. `fast` answers
    /// questions about the fast path (the `fastpath` ctl command).
    fn control(&mut self, fast: &FastPathState) -> Changed;
    /// A packet the pipeline sent to the CPU port (bytes as they would leave a port).
    fn cpu_packet(&mut self, egress_port: u32, bytes: &[u8]);
    /// After every batch that moved packets, and every `TICK` while `wants_tick`: turn
    /// digests, idle timeouts and the like into events.
    fn after_batch(&mut self) {}
    /// Whether `after_batch` must also run every `TICK` while no packets arrive (e.g.
    /// entries with idle timeouts exist). False lets an idle switch sleep until an event.
    fn wants_tick(&mut self) -> bool {
        false
    }
    /// A file descriptor that becomes readable when control work arrives (it is drained
    /// by the loop), so requests do not wait for the poll timeout.
    fn wake_fd(&self) -> Option<i32> {
        None
    }
    /// One line of counters the front end adds to the exit report.
    fn report(&self) -> String {
        String::new()
    }
}

/// Run-loop options.
#[derive(Clone, Default)]
pub struct Opts {
    pub cpu_port: Option<u32>,
    /// never sleep: spin on the rings (lowest latency, one core at 100 %)
    pub busy_poll: bool,
    /// keep spinning this long after the last packet before sleeping in poll() (0: sleep
    /// at once; spinning costs CPU per packet at low rates, buys a few µs of latency)
    pub spin_ns: u64,
    /// run programs in the fast path's subset in the ports' XDP hooks (AF_XDP ports)
    pub xdp_fastpath: bool,
    /// prefix of the loop's messages ("sdnperf-switch")
    pub name: String,
    /// `--pcap DIR`: capture each port's received and sent packets (BMv2's file names)
    pub pcap: Option<std::path::PathBuf>,
}

/// The XDP fast path as the loop manages it: requested or not, built for the current
/// program (or why not), on or off.
pub struct FastPathState {
    requested: bool,
    fp: Option<FastPath>,
    on: bool,
    why_not: String,
}

impl FastPathState {
    /// The `fastpath` control command's answer: state and the kernel-side counters.
    pub fn status(&self) -> String {
        match &self.fp {
            None if !self.requested => {
                "not running (start with --xdp-fastpath; AF_XDP ports and a program in its subset)"
                    .into()
            }
            None => format!("not running: {}", self.why_not),
            Some(fp) => {
                let [fwd, dropped, punted] = fp.counters();
                format!(
                    "{} forwarded={} dropped={} to_engine={}",
                    if self.on { "on" } else { "off" },
                    fwd,
                    dropped,
                    punted
                )
            }
        }
    }

    pub fn running(&self) -> bool {
        self.fp.is_some()
    }

    /// The link clocks rate-shaped ports share with the kernel (None: no fast path).
    pub fn link_clock(&self) -> Option<std::sync::Arc<crate::xdpfast::shaper::ShaperMap>> {
        self.fp.as_ref().map(|f| f.shaper())
    }

    /// (Re)builds the fast path for `sw`'s program and attaches it to every port (all
    /// must be AF_XDP). When it cannot run, the ports get their plain AF_XDP program
    /// back and `why_not` says why.
    fn rebuild(
        &mut self,
        sw: Option<&Switch>,
        ports: &mut [Port],
        cpu_port: Option<u32>,
        log: &str,
    ) {
        if !self.requested {
            return;
        }
        let was = self.fp.take();
        let r = match sw {
            None => Err("no program loaded".to_string()),
            Some(sw) => attach_fast_path(sw, ports, cpu_port),
        };
        match r {
            Ok(fp) => {
                eprintln!(
                    "{}: xdp fast path on for port(s) {}: forwarding in the kernel (XDP redirect; a veth peer needs NAPI: an XDP program or GRO on); the rest goes to the engine",
                    log,
                    ports.iter().map(|p| p.num.to_string()).collect::<Vec<_>>().join(",")
                );
                self.fp = Some(fp);
                self.on = false;
                self.follow(sw.unwrap(), log);
            }
            Err(e) => {
                if was.is_some() || sw.is_some() {
                    eprintln!("{}: xdp fast path off: {}", log, e);
                }
                for p in ports.iter_mut() {
                    if let PortIo::Xdp(x) = &mut p.io {
                        let _ = x.restore_program();
                    }
                }
                self.why_not = e;
                self.on = false;
            }
        }
        drop(was);
    }

    /// Makes the maps follow the engine's tables and port shaping; off while an egress
    /// queue has a packet rate.
    fn follow(&mut self, sw: &Switch, log: &str) {
        let Some(fp) = self.fp.as_mut() else { return };
        fp.apply_port_modes(sw);
        let want = !sw.has_queue_rates();
        match fp.sync(sw) {
            Err(e) => {
                if self.on {
                    eprintln!("{}: xdp fast path off: {}", log, e);
                }
                self.on = false;
            }
            Ok(()) => {
                if want != self.on {
                    eprintln!(
                        "{}: xdp fast path {}",
                        log,
                        if want {
                            "on"
                        } else {
                            "off while an egress queue has a packet rate (set_queue_rate)"
                        }
                    );
                }
                self.on = want;
                let _ = fp.set_enabled(want);
            }
        }
    }
}

/// Puts the program into the XDP hook of every port, if it is in the fast path's subset.
fn attach_fast_path(
    sw: &Switch,
    ports: &mut [Port],
    cpu_port: Option<u32>,
) -> Result<FastPath, String> {
    if let Some(p) = ports.iter().find(|p| p.io.kind() != "af_xdp") {
        return Err(format!(
            "port {} is {} (needs af_xdp: --io af_xdp or --no-vnet)",
            p.io.name(),
            p.io.kind()
        ));
    }
    let mut ifs = Vec::new();
    for p in ports.iter() {
        let i = crate::ports::afpacket::ifindex(p.io.name())
            .map_err(|e| format!("{}: {}", p.io.name(), e))?;
        ifs.push((p.num, i as u32));
    }
    let fp = FastPath::new(sw, &ifs, cpu_port)?;
    for p in ports.iter_mut() {
        if let PortIo::Xdp(x) = &mut p.io {
            let r = fp
                .set_socket(p.num, x.fd)
                .and_then(|_| x.replace_program(fp.prog(p.num).unwrap().0));
            if let Err(e) = r {
                // ports whose program was already replaced keep working: switched off, the
                // fast path hands every packet to the port's socket (and `rebuild` restores)
                let _ = fp.set_enabled(false);
                return Err(e);
            }
        }
    }
    Ok(fp)
}

/// A channel of control work for the loop with an eventfd that wakes it at once.
pub struct Mailbox<T> {
    tx: mpsc::Sender<T>,
    efd: std::sync::Arc<EventFd>,
}

impl<T> Clone for Mailbox<T> {
    fn clone(&self) -> Self {
        Mailbox {
            tx: self.tx.clone(),
            efd: self.efd.clone(),
        }
    }
}

/// The loop's end of a `Mailbox`.
pub struct Inbox<T> {
    pub rx: mpsc::Receiver<T>,
    efd: std::sync::Arc<EventFd>,
}

struct EventFd(i32);

impl Drop for EventFd {
    fn drop(&mut self) {
        unsafe { libc::close(self.0) };
    }
}

pub fn mailbox<T>() -> (Mailbox<T>, Inbox<T>) {
    let (tx, rx) = mpsc::channel();
    let efd = std::sync::Arc::new(EventFd(unsafe {
        libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC)
    }));
    (
        Mailbox {
            tx,
            efd: efd.clone(),
        },
        Inbox { rx, efd },
    )
}

/// A second mailbox whose sends wake the same loop as `other`'s (one fd to poll).
pub fn mailbox_sharing<T, U>(other: &Inbox<U>) -> (Mailbox<T>, Inbox<T>) {
    let (tx, rx) = mpsc::channel();
    (
        Mailbox {
            tx,
            efd: other.efd.clone(),
        },
        Inbox {
            rx,
            efd: other.efd.clone(),
        },
    )
}

impl<T> Mailbox<T> {
    /// Queues `item` and wakes the loop; false once the loop has gone.
    pub fn send(&self, item: T) -> bool {
        let ok = self.tx.send(item).is_ok();
        let one: u64 = 1;
        unsafe {
            libc::write(self.efd.0, &one as *const u64 as *const libc::c_void, 8);
        }
        ok
    }
}

impl<T> Inbox<T> {
    pub fn fd(&self) -> i32 {
        self.efd.0
    }
}

/// The loop's own state: the ports and the fast path serving them.
pub struct Loop {
    ports: Vec<Port>,
    fast: FastPathState,
    opts: Opts,
}

impl Loop {
    /// Prepares the loop; with `--xdp-fastpath` the program goes into the ports' XDP hooks
    /// now (and its note is printed), so a caller that prints READY afterwards is ready.
    pub fn new<H: Hooks>(hooks: &mut H, mut ports: Vec<Port>, mut opts: Opts) -> Loop {
        if opts.pcap.is_some() && opts.xdp_fastpath {
            // packets the kernel forwards never reach us, so they could not be captured
            eprintln!(
                "{}: --xdp-fastpath is off with --pcap (every packet goes through user space to be captured)",
                opts.name
            );
            opts.xdp_fastpath = false;
        }
        let mut fast = FastPathState {
            requested: opts.xdp_fastpath,
            fp: None,
            on: false,
            why_not: String::new(),
        };
        fast.rebuild(
            hooks.switch().map(|s| &*s),
            &mut ports,
            opts.cpu_port,
            &opts.name,
        );
        if let Some(sw) = hooks.switch() {
            sw.set_link_clock(fast.link_clock());
        }
        Loop { ports, fast, opts }
    }

    /// Runs until STOP is set or an interface vanishes; returns why it stopped.
    pub fn run<H: Hooks>(self, hooks: &mut H) -> String {
        run_shared(vec![(hooks, self)])
    }
}

/// Serves several switches (each its own front end, ports, program and fast path) from
/// one thread. One epoll instance holds every port of every switch; a wake-up serves only
/// the switches with something to do (a readable port, control work, a deadline that
/// passed, a tick), and of those only the ports epoll reported. A packet one switch sends
/// on a veth is usually already in the next switch's ring when the send returns (the veth
/// delivers it in the sender's softirq): a non-blocking look after every round that moved
/// packets finds it, so it crosses a whole path of switches in one wake-up. The loop
/// sleeps only when no switch moved a packet. Runs until STOP is set or an interface of
/// any switch vanishes.
pub fn run_shared<H: Hooks>(members: Vec<(&mut H, Loop)>) -> String {
    let mut ms = Vec::with_capacity(members.len());
    for (hooks, lp) in members {
        match Member::new(hooks, lp) {
            Ok(m) => ms.push(m),
            Err(e) => return e,
        }
    }
    // epoll reports ports by their index here: (member, port) of each; a member's
    // ports are first_port[member]..
    let mut port_fds = vec![];
    let mut port_of = vec![];
    let mut first_port = vec![];
    for (mi, m) in ms.iter().enumerate() {
        first_port.push(port_fds.len());
        for (pi, p) in m.ports.iter().enumerate() {
            port_fds.push(p.io.fd());
            port_of.push((mi, pi));
        }
    }
    // each wake fd once (front ends may share one), with every member it wakes
    let mut wake_fds: Vec<i32> = vec![];
    let mut woken_members: Vec<Vec<usize>> = vec![];
    for (mi, m) in ms.iter().enumerate() {
        if let Some(fd) = m.hooks.wake_fd() {
            match wake_fds.iter().position(|&f| f == fd) {
                Some(k) => woken_members[k].push(mi),
                None => {
                    wake_fds.push(fd);
                    woken_members.push(vec![mi]);
                }
            }
        }
    }
    let mut waiter = match crate::wait::Waiter::new(&port_fds, &wake_fds) {
        Ok(w) => w,
        Err(e) => return e,
    };
    let mut ready = crate::wait::Ready::default();
    let mut spins: u32 = 0;
    let mut check_ports = false;
    let mut reason = String::from("signal");
    while !STOP.load(Ordering::Relaxed) {
        if check_ports {
            check_ports = false;
            // stop if an interface vanished (e.g. Mininet deleted the links)
            if let Some(p) = ms
                .iter()
                .flat_map(|m| m.ports.iter())
                .find(|p| crate::ports::afpacket::ifindex(p.io.name()).is_err())
            {
                reason = format!("interface {} vanished", p.io.name());
                break;
            }
        }
        let now = std::time::Instant::now();
        let mut plan = Plan::default();
        for (mi, m) in ms.iter_mut().enumerate() {
            if m.wanted(now) {
                m.round();
            }
            if !m.unwatched && m.busy_rounds >= HOT_ROUNDS {
                // busy without a pause: read its rings every round and take its ports
                // out of epoll (each transmitted packet would run epoll's callback)
                m.unwatched = true;
                for pi in 0..m.ports.len() {
                    waiter.watch(first_port[mi] + pi, false);
                }
            }
            plan.merge(&m.plan());
        }
        let due = plan.again
            || plan
                .deadline
                .is_some_and(|d| d <= std::time::Instant::now());
        if plan.spin {
            // spinning only when asked (`--busy-poll`, `--spin-us`, for benchmarks): the
            // spinning switches read every ring each round (no system call); epoll is
            // asked now and then for control work, timers and link changes
            spins = spins.wrapping_add(1);
            if !spins.is_multiple_of(SPIN_LOOK) {
                if !due {
                    std::hint::spin_loop();
                }
                continue;
            }
        }
        // sleep until a port has data, control work, or the next queue/impairment
        // deadline (one timer expiry per departure on a shaped or delayed port); after
        // a round that moved packets or with work due, only look
        let block = !due && !plan.spin;
        if block {
            // before sleeping, every port is watched again (epoll looks at each as it is
            // added, so packets that came meanwhile wake the wait at once)
            for (mi, m) in ms.iter_mut().enumerate().filter(|(_, m)| m.unwatched) {
                let mut all = true;
                for pi in 0..m.ports.len() {
                    all &= waiter.watch(first_port[mi] + pi, true);
                }
                // a port that could not be put back is read every round instead
                m.unwatched = !all;
                m.busy_rounds = 0;
            }
        }
        let tick_ns = plan.tick_at.map(|t| {
            t.saturating_duration_since(std::time::Instant::now())
                .as_nanos() as u64
        });
        ready.clear();
        check_ports |= waiter
            .wait(block, plan.deadline, tick_ns, &mut ready)
            .check_ports;
        for &i in &ready.ports {
            let (mi, pi) = port_of[i];
            ms[mi].rx_due[pi] = true;
            ms[mi].visit = true;
        }
        for &k in &ready.wakes {
            for &mi in &woken_members[k] {
                ms[mi].wake_due = true;
                ms[mi].visit = true;
            }
        }
    }
    for m in ms.iter_mut() {
        m.report(&reason);
    }
    reason
}

/// While spinning, epoll is asked once every this many rounds.
const SPIN_LOOK: u32 = 64;
/// A switch whose rounds moved packets this many times in a row without the loop
/// sleeping takes its ports out of epoll until the loop next sleeps. Low rates (the loop
/// sleeps between packets) never get here, so their cost per packet is unchanged; at
/// high rates the epoll_ctl calls are few per busy period.
const HOT_ROUNDS: u32 = 16;

/// What the switches ask of the loop before it sleeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Plan {
    /// a switch has work now (moved packets, a port left with a full batch): go round
    /// again without sleeping
    pub again: bool,
    /// keep spinning instead of sleeping (`--busy-poll`, `--spin-us`)
    pub spin: bool,
    /// the next queue/impairment deadline
    pub deadline: Option<std::time::Instant>,
    /// when front-end periodic work is next due
    pub tick_at: Option<std::time::Instant>,
}

impl Plan {
    /// Folds another switch's wishes in: the earliest deadline and tick win, one
    /// spinner keeps the loop spinning, one busy switch keeps it going round.
    pub fn merge(&mut self, o: &Plan) {
        self.again |= o.again;
        self.spin |= o.spin;
        self.deadline = earliest(self.deadline, o.deadline);
        self.tick_at = earliest(self.tick_at, o.tick_at);
    }
}

fn earliest(
    a: Option<std::time::Instant>,
    b: Option<std::time::Instant>,
) -> Option<std::time::Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// One switch as the loop serves it.
struct Member<'a, H: Hooks> {
    hooks: &'a mut H,
    ports: Vec<Port>,
    fast: FastPathState,
    opts: Opts,
    pcap: Option<crate::pcap::PcapDump>,
    by_num: Vec<Option<usize>>,
    sent: Vec<Box<Job>>,
    cpu_jobs: Vec<Box<Job>>,
    cpu_packets: u64,
    pkt: Vec<u8>,
    last_work: u64,
    last_tick: std::time::Instant,
    /// per port: epoll reported it readable, or the last read took a full batch (more
    /// may wait): read it next round
    rx_due: Vec<bool>,
    /// the front end's wake fd fired: run its control requests
    wake_due: bool,
    /// serve this switch next round (it moved packets, or something of it is ready)
    visit: bool,
    /// from its last round without work
    spin: bool,
    deadline: Option<std::time::Instant>,
    tick_at: Option<std::time::Instant>,
    /// without a wake fd, control requests are looked for on every round (as before)
    has_wake: bool,
    /// rounds in a row that moved packets
    busy_rounds: u32,
    /// its ports are out of the epoll set (`HOT_ROUNDS`): every ring is read each round
    unwatched: bool,
}

impl<'a, H: Hooks> Member<'a, H> {
    fn new(hooks: &'a mut H, lp: Loop) -> Result<Self, String> {
        let Loop { ports, fast, opts } = lp;
        let pcap = match &opts.pcap {
            Some(dir) => {
                let names: Vec<&str> = ports.iter().map(|p| p.io.name()).collect();
                Some(
                    crate::pcap::PcapDump::open(dir, &names)
                        .map_err(|e| format!("--pcap: {}", e))?,
                )
            }
            None => None,
        };
        if let Some(sw) = hooks.switch() {
            sw.set_cpu_port(opts.cpu_port);
        }
        let mut by_num: Vec<Option<usize>> = vec![None; MAX_PORTS];
        for (i, p) in ports.iter().enumerate() {
            by_num[p.num as usize] = Some(i);
        }
        let has_wake = hooks.wake_fd().is_some();
        let n = ports.len();
        Ok(Member {
            hooks,
            ports,
            fast,
            opts,
            pcap,
            by_num,
            sent: Vec::with_capacity(1024),
            cpu_jobs: Vec::new(),
            cpu_packets: 0,
            pkt: Vec::with_capacity(2048),
            last_work: 0,
            last_tick: std::time::Instant::now(),
            // the first round reads every ring and runs control (whatever came before
            // the loop started)
            rx_due: vec![true; n],
            wake_due: true,
            visit: true,
            spin: false,
            deadline: None,
            tick_at: None,
            has_wake,
            busy_rounds: 0,
            unwatched: false,
        })
    }

    /// Whether this switch has anything to do at `now`.
    fn wanted(&self, now: std::time::Instant) -> bool {
        self.visit
            || self.spin
            || self.unwatched
            || self.deadline.is_some_and(|d| d <= now)
            || self.tick_at.is_some_and(|t| t <= now)
    }

    fn plan(&self) -> Plan {
        Plan {
            again: self.visit,
            spin: self.spin,
            deadline: self.deadline,
            tick_at: self.tick_at,
        }
    }

    /// Control work if any, one batch from every due port, service, transmit; sets what
    /// the switch asks of the loop next (`visit`, `spin`, `deadline`, `tick_at`).
    fn round(&mut self) {
        let log = self.opts.name.as_str();
        let cpu_port = self.opts.cpu_port;
        let hooks = &mut *self.hooks;
        let ports = &mut self.ports;
        let fast = &mut self.fast;
        // a spinning switch, or one whose ports are out of epoll, reads every ring (no
        // system call) instead of asking epoll
        let all = self.spin || self.unwatched;
        self.visit = false;
        if self.last_tick.elapsed() >= TICK {
            self.last_tick = std::time::Instant::now();
            hooks.after_batch();
        }
        if self.wake_due || !self.has_wake || all {
            self.wake_due = false;
            match hooks.control(fast) {
                Changed::Nothing => {}
                Changed::Forwarding => {
                    if let Some(sw) = hooks.switch() {
                        fast.follow(sw, log);
                    }
                }
                Changed::Pipeline => {
                    if let Some(sw) = hooks.switch() {
                        sw.set_cpu_port(cpu_port);
                    }
                    fast.rebuild(hooks.switch().map(|s| &*s), ports, cpu_port, log);
                    if let Some(sw) = hooks.switch() {
                        sw.set_link_clock(fast.link_clock());
                    }
                }
            }
        }
        let rx_due = &mut self.rx_due;
        let Some(sw) = hooks.switch() else {
            // no program yet: drain the rings (packets are dropped) and wait for commands
            for (i, p) in ports.iter_mut().enumerate() {
                if all || rx_due[i] {
                    rx_due[i] = p.io.rx_burst(RX_BATCH, |_, _, _| {}) >= RX_BATCH;
                    self.visit |= rx_due[i];
                }
            }
            self.spin = false;
            self.deadline = None;
            self.tick_at = hooks.wants_tick().then(|| self.last_tick + TICK);
            return;
        };
        let now = sw.eng.now_ns();
        let mut got = 0;
        for (i, p) in ports.iter_mut().enumerate() {
            if !(all || rx_due[i]) {
                continue;
            }
            let num = p.num;
            let n = match self.pcap.as_mut() {
                None => p.io.rx_burst(RX_BATCH, |data, vnet, slot| {
                    sw.receive_slotted(num, data, vnet, now, slot)
                }),
                Some(d) => p.io.rx_burst(RX_BATCH, |data, vnet, slot| {
                    d.received(i, data);
                    sw.receive_slotted(num, data, vnet, now, slot)
                }),
            };
            // a full batch: more may wait behind it (read again next round)
            rx_due[i] = n >= RX_BATCH;
            got += n;
        }
        sw.service(now);
        let had_tx = !sw.ready.is_empty();
        let sent = &mut self.sent;
        for j in sw.ready.drain(..) {
            if Some(j.egress_port) == cpu_port {
                self.cpu_jobs.push(j);
                continue;
            }
            match self.by_num.get(j.egress_port as usize).copied().flatten() {
                Some(i) => {
                    let delta = j.out.len() as isize - j.payload_off as isize;
                    let port = &mut ports[i].io;
                    // a super-packet cannot leave through a port without offload support
                    if port.vnet() || j.vnet.is_none() || j.out_len() <= 9216 {
                        port.queue(&j.out, &j.buf[j.payload_off..], j.truncate, j.vnet, delta);
                        if let Some(d) = self.pcap.as_mut() {
                            j.out_bytes(&mut self.pkt);
                            d.sent(i, &self.pkt);
                        }
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
                None => sent.push(j),
            }
        }
        if had_tx {
            for p in ports.iter_mut() {
                p.io.flush();
            }
            for j in sent.drain(..) {
                sw.eng.recycle(j);
            }
        }
        if !self.cpu_jobs.is_empty() {
            for j in std::mem::take(&mut self.cpu_jobs) {
                self.cpu_packets += 1;
                j.out_bytes(&mut self.pkt);
                hooks.cpu_packet(j.egress_port, &self.pkt);
                if let Some(sw) = hooks.switch() {
                    sw.eng.recycle(j);
                }
            }
        }
        if had_tx || got > 0 {
            hooks.after_batch();
            if let Some(d) = self.pcap.as_mut() {
                d.flush();
            }
            self.last_work = now;
            self.busy_rounds = self.busy_rounds.saturating_add(1);
            // go round again; keep spinning after work if asked to
            self.visit = true;
            self.spin = self.opts.busy_poll || self.opts.spin_ns > 0;
            return;
        }
        self.busy_rounds = 0;
        let Some(sw) = hooks.switch() else {
            self.visit = true; // the CPU port's front end dropped the program: go round
            return;
        };
        self.spin = self.opts.busy_poll || now.saturating_sub(self.last_work) < self.opts.spin_ns;
        // on the engine's clock: the same deadline gives the same instant (the timer is
        // not re-armed for it)
        let t0 = sw.eng.t0;
        self.deadline = sw
            .next_deadline()
            .map(|t| t0 + std::time::Duration::from_nanos(t));
        self.tick_at = hooks.wants_tick().then(|| self.last_tick + TICK);
    }

    /// The exit report: counters of the engine, the fast path and every port.
    fn report(&mut self, reason: &str) {
        let log = self.opts.name.as_str();
        eprintln!("{}: stopping ({})", log, reason);
        let extra = self.hooks.report();
        let cpu_packets = self.cpu_packets;
        if let Some(sw) = self.hooks.switch() {
            let (s, d) = (sw.eng.stats, sw.drops());
            eprintln!(
                "{}: counters: rx={} tx={} dropped={} parser_errors={} recirculations={} recirc_dropped={} queue_dropped={} impair_dropped={} cpu_port_packets={} {}",
                log, s.rx, s.tx, s.dropped, s.parser_errors, s.recirculations, d.recirc, d.queue, d.impair, cpu_packets, extra
            );
        }
        if self.fast.requested {
            eprintln!("{}: xdp fast path: {}", log, self.fast.status());
        }
        for p in &self.ports {
            let (rx, tx, txd, extra) = p.io.counters();
            eprintln!(
                "  port {} {} ({}): rx={} tx={} tx_dropped={} {}",
                p.num,
                p.io.name(),
                p.io.kind(),
                rx,
                tx,
                txd,
                extra
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn plan(spin: bool, deadline: Option<Instant>, tick: Option<Instant>) -> Plan {
        Plan {
            again: false,
            spin,
            deadline,
            tick_at: tick,
        }
    }

    #[test]
    fn the_earliest_deadline_wins() {
        let t = Instant::now();
        let ms = Duration::from_millis;
        let mut all = Plan::default();
        all.merge(&plan(false, None, None));
        assert_eq!(all.deadline, None);
        all.merge(&plan(false, Some(t + ms(3)), None));
        all.merge(&plan(false, Some(t + ms(1)), None));
        all.merge(&plan(false, Some(t + ms(2)), None));
        all.merge(&plan(false, None, None));
        assert_eq!(all.deadline, Some(t + ms(1)));
        assert!(!all.spin && !all.again);
    }

    #[test]
    fn one_spinner_spins_one_busy_switch_goes_round_and_the_earliest_tick_wins() {
        let t = Instant::now();
        let mut all = Plan::default();
        all.merge(&plan(false, None, Some(t + Duration::from_millis(40))));
        all.merge(&plan(false, None, None));
        assert_eq!(all.tick_at, Some(t + Duration::from_millis(40)));
        all.merge(&plan(true, None, Some(t + Duration::from_millis(10))));
        assert_eq!(all.tick_at, Some(t + Duration::from_millis(10)));
        assert!(all.spin && !all.again);
        all.merge(&Plan {
            again: true,
            ..Plan::default()
        });
        assert!(all.again);
    }
}
