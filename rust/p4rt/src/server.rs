//! The P4Runtime gRPC service: arbitration (election ids per role, primary/backup),
//! pipeline config, Write/Read (executed on the data-plane thread), StreamChannel
//! (packet-in/out, digests, idle timeouts), Capabilities.

use crate::device::{Device, Event, PErr};
use crate::hooks::DpHandle;
use crate::pipe::Pipe;
use crate::proto::google::rpc;
use crate::proto::p4::v1 as p4;
use crate::proto::p4::v1::p4_runtime_server::{P4Runtime, P4RuntimeServer};
use prost::Message;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Code, Request, Response, Status, Streaming};

pub const API_VERSION: &str = "1.4.1";
/// largest google.rpc.Status we put in grpc-status-details-bin (base64 grows it by 4/3)
const MAX_DETAILS: usize = 11000;

struct Ctrl {
    role: String,
    election: Option<u128>,
    tx: mpsc::Sender<Result<p4::StreamMessageResponse, Status>>,
}

#[derive(Default)]
struct Arb {
    ctrls: HashMap<u64, Ctrl>,
    /// highest election id seen per role
    highest: HashMap<String, u128>,
    next_id: u64,
}

impl Arb {
    /// The primary of a role: the connected controller holding the highest election id
    /// ever seen for that role.
    fn primary(&self, role: &str) -> Option<u64> {
        let hi = *self.highest.get(role)?;
        self.ctrls
            .iter()
            .find(|(_, c)| c.role == role && c.election == Some(hi))
            .map(|(id, _)| *id)
    }
    fn update_for(&self, id: u64, device_id: u64) -> p4::StreamMessageResponse {
        let c = &self.ctrls[&id];
        let prim = self.primary(&c.role);
        let (code, msg) = match prim {
            Some(p) if p == id => (Code::Ok, "primary"),
            Some(_) => (Code::AlreadyExists, "backup: another controller is primary"),
            None => (Code::NotFound, "backup: no primary"),
        };
        let hi = self.highest.get(&c.role).copied();
        p4::StreamMessageResponse {
            update: Some(p4::stream_message_response::Update::Arbitration(
                p4::MasterArbitrationUpdate {
                    device_id,
                    role: if c.role.is_empty() {
                        None
                    } else {
                        Some(p4::Role {
                            name: c.role.clone(),
                            ..Default::default()
                        })
                    },
                    election_id: hi.map(|h| p4::Uint128 {
                        high: (h >> 64) as u64,
                        low: h as u64,
                    }),
                    status: Some(rpc::Status {
                        code: code as i32,
                        message: msg.into(),
                        details: vec![],
                    }),
                },
            )),
        }
    }
    fn notify_role(&self, role: &str, device_id: u64) {
        for (id, c) in &self.ctrls {
            if c.role == role {
                let _ = c.tx.try_send(Ok(self.update_for(*id, device_id)));
            }
        }
    }
}

pub struct Service {
    pub device_id: u64,
    pub dp: DpHandle,
    arb: Arc<Mutex<Arb>>,
    /// VERIFY_AND_SAVE'd config waiting for COMMIT
    saved: Arc<Mutex<Option<p4::ForwardingPipelineConfig>>>,
}

fn role_name(r: &Option<p4::Role>) -> String {
    r.as_ref().map(|r| r.name.clone()).unwrap_or_default()
}

fn eid(e: &Option<p4::Uint128>) -> Option<u128> {
    e.as_ref().map(|e| ((e.high as u128) << 64) | e.low as u128)
}

fn status(e: PErr) -> Status {
    Status::new(e.code, e.msg)
}

/// Builds a pipeline from a config (parses the BMv2 JSON, checks the P4Info against it).
pub fn build_pipe(
    c: &p4::ForwardingPipelineConfig,
) -> Result<(Pipe, sdnperf_switch::pipeline::Program), Status> {
    let p4info = c
        .p4info
        .clone()
        .ok_or_else(|| Status::invalid_argument("config without p4info"))?;
    let text = std::str::from_utf8(&c.p4_device_config)
        .map_err(|_| Status::invalid_argument("p4_device_config is not UTF-8 BMv2 JSON"))?;
    if text.trim().is_empty() {
        return Err(Status::invalid_argument(
            "empty p4_device_config (BMv2 JSON expected)",
        ));
    }
    let prog = sdnperf_switch::json::load_str(text)
        .map_err(|e| Status::invalid_argument(format!("p4_device_config: {}", e)))?;
    let cookie = c.cookie.as_ref().map(|c| c.cookie);
    let pipe = Pipe::build(p4info, c.p4_device_config.clone(), cookie, &prog)
        .map_err(|e| Status::invalid_argument(format!("p4info: {}", e)))?;
    Ok((pipe, prog))
}

impl Service {
    pub fn new(device_id: u64, dp: DpHandle) -> Service {
        Service {
            device_id,
            dp,
            arb: Arc::new(Mutex::new(Arb::default())),
            saved: Arc::new(Mutex::new(None)),
        }
    }

    pub fn into_server(self) -> P4RuntimeServer<Service> {
        P4RuntimeServer::new(self)
            .max_decoding_message_size(256 << 20)
            .max_encoding_message_size(256 << 20)
    }

    /// Routes device events to the primary controller of the default role.
    pub fn spawn_event_router(&self, mut rx: mpsc::Receiver<Event>) {
        let arb = self.arb.clone();
        tokio::spawn(async move {
            while let Some(ev) = rx.recv().await {
                let tx = {
                    let a = arb.lock().unwrap();
                    a.primary("").map(|p| a.ctrls[&p].tx.clone())
                };
                if let Some(tx) = tx {
                    let _ = tx
                        .send(Ok(p4::StreamMessageResponse { update: Some(ev) }))
                        .await;
                }
            }
        });
    }

    fn check_device(&self, d: u64) -> Result<(), Status> {
        if d != self.device_id {
            return Err(Status::not_found(format!(
                "unknown device id {} (this switch is {})",
                d, self.device_id
            )));
        }
        Ok(())
    }

    fn check_primary(&self, role: &str, e: Option<u128>) -> Result<(), Status> {
        let a = self.arb.lock().unwrap();
        match (a.primary(role), e) {
            (Some(p), Some(e)) if a.ctrls[&p].election == Some(e) => Ok(()),
            (_, None) => Err(Status::permission_denied(
                "election_id missing: only the primary controller may write",
            )),
            _ => Err(Status::permission_denied(
                "not the primary controller (election_id does not match the primary's)",
            )),
        }
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send>>;

#[tonic::async_trait]
impl P4Runtime for Service {
    async fn write(
        &self,
        req: Request<p4::WriteRequest>,
    ) -> Result<Response<p4::WriteResponse>, Status> {
        let r = req.into_inner();
        self.check_device(r.device_id)?;
        self.check_primary(&r.role, eid(&r.election_id))?;
        use p4::write_request::Atomicity as At;
        let rollback = match At::try_from(r.atomicity) {
            Ok(At::ContinueOnError) => false,
            Ok(At::RollbackOnError) | Ok(At::DataplaneAtomic) => true,
            Err(_) => return Err(Status::invalid_argument("unknown atomicity")),
        };
        let updates = r.updates;
        let n = updates.len();
        let results = self
            .dp
            .call(move |d: &mut Device| {
                if d.pipe.is_none() {
                    return Err(Status::failed_precondition(
                        "no forwarding pipeline config set",
                    ));
                }
                Ok(d.write_batch(&updates, rollback))
            })
            .await
            .ok_or_else(|| {
                Status::internal("request handling failed inside the switch (forwarding continues)")
            })??;
        if results.iter().all(|r| r.is_ok()) {
            return Ok(Response::new(p4::WriteResponse {}));
        }
        let nfail = results.iter().filter(|r| r.is_err()).count();
        let first = results
            .iter()
            .enumerate()
            .find_map(|(i, r)| r.as_ref().err().map(|e| (i, e.clone())))
            .unwrap();
        let msg = format!(
            "{} of {} updates failed; first: update {}: {}",
            nfail, n, first.0, first.1.msg
        );
        // one p4.v1.Error per update; gRPC clients cap trailing metadata (often 8-16 KiB),
        // so big batches keep the codes and only the first failure's message
        let mk = |with_msgs: bool| -> rpc::Status {
            let details = results
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let e = match r {
                        Ok(()) => p4::Error::default(),
                        Err(e) => p4::Error {
                            canonical_code: e.code as i32,
                            message: if with_msgs || i == first.0 {
                                e.msg.clone()
                            } else {
                                String::new()
                            },
                            space: "sdnperf".into(),
                            code: 0,
                            details: None,
                        },
                    };
                    prost_types::Any {
                        type_url: "type.googleapis.com/p4.v1.Error".into(),
                        value: e.encode_to_vec(),
                    }
                })
                .collect();
            rpc::Status {
                code: Code::Unknown as i32,
                message: msg.clone(),
                details,
            }
        };
        let mut st = mk(true);
        if st.encoded_len() > MAX_DETAILS {
            st = mk(false);
        }
        if st.encoded_len() > MAX_DETAILS {
            // still too large for the trailer: codes of the failures only are lost
            let m = format!(
                "{} (per-update details omitted: {} updates are too many for gRPC metadata)",
                msg, n
            );
            return Err(Status::new(Code::Unknown, m));
        }
        Err(Status::with_details(
            Code::Unknown,
            msg,
            st.encode_to_vec().into(),
        ))
    }

    type ReadStream = BoxStream<p4::ReadResponse>;

    async fn read(
        &self,
        req: Request<p4::ReadRequest>,
    ) -> Result<Response<Self::ReadStream>, Status> {
        let r = req.into_inner();
        self.check_device(r.device_id)?;
        let ents = r.entities;
        let out = self
            .dp
            .call(move |d: &mut Device| {
                let mut out = vec![];
                for e in &ents {
                    d.read(e, &mut out)?;
                }
                Ok::<_, PErr>(out)
            })
            .await
            .ok_or_else(|| {
                Status::internal("request handling failed inside the switch (forwarding continues)")
            })?
            .map_err(status)?;
        // one ReadResponse per 1000 entities
        let mut chunks: Vec<Result<p4::ReadResponse, Status>> = vec![];
        let mut it = out.into_iter().peekable();
        if it.peek().is_none() {
            chunks.push(Ok(p4::ReadResponse { entities: vec![] }));
        }
        while it.peek().is_some() {
            chunks.push(Ok(p4::ReadResponse {
                entities: it.by_ref().take(1000).collect(),
            }));
        }
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn set_forwarding_pipeline_config(
        &self,
        req: Request<p4::SetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::SetForwardingPipelineConfigResponse>, Status> {
        use p4::set_forwarding_pipeline_config_request::Action as A;
        let r = req.into_inner();
        self.check_device(r.device_id)?;
        self.check_primary(&r.role, eid(&r.election_id))?;
        let action =
            A::try_from(r.action).map_err(|_| Status::invalid_argument("unknown action"))?;
        let cfg = r.config;
        match action {
            A::Unspecified => Err(Status::invalid_argument("action UNSPECIFIED")),
            A::Verify => {
                build_pipe(&cfg.ok_or_else(|| Status::invalid_argument("config missing"))?)?;
                Ok(Response::new(Default::default()))
            }
            A::VerifyAndSave => {
                let c = cfg.ok_or_else(|| Status::invalid_argument("config missing"))?;
                build_pipe(&c)?;
                *self.saved.lock().unwrap() = Some(c);
                Ok(Response::new(Default::default()))
            }
            A::Commit => {
                let c = self.saved.lock().unwrap().take().ok_or_else(|| {
                    Status::failed_precondition("COMMIT without a VERIFY_AND_SAVE'd config")
                })?;
                let (pipe, prog) = build_pipe(&c)?;
                self.dp
                    .call(move |d: &mut Device| d.commit(pipe, prog, false))
                    .await
                    .ok_or_else(|| Status::unavailable("switch stopped"))?;
                Ok(Response::new(Default::default()))
            }
            A::VerifyAndCommit | A::ReconcileAndCommit => {
                let c = cfg.ok_or_else(|| Status::invalid_argument("config missing"))?;
                let (pipe, prog) = build_pipe(&c)?;
                let reconcile = action == A::ReconcileAndCommit;
                self.dp
                    .call(move |d: &mut Device| d.commit(pipe, prog, reconcile))
                    .await
                    .ok_or_else(|| Status::unavailable("switch stopped"))?;
                Ok(Response::new(Default::default()))
            }
        }
    }

    async fn get_forwarding_pipeline_config(
        &self,
        req: Request<p4::GetForwardingPipelineConfigRequest>,
    ) -> Result<Response<p4::GetForwardingPipelineConfigResponse>, Status> {
        use p4::get_forwarding_pipeline_config_request::ResponseType as RT;
        let r = req.into_inner();
        self.check_device(r.device_id)?;
        let rt = RT::try_from(r.response_type)
            .map_err(|_| Status::invalid_argument("unknown response_type"))?;
        let (pipe, version) = self
            .dp
            .call(|d: &mut Device| (d.pipe.clone(), d.sw.as_ref().map(|s| s.config_version())))
            .await
            .ok_or_else(|| Status::unavailable("switch stopped"))?;
        let mut c = p4::ForwardingPipelineConfig::default();
        if let Some(p) = pipe {
            // the switch's version: the cookie the controller set (ctl reads the same
            // with config_version), else the program's fingerprint
            c.cookie = version.map(|cookie| p4::forwarding_pipeline_config::Cookie { cookie });
            if matches!(rt, RT::All | RT::P4infoAndCookie) {
                c.p4info = Some(p.p4info.clone());
            }
            if matches!(rt, RT::All | RT::DeviceConfigAndCookie) {
                c.p4_device_config = p.device_config.clone();
            }
        }
        Ok(Response::new(p4::GetForwardingPipelineConfigResponse {
            config: Some(c),
        }))
    }

    type StreamChannelStream = BoxStream<p4::StreamMessageResponse>;

    async fn stream_channel(
        &self,
        req: Request<Streaming<p4::StreamMessageRequest>>,
    ) -> Result<Response<Self::StreamChannelStream>, Status> {
        let mut inbound = req.into_inner();
        let (tx, rx) = mpsc::channel::<Result<p4::StreamMessageResponse, Status>>(4096);
        let arb = self.arb.clone();
        let dp = self.dp.clone();
        let device_id = self.device_id;
        let id = {
            let mut a = arb.lock().unwrap();
            a.next_id += 1;
            a.next_id
        };
        tokio::spawn(async move {
            use p4::stream_message_request::Update as U;
            let mut joined = false;
            while let Some(msg) = inbound.next().await {
                let Ok(msg) = msg else { break };
                match msg.update {
                    Some(U::Arbitration(a)) => {
                        if a.device_id != device_id {
                            let _ = tx
                                .send(Err(Status::not_found(format!(
                                    "unknown device id {}",
                                    a.device_id
                                ))))
                                .await;
                            break;
                        }
                        let role = role_name(&a.role);
                        let e = eid(&a.election_id);
                        let dup = {
                            let ar = arb.lock().unwrap();
                            e.map(|e| {
                                ar.ctrls.iter().any(|(cid, c)| {
                                    *cid != id && c.role == role && c.election == Some(e)
                                })
                            })
                            .unwrap_or(false)
                        };
                        if dup {
                            let _ = tx
                                .send(Err(Status::invalid_argument(
                                    "election_id already used by another controller",
                                )))
                                .await;
                            break;
                        }
                        let mut ar = arb.lock().unwrap();
                        let old_role = ar.ctrls.get(&id).map(|c| c.role.clone());
                        let before = ar.primary(&role);
                        ar.ctrls.insert(
                            id,
                            Ctrl {
                                role: role.clone(),
                                election: e,
                                tx: tx.clone(),
                            },
                        );
                        joined = true;
                        if let Some(e) = e {
                            let h = ar.highest.entry(role.clone()).or_insert(0);
                            if e >= *h {
                                *h = e;
                            }
                        }
                        let after = ar.primary(&role);
                        if before != after {
                            ar.notify_role(&role, device_id);
                        } else {
                            let _ = tx.try_send(Ok(ar.update_for(id, device_id)));
                        }
                        if let Some(o) = old_role {
                            if o != role {
                                ar.notify_role(&o, device_id);
                            }
                        }
                    }
                    Some(U::Packet(po)) => {
                        let is_primary = {
                            let ar = arb.lock().unwrap();
                            ar.ctrls
                                .get(&id)
                                .map(|c| ar.primary(&c.role) == Some(id))
                                .unwrap_or(false)
                        };
                        if !is_primary {
                            let _ = tx.try_send(Ok(stream_error(
                                Code::PermissionDenied,
                                "packet-out from a controller that is not primary",
                                Some(po.clone()),
                            )));
                            continue;
                        }
                        let txc = tx.clone();
                        dp.send(Box::new(move |d: &mut Device| {
                            match d.packet_out_bytes(&po) {
                                Ok(b) => {
                                    if d.cpu_port.is_none() {
                                        let _ = txc.try_send(Ok(stream_error(
                                            Code::FailedPrecondition,
                                            "switch started without --cpu-port",
                                            Some(po),
                                        )));
                                    } else {
                                        crate::hooks::inject(d, &b)
                                    }
                                }
                                Err(e) => {
                                    let _ =
                                        txc.try_send(Ok(stream_error(e.code, &e.msg, Some(po))));
                                }
                            }
                        }));
                    }
                    Some(U::DigestAck(a)) => {
                        dp.send(Box::new(move |d: &mut Device| {
                            d.digest_ack(a.digest_id, a.list_id)
                        }));
                    }
                    Some(U::Other(_)) | None => {
                        let _ = tx.try_send(Ok(stream_error(
                            Code::Unimplemented,
                            "unsupported stream message",
                            None,
                        )));
                    }
                }
            }
            if joined {
                let mut ar = arb.lock().unwrap();
                if let Some(c) = ar.ctrls.remove(&id) {
                    ar.notify_role(&c.role, device_id);
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn capabilities(
        &self,
        _req: Request<p4::CapabilitiesRequest>,
    ) -> Result<Response<p4::CapabilitiesResponse>, Status> {
        Ok(Response::new(p4::CapabilitiesResponse {
            p4runtime_api_version: API_VERSION.into(),
            ..Default::default()
        }))
    }
}

fn stream_error(code: Code, msg: &str, po: Option<p4::PacketOut>) -> p4::StreamMessageResponse {
    p4::StreamMessageResponse {
        update: Some(p4::stream_message_response::Update::Error(
            p4::StreamError {
                canonical_code: code as i32,
                message: msg.into(),
                space: "sdnperf".into(),
                code: 0,
                details: po.map(|p| {
                    p4::stream_error::Details::PacketOut(p4::PacketOutError {
                        packet_out: Some(p),
                    })
                }),
            },
        )),
    }
}
