//! The shape of a BMv2 JSON program, checked before `json` compiles it: every section the
//! loader reads has the JSON type it must have, and so do the names, widths and lists
//! inside it. A wrong type is refused naming its JSON path
//! (`header_types[2].fields[1][1]: expected a number (bit width) or "*", got "x"`)
//! instead of loading as an empty or partial program.

use serde_json::Value;

type R<T> = Result<T, String>;

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let t = v.to_string();
    match t.char_indices().nth(60) {
        Some((cut, _)) => format!("{}...", &t[..cut]),
        None => t,
    }
}

fn want(path: &str, what: &str, v: &Value) -> String {
    format!("{}: expected {}, got {} {}", path, what, kind(v), short(v))
}

fn array<'a>(v: &'a Value, path: &str) -> R<&'a [Value]> {
    v.as_array()
        .map(|a| a.as_slice())
        .ok_or_else(|| want(path, "an array", v))
}

/// An optional member that, when present, must be an array.
fn opt_array<'a>(o: &'a Value, key: &str, path: &str) -> R<&'a [Value]> {
    match o.get(key) {
        None | Some(Value::Null) => Ok(&[]),
        Some(v) => array(v, &format!("{}.{}", path, key)),
    }
}

fn object(v: &Value, path: &str) -> R<()> {
    if v.is_object() {
        Ok(())
    } else {
        Err(want(path, "an object", v))
    }
}

fn string(o: &Value, key: &str, path: &str) -> R<()> {
    match o.get(key) {
        Some(Value::String(_)) => Ok(()),
        None => Err(format!("{}: missing \"{}\"", path, key)),
        Some(v) => Err(want(&format!("{}.{}", path, key), "a string", v)),
    }
}

fn opt_string_or_null(o: &Value, key: &str, path: &str) -> R<()> {
    match o.get(key) {
        None | Some(Value::Null) | Some(Value::String(_)) => Ok(()),
        Some(v) => Err(want(&format!("{}.{}", path, key), "a string or null", v)),
    }
}

fn number(o: &Value, key: &str, path: &str, required: bool) -> R<()> {
    match o.get(key) {
        Some(v) if v.is_u64() => Ok(()),
        None if !required => Ok(()),
        None => Err(format!("{}: missing \"{}\"", path, key)),
        Some(v) => Err(want(
            &format!("{}.{}", path, key),
            "a non-negative integer",
            v,
        )),
    }
}

/// Each element of section `key` is an object with a string "name"; `each` checks more.
fn section(j: &Value, key: &str, mut each: impl FnMut(&Value, &str) -> R<()>) -> R<()> {
    for (i, e) in opt_array(j, key, "")?.iter().enumerate() {
        let path = format!("{}[{}]", key, i);
        object(e, &path)?;
        string(e, "name", &path)?;
        each(e, &path)?;
    }
    Ok(())
}

/// Primitive calls: {"op": string, "parameters": array of objects}.
fn calls(list: &[Value], path: &str, op_key: &str) -> R<()> {
    for (i, p) in list.iter().enumerate() {
        let pp = format!("{}[{}]", path, i);
        object(p, &pp)?;
        string(p, op_key, &pp)?;
        for (k, a) in opt_array(p, "parameters", &pp)?.iter().enumerate() {
            object(a, &format!("{}.parameters[{}]", pp, k))?;
        }
    }
    Ok(())
}

/// The top-level sections the loader reads (each an array).
pub const SECTIONS: [&str; 22] = [
    "header_types",
    "headers",
    "header_stacks",
    "header_union_types",
    "header_unions",
    "header_union_stacks",
    "field_lists",
    "errors",
    "enums",
    "parsers",
    "parse_vsets",
    "deparsers",
    "meter_arrays",
    "counter_arrays",
    "register_arrays",
    "calculations",
    "learn_lists",
    "actions",
    "pipelines",
    "checksums",
    "extern_instances",
    "field_aliases",
];

/// Sections every BMv2 program p4c writes has (as arrays, possibly empty): a JSON without
/// them is something else (`{}`, a P4 tutorials' sN-runtime.json) and is refused naming
/// what is missing, instead of loading as a program with no tables.
pub const REQUIRED: [&str; 6] = [
    "header_types",
    "headers",
    "parsers",
    "deparsers",
    "actions",
    "pipelines",
];

fn is_a_program(j: &Value) -> R<()> {
    let missing: Vec<String> = REQUIRED
        .iter()
        .filter(|k| j.get(**k).is_none())
        .map(|k| format!("\"{}\"", k))
        .collect();
    if !missing.is_empty() {
        let hint = if j.get("table_entries").is_some() || j.get("bmv2_json").is_some() {
            " (this looks like a P4Runtime entries file, sN-runtime.json, not a program)"
        } else {
            ""
        };
        return Err(format!(
            "not a BMv2 JSON program: missing {}{}",
            missing.join(", "),
            hint
        ));
    }
    if j["parsers"].as_array().is_some_and(|a| a.is_empty()) {
        return Err("parsers: a BMv2 program needs a parser; this one has none".into());
    }
    let has_ingress = j["pipelines"].as_array().is_some_and(|a| {
        a.iter()
            .any(|p| p.get("name").and_then(|n| n.as_str()) == Some("ingress"))
    });
    if j["pipelines"].is_array() && !has_ingress {
        return Err(
            "pipelines: a BMv2 program needs an \"ingress\" pipeline; this one has none".into(),
        );
    }
    Ok(())
}

pub fn check(j: &Value) -> R<()> {
    object(j, "program")?;
    is_a_program(j)?;
    // top-level sections the loader reads are arrays wherever they appear
    for key in SECTIONS {
        opt_array(j, key, "")?;
    }
    section(j, "header_types", |ht, path| {
        for (i, f) in opt_array(ht, "fields", path)?.iter().enumerate() {
            let fp = format!("{}.fields[{}]", path, i);
            let fa = array(f, &fp)?;
            match fa.first() {
                Some(Value::String(_)) => {}
                Some(v) => return Err(want(&format!("{}[0]", fp), "a string (field name)", v)),
                None => return Err(format!("{}: empty field", fp)),
            }
            match fa.get(1) {
                Some(v) if v.is_u64() || v.as_str() == Some("*") => {}
                Some(v) => {
                    return Err(want(
                        &format!("{}[1]", fp),
                        "a number (bit width) or \"*\"",
                        v,
                    ))
                }
                None => return Err(format!("{}: missing the bit width", fp)),
            }
            if let Some(v) = fa.get(2) {
                // p4c writes 0 for bool fields; BMv2 reads the flag with jsoncpp's asBool
                if !(v.is_boolean() || v.is_u64()) {
                    return Err(want(&format!("{}[2]", fp), "a boolean (signed)", v));
                }
            }
        }
        number(ht, "max_length", path, false)
    })?;
    section(j, "headers", |h, path| string(h, "header_type", path))?;
    section(j, "header_stacks", |h, path| {
        string(h, "header_type", path)?;
        for (i, id) in opt_array(h, "header_ids", path)?.iter().enumerate() {
            if !id.is_u64() {
                return Err(want(
                    &format!("{}.header_ids[{}]", path, i),
                    "a header id",
                    id,
                ));
            }
        }
        Ok(())
    })?;
    section(j, "header_unions", |u, path| {
        opt_array(u, "header_ids", path).map(|_| ())
    })?;
    for (i, e) in opt_array(j, "errors", "")?.iter().enumerate() {
        let p = format!("errors[{}]", i);
        let a = array(e, &p)?;
        if !(a.len() == 2 && a[0].is_string() && a[1].is_u64()) {
            return Err(want(&p, "[name, number]", e));
        }
    }
    section(j, "parsers", |p, path| {
        opt_string_or_null(p, "init_state", path)?;
        for (i, st) in opt_array(p, "parse_states", path)?.iter().enumerate() {
            let sp = format!("{}.parse_states[{}]", path, i);
            object(st, &sp)?;
            string(st, "name", &sp)?;
            calls(
                opt_array(st, "parser_ops", &sp)?,
                &format!("{}.parser_ops", sp),
                "op",
            )?;
            opt_array(st, "transition_key", &sp)?;
            for (k, t) in opt_array(st, "transitions", &sp)?.iter().enumerate() {
                let tp = format!("{}.transitions[{}]", sp, k);
                object(t, &tp)?;
                opt_string_or_null(t, "next_state", &tp)?;
                opt_string_or_null(t, "value", &tp)?;
                opt_string_or_null(t, "mask", &tp)?;
            }
        }
        Ok(())
    })?;
    section(j, "parse_vsets", |v, path| {
        number(v, "compressed_bitwidth", path, false)?;
        number(v, "max_size", path, false)
    })?;
    section(j, "deparsers", |d, path| {
        for (i, h) in opt_array(d, "order", path)?.iter().enumerate() {
            if !h.is_string() {
                return Err(want(&format!("{}.order[{}]", path, i), "a header name", h));
            }
        }
        Ok(())
    })?;
    for key in ["meter_arrays", "counter_arrays", "register_arrays"] {
        section(j, key, |c, path| {
            number(c, "size", path, false)?;
            number(c, "bitwidth", path, false)
        })?;
    }
    section(j, "calculations", |c, path| {
        string(c, "algo", path)?;
        for (i, inp) in opt_array(c, "input", path)?.iter().enumerate() {
            let ip = format!("{}.input[{}]", path, i);
            object(inp, &ip)?;
            string(inp, "type", &ip)?;
        }
        Ok(())
    })?;
    for key in ["learn_lists", "field_lists"] {
        section(j, key, |l, path| opt_array(l, "elements", path).map(|_| ()))?;
    }
    section(j, "actions", |a, path| {
        number(a, "id", path, true)?;
        for (i, r) in opt_array(a, "runtime_data", path)?.iter().enumerate() {
            let rp = format!("{}.runtime_data[{}]", path, i);
            object(r, &rp)?;
            string(r, "name", &rp)?;
            number(r, "bitwidth", &rp, true)?;
        }
        calls(
            opt_array(a, "primitives", path)?,
            &format!("{}.primitives", path),
            "op",
        )
    })?;
    section(j, "pipelines", |p, path| {
        opt_string_or_null(p, "init_table", path)?;
        for (i, t) in opt_array(p, "tables", path)?.iter().enumerate() {
            let tp = format!("{}.tables[{}]", path, i);
            object(t, &tp)?;
            string(t, "name", &tp)?;
            for (k, key) in opt_array(t, "key", &tp)?.iter().enumerate() {
                let kp = format!("{}.key[{}]", tp, k);
                object(key, &kp)?;
                string(key, "match_type", &kp)?;
            }
            for (k, id) in opt_array(t, "action_ids", &tp)?.iter().enumerate() {
                if !id.is_u64() {
                    return Err(want(
                        &format!("{}.action_ids[{}]", tp, k),
                        "an action id",
                        id,
                    ));
                }
            }
            opt_array(t, "entries", &tp)?;
            number(t, "max_size", &tp, false)?;
            if let Some(n) = t.get("next_tables") {
                object(n, &format!("{}.next_tables", tp))?;
            }
            if let Some(d) = t.get("default_entry") {
                object(d, &format!("{}.default_entry", tp))?;
            }
        }
        for (i, c) in opt_array(p, "conditionals", path)?.iter().enumerate() {
            let cp = format!("{}.conditionals[{}]", path, i);
            object(c, &cp)?;
            string(c, "name", &cp)?;
            opt_string_or_null(c, "true_next", &cp)?;
            opt_string_or_null(c, "false_next", &cp)?;
            match c.get("expression") {
                Some(e) if e.is_object() => {}
                Some(e) => return Err(want(&format!("{}.expression", cp), "an object", e)),
                None => return Err(format!("{}: missing \"expression\"", cp)),
            }
        }
        opt_array(p, "action_profiles", path).map(|_| ())
    })?;
    section(j, "checksums", |c, path| {
        string(c, "calculation", path)?;
        opt_array(c, "target", path).map(|_| ())
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::check;

    /// The smallest program the loader takes (every required section, a parser and an
    /// ingress pipeline), with `section` set to `value`.
    fn with(section: &str, value: serde_json::Value) -> serde_json::Value {
        let mut j = serde_json::json!({});
        for k in super::REQUIRED {
            j[k] = serde_json::json!([]);
        }
        j["parsers"] = serde_json::json!([{"name": "parser"}]);
        j["pipelines"] = serde_json::json!([{"name": "ingress"}]);
        j[section] = value;
        j
    }

    #[test]
    fn wrong_section_types_name_the_path() {
        let e = check(&with("header_types", serde_json::json!(5))).unwrap_err();
        assert!(
            e.starts_with(".header_types: expected an array, got a number"),
            "{}",
            e
        );
        let e = check(&with("pipelines", serde_json::json!("x"))).unwrap_err();
        assert!(e.contains(".pipelines: expected an array"), "{}", e);
        let e = check(&with(
            "header_types",
            serde_json::json!([{"name": "h", "fields": [["f", "x"]]}]),
        ))
        .unwrap_err();
        assert!(
            e.starts_with("header_types[0].fields[0][1]: expected a number (bit width)"),
            "{}",
            e
        );
        let e = check(&with(
            "actions",
            serde_json::json!([{"name": "a", "id": 0, "primitives": [{"parameters": []}]}]),
        ))
        .unwrap_err();
        assert_eq!(e, "actions[0].primitives[0]: missing \"op\"");
        assert!(check(&serde_json::json!([]))
            .unwrap_err()
            .starts_with("program: expected an object"));
        let e = check(&serde_json::json!({})).unwrap_err();
        assert!(
            e.starts_with("not a BMv2 JSON program: missing \"header_types\""),
            "{}",
            e
        );
    }
}
