//! Probe configuration (protocol-independent load schedule + OpenFlow and P4Runtime
//! specifics) and its checks; the command line that fills it is `cli`.

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
