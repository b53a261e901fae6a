//! Every input kept by the fuzzer (fuzz/seeds, including former crashes and
//! hangs) must compile or fail with diagnostics, without panicking, quickly.

use std::time::Instant;

#[test]
fn fuzz_seeds_do_not_crash_or_hang() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return;
    };
    let mut files: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.sort();
    for f in files {
        let text = String::from_utf8_lossy(&std::fs::read(&f).unwrap()).into_owned();
        let t = Instant::now();
        let r = std::panic::catch_unwind(|| {
            p4c::compile_source_unguarded("seed.p4", &text, &p4c::Options::default())
        });
        assert!(r.is_ok(), "{} panics", f.display());
        assert!(
            t.elapsed().as_secs() < 5,
            "{} takes {:?}",
            f.display(),
            t.elapsed()
        );
    }
}
