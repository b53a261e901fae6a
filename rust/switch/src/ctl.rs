//! Runtime control: a line-based, simple_switch_CLI-like command language executed on the
//! data-plane thread (`execute`), the local server that accepts it over a loopback TCP
//! port or a Unix socket, and the client used by `sdnperf-switch ctl`.
//!
//! Wire protocol: one command per line; the answer is zero or more lines of output
//! followed by a status line `ok` or `error: <message>`.
//! A future P4Runtime server can sit beside this one and send the same `Request`s.

use crate::control::MeterRates;
use crate::dataplane::{Changed, FastPathState, Hooks, Inbox, Mailbox};
use crate::impair::parse_port_spec;
use crate::pipeline::{
    find_by_suffix, width_mask, Action, MatchKind, Program, INDIRECT_GROUP, INDIRECT_MEMBER,
};
use crate::switch::Switch;
use std::io::{BufRead, BufReader, Write};
use std::sync::mpsc;

pub struct Request {
    pub line: String,
    pub reply: mpsc::Sender<Result<String, String>>,
}

/// Parses a number: decimal, 0x hex, 0b binary, MAC (aa:bb:..), IPv4 dotted quad, IPv6.
pub fn parse_value(s: &str) -> Result<u128, String> {
    let s = s.trim();
    if s.is_empty() {
        return Err("empty value".into());
    }
    if s == "true" {
        return Ok(1);
    }
    if s == "false" {
        return Ok(0);
    }
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        let h = h.trim_start_matches('0');
        if h.len() > 32 {
            return Err(format!("value {} wider than 128 bits", s));
        }
        return if h.is_empty() {
            Ok(0)
        } else {
            u128::from_str_radix(h, 16).map_err(|_| format!("bad hex value {}", s))
        };
    }
    if let Some(b) = s.strip_prefix("0b") {
        return u128::from_str_radix(b, 2).map_err(|_| format!("bad binary value {}", s));
    }
    if s.contains(':')
        && s.split(':').count() == 6
        && s.split(':').all(|x| x.len() <= 2 && !x.is_empty())
    {
        let mut v = 0u128;
        for p in s.split(':') {
            v = (v << 8) | u8::from_str_radix(p, 16).map_err(|_| format!("bad MAC {}", s))? as u128;
        }
        return Ok(v);
    }
    if s.contains(':') {
        let a: std::net::Ipv6Addr = s.parse().map_err(|_| format!("bad value {}", s))?;
        return Ok(u128::from(a));
    }
    if s.split('.').count() == 4 {
        let a: std::net::Ipv4Addr = s.parse().map_err(|_| format!("bad IPv4 address {}", s))?;
        return Ok(u32::from(a) as u128);
    }
    if let Some(n) = s.strip_prefix('-') {
        let v: u128 = n.parse().map_err(|_| format!("bad number {}", s))?;
        return Ok(v.wrapping_neg());
    }
    s.parse::<u128>().map_err(|_| format!("bad number {}", s))
}

/// A parsed key value for one key field.
#[derive(Debug, Clone, Copy)]
pub struct KeyVal {
    pub value: u128,
    /// ternary mask / range high / lpm prefix (as mask) — meaning depends on the match kind
    pub aux: u128,
    pub prefix: Option<u32>,
}

/// Parses a key field text for match kind `kind` and width `w`.
/// exact: V; lpm: V/LEN; ternary: V&&&M or hex with * nibbles; range: LO->HI; optional: V or *.
pub fn parse_key(text: &str, kind: MatchKind, w: u32) -> Result<KeyVal, String> {
    let wm = width_mask(w);
    match kind {
        MatchKind::Lpm => {
            let (v, l) = match text.split_once('/') {
                Some((v, l)) => (
                    v,
                    l.parse::<u32>()
                        .map_err(|_| format!("bad prefix length in {}", text))?,
                ),
                None => (text, w),
            };
            let (value, _) = parse_wild(v)?;
            Ok(KeyVal {
                value,
                aux: 0,
                prefix: Some(l),
            })
        }
        MatchKind::Ternary | MatchKind::Optional => {
            if text == "*" {
                return Ok(KeyVal {
                    value: 0,
                    aux: 0,
                    prefix: None,
                });
            }
            if let Some((v, m)) = text.split_once("&&&") {
                return Ok(KeyVal {
                    value: parse_value(v)?,
                    aux: parse_value(m)? & wm,
                    prefix: None,
                });
            }
            if let Some((v, l)) = text.split_once('/') {
                let l: u32 = l
                    .parse()
                    .map_err(|_| format!("bad prefix length in {}", text))?;
                return Ok(KeyVal {
                    value: parse_value(v)?,
                    aux: crate::tables::prefix_mask(l, w),
                    prefix: None,
                });
            }
            let (value, mask) = parse_wild(text)?;
            Ok(KeyVal {
                value,
                aux: mask & wm,
                prefix: None,
            })
        }
        MatchKind::Range => {
            let (lo, hi) = text
                .split_once("->")
                .ok_or_else(|| format!("range key {} must be LO->HI", text))?;
            Ok(KeyVal {
                value: parse_value(lo)?,
                aux: parse_value(hi)?,
                prefix: None,
            })
        }
        MatchKind::Exact | MatchKind::Valid => {
            let (value, mask) = parse_wild(text)?;
            if mask != u128::MAX && mask & wm != wm {
                return Err(format!("wildcards not allowed in exact key {}", text));
            }
            Ok(KeyVal {
                value,
                aux: u128::MAX,
                prefix: None,
            })
        }
    }
}

/// Parses a value that may contain `*` hex nibbles (STF style); returns (value, mask).
fn parse_wild(s: &str) -> Result<(u128, u128), String> {
    if let Some(h) = s.strip_prefix("0x") {
        if h.contains('*') {
            let mut v = 0u128;
            let mut m = 0u128;
            for c in h.chars() {
                v <<= 4;
                m <<= 4;
                if c != '*' {
                    v |= c.to_digit(16).ok_or_else(|| format!("bad hex {}", s))? as u128;
                    m |= 0xf;
                }
            }
            return Ok((v, m));
        }
    }
    Ok((parse_value(s)?, u128::MAX))
}

/// Resolves action `name` among `ids` (the actions of one table or profile). p4c's JSON
/// has one copy of an action per table that uses it (same name, other ids), so a name
/// looked up over the whole program finds another table's copy.
fn action_among(p: &Program, ids: &[u32], name: &str, owner: &str) -> Result<u32, String> {
    find_by_suffix(
        ids.iter().map(|&a| p.actions[a as usize].name.as_str()),
        name,
    )
    .map(|i| ids[i])
    .ok_or_else(|| match p.action_by_name(name) {
        Some(a) => format!("action {} is not an action of {}", p.actions[a].name, owner),
        None => format!("unknown action {}", name),
    })
}

pub(crate) fn table_action(p: &Program, ti: usize, name: &str) -> Result<u32, String> {
    let t = &p.tables[ti];
    action_among(p, &t.action_ids, name, &format!("table {}", t.name))
}

pub fn add_entry(
    sw: &mut Switch,
    table: &str,
    keys: &[KeyVal],
    action: &str,
    params: &[u128],
    priority: Option<i64>,
) -> Result<u32, String> {
    let p = sw.program();
    let ti = p
        .table_by_name(table)
        .ok_or_else(|| format!("unknown table {}", table))?;
    let ai = table_action(p, ti, action)?;
    let t = &p.tables[ti];
    if t.profile.is_some() {
        return Err(format!(
            "table {} is indirect (action profile): use table_indirect_add",
            t.name
        ));
    }
    let a = &p.actions[ai as usize];
    let data = action_data(a, params)?;
    if keys.len() != t.keys.len() {
        return Err(format!(
            "table {} has {} key fields, got {}",
            t.name,
            t.keys.len(),
            keys.len()
        ));
    }
    let mut prefix = 0;
    let mut kv = vec![];
    let mut aux = vec![];
    for (k, spec) in keys.iter().zip(&t.keys) {
        kv.push(k.value);
        match spec.kind {
            MatchKind::Lpm => {
                prefix = k.prefix.unwrap_or(spec.width);
                aux.push(crate::tables::prefix_mask(prefix, spec.width));
            }
            _ => aux.push(k.aux),
        }
    }
    Ok(sw.entry_add(ti, kv, aux, prefix, priority, ai, data)?)
}

pub fn set_default(
    sw: &mut Switch,
    table: &str,
    action: &str,
    params: &[u128],
) -> Result<(), String> {
    let p = sw.program();
    let ti = p
        .table_by_name(table)
        .ok_or_else(|| format!("unknown table {}", table))?;
    let ai = table_action(p, ti, action)?;
    let a = &p.actions[ai as usize];
    let data = action_data(a, params)?;
    let t = &p.tables[ti];
    if t.default_const {
        return Err(format!("table {} has a const default action", t.name));
    }
    sw.set_default(ti, ai, data);
    Ok(())
}

/// An action's parameter values, one per parameter, each cut to its width.
fn action_data(a: &Action, params: &[u128]) -> Result<Vec<u128>, String> {
    if params.len() != a.params.len() {
        return Err(format!(
            "action {} takes {} parameters, got {}",
            a.name,
            a.params.len(),
            params.len()
        ));
    }
    Ok(params
        .iter()
        .zip(&a.params)
        .map(|(v, (_, w))| v & width_mask(*w))
        .collect())
}

fn num(s: Option<&&str>, what: &str) -> Result<u128, String> {
    parse_value(s.ok_or_else(|| format!("missing {}", what))?)
}

/// Executes one control command. Returns its output text. A bug in a command handler
/// becomes an error answer instead of taking the data plane down.
/// False for commands that change neither tables nor port shaping (reads, packet-in
/// queue): whoever mirrors the tables elsewhere (the XDP fast path) can skip them.
pub fn changes_forwarding(line: &str) -> bool {
    let cmd = line.split_whitespace().next().unwrap_or("");
    !matches!(
        cmd,
        "stats"
            | "table_dump"
            | "table_num_entries"
            | "show_tables"
            | "counter_read"
            | "register_read"
            | "port_impair_show"
            | "packet_in_read"
            | "digests"
            | "help"
    )
}

pub fn execute(sw: &mut Switch, line: &str) -> Result<String, String> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| execute_inner(sw, line))) {
        Ok(r) => r,
        Err(_) => Err(format!("internal error while executing: {}", line)),
    }
}

fn execute_inner(sw: &mut Switch, line: &str) -> Result<String, String> {
    let w: Vec<&str> = line.split_whitespace().collect();
    let Some(&cmd) = w.first() else {
        return Ok(String::new());
    };
    // each command family in a function of its own, named by what it controls
    let family: fn(&mut Switch, &str, &[&str]) -> Result<String, String> = match cmd {
        "table_add" | "table_set_default" | "table_clear" | "table_delete" | "table_modify"
        | "table_num_entries" | "table_dump" | "show_tables" => table_command,
        "act_prof_create_member"
        | "act_prof_delete_member"
        | "act_prof_create_group"
        | "act_prof_delete_group"
        | "act_prof_add_member_to_group"
        | "act_prof_remove_member_from_group"
        | "table_indirect_add"
        | "table_indirect_add_with_group"
        | "table_indirect_set_default"
        | "table_indirect_set_default_with_group" => profile_command,
        "pvs_add" | "pvs_remove" | "pvs_clear" => value_set_command,
        "mc_mgrp_create" | "mc_mgrp_destroy" | "mc_node_create" | "mc_node_update"
        | "mc_node_destroy" | "mc_node_associate" | "mc_node_dissociate" | "mirroring_add"
        | "mirroring_add_mc" | "mirroring_delete" => pre_command,
        "register_read" | "register_write" | "register_reset" | "counter_read"
        | "counter_reset" | "meter_set_rates" => extern_command,
        "set_queue_rate" | "set_queue_depth" | "port_impair" | "port_impair_show"
        | "packet_out" | "packet_out_port" | "packet_in_read" => port_command,
        "stats" | "config_version" | "digests" | "help" => engine_command,
        other => return unknown(other),
    };
    family(sw, cmd, &w)
}

fn unknown(cmd: &str) -> Result<String, String> {
    Err(format!("unknown command {} (try help)", cmd))
}

/// Table entries and default actions (ctl's side of the switch's table control API).
fn table_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "table_add" => {
            // table_add TABLE ACTION KEY... => PARAM... [PRIORITY]
            if w.len() < 3 {
                return Err("usage: table_add TABLE ACTION KEY... => PARAM... [PRIORITY]".into());
            }
            let table = w[1];
            let action = w[2];
            let arrow = w.iter().position(|x| *x == "=>").unwrap_or(w.len()).max(3);
            let ti = sw
                .program()
                .table_by_name(table)
                .ok_or_else(|| format!("unknown table {}", table))?;
            let specs = sw.program().tables[ti].keys.clone();
            let needs_prio = sw.program().tables[ti].needs_priority();
            let ktexts = &w[3..arrow];
            if ktexts.len() != specs.len() {
                return Err(format!(
                    "table {} needs {} key fields, got {}",
                    table,
                    specs.len(),
                    ktexts.len()
                ));
            }
            let mut keys = vec![];
            for (t, s) in ktexts.iter().zip(&specs) {
                keys.push(
                    parse_key(t, s.kind, s.width).map_err(|e| format!("key {}: {}", s.name, e))?,
                );
            }
            let mut ptexts: Vec<&str> = if arrow < w.len() {
                w[arrow + 1..].to_vec()
            } else {
                vec![]
            };
            let ai = table_action(sw.program(), ti, action)?;
            let nparams = sw.program().actions[ai as usize].params.len();
            let mut prio = None;
            if needs_prio && ptexts.len() == nparams + 1 {
                prio = Some(parse_value(ptexts.pop().unwrap())? as i64);
            }
            let params: Result<Vec<u128>, String> = ptexts.iter().map(|x| parse_value(x)).collect();
            let h = add_entry(sw, table, &keys, action, &params?, prio)?;
            Ok(format!("Entry has been added with handle {}", h))
        }
        "table_set_default" => {
            if w.len() < 3 {
                return Err("usage: table_set_default TABLE ACTION PARAM...".into());
            }
            let params: Result<Vec<u128>, String> = w[3..]
                .iter()
                .filter(|x| **x != "=>")
                .map(|x| parse_value(x))
                .collect();
            set_default(sw, w[1], w[2], &params?)?;
            Ok(String::new())
        }
        "table_clear" => {
            let p = sw.program();
            let ti = p
                .table_by_name(w.get(1).ok_or("usage: table_clear TABLE")?)
                .ok_or("unknown table")?;
            sw.table_clear(ti);
            Ok(String::new())
        }
        "table_delete" => {
            let p = sw.program();
            let ti = p
                .table_by_name(w.get(1).ok_or("usage: table_delete TABLE HANDLE")?)
                .ok_or("unknown table")?;
            let h = num(w.get(2), "handle")? as u32;
            sw.entry_delete(ti, h)?;
            Ok(String::new())
        }
        "table_modify" => {
            // table_modify TABLE ACTION HANDLE => PARAMS
            let table = w
                .get(1)
                .ok_or("usage: table_modify TABLE ACTION HANDLE => PARAM...")?;
            let action = w.get(2).ok_or("missing action")?;
            let h = num(w.get(3), "handle")? as u32;
            let params: Result<Vec<u128>, String> = w[4.min(w.len())..]
                .iter()
                .filter(|x| **x != "=>")
                .map(|x| parse_value(x))
                .collect();
            let p = sw.program();
            let ti = p.table_by_name(table).ok_or("unknown table")?;
            let ai = table_action(p, ti, action)? as usize;
            let params = params?;
            if params.len() != p.actions[ai].params.len() {
                return Err("wrong number of action parameters".into());
            }
            sw.entry_modify(ti, h, ai as u32, params)?;
            Ok(String::new())
        }
        "table_num_entries" => {
            let p = sw.program();
            let ti = p
                .table_by_name(w.get(1).ok_or("usage: table_num_entries TABLE")?)
                .ok_or("unknown table")?;
            Ok(sw.table(ti).num_entries.to_string())
        }
        "table_dump" => {
            let p = sw.program();
            let ti = p
                .table_by_name(w.get(1).ok_or("usage: table_dump TABLE")?)
                .ok_or("unknown table")?;
            let t = &p.tables[ti];
            let st = sw.table(ti);
            let act = |a: u32, d: &[u128]| -> String {
                use crate::pipeline::{INDIRECT_GROUP, INDIRECT_MEMBER, NO_ACTION};
                if a == NO_ACTION {
                    "(none)".into()
                } else if t.profile.is_some() && a & INDIRECT_GROUP != 0 {
                    format!("group {}", a & !INDIRECT_GROUP)
                } else if t.profile.is_some() && a & INDIRECT_MEMBER != 0 {
                    format!("member {}", a & !INDIRECT_MEMBER)
                } else {
                    let ds: Vec<String> = d.iter().map(|x| format!("{:#x}", x)).collect();
                    format!(
                        "{}({})",
                        p.actions
                            .get(a as usize)
                            .map(|x| x.name.as_str())
                            .unwrap_or("?"),
                        ds.join(", ")
                    )
                }
            };
            let mut out = vec![];
            for (h, e) in st.entries.iter().enumerate() {
                let Some(e) = e else { continue };
                let ks: Vec<String> = t
                    .keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| match k.kind {
                        MatchKind::Lpm => format!("{}={:#x}/{}", k.name, e.key[i], e.prefix),
                        MatchKind::Range => format!(
                            "{}={:#x}->{:#x}",
                            k.name,
                            e.key[i],
                            e.aux.get(i).copied().unwrap_or(0)
                        ),
                        MatchKind::Ternary | MatchKind::Optional => {
                            format!(
                                "{}={:#x}&&&{:#x}",
                                k.name,
                                e.key[i],
                                e.aux.get(i).copied().unwrap_or(0)
                            )
                        }
                        _ => format!("{}={:#x}", k.name, e.key[i]),
                    })
                    .collect();
                let prio = if t.needs_priority() {
                    format!(" priority={}", e.priority)
                } else {
                    String::new()
                };
                out.push(format!(
                    "{}: {} => {}{}",
                    h,
                    ks.join(" "),
                    act(e.action, &e.data),
                    prio
                ));
            }
            out.push(format!(
                "default: {}",
                act(st.default_action, &st.default_data)
            ));
            Ok(out.join("\n"))
        }
        "show_tables" => {
            let p = sw.program();
            Ok(p.tables
                .iter()
                .enumerate()
                .map(|(ti, t)| {
                    let ks: Vec<String> = t
                        .keys
                        .iter()
                        .map(|k| format!("{}({:?},{})", k.name, k.kind, k.width))
                        .collect();
                    format!(
                        "{} [{}] entries={}",
                        t.name,
                        ks.join(", "),
                        sw.table(ti).num_entries
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"))
        }
        _ => unknown(cmd),
    }
}

/// Action profile members and groups, and the indirect tables' entries that run them.
fn profile_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "act_prof_create_member" => {
            // act_prof_create_member PROF ACTION PARAMS...
            let prof = w
                .get(1)
                .ok_or("usage: act_prof_create_member PROFILE ACTION PARAM...")?;
            let action = w.get(2).ok_or("missing action")?;
            let params: Result<Vec<u128>, String> = w[3..]
                .iter()
                .filter(|x| **x != "=>")
                .map(|x| parse_value(x))
                .collect();
            let p = sw.program();
            let pi = p
                .profile_by_name(prof)
                .ok_or_else(|| format!("unknown action profile {}", prof))?;
            // the actions of the tables that share this profile
            let ids: Vec<u32> = p
                .tables
                .iter()
                .filter(|t| t.profile == Some(pi as u32))
                .flat_map(|t| t.action_ids.iter().copied())
                .collect();
            let ai = action_among(
                p,
                &ids,
                action,
                &format!("action profile {}", p.profiles[pi].name),
            )? as usize;
            let a = &p.actions[ai];
            let params = params?;
            if params.len() != a.params.len() {
                return Err(format!(
                    "action {} takes {} parameters, got {}",
                    a.name,
                    a.params.len(),
                    params.len()
                ));
            }
            let data: Vec<u128> = params
                .iter()
                .zip(&a.params)
                .map(|(v, (_, w))| v & width_mask(*w))
                .collect();
            let h = sw.member_add(pi, ai as u32, data);
            Ok(format!("Member has been created with handle {}", h))
        }
        "act_prof_delete_member" => {
            let p = sw.program();
            let pi = p
                .profile_by_name(w.get(1).ok_or("usage: act_prof_delete_member PROFILE H")?)
                .ok_or("unknown action profile")?;
            let h = num(w.get(2), "member handle")? as u32;
            sw.member_delete(pi, h)?;
            Ok(String::new())
        }
        "act_prof_create_group" => {
            let p = sw.program();
            let pi = p
                .profile_by_name(w.get(1).ok_or("usage: act_prof_create_group PROFILE")?)
                .ok_or("unknown action profile")?;
            let h = sw.group_create(pi, vec![]);
            Ok(format!("Group has been created with handle {}", h))
        }
        "act_prof_delete_group" => {
            let p = sw.program();
            let pi = p
                .profile_by_name(w.get(1).ok_or("usage: act_prof_delete_group PROFILE H")?)
                .ok_or("unknown action profile")?;
            let h = num(w.get(2), "group handle")? as u32;
            sw.group_delete(pi, h)?;
            Ok(String::new())
        }
        "act_prof_add_member_to_group" | "act_prof_remove_member_from_group" => {
            let p = sw.program();
            let pi = p
                .profile_by_name(
                    w.get(1)
                        .ok_or("usage: act_prof_add_member_to_group PROFILE MEMBER GROUP")?,
                )
                .ok_or("unknown action profile")?;
            let m = num(w.get(2), "member handle")? as u32;
            let g = num(w.get(3), "group handle")? as usize;
            let pr = sw.profile(pi);
            if pr
                .members
                .get(m as usize)
                .map(|x| x.is_none())
                .unwrap_or(true)
            {
                return Err(format!("no member {}", m));
            }
            let mut grp = pr
                .groups
                .get(g)
                .and_then(|x| x.clone())
                .ok_or_else(|| format!("no group {}", g))?;
            if cmd == "act_prof_add_member_to_group" {
                if !grp.contains(&m) {
                    grp.push(m);
                }
            } else {
                grp.retain(|&x| x != m);
            }
            sw.group_set_members(pi, g as u32, grp)?;
            Ok(String::new())
        }
        "table_indirect_add" | "table_indirect_add_with_group" => {
            // table_indirect_add TABLE KEYS... => MEMBER|GROUP [PRIORITY]
            let table = w
                .get(1)
                .ok_or("usage: table_indirect_add TABLE KEY... => HANDLE [PRIORITY]")?;
            let arrow = w
                .iter()
                .position(|x| *x == "=>")
                .ok_or("missing =>")?
                .max(2);
            let p = sw.program();
            let ti = p
                .table_by_name(table)
                .ok_or_else(|| format!("unknown table {}", table))?;
            let t = &p.tables[ti];
            if t.profile.is_none() {
                return Err(format!("table {} is not indirect", t.name));
            }
            let specs = t.keys.clone();
            let ktexts = &w[2..arrow];
            if ktexts.len() != specs.len() {
                return Err(format!(
                    "table {} needs {} key fields, got {}",
                    table,
                    specs.len(),
                    ktexts.len()
                ));
            }
            let h = num(w.get(arrow + 1), "member/group handle")? as u32;
            let prio = match w.get(arrow + 2) {
                Some(x) => Some(parse_value(x)? as i64),
                None => None,
            };
            let target = if cmd == "table_indirect_add" {
                INDIRECT_MEMBER | h
            } else {
                INDIRECT_GROUP | h
            };
            let mut kv = vec![];
            let mut aux = vec![];
            let mut prefix = 0;
            for (tx, s) in ktexts.iter().zip(&specs) {
                let k =
                    parse_key(tx, s.kind, s.width).map_err(|e| format!("key {}: {}", s.name, e))?;
                kv.push(k.value);
                if s.kind == MatchKind::Lpm {
                    prefix = k.prefix.unwrap_or(s.width);
                    aux.push(crate::tables::prefix_mask(prefix, s.width));
                } else {
                    aux.push(k.aux);
                }
            }
            let h = sw.entry_add(ti, kv, aux, prefix, prio, target, vec![])?;
            Ok(format!("Entry has been added with handle {}", h))
        }
        "table_indirect_set_default" | "table_indirect_set_default_with_group" => {
            let p = sw.program();
            let ti = p
                .table_by_name(
                    w.get(1)
                        .ok_or("usage: table_indirect_set_default TABLE HANDLE")?,
                )
                .ok_or("unknown table")?;
            let h = num(w.get(2), "handle")? as u32;
            let t = &p.tables[ti];
            if t.profile.is_none() {
                return Err(format!("table {} is not indirect", t.name));
            }
            let target = if cmd == "table_indirect_set_default" {
                INDIRECT_MEMBER | h
            } else {
                INDIRECT_GROUP | h
            };
            sw.set_default(ti, target, vec![]);
            Ok(String::new())
        }
        _ => unknown(cmd),
    }
}

/// Parser value sets.
fn value_set_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "pvs_add" | "pvs_remove" | "pvs_clear" => {
            let name = w.get(1).ok_or("usage: pvs_add VSET VALUE[&&&MASK]")?;
            let p = sw.program();
            let vi = crate::pipeline::find_by_suffix(p.vsets.iter().map(|v| v.name.as_str()), name)
                .ok_or_else(|| format!("unknown parser value set {}", name))?;
            let vs = &p.vsets[vi];
            if cmd == "pvs_clear" {
                sw.set_value_set(vi, vec![])?;
                return Ok(String::new());
            }
            let t = w.get(2).ok_or("missing value")?;
            let (v, m) = match t.split_once("&&&") {
                Some((v, m)) => (parse_value(v)?, parse_value(m)?),
                None => (parse_value(t)?, width_mask(vs.width)),
            };
            let mut values = vs.values.clone();
            if cmd == "pvs_add" {
                if vs.max_size > 0 && values.len() >= vs.max_size {
                    return Err(format!(
                        "value set {} is full ({} values)",
                        vs.name, vs.max_size
                    ));
                }
                values.push((v & m, m));
            } else {
                values.retain(|x| *x != (v & m, m));
            }
            sw.set_value_set(vi, values)?;
            Ok(String::new())
        }
        _ => unknown(cmd),
    }
}

/// The packet replication engine: multicast groups and nodes, mirroring (clone) sessions.
fn pre_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "mc_mgrp_create" => {
            sw.mcast_group_add(num(w.get(1), "group")? as u32)?;
            Ok(String::new())
        }
        "mc_mgrp_destroy" => {
            sw.mcast_group_remove(num(w.get(1), "group")? as u32)?;
            Ok(String::new())
        }
        "mc_node_create" => {
            let rid = num(w.get(1), "rid")? as u32;
            let ports: Result<Vec<u32>, String> = w[2..]
                .iter()
                .map(|x| parse_value(x).map(|v| v as u32))
                .collect();
            let h = sw.mcast_node_add(rid, ports?);
            Ok(format!("node was created with handle {}", h))
        }
        "mc_node_update" => {
            let h = num(w.get(1), "handle")? as u32;
            let ports: Result<Vec<u32>, String> = w[2..]
                .iter()
                .map(|x| parse_value(x).map(|v| v as u32))
                .collect();
            sw.mcast_node_set(h, ports?)?;
            Ok(String::new())
        }
        "mc_node_destroy" => {
            sw.mcast_node_remove(num(w.get(1), "handle")? as u32)?;
            Ok(String::new())
        }
        "mc_node_associate" => {
            sw.mcast_node_associate(
                num(w.get(1), "group")? as u32,
                num(w.get(2), "handle")? as u32,
            )?;
            Ok(String::new())
        }
        "mc_node_dissociate" => {
            sw.mcast_node_dissociate(
                num(w.get(1), "group")? as u32,
                num(w.get(2), "handle")? as u32,
            )?;
            Ok(String::new())
        }
        "mirroring_add" | "mirroring_add_mc" => {
            let sess = num(w.get(1), "session")? as u32;
            let target = num(w.get(2), "port")? as u32;
            let mut m = sw.mirror(sess).unwrap_or_default();
            if cmd == "mirroring_add" {
                m.port = Some(target);
            } else {
                m.mgrp = Some(target);
            }
            if let Some(t) = w.get(3) {
                m.truncate = Some(parse_value(t)? as usize);
            }
            sw.mirror_set(sess, m);
            Ok(String::new())
        }
        "mirroring_delete" => {
            // deleting a session that is not there answers nothing, as ctl always did
            let _ = sw.mirror_remove(num(w.get(1), "session")? as u32);
            Ok(String::new())
        }
        _ => unknown(cmd),
    }
}

/// Registers, counters (indirect and direct) and meters (indirect and direct).
fn extern_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "register_read" => {
            let r = sw
                .program()
                .register_by_name(w.get(1).ok_or("usage: register_read REG [INDEX]")?)
                .ok_or("unknown register")?;
            let vals = sw.register_values(r);
            match w.get(2) {
                Some(i) => {
                    let i = parse_value(i)? as usize;
                    vals.get(i)
                        .map(|v| v.to_string())
                        .ok_or_else(|| format!("index {} out of range", i))
                }
                None => Ok(vals
                    .iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")),
            }
        }
        "register_write" => {
            let r = sw
                .program()
                .register_by_name(w.get(1).ok_or("usage: register_write REG INDEX VALUE")?)
                .ok_or("unknown register")?;
            let i = num(w.get(2), "index")? as usize;
            let v = num(w.get(3), "value")?;
            sw.register_write(r, i, v)?;
            Ok(String::new())
        }
        "register_reset" => {
            let r = sw
                .program()
                .register_by_name(w.get(1).ok_or("usage: register_reset REG")?)
                .ok_or("unknown register")?;
            sw.register_fill(r, 0);
            Ok(String::new())
        }
        "counter_read" => {
            let name = w.get(1).ok_or("usage: counter_read COUNTER INDEX")?;
            let i = num(w.get(2), "index")? as usize;
            if let Some(c) = sw
                .program()
                .counter_by_name(name)
                .filter(|&c| sw.program().counters[c].direct.is_none())
            {
                let c = sw.counter(c);
                if i >= c.packets.len() {
                    return Err(format!("index {} out of range", i));
                }
                return Ok(format!("packets={} bytes={}", c.packets[i], c.bytes[i]));
            }
            // direct counter: by table (or counter) name and entry handle
            let ti = sw
                .program()
                .table_by_name(name)
                .or_else(|| {
                    let c = sw.program().counter_by_name(name)?;
                    let t = sw.program().counters[c].direct.clone()?;
                    sw.program().table_by_name(&t)
                })
                .ok_or_else(|| format!("unknown counter {}", name))?;
            let (pk, by) = sw.direct_counter(ti, i as u32);
            Ok(format!("packets={} bytes={}", pk, by))
        }
        "counter_reset" => {
            let name = w.get(1).ok_or("usage: counter_reset COUNTER")?;
            if let Some(c) = sw.program().counter_by_name(name) {
                sw.counter_write(c, None, 0, 0)?;
            }
            Ok(String::new())
        }
        "meter_set_rates" => {
            // meter_set_rates METER INDEX CIR:CBURST PIR:PBURST (rates per microsecond)
            let name = w
                .get(1)
                .ok_or("usage: meter_set_rates METER INDEX CIR:CBS PIR:PBS")?;
            let i = num(w.get(2), "index")? as usize;
            let rb = |s: Option<&&str>| -> Result<(f64, f64), String> {
                let s = s.ok_or("missing RATE:BURST")?;
                let (r, b) = s.split_once(':').ok_or("rates are RATE:BURST")?;
                Ok((
                    r.parse().map_err(|_| "bad rate")?,
                    b.parse().map_err(|_| "bad burst")?,
                ))
            };
            let (cir, cbs) = rb(w.get(3))?;
            let (pir, pbs) = rb(w.get(4))?;
            let rates = MeterRates {
                cir,
                cbs,
                pir,
                pbs,
                ebs: 0.0,
            };
            if let Some(m) = sw
                .program()
                .meter_by_name(name)
                .filter(|&m| sw.program().meters[m].direct.is_none())
            {
                sw.set_meter(m, i, Some(rates))?;
                return Ok(String::new());
            }
            let ti = sw
                .program()
                .table_by_name(name)
                .or_else(|| {
                    let m = sw.program().meter_by_name(name)?;
                    let t = sw.program().meters[m].direct.clone()?;
                    sw.program().table_by_name(&t)
                })
                .ok_or_else(|| format!("unknown meter {}", name))?;
            if sw
                .table(ti)
                .entries
                .get(i)
                .map(|e| e.is_none())
                .unwrap_or(true)
            {
                return Err(format!(
                    "table {} has no entry with handle {}",
                    sw.program().tables[ti].name,
                    i
                ));
            }
            sw.set_direct_meter(ti, i as u32, Some(rates));
            Ok(String::new())
        }
        _ => unknown(cmd),
    }
}

/// Ports: queue shaping, impairments, packet-out and the packet-in queue.
fn port_command(sw: &mut Switch, cmd: &str, w: &[&str]) -> Result<String, String> {
    match cmd {
        "set_queue_rate" => {
            let rate = num(w.get(1), "rate (pps)")? as u64;
            sw.set_queue_rate(port_arg(w.get(2))?, rate)?;
            Ok(String::new())
        }
        "set_queue_depth" => {
            let d = num(w.get(1), "depth")? as usize;
            sw.set_queue_depth(port_arg(w.get(2))?, d)?;
            Ok(String::new())
        }
        "port_impair" => {
            // port_impair PORT [direction=in|out|both] delay=5ms,jitter=1ms,loss=1%,rate=100mbit,limit=N,seed=N
            // (keys may also be separated by spaces; no keys = remove; default direction out)
            let port = num(w.get(1), "port")? as u32;
            let (dir, cfg) = parse_port_spec(&w[2.min(w.len())..].join(","))?;
            sw.set_port_impair(port, dir, cfg)?;
            Ok(String::new())
        }
        "port_impair_show" => Ok(sw.describe_impairments()),
        "packet_out" | "packet_out_port" => {
            // packet_out HEX...: inject as received on the CPU port (P4Runtime packet-out);
            // packet_out_port PORT HEX...: inject as received on PORT
            let (port, hexs) = if cmd == "packet_out" {
                (
                    sw.cpu_port()
                        .ok_or("no --cpu-port configured (use packet_out_port PORT HEX)")?,
                    &w[1..],
                )
            } else {
                (num(w.get(1), "port")? as u32, &w[2.min(w.len())..])
            };
            if hexs.is_empty() {
                return Err("packet_out: missing packet data".into());
            }
            let hex: String = hexs.concat();
            if !hex.len().is_multiple_of(2) || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                return Err("packet_out: data must be an even number of hex digits".into());
            }
            let bytes: Vec<u8> = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                .collect();
            let now = sw.now_ns();
            sw.receive(port, &bytes, None, now);
            Ok(String::new())
        }
        "packet_in_read" => {
            // packet_in_read [MAX]: pops queued packet-ins, one "PORT HEX" line each
            let max = match w.get(1) {
                Some(m) => parse_value(m)? as usize,
                None => usize::MAX,
            };
            let mut out = vec![];
            while out.len() < max {
                let Some((p, b)) = sw.pop_packet_in() else {
                    break;
                };
                out.push(format!(
                    "{} {}",
                    p,
                    b.iter().map(|x| format!("{:02x}", x)).collect::<String>()
                ));
            }
            Ok(out.join("\n"))
        }
        _ => unknown(cmd),
    }
}

/// The engine's readings: statistics, program version, digests, help.
fn engine_command(sw: &mut Switch, cmd: &str, _w: &[&str]) -> Result<String, String> {
    match cmd {
        "stats" => {
            let (s, d) = (sw.stats(), sw.drops());
            Ok(format!(
                "rx={} tx={} dropped={} parser_errors={} recirculations={} recirc_dropped={} queue_dropped={} impair_dropped={}",
                s.rx, s.tx, s.dropped, s.parser_errors, s.recirculations, d.recirc, d.queue, d.impair
            ))
        }
        // the loaded program's version: P4Runtime's config cookie, else the JSON's fingerprint
        "config_version" => Ok(sw.config_version().to_string()),
        "digests" => {
            let d = sw.take_digests();
            Ok(d.iter()
                .map(|d| format!("list={} receiver={} values={:?}", d.list, d.receiver, d.values))
                .collect::<Vec<_>>()
                .join("\n"))
        }
        "help" => Ok("commands: table_add table_set_default table_clear table_delete table_modify table_num_entries show_tables \
mc_mgrp_create mc_mgrp_destroy mc_node_create mc_node_update mc_node_destroy mc_node_associate mc_node_dissociate \
mirroring_add mirroring_add_mc mirroring_delete register_read register_write register_reset counter_read counter_reset \
meter_set_rates set_queue_rate set_queue_depth port_impair port_impair_show pvs_add pvs_remove pvs_clear \
table_dump act_prof_create_member act_prof_create_group act_prof_add_member_to_group table_indirect_add \
table_indirect_add_with_group table_indirect_set_default packet_out packet_out_port packet_in_read stats config_version digests fastpath (sdnperf-switch run only)"
            .into()),
        _ => unknown(cmd),
    }
}

/// An optional port argument (none: every port).
fn port_arg(port: Option<&&str>) -> Result<Option<u32>, String> {
    port.map(|p| parse_value(p).map(|v| v as u32)).transpose()
}

// ------------------------------------------------------------------ server & client

pub enum Listen {
    Tcp(String),
    Unix(String),
}

fn serve_conn<S: std::io::Read + Write>(stream: S, tx: Mailbox<Request>) {
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let l = line.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        let (rtx, rrx) = mpsc::channel();
        if !tx.send(Request {
            line: l.to_string(),
            reply: rtx,
        }) {
            return;
        }
        let ans = rrx.recv().unwrap_or(Err("switch stopped".into()));
        let out = reader.get_mut();
        let text = match ans {
            Ok(s) if s.is_empty() => "ok\n".to_string(),
            Ok(s) => format!("{}\nok\n", s),
            Err(e) => format!("error: {}\n", e.replace('\n', " ")),
        };
        if out.write_all(text.as_bytes()).is_err() {
            return;
        }
    }
}

/// Starts the control server thread; requests arrive in the returned inbox (its fd wakes
/// a data-plane loop).
pub fn start_server(listen: Listen) -> Result<Inbox<Request>, String> {
    let (tx, rx) = crate::dataplane::mailbox();
    start_server_into(listen, tx)?;
    Ok(rx)
}

/// Starts the control server thread, sending requests to `tx`.
pub fn start_server_into(listen: Listen, tx: Mailbox<Request>) -> Result<(), String> {
    match listen {
        Listen::Tcp(addr) => {
            let l = std::net::TcpListener::bind(&addr)
                .map_err(|e| format!("ctl: bind {}: {}", addr, e))?;
            std::thread::spawn(move || {
                for s in l.incoming().flatten() {
                    let tx = tx.clone();
                    std::thread::spawn(move || serve_conn(s, tx));
                }
            });
        }
        Listen::Unix(path) => {
            let _ = std::fs::remove_file(&path);
            let l = std::os::unix::net::UnixListener::bind(&path)
                .map_err(|e| format!("ctl: bind {}: {}", path, e))?;
            std::thread::spawn(move || {
                for s in l.incoming().flatten() {
                    let tx = tx.clone();
                    std::thread::spawn(move || serve_conn(s, tx));
                }
            });
        }
    }
    Ok(())
}

/// Client: sends each command, prints outputs; returns false if any command failed.
pub fn client(target: &str, commands: &[String]) -> Result<bool, String> {
    fn run<S: std::io::Read + Write>(s: S, commands: &[String]) -> Result<bool, String> {
        let mut r = BufReader::new(s);
        let mut all_ok = true;
        for c in commands {
            r.get_mut()
                .write_all(format!("{}\n", c).as_bytes())
                .map_err(|e| e.to_string())?;
            loop {
                let mut l = String::new();
                if r.read_line(&mut l).map_err(|e| e.to_string())? == 0 {
                    return Err("connection closed".into());
                }
                let l = l.trim_end();
                if l == "ok" {
                    break;
                }
                if let Some(e) = l.strip_prefix("error: ") {
                    eprintln!("error: {}: {}", c, e);
                    all_ok = false;
                    break;
                }
                println!("{}", l);
            }
        }
        Ok(all_ok)
    }
    if target.contains('/') {
        let s = std::os::unix::net::UnixStream::connect(target)
            .map_err(|e| format!("connect {}: {}", target, e))?;
        run(s, commands)
    } else {
        let s = std::net::TcpStream::connect(target)
            .map_err(|e| format!("connect {}: {}", target, e))?;
        run(s, commands)
    }
}

/// The front end of `sdnperf-switch run`: one switch, ctl text commands (CPU-port
/// packets wait in the switch's packet-in queue for `packet_in_read`).
pub struct CtlHooks {
    pub sw: Switch,
    pub requests: Option<Inbox<Request>>,
}

impl Hooks for CtlHooks {
    fn switch(&mut self) -> Option<&mut Switch> {
        Some(&mut self.sw)
    }
    fn control(&mut self, fast: &FastPathState) -> Changed {
        match &self.requests {
            Some(inbox) => serve_ctl(inbox, Some(&mut self.sw), fast),
            None => Changed::Nothing,
        }
    }
    fn wake_fd(&self) -> Option<i32> {
        self.requests.as_ref().map(|r| r.fd())
    }
    fn cpu_packet(&mut self, egress_port: u32, bytes: &[u8]) {
        self.sw.queue_packet_in(egress_port, bytes);
    }
}

/// Answers the ctl requests waiting in `inbox` (`fastpath` from the loop's state, the rest
/// by `ctl::execute` on `sw`); says whether forwarding may have changed.
pub fn serve_ctl(
    inbox: &Inbox<Request>,
    mut sw: Option<&mut Switch>,
    fast: &FastPathState,
) -> Changed {
    let mut changed = Changed::Nothing;
    while let Ok(req) = inbox.rx.try_recv() {
        let ans = if req.line.trim() == "fastpath" {
            Ok(fast.status())
        } else if let Some(sw) = sw.as_deref_mut() {
            if changes_forwarding(&req.line) {
                changed = Changed::Forwarding;
            }
            execute(sw, &req.line)
        } else {
            Err("no program loaded yet".into())
        };
        let _ = req.reply.send(ans);
    }
    changed
}
