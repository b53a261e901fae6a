//! Following what another front end (ctl text commands) did to the switch: its table
//! entries, members and groups become visible to P4Runtime.

use super::*;

impl Device {
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
    pub(super) fn sync_profiles_from_switch(&mut self) {
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
    pub(super) fn adopt_switch_entry(
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
    pub(super) fn entry_from_switch(
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
    pub(super) fn action_from_switch(
        pipe: &Pipe,
        action: u32,
        data: &[u128],
    ) -> Option<p4::Action> {
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
}
