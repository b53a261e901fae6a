use std::process::ExitCode;
use std::time::Duration;

use sdnperf_probe::{config, echo, engine, report};

const HELP: &str = "\
sdnperf-probe — controller benchmark load generator (OpenFlow 1.3)

USAGE:
  sdnperf-probe openflow [OPTIONS]        emulate switches, flood packet-ins, print JSON
  sdnperf-probe echo-controller --listen 127.0.0.1:PORT [--max-time S]
                                          answer every packet-in with a packet-out

OPENFLOW OPTIONS (defaults in brackets):
  --controller ADDR     controller address, loopback only [127.0.0.1:6653]
  --switches N          emulated switches = TCP connections [1]
  --mode M              rate | throughput | latency [throughput]
  --rate PPS            packet-ins per second per switch (rate mode) [1000]
  --window W            outstanding packet-ins per switch (throughput mode) [64]
  --warmup S            warm-up seconds, not measured [1]
  --duration S          measurement seconds [5]
  --packets N           per-switch packet count that ends the measurement early
  --drain S             seconds to wait for late answers after the window [1]
  --timeout S           an unanswered packet-in is lost after S seconds [1]
  --hosts H             distinct host MACs behind each switch [100]
  --ports P             ports per switch [4]
  --dpid-base B         datapath id of the first switch [1]
  --threads T           worker threads [1]
  --buffer-ids          packet-ins carry buffer ids (else OFP_NO_BUFFER + full frame)
  --reason R           packet-in reason: no-match | action [no-match]
  --table-id N          table id in packet-ins [0]
  --vlan VID            802.1Q-tag the frames (e.g. for Faucet's pipeline)
  --interval S          time-series interval [1]
  --connect-timeout S   time allowed for connections and handshakes [10]
  --settle S            pause after the handshakes before the load [0.5]

Output: one JSON document on stdout, schema \"sdnperf-probe/1\" (see rust/probe/README.md).
Exit status: 0 when at least one switch completed its handshake, 3 when none did, 2 on bad
arguments.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    match args[0].as_str() {
        "openflow" => {
            let cfg = match config::parse_openflow_args(&args[1..]) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("sdnperf-probe: {e}");
                    return ExitCode::from(2);
                }
            };
            let out = engine::run(cfg.clone());
            let doc = report::build(&cfg, &out);
            println!("{}", serde_json::to_string(&doc).unwrap_or_else(|_| "{}".into()));
            if doc["switches"]["ready"].as_u64().unwrap_or(0) == 0 {
                ExitCode::from(3)
            } else {
                ExitCode::SUCCESS
            }
        }
        "echo-controller" => {
            let mut listen = None;
            let mut max_time = None;
            let mut it = args[1..].iter();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--listen" => listen = it.next().cloned(),
                    "--max-time" => max_time = it.next().and_then(|v| v.parse::<f64>().ok()),
                    _ => {
                        eprintln!("sdnperf-probe echo-controller: unknown option {a:?}");
                        return ExitCode::from(2);
                    }
                }
            }
            let listen = listen.unwrap_or_else(|| "127.0.0.1:6653".into());
            let addr = match config::parse_loopback(&listen, "--listen") {
                Ok(a) => a,
                Err(e) => {
                    eprintln!("sdnperf-probe: {e}");
                    return ExitCode::from(2);
                }
            };
            match echo::run(addr, max_time.map(Duration::from_secs_f64)) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sdnperf-probe echo-controller: {e}");
                    ExitCode::from(1)
                }
            }
        }
        other => {
            eprintln!("sdnperf-probe: unknown command {other:?} (see --help)");
            ExitCode::from(2)
        }
    }
}
