//! Read: dispatches a query by entity to its concept; `read_all` for reconcile.

use super::*;

impl Device {
    pub fn read(&self, ent: &p4::Entity, out: &mut Vec<p4::Entity>) -> R<()> {
        let Some(pipe) = self.pipe.clone() else {
            return err(
                Code::FailedPrecondition,
                "no forwarding pipeline config set",
            );
        };
        let sw = self.sw.as_ref().unwrap();
        let Some(e) = &ent.entity else {
            return inval("empty entity");
        };
        match e {
            E::TableEntry(q) => self.read_table_entries(&pipe, sw, q, out),
            E::ActionProfileMember(q) => self.read_members(&pipe, sw, q, out),
            E::ActionProfileGroup(q) => self.read_groups(&pipe, sw, q, out),
            E::CounterEntry(q) => self.read_counters(&pipe, sw, q, out),
            E::DirectCounterEntry(q) => self.read_direct_counters(&pipe, sw, q, out),
            E::MeterEntry(q) => self.read_meters(&pipe, sw, q, out),
            E::DirectMeterEntry(q) => self.read_direct_meters(&pipe, sw, q, out),
            E::RegisterEntry(q) => self.read_registers(&pipe, sw, q, out),
            E::PacketReplicationEngineEntry(q) => self.read_pre(&pipe, sw, q, out),
            E::DigestEntry(q) => self.read_digests(&pipe, sw, q, out),
            E::ValueSetEntry(q) => self.read_value_sets(&pipe, sw, q, out),
            E::ExternEntry(_) => err(Code::Unimplemented, "extern entries are not supported"),
        }
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
        if let (Some(pipe), Some(sw)) = (self.pipe.as_deref(), self.sw.as_ref()) {
            for t in pipe.tables.values() {
                for (h, e) in sw.table(t.sw).entries.iter().enumerate() {
                    let view = e
                        .as_ref()
                        .and_then(|e| self.entry_view(pipe, sw, t, h as u32, e));
                    out.extend(view.map(|v| wrap(E::TableEntry(v))));
                }
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
}
