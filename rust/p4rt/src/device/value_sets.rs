//! Parser value sets.

use super::*;

impl Device {
    /// Parser value sets: MODIFY replaces all members (exact or ternary on one field).
    pub(super) fn write_value_set(&mut self, ty: p4::update::Type, v: &p4::ValueSetEntry) -> R<()> {
        use p4::field_match::FieldMatchType as M;
        if ty != p4::update::Type::Modify {
            return inval("value set entries can only be modified");
        }
        let (sw, pipe) = self.parts()?;
        let &(vi, (fid, bw), size) = pipe.value_sets.get(&v.value_set_id).ok_or_else(|| PErr {
            code: Code::NotFound,
            msg: format!(
                "unknown value set id {} (or one with several fields)",
                v.value_set_id
            ),
        })?;
        if size > 0 && v.members.len() > size as usize {
            return err(
                Code::ResourceExhausted,
                format!("value set holds at most {} members", size),
            );
        }
        let mut vals = vec![];
        for m in &v.members {
            let [fm] = m.r#match.as_slice() else {
                return inval("value set member needs exactly one field match");
            };
            if fm.field_id != fid {
                return inval(format!(
                    "value set member: unknown field id {}",
                    fm.field_id
                ));
            }
            let wm = width_mask(bw);
            let (val, mask) = match &fm.field_match_type {
                Some(M::Exact(x)) => (bytes_to_u128(&x.value, bw).map_err(ia)?, wm),
                Some(M::Ternary(x)) => (
                    bytes_to_u128(&x.value, bw).map_err(ia)?,
                    bytes_to_u128(&x.mask, bw).map_err(ia)?,
                ),
                _ => return inval("value set members are exact or ternary matches"),
            };
            vals.push((val & mask, mask));
        }
        Ok(sw.set_value_set(vi, vals)?)
    }

    pub(super) fn read_value_sets(
        &self,
        pipe: &Pipe,
        sw: &Switch,
        q: &p4::ValueSetEntry,
        out: &mut Vec<p4::Entity>,
    ) -> R<()> {
        let wrap = |e: E| p4::Entity { entity: Some(e) };
        let mut ids: Vec<&u32> = pipe
            .value_sets
            .keys()
            .filter(|&&id| q.value_set_id == 0 || q.value_set_id == id)
            .collect();
        ids.sort();
        for id in ids {
            let (vi, (fid, bw), _) = pipe.value_sets[id];
            let members = sw
                .value_set(vi)
                .iter()
                .map(|&(v, m)| {
                    let t = if m == width_mask(bw) {
                        p4::field_match::FieldMatchType::Exact(p4::field_match::Exact {
                            value: u128_to_bytes(v),
                        })
                    } else {
                        p4::field_match::FieldMatchType::Ternary(p4::field_match::Ternary {
                            value: u128_to_bytes(v),
                            mask: u128_to_bytes(m),
                        })
                    };
                    p4::ValueSetMember {
                        r#match: vec![p4::FieldMatch {
                            field_id: fid,
                            field_match_type: Some(t),
                        }],
                    }
                })
                .collect();
            out.push(wrap(E::ValueSetEntry(p4::ValueSetEntry {
                value_set_id: *id,
                members,
            })));
        }
        Ok(())
    }
}
