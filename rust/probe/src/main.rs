use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use sdnperf_probe::cli::{self, Cli, Command};
use sdnperf_probe::{config, echo, engine, p4rt, report};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 1 {
        // no command: the overview, as --help gives it
        let _ = Cli::command().print_help();
        return ExitCode::SUCCESS;
    }
    if let Some(e) = cli::other_protocols_option(&args[1..]) {
        eprintln!("sdnperf-probe: {e}");
        return ExitCode::from(2);
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(c) => c,
        // --help and --version print and exit 0; errors name the option and exit 2
        Err(e) => e.exit(),
    };
    match cli.command {
        Command::Openflow(a) => {
            engine::install_stop_handler();
            let cfg = match a.config() {
                Ok(c) => c,
                Err(e) => return bad_arguments(&e),
            };
            let out = engine::run(cfg.clone());
            print_report(&cfg, &out)
        }
        Command::P4Runtime(a) => {
            engine::install_stop_handler();
            let cfg = match a.config() {
                Ok(c) => c,
                Err(e) => return bad_arguments(&e),
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
        Command::P4RuntimeEcho(a) => match p4runtime_echo(a) {
            Ok(()) => ExitCode::SUCCESS,
            Err((code, e)) => {
                eprintln!("sdnperf-probe p4runtime-echo: {e}");
                ExitCode::from(code)
            }
        },
        Command::EchoController(a) => {
            let max_time = match cli::max_time("--max-time", a.max_time) {
                Ok(t) => t,
                Err(e) => return bad_arguments(&e),
            };
            match echo::run(a.listen, max_time) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("sdnperf-probe echo-controller: {e}");
                    ExitCode::from(1)
                }
            }
        }
    }
}

fn bad_arguments(e: &str) -> ExitCode {
    eprintln!("sdnperf-probe: {e}");
    ExitCode::from(2)
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
fn p4runtime_echo(a: cli::P4RuntimeEchoArgs) -> Result<(), (u8, String)> {
    let bad = |m: String| (2u8, m);
    let mut devices: Vec<(u64, String)> = Vec::new();
    for f in &a.devices_file {
        devices.extend(p4rt::read_devices_file(f).map_err(bad)?);
    }
    devices.extend(a.device);
    if devices.is_empty() {
        return Err(bad(
            "no devices: give --devices-file F or --device ID@127.0.0.1:PORT".into(),
        ));
    }
    let max_time = cli::max_time("--max-time", a.max_time).map_err(bad)?;
    p4rt::echo::run(devices, a.election_id, a.threads, max_time).map_err(|e| (1, e))
}
