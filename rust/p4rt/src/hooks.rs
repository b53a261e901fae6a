//! sdnperf-switch-grpc's front end of the switch's data-plane loop
//! (`sdnperf_switch::dataplane`):
//! - control closures from the gRPC side (and ctl text commands) run between batches,
//!   so tables need no locks; a `Mailbox` wakes the loop at once;
//! - packets the pipeline sends to the CPU port become packet-ins;
//! - packet-outs are injected at the CPU port (the program parses its packet_out header);
//! - digests and idle-timeout notifications are polled after each batch.

use crate::device::{Device, Event};
use sdnperf_switch::ctl::{self, Listen, Request};
use sdnperf_switch::dataplane::{self, Changed, FastPathState, Hooks, Inbox, Mailbox};
use sdnperf_switch::switch::Switch;

pub type Cmd = Box<dyn FnOnce(&mut Device) + Send>;

/// Sends work to the data-plane thread.
#[derive(Clone)]
pub struct DpHandle(Mailbox<Cmd>);

impl DpHandle {
    pub fn send(&self, c: Cmd) -> bool {
        self.0.send(c)
    }

    /// Runs `f` on the data-plane thread and awaits its result.
    pub async fn call<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Device) -> T + Send + 'static,
    ) -> Option<T> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        if !self.send(Box::new(move |d| {
            let _ = tx.send(f(d));
        })) {
            return None;
        }
        rx.await.ok()
    }
}

pub struct P4rtHooks {
    pub dev: Device,
    inbox: Inbox<Cmd>,
    /// simple_switch_CLI-like text commands (`--ctl-socket`), woken by the same fd
    ctl: Option<Inbox<Request>>,
    /// packet-ins, digests and idle-timeout notifications, dropped when the channel is
    /// full: a slow controller never stalls forwarding
    events: tokio::sync::mpsc::Sender<Event>,
    evbuf: Vec<Event>,
    /// the pipeline generation seen after the last control round
    generation: u64,
}

/// The handle the gRPC side sends work with, and the loop's front end that runs it (and
/// serves ctl text commands on `ctl`).
pub fn channel(
    dev: Device,
    events: tokio::sync::mpsc::Sender<Event>,
    ctl: Option<Listen>,
) -> Result<(DpHandle, P4rtHooks), String> {
    let (tx, inbox) = dataplane::mailbox();
    let ctl = match ctl {
        Some(l) => {
            let (ctx, crx) = dataplane::mailbox_sharing(&inbox);
            ctl::start_server_into(l, ctx)?;
            Some(crx)
        }
        None => None,
    };
    let generation = dev.generation;
    Ok((
        DpHandle(tx),
        P4rtHooks {
            dev,
            inbox,
            ctl,
            events,
            evbuf: vec![],
            generation,
        },
    ))
}

impl Hooks for P4rtHooks {
    fn switch(&mut self) -> Option<&mut Switch> {
        self.dev.sw.as_mut()
    }

    fn control(&mut self, fast: &FastPathState) -> Changed {
        let mut got = false;
        if let Some(inbox) = &self.ctl {
            if sdnperf_switch::ctl::serve_ctl(inbox, self.dev.sw.as_mut(), fast) != Changed::Nothing
            {
                got = true;
                self.dev.sync_from_switch();
            }
        }
        while let Ok(c) = self.inbox.rx.try_recv() {
            got = true;
            // a bug in request handling must not stop forwarding: the caller sees the
            // dropped reply channel (UNAVAILABLE/INTERNAL), packets keep flowing
            if std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c(&mut self.dev))).is_err()
            {
                eprintln!("sdnperf-switch-grpc: internal error while handling a request (see the message above); forwarding continues");
            }
        }
        if self.dev.generation != self.generation {
            self.generation = self.dev.generation;
            Changed::Pipeline
        } else if got {
            Changed::Forwarding
        } else {
            Changed::Nothing
        }
    }

    fn cpu_packet(&mut self, _egress_port: u32, bytes: &[u8]) {
        match self.dev.packet_in(bytes) {
            Some(pi) => {
                if self.events.try_send(Event::Packet(pi)).is_err() {
                    self.dev.packet_in_dropped += 1;
                }
            }
            None => self.dev.packet_in_dropped += 1,
        }
    }

    fn after_batch(&mut self) {
        self.dev.poll_events(&mut self.evbuf);
        for e in self.evbuf.drain(..) {
            let _ = self.events.try_send(e);
        }
    }

    fn wants_tick(&mut self) -> bool {
        self.dev.has_idle_timeouts()
    }

    fn wake_fd(&self) -> Option<i32> {
        Some(self.inbox.fd())
    }

    fn report(&self) -> String {
        format!("packet_in_dropped={}", self.dev.packet_in_dropped)
    }
}

/// Injects a packet-out at the CPU port.
pub fn inject(dev: &mut Device, bytes: &[u8]) {
    let Some(port) = dev.cpu_port else { return };
    if let Some(sw) = dev.sw.as_mut() {
        let now = sw.now_ns();
        sw.receive(port, bytes, None, now);
    }
}
