//! P4Runtime table-write benchmark client (bench/p4runtime/run.py drives it).
//!
//! Connects as primary, pushes PROGRAM.json + P4INFO.bin (VERIFY_AND_COMMIT), then writes
//! `--entries` table entries in WriteRequests of `--batch` updates, one request in flight
//! at a time (a controller waiting for each answer), and reports entries/s for INSERT,
//! MODIFY and DELETE. Requests are built during the timed loop, as a controller would.
//! Table `--table` (default l2: exact 48-bit key, action forward(port)); with
//! `--table ipv4_lpm`: /32 and /24 LPM keys, action route(dmac, port).

use clap::Parser;
use prost::Message;
use sdnperf_p4rt::proto::p4::config::v1 as cfg;
use sdnperf_p4rt::proto::p4::v1 as p4;
use sdnperf_p4rt::proto::p4::v1::p4_runtime_client::P4RuntimeClient;
use std::time::Instant;

/// P4Runtime table-write benchmark client: writes --entries entries in WriteRequests of
/// --batch updates (INSERT, MODIFY, DELETE) and reports entries/s; with --packet-io N,
/// packet-outs to the CPU port of packet_io.p4 come back as packet-ins (round trips).
#[derive(Parser, Debug)]
#[command(name = "sdnperf-p4rt-bench")]
struct Args {
    /// the P4Runtime server, HOST:PORT
    #[arg(long)]
    addr: String,
    /// the BMv2 JSON program pushed with SetForwardingPipelineConfig
    #[arg(long)]
    json: String,
    /// its P4Info (binary protobuf)
    #[arg(long)]
    p4info: String,
    #[arg(long, default_value_t = 1)]
    device_id: u64,
    /// table entries written per phase
    #[arg(long, default_value_t = 100_000)]
    entries: usize,
    /// updates per WriteRequest (0 counts as 1)
    #[arg(long, default_value_t = 1000)]
    batch: usize,
    /// l2 (exact 48-bit key) or ipv4_lpm (/32 and /24 keys)
    #[arg(long, default_value = "l2")]
    table: String,
    /// write the results as JSON here
    #[arg(long)]
    json_out: Option<String>,
    /// packet-out -> packet-in round trips to measure instead of table writes (0: none)
    #[arg(long, default_value_t = 0)]
    packet_io: usize,
    /// packet-outs in flight (0 counts as 1)
    #[arg(long, default_value_t = 256)]
    window: usize,
}

fn main() {
    let a = Args::parse();
    let (addr, json, p4info, device_id, entries, batch, table, json_out, packet_io, window) = (
        a.addr,
        a.json,
        a.p4info,
        a.device_id,
        a.entries,
        a.batch.max(1),
        a.table,
        a.json_out,
        a.packet_io,
        a.window.max(1),
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    if let Err(e) = rt.block_on(run(
        addr, json, p4info, device_id, entries, batch, table, json_out, packet_io, window,
    )) {
        eprintln!("sdnperf-p4rt-bench: error: {}", e);
        std::process::exit(1);
    }
}

fn u128v(v: u128) -> p4::Uint128 {
    p4::Uint128 {
        high: (v >> 64) as u64,
        low: v as u64,
    }
}

#[allow(clippy::too_many_arguments)]
async fn run(
    addr: String,
    json: String,
    p4info: String,
    device_id: u64,
    n: usize,
    batch: usize,
    table: String,
    json_out: Option<String>,
    packet_io: usize,
    window: usize,
) -> Result<(), String> {
    let info = cfg::P4Info::decode(
        std::fs::read(&p4info)
            .map_err(|e| format!("{}: {}", p4info, e))?
            .as_slice(),
    )
    .map_err(|e| e.to_string())?;
    let bmv2 = std::fs::read(&json).map_err(|e| format!("{}: {}", json, e))?;
    let mut c = P4RuntimeClient::connect(format!("http://{}", addr))
        .await
        .map_err(|e| format!("connect {}: {}", addr, e))?
        .max_decoding_message_size(256 << 20)
        .max_encoding_message_size(256 << 20);
    // arbitration
    let (tx, rx) = tokio::sync::mpsc::channel(4096);
    let election = 1u128;
    tx.send(p4::StreamMessageRequest {
        update: Some(p4::stream_message_request::Update::Arbitration(
            p4::MasterArbitrationUpdate {
                device_id,
                role: None,
                election_id: Some(u128v(election)),
                status: None,
            },
        )),
    })
    .await
    .map_err(|e| e.to_string())?;
    let mut stream = c
        .stream_channel(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .map_err(|e| e.to_string())?
        .into_inner();
    let first = stream
        .message()
        .await
        .map_err(|e| e.to_string())?
        .ok_or("stream closed")?;
    match first.update {
        Some(p4::stream_message_response::Update::Arbitration(a))
            if a.status.as_ref().map(|s| s.code) == Some(0) => {}
        other => return Err(format!("not primary: {:?}", other)),
    }
    c.set_forwarding_pipeline_config(p4::SetForwardingPipelineConfigRequest {
        device_id,
        election_id: Some(u128v(election)),
        action: p4::set_forwarding_pipeline_config_request::Action::VerifyAndCommit as i32,
        config: Some(p4::ForwardingPipelineConfig {
            p4info: Some(info.clone()),
            p4_device_config: bmv2,
            cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie: 1 }),
        }),
        ..Default::default()
    })
    .await
    .map_err(|e| format!("SetForwardingPipelineConfig: {}", e))?;
    if packet_io > 0 {
        return packet_io_loop(tx, stream, packet_io, window, json_out).await;
    }
    let t = info
        .tables
        .iter()
        .find(|t| {
            t.preamble
                .as_ref()
                .map(|p| p.name.ends_with(&table))
                .unwrap_or(false)
        })
        .ok_or_else(|| format!("no table {}", table))?;
    let tid = t.preamble.as_ref().unwrap().id;
    let act_name = if table == "l2" { "forward" } else { "route" };
    let act = info
        .actions
        .iter()
        .find(|a| {
            a.preamble
                .as_ref()
                .map(|p| p.name.ends_with(act_name))
                .unwrap_or(false)
        })
        .ok_or("no action")?;
    let aid = act.preamble.as_ref().unwrap().id;
    let lpm = table != "l2";
    let entry = |k: usize, port: u32| -> p4::TableEntry {
        let (fm, params) = if lpm {
            // half /32 host routes, half /24 prefixes
            let (v, len) = if k.is_multiple_of(2) {
                (0x0a00_0000u32 + k as u32, 32)
            } else {
                (0x0b00_0000u32.wrapping_add((k as u32) << 8), 24)
            };
            (
                p4::field_match::FieldMatchType::Lpm(p4::field_match::Lpm {
                    value: v.to_be_bytes().to_vec(),
                    prefix_len: len,
                }),
                vec![
                    p4::action::Param {
                        param_id: 1,
                        value: vec![2, 0, 0, (k >> 16) as u8, (k >> 8) as u8, k as u8],
                    },
                    p4::action::Param {
                        param_id: 2,
                        value: port.to_be_bytes()[2..].to_vec(),
                    },
                ],
            )
        } else {
            let mac = (0x0200_0000_0000u64 + k as u64).to_be_bytes()[2..].to_vec();
            (
                p4::field_match::FieldMatchType::Exact(p4::field_match::Exact { value: mac }),
                vec![p4::action::Param {
                    param_id: 1,
                    value: port.to_be_bytes()[2..].to_vec(),
                }],
            )
        };
        p4::TableEntry {
            table_id: tid,
            r#match: vec![p4::FieldMatch {
                field_id: 1,
                field_match_type: Some(fm),
            }],
            action: Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(p4::Action {
                    action_id: aid,
                    params,
                })),
            }),
            ..Default::default()
        }
    };
    let mut results = vec![];
    for (name, ty, port) in [
        ("insert", p4::update::Type::Insert, 1u32),
        ("modify", p4::update::Type::Modify, 2),
        ("delete", p4::update::Type::Delete, 1),
    ] {
        let t0 = Instant::now();
        let mut lat = vec![];
        let mut k = 0;
        while k < n {
            let m = batch.min(n - k);
            let tb = Instant::now();
            let updates = (k..k + m)
                .map(|x| p4::Update {
                    r#type: ty as i32,
                    entity: Some(p4::Entity {
                        entity: Some(p4::entity::Entity::TableEntry(entry(x, port))),
                    }),
                })
                .collect();
            c.write(p4::WriteRequest {
                device_id,
                election_id: Some(u128v(election)),
                updates,
                ..Default::default()
            })
            .await
            .map_err(|e| format!("{} batch at {}: {}", name, k, e))?;
            lat.push(tb.elapsed().as_secs_f64() * 1e3);
            k += m;
        }
        let el = t0.elapsed().as_secs_f64();
        if name == "insert" {
            // check: everything is there
            let mut got = 0;
            let mut rs = c
                .read(p4::ReadRequest {
                    device_id,
                    entities: vec![p4::Entity {
                        entity: Some(p4::entity::Entity::TableEntry(p4::TableEntry {
                            table_id: tid,
                            ..Default::default()
                        })),
                    }],
                    ..Default::default()
                })
                .await
                .map_err(|e| e.to_string())?
                .into_inner();
            while let Some(r) = rs.message().await.map_err(|e| e.to_string())? {
                got += r.entities.len();
            }
            if got != n {
                return Err(format!("read back {} entries, wrote {}", got, n));
            }
        }
        lat.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let p = |q: f64| lat[((lat.len() - 1) as f64 * q).round() as usize];
        println!(
            "{:<6} {} entries in batches of {}: {:.3} s = {:.0} entries/s (per batch ms: median {:.2}, p90 {:.2}, max {:.2})",
            name, n, batch, el, n as f64 / el, p(0.5), p(0.9), p(1.0)
        );
        results.push(format!("\"{}\": {{\"entries\": {}, \"batch\": {}, \"seconds\": {:.4}, \"rate\": {:.0}, \"batch_ms_median\": {:.3}, \"batch_ms_p90\": {:.3}}}", name, n, batch, el, n as f64 / el, p(0.5), p(0.9)));
    }
    if let Some(f) = json_out {
        std::fs::write(
            &f,
            format!("{{\"table\": \"{}\", {}}}\n", table, results.join(", ")),
        )
        .map_err(|e| e.to_string())?;
    }
    drop(tx);
    Ok(())
}

/// Packet-out -> switch -> packet-in round trips on loopback (no ports): with packet_io.p4,
/// a packet-out whose egress_port is the CPU port (255) comes back as a packet-in.
/// `window` packet-outs in flight at most.
async fn packet_io_loop(
    tx: tokio::sync::mpsc::Sender<p4::StreamMessageRequest>,
    mut stream: tonic::Streaming<p4::StreamMessageResponse>,
    n: usize,
    window: usize,
    json_out: Option<String>,
) -> Result<(), String> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    let got = Arc::new(AtomicUsize::new(0));
    let notify = Arc::new(tokio::sync::Notify::new());
    let t0 = Instant::now();
    let (g2, n2) = (got.clone(), notify.clone());
    let reader = tokio::spawn(async move {
        let mut rtts = Vec::with_capacity(n);
        while let Ok(Some(m)) = stream.message().await {
            if let Some(p4::stream_message_response::Update::Packet(p)) = m.update {
                if p.payload.len() >= 22 {
                    let sent = u64::from_be_bytes(p.payload[14..22].try_into().unwrap());
                    rtts.push(t0.elapsed().as_nanos() as u64 - sent);
                }
                if g2.fetch_add(1, Ordering::SeqCst) + 1 >= n {
                    n2.notify_one();
                    break;
                }
                n2.notify_one();
            }
        }
        rtts
    });
    let mut sent = 0usize;
    while sent < n {
        while sent - got.load(Ordering::SeqCst) >= window {
            if tokio::time::timeout(std::time::Duration::from_secs(5), notify.notified())
                .await
                .is_err()
            {
                return Err(format!(
                    "no packet-in for 5 s ({} of {} back)",
                    got.load(Ordering::SeqCst),
                    sent
                ));
            }
        }
        let mut payload = vec![0xff; 6];
        payload.extend_from_slice(&[0x02, 0, 0, 0, 0, 1, 0x88, 0xb5]);
        payload.extend_from_slice(&(t0.elapsed().as_nanos() as u64).to_be_bytes());
        payload.resize(60, 0);
        let po = p4::PacketOut {
            payload,
            metadata: vec![p4::PacketMetadata {
                metadata_id: 1,
                value: vec![0, 255],
            }],
        };
        tx.send(p4::StreamMessageRequest {
            update: Some(p4::stream_message_request::Update::Packet(po)),
        })
        .await
        .map_err(|e| e.to_string())?;
        sent += 1;
    }
    let mut rtts = tokio::time::timeout(std::time::Duration::from_secs(10), reader)
        .await
        .map_err(|_| "packet-ins stopped".to_string())?
        .map_err(|e| e.to_string())?;
    let el = t0.elapsed().as_secs_f64();
    rtts.sort();
    let q = |x: f64| {
        rtts.get(((rtts.len().max(1) - 1) as f64 * x) as usize)
            .copied()
            .unwrap_or(0) as f64
            / 1e3
    };
    println!(
        "packet-io {} packet-outs -> packet-ins, window {}: {:.3} s = {:.0} round trips/s (RTT us: median {:.0}, p99 {:.0})",
        n, window, el, n as f64 / el, q(0.5), q(0.99)
    );
    if let Some(f) = json_out {
        std::fs::write(&f, format!("{{\"packet_io\": {{\"n\": {}, \"window\": {}, \"seconds\": {:.4}, \"rate\": {:.0}, \"rtt_us_median\": {:.1}, \"rtt_us_p99\": {:.1}}}}}\n", n, window, el, n as f64 / el, q(0.5), q(0.99))).map_err(|e| e.to_string())?;
    }
    drop(tx);
    Ok(())
}
