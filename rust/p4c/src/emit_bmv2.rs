//! BMv2 JSON emission (format described in behavioral-model's docs/JSON_format.md).

use crate::ir::{FieldW, Ir};
use serde_json::{json, Value as J};

pub fn emit(ir: &Ir, program: &str) -> String {
    let header_types: Vec<J> = ir
        .header_types
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let fields: Vec<J> = h
                .fields
                .iter()
                .map(|(n, w)| match w {
                    FieldW::Fixed(w, s) => json!([n, w, s]),
                    FieldW::Var(_) => json!([n, "*"]),
                })
                .collect();
            let mut o = json!({"name": h.name, "id": i, "fields": fields});
            if let Some((vn, max)) = h.fields.iter().find_map(|(n, w)| {
                if let FieldW::Var(m) = w {
                    Some((n, *m))
                } else {
                    None
                }
            }) {
                let fixed: u32 = h
                    .fields
                    .iter()
                    .map(|(_, w)| if let FieldW::Fixed(w, _) = w { *w } else { 0 })
                    .sum();
                // Length comes from extract_VL; the header type records the maximum.
                let _ = vn;
                o["length_exp"] = J::Null;
                o["max_length"] = json!((fixed + max).div_ceil(8));
            }
            o
        })
        .collect();
    let headers: Vec<J> = ir
        .headers
        .iter()
        .enumerate()
        .map(|(i, h)| json!({"name": h.name, "id": i, "header_type": h.ty, "metadata": h.metadata, "pi_omit": true}))
        .collect();
    let stacks: Vec<J> = ir
        .stacks
        .iter()
        .enumerate()
        .map(|(i, (n, t, ids))| json!({"name": n, "id": i, "header_type": t, "size": ids.len(), "header_ids": ids}))
        .collect();
    let union_types: Vec<J> = ir
        .union_types
        .iter()
        .enumerate()
        .map(|(i, (n, ms))| json!({"name": n, "id": i, "headers": ms.iter().map(|(a, b)| json!([a, b])).collect::<Vec<_>>()}))
        .collect();
    let unions: Vec<J> = ir
        .unions
        .iter()
        .enumerate()
        .map(|(i, (n, t, ids))| json!({"name": n, "id": i, "union_type": t, "header_ids": ids, "pi_omit": true}))
        .collect();
    let errors: Vec<J> = ir
        .errors
        .iter()
        .enumerate()
        .map(|(i, e)| json!([e, i]))
        .collect();
    let enums: Vec<J> = ir
        .enums
        .iter()
        .map(|(n, ms)| json!({"name": n, "entries": ms.iter().map(|(m, v)| json!([m, *v as u64])).collect::<Vec<_>>()}))
        .collect();
    let parsers = vec![
        json!({"name": "parser", "id": 0, "init_state": ir.parser_init, "parse_states": ir.parser_states}),
    ];
    let parse_vsets: Vec<J> = ir
        .value_sets
        .iter()
        .enumerate()
        .map(|(i, v)| json!({"name": v.name, "id": i, "compressed_bitwidth": v.width, "max_size": v.size}))
        .collect();
    let deparsers =
        vec![json!({"name": "deparser", "id": 0, "order": ir.deparser, "primitives": []})];
    let mut meters = vec![];
    let mut counters = vec![];
    let mut registers = vec![];
    for a in &ir.arrays {
        match a.kind {
            "counter" => counters.push(json!({"name": a.name, "id": counters.len(), "is_direct": a.direct_table.is_some(),
                "binding": a.direct_table, "size": a.size})),
            "meter" => meters.push(json!({"name": a.name, "id": meters.len(), "is_direct": a.direct_table.is_some(),
                "binding": a.direct_table, "size": a.size, "rate_count": 2, "type": if a.unit == "bytes" { "bytes" } else { "packets" },
                "result_target": a.result_target})),
            _ => registers.push(json!({"name": a.name, "id": registers.len(), "size": a.size, "bitwidth": a.bitwidth})),
        }
    }
    let actions: Vec<J> = ir
        .actions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            json!({"name": a.name, "id": i,
                "runtime_data": a.params.iter().map(|(n, w, _)| json!({"name": n, "bitwidth": w})).collect::<Vec<_>>(),
                "primitives": a.prims})
        })
        .collect();
    let mut table_id = 0;
    let mut prof_id = 0;
    let pipelines: Vec<J> = ir
        .pipelines
        .iter()
        .enumerate()
        .map(|(pi, p)| {
            let tables: Vec<J> = p
                .tables
                .iter()
                .map(|t| {
                    let id = table_id;
                    table_id += 1;
                    let key: Vec<J> = t
                        .keys
                        .iter()
                        .map(|k| {
                            json!({"match_type": k.match_type, "name": k.name, "target": k.target,
                                "mask": k.mask.map(|m| J::String(crate::ir::hexw(m, k.width))).unwrap_or(J::Null)})
                        })
                        .collect();
                    let mut o = json!({
                        "name": t.name, "id": id, "key": key, "match_type": t.match_type, "type": t.kind,
                        "max_size": t.size, "with_counters": t.with_counters, "support_timeout": t.support_timeout,
                        "direct_meters": t.direct_meter,
                        "action_ids": t.actions,
                        "actions": t.actions.iter().map(|a| ir.actions[*a].name.clone()).collect::<Vec<_>>(),
                        "base_default_next": base_next(t),
                        "next_tables": t.next_tables,
                    });
                    if let Some(p) = &t.profile {
                        o["action_profile"] = json!(p);
                    }
                    if t.kind == "simple" {
                        if let Some((a, data, c)) = &t.default {
                            o["default_entry"] = json!({"action_id": a, "action_const": c, "action_data": data, "action_entry_const": c});
                        }
                    }
                    if t.const_entries {
                        o["entries"] = json!(t.entries);
                    }
                    o
                })
                .collect();
            let profiles: Vec<J> = p
                .profiles
                .iter()
                .map(|pr| {
                    let id = prof_id;
                    prof_id += 1;
                    let mut o = json!({"name": pr.name, "id": id, "max_size": pr.size});
                    if let Some((algo, input)) = &pr.selector {
                        o["selector"] = json!({"algo": algo, "input": input});
                    }
                    o
                })
                .collect();
            json!({"name": p.name, "id": pi, "init_table": p.init, "tables": tables,
                "action_profiles": profiles, "conditionals": p.conditionals})
        })
        .collect();
    let field_lists: Vec<J> = ir
        .field_lists
        .iter()
        .enumerate()
        .map(|(i, (n, els))| json!({"id": i + 1, "name": n, "elements": els}))
        .collect();
    let learn_lists: Vec<J> = ir
        .digests
        .iter()
        .map(|d| {
            json!({"id": d.id, "name": d.name,
                "elements": d.fields.iter().map(|(_, f, _)| json!({"type": "field", "value": f})).collect::<Vec<_>>()})
        })
        .collect();
    let aliases: Vec<J> = ir
        .field_aliases
        .iter()
        .map(|(a, h, f)| json!([a, [h, f]]))
        .collect();
    let doc = json!({
        "__meta__": {"version": [2, 23], "compiler": "sdnperf-p4c"},
        "program": program,
        "header_types": header_types,
        "headers": headers,
        "header_stacks": stacks,
        "header_union_types": union_types,
        "header_unions": unions,
        "header_union_stacks": [],
        "field_lists": field_lists,
        "errors": errors,
        "enums": enums,
        "parsers": parsers,
        "parse_vsets": parse_vsets,
        "deparsers": deparsers,
        "meter_arrays": meters,
        "counter_arrays": counters,
        "register_arrays": registers,
        "calculations": ir.calculations,
        "learn_lists": learn_lists,
        "actions": actions,
        "pipelines": pipelines,
        "checksums": ir.checksums,
        "force_arith": [],
        "extern_instances": [],
        "field_aliases": aliases,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn base_next(t: &crate::ir::IrTable) -> J {
    // Next node when the action is not listed: take the common next, if any.
    let mut it = t.next_tables.iter().filter(|(k, _)| !k.starts_with("__"));
    match it.next() {
        Some((_, v)) => json!(v),
        None => t
            .next_tables
            .get("__MISS__")
            .map(|v| json!(v))
            .unwrap_or(J::Null),
    }
}
