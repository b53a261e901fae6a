//! Command-line options both switch binaries share (`sdnperf-switch run` and
//! `sdnperf-switch-grpc`): ports and I/O, the data-plane loop's knobs, and the flags of
//! BMv2's simple_switch / simple_switch_grpc that launchers (the P4 tutorials, p4-utils)
//! pass, so either binary can stand in for BMv2. Flags we accept but do not implement
//! are refused when they would change behaviour (`Bmv2Flags::check`); docs/switch.md
//! has the mapping.

use crate::dataplane::IoKind;
use clap::Args;

/// `-i N@IFACE`: port number N bound to interface IFACE.
pub fn parse_iface(v: &str) -> Result<(u32, String), String> {
    let (n, name) = v
        .split_once('@')
        .ok_or_else(|| format!("{}: expected N@IFACE", v))?;
    let n: u32 = n
        .parse()
        .map_err(|_| format!("{}: bad port number {:?}", v, n))?;
    if n as usize >= crate::switch::MAX_PORTS || n == crate::exec::DROP_PORT {
        return Err(format!("{}: port number must be < 511", v));
    }
    if name.is_empty() {
        return Err(format!("{}: empty interface name", v));
    }
    Ok((n, name.to_string()))
}

fn parse_io(v: &str) -> Result<IoKind, String> {
    IoKind::parse(v)
}

/// Ports, I/O and loop options.
#[derive(Args, Debug, Clone)]
pub struct PortArgs {
    /// bind port N to interface IFACE (repeat per port)
    #[arg(short = 'i', long = "interface", value_name = "N@IFACE", value_parser = parse_iface)]
    pub ifaces: Vec<(u32, String)>,
    /// port whose packets go to the control plane (packet-in) and where packet-outs enter
    #[arg(long, value_name = "N")]
    pub cpu_port: Option<u32>,
    /// without virtio-net headers: hosts must not send offloaded (TSO/GSO) packets; lets `--io auto` use AF_XDP
    #[arg(long)]
    pub no_vnet: bool,
    /// packet I/O: auto (AF_XDP with --no-vnet, else AF_PACKET), af_packet, af_xdp
    #[arg(long, value_name = "KIND", default_value = "auto", value_parser = parse_io)]
    pub io: IoKind,
    /// receive ring size per port in frames of 2 KiB (a power of two; AF_PACKET and AF_XDP)
    #[arg(long, value_name = "N", default_value_t = crate::ports::RX_FRAMES_DEFAULT)]
    pub rx_frames: usize,
    /// AF_XDP ports: run programs in the fast path's subset in the kernel's XDP hook
    #[arg(long)]
    pub xdp_fastpath: bool,
    /// never sleep: spin on the rings (lowest latency, one core at 100 %)
    #[arg(long)]
    pub busy_poll: bool,
    /// keep polling this long after the last packet before sleeping (0: sleep at once; for benchmarks)
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub spin_us: u64,
    /// recirculation/resubmission passes per packet before it is dropped
    #[arg(long, value_name = "N")]
    pub max_passes: Option<u32>,
    /// recirculation path latency: a recirculated packet re-enters ingress this long after
    /// it left egress (0: at once, the data-plane thread spins while packets loop; more:
    /// it sleeps between passes, and each pass lasts at least this long)
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub recirc_pace_us: u64,
    /// exit when the process that started the switch exits
    #[arg(long)]
    pub die_with_parent: bool,
    /// serve ctl text commands (simple_switch_CLI-like) on a loopback TCP address
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "ctl_socket")]
    pub ctl: Option<String>,
    /// serve ctl text commands on a Unix socket
    #[arg(long, value_name = "PATH")]
    pub ctl_socket: Option<String>,
}

impl PortArgs {
    pub fn ctl_listen(&self) -> Option<crate::ctl::Listen> {
        match (&self.ctl, &self.ctl_socket) {
            (Some(a), _) => Some(crate::ctl::Listen::Tcp(a.clone())),
            (None, Some(p)) => Some(crate::ctl::Listen::Unix(p.clone())),
            _ => None,
        }
    }

    /// Applies what needs to happen at start-up (the parent-death signal).
    pub fn apply_process_options(&self) {
        if self.die_with_parent {
            // SIGTERM when the process that started us exits (even if it is killed)
            unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) };
        }
    }

    pub fn loop_opts(&self, cpu_port: Option<u32>, name: &str) -> crate::dataplane::Opts {
        crate::dataplane::Opts {
            cpu_port,
            busy_poll: self.busy_poll,
            spin_ns: self.spin_us * 1000,
            xdp_fastpath: self.xdp_fastpath,
            name: name.into(),
            pcap: None,
        }
    }
}

/// simple_switch's own flags that launchers pass.
#[derive(Args, Debug, Clone, Default)]
pub struct Bmv2Flags {
    /// device id (P4Runtime's device_id; for `run` only reported)
    #[arg(long, value_name = "ID")]
    pub device_id: Option<u64>,
    /// log to the console (our messages always go to stderr; with --log-level trace|debug, per-packet traces too)
    #[arg(long)]
    pub log_console: bool,
    /// trace or debug: per-packet traces (parser states, conditions, table lookups) on stderr; info/warn/error/critical/off: none
    #[arg(long, value_name = "LEVEL")]
    pub log_level: Option<String>,
    /// BMv2's Thrift runtime port: we have no Thrift server (use `sdnperf-switch ctl` or P4Runtime); accepted and reported
    #[arg(long, value_name = "PORT")]
    pub thrift_port: Option<u16>,
    /// per-port capture files of received and sent packets in DIR (BMv2's names: IFACE_in.pcap, IFACE_out.pcap; default: the current directory); turns --xdp-fastpath off
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = ".")]
    pub pcap: Option<String>,
    /// BMv2: event logging over nanomsg; refused here
    #[arg(long, value_name = "ADDR")]
    pub nanolog: Option<String>,
    /// priority queues per egress port: 1 only (more are refused)
    #[arg(long, value_name = "N")]
    pub priority_queues: Option<u32>,
}

impl Bmv2Flags {
    /// Refuses flags that would change behaviour and that we do not implement; returns
    /// notes about accepted flags that do nothing here. `supported` is the binary's
    /// full option list (for the message).
    pub fn check(&self, supported: &str) -> Result<Vec<String>, String> {
        let refuse = |flag: &str, why: &str| {
            Err(format!(
                "{} is not implemented ({}); supported options: {}",
                flag, why, supported
            ))
        };
        if self.nanolog.is_some() {
            return refuse("--nanolog", "event logging over nanomsg");
        }
        if let Some(n) = self.priority_queues {
            if n > 1 {
                return refuse(
                    "--priority-queues",
                    "one queue per egress port; --priority-queues 1 is accepted",
                );
            }
        }
        if let Some(l) = &self.log_level {
            if !["trace", "debug", "info", "warn", "error", "critical", "off"].contains(&l.as_str())
            {
                return Err(format!(
                    "--log-level {}: expected trace, debug, info, warn, error, critical or off",
                    l
                ));
            }
        }
        let mut notes = vec![];
        if let Some(p) = self.thrift_port {
            notes.push(format!("--thrift-port {}: no Thrift server here; runtime commands go to `sdnperf-switch ctl` (--ctl/--ctl-socket) or P4Runtime", p));
        }
        Ok(notes)
    }

    /// Per-packet tracing on stderr (BMv2's trace/debug log levels).
    pub fn trace(&self) -> bool {
        matches!(self.log_level.as_deref(), Some("trace" | "debug"))
    }
}

/// Flags that are parsed only to be refused (left out of "supported options").
pub const REFUSED: [&str; 1] = ["--nanolog"];

/// Every long option of `cmd` as "--name" (for "supported options" messages), without
/// the ones we only parse to refuse.
pub fn long_options(cmd: &clap::Command) -> String {
    let mut v: Vec<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_long().map(|l| format!("--{}", l)))
        .collect();
    v.retain(|x| x != "--help" && x != "--version" && !REFUSED.contains(&x.as_str()));
    v.join(" ")
}

/// Parses with clap; an unknown flag is refused with its name and the supported list (of
/// the subcommand it was given to).
pub fn parse_or_exit<T: clap::Parser + clap::CommandFactory>(
    args: impl IntoIterator<Item = String>,
) -> T {
    let args: Vec<String> = args.into_iter().collect();
    match T::try_parse_from(&args) {
        Ok(t) => t,
        Err(e) => {
            if e.kind() == clap::error::ErrorKind::UnknownArgument {
                let mut cmd = T::command();
                // the deepest subcommand named on the command line
                for a in args.iter().skip(1) {
                    match cmd.find_subcommand(a) {
                        Some(sub) => cmd = sub.clone(),
                        None if !a.starts_with('-') => break,
                        None => {}
                    }
                }
                let bad = e
                    .get(clap::error::ContextKind::InvalidArg)
                    .map(|v| v.to_string())
                    .unwrap_or_default();
                eprintln!(
                    "error: unknown option {}; supported options: {}",
                    bad,
                    long_options(&cmd)
                );
                std::process::exit(2);
            }
            e.exit()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iface_spec() {
        assert_eq!(parse_iface("3@veth1").unwrap(), (3, "veth1".to_string()));
        assert!(parse_iface("veth1").unwrap_err().contains("N@IFACE"));
        assert!(parse_iface("x@veth1")
            .unwrap_err()
            .contains("bad port number"));
        assert!(parse_iface("511@veth1").unwrap_err().contains("< 511"));
        assert!(parse_iface("2@").unwrap_err().contains("empty"));
    }

    #[test]
    fn unimplemented_bmv2_flags_are_refused_by_name() {
        let f = Bmv2Flags {
            nanolog: Some("ipc:///tmp/x".into()),
            ..Default::default()
        };
        let e = f.check("--a --b").unwrap_err();
        assert!(
            e.starts_with("--nanolog is not implemented") && e.ends_with("--a --b"),
            "{}",
            e
        );
        let f = Bmv2Flags {
            priority_queues: Some(8),
            ..Default::default()
        };
        assert!(f.check("").unwrap_err().contains("--priority-queues"));
        let f = Bmv2Flags {
            priority_queues: Some(1),
            thrift_port: Some(9090),
            log_console: true,
            log_level: Some("info".into()),
            ..Default::default()
        };
        let notes = f.check("").unwrap();
        assert!(notes[0].contains("--thrift-port 9090"));
        assert!(!f.trace());
    }
}
