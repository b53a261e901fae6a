//! sdnperf-switch-grpc: the sdnperf P4 switch with a P4Runtime server (like BMv2's
//! simple_switch_grpc beside simple_switch). Starts with no pipeline until a controller
//! sends SetForwardingPipelineConfig (BMv2 JSON as p4_device_config), or preloads one.

use clap::{CommandFactory, Parser};
use sdnperf_p4rt::device::Device;
use sdnperf_p4rt::proto::p4::v1 as p4;
use sdnperf_p4rt::{hooks, server};
use sdnperf_switch::cli::{Bmv2Flags, PortArgs};
use sdnperf_switch::dataplane::{self, STOP};
use std::io::Write;
use std::sync::atomic::Ordering;

/// sdnperf-switch-grpc: the sdnperf P4 switch with a P4Runtime server. Takes
/// simple_switch_grpc's command line too (`-i N@IFACE --device-id N --no-p4 -- --grpc-server-addr
/// ADDR:PORT --cpu-port N`), so launchers written for BMv2 can start it (docs/switch.md).
#[derive(Parser, Debug)]
#[command(name = "sdnperf-switch-grpc", version, about)]
struct GrpcArgs {
    /// program to preload: BMv2 JSON (with --p4info for P4Runtime; without, it forwards until a controller sets a pipeline) or .p4
    #[arg(value_name = "JSON")]
    json: Option<String>,
    /// the program, as an option
    #[arg(
        long = "json",
        visible_alias = "program",
        value_name = "PROG",
        conflicts_with = "json"
    )]
    json_opt: Option<String>,
    /// binary P4Info of a preloaded JSON program
    #[arg(long, value_name = "FILE")]
    p4info: Option<String>,
    /// start without a program until SetForwardingPipelineConfig (the default without JSON)
    #[arg(long, conflicts_with_all = ["json", "json_opt"])]
    no_p4: bool,
    #[command(flatten)]
    ports: PortArgs,
    #[command(flatten)]
    bmv2: Bmv2Flags,
    /// P4Runtime TCP port
    #[arg(long, value_name = "PORT", default_value_t = 9559)]
    grpc_port: u16,
    /// P4Runtime listen address (loopback unless asked)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    grpc_addr: String,
    /// simple_switch_grpc's target options after `--`: --grpc-server-addr ADDR:PORT, --cpu-port N
    #[arg(last = true, value_name = "TARGET OPTIONS")]
    target: Vec<String>,
}

/// The target options simple_switch_grpc takes after `--`.
#[derive(Parser, Debug)]
#[command(
    name = "sdnperf-switch-grpc -- ",
    about = "simple_switch_grpc's target options"
)]
struct TargetArgs {
    /// P4Runtime listen address
    #[arg(long, value_name = "ADDR:PORT")]
    grpc_server_addr: Option<String>,
    /// the CPU port (as before `--`)
    #[arg(long, value_name = "N")]
    cpu_port: Option<u32>,
}

fn main() {
    let args: GrpcArgs = sdnperf_switch::cli::parse_or_exit(std::env::args());
    match run(args) {
        Ok(()) => std::process::exit(0),
        Err(e) => {
            eprintln!("sdnperf-switch-grpc: error: {}", e);
            std::process::exit(1)
        }
    }
}

fn run(a: GrpcArgs) -> Result<(), String> {
    let supported = sdnperf_switch::cli::long_options(&GrpcArgs::command());
    let mut notes = a.bmv2.check(&supported)?;
    let target: TargetArgs = sdnperf_switch::cli::parse_or_exit(
        std::iter::once("sdnperf-switch-grpc --".to_string()).chain(a.target.iter().cloned()),
    );
    a.ports.apply_process_options();
    if a.bmv2.trace() {
        // every engine this process builds (preloaded or set by P4Runtime) traces packets;
        // set before any other thread exists
        std::env::set_var("SDNPERF_SWITCH_TRACE", "1");
    }
    let json = a.json.clone().or(a.json_opt.clone());
    let p4info = a.p4info.clone();
    let ifaces = a.ports.ifaces.clone();
    let cpu_port = target.cpu_port.or(a.ports.cpu_port);
    let (grpc_addr, grpc_port) = match &target.grpc_server_addr {
        Some(hp) => {
            let (h, p) = hp
                .rsplit_once(':')
                .ok_or_else(|| format!("--grpc-server-addr {}: expected ADDR:PORT", hp))?;
            (
                h.trim_start_matches('[').trim_end_matches(']').to_string(),
                p.parse::<u16>()
                    .map_err(|_| format!("--grpc-server-addr {}: bad port", hp))?,
            )
        }
        None => (a.grpc_addr.clone(), a.grpc_port),
    };
    let device_id = a.bmv2.device_id.unwrap_or(1);
    let vnet = !a.ports.no_vnet;
    let max_passes = a.ports.max_passes;
    let mut dev = Device::new(cpu_port);
    dev.max_passes = max_passes;
    dev.live_clock = true;
    let preload = match json {
        None => None,
        Some(path) if path.ends_with(".p4") => {
            let o = p4c::compile_file(std::path::Path::new(&path), &p4c::Options::default())
                .map_err(|d| format!("{}", d).trim_end().to_string())?;
            Some((o.bmv2_json.into_bytes(), o.p4info_binary))
        }
        Some(path) if p4info.is_none() => {
            // like simple_switch_grpc given a JSON: it forwards with the program; P4Runtime
            // writes wait for the controller's SetForwardingPipelineConfig (with P4Info)
            let mut eng = sdnperf_switch::exec::Engine::new(sdnperf_switch::load_program(&path)?);
            if let Some(m) = max_passes {
                eng.max_passes = m;
            }
            let mut sw = sdnperf_switch::switch::Switch::new(eng);
            sw.set_live_clock(true);
            dev.sw = Some(sw);
            notes.push(format!("{}: loaded without P4Info: P4Runtime writes need SetForwardingPipelineConfig first", path));
            None
        }
        Some(path) => {
            let info = p4info.unwrap();
            let b = std::fs::read(&path).map_err(|e| format!("{}: {}", path, e))?;
            let pi = std::fs::read(&info).map_err(|e| format!("{}: {}", info, e))?;
            Some((b, pi))
        }
    };
    if let Some((bmv2, info)) = preload {
        use prost::Message;
        let info = sdnperf_p4rt::proto::p4::config::v1::P4Info::decode(info.as_slice())
            .map_err(|e| format!("P4Info (binary expected): {}", e))?;
        let cfg = p4::ForwardingPipelineConfig {
            p4info: Some(info),
            p4_device_config: bmv2,
            cookie: None,
        };
        let (pipe, prog) = server::build_pipe(&cfg).map_err(|s| s.message().to_string())?;
        dev.commit(pipe, prog, false);
    }
    let ports = dataplane::open_ports(&ifaces, a.ports.io, vnet, a.ports.rx_frames, &mut notes)?;
    dataplane::install_signal_handlers();
    let addr = format!("{}:{}", grpc_addr, grpc_port);
    let listener =
        std::net::TcpListener::bind(&addr).map_err(|e| format!("gRPC bind {}: {}", addr, e))?;
    listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    let (ev_tx, ev_rx) = tokio::sync::mpsc::channel(16384);
    let (h, mut front) = hooks::channel(dev, ev_tx, a.ports.ctl_listen())?;
    let names: Vec<String> = ports
        .iter()
        .map(|p| format!("{}@{}={}", p.num, p.io.name(), p.io.kind()))
        .collect();
    for n in &notes {
        eprintln!("sdnperf-switch-grpc: {}", n);
    }
    eprintln!(
        "sdnperf-switch-grpc: P4Runtime on {} device_id={} ports {} cpu_port={:?}",
        addr,
        device_id,
        names.join(","),
        cpu_port
    );
    let mut opts = a.ports.loop_opts(cpu_port, "sdnperf-switch-grpc");
    opts.pcap = a.bmv2.pcap.as_ref().map(Into::into);
    let dp = dataplane::Loop::new(&mut front, ports, opts);
    // the gRPC side stops when the data-plane loop ends (signal, vanished interface): told
    // by a watch rather than polling STOP, so an idle switch has no timer waking it
    let (ended_tx, ended) = tokio::sync::watch::channel(false);
    let dpt = std::thread::Builder::new()
        .name("dataplane".into())
        .spawn(move || {
            dp.run(&mut front);
            STOP.store(true, Ordering::SeqCst);
            let _ = ended_tx.send(true);
        })
        .map_err(|e| e.to_string())?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let svc = server::Service::new(device_id, h);
    rt.block_on(async move {
        svc.spawn_event_router(ev_rx);
        let l = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
        println!("READY");
        let _ = std::io::stdout().flush();
        let stopped = || {
            let mut ended = ended.clone();
            async move {
                let _ = ended.wait_for(|&done| done).await;
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
