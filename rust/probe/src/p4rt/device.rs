//! Emulated P4Runtime devices: one gRPC server per device on its own 127.0.0.1 port, which
//! the controller under test dials. A device takes part in arbitration (the stream's
//! MasterArbitrationUpdate makes the controller primary), accepts SetForwardingPipelineConfig
//! (keeps P4Info, device config and cookie; GetForwardingPipelineConfig returns them), acks
//! Writes, answers Capabilities and Read (no entities). Once the controller is primary and a
//! pipeline is committed, the device is *ready* and, during the load, sends packet-ins whose
//! metadata follow the pushed P4Info's "packet_in" header; packet-outs (by the id in their
//! frame) and table writes (by the host MACs in their match) answer them.
//!
//! One tokio runtime (`--threads` workers) runs every device; each device's load and
//! counters (`engine::Flight`) sit behind a mutex that the stream's driver task and the
//! Write handler take briefly.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codegen::{http, Body, BoxFuture, Context, Poll, Service, StdError};
use tonic::{Request, Response, Status, Streaming};

use crate::config::Config;
use crate::engine::{self, check_count_done, Clock, Flight, Phase, Shared, SwResult, SwState};
use crate::frame;
use crate::p4rt::wire::{DevIn, DevOut, DeviceCodec, PacketInLayout};
use sdnperf_p4rt_proto::google::rpc;
use sdnperf_p4rt_proto::p4::v1 as p4;
use sdnperf_p4rt_proto::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};

/// Packet-ins (and arbitration replies) queued for a stream before the device counts the
/// controller as not reading (backpressure).
const STREAM_QUEUE: usize = 4096;

/// Message kinds counted in `messages_from_controller`.
const KINDS: [&str; 11] = [
    "arbitration",
    "packet_out",
    "digest_ack",
    "stream_other",
    "stream_malformed",
    "write",
    "read",
    "set_pipeline",
    "get_pipeline",
    "capabilities",
    "write_updates",
];
const K_ARB: usize = 0;
const K_PO: usize = 1;
const K_DACK: usize = 2;
const K_OTHER: usize = 3;
const K_BAD: usize = 4;
const K_WRITE: usize = 5;
const K_READ: usize = 6;
const K_SET: usize = 7;
const K_GET: usize = 8;
const K_CAPS: usize = 9;
const K_UPDATES: usize = 10;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum MacRole {
    Src,
    Dst,
}

struct Pipeline {
    config: p4::ForwardingPipelineConfig,
    layout: Arc<PacketInLayout>,
    /// (table id, match field id) → which MAC a 48-bit match field holds
    mac_fields: HashMap<(u32, u32), MacRole>,
}

impl Pipeline {
    fn new(config: p4::ForwardingPipelineConfig) -> Pipeline {
        let info = config.p4info.clone().unwrap_or_default();
        let layout = Arc::new(PacketInLayout::from_p4info(&info));
        let mut mac_fields = HashMap::new();
        for t in &info.tables {
            let tid = t.preamble.as_ref().map(|p| p.id).unwrap_or(0);
            for f in &t.match_fields {
                if f.bitwidth == 48 {
                    let role = if f.name.contains("dst") {
                        MacRole::Dst
                    } else {
                        MacRole::Src
                    };
                    mac_fields.insert((tid, f.id), role);
                }
            }
        }
        Pipeline {
            config,
            layout,
            mac_fields,
        }
    }
}

struct Core {
    fl: Flight,
    state: SwState,
    ever_ready: bool,
    error: Option<String>,
    closed_at: Option<u64>,
    /// the primary stream (number) and its election id
    primary: Option<(u64, p4::Uint128)>,
    next_stream: u64,
    committed: Option<Pipeline>,
    saved: Option<p4::ForwardingPipelineConfig>,
    counts: [u64; KINDS.len()],
    clk: Clock,
}

pub struct Device {
    pub index: usize,
    pub device_id: u64,
    cfg: Arc<Config>,
    sh: Arc<Shared>,
    core: Mutex<Core>,
}

fn eid(e: &Option<p4::Uint128>) -> (u64, u64) {
    e.as_ref().map(|u| (u.high, u.low)).unwrap_or((0, 0))
}

impl Device {
    pub fn new(index: usize, cfg: Arc<Config>, sh: Arc<Shared>) -> Device {
        let fl = Flight::new(index, &cfg);
        Device {
            index,
            device_id: cfg.dpid_base + index as u64,
            core: Mutex::new(Core {
                fl,
                state: SwState::Connecting,
                ever_ready: false,
                error: None,
                closed_at: None,
                primary: None,
                next_stream: 1,
                committed: None,
                saved: None,
                counts: [0; KINDS.len()],
                clk: Clock::unset(),
            }),
            cfg,
            sh,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Core> {
        // a panic elsewhere must not take the report with it
        self.core.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Ready = primary controller + committed pipeline; counted once.
    fn check_ready(&self, c: &mut Core) {
        if c.state != SwState::Closed && c.primary.is_some() && c.committed.is_some() {
            c.state = SwState::Ready;
            if !c.ever_ready {
                c.ever_ready = true;
                self.sh.ready.fetch_add(1, Ordering::SeqCst);
            }
        } else if c.state == SwState::Connecting && c.primary.is_some() {
            c.state = SwState::Handshake;
        }
    }

    /// Requests other than the stream must name this device and come from the primary.
    fn check_caller(
        &self,
        c: &mut Core,
        device_id: u64,
        election: &Option<p4::Uint128>,
    ) -> Result<(), Status> {
        if device_id != self.device_id {
            c.fl.ctl_errors += 1;
            return Err(Status::not_found(format!(
                "device id {device_id}: this is device {}",
                self.device_id
            )));
        }
        match c.primary {
            Some((_, e)) if (e.high, e.low) == eid(election) => Ok(()),
            Some(_) => {
                c.fl.ctl_errors += 1;
                Err(Status::permission_denied(
                    "election id is not the primary's",
                ))
            }
            None => {
                c.fl.ctl_errors += 1;
                Err(Status::permission_denied(
                    "no primary controller: open a stream and arbitrate first",
                ))
            }
        }
    }

    /// A message on stream `sn`.
    fn on_stream(&self, sn: u64, msg: DevIn, tx: &mpsc::Sender<Result<DevOut, Status>>) {
        let now = self.sh.now();
        let mut c = self.lock();
        match msg {
            DevIn::Arbitration(a) => {
                c.counts[K_ARB] += 1;
                if a.device_id != self.device_id {
                    c.fl.ctl_errors += 1;
                    let reply = p4::MasterArbitrationUpdate {
                        device_id: a.device_id,
                        status: Some(rpc::Status {
                            code: tonic::Code::NotFound as i32,
                            message: format!("this is device {}", self.device_id),
                            details: vec![],
                        }),
                        ..a
                    };
                    let _ = tx.try_send(Ok(DevOut::Arbitration(reply)));
                    return;
                }
                let e = a.election_id.unwrap_or_default();
                // the highest election id is primary (P4Runtime §5); a lower one is a backup
                let primary = !matches!(c.primary,
                    Some((psn, pe)) if psn != sn && (pe.high, pe.low) > (e.high, e.low));
                if primary {
                    c.primary = Some((sn, e));
                }
                let pe = c.primary.map(|(_, e)| e);
                let code = if primary {
                    0
                } else {
                    tonic::Code::AlreadyExists as i32
                };
                let reply = p4::MasterArbitrationUpdate {
                    device_id: self.device_id,
                    role: a.role,
                    election_id: pe,
                    status: Some(rpc::Status {
                        code,
                        message: if primary {
                            "primary".into()
                        } else {
                            "backup".into()
                        },
                        details: vec![],
                    }),
                };
                let _ = tx.try_send(Ok(DevOut::Arbitration(reply)));
                self.check_ready(&mut c);
            }
            DevIn::PacketOut { id } => {
                c.counts[K_PO] += 1;
                let clk = c.clk;
                match id {
                    Some(id) => c.fl.answer_id(id, &clk, now),
                    None => c.fl.unmatched += 1,
                }
            }
            DevIn::DigestAck => c.counts[K_DACK] += 1,
            DevIn::Other => c.counts[K_OTHER] += 1,
            DevIn::Malformed(_) => {
                c.counts[K_BAD] += 1;
                c.fl.ctl_errors += 1;
            }
        }
    }

    /// Stream `sn` ended (closed by the controller or broken).
    fn stream_ended(&self, sn: u64, why: String) {
        let now = self.sh.now();
        let mut c = self.lock();
        if c.primary.map(|(p, _)| p) != Some(sn) {
            return;
        }
        c.primary = None;
        if c.ever_ready {
            if c.state != SwState::Closed {
                c.state = SwState::Closed;
                c.closed_at = Some(now);
                c.error.get_or_insert(why);
            }
        } else {
            c.state = SwState::Connecting; // not ready yet: the controller may come back
        }
    }

    /// Expire, send what the load mode calls for, keep the time series. False at the end.
    fn pump(&self, sn: u64, tx: &mpsc::Sender<Result<DevOut, Status>>) -> bool {
        let now = self.sh.now();
        let cfg = &*self.cfg;
        let mut c = self.lock();
        let c = &mut *c;
        c.clk.sync(cfg, &self.sh);
        let clk = c.clk;
        let phase = clk.phase(now);
        if phase == Phase::End || self.sh.stop.load(Ordering::Relaxed) {
            return false;
        }
        let is_primary = c.primary.map(|(p, _)| p) == Some(sn);
        if !is_primary {
            return true;
        }
        c.fl.expire(now, engine::secs(cfg.timeout));
        if c.state == SwState::Ready {
            if let Some(p) = &c.committed {
                let room = tx.capacity() as u64;
                let (n, measured) = c.fl.due(cfg, &clk, now, phase, room == 0, room);
                let sw = (self.index & 0xffff) as u32;
                for _ in 0..n {
                    let seq = c.fl.record(now, measured);
                    let (src_h, dst_h) = c.fl.hosts_of(seq);
                    let out = DevOut::PacketIn {
                        layout: p.layout.clone(),
                        id: c.fl.id_of(seq),
                        dst: frame::host_mac(sw, dst_h),
                        src: frame::host_mac(sw, src_h),
                        port: src_h % cfg.ports + 1,
                    };
                    if tx.try_send(Ok(out)).is_err() {
                        break; // the stream is gone or full: the expiry counts it lost
                    }
                }
            }
        }
        let closed = c.state == SwState::Closed;
        let ever = c.ever_ready;
        c.fl.housekeeping(cfg, &self.sh, &clk, now, closed, ever);
        check_count_done(cfg, &self.sh, &clk, now);
        true
    }

    /// The result at the end of the run (`end`: ns, the same for every device).
    pub fn result(&self, end: u64) -> SwResult {
        let mut c = self.lock();
        let fl = std::mem::replace(
            &mut c.fl,
            Flight::new(
                self.index,
                &Config {
                    hosts: 2,
                    ..Config::default()
                },
            ),
        );
        let mut messages = Vec::new();
        for (k, n) in c.counts.iter().enumerate() {
            if *n > 0 {
                messages.push((KINDS[k].to_string(), *n));
            }
        }
        let mut clk = c.clk;
        clk.sync(&self.cfg, &self.sh);
        let (state, ever, error, closed_at) = (c.state, c.ever_ready, c.error.clone(), c.closed_at);
        let error = error.or_else(|| match state {
            SwState::Connecting => {
                Some("no controller became primary (no arbitration on a stream)".into())
            }
            SwState::Handshake => Some(
                "the controller is primary but pushed no pipeline (SetForwardingPipelineConfig)"
                    .into(),
            ),
            _ => None,
        });
        fl.finish(
            end,
            &clk,
            &self.cfg,
            self.device_id,
            state,
            ever,
            error,
            closed_at,
            messages,
        )
    }

    fn answer_write(&self, c: &mut Core, req: &p4::WriteRequest, now: u64) {
        let Some(p) = &c.committed else { return };
        let mut found: Vec<u64> = Vec::new();
        for u in &req.updates {
            let Some(p4::entity::Entity::TableEntry(te)) =
                u.entity.as_ref().and_then(|e| e.entity.as_ref())
            else {
                continue;
            };
            let (mut src, mut dst) = (None, None);
            for m in &te.r#match {
                let Some(role) = p.mac_fields.get(&(te.table_id, m.field_id)) else {
                    continue;
                };
                let v: &[u8] = match &m.field_match_type {
                    Some(p4::field_match::FieldMatchType::Exact(e)) => &e.value,
                    Some(p4::field_match::FieldMatchType::Ternary(t)) => &t.value,
                    Some(p4::field_match::FieldMatchType::Lpm(l)) => &l.value,
                    Some(p4::field_match::FieldMatchType::Optional(o)) => &o.value,
                    _ => continue,
                };
                if v.is_empty() || v.len() > 6 {
                    continue;
                }
                let mut mac = [0u8; 6];
                mac[6 - v.len()..].copy_from_slice(v);
                match role {
                    MacRole::Src => src = Some(mac),
                    MacRole::Dst => dst = Some(mac),
                }
            }
            if let Some(seq) = c.fl.seq_for_macs(src, dst) {
                found.push(seq);
            }
        }
        let clk = c.clk;
        for seq in found {
            c.fl.answer_seq(seq, &clk, now);
        }
    }
}

/// The unary RPCs (generated server trait).
#[derive(Clone)]
pub struct Rpc(pub Arc<Device>);

type ReadStream = tokio_stream::Iter<std::vec::IntoIter<Result<p4::ReadResponse, Status>>>;

#[tonic::async_trait]
impl P4Runtime for Rpc {
    async fn write(
        &self,
        request: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let d = &self.0;
        let req = request.into_inner();
        let now = d.sh.now();
        let mut c = d.lock();
        c.counts[K_WRITE] += 1;
        c.counts[K_UPDATES] += req.updates.len() as u64;
        d.check_caller(&mut c, req.device_id, &req.election_id)?;
        if c.committed.is_none() {
            c.fl.ctl_errors += 1;
            return Err(Status::failed_precondition(
                "no forwarding pipeline: SetForwardingPipelineConfig first",
            ));
        }
        d.answer_write(&mut c, &req, now);
        Ok(Response::new(p4::WriteResponse {}))
    }

    type ReadStream = ReadStream;

    async fn read(
        &self,
        request: Request<p4::ReadRequest>,
    ) -> Result<Response<ReadStream>, Status> {
        let d = &self.0;
        let req = request.into_inner();
        let mut c = d.lock();
        c.counts[K_READ] += 1;
        if req.device_id != d.device_id {
            c.fl.ctl_errors += 1;
            return Err(Status::not_found(format!(
                "device id {}: this is device {}",
                req.device_id, d.device_id
            )));
        }
        // an emulated device keeps no entries: every read is empty
        Ok(Response::new(tokio_stream::iter(vec![Ok(
            p4::ReadResponse { entities: vec![] },
        )])))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        request: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        use p4::set_forwarding_pipeline_config_request::Action;
        let d = &self.0;
        let req = request.into_inner();
        let mut c = d.lock();
        c.counts[K_SET] += 1;
        d.check_caller(&mut c, req.device_id, &req.election_id)?;
        let action = Action::try_from(req.action).unwrap_or(Action::Unspecified);
        let cfg = req.config;
        let needs_p4info = matches!(
            action,
            Action::Verify
                | Action::VerifyAndSave
                | Action::VerifyAndCommit
                | Action::ReconcileAndCommit
        );
        if needs_p4info && cfg.as_ref().and_then(|c| c.p4info.as_ref()).is_none() {
            c.fl.ctl_errors += 1;
            return Err(Status::invalid_argument(
                "SetForwardingPipelineConfig without a P4Info",
            ));
        }
        match action {
            Action::Verify => {}
            Action::VerifyAndSave => c.saved = cfg,
            Action::VerifyAndCommit | Action::ReconcileAndCommit => {
                c.committed = cfg.map(Pipeline::new)
            }
            Action::Commit => match c.saved.take() {
                Some(s) => c.committed = Some(Pipeline::new(s)),
                None => {
                    c.fl.ctl_errors += 1;
                    return Err(Status::failed_precondition(
                        "COMMIT without a saved pipeline (VERIFY_AND_SAVE first)",
                    ));
                }
            },
            Action::Unspecified => {
                c.fl.ctl_errors += 1;
                return Err(Status::invalid_argument(format!(
                    "action {} is not a SetForwardingPipelineConfig action",
                    req.action
                )));
            }
        }
        d.check_ready(&mut c);
        Ok(Response::new(p4::SetForwardingPipelineConfigResponse {}))
    }

    async fn get_forwarding_pipeline_config(
        &self,
        request: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        use p4::get_forwarding_pipeline_config_request::ResponseType;
        let d = &self.0;
        let req = request.into_inner();
        let mut c = d.lock();
        c.counts[K_GET] += 1;
        if req.device_id != d.device_id {
            c.fl.ctl_errors += 1;
            return Err(Status::not_found(format!(
                "device id {}: this is device {}",
                req.device_id, d.device_id
            )));
        }
        let Some(p) = &c.committed else {
            return Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
                config: Some(Default::default()),
            }));
        };
        let full = &p.config;
        let rt = ResponseType::try_from(req.response_type).unwrap_or(ResponseType::All);
        let config = p4::ForwardingPipelineConfig {
            p4info: if matches!(rt, ResponseType::All | ResponseType::P4infoAndCookie) {
                full.p4info.clone()
            } else {
                None
            },
            p4_device_config: if matches!(
                rt,
                ResponseType::All | ResponseType::DeviceConfigAndCookie
            ) {
                full.p4_device_config.clone()
            } else {
                vec![]
            },
            cookie: full.cookie,
        };
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(config),
        }))
    }

    type StreamChannelStream = ReceiverStream<Result<p4::StreamMessageResponse, Status>>;

    async fn stream_channel(
        &self,
        _request: Request<Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        // never called: DeviceService routes StreamChannel to `Stream` (hand-written codec)
        Err(Status::internal(
            "StreamChannel is served by the device's own codec",
        ))
    }

    async fn capabilities(
        &self,
        _request: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        self.0.lock().counts[K_CAPS] += 1;
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: "1.4.0".into(),
            ..Default::default()
        }))
    }
}

/// StreamChannel with the hand-written codec: a driver task per stream.
struct Stream(Arc<Device>);

impl tonic::server::StreamingService<DevIn> for Stream {
    type Response = DevOut;
    type ResponseStream = ReceiverStream<Result<DevOut, Status>>;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, request: Request<Streaming<DevIn>>) -> Self::Future {
        let dev = self.0.clone();
        Box::pin(async move {
            let (tx, rx) = mpsc::channel(STREAM_QUEUE);
            let sn = {
                let mut c = dev.lock();
                c.next_stream += 1;
                c.next_stream
            };
            tokio::spawn(drive(dev, request.into_inner(), tx, sn));
            Ok(Response::new(ReceiverStream::new(rx)))
        })
    }
}

async fn drive(
    dev: Arc<Device>,
    mut inbound: Streaming<DevIn>,
    tx: mpsc::Sender<Result<DevOut, Status>>,
    sn: u64,
) {
    let mut tick = tokio::time::interval(Duration::from_millis(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        tokio::select! {
            biased;
            m = inbound.message() => match m {
                Ok(Some(msg)) => dev.on_stream(sn, msg, &tx),
                Ok(None) => {
                    dev.stream_ended(sn, "controller closed the P4Runtime stream".into());
                    return;
                }
                Err(st) => {
                    dev.stream_ended(sn, format!("P4Runtime stream failed: {}: {}", st.code(), st.message()));
                    return;
                }
            },
            _ = tick.tick() => {}
        }
        if !dev.pump(sn, &tx) {
            return;
        }
    }
}

/// The gRPC service of one device: StreamChannel through our codec, the rest through the
/// generated server.
#[derive(Clone)]
pub struct DeviceService {
    dev: Arc<Device>,
    inner: P4RuntimeServer<Rpc>,
}

impl DeviceService {
    pub fn new(dev: Arc<Device>) -> Self {
        let inner = P4RuntimeServer::new(Rpc(dev.clone())).max_decoding_message_size(256 << 20);
        DeviceService { dev, inner }
    }
}

impl tonic::server::NamedService for DeviceService {
    const NAME: &'static str = "p4.v1.P4Runtime";
}

impl<B> Service<http::Request<B>> for DeviceService
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() == "/p4.v1.P4Runtime/StreamChannel" {
            let dev = self.dev.clone();
            Box::pin(async move {
                let mut grpc = tonic::server::Grpc::new(DeviceCodec);
                Ok(grpc.streaming(Stream(dev), req).await)
            })
        } else {
            self.inner.call(req)
        }
    }
}

/// Bind the devices' listeners (device i on `listen.port + i`, or any free port).
pub fn bind(cfg: &Config) -> Result<Vec<std::net::TcpListener>, String> {
    (0..cfg.switches)
        .map(|i| {
            let mut a: SocketAddr = cfg.listen;
            if a.port() != 0 {
                a.set_port(a.port() + i as u16);
            }
            let l = std::net::TcpListener::bind(a).map_err(|e| {
                format!(
                    "device {}: cannot listen on {a}: {e}",
                    cfg.dpid_base + i as u64
                )
            })?;
            l.set_nonblocking(true)
                .map_err(|e| format!("set_nonblocking: {e}"))?;
            Ok(l)
        })
        .collect()
}

/// Serve the devices until the end of the timeline; returns their results.
pub fn serve(
    cfg: Arc<Config>,
    sh: Arc<Shared>,
    listeners: Vec<std::net::TcpListener>,
) -> Vec<SwResult> {
    let rt = if cfg.threads <= 1 {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(cfg.threads)
            .enable_all()
            .build()
    };
    let devices: Vec<Arc<Device>> = (0..cfg.switches)
        .map(|i| Arc::new(Device::new(i, cfg.clone(), sh.clone())))
        .collect();
    let rt = match rt {
        Ok(rt) => rt,
        Err(e) => {
            for d in &devices {
                d.lock().error = Some(format!("cannot start the async runtime: {e}"));
            }
            sh.failed.fetch_add(devices.len(), Ordering::SeqCst);
            let end = sh.now();
            return devices.iter().map(|d| d.result(end)).collect();
        }
    };
    rt.block_on(async {
        for (d, l) in devices.iter().zip(listeners) {
            let svc = DeviceService::new(d.clone());
            let dev = d.clone();
            tokio::spawn(async move {
                let listener = match tokio::net::TcpListener::from_std(l) {
                    Ok(l) => l,
                    Err(e) => {
                        dev.lock().error = Some(format!("listener: {e}"));
                        return;
                    }
                };
                let incoming = tokio_stream::StreamExt::map(
                    tokio_stream::wrappers::TcpListenerStream::new(listener),
                    |s| {
                        s.inspect(|s| {
                            let _ = s.set_nodelay(true); // packet-ins must not wait behind Nagle
                        })
                    },
                );
                let r = tonic::transport::Server::builder()
                    .add_service(svc)
                    .serve_with_incoming(incoming)
                    .await;
                if let Err(e) = r {
                    dev.lock()
                        .error
                        .get_or_insert(format!("gRPC server failed: {e}"));
                }
            });
        }
        // until the end of the timeline (or no controller came at all)
        let mut clk = Clock::unset();
        loop {
            tokio::time::sleep(Duration::from_millis(5)).await;
            clk.sync(&cfg, &sh);
            if clk.phase(sh.now()) == Phase::End || sh.stop.load(Ordering::Relaxed) {
                break;
            }
        }
    });
    let end = sh.now();
    let results = devices.iter().map(|d| d.result(end)).collect();
    rt.shutdown_background(); // open streams end with the process
    results
}

#[cfg(test)]
mod tests {
    use super::*;
    use sdnperf_p4rt_proto::p4::config::v1 as cfgp;

    fn pipeline() -> p4::ForwardingPipelineConfig {
        let mf = |id: u32, name: &str, bitwidth: i32| cfgp::MatchField {
            id,
            name: name.into(),
            bitwidth,
            ..Default::default()
        };
        let info = cfgp::P4Info {
            tables: vec![cfgp::Table {
                preamble: Some(cfgp::Preamble {
                    id: 77,
                    name: "flow_port".into(),
                    ..Default::default()
                }),
                match_fields: vec![
                    mf(1, "standard_metadata.ingress_port", 9),
                    mf(2, "hdr.ethernet.srcAddr", 48),
                    mf(3, "hdr.ethernet.dstAddr", 48),
                ],
                ..Default::default()
            }],
            ..Default::default()
        };
        p4::ForwardingPipelineConfig {
            p4info: Some(info),
            p4_device_config: vec![],
            cookie: Some(p4::forwarding_pipeline_config::Cookie { cookie: 9 }),
        }
    }

    fn entry(src: [u8; 6], dst: [u8; 6]) -> p4::Update {
        let exact = |field_id: u32, v: &[u8]| p4::FieldMatch {
            field_id,
            field_match_type: Some(p4::field_match::FieldMatchType::Exact(
                p4::field_match::Exact { value: v.to_vec() },
            )),
        };
        p4::Update {
            r#type: p4::update::Type::Insert as i32,
            entity: Some(p4::Entity {
                entity: Some(p4::entity::Entity::TableEntry(p4::TableEntry {
                    table_id: 77,
                    r#match: vec![exact(1, &[1]), exact(2, &src), exact(3, &dst)],
                    ..Default::default()
                })),
            }),
        }
    }

    #[test]
    fn writes_answer_the_oldest_waiting_packet_of_the_host_in_their_match() {
        let cfg = Arc::new(Config {
            hosts: 4,
            ..Config::default()
        });
        let sh = Arc::new(Shared::new());
        let dev = Device::new(2, cfg, sh);
        let mut c = dev.lock();
        c.committed = Some(Pipeline::new(pipeline()));
        c.clk = Clock {
            load_start: 0,
            measure_start: 0,
            measure_end: u64::MAX / 2,
            run_end: u64::MAX / 2,
        };
        // packets 0..8: host h sends seq h and h + 4
        for s in 0..8 {
            assert_eq!(c.fl.record(1000 + s, true), s);
        }
        let host = |h: u32| frame::host_mac(2, h);
        // host 1 -> 2 twice: answers seq 1, then seq 5 (the oldest waiting each time)
        let req = p4::WriteRequest {
            updates: vec![entry(host(1), host(2))],
            ..Default::default()
        };
        dev.answer_write(&mut c, &req, 5000);
        dev.answer_write(&mut c, &req, 5000);
        assert_eq!(c.fl.answered, 2);
        assert_eq!(c.fl.outstanding, 6);
        // another device's MACs, or a table without MAC fields: nothing
        let other = p4::WriteRequest {
            updates: vec![entry(frame::host_mac(3, 1), frame::host_mac(3, 2))],
            ..Default::default()
        };
        dev.answer_write(&mut c, &other, 5000);
        assert_eq!(c.fl.answered, 2);
        // the packet-out for seq 1 arrives later: a duplicate
        let id = c.fl.id_of(1);
        let clk = c.clk;
        c.fl.answer_id(id, &clk, 6000);
        assert_eq!(c.fl.duplicates, 1);
        assert_eq!(
            Pipeline::new(pipeline()).mac_fields.get(&(77, 3)),
            Some(&MacRole::Dst)
        );
    }
}
