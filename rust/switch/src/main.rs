use sdnperf_switch::{load_program, stf};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::ports::{afpacket::AfPacketPort, xdpgen::XdpGen};
use sdnperf_switch::impair::{parse_port_spec, Direction, ImpairCfg};
use sdnperf_switch::{ctl, dataplane};
use std::io::Write;

fn udp_frames(size: usize, dmac: [u8; 6], smac: [u8; 6], dst_ip: u32, step: u32, flows: u32) -> Vec<Vec<u8>> {
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
fn cmd_membench(args: &[String]) -> Result<(), String> {
    let mut prog = None;
    let mut commands = None;
    let mut n = 2_000_000usize;
    let mut dst_ip = 0x0a63_0002u32;
    let mut step = 1u32;
    let mut flows = 1u32;
    let mut port = 1u32;
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--commands" => commands = Some(v),
            "--packets" => n = v.parse().map_err(|_| "bad --packets")?,
            "--dst-ip" => dst_ip = ctl::parse_value(&v)? as u32,
            "--dst-step" => step = v.parse().map_err(|_| "bad --dst-step")?,
            "--flows" => flows = v.parse::<u32>().map_err(|_| "bad --flows")?.max(1),
            "--port" => port = v.parse().map_err(|_| "bad --port")?,
            other if !other.starts_with('-') => {
                prog = Some(other.to_string());
                i += 1;
                continue;
            }
            other => return Err(format!("unknown option {}", other)),
        }
        i += 2;
    }
    let prog = load_program(&prog.ok_or("membench needs a program")?)?;
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
        println!("membench: loaded {} commands in {:.2} s", k, t.elapsed().as_secs_f64());
    }
    let pkts = udp_frames(60, [2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 1], dst_ip, step, flows);
    let mut out = 0u64;
    let t0 = std::time::Instant::now();
    let mut now = 1_000_000u64;
    for k in 0..n {
        now += 100;
        sw.receive(port, &pkts[k % pkts.len()], None, now);
        sw.service(now);
        for j in std::mem::take(&mut sw.ready) {
            out += 1;
            sw.eng.recycle(j);
        }
    }
    let el = t0.elapsed().as_secs_f64();
    println!(
        "membench: {} packets in {:.3} s = {:.0} ns/packet = {:.2} Mpps on one core ({} forwarded, {} recirculations)",
        n, el, el * 1e9 / n as f64, n as f64 / el / 1e6, out, sw.eng.stats.recirculations
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
fn cmd_blast(args: &[String]) -> Result<(), String> {
    let mut iface = None;
    let mut size = 60usize;
    let mut secs = 5.0f64;
    let mut dmac = [0x02u8, 0, 0, 0, 0, 2];
    let mut smac = [0x02u8, 0, 0, 0, 0, 1];
    let mut dst_ip = 0x0a63_0002u32;
    let mut step = 1u32;
    let mut flows = 1u32;
    let mut mode = String::from("af_packet");
    let mut pps = 0f64;
    let mut i = 0;
    let mac = |s: &str| -> Result<[u8; 6], String> {
        let v = ctl::parse_value(s)?;
        let b = (v as u64).to_be_bytes();
        Ok([b[2], b[3], b[4], b[5], b[6], b[7]])
    };
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--size" => size = v.parse().map_err(|_| "bad --size")?,
            "--seconds" => secs = v.parse().map_err(|_| "bad --seconds")?,
            "--dst-mac" => dmac = mac(&v)?,
            "--src-mac" => smac = mac(&v)?,
            "--dst-ip" => dst_ip = ctl::parse_value(&v)? as u32,
            "--dst-step" => step = v.parse().map_err(|_| "bad --dst-step")?,
            "--flows" => flows = v.parse::<u32>().map_err(|_| "bad --flows")?.max(1),
            "--pps" => pps = v.parse().map_err(|_| "bad --pps")?,
            "--mode" => {
                mode = v.clone();
                if !["auto", "xdp", "af_packet"].contains(&mode.as_str()) {
                    return Err(format!("--mode {}: expected auto, xdp or af_packet", mode));
                }
            }
            "-h" | "--help" => {
                println!("usage: sdnperf-switch blast IFACE [--mode af_packet|xdp|auto] [--size 60] [--seconds 5] [--pps RATE] [--dst-mac M] [--src-mac M] [--dst-ip A] [--flows N --dst-step S]");
                return Ok(());
            }
            other if !other.starts_with('-') => {
                iface = Some(other.to_string());
                i += 1;
                continue;
            }
            other => return Err(format!("unknown option {}", other)),
        }
        i += 2;
    }
    let iface = iface.ok_or("blast needs an interface")?;
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
fn cmd_xdp_sink(args: &[String]) -> Result<(), String> {
    let iface = args.first().ok_or("xdp-sink needs an interface")?;
    let secs: f64 = match args.get(1).map(|s| s.as_str()) {
        Some("--seconds") => args.get(2).and_then(|v| v.parse().ok()).ok_or("bad --seconds")?,
        None => f64::INFINITY,
        Some(o) => return Err(format!("unknown option {}", o)),
    };
    let link = sdnperf_switch::ports::xdpgen::attach_drop(iface)?;
    dataplane::install_signal_handlers();
    println!("READY");
    let _ = std::io::stdout().flush();
    let t0 = std::time::Instant::now();
    while !dataplane::STOP.load(std::sync::atomic::Ordering::Relaxed) && t0.elapsed().as_secs_f64() < secs {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    unsafe { libc::close(link) };
    Ok(())
}

fn cmd_run(args: &[String]) -> Result<(), String> {
    let mut json = None;
    let mut ifaces: Vec<(u32, String)> = vec![];
    let mut cpu_port = None;
    let mut listen = None;
    let mut impairs: Vec<(u32, Direction, ImpairCfg)> = vec![];
    let mut vnet = true;
    let mut commands = None;
    let mut max_passes = None;
    let mut busy_poll = false;
    let mut spin_ns = 20_000u64;
    let mut io = String::from("auto");
    let mut rx_frames = sdnperf_switch::ports::afxdp::RX_FRAMES_DEFAULT;
    let mut fast_path = false;
    let mut i = 0;
    let next = |i: &mut usize| -> Result<String, String> {
        *i += 1;
        args.get(*i).cloned().ok_or_else(|| format!("{} needs a value", args[*i - 1]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--json" | "--program" => json = Some(next(&mut i)?),
            "-i" | "--interface" => {
                let v = next(&mut i)?;
                let (n, name) = v.split_once('@').ok_or_else(|| format!("-i {}: expected N@IFACE", v))?;
                let n: u32 = n.parse().map_err(|_| format!("-i {}: bad port number", v))?;
                if n as usize >= sdnperf_switch::switch::MAX_PORTS || n == sdnperf_switch::exec::DROP_PORT {
                    return Err(format!("-i {}: port number must be < 511", v));
                }
                ifaces.push((n, name.to_string()));
            }
            "--cpu-port" => cpu_port = Some(next(&mut i)?.parse::<u32>().map_err(|_| "bad --cpu-port")?),
            "--ctl" => listen = Some(ctl::Listen::Tcp(next(&mut i)?)),
            "--ctl-socket" => listen = Some(ctl::Listen::Unix(next(&mut i)?)),
            "--impair" => {
                let v = next(&mut i)?;
                let (n, spec) = v.split_once(':').ok_or_else(|| format!("--impair {}: expected N:delay=..", v))?;
                let (dir, cfg) = parse_port_spec(spec).map_err(|e| format!("--impair {}: {}", v, e))?;
                impairs.push((n.parse().map_err(|_| "bad --impair port")?, dir, cfg));
            }
            "--no-vnet" => vnet = false,
            "--busy-poll" => busy_poll = true,
            "--spin-us" => spin_ns = next(&mut i)?.parse::<u64>().map_err(|_| "bad --spin-us")? * 1000,
            "--io" => {
                io = next(&mut i)?;
                if !["auto", "af_packet", "af_xdp"].contains(&io.as_str()) {
                    return Err(format!("--io {}: expected auto, af_packet or af_xdp", io));
                }
            }
            "--rx-frames" => rx_frames = next(&mut i)?.parse().map_err(|_| "bad --rx-frames")?,
            "--xdp-fastpath" => fast_path = true,
            "--max-passes" => max_passes = Some(next(&mut i)?.parse::<u32>().map_err(|_| "bad --max-passes")?),
            "--die-with-parent" => unsafe {
                // SIGTERM when the process that started us exits (even if it is killed)
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            },
            "--commands" => commands = Some(next(&mut i)?),
            other if !other.starts_with('-') && json.is_none() => json = Some(other.to_string()),
            other => return Err(format!("unknown option {}", other)),
        }
        i += 1;
    }
    let json = json.ok_or("run needs --json PROGRAM")?;
    let prog = load_program(&json)?;
    let mut sw = Switch::new(Engine::new(prog));
    if let Some(m) = max_passes {
        sw.eng.max_passes = m;
    }
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
    let mut notes = vec![];
    let ports = dataplane::open_ports(&ifaces, dataplane::IoKind::parse(&io)?, vnet, rx_frames, &mut notes)?;
    let names: Vec<String> = ports.iter().map(|p| format!("{}@{}={}", p.num, p.io.name(), p.io.kind())).collect();
    let requests = match listen {
        Some(l) => Some(ctl::start_server(l)?),
        None => None,
    };
    let mut front = dataplane::CtlHooks { sw, requests };
    let opts = dataplane::Opts { cpu_port, busy_poll, spin_ns, xdp_fastpath: fast_path, name: "sdnperf-switch".into() };
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

fn usage() -> ! {
    eprintln!(
        "usage:\n  sdnperf-switch stf PROGRAM(.json|.p4) TEST.stf\n  sdnperf-switch run --json PROG.json -i N@IFACE ... [--cpu-port N] [--ctl HOST:PORT | --ctl-socket PATH] [--impair N:[direction=in|out|both,]delay=5ms,jitter=1ms,loss=1%,rate=100mbit,seed=N] [--no-vnet] [--die-with-parent] [--commands FILE] [--max-passes N] [--busy-poll] [--spin-us 20] [--io auto|af_packet|af_xdp] [--rx-frames 8192 (AF_XDP receive ring, 2 KiB each)] [--xdp-fastpath (AF_XDP ports: run simple programs in the kernel's XDP hook)]\n  sdnperf-switch ctl (HOST:PORT|SOCKET) COMMAND... | -f FILE\n  sdnperf-switch check PROGRAM\n  sdnperf-switch blast IFACE [--mode auto|xdp|af_packet] ... (generator; blast --help)\n  sdnperf-switch xdp-sink IFACE [--seconds S]\n  sdnperf-switch membench PROGRAM [--commands FILE] [--packets N]"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 2 {
        usage();
    }
    match args[1].as_str() {
        "stf" => {
            if args.len() != 4 {
                usage();
            }
            let prog = match load_program(&args[2]) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2);
                }
            };
            let text = match std::fs::read_to_string(&args[3]) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("error: {}: {}", args[3], e);
                    std::process::exit(2);
                }
            };
            let mut sw = Switch::new(Engine::new(prog));
            let r = stf::run(&mut sw, &text);
            print!("{}", r.report);
            std::process::exit(if r.passed { 0 } else { 1 });
        }
        "blast" => std::process::exit(match cmd_blast(&args[2..]) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e);
                1
            }
        }),
        "xdp-sink" => std::process::exit(match cmd_xdp_sink(&args[2..]) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e);
                1
            }
        }),
        "membench" => std::process::exit(match cmd_membench(&args[2..]) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e);
                1
            }
        }),
        "compile" => {
            if args.len() != 3 {
                usage();
            }
            match sdnperf_switch::compile_p4(&args[2]) {
                Ok(j) => println!("{}", j),
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2);
                }
            }
        }
        "check" => {
            if args.len() != 3 {
                usage();
            }
            match load_program(&args[2]) {
                Ok(p) => println!("ok: {} headers, {} tables, {} actions", p.headers.len(), p.tables.len(), p.actions.len()),
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2);
                }
            }
        }
        "run" => std::process::exit(match cmd_run(&args[2..]) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("error: {}", e);
                1
            }
        }),
        "ctl" => {
            if args.len() < 4 {
                usage();
            }
            let cmds: Vec<String> = if args[3] == "-f" {
                let path = args.get(4).unwrap_or_else(|| usage());
                match std::fs::read_to_string(path) {
                    Ok(t) => t.lines().map(|l| l.trim().to_string()).filter(|l| !l.is_empty() && !l.starts_with('#')).collect(),
                    Err(e) => {
                        eprintln!("error: {}: {}", path, e);
                        std::process::exit(2)
                    }
                }
            } else {
                vec![args[3..].join(" ")]
            };
            match ctl::client(&args[2], &cmds) {
                Ok(true) => {}
                Ok(false) => std::process::exit(1),
                Err(e) => {
                    eprintln!("error: {}", e);
                    std::process::exit(2)
                }
            }
        }
        _ => usage(),
    }
}
