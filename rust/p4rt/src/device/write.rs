//! Write: one update or a batch (with rollback), dispatched by entity to its concept.

use super::*;

impl Device {
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
    pub(super) fn snapshot(&self, u: &p4::Update) -> Option<Vec<p4::Entity>> {
        let ent = u.entity.as_ref()?;
        if let Some(E::TableEntry(te)) = &ent.entity {
            if !te.is_default_action {
                // exact lookup (an empty match is an entry of its own, not a wildcard)
                let pipe = self.pipe.as_ref()?;
                let t = pipe.tables.get(&te.table_id)?;
                let (key, aux, prefix) = Self::translate_match(t, &te.r#match).ok()?;
                let sw = self.sw.as_ref()?;
                let h = sw
                    .entry_find(t.sw, key, aux, prefix, Self::sw_priority(t, te.priority))
                    .ok()?;
                let mut e = self.entry_view(pipe, sw, t, h, sw.entry(t.sw, h)?)?;
                let (p, b) = sw.direct_counter(t.sw, h);
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
}
