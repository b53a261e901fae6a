use std::process::ExitCode;
use std::time::Duration;

use sdnperf_probe::{config, echo, engine, p4rt, report};

const HELP: &str = "\
sdnperf-probe — controller benchmark load generator (OpenFlow 1.3 and P4Runtime)

USAGE:
  sdnperf-probe openflow [OPTIONS]        emulate OpenFlow switches that connect to the
                                          controller, flood packet-ins, print JSON
  sdnperf-probe p4runtime [OPTIONS]       emulate P4Runtime devices (gRPC servers) the
                                          controller connects to, flood packet-ins, print JSON
  sdnperf-probe echo-controller --listen 127.0.0.1:PORT [--max-time S]
                                          OpenFlow: answer every packet-in with a packet-out
  sdnperf-probe p4runtime-echo (--devices-file F | --device ID@127.0.0.1:PORT ...)
                               [--election-id N] [--threads T] [--max-time S]
                                          P4Runtime: dial the devices, become primary, push
                                          a minimal pipeline, answer every packet-in with a
                                          packet-out

COMMON OPTIONS (defaults in brackets):
  --switches N          emulated switches / devices [1]
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
  --threads T           worker threads [1]
  --interval S          time-series interval [1]
  --connect-timeout S   time allowed for connections and handshakes [10; p4runtime 60]
  --settle S            pause after the handshakes before the load [0.5]

OPENFLOW OPTIONS:
  --controller ADDR     controller address, loopback only [127.0.0.1:6653]
  --dpid-base B         datapath id of the first switch [1]
  --buffer-ids          packet-ins carry buffer ids (else OFP_NO_BUFFER + full frame)
  --reason R           packet-in reason: no-match | action [no-match]
  --table-id N          table id in packet-ins [0]
  --vlan VID            802.1Q-tag the frames (e.g. for Faucet's pipeline)

P4RUNTIME OPTIONS:
  --listen ADDR         where device 1 listens; device i on PORT+i-1; port 0 = any free
                        ports, loopback only [127.0.0.1:0]
  --devices-file F      write {\"devices\": [{\"device_id\", \"address\"}]} to F once listening
                        (start the controller after it appears)
  --device-id-base B    P4Runtime device id of the first device [1]
  A device is ready once a controller is primary on its stream and has committed a
  pipeline; packet-in metadata follow that P4Info's \"packet_in\" header (ingress_port).
  Packet-outs answer by the id in their frame, Writes by the host MACs in their match.

Output: one JSON document on stdout, schema \"sdnperf-probe/1\" (see rust/probe/README.md).
SIGTERM or SIGINT ends the run early (the measurement window ends, the drain runs) and
the report is printed as usual.
Exit status: 0 when at least one switch completed its handshake, 3 when none did, 2 on bad
arguments, 1 when the devices cannot listen.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.is_empty() || args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{HELP}");
        return ExitCode::SUCCESS;
    }
    match args[0].as_str() {
        "openflow" => {
            engine::install_stop_handler();
            let cfg = match config::parse_openflow_args(&args[1..]) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("sdnperf-probe: {e}");
                    return ExitCode::from(2);
                }
            };
            let out = engine::run(cfg.clone());
            print_report(&cfg, &out)
        }
        "p4runtime" => {
            engine::install_stop_handler();
            let cfg = match config::parse_p4runtime_args(&args[1..]) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("sdnperf-probe: {e}");
                    return ExitCode::from(2);
                }
            };
            let out = match p4rt::run(cfg.clone()) {
                Ok(o) => o,
                Err(e) => {
                    eprintln!("sdnperf-probe p4runtime: {e}");
                    return ExitCode::from(1);
                }
            };
            print_report(&cfg, &out)
        }
        "p4runtime-echo" => match p4runtime_echo(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err((code, e)) => {
                eprintln!("sdnperf-probe p4runtime-echo: {e}");
                ExitCode::from(code)
            }
        },
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

/// Prints the JSON report of a finished run (either protocol); exit 3 when no switch
/// ever completed its handshake.
fn print_report(cfg: &config::Config, out: &engine::RunOutput) -> ExitCode {
    let doc = report::build(cfg, out);
    println!(
        "{}",
        serde_json::to_string(&doc).unwrap_or_else(|_| "{}".into())
    );
    if doc["switches"]["ready"].as_u64().unwrap_or(0) == 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// `sdnperf-probe p4runtime-echo`: (exit code, message) on errors.
fn p4runtime_echo(args: &[String]) -> Result<(), (u8, String)> {
    let mut devices: Vec<(u64, String)> = Vec::new();
    let (mut election, mut threads, mut max_time) = (1u64, 1usize, None);
    let mut it = args.iter();
    let bad = |m: String| (2u8, m);
    while let Some(a) = it.next() {
        let mut val = || {
            it.next()
                .cloned()
                .ok_or_else(|| bad(format!("{a} needs a value")))
        };
        match a.as_str() {
            "--devices-file" => devices.extend(p4rt::read_devices_file(&val()?).map_err(bad)?),
            "--device" => {
                let v = val()?;
                let (id, addr) = v
                    .split_once('@')
                    .ok_or_else(|| bad(format!("--device {v}: expected ID@127.0.0.1:PORT")))?;
                let id: u64 = id
                    .parse()
                    .map_err(|_| bad(format!("--device {v}: device id {id:?} is not a number")))?;
                config::parse_loopback(addr, "--device").map_err(bad)?;
                devices.push((id, addr.to_string()));
            }
            "--election-id" => {
                election = val()?
                    .parse()
                    .map_err(|_| bad("--election-id: expected a number".into()))?
            }
            "--threads" => {
                threads = val()?
                    .parse()
                    .map_err(|_| bad("--threads: expected a number".into()))?
            }
            "--max-time" => {
                max_time = Some(Duration::from_secs_f64(
                    val()?
                        .parse()
                        .map_err(|_| bad("--max-time: expected seconds".into()))?,
                ))
            }
            _ => return Err(bad(format!("unknown option {a:?}"))),
        }
    }
    if devices.is_empty() {
        return Err(bad(
            "no devices: give --devices-file F or --device ID@127.0.0.1:PORT".into(),
        ));
    }
    p4rt::echo::run(devices, election, threads, max_time).map_err(|e| (1, e))
}
