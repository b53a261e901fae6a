//! Programs of our own (tests/p4ref/*.p4 with .stf) that exercise constructs only the
//! reference p4c emits (header union stacks, extract_VL into a stack, assign_VL, fields
//! wider than 128 bits), compiled by the reference p4c-bm2-ss (a test oracle, never part of
//! the product) and run through their STF tests on our switch.

use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{json, stf};
use std::path::{Path, PathBuf};

/// The reference bundle, found as `sdnperf.tools.find_bmv2(reference=True)` finds it: the
/// one variable `$SDNPERF_BMV2_DIR` (or its deprecated name `$SDNPERF_P4_REFERENCE`) when
/// set, else `../shared/p4-reference` beside the checkout or beside the folder holding it
/// (a worktree in wt/NAME).
fn reference() -> Option<PathBuf> {
    let pinned = ["SDNPERF_BMV2_DIR", "SDNPERF_P4_REFERENCE"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|d| !d.is_empty()));
    let checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let candidates = match pinned {
        Some(d) => vec![PathBuf::from(d)],
        None => vec![
            checkout.join("../shared/p4-reference"),
            checkout.join("../../shared/p4-reference"),
        ],
    };
    candidates
        .into_iter()
        .find(|dir| dir.join("bin/p4c-bm2-ss").exists())
}

#[test]
fn reference_compiled_programs_pass_their_stf() {
    let Some(refdir) = reference() else {
        eprintln!(
            "skipped: the reference P4 tools are not in ../shared/p4-reference \
             (set SDNPERF_BMV2_DIR)"
        );
        return;
    };
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/p4ref");
    let out = std::env::temp_dir().join(format!("sdnperf-p4ref-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut programs: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().map(|x| x == "p4").unwrap_or(false))
        .collect();
    programs.sort();
    assert!(!programs.is_empty());
    let mut failed = vec![];
    for p4 in &programs {
        let json_path = out.join(p4.file_stem().unwrap()).with_extension("json");
        let r = std::process::Command::new(refdir.join("bin/p4c-bm2-ss"))
            .arg("-I")
            .arg(refdir.join("share/p4c/p4include"))
            .arg(p4)
            .arg("-o")
            .arg(&json_path)
            .output()
            .unwrap();
        assert!(
            r.status.success(),
            "p4c-bm2-ss refused {}: {}",
            p4.display(),
            String::from_utf8_lossy(&r.stderr)
        );
        let prog = json::load_file(json_path.to_str().unwrap()).unwrap_or_else(|e| panic!("{}", e));
        let mut eng = Engine::new(prog);
        eng.check_deparse_copy = true; // the deparser also checks headers it copies unmodified
        let mut sw = Switch::new(eng);
        let res = stf::run(
            &mut sw,
            &std::fs::read_to_string(p4.with_extension("stf")).unwrap(),
        );
        if !res.passed {
            failed.push(format!("{}:\n{}", p4.display(), res.report));
        }
    }
    let _ = std::fs::remove_dir_all(&out);
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
