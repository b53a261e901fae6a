//! The P4Runtime device: translates P4Runtime entities into the switch's tables, action
//! profiles, externs and replication engine, and back for Read. It lives on the data-plane
//! thread beside the `Switch` (no locks on the packet path); the gRPC side sends it
//! closures. Every update is validated before the switch is touched, so a malformed
//! request changes nothing and never disturbs forwarding.

use crate::pipe::{bytes_to_u128, get_bits, set_bits, u128_to_bytes, Pipe, TableInfo};
use crate::proto::p4::v1 as p4;
use crate::proto::p4::v1::entity::Entity as E;
use prost::Message;
use sdnperf_switch::control::MeterRates;
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
fn inval<T>(msg: impl Into<String>) -> R<T> {
    err(Code::InvalidArgument, msg)
}
fn ia(e: String) -> PErr {
    PErr {
        code: Code::InvalidArgument,
        msg: e,
    }
}

struct Stored {
    handle: u32,
    /// the entry's key as the switch holds it (to recognise a reused handle)
    sw_key: Box<[u128]>,
    /// one-shot action set: hidden members and group in the switch's profile
    oneshot: Option<OneShot>,
    /// normalized entry (canonical match, no counter data / idle fields)
    entry: p4::TableEntry,
    last_hit_ns: u64,
    last_count: u64,
    idle_notified: bool,
}

struct OneShot {
    profile: usize,
    members: Vec<u32>,
    group: u32,
}

#[derive(Default)]
struct TableState {
    by_key: HashMap<Vec<u8>, Stored>,
    /// initial default action (switch action index, data), for MODIFY without action
    initial_default: (u32, Box<[u128]>),
    /// the switch table's `version` when `by_key` was last compared with it
    seen_version: u64,
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
    tables: HashMap<u32, TableState>,
    /// P4Runtime's ids of the switch's action profile members and groups, per profile id:
    /// what they hold is read from the switch (the one source of truth), so only ids and
    /// fields the switch has no notion of live here
    members: HashMap<u32, Ids>,
    groups: HashMap<u32, Ids>,
    /// each group's `max_size`, as P4Runtime wrote it
    group_max_size: HashMap<(u32, u32), i32>,
    meter_cfg: HashMap<(u32, i64), p4::MeterConfig>,
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
            tables: HashMap::new(),
            members: HashMap::new(),
            groups: HashMap::new(),
            group_max_size: HashMap::new(),
            meter_cfg: HashMap::new(),
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

    /// Installs a verified pipeline: a fresh switch, empty tables (like BMv2's
    /// VERIFY_AND_COMMIT). With `reconcile`, the current forwarding state is replayed into
    /// the new pipeline where its ids still exist.
    pub fn commit(&mut self, pipe: Pipe, mut prog: Program, reconcile: bool) {
        let saved = if reconcile && self.pipe.is_some() {
            self.read_all()
        } else {
            vec![]
        };
        // tables that report idle timeouts count their hits (direct counters) so we see them
        for t in pipe.tables.values() {
            if t.idle_timeout {
                prog.tables[t.sw].with_counters = true;
            }
        }
        let mut eng = Engine::new(prog);
        if let Some(m) = self.max_passes {
            eng.max_passes = m;
        }
        let mut sw = Switch::new(eng);
        sw.set_live_clock(self.live_clock);
        if let Some(c) = pipe.cookie {
            sw.set_config_version(c);
        }
        self.tables = pipe
            .tables
            .values()
            .map(|t| {
                let st = sw.table(t.sw);
                (
                    t.id,
                    TableState {
                        by_key: HashMap::new(),
                        initial_default: (st.default_action, st.default_data.clone()),
                        seen_version: st.version,
                    },
                )
            })
            .collect();
        // entries the program itself installs (const entries) are readable, flagged is_const
        for t in pipe.tables.values() {
            let st = sw.table(t.sw);
            if st.num_entries == 0 {
                continue;
            }
            let ts = self.tables.get_mut(&t.id).unwrap();
            for (h, e) in st.entries.iter().enumerate() {
                let Some(e) = e else { continue };
                Self::adopt_switch_entry(ts, &pipe, t, h as u32, e, true);
            }
        }
        self.digest_by_list = pipe.digests.values().map(|d| (d.list, d.id)).collect();
        self.members.clear();
        self.groups.clear();
        self.group_max_size.clear();
        self.meter_cfg.clear();
        self.mcast_metadata.clear();
        self.clone_cos.clear();
        self.digest_cfg.clear();
        self.digest_pending.clear();
        self.digest_lists.clear();
        self.sw = Some(sw);
        self.pipe = Some(Arc::new(pipe));
        self.generation += 1;
        // members before groups before tables: read_all returns them in that order
        for e in saved {
            let _ = self.write(p4::update::Type::Insert as i32, &e);
        }
    }

    /// Brings P4Runtime's view up to date after another front end (ctl text commands)
    /// changed the switch: table entries it added appear (as P4Runtime shows them), entries
    /// it deleted go, and a modified action shows; action profile members and groups it
    /// made get P4Runtime ids. Everything else (what members and groups hold, the PRE,
    /// registers, counters) is read from the switch itself.
    pub fn sync_from_switch(&mut self) {
        self.sync_profiles_from_switch();
        let (Some(sw), Some(pipe)) = (self.sw.as_ref(), self.pipe.clone()) else {
            return;
        };
        for t in pipe.tables.values() {
            let st = sw.table(t.sw);
            let Some(ts) = self.tables.get_mut(&t.id) else {
                continue;
            };
            if ts.seen_version == st.version {
                continue;
            }
            ts.seen_version = st.version;
            let mut known = vec![false; st.entries.len()];
            ts.by_key.retain(|_, s| match st.entries.get(s.handle as usize).and_then(|e| e.as_ref()) {
                Some(e) if e.key == s.sw_key => {
                    known[s.handle as usize] = true;
                    // a changed direct action (ctl's table_modify) shows; indirect ones are ours
                    if s.oneshot.is_none() {
                        if let Some(now) = Self::entry_from_switch(&pipe, t, e, false) {
                            if let Some(p4::table_action::Type::Action(a)) = now.action.as_ref().and_then(|a| a.r#type.as_ref()) {
                                let mine = s.entry.action.as_ref().and_then(|x| x.r#type.as_ref());
                                if !matches!(mine, Some(p4::table_action::Type::Action(m)) if m.action_id == a.action_id && m.params == a.params) {
                                    s.entry.action = now.action;
                                }
                            }
                        }
                    }
                    true
                }
                _ => false,
            });
            for (h, e) in st.entries.iter().enumerate() {
                let Some(e) = e else { continue };
                if known[h] {
                    continue;
                }
                Self::adopt_switch_entry(ts, &pipe, t, h as u32, e, false);
            }
        }
    }

    /// Ids for the members and groups the switch holds and P4Runtime did not write (ctl
    /// made them); ids of ones the switch no longer holds (ctl deleted them) go. The
    /// hidden members and groups of one-shot action sets are P4Runtime's own, never shown.
    fn sync_profiles_from_switch(&mut self) {
        let (Some(sw), Some(pipe)) = (self.sw.as_ref(), self.pipe.as_ref()) else {
            return;
        };
        let mut oneshot_members = std::collections::HashSet::new();
        let mut oneshot_groups = std::collections::HashSet::new();
        for st in self.tables.values().flat_map(|ts| ts.by_key.values()) {
            if let Some(o) = &st.oneshot {
                oneshot_members.extend(o.members.iter().map(|&m| (o.profile, m)));
                oneshot_groups.insert((o.profile, o.group));
            }
        }
        for prof in pipe.profiles.values() {
            let sp = sw.profile(prof.sw);
            self.members
                .entry(prof.id)
                .or_default()
                .mirror(&sp.members, |h| oneshot_members.contains(&(prof.sw, h)));
            let grps = self.groups.entry(prof.id).or_default();
            grps.mirror(&sp.groups, |h| oneshot_groups.contains(&(prof.sw, h)));
            let live: std::collections::HashSet<u32> = grps.by_id.keys().copied().collect();
            self.group_max_size
                .retain(|(p, g), _| *p != prof.id || live.contains(g));
        }
    }

    /// Records an entry the switch holds but P4Runtime did not write (a const entry of the
    /// program, or one another front end added) so that Reads show it.
    fn adopt_switch_entry(
        ts: &mut TableState,
        pipe: &Pipe,
        t: &TableInfo,
        handle: u32,
        e: &sdnperf_switch::tables::Entry,
        is_const: bool,
    ) {
        let Some(entry) = Self::entry_from_switch(pipe, t, e, is_const) else {
            return;
        };
        let kb = Self::entry_key(&entry.r#match, entry.priority);
        ts.by_key.insert(
            kb,
            Stored {
                handle,
                sw_key: e.key.clone(),
                oneshot: None,
                entry,
                last_hit_ns: now_ns(),
                last_count: 0,
                idle_notified: false,
            },
        );
    }

    /// A switch table entry as P4Runtime shows it (entries the program installs, or
    /// another front end added).
    fn entry_from_switch(
        pipe: &Pipe,
        t: &TableInfo,
        e: &sdnperf_switch::tables::Entry,
        is_const: bool,
    ) -> Option<p4::TableEntry> {
        use p4::field_match::FieldMatchType as M;
        let mut m = vec![];
        for (i, f) in t.fields.iter().enumerate() {
            let wm = width_mask(f.bitwidth);
            let v = *e.key.get(i)?;
            let aux = e.aux.get(i).copied();
            let fm = match f.kind {
                MatchKind::Exact => Some(M::Exact(p4::field_match::Exact {
                    value: u128_to_bytes(v),
                })),
                MatchKind::Lpm => {
                    let p = match aux {
                        Some(mask) => mask.count_ones().min(f.bitwidth),
                        None => e.prefix,
                    };
                    (p > 0).then(|| {
                        M::Lpm(p4::field_match::Lpm {
                            value: u128_to_bytes(v),
                            prefix_len: p as i32,
                        })
                    })
                }
                MatchKind::Ternary | MatchKind::Optional => {
                    let mask = aux.unwrap_or(wm);
                    if mask == 0 {
                        None
                    } else if f.kind == MatchKind::Optional {
                        Some(M::Optional(p4::field_match::Optional {
                            value: u128_to_bytes(v),
                        }))
                    } else {
                        Some(M::Ternary(p4::field_match::Ternary {
                            value: u128_to_bytes(v),
                            mask: u128_to_bytes(mask),
                        }))
                    }
                }
                MatchKind::Range => {
                    let hi = aux.unwrap_or(wm);
                    (!(v == 0 && hi == wm)).then(|| {
                        M::Range(p4::field_match::Range {
                            low: u128_to_bytes(v),
                            high: u128_to_bytes(hi),
                        })
                    })
                }
                MatchKind::Valid => None,
            };
            if let Some(fm) = fm {
                m.push(p4::FieldMatch {
                    field_id: f.id,
                    field_match_type: Some(fm),
                });
            }
        }
        let priority = if t.needs_priority {
            (i32::MAX as i64 - e.priority).clamp(1, i32::MAX as i64) as i32
        } else {
            0
        };
        let action = Self::action_from_switch(pipe, e.action, &e.data)?;
        Some(p4::TableEntry {
            table_id: t.id,
            r#match: m,
            action: Some(p4::TableAction {
                r#type: Some(p4::table_action::Type::Action(action)),
            }),
            priority,
            is_const,
            ..Default::default()
        })
    }

    /// The switch's action `action` with `data` as a P4Runtime action.
    fn action_from_switch(pipe: &Pipe, action: u32, data: &[u128]) -> Option<p4::Action> {
        let aid = *pipe.action_by_sw.get(&action)?;
        let params = pipe.actions[&aid]
            .params
            .iter()
            .zip(data.iter())
            .map(|((id, _), v)| p4::action::Param {
                param_id: *id,
                value: u128_to_bytes(*v),
            })
            .collect();
        Some(p4::Action {
            action_id: aid,
            params,
        })
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

    // ------------------------------------------------------------------ write

    /// Applies a batch. The whole batch runs between two packet batches, so no packet ever
    /// sees part of it; with `rollback` (ROLLBACK_ON_ERROR, DATAPLANE_ATOMIC) a failure
    /// undoes the updates already applied (their statuses become ABORTED).
    pub fn write_batch(&mut self, updates: &[p4::Update], rollback: bool) -> Vec<R<()>> {
        if !rollback {
            return updates.iter().map(|u| self.write_update(u)).collect();
        }
        let mut undo: Vec<Vec<(i32, p4::Entity)>> = vec![];
        let mut results = vec![];
        for u in updates {
            let prev = self.snapshot(u);
            let r = self.write_update(u);
            if let Err(e) = r {
                for ops in undo.into_iter().rev() {
                    for (ty, ent) in ops {
                        let _ = self.write(ty, &ent);
                    }
                }
                let mut out: Vec<R<()>> = (0..results.len())
                    .map(|_| {
                        err(
                            Code::Aborted,
                            "rolled back: another update of the batch failed",
                        )
                    })
                    .collect();
                out.push(Err(e));
                while out.len() < updates.len() {
                    out.push(err(
                        Code::Aborted,
                        "not applied: an earlier update of the batch failed",
                    ));
                }
                return out;
            }
            results.push(Ok(()));
            // the inverse of what was just done
            use p4::update::Type as T;
            let ent = u.entity.clone().unwrap_or_default();
            let ops = match (T::try_from(u.r#type), prev) {
                (Ok(T::Insert), _) => vec![(T::Delete as i32, ent)],
                (Ok(T::Delete), Some(p)) => p.into_iter().map(|e| (T::Insert as i32, e)).collect(),
                (Ok(T::Modify), Some(p)) => p.into_iter().map(|e| (T::Modify as i32, e)).collect(),
                _ => vec![],
            };
            undo.push(ops);
        }
        results
    }

    /// The current state of what an update addresses (for rollback).
    fn snapshot(&self, u: &p4::Update) -> Option<Vec<p4::Entity>> {
        let ent = u.entity.as_ref()?;
        if let Some(E::TableEntry(te)) = &ent.entity {
            if !te.is_default_action {
                // exact lookup (an empty match is an entry of its own, not a wildcard)
                let pipe = self.pipe.as_ref()?;
                let t = pipe.tables.get(&te.table_id)?;
                let (canon, ..) = Self::translate_match(t, &te.r#match).ok()?;
                let st = self
                    .tables
                    .get(&t.id)?
                    .by_key
                    .get(&Self::entry_key(&canon, te.priority))?;
                let (p, b) = self.sw.as_ref()?.direct_counter(t.sw, st.handle);
                let mut e = st.entry.clone();
                if t.direct_counter.is_some() {
                    e.counter_data = Some(p4::CounterData {
                        packet_count: p as i64,
                        byte_count: b as i64,
                    });
                }
                return Some(vec![p4::Entity {
                    entity: Some(E::TableEntry(e)),
                }]);
            }
        }
        let mut out = vec![];
        self.read(ent, &mut out).ok()?;
        Some(out)
    }

    pub fn write_update(&mut self, u: &p4::Update) -> R<()> {
        let Some(ent) = &u.entity else {
            return inval("update without entity");
        };
        self.write(u.r#type, ent)
    }

    pub fn write(&mut self, ty: i32, ent: &p4::Entity) -> R<()> {
        use p4::update::Type as T;
        let ty = match T::try_from(ty) {
            Ok(T::Insert) => T::Insert,
            Ok(T::Modify) => T::Modify,
            Ok(T::Delete) => T::Delete,
            _ => return inval("update type must be INSERT, MODIFY or DELETE"),
        };
        let Some(e) = &ent.entity else {
            return inval("empty entity");
        };
        match e {
            E::TableEntry(te) => self.write_table(ty, te),
            E::ActionProfileMember(m) => self.write_member(ty, m),
            E::ActionProfileGroup(g) => self.write_group(ty, g),
            E::CounterEntry(c) => self.write_counter(ty, c),
            E::DirectCounterEntry(c) => self.write_direct_counter(ty, c),
            E::MeterEntry(m) => self.write_meter(ty, m),
            E::DirectMeterEntry(m) => self.write_direct_meter(ty, m),
            E::RegisterEntry(r) => self.write_register(ty, r),
            E::PacketReplicationEngineEntry(p) => self.write_pre(ty, p),
            E::DigestEntry(d) => self.write_digest(ty, d),
            E::ValueSetEntry(v) => self.write_value_set(ty, v),
            E::ExternEntry(_) => err(Code::Unimplemented, "extern entries are not supported"),
        }
    }

    /// Parser value sets: MODIFY replaces all members (exact or ternary on one field).
    fn write_value_set(&mut self, ty: p4::update::Type, v: &p4::ValueSetEntry) -> R<()> {
        use p4::field_match::FieldMatchType as M;
        if ty != p4::update::Type::Modify {
            return inval("value set entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let &(vi, (fid, bw), size) = pipe.value_sets.get(&v.value_set_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!(
                "unknown value set id {} (or one with several fields)",
                v.value_set_id
            ),
        })?;
        if size > 0 && v.members.len() > size as usize {
            return err(
                Code::ResourceExhausted,
                format!("value set holds at most {} members", size),
            );
        }
        let mut vals = vec![];
        for m in &v.members {
            let [fm] = m.r#match.as_slice() else {
                return inval("value set member needs exactly one field match");
            };
            if fm.field_id != fid {
                return inval(format!(
                    "value set member: unknown field id {}",
                    fm.field_id
                ));
            }
            let wm = width_mask(bw);
            let (val, mask) = match &fm.field_match_type {
                Some(M::Exact(x)) => (bytes_to_u128(&x.value, bw).map_err(ia)?, wm),
                Some(M::Ternary(x)) => (
                    bytes_to_u128(&x.value, bw).map_err(ia)?,
                    bytes_to_u128(&x.mask, bw).map_err(ia)?,
                ),
                _ => return inval("value set members are exact or ternary matches"),
            };
            vals.push((val & mask, mask));
        }
        sw.set_value_set(vi, vals).map_err(ia)
    }

    /// Validates and normalizes a match; returns (canonical matches, key, aux, prefix).
    #[allow(clippy::type_complexity)]
    fn translate_match(
        t: &TableInfo,
        fms: &[p4::FieldMatch],
    ) -> R<(Vec<p4::FieldMatch>, Vec<u128>, Vec<u128>, u32)> {
        use p4::field_match::FieldMatchType as M;
        let n = t.fields.len();
        let mut slots: Vec<Option<&p4::FieldMatch>> = vec![None; n];
        for fm in fms {
            let pos = *t.field_pos.get(&fm.field_id).ok_or_else(|| {
                ia(format!(
                    "table {}: unknown match field id {}",
                    t.name, fm.field_id
                ))
            })?;
            if slots[pos].is_some() {
                return inval(format!(
                    "table {}: match field {} given twice",
                    t.name, t.fields[pos].name
                ));
            }
            slots[pos] = Some(fm);
        }
        let mut canon = Vec::with_capacity(n);
        let mut key = Vec::with_capacity(n);
        let mut aux = Vec::with_capacity(n);
        let mut prefix = 0u32;
        for (f, s) in t.fields.iter().zip(slots) {
            let bw = f.bitwidth;
            let wm = width_mask(bw);
            let val = |b: &[u8]| {
                bytes_to_u128(b, bw)
                    .map_err(|e| ia(format!("table {} field {}: {}", t.name, f.name, e)))
            };
            let mt = s.and_then(|fm| fm.field_match_type.as_ref());
            if s.is_some() && mt.is_none() {
                return inval(format!(
                    "table {} field {}: field match without a value",
                    t.name, f.name
                ));
            }
            let (cm, k, a) = match (f.kind, mt) {
                (MatchKind::Exact, None) => {
                    return inval(format!(
                        "table {}: exact field {} must be given",
                        t.name, f.name
                    ))
                }
                (MatchKind::Exact, Some(M::Exact(x))) => {
                    let v = val(&x.value)?;
                    (
                        Some(M::Exact(p4::field_match::Exact {
                            value: u128_to_bytes(v),
                        })),
                        v,
                        wm,
                    )
                }
                (MatchKind::Lpm, None) => (None, 0, 0),
                (MatchKind::Lpm, Some(M::Lpm(x))) => {
                    let v = val(&x.value)?;
                    if x.prefix_len <= 0 || x.prefix_len as u32 > bw {
                        return inval(format!(
                            "table {} field {}: prefix length {} must be 1..{} (omit the field for a zero-length prefix)",
                            t.name, f.name, x.prefix_len, bw
                        ));
                    }
                    let pm = prefix_mask(x.prefix_len as u32, bw);
                    if v & !pm != 0 {
                        return inval(format!(
                            "table {} field {}: value has bits set beyond the prefix length {}",
                            t.name, f.name, x.prefix_len
                        ));
                    }
                    prefix = x.prefix_len as u32;
                    (
                        Some(M::Lpm(p4::field_match::Lpm {
                            value: u128_to_bytes(v),
                            prefix_len: x.prefix_len,
                        })),
                        v,
                        pm,
                    )
                }
                (MatchKind::Ternary, None) => (None, 0, 0),
                (MatchKind::Ternary, Some(M::Ternary(x))) => {
                    let v = val(&x.value)?;
                    let m = val(&x.mask)?;
                    if m == 0 {
                        return inval(format!("table {} field {}: all-zero ternary mask (omit the field for a wildcard)", t.name, f.name));
                    }
                    if v & !m != 0 {
                        return inval(format!(
                            "table {} field {}: value has bits set outside the mask",
                            t.name, f.name
                        ));
                    }
                    (
                        Some(M::Ternary(p4::field_match::Ternary {
                            value: u128_to_bytes(v),
                            mask: u128_to_bytes(m),
                        })),
                        v,
                        m,
                    )
                }
                (MatchKind::Range, None) => (None, 0, wm),
                (MatchKind::Range, Some(M::Range(x))) => {
                    let lo = val(&x.low)?;
                    let hi = val(&x.high)?;
                    if lo > hi {
                        return inval(format!(
                            "table {} field {}: range low > high",
                            t.name, f.name
                        ));
                    }
                    if lo == 0 && hi == wm {
                        return inval(format!(
                            "table {} field {}: full range (omit the field for a wildcard)",
                            t.name, f.name
                        ));
                    }
                    (
                        Some(M::Range(p4::field_match::Range {
                            low: u128_to_bytes(lo),
                            high: u128_to_bytes(hi),
                        })),
                        lo,
                        hi,
                    )
                }
                (MatchKind::Optional, None) => (None, 0, 0),
                (MatchKind::Optional, Some(M::Optional(x))) => {
                    let v = val(&x.value)?;
                    (
                        Some(M::Optional(p4::field_match::Optional {
                            value: u128_to_bytes(v),
                        })),
                        v,
                        wm,
                    )
                }
                (k, Some(_)) => {
                    return inval(format!(
                        "table {} field {}: match kind must be {:?}",
                        t.name, f.name, k
                    ))
                }
                (k, None) => {
                    return inval(format!(
                        "table {} field {}: unsupported match kind {:?}",
                        t.name, f.name, k
                    ))
                }
            };
            if let Some(cm) = cm {
                canon.push(p4::FieldMatch {
                    field_id: f.id,
                    field_match_type: Some(cm),
                });
            }
            key.push(k);
            aux.push(a);
        }
        Ok((canon, key, aux, prefix))
    }

    fn translate_action(
        pipe: &Pipe,
        dev_members: &HashMap<u32, Ids>,
        dev_groups: &HashMap<u32, Ids>,
        t: &TableInfo,
        a: &p4::TableAction,
    ) -> R<(u32, Vec<u128>)> {
        use p4::table_action::Type as A;
        match &a.r#type {
            None => inval(format!("table {}: entry without action", t.name)),
            Some(A::Action(act)) => {
                if t.profile.is_some() {
                    return inval(format!(
                        "table {} is indirect: use an action profile member or group",
                        t.name
                    ));
                }
                if !t.action_ids.contains(&act.action_id) {
                    return inval(format!(
                        "table {}: action id {} is not an action of this table",
                        t.name, act.action_id
                    ));
                }
                Self::action_data(pipe, Some(t), act)
            }
            Some(A::ActionProfileMemberId(m)) => {
                let p = t
                    .profile
                    .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
                let h = dev_members
                    .get(&p)
                    .and_then(|x| x.by_id.get(m))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no action profile member {}", m),
                    })?;
                Ok((INDIRECT_MEMBER | h, vec![]))
            }
            Some(A::ActionProfileGroupId(g)) => {
                let p = t
                    .profile
                    .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
                let h = dev_groups
                    .get(&p)
                    .and_then(|x| x.by_id.get(g))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no action profile group {}", g),
                    })?;
                Ok((INDIRECT_GROUP | h, vec![]))
            }
            Some(A::ActionProfileActionSet(_)) => Ok((u32::MAX, vec![])), // allocated by the caller (one_shot)
        }
    }

    /// Validates a one-shot action set and creates its hidden members and group.
    fn one_shot(
        sw: &mut Switch,
        pipe: &Pipe,
        t: &TableInfo,
        a: &p4::TableAction,
    ) -> R<Option<(u32, OneShot)>> {
        let Some(p4::table_action::Type::ActionProfileActionSet(set)) = &a.r#type else {
            return Ok(None);
        };
        let p = t
            .profile
            .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
        let prof = &pipe.profiles[&p];
        if set.action_profile_actions.is_empty() {
            return inval("empty action profile action set");
        }
        if !prof.with_selector && set.action_profile_actions.len() > 1 {
            return inval("action profile without selector: a one-shot set holds one action");
        }
        let mut acts = vec![];
        for apa in &set.action_profile_actions {
            let act = apa
                .action
                .as_ref()
                .ok_or_else(|| ia("action set member without action".into()))?;
            if !t.action_ids.contains(&act.action_id) {
                return inval(format!(
                    "table {}: action id {} is not an action of this table",
                    t.name, act.action_id
                ));
            }
            if apa.weight < 0 {
                return inval("negative weight");
            }
            acts.push((Self::action_data(pipe, Some(t), act)?, apa.weight.max(1)));
        }
        let mut members = vec![];
        let mut grp = vec![];
        for ((ai, data), w) in acts {
            let h = sw.member_add(prof.sw, ai, data);
            members.push(h);
            for _ in 0..w {
                grp.push(h);
            }
        }
        let group = sw.group_create(prof.sw, grp);
        Ok(Some((
            INDIRECT_GROUP | group,
            OneShot {
                profile: prof.sw,
                members,
                group,
            },
        )))
    }

    fn free_one_shot(sw: &mut Switch, o: OneShot) {
        // handles the one-shot set made itself: there to delete
        let _ = sw.group_delete(o.profile, o.group);
        for m in o.members {
            let _ = sw.member_delete(o.profile, m);
        }
    }

    /// The switch action `act` runs as (in `table`, its copy there) and its data.
    fn action_data(
        pipe: &Pipe,
        table: Option<&TableInfo>,
        act: &p4::Action,
    ) -> R<(u32, Vec<u128>)> {
        let ai = pipe
            .actions
            .get(&act.action_id)
            .ok_or_else(|| ia(format!("unknown action id {}", act.action_id)))?;
        let mut data = vec![None; ai.params.len()];
        for p in &act.params {
            let pos = ai
                .params
                .iter()
                .position(|x| x.0 == p.param_id)
                .ok_or_else(|| {
                    ia(format!(
                        "action {}: unknown parameter id {}",
                        ai.name, p.param_id
                    ))
                })?;
            if data[pos].is_some() {
                return inval(format!(
                    "action {}: parameter {} given twice",
                    ai.name, p.param_id
                ));
            }
            data[pos] = Some(bytes_to_u128(&p.value, ai.params[pos].1).map_err(|e| {
                ia(format!(
                    "action {} parameter {}: {}",
                    ai.name, p.param_id, e
                ))
            })?);
        }
        let mut out = Vec::with_capacity(data.len());
        for (i, d) in data.into_iter().enumerate() {
            match d {
                Some(v) => out.push(v),
                None => {
                    return inval(format!(
                        "action {}: parameter id {} missing",
                        ai.name, ai.params[i].0
                    ))
                }
            }
        }
        Ok((table.map_or(ai.sw, |t| t.sw_action(ai)), out))
    }

    fn canonical_action(pipe: &Pipe, a: &p4::TableAction) -> p4::TableAction {
        use p4::table_action::Type as A;
        match &a.r#type {
            Some(A::Action(act)) => {
                let mut act = act.clone();
                if let Some(ai) = pipe.actions.get(&act.action_id) {
                    act.params
                        .sort_by_key(|p| ai.params.iter().position(|x| x.0 == p.param_id));
                }
                for p in act.params.iter_mut() {
                    if let Ok(v) = bytes_to_u128(&p.value, 128) {
                        p.value = u128_to_bytes(v);
                    }
                }
                p4::TableAction {
                    r#type: Some(A::Action(act)),
                }
            }
            _ => a.clone(),
        }
    }

    fn entry_key(canon: &[p4::FieldMatch], priority: i32) -> Vec<u8> {
        let mut m = canon.to_vec();
        m.sort_by_key(|f| f.field_id);
        p4::TableEntry {
            r#match: m,
            priority,
            ..Default::default()
        }
        .encode_to_vec()
    }

    fn write_table(&mut self, ty: p4::update::Type, te: &p4::TableEntry) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        let t = pipe.tables.get(&te.table_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown table id {}", te.table_id),
        })?;
        if te.is_default_action {
            if ty != T::Modify {
                return inval(format!(
                    "table {}: the default entry can only be modified",
                    t.name
                ));
            }
            if !te.r#match.is_empty() || te.priority != 0 {
                return inval(format!(
                    "table {}: the default entry has no match and no priority",
                    t.name
                ));
            }
            if t.const_default {
                return err(
                    Code::PermissionDenied,
                    format!("table {} has a const default action", t.name),
                );
            }
            let (ai, data) = match &te.action {
                None => {
                    let d = &self.tables[&t.id].initial_default;
                    (d.0, d.1.to_vec())
                }
                Some(a) => {
                    if t.profile.is_some() {
                        return err(
                            Code::Unimplemented,
                            "default entries of indirect tables are not supported",
                        );
                    }
                    Self::translate_action(&pipe, &self.members, &self.groups, t, a)?
                }
            };
            let sw = self.sw.as_mut().unwrap();
            sw.set_default(t.sw, ai, data);
            return Ok(());
        }
        if t.is_const {
            return err(Code::PermissionDenied, format!("table {} is const", t.name));
        }
        if t.needs_priority {
            if te.priority <= 0 {
                return inval(format!(
                    "table {}: entries need a priority > 0 (ternary/range/optional match)",
                    t.name
                ));
            }
        } else if te.priority != 0 {
            return inval(format!(
                "table {}: priority must be 0 for exact/lpm tables",
                t.name
            ));
        }
        if te.idle_timeout_ns < 0 || (te.idle_timeout_ns > 0 && !t.idle_timeout) {
            return inval(format!(
                "table {}: idle_timeout_ns set but the table does not support idle timeouts",
                t.name
            ));
        }
        if te.counter_data.is_some() && t.direct_counter.is_none() && ty != T::Delete {
            return inval(format!("table {} has no direct counter", t.name));
        }
        if te.meter_config.is_some() && t.direct_meter.is_none() && ty != T::Delete {
            return inval(format!("table {} has no direct meter", t.name));
        }
        let (canon, key, aux, prefix) = Self::translate_match(t, &te.r#match)?;
        let kb = Self::entry_key(&canon, te.priority);
        let sw_prio = if t.needs_priority {
            Some((i32::MAX - te.priority) as i64)
        } else {
            None
        };
        match ty {
            T::Insert => {
                let action = te
                    .action
                    .as_ref()
                    .ok_or_else(|| ia(format!("table {}: INSERT without action", t.name)))?;
                let (ai, data) =
                    Self::translate_action(&pipe, &self.members, &self.groups, t, action)?;
                let ts = self.tables.get_mut(&t.id).unwrap();
                if ts.by_key.contains_key(&kb) {
                    return err(
                        Code::AlreadyExists,
                        format!("table {}: entry already exists", t.name),
                    );
                }
                if t.size > 0 && ts.by_key.len() as i64 >= t.size {
                    return err(
                        Code::ResourceExhausted,
                        format!("table {} is full ({} entries)", t.name, t.size),
                    );
                }
                let sw = self.sw.as_mut().unwrap();
                let oneshot = Self::one_shot(sw, &pipe, t, action)?;
                let ai = oneshot.as_ref().map(|o| o.0).unwrap_or(ai);
                let h = match sw.entry_add(t.sw, key, aux, prefix, sw_prio, ai, data) {
                    Ok(h) => h,
                    Err(e) => {
                        if let Some((_, o)) = oneshot {
                            Self::free_one_shot(sw, o);
                        }
                        let code = if e.contains("duplicate") {
                            Code::AlreadyExists
                        } else {
                            Code::InvalidArgument
                        };
                        return err(code, e);
                    }
                };
                let oneshot = oneshot.map(|o| o.1);
                if let Some(c) = &te.counter_data {
                    set_direct_counter(sw, t.sw, h, c);
                }
                if let Some(m) = &te.meter_config {
                    set_direct_meter(sw, t.sw, h, m);
                }
                let count = sw.direct_counter(t.sw, h).0;
                let entry = p4::TableEntry {
                    table_id: t.id,
                    r#match: canon,
                    action: Some(Self::canonical_action(&pipe, action)),
                    priority: te.priority,
                    meter_config: te.meter_config,
                    idle_timeout_ns: te.idle_timeout_ns,
                    metadata: te.metadata.clone(),
                    ..Default::default()
                };
                let sw_key = sw.table(t.sw).entries[h as usize]
                    .as_ref()
                    .map(|e| e.key.clone())
                    .unwrap_or_default();
                ts.by_key.insert(
                    kb,
                    Stored {
                        handle: h,
                        sw_key,
                        oneshot,
                        entry,
                        last_hit_ns: now_ns(),
                        last_count: count,
                        idle_notified: false,
                    },
                );
                Ok(())
            }
            T::Modify => {
                let action = match &te.action {
                    Some(a) => Some(Self::translate_action(
                        &pipe,
                        &self.members,
                        &self.groups,
                        t,
                        a,
                    )?),
                    None => None,
                };
                let ts = self.tables.get_mut(&t.id).unwrap();
                let st = ts.by_key.get_mut(&kb).ok_or_else(|| PErr {
                    code: Code::NotFound,
                    msg: format!("table {}: no such entry", t.name),
                })?;
                let sw = self.sw.as_mut().unwrap();
                if let Some((ai, data)) = action {
                    let oneshot = Self::one_shot(sw, &pipe, t, te.action.as_ref().unwrap())?;
                    let ai = oneshot.as_ref().map(|o| o.0).unwrap_or(ai);
                    sw.entry_modify(t.sw, st.handle, ai, data)
                        .map_err(|e| PErr {
                            code: Code::Internal,
                            msg: e,
                        })?;
                    if let Some(old) = std::mem::replace(&mut st.oneshot, oneshot.map(|o| o.1)) {
                        Self::free_one_shot(sw, old);
                    }
                    st.entry.action = te.action.as_ref().map(|a| Self::canonical_action(&pipe, a));
                }
                if let Some(c) = &te.counter_data {
                    set_direct_counter(sw, t.sw, st.handle, c);
                }
                if let Some(m) = &te.meter_config {
                    set_direct_meter(sw, t.sw, st.handle, m);
                    st.entry.meter_config = Some(*m);
                }
                st.entry.idle_timeout_ns = te.idle_timeout_ns;
                st.entry.metadata = te.metadata.clone();
                st.idle_notified = false;
                st.last_hit_ns = now_ns();
                Ok(())
            }
            T::Delete => {
                let ts = self.tables.get_mut(&t.id).unwrap();
                let st = ts.by_key.remove(&kb).ok_or_else(|| PErr {
                    code: Code::NotFound,
                    msg: format!("table {}: no such entry", t.name),
                })?;
                let sw = self.sw.as_mut().unwrap();
                sw.entry_delete(t.sw, st.handle).map_err(|e| PErr {
                    code: Code::Internal,
                    msg: e,
                })?;
                if let Some(o) = st.oneshot {
                    Self::free_one_shot(sw, o);
                }
                Ok(())
            }
            _ => unreachable!(),
        }
    }

    fn find_entry(&self, te: &p4::TableEntry) -> R<(TableInfo, u32)> {
        let pipe = self.pipe.clone().ok_or_else(|| PErr {
            code: Code::FailedPrecondition,
            msg: "no forwarding pipeline config set".into(),
        })?;
        let t = pipe.tables.get(&te.table_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown table id {}", te.table_id),
        })?;
        let (canon, ..) = Self::translate_match(t, &te.r#match)?;
        let kb = Self::entry_key(&canon, te.priority);
        let st = self.tables[&t.id].by_key.get(&kb).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("table {}: no such entry", t.name),
        })?;
        Ok((t.clone(), st.handle))
    }

    fn write_direct_counter(&mut self, ty: p4::update::Type, c: &p4::DirectCounterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("direct counter entries can only be modified");
        }
        let te = c
            .table_entry
            .as_ref()
            .ok_or_else(|| ia("direct counter entry without table entry".into()))?;
        let (t, h) = self.find_entry(te)?;
        if t.direct_counter.is_none() {
            return inval(format!("table {} has no direct counter", t.name));
        }
        let sw = self.sw.as_mut().unwrap();
        set_direct_counter(sw, t.sw, h, &c.data.unwrap_or_default());
        Ok(())
    }

    fn write_direct_meter(&mut self, ty: p4::update::Type, m: &p4::DirectMeterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("direct meter entries can only be modified");
        }
        let te = m
            .table_entry
            .as_ref()
            .ok_or_else(|| ia("direct meter entry without table entry".into()))?;
        let (t, h) = self.find_entry(te)?;
        if t.direct_meter.is_none() {
            return inval(format!("table {} has no direct meter", t.name));
        }
        let (canon, ..) = Self::translate_match(&t, &te.r#match)?;
        let kb = Self::entry_key(&canon, te.priority);
        let sw = self.sw.as_mut().unwrap();
        match &m.config {
            Some(cfg) => sw.set_direct_meter(t.sw, h, Some(meter_rates(cfg))),
            None => {
                if sw.direct_meter(t.sw, h).is_some() {
                    sw.set_direct_meter(t.sw, h, None);
                }
            }
        }
        if let Some(st) = self
            .tables
            .get_mut(&t.id)
            .and_then(|x| x.by_key.get_mut(&kb))
        {
            st.entry.meter_config = m.config;
        }
        Ok(())
    }

    fn write_member(&mut self, ty: p4::update::Type, m: &p4::ActionProfileMember) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        let prof = pipe
            .profiles
            .get(&m.action_profile_id)
            .ok_or_else(|| PErr {
                code: Code::NotFound,
                msg: format!("unknown action profile id {}", m.action_profile_id),
            })?;
        let sw = self.sw.as_mut().unwrap();
        let mems = self.members.entry(prof.id).or_default();
        let handle = mems.by_id.get(&m.member_id).copied();
        match (ty, handle) {
            (T::Insert, Some(_)) => err(
                Code::AlreadyExists,
                format!("member {} exists", m.member_id),
            ),
            (T::Insert | T::Modify, h) => {
                let act = m
                    .action
                    .as_ref()
                    .ok_or_else(|| ia("member without action".into()))?;
                // the copy of the action in a table this profile serves
                let served = pipe.tables.values().find(|t| t.profile == Some(prof.id));
                let (ai, data) = Self::action_data(&pipe, served, act)?;
                match h {
                    None => {
                        if prof.size > 0 && mems.by_id.len() as i64 >= prof.size {
                            return err(Code::ResourceExhausted, "action profile is full");
                        }
                        let h = sw.member_add(prof.sw, ai, data);
                        mems.insert(m.member_id, h);
                        Ok(())
                    }
                    Some(h) => sw.member_modify(prof.sw, h, ai, data).map_err(ia),
                }
            }
            (_, None) => err(Code::NotFound, format!("no member {}", m.member_id)),
            (_, Some(h)) => {
                let in_group = sw
                    .profile(prof.sw)
                    .groups
                    .iter()
                    .flatten()
                    .any(|g| g.contains(&h));
                let used = pipe
                    .tables
                    .values()
                    .filter(|t| t.profile == Some(prof.id))
                    .any(|t| {
                        sw.table(t.sw)
                            .entries
                            .iter()
                            .flatten()
                            .any(|e| e.action == INDIRECT_MEMBER | h)
                    });
                if in_group || used {
                    return err(
                        Code::FailedPrecondition,
                        format!("member {} is still referenced", m.member_id),
                    );
                }
                sw.member_delete(prof.sw, h).map_err(ia)?;
                mems.remove(m.member_id);
                Ok(())
            }
        }
    }

    fn write_group(&mut self, ty: p4::update::Type, g: &p4::ActionProfileGroup) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        let prof = pipe
            .profiles
            .get(&g.action_profile_id)
            .ok_or_else(|| PErr {
                code: Code::NotFound,
                msg: format!("unknown action profile id {}", g.action_profile_id),
            })?;
        if !prof.with_selector {
            return inval("action profile has no selector: groups are not allowed");
        }
        let mut handles = vec![];
        if ty != T::Delete {
            if prof.max_group_size > 0 && g.members.len() as i32 > prof.max_group_size {
                return err(Code::ResourceExhausted, "group larger than max_group_size");
            }
            let mems = self.members.get(&prof.id);
            for gm in &g.members {
                let h = *mems
                    .and_then(|m| m.by_id.get(&gm.member_id))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no member {}", gm.member_id),
                    })?;
                if gm.weight < 0 {
                    return inval("negative member weight");
                }
                for _ in 0..gm.weight.max(1) {
                    handles.push(h);
                }
            }
        }
        let grps = self.groups.entry(prof.id).or_default();
        let sw = self.sw.as_mut().unwrap();
        match (ty, grps.by_id.get(&g.group_id).copied()) {
            (T::Insert, Some(_)) => {
                err(Code::AlreadyExists, format!("group {} exists", g.group_id))
            }
            (T::Insert, None) => {
                let h = sw.group_create(prof.sw, handles);
                grps.insert(g.group_id, h);
                self.group_max_size
                    .insert((prof.id, g.group_id), g.max_size);
                Ok(())
            }
            (T::Modify, Some(h)) => {
                sw.group_set_members(prof.sw, h, handles).map_err(ia)?;
                self.group_max_size
                    .insert((prof.id, g.group_id), g.max_size);
                Ok(())
            }
            (T::Delete, Some(h)) => {
                let used = pipe
                    .tables
                    .values()
                    .filter(|t| t.profile == Some(prof.id))
                    .any(|t| {
                        sw.table(t.sw)
                            .entries
                            .iter()
                            .flatten()
                            .any(|e| e.action == INDIRECT_GROUP | h)
                    });
                if used {
                    return err(
                        Code::FailedPrecondition,
                        format!("group {} is still referenced", g.group_id),
                    );
                }
                sw.group_delete(prof.sw, h).map_err(ia)?;
                grps.remove(g.group_id);
                self.group_max_size.remove(&(prof.id, g.group_id));
                Ok(())
            }
            (_, None) => err(Code::NotFound, format!("no group {}", g.group_id)),
            _ => inval("bad update type"),
        }
    }

    fn write_counter(&mut self, ty: p4::update::Type, c: &p4::CounterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("counter entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let ci = pipe.counters.get(&c.counter_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown counter id {}", c.counter_id),
        })?;
        let d = c.data.unwrap_or_default();
        let (pk, by) = (d.packet_count as u64, d.byte_count as u64);
        match &c.index {
            Some(i) => {
                if i.index < 0 || i.index as usize >= ci.size {
                    return err(
                        Code::OutOfRange,
                        format!("counter {} index {} out of range", ci.name, i.index),
                    );
                }
                sw.counter_write(ci.sw, Some(i.index as usize), pk, by)
                    .map_err(ia)?;
            }
            None => sw.counter_write(ci.sw, None, pk, by).map_err(ia)?,
        }
        Ok(())
    }

    fn write_meter(&mut self, ty: p4::update::Type, m: &p4::MeterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("meter entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let mi = pipe.meters.get(&m.meter_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown meter id {}", m.meter_id),
        })?;
        let idx: Vec<usize> = match &m.index {
            Some(i) if i.index < 0 || i.index as usize >= mi.size => {
                return err(
                    Code::OutOfRange,
                    format!("meter {} index {} out of range", mi.name, i.index),
                )
            }
            Some(i) => vec![i.index as usize],
            None => (0..mi.size).collect(),
        };
        for &i in &idx {
            sw.set_meter(mi.sw, i, m.config.as_ref().map(meter_rates))
                .map_err(ia)?;
        }
        for i in idx {
            match m.config {
                Some(c) => self.meter_cfg.insert((m.meter_id, i as i64), c),
                None => self.meter_cfg.remove(&(m.meter_id, i as i64)),
            };
        }
        Ok(())
    }

    fn write_register(&mut self, ty: p4::update::Type, r: &p4::RegisterEntry) -> R<()> {
        if ty != p4::update::Type::Modify {
            return inval("register entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let ri = pipe.registers.get(&r.register_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown register id {}", r.register_id),
        })?;
        let v = match r.data.as_ref().and_then(|d| d.data.as_ref()) {
            Some(p4::p4_data::Data::Bitstring(b)) => bytes_to_u128(b, ri.bitwidth)
                .map_err(|e| ia(format!("register {}: {}", ri.name, e)))?,
            _ => return inval(format!("register {}: data must be a bitstring", ri.name)),
        };
        match &r.index {
            Some(i) => {
                if i.index < 0 || sw.register_write(ri.sw, i.index as usize, v).is_err() {
                    return err(
                        Code::OutOfRange,
                        format!("register {} index {} out of range", ri.name, i.index),
                    );
                }
            }
            None => sw.register_fill(ri.sw, v),
        }
        Ok(())
    }

    fn replica_ports(reps: &[p4::Replica]) -> R<Vec<(u32, u32)>> {
        let mut out = vec![];
        for r in reps {
            #[allow(deprecated)]
            let port = match &r.port_kind {
                Some(p4::replica::PortKind::EgressPort(p)) => *p,
                Some(p4::replica::PortKind::Port(b)) => {
                    bytes_to_u128(b, 32).map_err(|e| ia(format!("replica port: {}", e)))? as u32
                }
                None => return inval("replica without port"),
            };
            if port as usize >= sdnperf_switch::switch::MAX_PORTS {
                return inval(format!("replica port {} out of range", port));
            }
            if out.contains(&(port, r.instance)) {
                return inval(format!(
                    "duplicate replica (port {}, instance {})",
                    port, r.instance
                ));
            }
            out.push((port, r.instance));
        }
        Ok(out)
    }

    fn mk_nodes(sw: &mut Switch, g: u32, reps: &[(u32, u32)]) {
        for &(port, rid) in reps {
            let h = sw.pre_mut().node_create(rid, vec![port]);
            let _ = sw.pre_mut().node_associate(g, h);
        }
    }

    /// Removes multicast group `g` and its nodes (those no other group also holds).
    fn destroy_group(sw: &mut Switch, g: u32) {
        let Some(nodes) = sw.pre().groups.get(&g).cloned() else {
            return;
        };
        let _ = sw.pre_mut().mgrp_destroy(g);
        for h in nodes {
            if !sw.pre().groups.values().any(|o| o.contains(&h)) {
                let _ = sw.pre_mut().node_destroy(h);
            }
        }
    }

    fn write_pre(&mut self, ty: p4::update::Type, p: &p4::PacketReplicationEngineEntry) -> R<()> {
        use p4::packet_replication_engine_entry::Type as P;
        use p4::update::Type as T;
        self.parts()?;
        let sw = self.sw.as_mut().unwrap();
        match &p.r#type {
            None => inval("empty packet replication engine entry"),
            Some(P::MulticastGroupEntry(m)) => {
                let g = m.multicast_group_id;
                if g == 0 || g >= CLONE_GROUP_BASE {
                    return inval(format!("multicast group id {} out of range", g));
                }
                let reps = if ty == T::Delete {
                    vec![]
                } else {
                    Self::replica_ports(&m.replicas)?
                };
                let exists = sw.pre().groups.contains_key(&g);
                match ty {
                    T::Insert if exists => {
                        return err(Code::AlreadyExists, format!("multicast group {} exists", g))
                    }
                    T::Modify | T::Delete if !exists => {
                        return err(Code::NotFound, format!("no multicast group {}", g))
                    }
                    _ => {}
                }
                Self::destroy_group(sw, g);
                self.mcast_metadata.remove(&g);
                if ty != T::Delete {
                    let _ = sw.pre_mut().mgrp_create(g);
                    Self::mk_nodes(sw, g, &reps);
                    self.mcast_metadata.insert(g, m.metadata.clone());
                }
                Ok(())
            }
            Some(P::CloneSessionEntry(c)) => {
                let s = c.session_id;
                let reps = if ty == T::Delete {
                    vec![]
                } else {
                    Self::replica_ports(&c.replicas)?
                };
                if c.packet_length_bytes < 0 {
                    return inval("negative packet_length_bytes");
                }
                let exists = sw.pre().mirrors.contains_key(&s);
                match ty {
                    T::Insert if exists => {
                        return err(Code::AlreadyExists, format!("clone session {} exists", s))
                    }
                    T::Modify | T::Delete if !exists => {
                        return err(Code::NotFound, format!("no clone session {}", s))
                    }
                    _ => {}
                }
                // the replica group P4Runtime made for the session (a group ctl named
                // with mirroring_add_mc is ctl's and stays)
                Self::destroy_group(sw, CLONE_GROUP_BASE + s);
                sw.pre_mut().mirrors.remove(&s);
                self.clone_cos.remove(&s);
                if ty != T::Delete {
                    let mut mirror = sdnperf_switch::pre::Mirror::default();
                    if c.packet_length_bytes > 0 {
                        mirror.truncate = Some(c.packet_length_bytes as usize);
                    }
                    if reps.len() == 1 && reps[0].1 == 0 {
                        mirror.port = Some(reps[0].0);
                    } else if !reps.is_empty() {
                        let g = CLONE_GROUP_BASE + s;
                        let _ = sw.pre_mut().mgrp_create(g);
                        Self::mk_nodes(sw, g, &reps);
                        mirror.mgrp = Some(g);
                    }
                    sw.pre_mut().mirrors.insert(s, mirror);
                    self.clone_cos.insert(s, c.class_of_service);
                }
                Ok(())
            }
        }
    }

    fn write_digest(&mut self, ty: p4::update::Type, d: &p4::DigestEntry) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        if !pipe.digests.contains_key(&d.digest_id) {
            return err(Code::NotFound, format!("unknown digest id {}", d.digest_id));
        }
        let exists = self.digest_cfg.contains_key(&d.digest_id);
        match ty {
            T::Insert if exists => err(Code::AlreadyExists, "digest entry exists"),
            T::Modify | T::Delete if !exists => err(Code::NotFound, "no digest entry"),
            T::Delete => {
                self.digest_cfg.remove(&d.digest_id);
                self.digest_pending.remove(&d.digest_id);
                self.digest_lists.retain(|k, _| k.0 != d.digest_id);
                Ok(())
            }
            _ => {
                let c = d.config.unwrap_or_default();
                if c.max_timeout_ns < 0 || c.max_list_size < 0 || c.ack_timeout_ns < 0 {
                    return inval("digest config values must not be negative");
                }
                self.digest_cfg.insert(d.digest_id, c);
                Ok(())
            }
        }
    }

    // ------------------------------------------------------------------ read

    pub fn read(&self, ent: &p4::Entity, out: &mut Vec<p4::Entity>) -> R<()> {
        let Some(pipe) = self.pipe.clone() else {
            return err(
                Code::FailedPrecondition,
                "no forwarding pipeline config set",
            );
        };
        let sw = self.sw.as_ref().unwrap();
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let Some(e) = &ent.entity else {
            return inval("empty entity");
        };
        match e {
            E::TableEntry(q) => {
                let tids: Vec<u32> = if q.table_id == 0 {
                    let mut v: Vec<u32> = pipe.tables.keys().copied().collect();
                    v.sort();
                    v
                } else if pipe.tables.contains_key(&q.table_id) {
                    vec![q.table_id]
                } else {
                    return err(Code::NotFound, format!("unknown table id {}", q.table_id));
                };
                for tid in tids {
                    let t = &pipe.tables[&tid];
                    if q.is_default_action {
                        if q.table_id == 0 {
                            continue;
                        }
                        let st = sw.table(t.sw);
                        let aid = pipe
                            .action_by_sw
                            .get(&st.default_action)
                            .copied()
                            .unwrap_or(0);
                        let ai = pipe.actions.get(&aid);
                        let params = ai
                            .map(|ai| {
                                ai.params
                                    .iter()
                                    .zip(st.default_data.iter())
                                    .map(|((id, _), v)| p4::action::Param {
                                        param_id: *id,
                                        value: u128_to_bytes(*v),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                        out.push(wrap(E::TableEntry(p4::TableEntry {
                            table_id: tid,
                            is_default_action: true,
                            action: Some(p4::TableAction {
                                r#type: Some(p4::table_action::Type::Action(p4::Action {
                                    action_id: aid,
                                    params,
                                })),
                            }),
                            ..Default::default()
                        })));
                        continue;
                    }
                    let ts = &self.tables[&tid];
                    let one = |st: &Stored| -> p4::TableEntry {
                        let mut e = st.entry.clone();
                        if q.counter_data.is_some() && t.direct_counter.is_some() {
                            let (p, b) = sw.direct_counter(t.sw, st.handle);
                            e.counter_data = Some(p4::CounterData {
                                packet_count: p as i64,
                                byte_count: b as i64,
                            });
                        }
                        if q.time_since_last_hit.is_some() && t.idle_timeout {
                            e.time_since_last_hit = Some(p4::table_entry::IdleTimeout {
                                elapsed_ns: now_ns().saturating_sub(st.last_hit_ns) as i64,
                            });
                        }
                        e
                    };
                    if q.table_id != 0 && (!q.r#match.is_empty() || q.priority != 0) {
                        let (canon, ..) = Self::translate_match(t, &q.r#match)?;
                        if let Some(st) = ts.by_key.get(&Self::entry_key(&canon, q.priority)) {
                            out.push(wrap(E::TableEntry(one(st))));
                        }
                    } else {
                        out.reserve(ts.by_key.len());
                        for st in ts.by_key.values() {
                            out.push(wrap(E::TableEntry(one(st))));
                        }
                    }
                }
            }
            E::ActionProfileMember(q) => {
                for (pid, mems) in sorted(&self.members) {
                    if q.action_profile_id != 0 && q.action_profile_id != pid {
                        continue;
                    }
                    let sp = sw.profile(pipe.profiles[&pid].sw);
                    for (mid, h) in sorted(&mems.by_id) {
                        if q.member_id != 0 && q.member_id != mid {
                            continue;
                        }
                        let Some(Some((action, data))) = sp.members.get(*h as usize) else {
                            continue;
                        };
                        out.push(wrap(E::ActionProfileMember(p4::ActionProfileMember {
                            action_profile_id: pid,
                            member_id: mid,
                            action: Self::action_from_switch(&pipe, *action, data),
                        })));
                    }
                }
            }
            E::ActionProfileGroup(q) => {
                for (pid, grps) in sorted(&self.groups) {
                    if q.action_profile_id != 0 && q.action_profile_id != pid {
                        continue;
                    }
                    let sp = sw.profile(pipe.profiles[&pid].sw);
                    let member_ids = self.members.get(&pid).map(|m| &m.by_handle);
                    for (gid, h) in sorted(&grps.by_id) {
                        if q.group_id != 0 && q.group_id != gid {
                            continue;
                        }
                        let Some(Some(handles)) = sp.groups.get(*h as usize) else {
                            continue;
                        };
                        // a member listed n times has weight n, in first-listed order
                        let mut members: Vec<p4::action_profile_group::Member> = vec![];
                        for mh in handles {
                            let Some(&mid) = member_ids.and_then(|m| m.get(mh)) else {
                                continue;
                            };
                            match members.iter_mut().find(|m| m.member_id == mid) {
                                Some(m) => m.weight += 1,
                                None => members.push(p4::action_profile_group::Member {
                                    member_id: mid,
                                    weight: 1,
                                    ..Default::default()
                                }),
                            }
                        }
                        out.push(wrap(E::ActionProfileGroup(p4::ActionProfileGroup {
                            action_profile_id: pid,
                            group_id: gid,
                            members,
                            max_size: self.group_max_size.get(&(pid, gid)).copied().unwrap_or(0),
                        })));
                    }
                }
            }
            E::CounterEntry(q) => {
                let mut ids: Vec<&u32> = pipe
                    .counters
                    .keys()
                    .filter(|&&id| q.counter_id == 0 || q.counter_id == id)
                    .collect();
                if ids.is_empty() && q.counter_id != 0 {
                    return err(
                        Code::NotFound,
                        format!("unknown counter id {}", q.counter_id),
                    );
                }
                ids.sort();
                for id in ids {
                    let ci = &pipe.counters[id];
                    let c = sw.counter(ci.sw);
                    let range: Vec<usize> = match &q.index {
                        Some(i) if i.index < 0 || i.index as usize >= ci.size => {
                            return err(Code::OutOfRange, "counter index out of range")
                        }
                        Some(i) => vec![i.index as usize],
                        None => (0..ci.size).collect(),
                    };
                    for i in range {
                        out.push(wrap(E::CounterEntry(p4::CounterEntry {
                            counter_id: *id,
                            index: Some(p4::Index { index: i as i64 }),
                            data: Some(p4::CounterData {
                                packet_count: c.packets[i] as i64,
                                byte_count: c.bytes[i] as i64,
                            }),
                        })));
                    }
                }
            }
            E::DirectCounterEntry(q) => {
                let te = q.table_entry.clone().unwrap_or_default();
                let mut tq = te.clone();
                tq.counter_data = Some(Default::default());
                let mut tmp = vec![];
                self.read(&wrap(E::TableEntry(tq)), &mut tmp)?;
                for e in tmp {
                    if let Some(E::TableEntry(mut t)) = e.entity {
                        if pipe
                            .tables
                            .get(&t.table_id)
                            .map(|x| x.direct_counter.is_none())
                            .unwrap_or(true)
                        {
                            continue;
                        }
                        let data = t.counter_data.take();
                        t.meter_config = None;
                        out.push(wrap(E::DirectCounterEntry(p4::DirectCounterEntry {
                            table_entry: Some(t),
                            data,
                        })));
                    }
                }
            }
            E::MeterEntry(q) => {
                let mut ids: Vec<&u32> = pipe
                    .meters
                    .keys()
                    .filter(|&&id| q.meter_id == 0 || q.meter_id == id)
                    .collect();
                if ids.is_empty() && q.meter_id != 0 {
                    return err(Code::NotFound, format!("unknown meter id {}", q.meter_id));
                }
                ids.sort();
                for id in ids {
                    let mi = &pipe.meters[id];
                    let range: Vec<usize> = match &q.index {
                        Some(i) if i.index < 0 || i.index as usize >= mi.size => {
                            return err(Code::OutOfRange, "meter index out of range")
                        }
                        Some(i) => vec![i.index as usize],
                        None => (0..mi.size).collect(),
                    };
                    for i in range {
                        out.push(wrap(E::MeterEntry(p4::MeterEntry {
                            meter_id: *id,
                            index: Some(p4::Index { index: i as i64 }),
                            config: self.meter_cfg.get(&(*id, i as i64)).copied(),
                            counter_data: None,
                        })));
                    }
                }
            }
            E::DirectMeterEntry(q) => {
                let te = q.table_entry.clone().unwrap_or_default();
                let mut tmp = vec![];
                self.read(&wrap(E::TableEntry(te)), &mut tmp)?;
                for e in tmp {
                    if let Some(E::TableEntry(mut t)) = e.entity {
                        if pipe
                            .tables
                            .get(&t.table_id)
                            .map(|x| x.direct_meter.is_none())
                            .unwrap_or(true)
                        {
                            continue;
                        }
                        let config = t.meter_config.take();
                        t.counter_data = None;
                        out.push(wrap(E::DirectMeterEntry(p4::DirectMeterEntry {
                            table_entry: Some(t),
                            config,
                            counter_data: None,
                        })));
                    }
                }
            }
            E::RegisterEntry(q) => {
                let mut ids: Vec<&u32> = pipe
                    .registers
                    .keys()
                    .filter(|&&id| q.register_id == 0 || q.register_id == id)
                    .collect();
                if ids.is_empty() && q.register_id != 0 {
                    return err(
                        Code::NotFound,
                        format!("unknown register id {}", q.register_id),
                    );
                }
                ids.sort();
                for id in ids {
                    let ri = &pipe.registers[id];
                    let r = sw.register_values(ri.sw);
                    let range: Vec<usize> = match &q.index {
                        Some(i) if i.index < 0 || i.index as usize >= ri.size => {
                            return err(Code::OutOfRange, "register index out of range")
                        }
                        Some(i) => vec![i.index as usize],
                        None => (0..ri.size).collect(),
                    };
                    for i in range {
                        out.push(wrap(E::RegisterEntry(p4::RegisterEntry {
                            register_id: *id,
                            index: Some(p4::Index { index: i as i64 }),
                            data: Some(p4::P4Data {
                                data: Some(p4::p4_data::Data::Bitstring(u128_to_bytes(r[i]))),
                            }),
                        })));
                    }
                }
            }
            E::PacketReplicationEngineEntry(q) => {
                use p4::packet_replication_engine_entry::Type as P;
                match &q.r#type {
                    Some(P::MulticastGroupEntry(m)) => {
                        let pre = sw.pre();
                        let mut ids: Vec<u32> = pre
                            .groups
                            .keys()
                            .copied()
                            .filter(|&g| g != 0 && g < CLONE_GROUP_BASE)
                            .filter(|&g| m.multicast_group_id == 0 || m.multicast_group_id == g)
                            .collect();
                        ids.sort();
                        for g in ids {
                            let entry = p4::MulticastGroupEntry {
                                multicast_group_id: g,
                                replicas: replicas_of(pre, g),
                                metadata: self.mcast_metadata.get(&g).cloned().unwrap_or_default(),
                            };
                            out.push(wrap(E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry { r#type: Some(P::MulticastGroupEntry(entry)) })));
                        }
                    }
                    Some(P::CloneSessionEntry(c)) => {
                        let pre = sw.pre();
                        let mut ids: Vec<u32> = pre.mirrors.keys().copied().filter(|&s| c.session_id == 0 || c.session_id == s).collect();
                        ids.sort();
                        for s in ids {
                            let m = pre.mirrors[&s];
                            let replicas = match (m.port, m.mgrp) {
                                (Some(port), _) => vec![replica(0, port)],
                                (None, Some(g)) => replicas_of(pre, g),
                                (None, None) => vec![],
                            };
                            let entry = p4::CloneSessionEntry {
                                session_id: s,
                                replicas,
                                class_of_service: self.clone_cos.get(&s).copied().unwrap_or(0),
                                packet_length_bytes: m.truncate.unwrap_or(0) as i32,
                            };
                            out.push(wrap(E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry { r#type: Some(P::CloneSessionEntry(entry)) })));
                        }
                    }
                    None => return inval("packet replication engine read needs a multicast group or clone session entry"),
                }
            }
            E::DigestEntry(q) => {
                let mut ids: Vec<&u32> = self
                    .digest_cfg
                    .keys()
                    .filter(|&&d| q.digest_id == 0 || q.digest_id == d)
                    .collect();
                ids.sort();
                for d in ids {
                    out.push(wrap(E::DigestEntry(p4::DigestEntry {
                        digest_id: *d,
                        config: Some(self.digest_cfg[d]),
                    })));
                }
            }
            E::ValueSetEntry(q) => {
                let mut ids: Vec<&u32> = pipe
                    .value_sets
                    .keys()
                    .filter(|&&id| q.value_set_id == 0 || q.value_set_id == id)
                    .collect();
                ids.sort();
                for id in ids {
                    let (vi, (fid, bw), _) = pipe.value_sets[id];
                    let members = sw
                        .value_set(vi)
                        .iter()
                        .map(|&(v, m)| {
                            let t = if m == width_mask(bw) {
                                p4::field_match::FieldMatchType::Exact(p4::field_match::Exact {
                                    value: u128_to_bytes(v),
                                })
                            } else {
                                p4::field_match::FieldMatchType::Ternary(p4::field_match::Ternary {
                                    value: u128_to_bytes(v),
                                    mask: u128_to_bytes(m),
                                })
                            };
                            p4::ValueSetMember {
                                r#match: vec![p4::FieldMatch {
                                    field_id: fid,
                                    field_match_type: Some(t),
                                }],
                            }
                        })
                        .collect();
                    out.push(wrap(E::ValueSetEntry(p4::ValueSetEntry {
                        value_set_id: *id,
                        members,
                    })));
                }
            }
            E::ExternEntry(_) => {
                return err(Code::Unimplemented, "extern entries are not supported")
            }
        }
        Ok(())
    }

    /// Every writable entity, in an order that can be written back (used by reconcile):
    /// members before groups before table entries.
    pub fn read_all(&self) -> Vec<p4::Entity> {
        use p4::packet_replication_engine_entry::Type as P;
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let mut out = vec![];
        for q in [
            E::ActionProfileMember(Default::default()),
            E::ActionProfileGroup(Default::default()),
        ] {
            let _ = self.read(&wrap(q), &mut out);
        }
        for ts in self.tables.values() {
            for st in ts.by_key.values() {
                out.push(wrap(E::TableEntry(st.entry.clone())));
            }
        }
        for q in [
            P::MulticastGroupEntry(Default::default()),
            P::CloneSessionEntry(Default::default()),
        ] {
            let q = E::PacketReplicationEngineEntry(p4::PacketReplicationEngineEntry {
                r#type: Some(q),
            });
            let _ = self.read(&wrap(q), &mut out);
        }
        for (d, c) in &self.digest_cfg {
            out.push(wrap(E::DigestEntry(p4::DigestEntry {
                digest_id: *d,
                config: Some(*c),
            })));
        }
        out
    }

    pub fn num_entries(&self, table_id: u32) -> usize {
        self.tables
            .get(&table_id)
            .map(|t| t.by_key.len())
            .unwrap_or(0)
    }

    // ------------------------------------------------------------------ packet I/O, events

    /// A packet the switch sent to the CPU port -> PacketIn (controller header parsed).
    pub fn packet_in(&self, bytes: &[u8]) -> Option<p4::PacketIn> {
        let pipe = self.pipe.as_ref()?;
        match &pipe.packet_in {
            Some(cpm) => {
                let n = cpm.bytes();
                if bytes.len() < n {
                    return None;
                }
                let mut off = 0;
                let mut md = vec![];
                for &(id, w) in &cpm.fields {
                    md.push(p4::PacketMetadata {
                        metadata_id: id,
                        value: u128_to_bytes(get_bits(bytes, off, w)),
                    });
                    off += w as usize;
                }
                Some(p4::PacketIn {
                    payload: bytes[n..].to_vec(),
                    metadata: md,
                })
            }
            None => Some(p4::PacketIn {
                payload: bytes.to_vec(),
                metadata: vec![],
            }),
        }
    }

    /// PacketOut -> the bytes to inject at the CPU port (controller header prepended).
    pub fn packet_out_bytes(&self, po: &p4::PacketOut) -> R<Vec<u8>> {
        let Some(pipe) = &self.pipe else {
            return err(
                Code::FailedPrecondition,
                "no forwarding pipeline config set",
            );
        };
        let Some(cpm) = &pipe.packet_out else {
            return Ok(po.payload.clone());
        };
        let n = cpm.bytes();
        let mut out = vec![0u8; n];
        let mut off = 0;
        for md in &po.metadata {
            if !cpm.fields.iter().any(|f| f.0 == md.metadata_id) {
                return inval(format!(
                    "packet-out: unknown metadata id {}",
                    md.metadata_id
                ));
            }
        }
        for &(id, w) in &cpm.fields {
            let v = match po.metadata.iter().find(|m| m.metadata_id == id) {
                Some(m) => bytes_to_u128(&m.value, w)
                    .map_err(|e| ia(format!("packet-out metadata {}: {}", id, e)))?,
                None => 0,
            };
            set_bits(&mut out, off, w, v);
            off += w as usize;
        }
        out.extend_from_slice(&po.payload);
        Ok(out)
    }

    /// A controller acknowledged a digest list: its data may be sent again.
    pub fn digest_ack(&mut self, digest_id: u32, list_id: u64) {
        if let Some(vals) = self.digest_lists.remove(&(digest_id, list_id)) {
            if let Some(p) = self.digest_pending.get_mut(&digest_id) {
                for v in vals {
                    p.remove(&v);
                }
            }
        }
    }

    /// Whether some entry has an idle timeout, so `poll_events` must run periodically
    /// even while no packets arrive (otherwise an idle switch needs no timer).
    pub fn has_idle_timeouts(&self) -> bool {
        let Some(pipe) = self.pipe.as_ref() else {
            return false;
        };
        pipe.tables.values().filter(|t| t.idle_timeout).any(|t| {
            self.tables
                .get(&t.id)
                .is_some_and(|ts| ts.by_key.values().any(|st| st.entry.idle_timeout_ns > 0))
        })
    }

    /// Digests and idle-timeout notifications due now.
    pub fn poll_events(&mut self, out: &mut Vec<Event>) {
        let Some(sw) = self.sw.as_mut() else { return };
        let Some(pipe) = self.pipe.clone() else {
            return;
        };
        let ds = sw.take_digests();
        if !ds.is_empty() {
            let now = now_ns();
            let mut lists: HashMap<u32, Vec<Vec<u128>>> = HashMap::new();
            for d in ds {
                let Some(&did) = self.digest_by_list.get(&d.list) else {
                    continue;
                };
                let Some(cfg) = self.digest_cfg.get(&did) else {
                    continue;
                };
                if cfg.ack_timeout_ns > 0 {
                    // the same data is not sent again until it is acked or the ack times out
                    let pend = self.digest_pending.entry(did).or_default();
                    match pend.get(&d.values) {
                        Some(&t) if now.saturating_sub(t) < cfg.ack_timeout_ns as u64 => continue,
                        _ => {
                            pend.insert(d.values.clone(), now);
                        }
                    }
                }
                lists.entry(did).or_default().push(d.values);
            }
            for (did, data) in lists {
                let cfg = self.digest_cfg[&did];
                let max = cfg.max_list_size.max(0) as usize;
                let chunk = if max == 0 { data.len().max(1) } else { max };
                for c in data.chunks(chunk) {
                    let list_id = self.next_list_id;
                    self.next_list_id += 1;
                    let items = c
                        .iter()
                        .map(|vals| p4::P4Data {
                            data: Some(p4::p4_data::Data::Struct(p4::P4StructLike {
                                members: vals
                                    .iter()
                                    .map(|v| p4::P4Data {
                                        data: Some(p4::p4_data::Data::Bitstring(u128_to_bytes(*v))),
                                    })
                                    .collect(),
                            })),
                        })
                        .collect();
                    if cfg.ack_timeout_ns > 0 {
                        self.digest_lists.insert((did, list_id), c.to_vec());
                    }
                    out.push(Event::Digest(p4::DigestList {
                        digest_id: did,
                        list_id,
                        data: items,
                        timestamp: now as i64,
                    }));
                }
            }
        }
        let now = now_ns();
        if now.saturating_sub(self.last_idle_scan) < 50_000_000 {
            return;
        }
        self.last_idle_scan = now;
        let mut expired = vec![];
        for t in pipe.tables.values().filter(|t| t.idle_timeout) {
            let Some(ts) = self.tables.get_mut(&t.id) else {
                continue;
            };
            for st in ts.by_key.values_mut() {
                if st.entry.idle_timeout_ns <= 0 {
                    continue;
                }
                let c = sw.direct_counter(t.sw, st.handle).0;
                if c != st.last_count {
                    st.last_count = c;
                    st.last_hit_ns = now;
                    st.idle_notified = false;
                } else if !st.idle_notified
                    && now.saturating_sub(st.last_hit_ns) >= st.entry.idle_timeout_ns as u64
                {
                    st.idle_notified = true;
                    expired.push(st.entry.clone());
                }
            }
        }
        if !expired.is_empty() {
            out.push(Event::IdleTimeoutNotification(
                p4::IdleTimeoutNotification {
                    table_entry: expired,
                    timestamp: now as i64,
                },
            ));
        }
    }
}

/// A map's entries in key order (Reads list entities in a stable order).
fn sorted<V>(m: &HashMap<u32, V>) -> Vec<(u32, &V)> {
    let mut v: Vec<(u32, &V)> = m.iter().map(|(k, v)| (*k, v)).collect();
    v.sort_by_key(|x| x.0);
    v
}

fn replica(instance: u32, port: u32) -> p4::Replica {
    p4::Replica {
        instance,
        port_kind: Some(p4::replica::PortKind::Port(u128_to_bytes(port as u128))),
        ..Default::default()
    }
}

/// Multicast group `g`'s replicas as the switch's PRE holds them (node order).
fn replicas_of(pre: &sdnperf_switch::pre::Pre, g: u32) -> Vec<p4::Replica> {
    let mut reps = vec![];
    pre.replicas(g, &mut reps);
    reps.into_iter()
        .map(|(rid, port)| replica(rid, port))
        .collect()
}

fn set_direct_counter(sw: &mut Switch, ti: usize, h: u32, c: &p4::CounterData) {
    sw.set_direct_counter(
        ti,
        h,
        c.packet_count.max(0) as u64,
        c.byte_count.max(0) as u64,
    );
}

fn set_direct_meter(sw: &mut Switch, ti: usize, h: u32, m: &p4::MeterConfig) {
    sw.set_direct_meter(ti, h, Some(meter_rates(m)));
}

/// P4Runtime's rates are per second; the switch's per microsecond.
fn meter_rates(m: &p4::MeterConfig) -> MeterRates {
    MeterRates {
        cir: m.cir as f64 / 1e6,
        cbs: m.cburst as f64,
        pir: m.pir as f64 / 1e6,
        pbs: m.pburst as f64,
    }
}
