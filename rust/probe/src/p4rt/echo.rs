//! Our P4Runtime echo controller: dials each device, becomes primary, pushes a minimal
//! pipeline (a P4Info with just the packet_in/packet_out headers, cookie 1) and answers
//! every packet-in with a packet-out of the same frame (egress_port = the ingress port).
//! Nothing else, through the same hand-written stream codec as the devices: the rate the
//! probe reaches against it is the probe's P4Runtime ceiling on this machine.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::http::uri::PathAndQuery;
use tonic::transport::{Channel, Endpoint};

use crate::p4rt::wire::{EchoCodec, EchoIn, EchoOut};
use sdnperf_p4rt_proto::p4::config::v1 as cfgp;
use sdnperf_p4rt_proto::p4::v1 as p4;

/// Metadata ids of the P4Info the echo pushes.
const INGRESS_PORT_ID: u32 = 1;
const EGRESS_PORT_ID: u32 = 1;

#[derive(Default)]
pub struct EchoStats {
    pub packet_ins: AtomicU64,
    pub primary: AtomicU64,
}

/// The P4Info the echo controller pushes: the controller headers of a typical v1model
/// program (9-bit ports), no tables.
pub fn minimal_p4info() -> cfgp::P4Info {
    use cfgp::controller_packet_metadata::Metadata;
    let hdr = |id: u32, name: &str, port: &str| cfgp::ControllerPacketMetadata {
        preamble: Some(cfgp::Preamble {
            id,
            name: name.into(),
            alias: name.into(),
            ..Default::default()
        }),
        metadata: vec![
            Metadata {
                id: 1,
                name: port.into(),
                bitwidth: 9,
                ..Default::default()
            },
            Metadata {
                id: 2,
                name: "_pad".into(),
                bitwidth: 7,
                ..Default::default()
            },
        ],
    };
    cfgp::P4Info {
        pkg_info: Some(cfgp::PkgInfo {
            name: "sdnperf-probe-echo".into(),
            arch: "v1model".into(),
            ..Default::default()
        }),
        controller_packet_metadata: vec![
            hdr(0x4000_0001, "packet_in", "ingress_port"),
            hdr(0x4000_0002, "packet_out", "egress_port"),
        ],
        ..Default::default()
    }
}

fn uri(addr: &str) -> String {
    if addr.starts_with("http://") {
        addr.to_string()
    } else {
        format!("http://{addr}")
    }
}

/// Serve one device until its stream ends or `stop` is set.
pub async fn serve_device(
    addr: String,
    device_id: u64,
    election: u64,
    stats: Arc<EchoStats>,
    stop: Arc<AtomicBool>,
    connect_for: Duration,
) -> Result<(), String> {
    let ep = Endpoint::from_shared(uri(&addr))
        .map_err(|e| format!("{addr}: {e}"))?
        .tcp_nodelay(true);
    let started = Instant::now();
    let channel: Channel = loop {
        match ep.connect().await {
            Ok(c) => break c,
            Err(e) if started.elapsed() > connect_for => {
                return Err(format!("{addr}: cannot connect: {e}"))
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    };
    let election_id = Some(p4::Uint128 {
        high: 0,
        low: election,
    });
    let (tx, rx) = mpsc::channel::<EchoOut>(8192);
    let arb = p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Arbitration(
            p4::MasterArbitrationUpdate {
                device_id,
                election_id,
                ..Default::default()
            },
        )),
    };
    tx.send(EchoOut::Request(arb))
        .await
        .map_err(|_| "stream closed".to_string())?;
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.map_err(|e| format!("{addr}: {e}"))?;
    let resp = grpc
        .streaming(
            tonic::Request::new(ReceiverStream::new(rx)),
            PathAndQuery::from_static("/p4.v1.P4Runtime/StreamChannel"),
            EchoCodec {
                ingress_id: INGRESS_PORT_ID,
            },
        )
        .await
        .map_err(|e| format!("{addr}: StreamChannel: {e}"))?;
    let mut inbound = resp.into_inner();
    // primary first, then the pipeline
    loop {
        match inbound.message().await {
            Ok(Some(EchoIn::Arbitration { code: 0 })) => break,
            Ok(Some(EchoIn::Arbitration { code })) => {
                return Err(format!("{addr}: not primary (status {code})"))
            }
            Ok(Some(_)) => continue,
            Ok(None) => return Err(format!("{addr}: stream closed before arbitration")),
            Err(e) => return Err(format!("{addr}: stream: {e}")),
        }
    }
    stats.primary.fetch_add(1, Ordering::Relaxed);
    let mut client = p4::p4_runtime_client::P4RuntimeClient::new(channel);
    client
        .set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
            device_id,
            election_id,
            action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
            config: Some(p4::ForwardingPipelineConfig {
                p4info: Some(minimal_p4info()),
                p4_device_config: vec![],
                cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie: 1 }),
            }),
            ..Default::default()
        })
        .await
        .map_err(|e| format!("{addr}: SetForwardingPipelineConfig: {e}"))?;
    let mut n = 0u64;
    while !stop.load(Ordering::Relaxed) {
        match inbound.message().await {
            Ok(Some(EchoIn::PacketIn {
                payload,
                port,
                port_len,
            })) => {
                let out = EchoOut::PacketOut {
                    payload,
                    port_id: EGRESS_PORT_ID,
                    port,
                    port_len,
                };
                if tx.send(out).await.is_err() {
                    break;
                }
                n += 1;
                if n.is_multiple_of(256) {
                    stats.packet_ins.fetch_add(256, Ordering::Relaxed);
                }
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    stats.packet_ins.fetch_add(n % 256, Ordering::Relaxed);
    Ok(())
}

/// Run the echo controller for `devices` ((device id, address)) until `max_time` (or
/// until it is killed).
pub fn run(
    devices: Vec<(u64, String)>,
    election: u64,
    threads: usize,
    max_time: Option<Duration>,
) -> Result<(), String> {
    let rt = if threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .enable_all()
            .build()
    }
    .map_err(|e| format!("async runtime: {e}"))?;
    let stats = Arc::new(EchoStats::default());
    let stop = Arc::new(AtomicBool::new(false));
    rt.block_on(async {
        let mut tasks = Vec::new();
        for (id, addr) in devices {
            let (s, st) = (stats.clone(), stop.clone());
            tasks.push(tokio::spawn(async move {
                if let Err(e) =
                    serve_device(addr, id, election, s, st, Duration::from_secs(30)).await
                {
                    eprintln!("sdnperf-probe p4runtime-echo: device {id}: {e}");
                }
            }));
        }
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        // like any controller, it stays up when the devices go away (the benchmark
        // stops it), unless --max-time is given
        match max_time {
            Some(m) => {
                let _ = tokio::time::timeout(m, async {
                    all.await;
                    std::future::pending::<()>().await
                })
                .await;
            }
            None => {
                all.await;
                std::future::pending::<()>().await
            }
        }
    });
    stop.store(true, Ordering::Relaxed);
    rt.shutdown_background();
    eprintln!(
        "sdnperf-probe p4runtime-echo: answered {} packet-ins on {} device(s)",
        stats.packet_ins.load(Ordering::Relaxed),
        stats.primary.load(Ordering::Relaxed)
    );
    Ok(())
}
