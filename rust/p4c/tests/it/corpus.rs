//! Compiles every corpus program and checks structural properties of the BMv2
//! JSON (names referenced by tables, actions, parsers and checksums exist; ids
//! are unique) and of the P4Info.

use serde_json::Value;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

fn corpus() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().map(|x| x == "p4").unwrap_or(false))
        .collect();
    v.sort();
    v
}

fn names(v: &Value) -> HashSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap().to_string())
        .collect()
}

fn check_json(path: &Path, j: &Value) {
    let ctx = path.display().to_string();
    let header_types = names(&j["header_types"]);
    let headers = names(&j["headers"]);
    for h in j["headers"].as_array().unwrap() {
        assert!(
            header_types.contains(h["header_type"].as_str().unwrap()),
            "{}: header type of {}",
            ctx,
            h
        );
    }
    // field references in the whole document must name a header and a field of its type
    let mut fields: HashSet<(String, String)> = HashSet::new();
    for h in j["headers"].as_array().unwrap() {
        let ht = j["header_types"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == h["header_type"])
            .unwrap();
        for f in ht["fields"].as_array().unwrap() {
            fields.insert((
                h["name"].as_str().unwrap().into(),
                f[0].as_str().unwrap().into(),
            ));
        }
        fields.insert((h["name"].as_str().unwrap().into(), "$valid$".into()));
    }
    fn walk(v: &Value, f: &mut dyn FnMut(&Value)) {
        f(v);
        match v {
            Value::Array(a) => a.iter().for_each(|x| walk(x, f)),
            Value::Object(o) => o.values().for_each(|x| walk(x, f)),
            _ => {}
        }
    }
    walk(j, &mut |v| {
        if v.get("type") == Some(&Value::String("field".into())) {
            let a = v["value"].as_array().unwrap();
            let k = (
                a[0].as_str().unwrap().to_string(),
                a[1].as_str().unwrap().to_string(),
            );
            assert!(
                fields.contains(&k),
                "{}: unknown field reference {:?}",
                ctx,
                k
            );
        }
        if v.get("type") == Some(&Value::String("header".into())) {
            assert!(
                headers.contains(v["value"].as_str().unwrap()),
                "{}: unknown header {}",
                ctx,
                v
            );
        }
    });
    // actions
    let actions = j["actions"].as_array().unwrap();
    let ids: HashSet<i64> = actions.iter().map(|a| a["id"].as_i64().unwrap()).collect();
    assert_eq!(ids.len(), actions.len(), "{}: action ids unique", ctx);
    // pipelines
    let mut table_ids = HashSet::new();
    for p in j["pipelines"].as_array().unwrap() {
        let mut nodes: HashSet<String> = names(&p["tables"]);
        nodes.extend(names(&p["conditionals"]));
        if let Some(i) = p["init_table"].as_str() {
            assert!(nodes.contains(i), "{}: init_table {}", ctx, i);
        }
        for t in p["tables"].as_array().unwrap() {
            assert!(
                table_ids.insert(t["id"].as_i64().unwrap()),
                "{}: table ids unique",
                ctx
            );
            let acts: Vec<String> = t["actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            for (i, id) in t["action_ids"].as_array().unwrap().iter().enumerate() {
                let a = actions
                    .iter()
                    .find(|a| a["id"] == *id)
                    .expect("action id exists");
                assert_eq!(
                    a["name"].as_str().unwrap(),
                    acts[i],
                    "{}: action ids/names agree",
                    ctx
                );
            }
            for (k, n) in t["next_tables"].as_object().unwrap() {
                assert!(
                    k == "__HIT__" || k == "__MISS__" || acts.contains(k),
                    "{}: next_tables key {}",
                    ctx,
                    k
                );
                if let Some(n) = n.as_str() {
                    assert!(nodes.contains(n), "{}: next node {}", ctx, n);
                }
            }
            if let Some(d) = t.get("default_entry") {
                let a = actions
                    .iter()
                    .find(|a| a["id"] == d["action_id"])
                    .expect("default action exists");
                assert_eq!(
                    a["runtime_data"].as_array().unwrap().len(),
                    d["action_data"].as_array().unwrap().len(),
                    "{}: default action data",
                    ctx
                );
            }
            let mt = t["match_type"].as_str().unwrap();
            for k in t["key"].as_array().unwrap() {
                let km = k["match_type"].as_str().unwrap();
                match km {
                    "range" => assert_eq!(mt, "range"),
                    "ternary" => assert!(mt == "ternary" || mt == "range"),
                    "lpm" => assert!(mt != "exact"),
                    _ => {}
                }
            }
        }
        for c in p["conditionals"].as_array().unwrap() {
            for k in ["true_next", "false_next"] {
                if let Some(n) = c[k].as_str() {
                    assert!(nodes.contains(n), "{}: conditional next {}", ctx, n);
                }
            }
        }
    }
    // parser
    for p in j["parsers"].as_array().unwrap() {
        let states = names(&p["parse_states"]);
        // a repeated name makes every transition to it go to one of the copies
        assert_eq!(
            states.len(),
            p["parse_states"].as_array().unwrap().len(),
            "{}: parser state names unique",
            ctx
        );
        assert!(states.contains(p["init_state"].as_str().unwrap()));
        for s in p["parse_states"].as_array().unwrap() {
            for t in s["transitions"].as_array().unwrap() {
                if let Some(n) = t["next_state"].as_str() {
                    assert!(states.contains(n), "{}: next state {}", ctx, n);
                }
            }
        }
    }
    for d in j["deparsers"].as_array().unwrap() {
        for h in d["order"].as_array().unwrap() {
            assert!(
                headers.contains(h.as_str().unwrap()),
                "{}: deparser header {}",
                ctx,
                h
            );
        }
    }
    let calcs = names(&j["calculations"]);
    for c in j["checksums"].as_array().unwrap() {
        assert!(
            calcs.contains(c["calculation"].as_str().unwrap()),
            "{}: checksum calculation",
            ctx
        );
    }
}

#[test]
fn every_corpus_program_compiles_to_consistent_json() {
    let progs = corpus();
    assert!(!progs.is_empty());
    for p in progs {
        let out = match p4c::compile_file(&p, &p4c::Options::default()) {
            Ok(o) => o,
            Err(d) => panic!("{} failed to compile:\n{}", p.display(), d),
        };
        let j: Value = serde_json::from_str(&out.bmv2_json).unwrap();
        check_json(&p, &j);
        assert!(out.p4info_text.contains("pkg_info"));
        assert!(!out.p4info_binary.is_empty());
        let stf = p.with_extension("stf");
        assert!(stf.exists(), "{} has no STF test", p.display());
    }
}
