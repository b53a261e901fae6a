//! The command-line front end: output files, -D/-I, P4Info formats, exit codes.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_sdnperf-p4c"))
}

fn tmpdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("sdnperf-p4c-cli-{}-{}", tag, std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn corpus(n: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(n)
}

#[test]
fn writes_json_and_text_p4info() {
    let out = tmpdir("text");
    let st = bin()
        .arg(corpus("basic_router.p4"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("basic_router.json")).unwrap())
            .unwrap();
    assert!(j["pipelines"].is_array());
    assert!(
        std::fs::read_to_string(out.join("basic_router.p4info.txtpb"))
            .unwrap()
            .contains("MyIngress.ipv4_lpm")
    );
}

#[test]
fn binary_p4info_and_defines() {
    let out = tmpdir("bin");
    let st = bin()
        .arg(corpus("recirc_all.p4"))
        .args(["-o"])
        .arg(&out)
        .args(["-D", "RECIRC_PASSES=7", "--p4info-format", "binary"])
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
    assert!(out.join("recirc_all.p4info.bin").exists());
    let json = std::fs::read_to_string(out.join("recirc_all.json")).unwrap();
    assert!(json.contains("\"0x7\""), "the -D value reaches the program");
}

#[test]
fn include_dirs() {
    let dir = tmpdir("inc");
    std::fs::create_dir_all(dir.join("inc")).unwrap();
    std::fs::write(dir.join("inc/consts.p4"), "const bit<9> OUT_PORT = 5;\n").unwrap();
    let prog = std::fs::read_to_string(corpus("recirc_all.p4"))
        .unwrap()
        .replace(
            "#include <v1model.p4>",
            "#include <v1model.p4>\n#include \"consts.p4\"",
        )
        .replace("egress_spec = 1;", "egress_spec = OUT_PORT;");
    std::fs::write(dir.join("p.p4"), prog).unwrap();
    let st = bin()
        .arg(dir.join("p.p4"))
        .arg("-o")
        .arg(dir.join("out"))
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(1), "without -I the include is not found");
    let st = bin()
        .arg(dir.join("p.p4"))
        .arg("-o")
        .arg(dir.join("out"))
        .arg("-I")
        .arg(dir.join("inc"))
        .status()
        .unwrap();
    assert_eq!(st.code(), Some(0));
}

#[test]
fn compile_errors_exit_1_with_carets() {
    let dir = tmpdir("err");
    std::fs::write(dir.join("bad.p4"), "const bit<8> X = 1\n").unwrap();
    let o = bin()
        .arg(dir.join("bad.p4"))
        .arg("-o")
        .arg(dir.join("out"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bad.p4:1:19: error: expected ';'"), "{}", err);
    assert!(err.contains("^"));
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(bin().status().unwrap().code(), Some(2));
    assert_eq!(
        bin().arg("x.p4").status().unwrap().code(),
        Some(2),
        "missing -o"
    );
    assert_eq!(
        bin()
            .args(["x.p4", "-o", "/tmp/x", "--bogus"])
            .status()
            .unwrap()
            .code(),
        Some(2)
    );
    assert_eq!(
        bin()
            .args(["x.p4", "-o", "/tmp/x", "--p4info-format", "xml"])
            .status()
            .unwrap()
            .code(),
        Some(2)
    );
    let o = bin().arg("--help").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Usage: sdnperf-p4c"));
    let v = bin().arg("--version").output().unwrap();
    assert_eq!(v.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&v.stdout).starts_with("sdnperf-p4c "));
}
