//! A forwarding pipeline as P4Runtime sees it: the P4Info, the BMv2 JSON device config,
//! the cookie, and the maps from P4Info ids to the switch program's tables, actions and
//! externs (by name, as p4c names them in both files). Built once per
//! SetForwardingPipelineConfig; verification failures are INVALID_ARGUMENT messages.

use crate::proto::p4::config::v1 as cfg;
use sdnperf_switch::pipeline::MatchKind;
use sdnperf_switch::pipeline::Program;
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct FieldInfo {
    pub id: u32,
    pub name: String,
    pub bitwidth: u32,
    pub kind: MatchKind,
}

#[derive(Debug, Clone)]
pub struct TableInfo {
    pub id: u32,
    pub name: String,
    /// index in the switch program's tables
    pub sw: usize,
    /// P4Info match fields, in switch key order
    pub fields: Vec<FieldInfo>,
    /// field id -> position in `fields`
    pub field_pos: HashMap<u32, usize>,
    pub needs_priority: bool,
    pub action_ids: Vec<u32>,
    pub const_default: bool,
    pub is_const: bool,
    pub direct_counter: Option<u32>,
    pub direct_meter: Option<u32>,
    pub idle_timeout: bool,
    pub size: i64,
    /// action profile (indirect table)
    pub profile: Option<u32>,
    /// P4Info action id -> this table's copy of it in the switch program (p4c's JSON, and
    /// ours, hold one copy per table of an action bound with a directional argument in
    /// the table's action list, all of one name)
    pub sw_actions: HashMap<u32, u32>,
}

impl TableInfo {
    /// The switch action that P4Info action `ai` runs as in this table.
    pub fn sw_action(&self, ai: &ActionInfo) -> u32 {
        self.sw_actions.get(&ai.id).copied().unwrap_or(ai.sw)
    }
}

#[derive(Debug, Clone)]
pub struct ActionInfo {
    pub id: u32,
    pub name: String,
    pub sw: u32,
    /// (param id, bitwidth) in switch parameter order
    pub params: Vec<(u32, u32)>,
}

#[derive(Debug, Clone)]
pub struct ProfileInfo {
    pub id: u32,
    pub sw: usize,
    pub with_selector: bool,
    pub size: i64,
    pub max_group_size: i32,
}

#[derive(Debug, Clone)]
pub struct ExternInfo {
    pub id: u32,
    pub name: String,
    pub sw: usize,
    pub size: usize,
    pub bitwidth: u32,
}

#[derive(Debug, Clone)]
pub struct DigestInfo {
    pub id: u32,
    pub name: String,
    /// learn list id in the switch program
    pub list: u32,
}

/// Controller packet metadata header layout: (metadata id, bitwidth) in header order.
#[derive(Debug, Clone, Default)]
pub struct CpmInfo {
    pub fields: Vec<(u32, u32)>,
}

impl CpmInfo {
    pub fn bytes(&self) -> usize {
        self.fields
            .iter()
            .map(|f| f.1 as usize)
            .sum::<usize>()
            .div_ceil(8)
    }
}

pub struct Pipe {
    pub p4info: cfg::P4Info,
    pub device_config: Vec<u8>,
    pub cookie: Option<u64>,
    pub tables: HashMap<u32, TableInfo>,
    pub actions: HashMap<u32, ActionInfo>,
    /// switch action index -> P4Info action id
    pub action_by_sw: HashMap<u32, u32>,
    pub profiles: HashMap<u32, ProfileInfo>,
    pub counters: HashMap<u32, ExternInfo>,
    pub meters: HashMap<u32, ExternInfo>,
    pub registers: HashMap<u32, ExternInfo>,
    pub direct_counters: HashMap<u32, u32>,
    pub direct_meters: HashMap<u32, u32>,
    pub digests: HashMap<u32, DigestInfo>,
    /// parser value sets: id -> (switch index, one match field's (id, bitwidth), size)
    pub value_sets: HashMap<u32, (usize, (u32, u32), i32)>,
    pub packet_in: Option<CpmInfo>,
    pub packet_out: Option<CpmInfo>,
}

fn pre(p: &Option<cfg::Preamble>) -> (u32, String, String) {
    match p {
        Some(p) => (p.id, p.name.clone(), p.alias.clone()),
        None => (0, String::new(), String::new()),
    }
}

fn find<'a>(
    names: impl Iterator<Item = &'a str> + Clone,
    name: &str,
    alias: &str,
) -> Option<usize> {
    if let Some(i) = names.clone().position(|n| n == name) {
        return Some(i);
    }
    let suffix = |n: &str| sdnperf_switch::pipeline::find_by_suffix(names.clone(), n);
    suffix(name).or_else(|| {
        if alias.is_empty() {
            None
        } else {
            suffix(alias)
        }
    })
}

fn kind_of(m: &Option<cfg::match_field::Match>) -> Option<MatchKind> {
    use cfg::match_field::{Match, MatchType};
    match m {
        Some(Match::MatchType(t)) => match MatchType::try_from(*t).ok()? {
            MatchType::Exact => Some(MatchKind::Exact),
            MatchType::Lpm => Some(MatchKind::Lpm),
            MatchType::Ternary => Some(MatchKind::Ternary),
            MatchType::Range => Some(MatchKind::Range),
            MatchType::Optional => Some(MatchKind::Optional),
            _ => None,
        },
        _ => None,
    }
}

impl Pipe {
    /// Checks that the P4Info describes the program and builds the id maps.
    pub fn build(
        p4info: cfg::P4Info,
        device_config: Vec<u8>,
        cookie: Option<u64>,
        prog: &Program,
    ) -> Result<Pipe, String> {
        let mut pipe = Pipe {
            p4info: cfg::P4Info::default(),
            device_config,
            cookie,
            tables: HashMap::new(),
            actions: HashMap::new(),
            action_by_sw: HashMap::new(),
            profiles: HashMap::new(),
            counters: HashMap::new(),
            meters: HashMap::new(),
            registers: HashMap::new(),
            direct_counters: HashMap::new(),
            direct_meters: HashMap::new(),
            digests: HashMap::new(),
            value_sets: HashMap::new(),
            packet_in: None,
            packet_out: None,
        };
        for a in &p4info.actions {
            let (id, name, alias) = pre(&a.preamble);
            let sw = find(prog.actions.iter().map(|x| x.name.as_str()), &name, &alias).ok_or_else(
                || {
                    format!(
                        "P4Info action {} ({}) is not in the device config",
                        name, id
                    )
                },
            )?;
            let sa = &prog.actions[sw];
            if sa.params.len() != a.params.len() {
                return Err(format!(
                    "P4Info action {} has {} parameters, device config {}",
                    name,
                    a.params.len(),
                    sa.params.len()
                ));
            }
            let params = a.params.iter().map(|p| (p.id, p.bitwidth as u32)).collect();
            // every copy of the action (see TableInfo::sw_actions) reads back as this id
            for (i, x) in prog.actions.iter().enumerate() {
                if x.name == sa.name {
                    pipe.action_by_sw.insert(i as u32, id);
                }
            }
            pipe.actions.insert(
                id,
                ActionInfo {
                    id,
                    name,
                    sw: sw as u32,
                    params,
                },
            );
        }
        // the switch's NoAction-like actions that P4Info may not list still need a reverse map
        for ap in &p4info.action_profiles {
            let (id, name, alias) = pre(&ap.preamble);
            let sw = find(prog.profiles.iter().map(|x| x.name.as_str()), &name, &alias)
                .ok_or_else(|| {
                    format!("P4Info action profile {} is not in the device config", name)
                })?;
            pipe.profiles.insert(
                id,
                ProfileInfo {
                    id,
                    sw,
                    with_selector: ap.with_selector,
                    size: ap.size,
                    max_group_size: ap.max_group_size,
                },
            );
        }
        for dc in &p4info.direct_counters {
            pipe.direct_counters
                .insert(dc.direct_table_id, pre(&dc.preamble).0);
        }
        for dm in &p4info.direct_meters {
            pipe.direct_meters
                .insert(dm.direct_table_id, pre(&dm.preamble).0);
        }
        for t in &p4info.tables {
            let (id, name, alias) = pre(&t.preamble);
            let sw = find(prog.tables.iter().map(|x| x.name.as_str()), &name, &alias).ok_or_else(
                || format!("P4Info table {} ({}) is not in the device config", name, id),
            )?;
            let st = &prog.tables[sw];
            if st.keys.len() != t.match_fields.len() {
                return Err(format!(
                    "P4Info table {} has {} match fields, device config {}",
                    name,
                    t.match_fields.len(),
                    st.keys.len()
                ));
            }
            let mut fields = vec![];
            let mut field_pos = HashMap::new();
            for (i, (mf, k)) in t.match_fields.iter().zip(&st.keys).enumerate() {
                let kind = match kind_of(&mf.r#match) {
                    Some(k) => k,
                    None => {
                        return Err(format!(
                            "table {} field {}: unsupported match type",
                            name, mf.name
                        ))
                    }
                };
                let swk = if k.kind == MatchKind::Valid {
                    MatchKind::Exact
                } else {
                    k.kind
                };
                // BMv2 JSON has no optional match: p4c emits it as ternary
                let compatible =
                    swk == kind || (kind == MatchKind::Optional && swk == MatchKind::Ternary);
                if !compatible {
                    return Err(format!(
                        "table {} field {}: P4Info says {:?}, device config {:?}",
                        name, mf.name, kind, k.kind
                    ));
                }
                if mf.bitwidth as u32 != k.width && k.kind != MatchKind::Valid {
                    return Err(format!(
                        "table {} field {}: P4Info bitwidth {}, device config {}",
                        name, mf.name, mf.bitwidth, k.width
                    ));
                }
                field_pos.insert(mf.id, i);
                fields.push(FieldInfo {
                    id: mf.id,
                    name: mf.name.clone(),
                    bitwidth: mf.bitwidth as u32,
                    kind,
                });
            }
            let needs_priority = fields.iter().any(|f| {
                matches!(
                    f.kind,
                    MatchKind::Ternary | MatchKind::Range | MatchKind::Optional
                )
            });
            let profile =
                if t.implementation_id != 0 && pipe.profiles.contains_key(&t.implementation_id) {
                    Some(t.implementation_id)
                } else {
                    None
                };
            let sw_actions = t
                .action_refs
                .iter()
                .filter_map(|r| {
                    let name = &prog.actions[pipe.actions.get(&r.id)?.sw as usize].name;
                    let copy = st
                        .action_ids
                        .iter()
                        .find(|&&a| prog.actions[a as usize].name == *name)?;
                    Some((r.id, *copy))
                })
                .collect();
            let idle =
                t.idle_timeout_behavior == cfg::table::IdleTimeoutBehavior::NotifyControl as i32;
            pipe.tables.insert(
                id,
                TableInfo {
                    id,
                    name,
                    sw,
                    fields,
                    field_pos,
                    needs_priority,
                    action_ids: t.action_refs.iter().map(|r| r.id).collect(),
                    const_default: t.const_default_action_id != 0 || st.default_const,
                    is_const: t.is_const_table,
                    direct_counter: pipe.direct_counters.get(&id).copied(),
                    direct_meter: pipe.direct_meters.get(&id).copied(),
                    idle_timeout: idle,
                    size: t.size,
                    profile,
                    sw_actions,
                },
            );
        }
        for c in &p4info.counters {
            let (id, name, alias) = pre(&c.preamble);
            let sw = find(prog.counters.iter().map(|x| x.name.as_str()), &name, &alias)
                .ok_or_else(|| format!("P4Info counter {} is not in the device config", name))?;
            pipe.counters.insert(
                id,
                ExternInfo {
                    id,
                    name,
                    sw,
                    size: prog.counters[sw].size,
                    bitwidth: 0,
                },
            );
        }
        for m in &p4info.meters {
            let (id, name, alias) = pre(&m.preamble);
            let sw = find(prog.meters.iter().map(|x| x.name.as_str()), &name, &alias)
                .ok_or_else(|| format!("P4Info meter {} is not in the device config", name))?;
            pipe.meters.insert(
                id,
                ExternInfo {
                    id,
                    name,
                    sw,
                    size: prog.meters[sw].size,
                    bitwidth: 0,
                },
            );
        }
        for r in &p4info.registers {
            let (id, name, alias) = pre(&r.preamble);
            let sw = find(
                prog.registers.iter().map(|x| x.name.as_str()),
                &name,
                &alias,
            )
            .ok_or_else(|| format!("P4Info register {} is not in the device config", name))?;
            pipe.registers.insert(
                id,
                ExternInfo {
                    id,
                    name,
                    sw,
                    size: prog.registers[sw].size,
                    bitwidth: prog.registers[sw].width,
                },
            );
        }
        for d in &p4info.digests {
            let (id, name, alias) = pre(&d.preamble);
            let list = prog
                .learn_lists
                .iter()
                .find(|(_, l)| {
                    l.name == name
                        || (!alias.is_empty() && l.name == alias)
                        || l.name.ends_with(&format!(".{}", alias))
                })
                .map(|(i, _)| *i);
            if let Some(list) = list {
                pipe.digests.insert(id, DigestInfo { id, name, list });
            }
        }
        for v in &p4info.value_sets {
            let (id, name, alias) = pre(&v.preamble);
            let Some(sw) = find(prog.vsets.iter().map(|x| x.name.as_str()), &name, &alias) else {
                continue;
            };
            if let [mf] = v.r#match.as_slice() {
                pipe.value_sets
                    .insert(id, (sw, (mf.id, mf.bitwidth as u32), v.size));
            }
        }
        for c in &p4info.controller_packet_metadata {
            let (_, name, _) = pre(&c.preamble);
            if let Some(m) = c
                .metadata
                .iter()
                .find(|m| m.bitwidth <= 0 || m.bitwidth > 128)
            {
                return Err(format!(
                    "controller packet metadata {}.{}: bitwidth {} not supported (1..128)",
                    name, m.name, m.bitwidth
                ));
            }
            let info = CpmInfo {
                fields: c
                    .metadata
                    .iter()
                    .map(|m| (m.id, m.bitwidth as u32))
                    .collect(),
            };
            match name.as_str() {
                "packet_in" => pipe.packet_in = Some(info),
                "packet_out" => pipe.packet_out = Some(info),
                _ => {}
            }
        }
        pipe.p4info = p4info;
        Ok(pipe)
    }
}

/// Bytes (big-endian, any length) to a value of `bitwidth` bits; errors if it does not fit.
pub fn bytes_to_u128(b: &[u8], bitwidth: u32) -> Result<u128, String> {
    let mut start = 0;
    while start < b.len() && b[start] == 0 {
        start += 1;
    }
    let b = &b[start..];
    if b.len() > 16 {
        return Err(format!(
            "value of {} bytes does not fit in {} bits",
            b.len(),
            bitwidth
        ));
    }
    let mut v = 0u128;
    for &x in b {
        v = (v << 8) | x as u128;
    }
    if bitwidth < 128 && (v >> bitwidth) != 0 {
        return Err(format!("value 0x{:x} does not fit in {} bits", v, bitwidth));
    }
    Ok(v)
}

/// Canonical P4Runtime byte string: shortest big-endian form (zero is one 0 byte).
pub fn u128_to_bytes(v: u128) -> Vec<u8> {
    let b = v.to_be_bytes();
    let first = b.iter().position(|&x| x != 0).unwrap_or(15);
    b[first..].to_vec()
}

/// Reads `w` bits at bit offset `off` of `buf` (big-endian bit order).
pub fn get_bits(buf: &[u8], off: usize, w: u32) -> u128 {
    let mut v = 0u128;
    for i in 0..w as usize {
        let bit = off + i;
        let byte = buf.get(bit / 8).copied().unwrap_or(0);
        v = (v << 1) | ((byte >> (7 - bit % 8)) & 1) as u128;
    }
    v
}

pub fn set_bits(buf: &mut [u8], off: usize, w: u32, v: u128) {
    for i in 0..w as usize {
        let bit = off + i;
        let b = ((v >> (w as usize - 1 - i)) & 1) as u8;
        if let Some(byte) = buf.get_mut(bit / 8) {
            if b == 1 {
                *byte |= 1 << (7 - bit % 8);
            } else {
                *byte &= !(1 << (7 - bit % 8));
            }
        }
    }
}
