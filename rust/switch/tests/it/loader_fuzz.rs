//! The loader against mutated real programs: every section the loader reads, given the
//! wrong JSON type, is refused naming its JSON path (it used to load as an empty program).

use crate::common;

use serde_json::Value;

#[test]
fn sections_of_the_wrong_type_are_refused_naming_the_path() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let mut programs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().map(|x| x == "json").unwrap_or(false))
        .collect();
    programs.sort();
    let mut tried = 0;
    for p in programs {
        let orig: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        for key in orig.as_object().unwrap().keys() {
            if !sdnperf_switch::json_shape::SECTIONS.contains(&key.as_str()) {
                continue;
            }
            for wrong in [
                Value::from(5),
                Value::from("x"),
                serde_json::json!({"a": 1}),
            ] {
                let mut m = orig.clone();
                m[key.as_str()] = wrong;
                let e = sdnperf_switch::json::load_str(&m.to_string())
                    .err()
                    .unwrap_or_else(|| panic!("{}: {} loaded", p.display(), key));
                assert!(
                    e.contains(&format!(".{}: expected an array", key)),
                    "{}: {}",
                    p.display(),
                    e
                );
                tried += 1;
            }
        }
    }
    assert!(tried > 50, "{}", tried);
}

/// Random mutations of the real programs (wrong types, broken references, odd widths,
/// deleted keys and elements): the loader returns a program or an error naming the JSON
/// section it failed in, and never panics.
#[test]
fn random_mutations_load_or_fail_naming_the_path_never_panic() {
    let seed = std::env::var("LOADER_FUZZ_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5d9e_7f15);
    let rounds: u32 = std::env::var("LOADER_FUZZ_ROUNDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let mut rng = common::Rng(seed);
    let programs: Vec<(String, Value)> = common::programs()
        .iter()
        .map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            (
                p.display().to_string(),
                serde_json::from_str(&text).unwrap(),
            )
        })
        .collect();
    assert!(programs.len() >= 8);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mut panics, mut unnamed, mut loaded, mut refused) = (vec![], vec![], 0, 0);
    for round in 0..rounds {
        let (name, orig) = &programs[round as usize % programs.len()];
        let mut m = orig.clone();
        let names = strings_in(orig);
        let what: Vec<String> = (0..1 + rng.below(3))
            .map(|_| mutate(&mut m, &names, &mut rng))
            .collect();
        let text = m.to_string();
        match std::panic::catch_unwind(|| sdnperf_switch::json::load_str(&text)) {
            Err(p) => panics.push(format!(
                "{} after {:?}: {}",
                name,
                what,
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            )),
            Ok(Ok(_)) => loaded += 1,
            Ok(Err(e)) => {
                refused += 1;
                if !names_a_section(&e) {
                    unnamed.push(format!("{} after {:?}: {}", name, what, e));
                }
            }
        }
    }
    std::panic::set_hook(default_hook);
    eprintln!("seed {}: {} loaded, {} refused", seed, loaded, refused);
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
    assert!(
        unnamed.is_empty(),
        "{} errors name no JSON section:\n{}",
        unnamed.len(),
        unnamed.join("\n")
    );
    // the mutations must reach past the shape check, and some must break the program
    assert!(
        loaded > 100 && refused > 1000,
        "{} loaded, {} refused",
        loaded,
        refused
    );
}

fn names_a_section(e: &str) -> bool {
    sdnperf_switch::json_shape::SECTIONS
        .iter()
        .any(|s| e.contains(s))
}

/// Every string in the program (names to swap in as broken references).
fn strings_in(v: &Value) -> Vec<String> {
    let mut out = vec![];
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    walk(v, &mut out);
    out
}

/// Paths (as JSON pointers) of every node below the root.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                let p = format!("{}/{}", at, i);
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                let p = format!("{}/{}", at, k.replace('~', "~0").replace('/', "~1"));
                out.push(p.clone());
                pointers(x, p, out);
            }
        }
        _ => {}
    }
}

/// One random mutation of `m`; returns what it did (for the failure message).
fn mutate(m: &mut Value, names: &[String], rng: &mut common::Rng) -> String {
    let mut ps = vec![];
    pointers(m, String::new(), &mut ps);
    let at = ps[rng.below(ps.len())].clone();
    let widths = [
        0u64,
        1,
        7,
        8,
        31,
        64,
        127,
        128,
        129,
        256,
        4096,
        u32::MAX as u64,
        u64::MAX,
    ];
    let new = match rng.below(9) {
        0 => Value::from(widths[rng.below(widths.len())]),
        1 => Value::from(-(rng.below(1000) as i64) - 1),
        2 => Value::from(names[rng.below(names.len())].clone()),
        3 => Value::Null,
        4 => Value::Bool(rng.below(2) == 1),
        5 => serde_json::json!([]),
        6 => serde_json::json!({}),
        7 => Value::from(format!("0x{:x}", rng.next())),
        _ => {
            // delete the key / element
            let (parent, last) = at.rsplit_once('/').unwrap();
            let last = last.replace("~1", "/").replace("~0", "~");
            match m.pointer_mut(parent) {
                Some(Value::Object(o)) => {
                    o.remove(&last);
                }
                Some(Value::Array(a)) => {
                    a.remove(last.parse::<usize>().unwrap());
                }
                _ => {}
            }
            return format!("delete {}", at);
        }
    };
    let what = format!("{} = {}", at, new);
    *m.pointer_mut(&at).unwrap() = new;
    what
}
