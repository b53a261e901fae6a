//! P4Runtime matches and actions -> the switch's keys, action indices and data (validated).

use super::*;

impl Device {
    /// Validates a match; returns the switch's (key, aux, prefix) for it.
    pub(super) fn translate_match(
        t: &TableInfo,
        fms: &[p4::FieldMatch],
    ) -> R<(Vec<u128>, Vec<u128>, u32)> {
        use p4::field_match::FieldMatchType as M;
        let n = t.fields.len();
        let mut slots: Vec<Option<&p4::FieldMatch>> = vec![None; n];
        for fm in fms {
            let pos = *t.field_pos.get(&fm.field_id).ok_or_else(|| {
                ia(format!(
                    "table {}: unknown match field id {}",
                    t.name, fm.field_id
                ))
            })?;
            if slots[pos].is_some() {
                return inval(format!(
                    "table {}: match field {} given twice",
                    t.name, t.fields[pos].name
                ));
            }
            slots[pos] = Some(fm);
        }
        let mut key = Vec::with_capacity(n);
        let mut aux = Vec::with_capacity(n);
        let mut prefix = 0u32;
        for (f, s) in t.fields.iter().zip(slots) {
            let bw = f.bitwidth;
            let wm = width_mask(bw);
            let val = |b: &[u8]| {
                bytes_to_u128(b, bw)
                    .map_err(|e| ia(format!("table {} field {}: {}", t.name, f.name, e)))
            };
            let mt = s.and_then(|fm| fm.field_match_type.as_ref());
            if s.is_some() && mt.is_none() {
                return inval(format!(
                    "table {} field {}: field match without a value",
                    t.name, f.name
                ));
            }
            let (k, a) = match (f.kind, mt) {
                (MatchKind::Exact, None) => {
                    return inval(format!(
                        "table {}: exact field {} must be given",
                        t.name, f.name
                    ))
                }
                (MatchKind::Exact, Some(M::Exact(x))) => (val(&x.value)?, wm),
                (MatchKind::Lpm, None) => (0, 0),
                (MatchKind::Lpm, Some(M::Lpm(x))) => {
                    let v = val(&x.value)?;
                    if x.prefix_len <= 0 || x.prefix_len as u32 > bw {
                        return inval(format!(
                            "table {} field {}: prefix length {} must be 1..{} (omit the field for a zero-length prefix)",
                            t.name, f.name, x.prefix_len, bw
                        ));
                    }
                    let pm = prefix_mask(x.prefix_len as u32, bw);
                    if v & !pm != 0 {
                        return inval(format!(
                            "table {} field {}: value has bits set beyond the prefix length {}",
                            t.name, f.name, x.prefix_len
                        ));
                    }
                    prefix = x.prefix_len as u32;
                    (v, pm)
                }
                (MatchKind::Ternary, None) => (0, 0),
                (MatchKind::Ternary, Some(M::Ternary(x))) => {
                    let v = val(&x.value)?;
                    let m = val(&x.mask)?;
                    if m == 0 {
                        return inval(format!("table {} field {}: all-zero ternary mask (omit the field for a wildcard)", t.name, f.name));
                    }
                    if v & !m != 0 {
                        return inval(format!(
                            "table {} field {}: value has bits set outside the mask",
                            t.name, f.name
                        ));
                    }
                    (v, m)
                }
                (MatchKind::Range, None) => (0, wm),
                (MatchKind::Range, Some(M::Range(x))) => {
                    let lo = val(&x.low)?;
                    let hi = val(&x.high)?;
                    if lo > hi {
                        return inval(format!(
                            "table {} field {}: range low > high",
                            t.name, f.name
                        ));
                    }
                    if lo == 0 && hi == wm {
                        return inval(format!(
                            "table {} field {}: full range (omit the field for a wildcard)",
                            t.name, f.name
                        ));
                    }
                    (lo, hi)
                }
                (MatchKind::Optional, None) => (0, 0),
                (MatchKind::Optional, Some(M::Optional(x))) => (val(&x.value)?, wm),
                (k, Some(_)) => {
                    return inval(format!(
                        "table {} field {}: match kind must be {:?}",
                        t.name, f.name, k
                    ))
                }
                (k, None) => {
                    return inval(format!(
                        "table {} field {}: unsupported match kind {:?}",
                        t.name, f.name, k
                    ))
                }
            };
            key.push(k);
            aux.push(a);
        }
        Ok((key, aux, prefix))
    }

    /// The switch's priority for a P4Runtime priority (a higher P4Runtime priority wins,
    /// a lower switch one does); none for tables without priorities.
    pub(super) fn sw_priority(t: &TableInfo, priority: i32) -> Option<i64> {
        t.needs_priority
            .then(|| (i32::MAX as i64) - priority as i64)
    }

    pub(super) fn translate_action(
        pipe: &Pipe,
        dev_members: &HashMap<u32, Ids>,
        dev_groups: &HashMap<u32, Ids>,
        t: &TableInfo,
        a: &p4::TableAction,
    ) -> R<(u32, Vec<u128>)> {
        use p4::table_action::Type as A;
        match &a.r#type {
            None => inval(format!("table {}: entry without action", t.name)),
            Some(A::Action(act)) => {
                if t.profile.is_some() {
                    return inval(format!(
                        "table {} is indirect: use an action profile member or group",
                        t.name
                    ));
                }
                if !t.action_ids.contains(&act.action_id) {
                    return inval(format!(
                        "table {}: action id {} is not an action of this table",
                        t.name, act.action_id
                    ));
                }
                Self::action_data(pipe, Some(t), act)
            }
            Some(A::ActionProfileMemberId(m)) => {
                let p = t
                    .profile
                    .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
                let h = dev_members
                    .get(&p)
                    .and_then(|x| x.by_id.get(m))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no action profile member {}", m),
                    })?;
                Ok((INDIRECT_MEMBER | h, vec![]))
            }
            Some(A::ActionProfileGroupId(g)) => {
                let p = t
                    .profile
                    .ok_or_else(|| ia(format!("table {} is not indirect", t.name)))?;
                let h = dev_groups
                    .get(&p)
                    .and_then(|x| x.by_id.get(g))
                    .ok_or_else(|| PErr {
                        code: Code::NotFound,
                        msg: format!("no action profile group {}", g),
                    })?;
                Ok((INDIRECT_GROUP | h, vec![]))
            }
            Some(A::ActionProfileActionSet(_)) => Ok((u32::MAX, vec![])), // allocated by the caller (one_shot)
        }
    }

    /// The switch action `act` runs as (in `table`, its copy there) and its data.
    pub(super) fn action_data(
        pipe: &Pipe,
        table: Option<&TableInfo>,
        act: &p4::Action,
    ) -> R<(u32, Vec<u128>)> {
        let ai = pipe
            .actions
            .get(&act.action_id)
            .ok_or_else(|| ia(format!("unknown action id {}", act.action_id)))?;
        let mut data = vec![None; ai.params.len()];
        for p in &act.params {
            let pos = ai
                .params
                .iter()
                .position(|x| x.0 == p.param_id)
                .ok_or_else(|| {
                    ia(format!(
                        "action {}: unknown parameter id {}",
                        ai.name, p.param_id
                    ))
                })?;
            if data[pos].is_some() {
                return inval(format!(
                    "action {}: parameter {} given twice",
                    ai.name, p.param_id
                ));
            }
            data[pos] = Some(bytes_to_u128(&p.value, ai.params[pos].1).map_err(|e| {
                ia(format!(
                    "action {} parameter {}: {}",
                    ai.name, p.param_id, e
                ))
            })?);
        }
        let mut out = Vec::with_capacity(data.len());
        for (i, d) in data.into_iter().enumerate() {
            match d {
                Some(v) => out.push(v),
                None => {
                    return inval(format!(
                        "action {}: parameter id {} missing",
                        ai.name, ai.params[i].0
                    ))
                }
            }
        }
        Ok((table.map_or(ai.sw, |t| t.sw_action(ai)), out))
    }
}
