//! Table entries, default actions and their direct counters and meters.

use super::*;
use crate::meter_units::meter_rates;

impl Device {
    pub(super) fn write_table(&mut self, ty: p4::update::Type, te: &p4::TableEntry) -> R<()> {
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
                    // back to the program's own default action
                    let def = &self.sw.as_ref().unwrap().program().tables[t.sw];
                    (def.default_action, def.default_data.to_vec())
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
        let (key, aux, prefix) = Self::translate_match(t, &te.r#match)?;
        let sw_prio = Self::sw_priority(t, te.priority);
        match ty {
            T::Insert => {
                let action = te
                    .action
                    .as_ref()
                    .ok_or_else(|| ia(format!("table {}: INSERT without action", t.name)))?;
                let (ai, data) =
                    Self::translate_action(&pipe, &self.members, &self.groups, t, action)?;
                let sw = self.sw.as_mut().unwrap();
                let is_set = matches!(
                    action.r#type,
                    Some(p4::table_action::Type::ActionProfileActionSet(_))
                );
                // a full table, or a one-shot set about to get hidden members: a duplicate
                // is still ALREADY_EXISTS, and makes nothing
                if (is_set || (t.size > 0 && sw.table(t.sw).num_entries as i64 >= t.size))
                    && sw
                        .entry_find(t.sw, key.clone(), aux.clone(), prefix, sw_prio)
                        .is_ok()
                {
                    return Err(ControlError::DuplicateEntry {
                        table: t.name.clone(),
                    }
                    .into());
                }
                if t.size > 0 && sw.table(t.sw).num_entries as i64 >= t.size {
                    return err(
                        Code::ResourceExhausted,
                        format!("table {} is full ({} entries)", t.name, t.size),
                    );
                }
                let oneshot = Self::one_shot(sw, &pipe, t, action)?;
                let ai = oneshot.as_ref().map(|o| o.0).unwrap_or(ai);
                let h = match sw.entry_add(t.sw, key, aux, prefix, sw_prio, ai, data) {
                    Ok(h) => h,
                    Err(e) => {
                        if let Some((_, o)) = oneshot {
                            Self::free_one_shot(sw, o);
                        }
                        return Err(e.into());
                    }
                };
                if let Some(c) = &te.counter_data {
                    set_direct_counter(sw, t.sw, h, c);
                }
                if let Some(m) = &te.meter_config {
                    set_direct_meter(sw, t.sw, h, m);
                }
                let mut x = self.extras_for_update(self.sw.as_ref().unwrap(), t, h);
                x.oneshot = oneshot.map(|o| o.1);
                x.idle_timeout_ns = te.idle_timeout_ns;
                x.metadata = te.metadata.clone();
                self.store_extras(t, h, x);
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
                let sw = self.sw.as_mut().unwrap();
                let h = sw.entry_find(t.sw, key, aux, prefix, sw_prio)?;
                let mut x = self.extras_for_update(self.sw.as_ref().unwrap(), t, h);
                let sw = self.sw.as_mut().unwrap();
                if let Some((ai, data)) = action {
                    let oneshot = Self::one_shot(sw, &pipe, t, te.action.as_ref().unwrap())?;
                    let ai = oneshot.as_ref().map(|o| o.0).unwrap_or(ai);
                    if let Err(e) = sw.entry_modify(t.sw, h, ai, data) {
                        if let Some((_, o)) = oneshot {
                            Self::free_one_shot(sw, o);
                        }
                        return Err(e.into());
                    }
                    if let Some(old) = std::mem::replace(&mut x.oneshot, oneshot.map(|o| o.1)) {
                        Self::free_one_shot(sw, old);
                    }
                }
                if let Some(c) = &te.counter_data {
                    set_direct_counter(sw, t.sw, h, c);
                }
                if let Some(m) = &te.meter_config {
                    set_direct_meter(sw, t.sw, h, m);
                }
                x.idle_timeout_ns = te.idle_timeout_ns;
                x.metadata = te.metadata.clone();
                x.idle_notified = false;
                x.last_hit_ns = now_ns();
                self.store_extras(t, h, x);
                Ok(())
            }
            T::Delete => {
                let sw = self.sw.as_mut().unwrap();
                let h = sw.entry_find(t.sw, key, aux, prefix, sw_prio)?;
                let serial = sw.entry(t.sw, h).map(|e| e.serial);
                sw.entry_delete(t.sw, h)?;
                let x = self.entry_extras.remove(&(t.id, h));
                if let Some(o) = x
                    .filter(|x| Some(x.serial) == serial)
                    .and_then(|x| x.oneshot)
                {
                    Self::free_one_shot(self.sw.as_mut().unwrap(), o);
                }
                Ok(())
            }
            _ => unreachable!(),
        }
    }

    /// The table an entry of P4Runtime's names, and the switch's handle of that entry.
    pub(super) fn find_entry(&self, te: &p4::TableEntry) -> R<(TableInfo, u32)> {
        let pipe = self.pipe.clone().ok_or_else(|| PErr {
            code: Code::FailedPrecondition,
            msg: "no forwarding pipeline config set".into(),
        })?;
        let t = pipe.tables.get(&te.table_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!("unknown table id {}", te.table_id),
        })?;
        let (key, aux, prefix) = Self::translate_match(t, &te.r#match)?;
        let sw = self.sw.as_ref().unwrap();
        let h = sw.entry_find(t.sw, key, aux, prefix, Self::sw_priority(t, te.priority))?;
        Ok((t.clone(), h))
    }

    pub(super) fn write_direct_counter(
        &mut self,
        ty: p4::update::Type,
        c: &p4::DirectCounterEntry,
    ) -> R<()> {
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

    pub(super) fn write_direct_meter(
        &mut self,
        ty: p4::update::Type,
        m: &p4::DirectMeterEntry,
    ) -> R<()> {
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
        let sw = self.sw.as_mut().unwrap();
        match &m.config {
            Some(cfg) => sw.set_direct_meter(t.sw, h, Some(meter_rates(cfg))),
            None => {
                if sw.direct_meter(t.sw, h).is_some() {
                    sw.set_direct_meter(t.sw, h, None);
                }
            }
        }
        Ok(())
    }

    /// How many entries table `table_id` holds (the switch's count).
    pub fn num_entries(&self, table_id: u32) -> usize {
        match (&self.sw, &self.pipe) {
            (Some(sw), Some(pipe)) => pipe
                .tables
                .get(&table_id)
                .map_or(0, |t| sw.table(t.sw).num_entries),
            _ => 0,
        }
    }

    pub(super) fn read_table_entries(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::TableEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
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
            let one = |h: u32, e: &sdnperf_switch::tables::Entry| {
                let mut v = self.entry_view(pipe, sw, t, h, e)?;
                if q.counter_data.is_some() && t.direct_counter.is_some() {
                    let (p, b) = sw.direct_counter(t.sw, h);
                    v.counter_data = Some(p4::CounterData {
                        packet_count: p as i64,
                        byte_count: b as i64,
                    });
                }
                if q.time_since_last_hit.is_some() && t.idle_timeout {
                    let last = self.extras(t, h, e).map_or(now_ns(), |x| x.last_hit_ns);
                    v.time_since_last_hit = Some(p4::table_entry::IdleTimeout {
                        elapsed_ns: now_ns().saturating_sub(last) as i64,
                    });
                }
                Some(wrap(E::TableEntry(v)))
            };
            if q.table_id != 0 && (!q.r#match.is_empty() || q.priority != 0) {
                let (key, aux, prefix) = Self::translate_match(t, &q.r#match)?;
                let sw_prio = Self::sw_priority(t, q.priority);
                if let Ok(h) = sw.entry_find(t.sw, key, aux, prefix, sw_prio) {
                    out.extend(sw.entry(t.sw, h).and_then(|e| one(h, e)));
                }
            } else {
                let st = sw.table(t.sw);
                out.reserve(st.num_entries);
                for (h, e) in st.entries.iter().enumerate() {
                    if let Some(e) = e {
                        out.extend(one(h as u32, e));
                    }
                }
            }
        }
        Ok(())
    }

    pub(super) fn read_direct_counters(
        &self,
        pipe: &Pipe,
        _sw: &Switch,
        q: &p4::DirectCounterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
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
        Ok(())
    }

    pub(super) fn read_direct_meters(
        &self,
        pipe: &Pipe,
        _sw: &Switch,
        q: &p4::DirectMeterEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
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
        Ok(())
    }
}

pub(super) fn set_direct_counter(sw: &mut Switch, ti: usize, h: u32, c: &p4::CounterData) {
    sw.set_direct_counter(
        ti,
        h,
        c.packet_count.max(0) as u64,
        c.byte_count.max(0) as u64,
    );
}

pub(super) fn set_direct_meter(sw: &mut Switch, ti: usize, h: u32, m: &p4::MeterConfig) {
    sw.set_direct_meter(ti, h, Some(meter_rates(m)));
}
