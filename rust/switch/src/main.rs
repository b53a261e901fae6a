use sdnperf_switch::{load_program, stf};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{ctl, dataplane, impair::ImpairCfg, ports::afpacket::AfPacketPort};
use std::io::Write;

fn cmd_run(args: &[String]) -> Result<(), String> {
    let mut json = None;
    let mut ifaces: Vec<(u32, String)> = vec![];
    let mut cpu_port = None;
    let mut listen = None;
    let mut impairs: Vec<(u32, ImpairCfg)> = vec![];
    let mut vnet = true;
    let mut commands = None;
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
                impairs.push((n.parse().map_err(|_| "bad --impair port")?, ImpairCfg::parse(spec)?));
            }
            "--no-vnet" => vnet = false,
            "--commands" => commands = Some(next(&mut i)?),
            other if !other.starts_with('-') && json.is_none() => json = Some(other.to_string()),
            other => return Err(format!("unknown option {}", other)),
        }
        i += 1;
    }
    let json = json.ok_or("run needs --json PROGRAM")?;
    let prog = load_program(&json)?;
    let mut sw = Switch::new(Engine::new(prog));
    for (n, c) in impairs {
        sw.set_impair(n, c)?;
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
    let mut ports = vec![];
    for (n, name) in &ifaces {
        let io = AfPacketPort::open(name, vnet)?;
        ports.push(dataplane::Port { num: *n, io });
    }
    let ctl_rx = match listen {
        Some(l) => Some(ctl::start_server(l)?),
        None => None,
    };
    dataplane::install_signal_handlers();
    let names: Vec<String> = ifaces.iter().map(|(n, s)| format!("{}@{}", n, s)).collect();
    eprintln!(
        "sdnperf-switch: ports {} io=af_packet (TPACKET_V2 rx ring, sendmmsg tx, vnet_hdr={}); af_xdp: not implemented",
        names.join(","),
        if vnet { "on: TSO/GSO and partial checksums pass through" } else { "off: host offloads must be off" }
    );
    println!("READY");
    let _ = std::io::stdout().flush();
    dataplane::run(sw, ports, ctl_rx, cpu_port)
}

fn usage() -> ! {
    eprintln!(
        "usage:\n  sdnperf-switch stf PROGRAM(.json|.p4) TEST.stf\n  sdnperf-switch run --json PROG.json -i N@IFACE ... [--cpu-port N] [--ctl HOST:PORT | --ctl-socket PATH] [--impair N:delay=5ms,...] [--no-vnet]\n  sdnperf-switch ctl (HOST:PORT|SOCKET) COMMAND... | -f FILE\n  sdnperf-switch check PROGRAM"
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
