//! P4Runtime's view of a switch table entry, derived from the switch's entry (the one
//! copy) and the few fields P4Runtime keeps beside it (`EntryExtras`).

use super::*;
use crate::meter_units::meter_config;
use sdnperf_switch::tables::Entry;

impl Device {
    /// The extras kept for entry `h` of table `t`, if `e` (the entry at `h` now) is the
    /// entry they were kept for.
    pub(super) fn extras(&self, t: &TableInfo, h: u32, e: &Entry) -> Option<&EntryExtras> {
        self.entry_extras
            .get(&(t.id, h))
            .filter(|x| x.serial == e.serial)
    }

    /// The extras of entry `h` to update: a copy of the current ones, else fresh ones.
    pub(super) fn extras_for_update(&self, sw: &Switch, t: &TableInfo, h: u32) -> EntryExtras {
        let Some(e) = sw.entry(t.sw, h) else {
            return EntryExtras::fresh(0, 0);
        };
        self.extras(t, h, e)
            .cloned()
            .unwrap_or_else(|| EntryExtras::fresh(e.serial, sw.direct_counter(t.sw, h).0))
    }

    /// Keeps `x` for entry `h` of table `t`, or nothing when a fresh entry's would do.
    pub(super) fn store_extras(&mut self, t: &TableInfo, h: u32, x: EntryExtras) {
        if x.needed(t) {
            self.entry_extras.insert((t.id, h), x);
        } else {
            self.entry_extras.remove(&(t.id, h));
        }
    }

    /// Entry `h` (`e`) of table `t` as P4Runtime shows it (no counter data or idle time:
    /// a Read adds those when asked). None if its action has no P4Runtime name.
    pub(super) fn entry_view(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        t: &TableInfo,
        h: u32,
        e: &Entry,
    ) -> Option<p4::TableEntry> {
        let x = self.extras(t, h, e);
        let action = self.action_view(pipe, sw, t, e, x.and_then(|x| x.oneshot.as_ref()))?;
        let mut te = Self::match_view(t, e);
        te.action = Some(action);
        te.is_const = e.from_program;
        if t.direct_meter.is_some() {
            te.meter_config = sw.direct_meter_rates(t.sw, h).map(|r| meter_config(&r));
        }
        if let Some(x) = x {
            te.idle_timeout_ns = x.idle_timeout_ns;
            te.metadata = x.metadata.clone();
        }
        Some(te)
    }

    /// The table id, match and priority of entry `e` of table `t`, in P4Runtime's
    /// canonical form (wildcards omitted, fields in P4Info order).
    fn match_view(t: &TableInfo, e: &Entry) -> p4::TableEntry {
        use p4::field_match::FieldMatchType as M;
        let mut m = Vec::with_capacity(t.fields.len());
        for (i, f) in t.fields.iter().enumerate() {
            let wm = width_mask(f.bitwidth);
            let Some(&v) = e.key.get(i) else { break };
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
        p4::TableEntry {
            table_id: t.id,
            r#match: m,
            priority,
            ..Default::default()
        }
    }

    /// Entry `e`'s action as P4Runtime names it: a direct action, a member or group by
    /// its P4Runtime id, or the one-shot action set `oneshot` whose hidden group it runs.
    fn action_view(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        t: &TableInfo,
        e: &Entry,
        oneshot: Option<&OneShot>,
    ) -> Option<p4::TableAction> {
        use p4::table_action::Type as A;
        let indirect = |flag: u32| (e.action & flag != 0).then_some(e.action & !flag);
        let ty = if let Some(g) = indirect(INDIRECT_GROUP) {
            let prof = t.profile?;
            match oneshot {
                Some(o) if o.group == g => {
                    A::ActionProfileActionSet(Self::action_set_view(pipe, sw, o)?)
                }
                _ => A::ActionProfileGroupId(*self.groups.get(&prof)?.by_handle.get(&g)?),
            }
        } else if let Some(m) = indirect(INDIRECT_MEMBER) {
            A::ActionProfileMemberId(*self.members.get(&t.profile?)?.by_handle.get(&m)?)
        } else {
            A::Action(Self::action_from_switch(pipe, e.action, &e.data)?)
        };
        Some(p4::TableAction { r#type: Some(ty) })
    }

    /// A one-shot action set read back from its hidden group: one action per member, its
    /// weight the number of times the group lists it.
    fn action_set_view(
        pipe: &Pipe,
        sw: &Switch,
        o: &OneShot,
    ) -> Option<p4::ActionProfileActionSet> {
        let prof = sw.profile(o.profile);
        let listed = prof.groups.get(o.group as usize)?.as_ref()?;
        let mut actions: Vec<p4::ActionProfileAction> = vec![];
        let mut last = None;
        for &m in listed.iter() {
            if last == Some(m) {
                actions.last_mut()?.weight += 1;
                continue;
            }
            last = Some(m);
            let (action, data) = prof.members.get(m as usize)?.as_ref()?;
            actions.push(p4::ActionProfileAction {
                action: Some(Self::action_from_switch(pipe, *action, data)?),
                weight: 1,
                watch_kind: None,
            });
        }
        Some(p4::ActionProfileActionSet {
            action_profile_actions: actions,
            action_selection_mode: o.selection_mode,
            size_semantics: o.size_semantics,
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
