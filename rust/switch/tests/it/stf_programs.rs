//! Runs every hand-written program in tests/programs with its STF test, fuzzes every
//! program with random and truncated packets, and (when built with the `p4` feature and
//! the compiler corpus exists) runs the compiler corpus through the STF runner.

use crate::common;

use crate::common::{programs, Rng};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{json, stf};

/// A switch whose deparser also checks every header it copies unmodified.
fn checked_switch(prog: sdnperf_switch::pipeline::Program) -> Switch {
    let mut eng = Engine::new(prog);
    eng.check_deparse_copy = true;
    Switch::new(eng)
}

#[test]
fn hand_written_programs_pass_their_stf() {
    let mut failed = vec![];
    let progs = programs();
    assert!(progs.len() >= 8, "expected the hand-written programs");
    for p in &progs {
        let prog = json::load_file(p.to_str().unwrap()).unwrap_or_else(|e| panic!("{}", e));
        let stf_text = std::fs::read_to_string(p.with_extension("stf")).unwrap();
        let mut sw = checked_switch(prog);
        let r = stf::run(&mut sw, &stf_text);
        if !r.passed {
            failed.push(format!("{}:\n{}", p.display(), r.report));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

fn fuzz_one(
    prog: sdnperf_switch::pipeline::Program,
    stf_text: &str,
    rng: &mut Rng,
    deadline: std::time::Instant,
) {
    let mut sw = checked_switch(prog);
    // install the program's entries (and run its test once)
    let _ = stf::run(&mut sw, stf_text);
    // packets taken from the STF file (to reach deep parser states), then mutated
    let seeds: Vec<Vec<u8>> = common::stf_packets(stf_text)
        .into_iter()
        .map(|(_, p)| p)
        .collect();
    let mut now = 1_000_000_000u64;
    for i in 0..20_000u32 {
        let pkt: Vec<u8> = if !seeds.is_empty() && i % 2 == 0 {
            let s = &seeds[(rng.next() as usize) % seeds.len()];
            let mut v = s.clone();
            let cut = (rng.next() as usize) % (v.len() + 1);
            v.truncate(cut);
            for _ in 0..(rng.next() % 4) {
                if !v.is_empty() {
                    let k = (rng.next() as usize) % v.len();
                    v[k] = rng.next() as u8;
                }
            }
            v
        } else {
            let n = (rng.next() % 200) as usize;
            (0..n).map(|_| rng.next() as u8).collect()
        };
        let port = (rng.next() % 600) as u32;
        now += 1000;
        sw.receive(port, &pkt, None, now);
        sw.service(now);
        for j in sw.take_ready() {
            sw.recycle(j);
        }
        if std::time::Instant::now() > deadline {
            break;
        }
    }
}

/// Every hand-written program and (with the `p4` feature) every corpus program that
/// compiles gets random and truncated/mutated packets on random ports; any panic fails.
#[test]
fn fuzz_random_and_truncated_packets_never_crash() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    let mut cases: Vec<(sdnperf_switch::pipeline::Program, String)> = vec![];
    for p in programs() {
        cases.push((
            json::load_file(p.to_str().unwrap()).unwrap(),
            std::fs::read_to_string(p.with_extension("stf")).unwrap(),
        ));
    }
    #[cfg(feature = "p4")]
    {
        for p in common::corpus() {
            if let Ok(prog) = sdnperf_switch::load_program(p.to_str().unwrap()) {
                cases.push((
                    prog,
                    std::fs::read_to_string(p.with_extension("stf")).unwrap_or_default(),
                ));
            }
        }
    }
    let per = std::time::Duration::from_millis(4000 / cases.len().max(1) as u64);
    for (prog, text) in cases {
        fuzz_one(prog, &text, &mut rng, std::time::Instant::now() + per);
    }
}

#[cfg(feature = "p4")]
#[test]
fn compiler_corpus() {
    let files = common::corpus();
    if files.is_empty() {
        return;
    }
    let mut pass = vec![];
    let mut fail = vec![];
    let mut nocompile = vec![];
    for p in files {
        let stf_path = p.with_extension("stf");
        if !stf_path.exists() {
            continue;
        }
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        let prog = match sdnperf_switch::load_program(p.to_str().unwrap()) {
            Ok(x) => x,
            Err(e) => {
                nocompile.push(format!("{}: {}", name, e.lines().next().unwrap_or("")));
                continue;
            }
        };
        let mut sw = checked_switch(prog);
        let r = stf::run(&mut sw, &std::fs::read_to_string(&stf_path).unwrap());
        if r.passed {
            pass.push(name);
        } else {
            fail.push(format!("{}:\n{}", name, r.report));
        }
    }
    // Corpus expectations that disagree with v1model/bmv2 semantics as this switch reads
    // them (reported to the compiler's owner); they are listed, not hidden.
    let disputed: [&str; 0] = [
        // e.g. "name.p4", // why the corpus expectation disagrees with v1model semantics
    ];
    let (disp, fail): (Vec<String>, Vec<String>) = fail
        .into_iter()
        .partition(|f| disputed.iter().any(|d| f.starts_with(d)));
    for d in &disp {
        eprintln!("disputed corpus expectation:\n{}", d);
    }
    eprintln!(
        "corpus: {} pass, {} fail, {} disputed, {} do not compile/load",
        pass.len(),
        fail.len(),
        disp.len(),
        nocompile.len()
    );
    eprintln!("pass: {}", pass.join(" "));
    for n in &nocompile {
        eprintln!("not loaded: {}", n);
    }
    assert!(fail.is_empty(), "corpus STF failures:\n{}", fail.join("\n"));
}
