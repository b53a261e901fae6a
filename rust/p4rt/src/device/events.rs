//! Digests (their configuration and the lists sent to the controller) and idle-timeout
//! notifications.

use super::*;

impl Device {
    pub(super) fn write_digest(&mut self, ty: p4::update::Type, d: &p4::DigestEntry) -> R<()> {
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
        self.entry_extras.iter().any(|((tid, _), x)| {
            x.idle_timeout_ns > 0 && pipe.tables.get(tid).is_some_and(|t| t.idle_timeout)
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
        let sw = self.sw.as_ref().unwrap();
        let mut expired = vec![];
        for (&(tid, h), x) in self.entry_extras.iter_mut() {
            if x.idle_timeout_ns <= 0 {
                continue;
            }
            let Some(t) = pipe.tables.get(&tid).filter(|t| t.idle_timeout) else {
                continue;
            };
            if sw.entry(t.sw, h).map(|e| e.serial) != Some(x.serial) {
                continue; // gone (ctl deleted it): the next sync drops these extras
            }
            let c = sw.direct_counter(t.sw, h).0;
            if c != x.last_count {
                x.last_count = c;
                x.last_hit_ns = now;
                x.idle_notified = false;
            } else if !x.idle_notified
                && now.saturating_sub(x.last_hit_ns) >= x.idle_timeout_ns as u64
            {
                x.idle_notified = true;
                expired.push((t, h));
            }
        }
        let expired: Vec<p4::TableEntry> = expired
            .into_iter()
            .filter_map(|(t, h)| self.entry_view(&pipe, sw, t, h, sw.entry(t.sw, h)?))
            .collect();
        if !expired.is_empty() {
            out.push(Event::IdleTimeoutNotification(
                p4::IdleTimeoutNotification {
                    table_entry: expired,
                    timestamp: now as i64,
                },
            ));
        }
    }

    pub(super) fn read_digests(
        &self,
        _pipe: &Pipe,
        _sw: &Switch,
        q: &p4::DigestEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
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
        Ok(())
    }
}
