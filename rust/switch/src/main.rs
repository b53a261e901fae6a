use clap::{Args, CommandFactory, Parser, Subcommand};
use sdnperf_switch::cli::{Bmv2Flags, PortArgs};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::impair::{parse_port_spec, Direction, ImpairCfg};
use sdnperf_switch::ports::{afpacket::AfPacketPort, xdpgen::XdpGen};
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{ctl, dataplane};
use sdnperf_switch::{load_program, stf};
use std::io::Write;

fn udp_frames(
    size: usize,
    dmac: [u8; 6],
    smac: [u8; 6],
    dst_ip: u32,
    step: u32,
    flows: u32,
) -> Vec<Vec<u8>> {
    let mut pkts: Vec<Vec<u8>> = vec![];
    for f in 0..flows.min(4096) {
        let mut p = vec![0u8; size];
        p[0..6].copy_from_slice(&dmac);
        p[6..12].copy_from_slice(&smac);
        p[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip_len = (size - 14) as u16;
        let dst = dst_ip.wrapping_add(f.wrapping_mul(step));
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&ip_len.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&0x0a63_0001u32.to_be_bytes());
        ip[16..20].copy_from_slice(&dst.to_be_bytes());
        let c = sdnperf_switch::externs::csum16(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        p[14..34].copy_from_slice(&ip);
        p[34..36].copy_from_slice(&9u16.to_be_bytes());
        p[36..38].copy_from_slice(&9u16.to_be_bytes());
        p[38..40].copy_from_slice(&(ip_len - 20).to_be_bytes());
        pkts.push(p);
    }
    pkts
}

/// Pipeline-only benchmark (no kernel I/O): runs UDP frames through the program on
/// in-memory ports, one core, and prints ns/packet.
#[derive(Args, Debug)]
struct MembenchArgs {
    /// BMv2 JSON (or .p4) program
    program: String,
    /// ctl commands to load first (one per line)
    #[arg(long, value_name = "FILE")]
    commands: Option<String>,
    #[arg(long, default_value_t = 2_000_000)]
    packets: usize,
    /// first destination IPv4 address
    #[arg(long, value_name = "ADDR", default_value = "10.99.0.2", value_parser = parse_u32)]
    dst_ip: u32,
    /// address step between flows
    #[arg(long, default_value_t = 1)]
    dst_step: u32,
    /// number of destination addresses cycled over
    #[arg(long, default_value_t = 1)]
    flows: u32,
    /// ingress port of the frames
    #[arg(long, default_value_t = 1)]
    port: u32,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    ctl::parse_value(s).map(|v| v as u32)
}

fn parse_mac(s: &str) -> Result<[u8; 6], String> {
    let b = (ctl::parse_value(s)? as u64).to_be_bytes();
    Ok([b[2], b[3], b[4], b[5], b[6], b[7]])
}

fn cmd_membench(a: MembenchArgs) -> Result<(), String> {
    let MembenchArgs {
        program,
        commands,
        packets: n,
        dst_ip,
        dst_step: step,
        flows,
        port,
    } = a;
    let flows = flows.max(1);
    let prog = load_program(&program)?;
    let mut sw = Switch::new(Engine::new(prog));
    if let Some(f) = commands {
        let t = std::time::Instant::now();
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {}", f, e))?;
        let mut k = 0;
        for (ln, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            ctl::execute(&mut sw, l).map_err(|e| format!("{}:{}: {}", f, ln + 1, e))?;
            k += 1;
        }
        println!(
            "membench: loaded {} commands in {:.2} s",
            k,
            t.elapsed().as_secs_f64()
        );
    }
    let pkts = udp_frames(
        60,
        [2, 0, 0, 0, 0, 2],
        [2, 0, 0, 0, 0, 1],
        dst_ip,
        step,
        flows,
    );
    let mut out = 0u64;
    let t0 = std::time::Instant::now();
    let mut now = 1_000_000u64;
    for k in 0..n {
        now += 100;
        sw.receive(port, &pkts[k % pkts.len()], None, now);
        sw.service(now);
        for j in sw.take_ready() {
            out += 1;
            sw.recycle(j);
        }
    }
    let el = t0.elapsed().as_secs_f64();
    println!(
        "membench: {} packets in {:.3} s = {:.0} ns/packet = {:.2} Mpps on one core ({} forwarded, {} recirculations)",
        n, el, el * 1e9 / n as f64, n as f64 / el / 1e6, out, sw.stats().recirculations
    );
    Ok(())
}

/// Traffic generator for benchmarks: sends UDP/IPv4 frames of `--size` bytes (without
/// FCS) as fast as possible (or at `--pps`) out of an interface, cycling over `--flows`
/// destination addresses `--dst-ip + i * --dst-step`. Two engines (`--mode`):
/// `xdp` — the kernel transmits a template frame from an XDP program in live-frames
/// test-run mode (several Mpps; one flow only; a veth peer must have NAPI on, i.e. an XDP
/// program or GRO), `af_packet` (default) — AF_PACKET + sendmmsg (any flows, pacing;
/// ~0.1-0.4 Mpps here). `auto` picks xdp for one unpaced flow when the kernel takes it.
#[derive(Args, Debug)]
struct BlastArgs {
    iface: String,
    /// af_packet, xdp or auto
    #[arg(long, default_value = "af_packet", value_parser = ["auto", "xdp", "af_packet"])]
    mode: String,
    /// frame size in bytes without FCS (at least 42)
    #[arg(long, default_value_t = 60)]
    size: usize,
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// packets per second (af_packet; 0 = as fast as possible)
    #[arg(long, default_value_t = 0.0)]
    pps: f64,
    #[arg(long, value_name = "MAC", default_value = "0x020000000002", value_parser = parse_mac)]
    dst_mac: [u8; 6],
    #[arg(long, value_name = "MAC", default_value = "0x020000000001", value_parser = parse_mac)]
    src_mac: [u8; 6],
    #[arg(long, value_name = "ADDR", default_value = "10.99.0.2", value_parser = parse_u32)]
    dst_ip: u32,
    #[arg(long, default_value_t = 1)]
    dst_step: u32,
    #[arg(long, default_value_t = 1)]
    flows: u32,
}

fn cmd_blast(a: BlastArgs) -> Result<(), String> {
    let BlastArgs {
        iface,
        mode,
        size,
        seconds: secs,
        pps,
        dst_mac: dmac,
        src_mac: smac,
        dst_ip,
        dst_step: step,
        flows,
    } = a;
    let flows = flows.max(1);
    let size = size.max(42);
    let pkts = udp_frames(size, dmac, smac, dst_ip, step, flows);
    if mode == "xdp" && (flows > 1 || pps > 0.0) {
        // (one test run costs ~20 µs to ~30 ms of set-up depending on its size, so the
        // kernel engine cannot be paced finely)
        return Err("--mode xdp sends one template frame at full speed: use --flows 1 without --pps, or --mode af_packet".into());
    }
    let t0 = std::time::Instant::now();
    // pacing (af_packet): after each batch, wait until the schedule catches up
    let paced = |sent: u64| {
        if pps > 0.0 {
            let due = sent as f64 / pps;
            let el = t0.elapsed().as_secs_f64();
            if due > el {
                std::thread::sleep(std::time::Duration::from_secs_f64(due - el));
            }
        }
    };
    if mode != "af_packet" && flows == 1 && pps == 0.0 {
        match XdpGen::new(&iface, &pkts[0]) {
            Ok(mut g) => {
                let chunk: u32 = 65536;
                let mut sent = 0u64;
                let mut first = true;
                while t0.elapsed().as_secs_f64() < secs {
                    match g.send(chunk) {
                        Ok(()) => sent += chunk as u64,
                        Err(e) if first && mode == "auto" => {
                            eprintln!("blast: {}; falling back to af_packet", e);
                            break;
                        }
                        Err(e) => return Err(e),
                    }
                    first = false;
                }
                if sent > 0 {
                    let el = t0.elapsed().as_secs_f64();
                    println!(
                        "blast: mode xdp (XDP_TX live frames): {} frames in {:.2} s = {:.0} pps run; the kernel's accepted count is xdp_xmit in `ethtool -S {}`; {} bytes each",
                        sent, el, sent as f64 / el, iface, size
                    );
                    return Ok(());
                }
            }
            Err(e) if mode == "auto" => eprintln!("blast: {}; falling back to af_packet", e),
            Err(e) => return Err(e),
        }
    }
    let mut port = AfPacketPort::open(&iface, false)?;
    let mut k = 0usize;
    let empty: [u8; 0] = [];
    while t0.elapsed().as_secs_f64() < secs {
        for _ in 0..sdnperf_switch::ports::afpacket::BATCH {
            port.queue(&pkts[k % pkts.len()], &empty, None, None, 0);
            k += 1;
        }
        port.flush();
        paced(k as u64);
    }
    let el = t0.elapsed().as_secs_f64();
    println!(
        "blast: mode af_packet (sendmmsg): offered {} frames in {:.2} s = {:.0} pps ({} sent, {} dropped at the socket), {} bytes each",
        k, el, port.tx_count as f64 / el, port.tx_count, port.tx_dropped, size
    );
    Ok(())
}

/// Benchmark sink: attaches an XDP_DROP program to IFACE until SIGINT/SIGTERM or
/// `--seconds` (drops show as xdp_drops in `ethtool -S IFACE`).
fn cmd_xdp_sink(iface: &str, secs: Option<f64>) -> Result<(), String> {
    let secs = secs.unwrap_or(f64::INFINITY);
    let link = sdnperf_switch::ports::xdpgen::attach_drop(iface)?;
    dataplane::install_signal_handlers();
    println!("READY");
    let _ = std::io::stdout().flush();
    let t0 = std::time::Instant::now();
    while !dataplane::STOP.load(std::sync::atomic::Ordering::Relaxed)
        && t0.elapsed().as_secs_f64() < secs
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::close(link) };
    Ok(())
}

/// Runs the switch on Linux interfaces. simple_switch's command line works too: the
/// program as positional JSON, `-i N@IFACE`, `--device-id`, `--log-console`, `--log-level`,
/// `--thrift-port`, `--cpu-port`, `--priority-queues 1` (see docs/switch.md).
#[derive(Args, Debug)]
struct RunArgs {
    /// BMv2 JSON program (or .p4, compiled on the fly)
    #[arg(value_name = "JSON", required_unless_present_any = ["json_opt", "no_p4"])]
    json: Option<String>,
    /// the program, as an option
    #[arg(
        long = "json",
        visible_alias = "program",
        value_name = "PROG",
        conflicts_with = "json"
    )]
    json_opt: Option<String>,
    /// simple_switch's start without a program: refused (`run` needs one; sdnperf-switch-grpc takes it by P4Runtime)
    #[arg(long)]
    no_p4: bool,
    #[command(flatten)]
    ports: PortArgs,
    #[command(flatten)]
    bmv2: Bmv2Flags,
    /// impair a port: N:[direction=in|out|both,]delay=5ms,jitter=1ms,loss=1%,rate=100mbit,seed=N
    #[arg(long, value_name = "N:SPEC")]
    impair: Vec<String>,
    /// ctl commands to run before forwarding starts (one per line)
    #[arg(long, value_name = "FILE")]
    commands: Option<String>,
}

fn cmd_run(a: RunArgs) -> Result<(), String> {
    let supported =
        sdnperf_switch::cli::long_options(Cli::command().find_subcommand("run").unwrap())
            .replace("--no-p4 ", "");
    if a.no_p4 {
        return Err(format!("--no-p4 is not supported by `run` (it needs a program; sdnperf-switch-grpc starts without one); supported options: {}", supported));
    }
    let notes0 = a.bmv2.check(&supported)?;
    a.ports.apply_process_options();
    let json = a
        .json
        .clone()
        .or(a.json_opt.clone())
        .ok_or("run needs a program (JSON)")?;
    let mut impairs: Vec<(u32, Direction, ImpairCfg)> = vec![];
    for v in &a.impair {
        let (n, spec) = v
            .split_once(':')
            .ok_or_else(|| format!("--impair {}: expected N:delay=..", v))?;
        let (dir, cfg) = parse_port_spec(spec).map_err(|e| format!("--impair {}: {}", v, e))?;
        impairs.push((
            n.parse().map_err(|_| format!("--impair {}: bad port", v))?,
            dir,
            cfg,
        ));
    }
    let pace_ns = a.ports.recirc_pace_us.saturating_mul(1000);
    let (ifaces, cpu_port, max_passes, commands, vnet) = (
        a.ports.ifaces.clone(),
        a.ports.cpu_port,
        a.ports.max_passes,
        a.commands.clone(),
        !a.ports.no_vnet,
    );
    let prog = load_program(&json)?;
    let mut eng = Engine::new(prog);
    if let Some(m) = max_passes {
        eng.max_passes = m;
    }
    eng.trace |= a.bmv2.trace();
    let mut sw = Switch::new(eng);
    sw.set_live_clock(true);
    sw.set_recirc_pace_ns(pace_ns);
    for (n, dir, c) in impairs {
        sw.set_port_impair(n, dir, c)?;
    }
    if let Some(f) = commands {
        let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {}", f, e))?;
        for (ln, l) in text.lines().enumerate() {
            let l = l.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            ctl::execute(&mut sw, l).map_err(|e| format!("{}:{}: {}", f, ln + 1, e))?;
        }
    }
    let mut notes = notes0;
    let ports = dataplane::open_ports(&ifaces, a.ports.io, vnet, a.ports.rx_frames, &mut notes)?;
    let names: Vec<String> = ports
        .iter()
        .map(|p| format!("{}@{}={}", p.num, p.io.name(), p.io.kind()))
        .collect();
    let requests = match a.ports.ctl_listen() {
        Some(l) => Some(ctl::start_server(l)?),
        None => None,
    };
    let mut front = ctl::CtlHooks { sw, requests };
    let mut opts = a.ports.loop_opts(cpu_port, "sdnperf-switch");
    opts.pcap = a.bmv2.pcap.as_ref().map(Into::into);
    let dp = dataplane::Loop::new(&mut front, ports, opts);
    dataplane::install_signal_handlers();
    for n in &notes {
        eprintln!("sdnperf-switch: {}", n);
    }
    eprintln!(
        "sdnperf-switch: ports {} (af_packet: TPACKET_V2 rx ring + sendmmsg; af_xdp: copy mode, queue 0); offloads: {}",
        names.join(","),
        if vnet { "vnet_hdr on, TSO/GSO and partial checksums pass through" } else { "off, hosts must not send offloaded packets" }
    );
    println!("READY");
    let _ = std::io::stdout().flush();
    dp.run(&mut front);
    Ok(())
}

/// sdnperf-switch: a fast P4 software switch running BMv2 JSON programs.
#[derive(Parser, Debug)]
#[command(name = "sdnperf-switch", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

// `run`'s options are the big variant; the command is parsed once, so its size is moot
#[allow(clippy::large_enum_variant)]
#[derive(Subcommand, Debug)]
enum Cmd {
    /// Runs an STF test against a program; exit 0 when it passes
    Stf {
        /// BMv2 JSON or .p4 program
        program: String,
        /// the STF test
        test: String,
    },
    /// Runs the switch on Linux interfaces (simple_switch's command line works too)
    Run(RunArgs),
    /// Sends control commands to a running switch (its --ctl / --ctl-socket)
    Ctl {
        /// HOST:PORT or a Unix socket path
        target: String,
        /// read commands from FILE, one per line
        #[arg(short = 'f', value_name = "FILE", conflicts_with = "command")]
        file: Option<String>,
        /// one command (`help` lists them)
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            required_unless_present = "file"
        )]
        command: Vec<String>,
    },
    /// Loads a program and reports what it holds and whether it fits the XDP fast path
    Check { program: String },
    /// Compiles a .p4 program to BMv2 JSON on stdout
    Compile { program: String },
    /// Benchmark traffic generator
    Blast(BlastArgs),
    /// Benchmark sink: drops everything arriving at IFACE in its XDP hook (xdp_drops in `ethtool -S`)
    XdpSink {
        iface: String,
        /// stop after this many seconds (default: at SIGINT/SIGTERM)
        #[arg(long)]
        seconds: Option<f64>,
    },
    /// Pipeline-only benchmark on in-memory ports
    Membench(MembenchArgs),
}

fn exit_with(r: Result<(), String>, code: i32) -> ! {
    match r {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("error: {}", e);
            std::process::exit(code)
        }
    }
}

/// Commands that only print (stf, check, compile, ctl) end quietly when their reader goes
/// away (`... | head -2`), as Unix tools do, instead of panicking on a closed stdout. The
/// switch itself keeps Rust's default (SIGPIPE ignored): a ctl client that hangs up must
/// not stop the data plane.
fn quiet_on_closed_pipe() {
    // SAFETY: restoring a signal's default disposition before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() {
    let cli: Cli = sdnperf_switch::cli::parse_or_exit(std::env::args());
    if matches!(
        cli.cmd,
        Cmd::Stf { .. } | Cmd::Check { .. } | Cmd::Compile { .. } | Cmd::Ctl { .. }
    ) {
        quiet_on_closed_pipe();
    }
    match cli.cmd {
        Cmd::Stf { program, test } => {
            let prog = load_program(&program).unwrap_or_else(|e| exit_with(Err(e), 2));
            let text = std::fs::read_to_string(&test)
                .unwrap_or_else(|e| exit_with(Err(format!("{}: {}", test, e)), 2));
            let mut sw = Switch::new(Engine::new(prog));
            let r = stf::run(&mut sw, &text);
            print!("{}", r.report);
            std::process::exit(if r.passed { 0 } else { 1 });
        }
        Cmd::Blast(a) => exit_with(cmd_blast(a), 1),
        Cmd::XdpSink { iface, seconds } => exit_with(cmd_xdp_sink(&iface, seconds), 1),
        Cmd::Membench(a) => exit_with(cmd_membench(a), 1),
        Cmd::Compile { program } => match sdnperf_switch::compile_p4(&program) {
            Ok(j) => println!("{}", j),
            Err(e) => exit_with(Err(e), 2),
        },
        Cmd::Check { program } => match load_program(&program) {
            Ok(p) => {
                println!(
                    "ok: {} headers, {} tables, {} actions",
                    p.headers.len(),
                    p.tables.len(),
                    p.actions.len()
                );
                // launchers (sdnperf's `datapath` setting) decide on the fast path from this line
                match sdnperf_switch::xdpfast::unsupported_reason(&p) {
                    None => println!("xdp fast path: fits"),
                    Some(why) => println!("xdp fast path: does not fit: {}", why),
                }
            }
            Err(e) => exit_with(Err(e), 2),
        },
        Cmd::Run(a) => exit_with(cmd_run(a), 1),
        Cmd::Ctl {
            target,
            file,
            command,
        } => {
            let cmds: Vec<String> = match file {
                Some(path) => match std::fs::read_to_string(&path) {
                    Ok(t) => t
                        .lines()
                        .map(|l| l.trim().to_string())
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .collect(),
                    Err(e) => exit_with(Err(format!("{}: {}", path, e)), 2),
                },
                None => vec![command.join(" ")],
            };
            match ctl::client(&target, &cmds) {
                Ok(true) => {}
                Ok(false) => std::process::exit(1),
                Err(e) => exit_with(Err(e), 2),
            }
        }
    }
}
