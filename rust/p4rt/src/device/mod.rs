//! The P4Runtime device: translates P4Runtime entities into the switch's tables, action
//! profiles, externs and replication engine, and back for Read. It lives on the data-plane
//! thread beside the `Switch` (no locks on the packet path); the gRPC side sends it
//! closures. Every update is validated before the switch is touched, so a malformed
//! request changes nothing and never disturbs forwarding.

mod entry_view;
mod events;
mod externs;
mod packet_io;
mod pipeline;
mod pre;
mod profiles;
mod read;
mod sync;
mod tables;
mod translate;
mod value_sets;
mod write;

use crate::pipe::{bytes_to_u128, get_bits, set_bits, u128_to_bytes, Pipe, TableInfo};
use crate::proto::p4::v1 as p4;
use crate::proto::p4::v1::entity::Entity as E;
use sdnperf_switch::control::ControlError;
use sdnperf_switch::exec::Engine;
use sdnperf_switch::pipeline::MatchKind;
use sdnperf_switch::pipeline::{width_mask, Program, INDIRECT_GROUP, INDIRECT_MEMBER};
use sdnperf_switch::switch::Switch;
use sdnperf_switch::tables::prefix_mask;
use std::collections::HashMap;
use std::sync::Arc;
use tonic::Code;

#[derive(Debug, Clone)]
pub struct PErr {
    pub code: Code,
    pub msg: String,
}

pub type R<T> = Result<T, PErr>;

pub fn err<T>(code: Code, msg: impl Into<String>) -> R<T> {
    Err(PErr {
        code,
        msg: msg.into(),
    })
}
/// The one place the switch's control errors become gRPC status codes (by kind).
impl From<ControlError> for PErr {
    fn from(e: ControlError) -> PErr {
        use ControlError as C;
        let code = match &e {
            C::DuplicateEntry { .. } | C::GroupExists { .. } | C::MirrorExists { .. } => {
                Code::AlreadyExists
            }
            C::NoEntry { .. }
            | C::NoMatchingEntry { .. }
            | C::NoMember { .. }
            | C::NoGroup { .. }
            | C::NoMulticastGroup { .. }
            | C::NoMulticastNode { .. }
            | C::NoMirror { .. } => Code::NotFound,
            C::IndexOutOfRange { .. } => Code::OutOfRange,
            C::ValueSetFull { .. } => Code::ResourceExhausted,
            C::KeyCount { .. } | C::Keyless { .. } | C::PrefixTooLong { .. } => {
                Code::InvalidArgument
            }
        };
        PErr {
            code,
            msg: e.to_string(),
        }
    }
}

fn inval<T>(msg: impl Into<String>) -> R<T> {
    err(Code::InvalidArgument, msg)
}
fn ia(e: String) -> PErr {
    PErr {
        code: Code::InvalidArgument,
        msg: e,
    }
}

/// What P4Runtime keeps about one table entry beyond the entry itself: the match,
/// priority, action and counters are the switch's (its table holds the one copy, and
/// Reads derive P4Runtime's view from it); these are the fields the switch has no notion
/// of. Kept only for entries that have some (`EntryExtras::needed`).
#[derive(Clone)]
struct EntryExtras {
    /// the switch entry's serial: extras left at a handle another front end (ctl) reused
    /// for a new entry belong to the old one and are never applied to the newcomer
    serial: u64,
    /// a one-shot action set: its hidden members and group in the switch's profile
    oneshot: Option<OneShot>,
    idle_timeout_ns: i64,
    metadata: Vec<u8>,
    /// idle timeouts: when the entry's hit counter last moved, and its value then
    last_hit_ns: u64,
    last_count: u64,
    idle_notified: bool,
}

impl EntryExtras {
    fn fresh(serial: u64, count: u64) -> EntryExtras {
        EntryExtras {
            serial,
            oneshot: None,
            idle_timeout_ns: 0,
            metadata: vec![],
            last_hit_ns: now_ns(),
            last_count: count,
            idle_notified: false,
        }
    }
    /// Whether these say anything a fresh entry would not (a table that reports idle
    /// time keeps every entry's last hit).
    fn needed(&self, t: &TableInfo) -> bool {
        t.idle_timeout
            || self.oneshot.is_some()
            || self.idle_timeout_ns != 0
            || !self.metadata.is_empty()
    }
}

#[derive(Clone)]
struct OneShot {
    profile: usize,
    members: Vec<u32>,
    group: u32,
    /// the set's P4Runtime-only fields, as written
    selection_mode: i32,
    size_semantics: i32,
}

/// Something the device wants to tell the primary controller.
pub type Event = p4::stream_message_response::Update;

// P4Runtime's view of each entity next to the switch's: nested maps by id, named per field
#[allow(clippy::type_complexity)]
pub struct Device {
    pub sw: Option<Switch>,
    pub pipe: Option<Arc<Pipe>>,
    pub cpu_port: Option<u32>,
    pub max_passes: Option<u32>,
    /// the switch reads the real clock between recirculation passes (Switch::set_live_clock);
    /// the daemon sets it, tests that drive a virtual clock leave it off
    pub live_clock: bool,
    /// the recirculation path's latency, ns (Switch::set_recirc_pace_ns; 0: none)
    pub recirc_pace_ns: u64,
    /// per (P4Runtime table id, switch entry handle): see `EntryExtras`
    entry_extras: HashMap<(u32, u32), EntryExtras>,
    /// P4Runtime's ids of the switch's action profile members and groups, per profile id:
    /// what they hold is read from the switch (the one source of truth), so only ids and
    /// fields the switch has no notion of live here
    members: HashMap<u32, Ids>,
    groups: HashMap<u32, Ids>,
    /// each group's `max_size`, as P4Runtime wrote it
    group_max_size: HashMap<(u32, u32), i32>,
    /// multicast groups' metadata and clone sessions' class of service (P4Runtime-only
    /// fields; the groups and sessions themselves are the switch's PRE)
    mcast_metadata: HashMap<u32, Vec<u8>>,
    clone_cos: HashMap<u32, u32>,
    digest_cfg: HashMap<u32, p4::digest_entry::Config>,
    digest_by_list: HashMap<u32, u32>,
    /// digest data sent and not yet acked (suppressed until ack or ack_timeout_ns)
    digest_pending: HashMap<u32, HashMap<Vec<u128>, u64>>,
    digest_lists: HashMap<(u32, u64), Vec<Vec<u128>>>,
    next_list_id: u64,
    last_idle_scan: u64,
    pub packet_in_dropped: u64,
    /// bumped by every pipeline commit (the data-plane loop rebuilds its fast path)
    pub generation: u64,
}

const CLONE_GROUP_BASE: u32 = 0x4000_0000;
/// P4Runtime id of a member or group another front end (ctl) made with switch handle h:
/// ADOPTED_ID_BASE + h, or the next free id above it (P4Runtime's id 0 is "all")
const ADOPTED_ID_BASE: u32 = 0x8000_0000;

/// P4Runtime id <-> switch handle, one action profile's members or groups.
#[derive(Default, Clone)]
struct Ids {
    by_id: HashMap<u32, u32>,
    by_handle: HashMap<u32, u32>,
}

impl Ids {
    fn insert(&mut self, id: u32, handle: u32) {
        self.by_id.insert(id, handle);
        self.by_handle.insert(handle, id);
    }
    fn remove(&mut self, id: u32) {
        if let Some(h) = self.by_id.remove(&id) {
            self.by_handle.remove(&h);
        }
    }
    /// Follows the switch's slots (`slots[h]` is `Some` while handle h exists): ids of gone
    /// handles go, handles made by another front end get ids, except the `hidden` ones.
    fn mirror<T>(&mut self, slots: &[Option<T>], hidden: impl Fn(u32) -> bool) {
        let live = |h: u32| matches!(slots.get(h as usize), Some(Some(_)));
        self.by_id.retain(|_, h| live(*h));
        self.by_handle.retain(|h, _| live(*h));
        for (h, slot) in slots.iter().enumerate() {
            let h = h as u32;
            if slot.is_some() && !self.by_handle.contains_key(&h) && !hidden(h) {
                self.adopt(h);
            }
        }
    }
    /// Gives handle `h` (made by another front end) an id of its own.
    fn adopt(&mut self, h: u32) -> u32 {
        let mut id = ADOPTED_ID_BASE.wrapping_add(h).max(1);
        while self.by_id.contains_key(&id) {
            id = id.wrapping_add(1).max(1);
        }
        self.insert(id, h);
        id
    }
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

impl Default for Device {
    fn default() -> Self {
        Device::new(None)
    }
}

impl Device {
    pub fn new(cpu_port: Option<u32>) -> Device {
        Device {
            sw: None,
            pipe: None,
            cpu_port,
            max_passes: None,
            live_clock: false,
            recirc_pace_ns: 0,
            entry_extras: HashMap::new(),
            members: HashMap::new(),
            groups: HashMap::new(),
            group_max_size: HashMap::new(),
            mcast_metadata: HashMap::new(),
            clone_cos: HashMap::new(),
            digest_cfg: HashMap::new(),
            digest_by_list: HashMap::new(),
            digest_pending: HashMap::new(),
            digest_lists: HashMap::new(),
            next_list_id: 1,
            last_idle_scan: 0,
            packet_in_dropped: 0,
            generation: 0,
        }
    }

    fn parts(&mut self) -> R<(&mut Switch, Arc<Pipe>)> {
        match (&mut self.sw, &self.pipe) {
            (Some(sw), Some(p)) => Ok((sw, p.clone())),
            _ => err(
                Code::FailedPrecondition,
                "no forwarding pipeline config set",
            ),
        }
    }
}

/// A map's entries in key order (Reads list entities in a stable order).
fn sorted<V>(m: &HashMap<u32, V>) -> Vec<(u32, &V)> {
    let mut v: Vec<(u32, &V)> = m.iter().map(|(k, v)| (*k, v)).collect();
    v.sort_by_key(|x| x.0);
    v
}
