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
        match dump_fds(py, &script) {
            Ok(b) => {
                fds_bytes = Some(b);
                break;
            }
            Err(e) => errors.push(format!("{py}: {e}")),
        }
    }
    let Some(bytes) = fds_bytes else {
        panic!(
            "sdnperf-p4rt needs the P4Runtime protobuf definitions from an installed Python package \
             (finsy or p4runtime). The build never downloads them: run scripts/install.sh (it \
             installs the repository's .venv before building), or set SDNPERF_PYTHON to an \
             interpreter that has one of them. Tried: {}",
            errors.join("; ")
        );
    };
    // well-known types (google.protobuf.Any) map to prost-types (prost-build's default)
    let fds = prost_types::FileDescriptorSet::decode(bytes.as_slice())
        .expect("FileDescriptorSet from dump_fds.py");
    tonic_prost_build::configure()
        .build_server(true)
        .build_client(true)
        .compile_fds(fds)
        .expect("generating P4Runtime code");
}

/// Runs py/dump_fds.py with interpreter `py`: the serialized
/// FileDescriptorSet, or the last line of its stderr / the spawn error.
fn dump_fds(py: &str, script: &Path) -> Result<Vec<u8>, String> {
    match Command::new(py).arg(script).output() {
        Ok(o) if o.status.success() && !o.stdout.is_empty() => Ok(o.stdout),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string()),
        Err(e) => Err(e.to_string()),
    }
}
