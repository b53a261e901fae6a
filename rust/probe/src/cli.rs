//! The command line of `sdnperf-probe` (clap, derive): four subcommands, the load options
//! the two protocols share, and each protocol's own. `Config::validate` keeps the checks
//! that span options (loopback, ranges, ports that fit).

use std::net::SocketAddr;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::config::{self, Config, Mode, Protocol};

const AFTER_HELP: &str = "\
Output (openflow, p4runtime): one JSON document on stdout, schema \"sdnperf-probe/1\" (see
rust/probe/README.md). SIGTERM or SIGINT ends the run early (the measurement window ends, the
drain runs) and the report is printed as usual.
Exit status: 0 when at least one switch completed its handshake, 3 when none did, 2 on bad
arguments, 1 when the devices cannot listen.";

/// sdnperf-probe — controller benchmark load generator (OpenFlow 1.3 and P4Runtime)
#[derive(Parser, Debug)]
// args_override_self: a repeated option takes its last value, as the hand parser did (the
// ctlbench runner appends a controller's own `--hosts` after the load's)
#[command(name = "sdnperf-probe", version, after_help = AFTER_HELP, args_override_self = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Emulate OpenFlow switches that connect to the controller, flood packet-ins, print JSON
    #[command(after_help = AFTER_HELP, args_override_self = true)]
    Openflow(OpenflowArgs),
    /// Emulate P4Runtime devices (gRPC servers) the controller connects to, flood packet-ins,
    /// print JSON
    ///
    /// A device is ready once a controller is primary on its stream and has
    /// committed a pipeline; packet-in metadata follow that P4Info's "packet_in" header
    /// (ingress_port). Packet-outs answer by the id in their frame, Writes by the host MACs
    /// in their match.
    #[command(name = "p4runtime", after_help = AFTER_HELP, args_override_self = true)]
    P4Runtime(P4RuntimeArgs),
    /// OpenFlow: answer every packet-in with a packet-out
    #[command(args_override_self = true)]
    EchoController(EchoControllerArgs),
    /// P4Runtime: dial the devices, become primary, push a minimal pipeline, answer every
    /// packet-in with a packet-out (give --devices-file F or --device ID@127.0.0.1:PORT)
    #[command(name = "p4runtime-echo", args_override_self = true)]
    P4RuntimeEcho(P4RuntimeEchoArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeArg {
    Rate,
    Throughput,
    Latency,
}

#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasonArg {
    /// OFPR_NO_MATCH
    NoMatch,
    /// OFPR_ACTION (Faucet takes only those)
    Action,
}

fn loopback(flag: &'static str) -> impl Fn(&str) -> Result<SocketAddr, String> + Clone {
    move |s| config::parse_loopback(s, flag)
}

/// The load schedule both protocols share (defaults as `Config::default`).
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// emulated switches / devices
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub switches: usize,
    /// rate: a fixed rate per switch; throughput: as many as answered within a window;
    /// latency: one outstanding per switch
    #[arg(long, value_name = "M", value_enum, default_value_t = ModeArg::Throughput)]
    pub mode: ModeArg,
    /// packet-ins per second per switch (rate mode)
    #[arg(long, value_name = "PPS", default_value_t = 1000.0)]
    pub rate: f64,
    /// outstanding packet-ins per switch (throughput mode)
    #[arg(long, value_name = "W", default_value_t = 64)]
    pub window: usize,
    /// warm-up seconds, not measured
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub warmup: f64,
    /// measurement seconds [default: 5; with --packets and no --duration: 3600, the count
    /// ends the window]
    #[arg(long, value_name = "S")]
    pub duration: Option<f64>,
    /// per-switch packet count that ends the measurement early
    #[arg(long, value_name = "N")]
    pub packets: Option<u64>,
    /// seconds to wait for late answers after the window
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub drain: f64,
    /// an unanswered packet-in is lost after S seconds
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub timeout: f64,
    /// distinct host MACs behind each switch
    #[arg(long, value_name = "H", default_value_t = 100)]
    pub hosts: u32,
    /// ports per switch
    #[arg(long, value_name = "P", default_value_t = 4)]
    pub ports: u32,
    /// worker threads
    #[arg(long, value_name = "T", default_value_t = 1)]
    pub threads: usize,
    /// time-series interval, seconds
    #[arg(long, value_name = "S", default_value_t = 1.0)]
    pub interval: f64,
    /// time allowed for connections and handshakes [default: 10; p4runtime: 60]
    #[arg(long, value_name = "S")]
    pub connect_timeout: Option<f64>,
    /// pause after the handshakes before the load, seconds
    #[arg(long, value_name = "S", default_value_t = 0.5)]
    pub settle: f64,
}

#[derive(Args, Debug, Clone)]
pub struct OpenflowArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    /// controller address, loopback only
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:6653",
          value_parser = loopback("--controller"))]
    pub controller: SocketAddr,
    /// datapath id of the first switch
    #[arg(long, value_name = "B", default_value_t = 1)]
    pub dpid_base: u64,
    /// packet-ins carry buffer ids (else OFP_NO_BUFFER + full frame)
    #[arg(long)]
    pub buffer_ids: bool,
    /// packet-in reason
    #[arg(long, value_name = "R", value_enum, default_value_t = ReasonArg::NoMatch)]
    pub reason: ReasonArg,
    /// table id in packet-ins
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub table_id: u8,
    /// 802.1Q-tag the frames (e.g. for Faucet's pipeline), 1..4094
    #[arg(long, value_name = "VID", value_parser = clap::value_parser!(u16).range(1..=4094))]
    pub vlan: Option<u16>,
}

#[derive(Args, Debug, Clone)]
pub struct P4RuntimeArgs {
    #[command(flatten)]
    pub load: LoadArgs,
    /// where device 1 listens; device i on PORT+i-1; port 0 = any free ports, loopback only
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0",
          value_parser = loopback("--listen"))]
    pub listen: SocketAddr,
    /// write {"devices": [{"device_id", "address"}]} to F once listening (start the
    /// controller after it appears)
    #[arg(long, value_name = "F")]
    pub devices_file: Option<String>,
    /// P4Runtime device id of the first device (also --dpid-base)
    #[arg(long, value_name = "B", default_value_t = 1, alias = "dpid-base")]
    pub device_id_base: u64,
}

#[derive(Args, Debug, Clone)]
pub struct EchoControllerArgs {
    /// where to listen for the switches, loopback only
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:6653",
          value_parser = loopback("--listen"))]
    pub listen: SocketAddr,
    /// stop after S seconds
    #[arg(long, value_name = "S")]
    pub max_time: Option<f64>,
}

#[derive(Args, Debug, Clone)]
pub struct P4RuntimeEchoArgs {
    /// the devices to dial, as a probe's --devices-file wrote them (repeatable)
    #[arg(long, value_name = "F")]
    pub devices_file: Vec<String>,
    /// one device to dial (repeatable)
    #[arg(long, value_name = "ID@127.0.0.1:PORT", value_parser = parse_device)]
    pub device: Vec<(u64, String)>,
    /// election id of our primary claim
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub election_id: u64,
    /// worker threads
    #[arg(long, value_name = "T", default_value_t = 1)]
    pub threads: usize,
    /// stop after S seconds
    #[arg(long, value_name = "S")]
    pub max_time: Option<f64>,
}

/// `--device ID@127.0.0.1:PORT`.
pub fn parse_device(v: &str) -> Result<(u64, String), String> {
    let (id, addr) = v
        .split_once('@')
        .ok_or_else(|| "expected ID@127.0.0.1:PORT".to_string())?;
    let id: u64 = id
        .parse()
        .map_err(|_| format!("device id {id:?} is not a number"))?;
    config::parse_loopback(addr, "--device")?;
    Ok((id, addr.to_string()))
}

/// Seconds as a Duration; refuses what `Duration::from_secs_f64` would panic on.
pub fn max_time(flag: &str, v: Option<f64>) -> Result<Option<Duration>, String> {
    v.map(|s| {
        Duration::try_from_secs_f64(s).map_err(|_| format!("{flag} {s}: expected seconds >= 0"))
    })
    .transpose()
}

impl LoadArgs {
    fn into_config(self, protocol: Protocol) -> Config {
        let base = Config {
            protocol,
            ..Config::default()
        };
        let connect_timeout = self.connect_timeout.unwrap_or(match protocol {
            // the controller is started after the devices listen, and may take a while to
            // import, compile and connect
            Protocol::P4Runtime => 60.0,
            Protocol::OpenFlow13 => base.connect_timeout,
        });
        let duration = match (self.duration, self.packets) {
            (Some(d), _) => d,
            (None, Some(_)) => 3600.0, // a packet count, no duration: the count ends the window
            (None, None) => base.duration,
        };
        Config {
            switches: self.switches,
            mode: match self.mode {
                ModeArg::Rate => Mode::Rate,
                ModeArg::Throughput => Mode::Throughput,
                ModeArg::Latency => Mode::Latency,
            },
            rate: self.rate,
            window: self.window,
            warmup: self.warmup,
            duration,
            packets: self.packets,
            drain: self.drain,
            timeout: self.timeout,
            hosts: self.hosts,
            ports: self.ports,
            threads: self.threads,
            interval: self.interval,
            connect_timeout,
            settle: self.settle,
            ..base
        }
    }
}

impl OpenflowArgs {
    /// The run's configuration, validated (errors name the option).
    pub fn config(self) -> Result<Config, String> {
        let c = Config {
            controller: self.controller,
            dpid_base: self.dpid_base,
            buffer_ids: self.buffer_ids,
            reason_action: self.reason == ReasonArg::Action,
            table_id: self.table_id,
            vlan: self.vlan,
            ..self.load.into_config(Protocol::OpenFlow13)
        };
        c.validate()?;
        Ok(c)
    }
}

impl P4RuntimeArgs {
    /// The run's configuration, validated (errors name the option).
    pub fn config(self) -> Result<Config, String> {
        let c = Config {
            listen: self.listen,
            devices_file: self.devices_file,
            dpid_base: self.device_id_base,
            ..self.load.into_config(Protocol::P4Runtime)
        };
        c.validate()?;
        Ok(c)
    }
}

const OPENFLOW_ONLY: &[&str] = &[
    "--controller",
    "--buffer-ids",
    "--reason",
    "--table-id",
    "--vlan",
];
const P4RUNTIME_ONLY: &[&str] = &["--listen", "--devices-file", "--device-id-base"];

/// An option of the other protocol's subcommand, named as such (clap alone would only say
/// it is unexpected): `args` as given, the subcommand first.
pub fn other_protocols_option(args: &[String]) -> Option<String> {
    let (this, other, theirs) = match args.first().map(String::as_str) {
        Some("openflow") => ("openflow", "p4runtime", P4RUNTIME_ONLY),
        Some("p4runtime") => ("p4runtime", "openflow", OPENFLOW_ONLY),
        _ => return None,
    };
    let flag = args[1..]
        .iter()
        .map(|a| a.split_once('=').map_or(a.as_str(), |(f, _)| f))
        .find(|f| theirs.contains(f))?;
    Some(format!(
        "{flag} is an option of `sdnperf-probe {other}`, not of `{this}` (see --help)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("sdnperf-probe").chain(args.iter().copied()))
    }

    fn openflow(args: &[&str]) -> Result<Config, String> {
        let mut all = vec!["openflow"];
        all.extend(args);
        match parse(&all).map_err(|e| e.to_string())?.command {
            Command::Openflow(a) => a.config(),
            other => panic!("{other:?}"),
        }
    }

    fn p4runtime(args: &[&str]) -> Result<Config, String> {
        let mut all = vec!["p4runtime"];
        all.extend(args);
        match parse(&all).map_err(|e| e.to_string())?.command {
            Command::P4Runtime(a) => a.config(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn defaults_are_the_configs_and_p4runtime_waits_longer_to_connect() {
        let c = openflow(&[]).unwrap();
        let d = Config::default();
        assert_eq!(c.protocol, Protocol::OpenFlow13);
        assert_eq!(
            (c.switches, c.mode, c.rate, c.window, c.duration, c.hosts, c.ports),
            (d.switches, d.mode, d.rate, d.window, d.duration, d.hosts, d.ports)
        );
        assert_eq!(
            (c.connect_timeout, c.settle, c.controller),
            (10.0, 0.5, d.controller)
        );
        let p = p4runtime(&[]).unwrap();
        assert_eq!((p.protocol, p.connect_timeout), (Protocol::P4Runtime, 60.0));
        assert_eq!(p.listen, d.listen);
    }

    #[test]
    fn every_option_reaches_the_config_with_or_without_an_equals_sign() {
        let c = openflow(&[
            "--switches",
            "3",
            "--mode",
            "rate",
            "--rate=250",
            "--window",
            "8",
            "--warmup",
            "0.5",
            "--duration",
            "2",
            "--packets",
            "99",
            "--drain",
            "0.25",
            "--timeout",
            "2",
            "--hosts",
            "10",
            "--ports",
            "6",
            "--threads",
            "2",
            "--interval",
            "0.5",
            "--connect-timeout",
            "3",
            "--settle",
            "0",
            "--controller",
            "127.0.0.1:16653",
            "--dpid-base",
            "7",
            "--buffer-ids",
            "--reason",
            "action",
            "--table-id",
            "4",
            "--vlan",
            "100",
        ])
        .unwrap();
        assert_eq!(
            (c.switches, c.mode, c.rate, c.window),
            (3, Mode::Rate, 250.0, 8)
        );
        assert_eq!(
            (c.warmup, c.duration, c.packets, c.drain),
            (0.5, 2.0, Some(99), 0.25)
        );
        assert_eq!((c.timeout, c.hosts, c.ports, c.threads), (2.0, 10, 6, 2));
        assert_eq!((c.interval, c.connect_timeout, c.settle), (0.5, 3.0, 0.0));
        assert_eq!(c.controller, "127.0.0.1:16653".parse().unwrap());
        assert_eq!(
            (c.dpid_base, c.buffer_ids, c.reason_action),
            (7, true, true)
        );
        assert_eq!((c.table_id, c.vlan), (4, Some(100)));
        let p = p4runtime(&[
            "--listen",
            "127.0.0.1:50001",
            "--devices-file",
            "/tmp/d.json",
            "--device-id-base",
            "5",
            "--mode",
            "latency",
        ])
        .unwrap();
        assert_eq!(p.listen, "127.0.0.1:50001".parse().unwrap());
        assert_eq!(
            (p.devices_file.as_deref(), p.dpid_base),
            (Some("/tmp/d.json"), 5)
        );
        assert_eq!(p.mode, Mode::Latency);
    }

    #[test]
    fn a_repeated_option_takes_its_last_value_as_the_ctlbench_runner_relies_on() {
        // sdnperf/ctlbench: the load's --hosts, then Faucet's own --hosts after it
        let c = openflow(&["--hosts", "100", "--reason", "action", "--hosts", "5000"]).unwrap();
        assert_eq!((c.hosts, c.reason_action), (5000, true));
        let p = p4runtime(&["--switches", "2", "--switches=3"]).unwrap();
        assert_eq!(p.switches, 3);
        match parse(&[
            "p4runtime-echo",
            "--device",
            "1@127.0.0.1:1",
            "--device",
            "2@127.0.0.1:2",
        ])
        .unwrap()
        .command
        {
            Command::P4RuntimeEcho(a) => assert_eq!(a.device.len(), 2), // lists still add up
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_packet_count_without_a_duration_lets_the_count_end_the_window() {
        assert_eq!(openflow(&["--packets", "2000"]).unwrap().duration, 3600.0);
        assert_eq!(
            openflow(&["--packets", "2000", "--duration=3"])
                .unwrap()
                .duration,
            3.0
        );
    }

    #[test]
    fn errors_name_the_option() {
        for (args, needle) in [
            (&["--mode", "fast"][..], "--mode"),
            (&["--rate", "x"], "--rate"),
            (&["--vlan", "0"], "--vlan"),
            (&["--vlan", "4095"], "--vlan"),
            (&["--controller", "10.0.0.1:6653"], "only loopback"),
            (&["--switches", "0"], "--switches"),
            (&["--window"], "--window"),
            (&["--bogus"], "--bogus"),
            (&["--mode", "rate", "--rate", "0"], "--rate"),
        ] {
            let e = openflow(args).unwrap_err();
            assert!(e.contains(needle), "{args:?}: {e}");
        }
        let e = p4runtime(&["--listen", "192.0.2.1:1"]).unwrap_err();
        assert!(e.contains("--listen") && e.contains("loopback"), "{e}");
    }

    #[test]
    fn the_other_protocols_options_are_named_as_such() {
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let e = other_protocols_option(&args(&["p4runtime", "--controller=127.0.0.1:1"]));
        assert_eq!(
            e.as_deref(),
            Some("--controller is an option of `sdnperf-probe openflow`, not of `p4runtime` (see --help)")
        );
        let e = other_protocols_option(&args(&["openflow", "--switches", "2", "--listen", "x"]));
        assert!(e
            .unwrap()
            .starts_with("--listen is an option of `sdnperf-probe p4runtime`"));
        assert_eq!(
            other_protocols_option(&args(&["openflow", "--vlan", "3"])),
            None
        );
        assert_eq!(
            other_protocols_option(&args(&["echo-controller", "--listen", "x"])),
            None
        );
    }

    #[test]
    fn the_echo_controllers_take_their_options() {
        match parse(&[
            "echo-controller",
            "--listen",
            "127.0.0.1:16653",
            "--max-time",
            "2",
        ])
        .unwrap()
        .command
        {
            Command::EchoController(a) => {
                assert_eq!(a.listen, "127.0.0.1:16653".parse().unwrap());
                assert_eq!(a.max_time, Some(2.0));
            }
            other => panic!("{other:?}"),
        }
        match parse(&["echo-controller"]).unwrap().command {
            Command::EchoController(a) => assert_eq!(a.listen.port(), 6653),
            other => panic!("{other:?}"),
        }
        match parse(&[
            "p4runtime-echo",
            "--device",
            "1@127.0.0.1:50001",
            "--device=2@127.0.0.1:50002",
            "--election-id",
            "9",
            "--threads",
            "2",
        ])
        .unwrap()
        .command
        {
            Command::P4RuntimeEcho(a) => {
                assert_eq!(
                    a.device,
                    vec![(1, "127.0.0.1:50001".into()), (2, "127.0.0.1:50002".into())]
                );
                assert_eq!((a.election_id, a.threads, a.max_time), (9, 2, None));
            }
            other => panic!("{other:?}"),
        }
        let e = parse(&["p4runtime-echo", "--device", "x@127.0.0.1:1"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--device") && e.contains("not a number"), "{e}");
        let e = parse(&["echo-controller", "--max-time", "soon"])
            .unwrap_err()
            .to_string();
        assert!(e.contains("--max-time"), "{e}");
        assert!(max_time("--max-time", Some(-1.0))
            .unwrap_err()
            .contains("--max-time"));
    }

    #[test]
    fn help_is_a_success_and_lists_every_subcommand() {
        let e = parse(&["--help"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::DisplayHelp);
        assert_eq!(e.exit_code(), 0);
        let text = e.to_string();
        for sub in ["openflow", "p4runtime", "echo-controller", "p4runtime-echo"] {
            assert!(text.contains(sub), "{sub} missing from:\n{text}");
        }
        let e = parse(&["openflow", "--help"]).unwrap_err();
        assert_eq!(e.exit_code(), 0);
        assert!(e.to_string().contains("--buffer-ids"));
        assert_eq!(parse(&["nonsense"]).unwrap_err().exit_code(), 2);
    }
}
