//! Probe configuration (protocol-independent load schedule + OpenFlow and P4Runtime
//! specifics) and its command-line parsing.

use std::net::{SocketAddr, ToSocketAddrs};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A fixed number of packet-ins per second per switch, answered or not (P4RCProbe style).
    Rate,
    /// As many as answered, with at most `window` outstanding per switch (cbench style).
    Throughput,
    /// One outstanding packet-in per switch.
    Latency,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Rate => "rate",
            Mode::Throughput => "throughput",
            Mode::Latency => "latency",
        }
    }
}

/// The southbound protocol of the emulated switches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// N TCP connections to the controller, OpenFlow 1.3.
    OpenFlow13,
    /// N P4Runtime devices (gRPC servers) the controller connects to.
    P4Runtime,
}

impl Protocol {
    pub fn name(self) -> &'static str {
        match self {
            Protocol::OpenFlow13 => "openflow13",
            Protocol::P4Runtime => "p4runtime",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Config {
    pub protocol: Protocol,
    /// OpenFlow: the controller's address
    pub controller: SocketAddr,
    /// P4Runtime: where device 1 listens (device i on port + i - 1; port 0: any free ports)
    pub listen: SocketAddr,
    /// P4Runtime: write `{"devices": [{"device_id", "address"}]}` here once listening
    pub devices_file: Option<String>,
    pub switches: usize,
    pub mode: Mode,
    /// packet-ins per second per switch (rate mode)
    pub rate: f64,
    /// outstanding packet-ins per switch (throughput mode)
    pub window: usize,
    pub warmup: f64,
    pub duration: f64,
    /// per-switch packet count of the measurement window (ends it early when all sent)
    pub packets: Option<u64>,
    /// how long to wait for answers after the measurement window
    pub drain: f64,
    /// a packet-in unanswered for this long is lost (frees its window slot)
    pub timeout: f64,
    /// emulated hosts (distinct MACs) behind each switch
    pub hosts: u32,
    pub ports: u32,
    /// OpenFlow datapath id / P4Runtime device id of the first switch
    pub dpid_base: u64,
    pub threads: usize,
    /// send packet-ins with buffer ids (answers may then refer to the buffer)
    pub buffer_ids: bool,
    /// packet-in reason OFPR_ACTION instead of OFPR_NO_MATCH (Faucet takes only those)
    pub reason_action: bool,
    /// table id reported in packet-ins
    pub table_id: u8,
    /// 802.1Q-tag the frames with this VLAN id (as a switch running Faucet's pipeline does)
    pub vlan: Option<u16>,
    /// time-series interval, seconds
    pub interval: f64,
    pub connect_timeout: f64,
    /// pause between the last handshake and the start of the load
    pub settle: f64,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            protocol: Protocol::OpenFlow13,
            controller: "127.0.0.1:6653".parse().unwrap(),
            listen: "127.0.0.1:0".parse().unwrap(),
            devices_file: None,
            switches: 1,
            mode: Mode::Throughput,
            rate: 1000.0,
            window: 64,
            warmup: 1.0,
            duration: 5.0,
            packets: None,
            drain: 1.0,
            timeout: 1.0,
            hosts: 100,
            ports: 4,
            dpid_base: 1,
            threads: 1,
            buffer_ids: false,
            reason_action: false,
            table_id: 0,
            vlan: None,
            interval: 1.0,
            connect_timeout: 10.0,
            settle: 0.5,
        }
    }
}

impl Config {
    pub fn window_per_switch(&self) -> usize {
        match self.mode {
            Mode::Latency => 1,
            Mode::Throughput => self.window,
            Mode::Rate => usize::MAX,
        }
    }

    /// Slots in the per-switch ring of in-flight packet-ins (a power of two).
    pub fn ring_size(&self) -> usize {
        let need = match self.mode {
            Mode::Rate => (self.rate * (self.timeout + 0.5)).ceil() as usize,
            _ => self.window_per_switch(),
        };
        need.saturating_mul(2)
            .clamp(64, 1 << 20)
            .next_power_of_two()
    }

    pub fn validate(&self) -> Result<(), String> {
        if !self.controller.ip().is_loopback() {
            return Err(format!(
                "--controller {}: only loopback addresses are allowed",
                self.controller
            ));
        }
        if !self.listen.ip().is_loopback() {
            return Err(format!(
                "--listen {}: only loopback addresses are allowed",
                self.listen
            ));
        }
        if self.protocol == Protocol::P4Runtime
            && self.listen.port() != 0
            && self.listen.port() as usize + self.switches - 1 > 65535
        {
            return Err(format!(
                "--listen {}: {} devices do not fit below port 65536",
                self.listen, self.switches
            ));
        }
        if self.switches == 0 || self.switches > 65535 {
            return Err("--switches must be 1..65535".into());
        }
        if self.mode == Mode::Rate && !(self.rate > 0.0 && self.rate.is_finite()) {
            return Err("--rate must be > 0 packet-ins/s per switch".into());
        }
        if self.mode == Mode::Throughput && self.window == 0 {
            return Err("--window must be >= 1".into());
        }
        for (name, v) in [("--warmup", self.warmup), ("--drain", self.drain)] {
            if !(v >= 0.0 && v.is_finite()) {
                return Err(format!("{name} must be >= 0 seconds"));
            }
        }
        for (name, v) in [
            ("--duration", self.duration),
            ("--timeout", self.timeout),
            ("--interval", self.interval),
            ("--connect-timeout", self.connect_timeout),
        ] {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!("{name} must be > 0 seconds"));
            }
        }
        // also refuses NaN
        if self.settle.is_nan() || self.settle < 0.0 {
            return Err("--settle must be >= 0".into());
        }
        if self.hosts < 2 || self.hosts > 0xff_ffff {
            return Err("--hosts must be 2..16777215".into());
        }
        if self.ports == 0 || self.ports > 0xff00 {
            return Err("--ports must be 1..65280".into());
        }
        if self.threads == 0 || self.threads > 64 {
            return Err("--threads must be 1..64".into());
        }
        Ok(())
    }
}

pub fn parse_loopback(s: &str, what: &str) -> Result<SocketAddr, String> {
    let addr = s
        .to_socket_addrs()
        .map_err(|e| format!("{what} {s}: {e}"))?
        .next()
        .ok_or_else(|| format!("{what} {s}: no address"))?;
    if !addr.ip().is_loopback() {
        return Err(format!("{what} {s}: only loopback addresses are allowed"));
    }
    Ok(addr)
}

fn num<T: std::str::FromStr>(flag: &str, v: Option<String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{flag} needs a value"))?;
    v.parse()
        .map_err(|_| format!("{flag}: invalid value {v:?}"))
}

/// Parse the arguments of `sdnperf-probe openflow`.
pub fn parse_openflow_args(args: &[String]) -> Result<Config, String> {
    parse_args(Protocol::OpenFlow13, args)
}

/// Parse the arguments of `sdnperf-probe p4runtime`.
pub fn parse_p4runtime_args(args: &[String]) -> Result<Config, String> {
    parse_args(Protocol::P4Runtime, args)
}

const OPENFLOW_ONLY: &[&str] = &[
    "--controller",
    "--buffer-ids",
    "--reason",
    "--table-id",
    "--vlan",
];
const P4RUNTIME_ONLY: &[&str] = &["--listen", "--devices-file", "--device-id-base"];

fn parse_args(protocol: Protocol, args: &[String]) -> Result<Config, String> {
    let mut c = Config {
        protocol,
        ..Config::default()
    };
    if protocol == Protocol::P4Runtime {
        // the controller is started after the devices listen, and may take a while to
        // import, compile and connect
        c.connect_timeout = 60.0;
    }
    let mut it = args.iter().cloned();
    while let Some(a) = it.next() {
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut val = || inline.clone().or_else(|| it.next());
        let other_only = if protocol == Protocol::P4Runtime {
            OPENFLOW_ONLY
        } else {
            P4RUNTIME_ONLY
        };
        if other_only.contains(&flag.as_str()) {
            let other = if protocol == Protocol::P4Runtime {
                "openflow"
            } else {
                "p4runtime"
            };
            return Err(format!(
                "{flag} is an option of `sdnperf-probe {other}`, not of `{}` (see --help)",
                if protocol == Protocol::P4Runtime {
                    "p4runtime"
                } else {
                    "openflow"
                }
            ));
        }
        match flag.as_str() {
            "--listen" => {
                c.listen = parse_loopback(&val().ok_or("--listen needs a value")?, "--listen")?
            }
            "--devices-file" => c.devices_file = Some(val().ok_or("--devices-file needs a value")?),
            "--device-id-base" => c.dpid_base = num(&flag, val())?,
            "--controller" => {
                c.controller =
                    parse_loopback(&val().ok_or("--controller needs a value")?, "--controller")?
            }
            "--switches" => c.switches = num(&flag, val())?,
            "--mode" => {
                c.mode = match val().as_deref() {
                    Some("rate") => Mode::Rate,
                    Some("throughput") => Mode::Throughput,
                    Some("latency") => Mode::Latency,
                    other => {
                        return Err(format!(
                            "--mode: expected rate|throughput|latency, got {other:?}"
                        ))
                    }
                }
            }
            "--rate" => c.rate = num(&flag, val())?,
            "--window" => c.window = num(&flag, val())?,
            "--warmup" => c.warmup = num(&flag, val())?,
            "--duration" => c.duration = num(&flag, val())?,
            "--packets" => c.packets = Some(num(&flag, val())?),
            "--drain" => c.drain = num(&flag, val())?,
            "--timeout" => c.timeout = num(&flag, val())?,
            "--hosts" => c.hosts = num(&flag, val())?,
            "--ports" => c.ports = num(&flag, val())?,
            "--dpid-base" => c.dpid_base = num(&flag, val())?,
            "--threads" => c.threads = num(&flag, val())?,
            "--buffer-ids" => c.buffer_ids = true,
            "--reason" => {
                c.reason_action = match val().as_deref() {
                    Some("no-match") => false,
                    Some("action") => true,
                    other => {
                        return Err(format!("--reason: expected no-match|action, got {other:?}"))
                    }
                }
            }
            "--table-id" => c.table_id = num(&flag, val())?,
            "--vlan" => {
                let v: u16 = num(&flag, val())?;
                if v == 0 || v > 4094 {
                    return Err("--vlan must be 1..4094".into());
                }
                c.vlan = Some(v);
            }
            "--interval" => c.interval = num(&flag, val())?,
            "--connect-timeout" => c.connect_timeout = num(&flag, val())?,
            "--settle" => c.settle = num(&flag, val())?,
            _ => return Err(format!("unknown option {a:?} (see --help)")),
        }
    }
    if c.packets.is_some() && !args.iter().any(|a| a.starts_with("--duration")) {
        c.duration = 3600.0; // a packet count, no explicit duration: the count ends the window
    }
    c.validate()?;
    Ok(c)
}
