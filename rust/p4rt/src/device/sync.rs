//! Following what another front end (ctl text commands) did to the switch. Table entries
//! need nothing: P4Runtime reads them from the switch. What follows are the fields
//! P4Runtime keeps beside them (extras of entries ctl deleted or re-pointed go, with their
//! one-shot sets' hidden members and groups) and the P4Runtime ids of the action profile
//! members and groups ctl made or deleted.

use super::*;

impl Device {
    /// Brings P4Runtime's own fields up to date after another front end (ctl text
    /// commands) changed the switch.
    pub fn sync_from_switch(&mut self) {
        self.drop_stale_extras();
        self.sync_profiles_from_switch();
    }

    /// Extras of entries that are gone (or are another entry now) go; a one-shot set
    /// whose entry is gone or no longer runs it is freed.
    fn drop_stale_extras(&mut self) {
        let (Some(sw), Some(pipe)) = (self.sw.as_mut(), self.pipe.as_ref()) else {
            return;
        };
        self.entry_extras.retain(|(tid, h), x| {
            let live = pipe
                .tables
                .get(tid)
                .and_then(|t| sw.entry(t.sw, *h))
                .filter(|e| e.serial == x.serial)
                .map(|e| e.action);
            if let Some(o) = &x.oneshot {
                if live != Some(INDIRECT_GROUP | o.group) {
                    Self::free_one_shot(sw, x.oneshot.take().unwrap());
                }
            }
            live.is_some()
        });
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
        for o in self
            .entry_extras
            .values()
            .filter_map(|x| x.oneshot.as_ref())
        {
            oneshot_members.extend(o.members.iter().map(|&m| (o.profile, m)));
            oneshot_groups.insert((o.profile, o.group));
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
}
