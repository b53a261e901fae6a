//! Generates the P4Runtime gRPC code (prost + tonic; crate sdnperf-p4rt-proto, used by
//! sdnperf-p4rt and sdnperf-probe) from protobuf definitions that an
//! installed Python package ships (finsy, or p4runtime): `py/dump_fds.py` prints them as a
//! FileDescriptorSet, which is compiled without protoc. The interpreter is $SDNPERF_PYTHON,
//! else the repository's .venv, else python3.

use prost::Message;
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=py/dump_fds.py");
    println!("cargo:rerun-if-env-changed=SDNPERF_PYTHON");
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let script = here.join("py/dump_fds.py");
    let mut candidates: Vec<String> = vec![];
    if let Ok(p) = std::env::var("SDNPERF_PYTHON") {
        candidates.push(p);
    }
    let venv = here.join("../../.venv/bin/python");
    if venv.exists() {
        candidates.push(venv.display().to_string());
    }
    candidates.push("python3".into());
    let mut errors = vec![];
    let mut fds_bytes = None;
    for py in &candidates {
        match dump_fds(py, &script, None) {
            Ok(b) => {
                fds_bytes = Some(b);
                break;
            }
            Err(e) => errors.push(format!("{py}: {e}")),
        }
    }
    if fds_bytes.is_none() {
        // fresh machine without the package yet: fetch it (and protobuf) from PyPI into
        // OUT_DIR with pip, for this build only
        let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("pydeps");
        for py in &candidates {
            let ok = Command::new(py)
                .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps", "--target"])
                .arg(&out)
                .args(["finsy", "protobuf"])
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if !ok {
                continue;
            }
            match dump_fds(py, &script, Some(&out)) {
                Ok(b) => {
                    fds_bytes = Some(b);
                    break;
                }
                Err(e) => errors.push(format!("{py} (pip --target): {e}")),
            }
        }
    }
    let Some(bytes) = fds_bytes else {
        panic!(
            "sdnperf-p4rt needs the P4Runtime protobuf definitions from a Python package: \
             `pip install finsy` (or `p4runtime`) into the repository's .venv, or set SDNPERF_PYTHON. Tried: {}",
            errors.join("; ")
        );
    };
    // well-known types (google.protobuf.Any) map to prost-types (prost-build's default)
    let fds = prost_types::FileDescriptorSet::decode(bytes.as_slice()).expect("FileDescriptorSet from dump_fds.py");
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)
        .expect("generating P4Runtime code");
}

/// Runs py/dump_fds.py with interpreter `py` (extra PYTHONPATH if given): the serialized
/// FileDescriptorSet, or the last line of its stderr / the spawn error.
fn dump_fds(py: &str, script: &Path, pythonpath: Option<&Path>) -> Result<Vec<u8>, String> {
    let mut cmd = Command::new(py);
    cmd.arg(script);
    if let Some(p) = pythonpath {
        cmd.env("PYTHONPATH", p);
    }
    match cmd.output() {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => Ok(o.stdout),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr).lines().last().unwrap_or("").to_string()),
        Err(e) => Err(e.to_string()),
    }
}
