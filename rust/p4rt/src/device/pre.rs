//! The packet replication engine: multicast groups and clone sessions.

use super::*;

impl Device {
    pub(super) fn replica_ports(reps: &[p4::Replica]) -> R<Vec<(u32, u32)>> {
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

    /// Creates multicast group `g` with a node per replica (a P4Runtime group owns them).
    pub(super) fn make_group(sw: &mut Switch, g: u32, reps: &[(u32, u32)]) -> R<()> {
        sw.mcast_group_add(g)?;
        for &(port, rid) in reps {
            let h = sw.mcast_node_add(rid, vec![port]);
            sw.mcast_node_associate(g, h)?;
        }
        Ok(())
    }

    /// Removes multicast group `g`, if there is one, and its nodes (those no other group
    /// also holds).
    pub(super) fn destroy_group(sw: &mut Switch, g: u32) -> R<()> {
        let Some(nodes) = sw.pre().groups.get(&g).cloned() else {
            return Ok(());
        };
        sw.mcast_group_remove(g)?;
        for h in nodes {
            if !sw.pre().groups.values().any(|o| o.contains(&h)) {
                sw.mcast_node_remove(h)?;
            }
        }
        Ok(())
    }

    pub(super) fn write_pre(
        &mut self,
        ty: p4::update::Type,
        p: &p4::PacketReplicationEngineEntry,
    ) -> R<()> {
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
                        return Err(ControlError::GroupExists { group: g }.into())
                    }
                    T::Modify | T::Delete if !exists => {
                        return Err(ControlError::NoMulticastGroup { group: g }.into())
                    }
                    _ => {}
                }
                Self::destroy_group(sw, g)?;
                self.mcast_metadata.remove(&g);
                if ty != T::Delete {
                    Self::make_group(sw, g, &reps)?;
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
                let exists = sw.mirror(s).is_some();
                match ty {
                    T::Insert if exists => {
                        return Err(ControlError::MirrorExists { session: s }.into())
                    }
                    T::Modify | T::Delete if !exists => {
                        return Err(ControlError::NoMirror { session: s }.into())
                    }
                    _ => {}
                }
                // the replica group P4Runtime made for the session (a group ctl named
                // with mirroring_add_mc is ctl's and stays)
                Self::destroy_group(sw, CLONE_GROUP_BASE + s)?;
                if ty == T::Delete {
                    sw.mirror_remove(s)?;
                }
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
                        Self::make_group(sw, g, &reps)?;
                        mirror.mgrp = Some(g);
                    }
                    // an Insert of a new session or a Modify of an existing one (checked above)
                    sw.mirror_set(s, mirror);
                    self.clone_cos.insert(s, c.class_of_service);
                }
                Ok(())
            }
        }
    }

    pub(super) fn read_pre(
        &self,
        _pipe: &Pipe,
        sw: &Switch,
        q: &p4::PacketReplicationEngineEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
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
                    out.push(wrap(E::PacketReplicationEngineEntry(
                        p4::PacketReplicationEngineEntry {
                            r#type: Some(P::MulticastGroupEntry(entry)),
                        },
                    )));
                }
            }
            Some(P::CloneSessionEntry(c)) => {
                let pre = sw.pre();
                let ids = pre
                    .mirror_sessions()
                    .into_iter()
                    .filter(|&s| c.session_id == 0 || c.session_id == s);
                for s in ids {
                    let Some(m) = pre.mirror(s) else { continue };
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
                    out.push(wrap(E::PacketReplicationEngineEntry(
                        p4::PacketReplicationEngineEntry {
                            r#type: Some(P::CloneSessionEntry(entry)),
                        },
                    )));
                }
            }
            None => {
                return inval(
                    "packet replication engine read needs a multicast group or clone session entry",
                )
            }
        }
        Ok(())
    }
}

pub(super) fn replica(instance: u32, port: u32) -> p4::Replica {
    p4::Replica {
        instance,
        port_kind: Some(p4::replica::PortKind::Port(u128_to_bytes(port as u128))),
        ..Default::default()
    }
}

/// Multicast group `g`'s replicas as the switch's PRE holds them (node order).
pub(super) fn replicas_of(pre: &sdnperf_switch::pre::Pre, g: u32) -> Vec<p4::Replica> {
    let mut reps = vec![];
    pre.replicas(g, &mut reps);
    reps.into_iter()
        .map(|(rid, port)| replica(rid, port))
        .collect()
}
