//! Packet replication engine: multicast groups (group -> nodes -> (rid, ports)) and
//! mirror (clone) sessions, with the simple_switch CLI's handle semantics.

use crate::control_error::ControlError;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct McNode {
    pub rid: u32,
    pub ports: Vec<u32>,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct Mirror {
    pub port: Option<u32>,
    pub mgrp: Option<u32>,
    pub truncate: Option<usize>,
}

/// Read through `Switch::pre()`; changed only through the switch's control API
/// (`Switch::mcast_*`, `Switch::mirror_*`), so every front end sees the same.
#[derive(Default)]
pub struct Pre {
    pub groups: HashMap<u32, Vec<u32>>,
    pub nodes: Vec<Option<McNode>>,
    /// clone sessions; changed only through the switch's control API
    /// (`Switch::mirror_add` / `mirror_set` / `mirror_remove`), so every front end sees the same
    pub(crate) mirrors: HashMap<u32, Mirror>,
}

impl Pre {
    pub(crate) fn mgrp_create(&mut self, g: u32) -> Result<(), ControlError> {
        if self.groups.contains_key(&g) {
            return Err(ControlError::GroupExists { group: g });
        }
        self.groups.insert(g, vec![]);
        Ok(())
    }
    pub(crate) fn mgrp_destroy(&mut self, g: u32) -> Result<(), ControlError> {
        self.groups
            .remove(&g)
            .map(|_| ())
            .ok_or(ControlError::NoMulticastGroup { group: g })
    }
    /// Returns the node handle.
    pub(crate) fn node_create(&mut self, rid: u32, ports: Vec<u32>) -> u32 {
        self.nodes.push(Some(McNode { rid, ports }));
        (self.nodes.len() - 1) as u32
    }
    pub(crate) fn node_update(&mut self, h: u32, ports: Vec<u32>) -> Result<(), ControlError> {
        match self.nodes.get_mut(h as usize).and_then(|n| n.as_mut()) {
            Some(n) => {
                n.ports = ports;
                Ok(())
            }
            None => Err(ControlError::NoMulticastNode { handle: h }),
        }
    }
    pub(crate) fn node_destroy(&mut self, h: u32) -> Result<(), ControlError> {
        match self.nodes.get_mut(h as usize) {
            Some(n @ Some(_)) => {
                *n = None;
                for g in self.groups.values_mut() {
                    g.retain(|&x| x != h);
                }
                Ok(())
            }
            _ => Err(ControlError::NoMulticastNode { handle: h }),
        }
    }
    pub(crate) fn node_associate(&mut self, g: u32, h: u32) -> Result<(), ControlError> {
        if self
            .nodes
            .get(h as usize)
            .map(|n| n.is_none())
            .unwrap_or(true)
        {
            return Err(ControlError::NoMulticastNode { handle: h });
        }
        let grp = self
            .groups
            .get_mut(&g)
            .ok_or(ControlError::NoMulticastGroup { group: g })?;
        if !grp.contains(&h) {
            grp.push(h);
        }
        Ok(())
    }
    pub(crate) fn node_dissociate(&mut self, g: u32, h: u32) -> Result<(), ControlError> {
        let grp = self
            .groups
            .get_mut(&g)
            .ok_or(ControlError::NoMulticastGroup { group: g })?;
        grp.retain(|&x| x != h);
        Ok(())
    }
    /// Clone session `s`, if there is one.
    pub fn mirror(&self, s: u32) -> Option<Mirror> {
        self.mirrors.get(&s).copied()
    }
    /// The clone sessions' ids, in order.
    pub fn mirror_sessions(&self) -> Vec<u32> {
        let mut ids: Vec<u32> = self.mirrors.keys().copied().collect();
        ids.sort_unstable();
        ids
    }
    /// Appends the (rid, port) replicas of group `g` to `out`.
    pub fn replicas(&self, g: u32, out: &mut Vec<(u32, u32)>) {
        if let Some(grp) = self.groups.get(&g) {
            for &h in grp {
                if let Some(Some(n)) = self.nodes.get(h as usize) {
                    for &p in &n.ports {
                        out.push((n.rid, p));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_are_typed_and_say_what_ctl_always_said() {
        let mut pre = Pre::default();
        pre.mgrp_create(1).unwrap();
        let dup = pre.mgrp_create(1).unwrap_err();
        assert_eq!(dup, ControlError::GroupExists { group: 1 });
        assert_eq!(dup.to_string(), "multicast group 1 already exists");
        assert_eq!(
            pre.mgrp_destroy(2),
            Err(ControlError::NoMulticastGroup { group: 2 })
        );
        assert_eq!(
            pre.node_associate(1, 9),
            Err(ControlError::NoMulticastNode { handle: 9 })
        );
        let h = pre.node_create(0, vec![3]);
        assert_eq!(
            pre.node_associate(5, h),
            Err(ControlError::NoMulticastGroup { group: 5 })
        );
        pre.node_associate(1, h).unwrap();
        pre.node_destroy(h).unwrap();
        assert_eq!(
            pre.node_update(h, vec![4]).unwrap_err().to_string(),
            format!("no multicast node {}", h)
        );
    }
}
