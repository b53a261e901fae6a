//! Action profiles: members, groups and one-shot action sets.

use super::*;

impl Device {
    /// Validates a one-shot action set and creates its hidden members and group.
    pub(super) fn one_shot(
        sw: &mut Switch,
        pipe: &Pipe,
        t: &TableInfo,
        a: &p4::TableAction,
    ) -> R<Option<(u32, OneShot)>> {
        let Some(p4::table_action::Type::ActionProfileActionSet(set)) = &a.r#type else {
            return Ok(None);
        };
        let p = t
            .profile
            .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
        let prof = &pipe.profiles[&p];
        if set.action_profile_actions.is_empty() {
            return inval("empty action profile action set");
        }
        if !prof.with_selector && set.action_profile_actions.len() > 1 {
            return inval("action profile without selector: a one-shot set holds one action");
        }
        let mut acts = vec![];
        for apa in &set.action_profile_actions {
            let act = apa
                .action
                .as_ref()
                .ok_or_else(|| ia("action set member without action".into()))?;
            if !t.action_ids.contains(&act.action_id) {
                return inval(format!(
                    "table {}: action id {} is not an action of this table",
                    t.name, act.action_id
                ));
            }
            if apa.weight < 0 {
                return inval("negative weight");
            }
            acts.push((Self::action_data(pipe, Some(t), act)?, apa.weight.max(1)));
        }
        let mut members = vec![];
        let mut grp = vec![];
        for ((ai, data), w) in acts {
            let h = sw.member_add(prof.sw, ai, data);
            members.push(h);
            for _ in 0..w {
                grp.push(h);
            }
        }
        let group = sw.group_create(prof.sw, grp);
        Ok(Some((
            INDIRECT_GROUP | group,
            OneShot {
                profile: prof.sw,
                members,
                group,
                selection_mode: set.action_selection_mode,
                size_semantics: set.size_semantics,
            },
        )))
    }

    pub(super) fn free_one_shot(sw: &mut Switch, o: OneShot) {
        // handles the one-shot set made itself: there to delete
        let _ = sw.group_delete(o.profile, o.group);
        for m in o.members {
            let _ = sw.member_delete(o.profile, m);
        }
    }

    pub(super) fn write_member(
        &mut self,
        ty: p4::update::Type,
        m: &p4::ActionProfileMember,
    ) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        let prof = pipe
            .profiles
            .get(&m.action_profile_id)
            .ok_or_else(|| PErr {
                code: Code::NotFound,
                msg: format!("unknown action profile id {}", m.action_profile_id),
            })?;
        let sw = self.sw.as_mut().unwrap();
        let mems = self.members.entry(prof.id).or_default();
        let handle = mems.by_id.get(&m.member_id).copied();
        match (ty, handle) {
            (T::Insert, Some(_)) => err(
                Code::AlreadyExists,
                format!("member {} exists", m.member_id),
            ),
            (T::Insert | T::Modify, h) => {
                let act = m
                    .action
                    .as_ref()
                    .ok_or_else(|| ia("member without action".into()))?;
                // the copy of the action in a table this profile serves
                let served = pipe.tables.values().find(|t| t.profile == Some(prof.id));
                let (ai, data) = Self::action_data(&pipe, served, act)?;
                match h {
                    None => {
                        if prof.size > 0 && mems.by_id.len() as i64 >= prof.size {
                            return err(Code::ResourceExhausted, "action profile is full");
                        }
                        let h = sw.member_add(prof.sw, ai, data);
                        mems.insert(m.member_id, h);
                        Ok(())
                    }
                    Some(h) => Ok(sw.member_modify(prof.sw, h, ai, data)?),
                }
            }
            (_, None) => err(Code::NotFound, format!("no member {}", m.member_id)),
            (_, Some(h)) => {
                let in_group = sw
                    .profile(prof.sw)
                    .groups
                    .iter()
                    .flatten()
                    .any(|g| g.contains(&h));
                let used = pipe
                    .tables
                    .values()
                    .filter(|t| t.profile == Some(prof.id))
                    .any(|t| {
                        sw.table(t.sw)
                            .entries
                            .iter()
                            .flatten()
                            .any(|e| e.action == INDIRECT_MEMBER | h)
                    });
                if in_group || used {
                    return err(
                        Code::FailedPrecondition,
                        format!("member {} is still referenced", m.member_id),
                    );
                }
                sw.member_delete(prof.sw, h)?;
                mems.remove(m.member_id);
                Ok(())
            }
        }
    }

    pub(super) fn write_group(
        &mut self,
        ty: p4::update::Type,
        g: &p4::ActionProfileGroup,
    ) -> R<()> {
        use p4::update::Type as T;
        let (_, pipe) = self.parts()?;
        let prof = pipe
            .profiles
            .get(&g.action_profile_id)
            .ok_or_else(|| PErr {
                code: Code::NotFound,
                msg: format!("unknown action profile id {}", g.action_profile_id),
            })?;
        if !prof.with_selector {
            return inval("action profile has no selector: groups are not allowed");
        }
        let mut handles = vec![];
        if ty != T::Delete {
            if prof.max_group_size > 0 && g.members.len() as i32 > prof.max_group_size {
                return err(Code::ResourceExhausted, "group larger than max_group_size");
            }
            let mems = self.members.get(&prof.id);
            for gm in &g.members {
                let h = *mems
                    .and_then(|m| m.by_id.get(&gm.member_id))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no member {}", gm.member_id),
                    })?;
                if gm.weight < 0 {
                    return inval("negative member weight");
                }
                for _ in 0..gm.weight.max(1) {
                    handles.push(h);
                }
            }
        }
        let grps = self.groups.entry(prof.id).or_default();
        let sw = self.sw.as_mut().unwrap();
        match (ty, grps.by_id.get(&g.group_id).copied()) {
            (T::Insert, Some(_)) => {
                err(Code::AlreadyExists, format!("group {} exists", g.group_id))
            }
            (T::Insert, None) => {
                let h = sw.group_create(prof.sw, handles);
                grps.insert(g.group_id, h);
                self.group_max_size
                    .insert((prof.id, g.group_id), g.max_size);
                Ok(())
            }
            (T::Modify, Some(h)) => {
                sw.group_set_members(prof.sw, h, handles)?;
                self.group_max_size
                    .insert((prof.id, g.group_id), g.max_size);
                Ok(())
            }
            (T::Delete, Some(h)) => {
                let used = pipe
                    .tables
                    .values()
                    .filter(|t| t.profile == Some(prof.id))
                    .any(|t| {
                        sw.table(t.sw)
                            .entries
                            .iter()
                            .flatten()
                            .any(|e| e.action == INDIRECT_GROUP | h)
                    });
                if used {
                    return err(
                        Code::FailedPrecondition,
                        format!("group {} is still referenced", g.group_id),
                    );
                }
                sw.group_delete(prof.sw, h)?;
                grps.remove(g.group_id);
                self.group_max_size.remove(&(prof.id, g.group_id));
                Ok(())
            }
            (_, None) => err(Code::NotFound, format!("no group {}", g.group_id)),
            _ => inval("bad update type"),
        }
    }

    pub(super) fn read_members(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::ActionProfileMember,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        for (pid, mems) in sorted(&self.members) {
            if q.action_profile_id != 0 && q.action_profile_id != pid {
                continue;
            }
            let sp = sw.profile(pipe.profiles[&pid].sw);
            for (mid, h) in sorted(&mems.by_id) {
                if q.member_id != 0 && q.member_id != mid {
                    continue;
                }
                let Some(Some((action, data))) = sp.members.get(*h as usize) else {
                    continue;
                };
                out.push(wrap(E::ActionProfileMember(p4::ActionProfileMember {
                    action_profile_id: pid,
                    member_id: mid,
                    action: Self::action_from_switch(pipe, *action, data),
                })));
            }
        }
        Ok(())
    }

    pub(super) fn read_groups(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::ActionProfileGroup,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        for (pid, grps) in sorted(&self.groups) {
            if q.action_profile_id != 0 && q.action_profile_id != pid {
                continue;
            }
            let sp = sw.profile(pipe.profiles[&pid].sw);
            let member_ids = self.members.get(&pid).map(|m| &m.by_handle);
            for (gid, h) in sorted(&grps.by_id) {
                if q.group_id != 0 && q.group_id != gid {
                    continue;
                }
                let Some(Some(handles)) = sp.groups.get(*h as usize) else {
                    continue;
                };
                // a member listed n times has weight n, in first-listed order
                let mut members: Vec<p4::action_profile_group::Member> = vec![];
                for mh in handles {
                    let Some(&mid) = member_ids.and_then(|m| m.get(mh)) else {
                        continue;
                    };
                    match members.iter_mut().find(|m| m.member_id == mid) {
                        Some(m) => m.weight += 1,
                        None => members.push(p4::action_profile_group::Member {
                            member_id: mid,
                            weight: 1,
                            ..Default::default()
                        }),
                    }
                }
                out.push(wrap(E::ActionProfileGroup(p4::ActionProfileGroup {
                    action_profile_id: pid,
                    group_id: gid,
                    members,
                    max_size: self.group_max_size.get(&(pid, gid)).copied().unwrap_or(0),
                })));
            }
        }
        Ok(())
    }
}
