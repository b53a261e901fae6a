//! sdnperf-switch-grpc: the sdnperf P4 switch with a P4Runtime server (like BMv2's
//! simple_switch_grpc beside simple_switch). Starts with no pipeline until a controller
//! sends SetForwardingPipelineConfig (BMv2 JSON as p4_device_config), or preloads one.

use clap::{CommandFactory, Parser};
use sdnperf_p4rt::device::Device;
use sdnperf_p4rt::members::{self, MemberSpec};
use sdnperf_p4rt::proto::p4::v1 as p4;
use sdnperf_p4rt::{hooks, server};
use sdnperf_switch::cli::{Bmv2Flags, PortArgs};
use sdnperf_switch::dataplane;
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
    /// serve this switch too, from the same data-plane thread (repeat per switch; then -i,
    /// --grpc-port, --device-id and --ctl-socket are not given):
    /// "device=N;grpc=ADDR:PORT;ctl=PATH;ports=1@IFACE,2@IFACE"
    #[arg(long = "switch", value_name = "SPEC", value_parser = members::parse_member)]
    switches: Vec<members::MemberSpec>,
    /// data-plane threads sharing the `--switch` switches (contiguous groups in the order
    /// given, so neighbours on a path usually share a thread)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    dataplane_threads: u16,
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

/// One switch the process serves: its device, where its P4Runtime server listens, its
/// ctl socket and ports.
struct Setup {
    dev: Device,
    device_id: u64,
    addr: String,
    ctl: Option<sdnperf_switch::ctl::Listen>,
    ifaces: Vec<(u32, String)>,
    /// prefix of its log lines
    name: String,
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
    let cpu_port = target.cpu_port.or(a.ports.cpu_port);
    let new_device = || {
        let mut dev = Device::new(cpu_port);
        dev.max_passes = a.ports.max_passes;
        dev.live_clock = true;
        dev.recirc_pace_ns = a.ports.recirc_pace_us.saturating_mul(1000);
        dev
    };
    let setups = if a.switches.is_empty() {
        vec![single_setup(&a, &target, new_device(), &mut notes)?]
    } else {
        shared_setups(&a, &target, &new_device)?
    };
    let vnet = !a.ports.no_vnet;
    dataplane::install_signal_handlers();
    let mut listeners = vec![];
    let mut fronts = vec![];

    let mut ports_of = vec![];
    for s in setups {
        let ports =
            dataplane::open_ports(&s.ifaces, a.ports.io, vnet, a.ports.rx_frames, &mut notes)?;
        let listener = std::net::TcpListener::bind(&s.addr)
            .map_err(|e| format!("gRPC bind {}: {}", s.addr, e))?;
        listener.set_nonblocking(true).map_err(|e| e.to_string())?;
        let (ev_tx, ev_rx) = tokio::sync::mpsc::channel(16384);
        let (h, front) = hooks::channel(s.dev, ev_tx, s.ctl)?;
        let names: Vec<String> = ports
            .iter()
            .map(|p| format!("{}@{}={}", p.num, p.io.name(), p.io.kind()))
            .collect();
        eprintln!(
            "{}: P4Runtime on {} device_id={} ports {} cpu_port={:?}",
            s.name,
            s.addr,
            s.device_id,
            names.join(","),
            cpu_port
        );
        listeners.push((listener, s.device_id, h, ev_rx));
        fronts.push(front);
        ports_of.push((ports, s.name));
    }
    for n in &notes {
        eprintln!("sdnperf-switch-grpc: {}", n);
    }
    let mut loops = vec![];
    for (front, (ports, name)) in fronts.iter_mut().zip(ports_of) {
        let mut opts = a.ports.loop_opts(cpu_port, &name);
        opts.pcap = a.bmv2.pcap.as_ref().map(Into::into);
        loops.push(dataplane::Loop::new(front, ports, opts));
    }
    // the gRPC side stops when the data-plane loops end (signal, vanished interface): told
    // by a watch rather than polling STOP, so an idle switch has no timer waking it
    let (ended_tx, ended) = tokio::sync::watch::channel(false);
    let ended_tx = std::sync::Arc::new(ended_tx);
    let groups = members::groups(
        fronts.into_iter().zip(loops).collect(),
        a.dataplane_threads as usize,
    );
    let running = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(groups.len()));
    let mut dpts = vec![];
    for (i, group) in groups.into_iter().enumerate() {
        let (ended_tx, running) = (ended_tx.clone(), running.clone());
        let t = std::thread::Builder::new()
            .name(format!("dataplane{}", i))
            .spawn(move || {
                let (mut fronts, loops): (Vec<_>, Vec<_>) = group.into_iter().unzip();
                dataplane::run_shared(fronts.iter_mut().zip(loops).collect());
                // one loop ending (a vanished interface) ends them all
                dataplane::request_stop();
                if running.fetch_sub(1, Ordering::SeqCst) == 1 {
                    let _ = ended_tx.send(true);
                }
            })
            .map_err(|e| e.to_string())?;
        dpts.push(t);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    rt.block_on(async move {
        let mut handles = vec![];
        for (listener, device_id, h, ev_rx) in listeners {
            let svc = server::Service::new(device_id, h);
            svc.spawn_event_router(ev_rx);
            let l = tokio::net::TcpListener::from_std(listener).map_err(|e| e.to_string())?;
            handles.push(tokio::spawn(serve(svc, l, ended.clone())));
        }
        println!("READY");
        let _ = std::io::stdout().flush();
        for h in handles {
            h.await.map_err(|e| e.to_string())??;
        }
        Ok::<(), String>(())
    })?;
    for t in dpts {
        let _ = t.join();
    }
    Ok(())
}

/// The one switch of a classic command line (simple_switch_grpc's), with its preloaded
/// program if given.
fn single_setup(
    a: &GrpcArgs,
    target: &TargetArgs,
    mut dev: Device,
    notes: &mut Vec<String>,
) -> Result<Setup, String> {
    let json = a.json.clone().or(a.json_opt.clone());
    let p4info = a.p4info.clone();
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
            if let Some(m) = a.ports.max_passes {
                eng.max_passes = m;
            }
            let mut sw = sdnperf_switch::switch::Switch::new(eng);
            sw.set_live_clock(true);
            sw.set_recirc_pace_ns(a.ports.recirc_pace_us.saturating_mul(1000));
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
    Ok(Setup {
        dev,
        device_id,
        addr: format!("{}:{}", grpc_addr, grpc_port),
        ctl: a.ports.ctl_listen(),
        ifaces: a.ports.ifaces.clone(),
        name: "sdnperf-switch-grpc".into(),
    })
}

/// The switches of `--switch` specs (shared process): each starts without a program.
fn shared_setups(
    a: &GrpcArgs,
    target: &TargetArgs,
    new_device: &dyn Fn() -> Device,
) -> Result<Vec<Setup>, String> {
    let given = [
        (a.json.is_some() || a.json_opt.is_some(), "a program"),
        (a.p4info.is_some(), "--p4info"),
        (!a.ports.ifaces.is_empty(), "-i"),
        (
            a.ports.ctl.is_some() || a.ports.ctl_socket.is_some(),
            "--ctl/--ctl-socket",
        ),
        (a.bmv2.device_id.is_some(), "--device-id"),
        (target.grpc_server_addr.is_some(), "--grpc-server-addr"),
    ];
    if let Some((_, what)) = given.iter().find(|(g, _)| *g) {
        return Err(format!(
            "--switch: {} is given per switch in the SPEC (device=N;grpc=ADDR:PORT;ctl=PATH;ports=...), not for the whole process",
            what
        ));
    }
    members::check_members(&a.switches)?;
    Ok(a.switches
        .iter()
        .map(|m: &MemberSpec| Setup {
            dev: new_device(),
            device_id: m.device_id,
            addr: m.grpc.clone(),
            ctl: m.ctl_socket.clone().map(sdnperf_switch::ctl::Listen::Unix),
            ifaces: m.ports.clone(),
            name: format!("sdnperf-switch-grpc[device {}]", m.device_id),
        })
        .collect())
}

/// One switch's P4Runtime server, until the data-plane loop ends.
async fn serve(
    svc: server::Service,
    l: tokio::net::TcpListener,
    ended: tokio::sync::watch::Receiver<bool>,
) -> Result<(), String> {
    let stopped = || {
        let mut ended = ended.clone();
        async move {
            let _ = ended.wait_for(|&done| done).await;
        }
    };
    // Packet-in/out are small messages on a long-lived stream: without TCP_NODELAY,
    // Nagle's algorithm holds some of them back for tens of milliseconds.
    let incoming =
        tokio_stream::StreamExt::map(tokio_stream::wrappers::TcpListenerStream::new(l), |conn| {
            if let Ok(ref stream) = conn {
                let _ = stream.set_nodelay(true);
            }
            conn
        });
    let serve = tonic::transport::Server::builder()
        .add_service(svc.into_server())
        .serve_with_incoming_shutdown(incoming, stopped());
    // graceful shutdown waits for open streams; controllers keep theirs open, so after
    // a short grace period the connections are dropped
    tokio::select! {
        r = serve => r.map_err(|e| e.to_string()),
        _ = async { stopped().await; tokio::time::sleep(std::time::Duration::from_millis(200)).await } => Ok(()),
    }
}
