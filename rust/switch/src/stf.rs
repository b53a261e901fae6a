//! STF packet tests on in-memory ports (no kernel involvement), with a virtual clock.
//! Commands: packet, expect (with `*` don't-care nibbles and `$` end marker), add,
//! setdefault, mirroring_add, mc_mgrp_create, mc_node_create, mc_node_associate, wait;
//! plus any control command of `ctl` (register_write, set_queue_rate, ...).
//!
//! Checking (as p4c's bmv2 STF runner does): packets are compared per port, in order;
//! a port with expectations must receive exactly the expected packets; packets on ports
//! without expectations are reported but not failures. Without `$`, the received packet
//! may be longer than the expected bytes.

use crate::ctl::{self, parse_key, parse_value, KeyVal};
use crate::switch::Switch;
use std::collections::BTreeMap;

#[derive(Debug, Clone)]
pub struct Expect {
    pub line: usize,
    /// nibbles: Some(v) or None for don't-care
    pub nibbles: Vec<Option<u8>>,
    pub exact_len: bool,
}

pub struct StfResult {
    pub passed: bool,
    pub report: String,
}

fn hex_nibbles(tokens: &[&str], line: usize) -> Result<(Vec<Option<u8>>, bool), String> {
    let mut nib = vec![];
    let mut exact = false;
    for t in tokens {
        for c in t.chars() {
            match c {
                '$' => exact = true,
                '*' => nib.push(None),
                c if c.is_ascii_hexdigit() => nib.push(Some(c.to_digit(16).unwrap() as u8)),
                _ => {
                    return Err(format!(
                        "line {}: bad character '{}' in packet data",
                        line, c
                    ))
                }
            }
        }
    }
    Ok((nib, exact))
}

fn to_bytes(n: &[Option<u8>], line: usize) -> Result<Vec<u8>, String> {
    if !n.len().is_multiple_of(2) {
        return Err(format!("line {}: odd number of hex digits", line));
    }
    Ok(n.chunks(2)
        .map(|c| (c[0].unwrap_or(0) << 4) | c[1].unwrap_or(0))
        .collect())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{:02X}", x)).collect()
}

fn fmt_expect(e: &Expect) -> String {
    let mut s: String = e
        .nibbles
        .iter()
        .map(|n| match n {
            Some(v) => format!("{:X}", v),
            None => "*".into(),
        })
        .collect();
    if e.exact_len {
        s.push('$');
    }
    s
}

/// Compares; returns None if it matches, else a description with the first differing byte.
fn compare(e: &Expect, got: &[u8]) -> Option<String> {
    let need_nibbles = e.nibbles.len();
    if got.len() * 2 < need_nibbles {
        return Some(format!(
            "received packet is shorter ({} bytes) than expected ({} bytes)",
            got.len(),
            need_nibbles / 2
        ));
    }
    if e.exact_len && got.len() * 2 != need_nibbles {
        return Some(format!(
            "length differs: received {} bytes, expected exactly {}",
            got.len(),
            need_nibbles / 2
        ));
    }
    for (i, n) in e.nibbles.iter().enumerate() {
        if let Some(v) = n {
            let b = got[i / 2];
            let g = if i % 2 == 0 { b >> 4 } else { b & 0xf };
            if g != *v {
                return Some(format!("first difference at byte {} (nibble {})", i / 2, i));
            }
        }
    }
    None
}

/// One argument of an STF action call: `NAME:VALUE` or a bare value.
type StfArg = (Option<String>, u128);

/// Splits `name(args)` into the action name and its arguments (named or positional).
fn parse_action_call(s: &str, line: usize) -> Result<(String, Vec<StfArg>), String> {
    let (name, rest) = match s.find('(') {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, ")"),
    };
    let rest = rest.trim_end();
    let inner = rest
        .strip_suffix(')')
        .ok_or_else(|| format!("line {}: missing ')' in action call", line))?;
    let mut args = vec![];
    for a in inner.split(',').map(|x| x.trim()).filter(|x| !x.is_empty()) {
        let (name, v) = match a.split_once(':') {
            Some((n, v)) if !a.starts_with("0x") => (Some(n.trim().to_string()), v),
            _ => (None, a),
        };
        args.push((
            name,
            parse_value(v).map_err(|e| format!("line {}: {}", line, e))?,
        ));
    }
    Ok((name.trim().to_string(), args))
}

/// The action data in the action's parameter order: named arguments may come in any order
/// (STF files name them, e.g. `setb1(val:0x7f, port:2)` for `action setb1(port, val)`).
fn action_data(
    sw: &Switch,
    table: &str,
    action: &str,
    args: &[StfArg],
) -> Result<Vec<u128>, String> {
    let p = sw.program();
    let positional = args.iter().any(|(n, _)| n.is_none());
    let a = match p.table_by_name(table) {
        Some(ti) => &p.actions[ctl::table_action(p, ti, action)? as usize],
        // positional arguments need no parameter names: the control API checks the table
        None if positional => return Ok(args.iter().map(|(_, v)| *v).collect()),
        None => return Err(format!("unknown table {}", table)),
    };
    // A value wider than its parameter would be cut to its low bits without a word.
    let fits = |pname: &str, width: u32, v: u128| -> Result<u128, String> {
        if width < 128 && v >> width != 0 {
            return Err(format!(
                "action {}: value {:#x} for parameter {} is wider than its {} bits",
                a.name, v, pname, width
            ));
        }
        Ok(v)
    };
    if positional {
        return args
            .iter()
            .zip(a.params.iter())
            .map(|((_, v), (pname, width))| fits(pname, *width, *v))
            .collect();
    }
    let mut data = vec![];
    for (pname, width) in &a.params {
        let v = args
            .iter()
            .find(|(n, _)| n.as_deref() == Some(pname.as_str()))
            .ok_or_else(|| format!("action {}: no argument {}", a.name, pname))?;
        data.push(fits(pname, *width, v.1)?);
    }
    if let Some((Some(n), _)) = args.iter().find(|(n, _)| {
        !a.params
            .iter()
            .any(|(p, _)| Some(p.as_str()) == n.as_deref())
    }) {
        return Err(format!("action {} has no parameter {}", a.name, n));
    }
    Ok(data)
}

/// `add TABLE [PRIORITY] KEY:VALUE ... ACTION(ARGS)`
fn stf_add(sw: &mut Switch, rest: &str, line: usize) -> Result<(), String> {
    let ctx = |e: String| format!("line {}: {}", line, e);
    let paren = rest.find('(').unwrap_or(rest.len());
    let head_end = rest[..paren]
        .rfind(char::is_whitespace)
        .ok_or_else(|| ctx("add: missing action".into()))?;
    let head: Vec<&str> = rest[..head_end].split_whitespace().collect();
    let (aname, args) = parse_action_call(rest[head_end..].trim(), line)?;
    let table = head
        .first()
        .ok_or_else(|| ctx("add: missing table".into()))?;
    let mut i = 1;
    let mut prio = None;
    if let Some(t) = head.get(1) {
        if !t.contains(':') {
            // an STF priority is higher-wins (p4c's BMv2 driver passes 10000 - p to the
            // CLI); the engine follows BMv2, where the lower number wins
            prio = Some(-(parse_value(t).map_err(ctx)? as i64));
            i = 2;
        }
    }
    let ti = sw
        .eng
        .prog
        .table_by_name(table)
        .ok_or_else(|| ctx(format!("unknown table {}", table)))?;
    let specs = sw.eng.prog.tables[ti].keys.clone();
    let mut keys: Vec<Option<KeyVal>> = vec![None; specs.len()];
    for kv in &head[i..] {
        let (kn, v) = kv
            .rsplit_once(':')
            .ok_or_else(|| ctx(format!("key {} must be NAME:VALUE", kv)))?;
        // names may themselves contain ':' only in MAC/IPv6 values; split at the first ':' after the name
        let (kn, v) = match kv.find(':') {
            Some(p)
                if specs
                    .iter()
                    .any(|s| s.name == kv[..p] || s.name.ends_with(&kv[..p])) =>
            {
                (&kv[..p], &kv[p + 1..])
            }
            _ => (kn, v),
        };
        let names: Vec<&str> = specs.iter().map(|s| s.name.as_str()).collect();
        let ki = crate::pipeline::find_by_suffix(names.iter().copied(), kn)
            .or_else(|| {
                names
                    .iter()
                    .position(|n| n.replace("$valid$", "isValid()") == kn)
            })
            .or_else(|| {
                crate::pipeline::find_by_suffix(names.iter().copied(), &stack_index_name(kn))
            })
            .ok_or_else(|| {
                ctx(format!(
                    "table {} has no key {} (keys: {})",
                    table,
                    kn,
                    names.join(", ")
                ))
            })?;
        keys[ki] = Some(
            parse_key(v, specs[ki].kind, specs[ki].width)
                .map_err(|e| ctx(format!("key {}: {}", kn, e)))?,
        );
    }
    let keys: Vec<KeyVal> = keys
        .into_iter()
        .enumerate()
        .map(|(i, k)| {
            k.unwrap_or(KeyVal {
                value: 0,
                aux: 0,
                prefix: if specs[i].kind == crate::pipeline::MatchKind::Lpm {
                    Some(0)
                } else {
                    None
                },
            })
        })
        .collect();
    let data = action_data(sw, table, &aname, &args).map_err(ctx)?;
    ctl::add_entry(sw, table, &keys, &aname, &data, prio)
        .map(|_| ())
        .map_err(ctx)
}

/// Runs an STF test: it must send at least one packet (a test that sends none checks
/// nothing, and is refused).
pub fn run(sw: &mut Switch, text: &str) -> StfResult {
    run_text(sw, text, true)
}

/// Runs STF set-up commands only (table entries, groups, ...): no packet required, for
/// callers that drive the packets themselves.
pub fn setup(sw: &mut Switch, text: &str) -> StfResult {
    run_text(sw, text, false)
}

fn run_text(sw: &mut Switch, text: &str, require_packets: bool) -> StfResult {
    let mut report = String::new();
    let mut ok = true;
    let mut now: u64 = 1_000_000;
    let mut expects: BTreeMap<u32, Vec<Expect>> = BTreeMap::new();
    let mut outputs: BTreeMap<u32, Vec<Vec<u8>>> = BTreeMap::new();
    let mut buf = Vec::new();
    let mut packets = 0;
    let mut drain = |sw: &mut Switch,
                     now: &mut u64,
                     outputs: &mut BTreeMap<u32, Vec<Vec<u8>>>,
                     until_idle: bool| {
        let mut guard = 0;
        loop {
            sw.service(*now);
            for j in sw.take_ready() {
                j.out_bytes(&mut buf);
                outputs.entry(j.egress_port).or_default().push(buf.clone());
                sw.eng.recycle(j);
            }
            guard += 1;
            if !until_idle || !sw.pending() || guard > 1_000_000 {
                break;
            }
            match sw.next_deadline() {
                Some(t) if t > *now => *now = t,
                _ => *now += 1000,
            }
        }
    };
    for (ln0, raw) in text.lines().enumerate() {
        let line = ln0 + 1;
        let l = match raw.find('#') {
            Some(i) => &raw[..i],
            None => raw,
        }
        .trim();
        if l.is_empty() {
            continue;
        }
        let (cmd, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        let rest = rest.trim();
        let res: Result<(), String> = match cmd.to_ascii_lowercase().as_str() {
            "packet" => {
                packets += 1; // a packet line, sent or refused: the test is not empty
                let t: Vec<&str> = rest.split_whitespace().collect();
                (|| {
                    let port = parse_value(t.first().ok_or("packet: missing port")?)? as u32;
                    let (n, _) = hex_nibbles(&t[1..], line)?;
                    if n.is_empty() {
                        return Err(format!("packet {}: no packet bytes after the port", port));
                    }
                    if n.iter().any(|x| x.is_none()) {
                        return Err("packet data cannot contain '*'".to_string());
                    }
                    let bytes = to_bytes(&n, line)?;
                    now += 1000;
                    sw.receive(port, &bytes, None, now);
                    drain(sw, &mut now, &mut outputs, false);
                    Ok(())
                })()
                .map_err(|e: String| at_line(line, e))
            }
            "expect" => {
                let t: Vec<&str> = rest.split_whitespace().collect();
                (|| {
                    let port = parse_value(t.first().ok_or("expect: missing port")?)? as u32;
                    let (nibbles, exact_len) = hex_nibbles(&t[1..], line)?;
                    expects.entry(port).or_default().push(Expect {
                        line,
                        nibbles,
                        exact_len,
                    });
                    Ok(())
                })()
                .map_err(|e: String| at_line(line, e))
            }
            "add" => stf_add(sw, rest, line),
            "setdefault" => {
                let sp = rest.split_once(char::is_whitespace);
                match sp {
                    None => Err(format!("line {}: setdefault TABLE ACTION(ARGS)", line)),
                    Some((table, call)) => {
                        parse_action_call(call.trim(), line).and_then(|(a, args)| {
                            action_data(sw, table, &a, &args)
                                .and_then(|data| ctl::set_default(sw, table, &a, &data))
                                .map_err(|e| format!("line {}: {}", line, e))
                        })
                    }
                }
            }
            "wait" => {
                drain(sw, &mut now, &mut outputs, true);
                Ok(())
            }
            "remove" | "check_counter" | "expect_digest" => Err(format!(
                "line {}: STF command {} is not supported",
                line, cmd
            )),
            _ => match ctl::execute(sw, l) {
                Ok(out) => {
                    // show what inspection commands print (table_dump, register_read, stats ...)
                    let quiet = [
                        "Entry has been added",
                        "node was created",
                        "Member has been created",
                        "Group has been created",
                    ];
                    if !out.is_empty() && !quiet.iter().any(|q| out.starts_with(q)) {
                        for o in out.lines() {
                            report.push_str(&format!("line {}: {}\n", line, o));
                        }
                    }
                    Ok(())
                }
                Err(e) => Err(format!("line {}: {}", line, e)),
            },
        };
        if let Err(e) = res {
            ok = false;
            report.push_str(&format!("ERROR {}\n", e));
        }
    }
    if require_packets && packets == 0 {
        ok = false;
        report.push_str(
            "ERROR the test sends no packet (no `packet PORT BYTES` line): it checks nothing\n",
        );
    }
    drain(sw, &mut now, &mut outputs, true);
    // compare
    let mut checked = 0;
    for (port, exp) in &expects {
        let got = outputs.get(port).map(|v| v.as_slice()).unwrap_or(&[]);
        for (i, e) in exp.iter().enumerate() {
            match got.get(i) {
                None => {
                    ok = false;
                    report.push_str(&format!(
                        "FAIL port {}: expected packet #{} (line {}) was not received\n  expected {}\n",
                        port,
                        i + 1,
                        e.line,
                        fmt_expect(e)
                    ));
                }
                Some(g) => {
                    if let Some(why) = compare(e, g) {
                        ok = false;
                        report.push_str(&format!(
                            "FAIL port {} packet #{} (line {}): {}\n  expected {}\n  received {}\n",
                            port,
                            i + 1,
                            e.line,
                            why,
                            fmt_expect(e),
                            hex(g)
                        ));
                    } else {
                        checked += 1;
                    }
                }
            }
        }
        if got.len() > exp.len() {
            ok = false;
            for (i, g) in got.iter().enumerate().skip(exp.len()) {
                report.push_str(&format!(
                    "FAIL port {}: unexpected packet #{}\n  received {}\n",
                    port,
                    i + 1,
                    hex(g)
                ));
            }
        }
    }
    for (port, got) in &outputs {
        if !expects.contains_key(port) {
            report.push_str(&format!(
                "note: {} packet(s) on port {} with no expectations (not checked)\n",
                got.len(),
                port
            ));
        }
    }
    report.push_str(&format!(
        "{}: {} expectation(s) held\n",
        if ok { "PASS" } else { "FAIL" },
        checked
    ));
    StfResult { passed: ok, report }
}

/// `line N: error`, once (hex_nibbles already names the line).
fn at_line(line: usize, e: String) -> String {
    if e.starts_with("line ") {
        e
    } else {
        format!("line {}: {}", line, e)
    }
}

/// p4c's STF files name a stack element `extra$0` where the JSON says `extra[0]`.
fn stack_index_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 2);
    let mut chars = name.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek().is_some_and(|d| d.is_ascii_digit()) {
            out.push('[');
            while let Some(d) = chars.next_if(|d| d.is_ascii_digit()) {
                out.push(d);
            }
            out.push(']');
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod stack_name_tests {
    #[test]
    fn stack_elements_named_the_p4c_stf_way() {
        assert_eq!(super::stack_index_name("extra$0.h"), "extra[0].h");
        assert_eq!(super::stack_index_name("a$12.b$valid$"), "a[12].b$valid$");
    }
}
