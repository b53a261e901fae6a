//! BMv2 JSON emission (format described in behavioral-model's docs/JSON_format.md).

use crate::ir::{
    hexs, hexw, CalcInput, Calculation, Checksum, Conditional, EntryKey, ExtractTarget, FieldW, Ir,
    IrTable, ParseState, ParserOp, Prim, PrimArg, TableEntry, TableKind, TransitionValue, X,
};
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
    let union_stacks: Vec<J> = ir
        .union_stacks
        .iter()
        .enumerate()
        .map(|(i, (n, t, ids))| json!({"name": n, "id": i, "union_type": t, "size": ids.len(), "header_union_ids": ids}))
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
        json!({"name": "parser", "id": 0, "init_state": ir.parser_init,
            "parse_states": ir.parser_states.iter().map(parse_state).collect::<Vec<_>>()}),
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
                "result_target": a.result_target.as_ref().map(|(h, f)| json!([h, f]))})),
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
                "primitives": a.prims.iter().map(prim).collect::<Vec<_>>()})
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
                            json!({"match_type": k.kind.bmv2().name(), "name": k.name, "target": [k.target.0, k.target.1],
                                "mask": k.mask.map(|m| J::String(hexw(m, k.width))).unwrap_or(J::Null)})
                        })
                        .collect();
                    let mut o = json!({
                        "name": t.name, "id": id, "key": key, "match_type": t.match_type.name(), "type": t.kind.bmv2(),
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
                    if t.kind == TableKind::Simple {
                        if let Some((a, data, c)) = &t.default {
                            o["default_entry"] = json!({"action_id": a, "action_const": c, "action_data": data, "action_entry_const": c});
                        }
                    }
                    if t.const_entries {
                        o["entries"] = J::Array(t.entries.iter().map(entry).collect());
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
                        o["selector"] = json!({"algo": algo, "input": input.iter().map(calc_input).collect::<Vec<_>>()});
                    }
                    o
                })
                .collect();
            json!({"name": p.name, "id": pi, "init_table": p.init, "tables": tables,
                "action_profiles": profiles,
                "conditionals": p.conditionals.iter().map(conditional).collect::<Vec<_>>()})
        })
        .collect();
    let field_lists: Vec<J> = ir
        .field_lists
        .iter()
        .enumerate()
        .map(|(i, (n, els))| json!({"id": i + 1, "name": n, "elements": els.iter().map(|(h, f)| field(h, f)).collect::<Vec<_>>()}))
        .collect();
    let learn_lists: Vec<J> = ir
        .digests
        .iter()
        .map(|d| {
            json!({"id": d.id, "name": d.name,
                "elements": d.fields.iter().map(|(_, (h, f), _)| field(h, f)).collect::<Vec<_>>()})
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
        "header_union_stacks": union_stacks,
        "field_lists": field_lists,
        "errors": errors,
        "enums": enums,
        "parsers": parsers,
        "parse_vsets": parse_vsets,
        "deparsers": deparsers,
        "meter_arrays": meters,
        "counter_arrays": counters,
        "register_arrays": registers,
        "calculations": ir.calculations.iter().map(calculation).collect::<Vec<_>>(),
        "learn_lists": learn_lists,
        "actions": actions,
        "pipelines": pipelines,
        "checksums": ir.checksums.iter().map(checksum).collect::<Vec<_>>(),
        "force_arith": [],
        "extern_instances": [],
        "field_aliases": aliases,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn base_next(t: &IrTable) -> J {
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

fn field(h: &str, f: &str) -> J {
    json!({"type": "field", "value": [h, f]})
}

/// An expression operand (`{"type": ..., "value": ...}`).
pub fn expr(x: &X) -> J {
    match x {
        X::Field(h, f) => field(h, f),
        X::Hex(v, n) => json!({"type": "hexstr", "value": hexs(*v, *n)}),
        X::Bool(b) => json!({"type": "bool", "value": b}),
        X::Runtime(i) => json!({"type": "local", "value": i}),
        X::Header(h) => json!({"type": "header", "value": h}),
        X::Stack(h) => json!({"type": "header_stack", "value": h}),
        X::StackField(h, f) => json!({"type": "stack_field", "value": [h, f]}),
        X::Lookahead(o, w) => json!({"type": "lookahead", "value": [o, w]}),
        X::Str(s) => json!({"type": "string", "value": s}),
        X::Num(n) => json!(n),
        X::Op(op, l, r) => json!({"type": "expression", "value": {
            "op": op, "left": l.as_deref().map(expr).unwrap_or(J::Null), "right": expr(r)}}),
        X::Tern(c, a, b) => json!({"type": "expression", "value": {
            "op": "?", "left": expr(a), "right": expr(b), "cond": expr(c)}}),
    }
}

fn param(p: &PrimArg) -> J {
    match p {
        PrimArg::Op(x) => expr(x),
        PrimArg::Expr(x) => json!({"type": "expression", "value": expr(x)}),
        PrimArg::RuntimeData(i) => json!({"type": "runtime_data", "value": i}),
        PrimArg::HeaderUnion(n) => json!({"type": "header_union", "value": n}),
        PrimArg::CounterArray(n) => json!({"type": "counter_array", "value": n}),
        PrimArg::MeterArray(n) => json!({"type": "meter_array", "value": n}),
        PrimArg::RegisterArray(n) => json!({"type": "register_array", "value": n}),
        PrimArg::Calculation(n) => json!({"type": "calculation", "value": n}),
        PrimArg::ParamsVector(v) => {
            json!({"type": "parameters_vector", "value": v.iter().map(expr).collect::<Vec<_>>()})
        }
    }
}

fn params(ps: &[PrimArg]) -> Vec<J> {
    ps.iter().map(param).collect()
}

fn prim(p: &Prim) -> J {
    json!({"op": p.op, "parameters": params(&p.params), "source_info": {"source_fragment": p.source}})
}

fn extract_target(t: &ExtractTarget) -> J {
    match t {
        ExtractTarget::Regular(h) => json!({"type": "regular", "value": h}),
        ExtractTarget::Stack(s) => json!({"type": "stack", "value": s}),
        ExtractTarget::UnionStack(s, m) => json!({"type": "union_stack", "value": [s, m]}),
    }
}

fn parser_op(op: &ParserOp) -> J {
    let (name, ps) = match op {
        ParserOp::Extract(t) => ("extract", vec![extract_target(t)]),
        ParserOp::ExtractVl(t, len) => (
            "extract_VL",
            vec![
                extract_target(t),
                json!({"type": "expression", "value": expr(len)}),
            ],
        ),
        ParserOp::Advance(p) => ("advance", vec![param(p)]),
        ParserOp::Set((h, f), v) => ("set", vec![field(h, f), param(v)]),
        ParserOp::Verify(c, e) => ("verify", vec![expr(c), expr(e)]),
        ParserOp::Primitive(p) => ("primitive", vec![prim(p)]),
    };
    json!({"op": name, "parameters": ps})
}

fn parse_state(s: &ParseState) -> J {
    let transitions: Vec<J> = s
        .transitions
        .iter()
        .map(|t| {
            let (ty, value, mask) = match &t.value {
                TransitionValue::Default => ("default", J::Null, J::Null),
                TransitionValue::Hex(v, m) => (
                    "hexstr",
                    json!(format!("0x{}", v)),
                    m.as_ref()
                        .map(|m| json!(format!("0x{}", m)))
                        .unwrap_or(J::Null),
                ),
                TransitionValue::ValueSet(n) => ("parse_vset", json!(n), J::Null),
            };
            json!({"type": ty, "value": value, "mask": mask, "next_state": t.next})
        })
        .collect();
    json!({"name": s.name, "id": s.id, "parser_ops": s.ops.iter().map(parser_op).collect::<Vec<_>>(),
        "transition_key": s.key.iter().map(expr).collect::<Vec<_>>(), "transitions": transitions})
}

fn conditional(c: &Conditional) -> J {
    json!({"name": c.name, "id": c.id, "source_info": {"source_fragment": c.source},
        "expression": expr(&c.expr), "true_next": c.true_next, "false_next": c.false_next})
}

fn calc_input(i: &CalcInput) -> J {
    match i {
        CalcInput::Field(h, f) => field(h, f),
        CalcInput::Const(v, w) => {
            json!({"type": "hexstr", "value": hexs(*v, false), "bitwidth": w})
        }
        CalcInput::Payload => json!({"type": "payload", "value": null}),
    }
}

fn calculation(c: &Calculation) -> J {
    json!({"name": c.name, "id": c.id, "algo": c.algo,
        "input": c.inputs.iter().map(calc_input).collect::<Vec<_>>()})
}

fn checksum(c: &Checksum) -> J {
    json!({"name": format!("cksum_{}", c.id), "id": c.id, "target": [c.target.0, c.target.1],
        "type": "generic", "calculation": c.calculation, "verify": c.verify, "update": !c.verify,
        "if_cond": c.cond.as_ref().map(expr).unwrap_or(J::Null)})
}

fn entry(e: &TableEntry) -> J {
    let match_key: Vec<J> = e
        .keys
        .iter()
        .map(|(k, w)| match k {
            EntryKey::Exact(v) => json!({"match_type": "exact", "key": hexw(*v, *w)}),
            EntryKey::Lpm(v, pl) => {
                json!({"match_type": "lpm", "key": hexw(*v, *w), "prefix_length": pl})
            }
            EntryKey::Ternary(v, m) => {
                json!({"match_type": "ternary", "key": hexw(*v, *w), "mask": hexw(*m, *w)})
            }
            EntryKey::Range(a, b) => {
                json!({"match_type": "range", "start": hexw(*a, *w), "end": hexw(*b, *w)})
            }
        })
        .collect();
    json!({"source_info": {"source_fragment": e.source}, "match_key": match_key,
        "action_entry": {"action_id": e.action, "action_data": e.data}, "priority": e.priority})
}
