//! The loader against mutated real programs: every section the loader reads, given the
//! wrong JSON type, is refused naming its JSON path (it used to load as an empty program).

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
