//! Control of a running switch: the one place its state is changed, so every front end
//! (ctl text commands, P4Runtime) leaves it the same way and sees what the other did.
//! Table entries: an entry's direct counter and direct meter start fresh when it is added
//! and are wiped when it goes (a later entry may reuse the handle). Also registers,
//! counters, meters, action profile members and groups, and the packet replication engine
//! (multicast groups, clone sessions).

pub use crate::control_error::ControlError;
use crate::exec::{Digest, Job, Stats};
use crate::externs::{Counter, MeterCell};
use crate::pipeline::{ActionProfile, Program};
use crate::pre::{Mirror, Pre};
use crate::switch::Switch;
use crate::tables::Table;

/// A two-rate meter's configuration: rates in units per microsecond, bursts in units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeterRates {
    pub cir: f64,
    pub cbs: f64,
    pub pir: f64,
    pub pbs: f64,
    /// P4Runtime's excess burst (single-rate meters, RFC 2697): the two-rate meter does not
    /// use it, but nothing else could give it back to a Read, so the cell keeps it
    pub ebs: f64,
}

fn apply_rates(cell: &mut MeterCell, rates: Option<MeterRates>) {
    match rates {
        Some(r) => {
            cell.configure(r.cir, r.cbs, r.pir, r.pbs);
            cell.ebs = r.ebs;
        }
        None => *cell = MeterCell::default(),
    }
}

/// The configuration cell `c` runs with (None: unconfigured, every packet green).
fn rates_of(c: &MeterCell) -> Option<MeterRates> {
    c.set.then_some(MeterRates {
        cir: c.cir,
        cbs: c.cbs,
        pir: c.pir,
        pbs: c.pbs,
        ebs: c.ebs,
    })
}

impl Switch {
    /// The loaded program: headers, actions and the tables' definitions (fixed after load).
    pub fn program(&self) -> &Program {
        &self.eng.prog
    }

    /// The entries and default action of table `ti` (its definition is `program().tables[ti]`).
    pub fn table(&self, ti: usize) -> &Table {
        &self.eng.tables[ti]
    }

    /// Sets the action table `ti` takes on a miss.
    pub fn set_default(&mut self, ti: usize, action: u32, data: Vec<u128>) {
        let t = &mut self.eng.tables[ti];
        t.default_action = action;
        t.default_data = data.into_boxed_slice();
    }

    /// Adds an entry to table `ti` (see `Table::add`); returns its handle.
    // the arguments are an entry's parts, as ctl and P4Runtime both hold them
    #[allow(clippy::too_many_arguments)]
    pub fn entry_add(
        &mut self,
        ti: usize,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
        action: u32,
        data: Vec<u128>,
    ) -> Result<u32, ControlError> {
        let h = self.eng.tables[ti].add(key, aux, prefix, priority, action, data)?;
        self.reset_entry_state(ti, h);
        Ok(h)
    }

    /// The handle of table `ti`'s entry with this match (the arguments as for
    /// `entry_add`): `NoMatchingEntry` if there is none.
    pub fn entry_find(
        &self,
        ti: usize,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
    ) -> Result<u32, ControlError> {
        self.eng.tables[ti].find(key, aux, prefix, priority)
    }

    /// Entry `h` of table `ti`, if there is one.
    pub fn entry(&self, ti: usize, h: u32) -> Option<&crate::tables::Entry> {
        self.eng.tables[ti].entries.get(h as usize)?.as_ref()
    }

    pub fn entry_modify(
        &mut self,
        ti: usize,
        handle: u32,
        action: u32,
        data: Vec<u128>,
    ) -> Result<(), ControlError> {
        self.eng.tables[ti].modify(handle, action, data)
    }

    pub fn entry_delete(&mut self, ti: usize, handle: u32) -> Result<(), ControlError> {
        self.eng.tables[ti].delete(handle)?;
        self.reset_entry_state(ti, handle);
        Ok(())
    }

    /// Removes every entry of table `ti` with its direct counters and meters.
    pub fn table_clear(&mut self, ti: usize) {
        self.eng.tables[ti].clear();
        self.eng.direct_counters[ti].clear();
        self.eng.direct_meter_cells[ti].clear();
    }

    /// The direct counter of entry `h` of table `ti`: (packets, bytes).
    pub fn direct_counter(&self, ti: usize, h: u32) -> (u64, u64) {
        self.eng.direct_counters[ti]
            .get(h as usize)
            .copied()
            .unwrap_or((0, 0))
    }

    pub fn set_direct_counter(&mut self, ti: usize, h: u32, packets: u64, bytes: u64) {
        let n = self.eng.tables[ti].entries.len().max(h as usize + 1);
        let dc = &mut self.eng.direct_counters[ti];
        if dc.len() < n {
            dc.resize(n, (0, 0));
        }
        dc[h as usize] = (packets, bytes);
    }

    /// Configures (None: unconfigures) the direct meter of entry `h` of table `ti`.
    pub fn set_direct_meter(&mut self, ti: usize, h: u32, rates: Option<MeterRates>) {
        let n = self.eng.tables[ti].entries.len().max(h as usize + 1);
        let cells = &mut self.eng.direct_meter_cells[ti];
        if cells.len() < n {
            cells.resize(n, MeterCell::default());
        }
        apply_rates(&mut cells[h as usize], rates);
    }

    pub fn direct_meter(&self, ti: usize, h: u32) -> Option<&MeterCell> {
        self.eng.direct_meter_cells[ti].get(h as usize)
    }

    /// The configuration the direct meter of entry `h` of table `ti` runs with, if any.
    pub fn direct_meter_rates(&self, ti: usize, h: u32) -> Option<MeterRates> {
        self.direct_meter(ti, h).and_then(rates_of)
    }

    /// The loaded program's version: the cookie a controller's SetForwardingPipelineConfig
    /// gave, else the program's fingerprint (`Program::fingerprint`).
    pub fn config_version(&self) -> u64 {
        self.config_version
    }

    pub fn set_config_version(&mut self, v: u64) {
        self.config_version = v;
    }

    // ---------------------------------------------------------------- engine readings

    /// Nanoseconds since the engine started (the clock packets are stamped with).
    pub fn now_ns(&self) -> u64 {
        self.eng.now_ns()
    }

    pub fn stats(&self) -> Stats {
        self.eng.stats
    }

    /// Gives a finished packet's buffers back to the engine's pool.
    pub fn recycle(&mut self, job: Box<Job>) {
        self.eng.recycle(job)
    }

    /// The digests the pipeline produced since the last call.
    pub fn take_digests(&mut self) -> Vec<Digest> {
        std::mem::take(&mut self.eng.digests)
    }

    // ---------------------------------------------------------------- registers

    pub fn register_values(&self, r: usize) -> &[u128] {
        &self.eng.ext.registers[r].vals
    }

    /// Writes cell `i` of register `r` (cut to the register's width).
    pub fn register_write(&mut self, r: usize, i: usize, v: u128) -> Result<(), ControlError> {
        if self.eng.ext.register_write(r, i, v) {
            Ok(())
        } else {
            Err(ControlError::IndexOutOfRange { index: i })
        }
    }

    /// Sets every cell of register `r` to `v` (0: reset).
    pub fn register_fill(&mut self, r: usize, v: u128) {
        for i in 0..self.eng.ext.registers[r].vals.len() {
            self.eng.ext.register_write(r, i, v);
        }
    }

    // ---------------------------------------------------------------- indirect counters, meters

    pub fn counter(&self, c: usize) -> &Counter {
        &self.eng.ext.counters[c]
    }

    /// Sets cell `i` (None: every cell) of counter `c`.
    pub fn counter_write(
        &mut self,
        c: usize,
        i: Option<usize>,
        packets: u64,
        bytes: u64,
    ) -> Result<(), ControlError> {
        let ctr = &mut self.eng.ext.counters[c];
        match i {
            Some(i) if i >= ctr.packets.len() => Err(ControlError::IndexOutOfRange { index: i }),
            Some(i) => {
                ctr.packets[i] = packets;
                ctr.bytes[i] = bytes;
                Ok(())
            }
            None => {
                ctr.packets.iter_mut().for_each(|x| *x = packets);
                ctr.bytes.iter_mut().for_each(|x| *x = bytes);
                Ok(())
            }
        }
    }

    pub fn meter_cell(&self, m: usize, i: usize) -> Option<&MeterCell> {
        self.eng.ext.meters[m].cells.get(i)
    }

    /// The configuration cell `i` of meter `m` runs with, if any.
    pub fn meter_rates(&self, m: usize, i: usize) -> Option<MeterRates> {
        self.meter_cell(m, i).and_then(rates_of)
    }

    /// Configures (None: unconfigures) cell `i` of meter `m`.
    pub fn set_meter(
        &mut self,
        m: usize,
        i: usize,
        rates: Option<MeterRates>,
    ) -> Result<(), ControlError> {
        let cell = self.eng.ext.meters[m]
            .cells
            .get_mut(i)
            .ok_or(ControlError::IndexOutOfRange { index: i })?;
        apply_rates(cell, rates);
        Ok(())
    }

    // ---------------------------------------------------------------- packet replication

    /// Multicast groups, their nodes and the clone sessions.
    pub fn pre(&self) -> &Pre {
        &self.eng.pre
    }

    /// Adds multicast group `g`, without nodes: `GroupExists` if there is one.
    pub fn mcast_group_add(&mut self, g: u32) -> Result<(), ControlError> {
        self.eng.pre.mgrp_create(g)
    }

    /// Removes multicast group `g` (its nodes stay): `NoMulticastGroup` if there is none.
    pub fn mcast_group_remove(&mut self, g: u32) -> Result<(), ControlError> {
        self.eng.pre.mgrp_destroy(g)
    }

    /// Adds a multicast node (replication id `rid`, `ports`) in no group; returns its handle.
    pub fn mcast_node_add(&mut self, rid: u32, ports: Vec<u32>) -> u32 {
        self.eng.pre.node_create(rid, ports)
    }

    /// Sets node `h`'s ports: `NoMulticastNode` if there is no such node.
    pub fn mcast_node_set(&mut self, h: u32, ports: Vec<u32>) -> Result<(), ControlError> {
        self.eng.pre.node_update(h, ports)
    }

    /// Removes node `h` (and takes it out of every group): `NoMulticastNode` if there is none.
    pub fn mcast_node_remove(&mut self, h: u32) -> Result<(), ControlError> {
        self.eng.pre.node_destroy(h)
    }

    /// Puts node `h` in group `g` (once): `NoMulticastNode` / `NoMulticastGroup`.
    pub fn mcast_node_associate(&mut self, g: u32, h: u32) -> Result<(), ControlError> {
        self.eng.pre.node_associate(g, h)
    }

    /// Takes node `h` out of group `g`: `NoMulticastGroup` if there is no such group.
    pub fn mcast_node_dissociate(&mut self, g: u32, h: u32) -> Result<(), ControlError> {
        self.eng.pre.node_dissociate(g, h)
    }

    /// Clone session `s`, if there is one.
    pub fn mirror(&self, s: u32) -> Option<Mirror> {
        self.eng.pre.mirror(s)
    }

    /// Adds clone session `s`: `MirrorExists` if there is one.
    pub fn mirror_add(&mut self, s: u32, m: Mirror) -> Result<(), ControlError> {
        if self.eng.pre.mirrors.contains_key(&s) {
            return Err(ControlError::MirrorExists { session: s });
        }
        self.eng.pre.mirrors.insert(s, m);
        Ok(())
    }

    /// Sets clone session `s` to `m`, whether or not it was there.
    pub fn mirror_set(&mut self, s: u32, m: Mirror) {
        self.eng.pre.mirrors.insert(s, m);
    }

    /// Removes clone session `s` and returns it: `NoMirror` if there is none.
    pub fn mirror_remove(&mut self, s: u32) -> Result<Mirror, ControlError> {
        self.eng
            .pre
            .mirrors
            .remove(&s)
            .ok_or(ControlError::NoMirror { session: s })
    }

    // ---------------------------------------------------------------- action profiles

    pub fn profile(&self, pi: usize) -> &ActionProfile {
        &self.eng.prog.profiles[pi]
    }

    /// Adds a member (action and its data) to profile `pi`; returns its handle.
    pub fn member_add(&mut self, pi: usize, action: u32, data: Vec<u128>) -> u32 {
        let pr = &mut self.eng.prog.profiles[pi];
        pr.members.push(Some((action, data.into_boxed_slice())));
        (pr.members.len() - 1) as u32
    }

    /// Replaces member `h`'s action and data.
    pub fn member_modify(
        &mut self,
        pi: usize,
        h: u32,
        action: u32,
        data: Vec<u128>,
    ) -> Result<(), ControlError> {
        let slot = self.eng.prog.profiles[pi]
            .members
            .get_mut(h as usize)
            .and_then(|m| m.as_mut())
            .ok_or(ControlError::NoMember { handle: h })?;
        *slot = (action, data.into_boxed_slice());
        Ok(())
    }

    /// Deletes member `h` (if there) and takes it out of every group.
    pub fn member_delete(&mut self, pi: usize, h: u32) -> Result<(), ControlError> {
        let pr = &mut self.eng.prog.profiles[pi];
        *pr.members
            .get_mut(h as usize)
            .ok_or(ControlError::NoMember { handle: h })? = None;
        for g in pr.groups.iter_mut().flatten() {
            g.retain(|&m| m != h);
        }
        Ok(())
    }

    /// Creates a group of `members` in profile `pi`; returns its handle.
    pub fn group_create(&mut self, pi: usize, members: Vec<u32>) -> u32 {
        let pr = &mut self.eng.prog.profiles[pi];
        pr.groups.push(Some(members));
        (pr.groups.len() - 1) as u32
    }

    /// Replaces group `g`'s members (each must exist).
    pub fn group_set_members(
        &mut self,
        pi: usize,
        g: u32,
        members: Vec<u32>,
    ) -> Result<(), ControlError> {
        let pr = &mut self.eng.prog.profiles[pi];
        if let Some(m) = members.iter().find(|&&m| {
            pr.members
                .get(m as usize)
                .map(|x| x.is_none())
                .unwrap_or(true)
        }) {
            return Err(ControlError::NoMember { handle: *m });
        }
        let grp = pr
            .groups
            .get_mut(g as usize)
            .and_then(|x| x.as_mut())
            .ok_or(ControlError::NoGroup { handle: g })?;
        *grp = members;
        Ok(())
    }

    pub fn group_delete(&mut self, pi: usize, g: u32) -> Result<(), ControlError> {
        *self.eng.prog.profiles[pi]
            .groups
            .get_mut(g as usize)
            .ok_or(ControlError::NoGroup { handle: g })? = None;
        Ok(())
    }

    // ---------------------------------------------------------------- parser value sets

    pub fn value_set(&self, vi: usize) -> &[(u128, u128)] {
        &self.eng.prog.vsets[vi].values
    }

    /// Replaces the (value, mask) pairs of parser value set `vi` (refused above its size).
    pub fn set_value_set(
        &mut self,
        vi: usize,
        values: Vec<(u128, u128)>,
    ) -> Result<(), ControlError> {
        let vs = &mut self.eng.prog.vsets[vi];
        if vs.max_size > 0 && values.len() > vs.max_size {
            return Err(ControlError::ValueSetFull {
                name: vs.name.clone(),
                max: vs.max_size,
            });
        }
        vs.values = values;
        Ok(())
    }

    fn reset_entry_state(&mut self, ti: usize, h: u32) {
        if let Some(c) = self.eng.direct_counters[ti].get_mut(h as usize) {
            *c = (0, 0);
        }
        if let Some(c) = self.eng.direct_meter_cells[ti].get_mut(h as usize) {
            *c = Default::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::Engine;
    use crate::switch::Switch;

    /// An entry added where a deleted one was starts with a zero direct counter.
    #[test]
    fn a_reused_handle_starts_fresh() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/programs/acl_ternary.json");
        let mut sw = Switch::new(Engine::new(
            crate::json::load_file(p.to_str().unwrap()).unwrap(),
        ));
        let ti = (0..sw.eng.prog.tables.len())
            .find(|&t| !sw.eng.prog.tables[t].keys.is_empty())
            .unwrap();
        let nk = sw.eng.prog.tables[ti].keys.len();
        let act = sw.eng.prog.tables[ti].action_ids[0];
        let nparams = sw.eng.prog.actions[act as usize].params.len();
        let h = sw
            .entry_add(
                ti,
                vec![1; nk],
                vec![u128::MAX; nk],
                0,
                Some(1),
                act,
                vec![0; nparams],
            )
            .unwrap();
        sw.eng.direct_counters[ti].resize(h as usize + 1, (0, 0));
        sw.eng.direct_counters[ti][h as usize] = (5, 500);
        sw.entry_delete(ti, h).unwrap();
        let h2 = sw
            .entry_add(
                ti,
                vec![2; nk],
                vec![u128::MAX; nk],
                0,
                Some(1),
                act,
                vec![0; nparams],
            )
            .unwrap();
        assert_eq!(h, h2);
        assert_eq!(sw.eng.direct_counters[ti][h2 as usize], (0, 0));
    }

    /// The control API's errors are typed: a second entry with the same key is a
    /// `DuplicateEntry` (P4Runtime's ALREADY_EXISTS), a missing handle `NoEntry`; ctl
    /// prints their messages.
    #[test]
    fn errors_are_typed() {
        use crate::control::ControlError;
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/l2_basic.json");
        let mut sw = Switch::new(Engine::new(
            crate::json::load_file(p.to_str().unwrap()).unwrap(),
        ));
        let ti = (0..sw.eng.prog.tables.len())
            .find(|&t| sw.eng.prog.tables[t].keys.len() == 1)
            .unwrap();
        let act = sw.eng.prog.tables[ti].action_ids[0];
        let nparams = sw.eng.prog.actions[act as usize].params.len();
        let add =
            |sw: &mut Switch| sw.entry_add(ti, vec![7], vec![], 0, None, act, vec![0; nparams]);
        let h = add(&mut sw).unwrap();
        let e = add(&mut sw).unwrap_err();
        assert!(matches!(e, ControlError::DuplicateEntry { .. }), "{:?}", e);
        assert!(e.to_string().ends_with("duplicate entry"), "{}", e);
        sw.entry_delete(ti, h).unwrap();
        assert!(matches!(
            sw.entry_delete(ti, h),
            Err(ControlError::NoEntry { handle, .. }) if handle == h
        ));
    }

    /// Clone sessions change only through the control API, with the typed errors ctl and
    /// P4Runtime both use (P4Runtime's messages for them, unchanged).
    #[test]
    fn mirror_sessions_change_through_the_control_api() {
        use crate::control::ControlError;
        use crate::pre::Mirror;
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/l2_basic.json");
        let mut sw = Switch::new(Engine::new(
            crate::json::load_file(p.to_str().unwrap()).unwrap(),
        ));
        let m = Mirror {
            port: Some(3),
            ..Default::default()
        };
        sw.mirror_add(4, m).unwrap();
        let dup = sw.mirror_add(4, m).unwrap_err();
        assert_eq!(dup, ControlError::MirrorExists { session: 4 });
        assert_eq!(dup.to_string(), "clone session 4 exists");
        crate::ctl::execute(&mut sw, "mirroring_add 4 8 128").unwrap();
        let got = sw.mirror(4).unwrap();
        assert_eq!((got.port, got.truncate), (Some(8), Some(128)));
        assert_eq!(sw.mirror_remove(4).unwrap().port, Some(8));
        let gone = sw.mirror_remove(4).unwrap_err();
        assert_eq!(gone, ControlError::NoMirror { session: 4 });
        assert_eq!(gone.to_string(), "no clone session 4");
        // ctl answers nothing for a session that is not there, as it always did
        assert_eq!(
            crate::ctl::execute(&mut sw, "mirroring_delete 4").unwrap(),
            ""
        );
        sw.mirror_set(6, m);
        assert_eq!(sw.pre().mirror_sessions(), vec![6]);
    }

    /// Multicast groups and nodes change only through the control API, with the typed
    /// errors ctl and P4Runtime both use; ctl's answers are what they were.
    #[test]
    fn multicast_groups_and_nodes_change_through_the_control_api() {
        use crate::control::ControlError;
        let p =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/l2_basic.json");
        let mut sw = Switch::new(Engine::new(
            crate::json::load_file(p.to_str().unwrap()).unwrap(),
        ));
        sw.mcast_group_add(3).unwrap();
        assert_eq!(
            sw.mcast_group_add(3),
            Err(ControlError::GroupExists { group: 3 })
        );
        let h = sw.mcast_node_add(9, vec![1, 2]);
        assert_eq!(
            sw.mcast_node_associate(4, h),
            Err(ControlError::NoMulticastGroup { group: 4 })
        );
        assert_eq!(
            sw.mcast_node_associate(3, h + 1),
            Err(ControlError::NoMulticastNode { handle: h + 1 })
        );
        sw.mcast_node_associate(3, h).unwrap();
        sw.mcast_node_set(h, vec![5]).unwrap();
        let mut reps = vec![]; // (rid, port)
        sw.pre().replicas(3, &mut reps);
        assert_eq!(reps, vec![(9, 5)]);
        // ctl works on the same groups and nodes, with the same errors in its words
        let made = crate::ctl::execute(&mut sw, "mc_node_create 1 7").unwrap();
        assert_eq!(made, format!("node was created with handle {}", h + 1));
        crate::ctl::execute(&mut sw, &format!("mc_node_associate 3 {}", h + 1)).unwrap();
        assert_eq!(sw.pre().groups[&3], vec![h, h + 1]);
        assert_eq!(
            crate::ctl::execute(&mut sw, "mc_mgrp_create 3").unwrap_err(),
            "multicast group 3 already exists"
        );
        sw.mcast_node_dissociate(3, h).unwrap();
        sw.mcast_node_remove(h + 1).unwrap();
        assert!(sw.pre().groups[&3].is_empty());
        assert_eq!(
            sw.mcast_node_remove(h + 1),
            Err(ControlError::NoMulticastNode { handle: h + 1 })
        );
        assert_eq!(
            crate::ctl::execute(&mut sw, &format!("mc_node_update {} 1", h + 1)).unwrap_err(),
            format!("no multicast node {}", h + 1)
        );
        sw.mcast_group_remove(3).unwrap();
        assert_eq!(
            sw.mcast_group_remove(3),
            Err(ControlError::NoMulticastGroup { group: 3 })
        );
        assert_eq!(
            crate::ctl::execute(&mut sw, "mc_mgrp_destroy 3").unwrap_err(),
            "no multicast group 3"
        );
    }

    /// A program's version is its JSON's fingerprint until a controller sets one: the same
    /// program loads with the same version, another program with another; ctl reads it.
    #[test]
    fn the_config_version_is_the_programs_fingerprint_until_set() {
        let load = |name: &str| {
            let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/programs")
                .join(name);
            Switch::new(Engine::new(
                crate::json::load_file(p.to_str().unwrap()).unwrap(),
            ))
        };
        let mut a = load("acl_ternary.json");
        assert_eq!(
            a.config_version(),
            load("acl_ternary.json").config_version()
        );
        assert_ne!(a.config_version(), load("l2_basic.json").config_version());
        assert_eq!(
            crate::ctl::execute(&mut a, "config_version").unwrap(),
            a.config_version().to_string()
        );
        a.set_config_version(42);
        assert_eq!(crate::ctl::execute(&mut a, "config_version").unwrap(), "42");
    }
}
