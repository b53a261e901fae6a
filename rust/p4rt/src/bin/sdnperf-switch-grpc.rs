//! sdnperf-switch-grpc: the sdnperf P4 switch with a P4Runtime server (like BMv2's
//! simple_switch_grpc beside simple_switch). Starts with no pipeline until a controller
//! sends SetForwardingPipelineConfig (BMv2 JSON as p4_device_config), or preloads one.

use sdnperf_p4rt::device::Device;
use sdnperf_p4rt::proto::p4::v1 as p4;
use sdnperf_p4rt::{hooks, server};
use sdnperf_switch::dataplane::{self, STOP};
use std::io::Write;
use std::sync::atomic::Ordering;

fn usage() -> ! {
    eprintln!(
        "usage: sdnperf-switch-grpc [--json PROG.json --p4info P4INFO.bin | --json PROG.p4] -i N@IFACE ... \
[--cpu-port N] [--grpc-port PORT (9559)] [--grpc-addr ADDR (127.0.0.1)] [--device-id ID (1)] \
[--ctl-socket PATH | --ctl HOST:PORT] [--no-vnet] [--io af_packet|af_xdp|auto] [--rx-frames N] [--xdp-fastpath] \
[--busy-poll] [--spin-us 20] [--max-passes N] [--die-with-parent]"
    );
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "-h" || a == "--help") {
        usage();
    }
    match run(&args) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("sdnperf-switch-grpc: error: {}", e);
            std::process::exit(1)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let mut json = None;
    let mut p4info = None;
    let mut ifaces: Vec<(u32, String)> = vec![];
    let mut cpu_port = None;
    let mut grpc_port = 9559u16;
    let mut grpc_addr = "127.0.0.1".to_string();
    let mut device_id = 1u64;
    let mut vnet = true;
    let mut busy_poll = false;
    let mut max_passes = None;
    let mut ctl = None;
    let mut io = dataplane::IoKind::Auto;
    let mut rx_frames = sdnperf_switch::ports::afxdp::RX_FRAMES_DEFAULT;
    let mut xdp_fastpath = false;
    let mut spin_ns = 20_000u64;
    let mut i = 0;
    let next = |i: &mut usize| -> Result<String, String> {
        *i += 1;
        args.get(*i).cloned().ok_or_else(|| format!("{} needs a value", args[*i - 1]))
    };
    while i < args.len() {
        match args[i].as_str() {
            "--json" | "--program" => json = Some(next(&mut i)?),
            "--p4info" => p4info = Some(next(&mut i)?),
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
            "--grpc-port" => grpc_port = next(&mut i)?.parse().map_err(|_| "bad --grpc-port")?,
            "--grpc-addr" => grpc_addr = next(&mut i)?,
            "--device-id" => device_id = next(&mut i)?.parse().map_err(|_| "bad --device-id")?,
            "--no-vnet" => vnet = false,
            "--busy-poll" => busy_poll = true,
            "--spin-us" => spin_ns = next(&mut i)?.parse::<u64>().map_err(|_| "bad --spin-us")? * 1000,
            "--io" => io = dataplane::IoKind::parse(&next(&mut i)?)?,
            "--rx-frames" => rx_frames = next(&mut i)?.parse().map_err(|_| "bad --rx-frames")?,
            "--xdp-fastpath" => xdp_fastpath = true,
            "--max-passes" => max_passes = Some(next(&mut i)?.parse::<u32>().map_err(|_| "bad --max-passes")?),
            "--ctl-socket" => ctl = Some(sdnperf_switch::ctl::Listen::Unix(next(&mut i)?)),
            "--ctl" => ctl = Some(sdnperf_switch::ctl::Listen::Tcp(next(&mut i)?)),
            "--die-with-parent" => unsafe {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            },
            other => return Err(format!("unknown option {} (try --help)", other)),
        }
        i += 1;
    }
    let mut dev = Device::new(cpu_port);
    dev.max_passes = max_passes;
    if let Some(path) = json {
        let (bmv2, info) = if path.ends_with(".p4") {
            let o = p4c::compile_file(std::path::Path::new(&path), &p4c::Options::default()).map_err(|d| format!("{}", d).trim_end().to_string())?;
            (o.bmv2_json.into_bytes(), o.p4info_binary)
        } else {
            let info = p4info.ok_or("--json PROG.json needs --p4info P4INFO.bin (binary P4Info; or pass the .p4 source)")?;
            let b = std::fs::read(&path).map_err(|e| format!("{}: {}", path, e))?;
            let pi = std::fs::read(&info).map_err(|e| format!("{}: {}", info, e))?;
            (b, pi)
        };
        use prost::Message;
        let info = sdnperf_p4rt::proto::p4::config::v1::P4Info::decode(info.as_slice()).map_err(|e| format!("P4Info (binary expected): {}", e))?;
        let cfg = p4::ForwardingPipelineConfig { p4info: Some(info), p4_device_config: bmv2, cookie: None };
        let (pipe, prog) = server::build_pipe(&cfg).map_err(|s| s.message().to_string())?;
        dev.commit(pipe, prog, false);
    }
    let mut notes = vec![];
    let ports = dataplane::open_ports(&ifaces, io, vnet, rx_frames, &mut notes)?;
    dataplane::install_signal_handlers();
    let addr = format!("{}:{}", grpc_addr, grpc_port);
    let listener = std::net::TcpListener::bind(&addr).map_err(|e| format!("gRPC bind {}: {}", addr, e))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let (ev_tx, ev_rx) = tokio::sync::mpsc::channel(16384);
    let (h, mut front) = hooks::channel(dev, ev_tx, ctl)?;
    let names: Vec<String> = ports.iter().map(|p| format!("{}@{}={}", p.num, p.io.name(), p.io.kind())).collect();
    for n in &notes {
        eprintln!("sdnperf-switch-grpc: {}", n);
    }
    eprintln!("sdnperf-switch-grpc: P4Runtime on {} device_id={} ports {} cpu_port={:?}", addr, device_id, names.join(","), cpu_port);
    let opts = dataplane::Opts { cpu_port, busy_poll, spin_ns, xdp_fastpath, name: "sdnperf-switch-grpc".into() };
    let dp = dataplane::Loop::new(&mut front, ports, opts);
    let dpt = std::thread::Builder::new()
        .name("dataplane".into())
        .spawn(move || {
            dp.run(&mut front);
            STOP.store(true, Ordering::SeqCst);
        })
        .map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(|e| e.to_string())?;
    let svc = server::Service::new(device_id, h);
    rt.block_on(async move {
        svc.spawn_event_router(ev_rx);
        let l = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        println!("READY");
        let _ = std::io::stdout().flush();
        let stopped = || async {
            while !STOP.load(Ordering::Relaxed) {
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        // Packet-in/out are small messages on a long-lived stream: without TCP_NODELAY,
        // Nagle's algorithm holds some of them back for tens of milliseconds.
        let incoming = tokio_stream::StreamExt::map(
            tokio_stream::wrappers::TcpListenerStream::new(l),
            |conn| {
                if let Ok(ref stream) = conn {
                    let _ = stream.set_nodelay(true);
                }
                conn
            },
        );
        let serve = tonic::transport::Server::builder()
            .add_service(svc.into_server())
            .serve_with_incoming_shutdown(incoming, stopped());
        // graceful shutdown waits for open streams; controllers keep theirs open, so after
        // a short grace period the connections are dropped
        tokio::select! {
            r = serve => r.map_err(|e| e.to_string()),
            _ = async { stopped().await; tokio::time::sleep(std::time::Duration::from_millis(200)).await } => Ok(()),
        }
    })?;
    let _ = dpt.join();
    Ok(())
}
