//! Bad programs: every `errors/STAGE/NAME.p4` must fail with exactly the text
//! in `errors/STAGE/NAME.expected` (file:line:col, message, source line, caret).

use std::path::Path;

#[test]
fn bad_programs_report_the_expected_errors() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/errors");
    let mut n = 0;
    let mut failures = vec![];
    let mut stages: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .filter_map(|e| e.ok())
        .collect();
    stages.sort_by_key(|e| e.path());
    for stage in stages {
        let mut files: Vec<_> = std::fs::read_dir(stage.path())
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        files.sort();
        for p in files
            .into_iter()
            .filter(|p| p.extension().map(|x| x == "p4").unwrap_or(false))
        {
            let rel = format!(
                "{}/{}",
                stage.file_name().to_string_lossy(),
                p.file_name().unwrap().to_string_lossy()
            );
            let text = std::fs::read_to_string(&p).unwrap();
            let opts = p4c::Options {
                defines: vec![],
                include_dirs: vec![stage.path()],
            };
            let expected = std::fs::read_to_string(p.with_extension("expected"))
                .unwrap_or_else(|_| panic!("{} has no .expected file", rel));
            match p4c::compile_source(&rel, &text, &opts) {
                Ok(_) => failures.push(format!("{}: compiled but should fail", rel)),
                Err(d) => {
                    let got = format!("{}\n", d);
                    if got != expected {
                        failures.push(format!(
                            "{}:\n--- expected\n{}--- got\n{}",
                            rel, expected, got
                        ));
                    }
                }
            }
            n += 1;
        }
    }
    assert!(n >= 10, "only {} bad programs", n);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
