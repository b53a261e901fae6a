//! Helpers shared by the integration tests (the modules of this test binary): the test
//! programs, a reproducible random source, and the packets of an STF file.

use std::path::{Path, PathBuf};

fn files_with(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().map(|e| e == ext).unwrap_or(false))
            .collect(),
        Err(_) => vec![],
    };
    v.sort();
    v
}

/// The hand-written BMv2 JSON programs (tests/programs/*.json, each with its .stf).
pub fn programs() -> Vec<PathBuf> {
    files_with(&programs_dir(), "json")
}

pub fn programs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs")
}

/// The compiler's corpus (P4 sources with .stf tests); empty when it is not there.
pub fn corpus() -> Vec<PathBuf> {
    files_with(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("../p4c/tests/corpus"),
        "p4",
    )
}

/// xorshift: reproducible packets without a dependency
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// The `packet PORT HEX...` lines of an STF file: (port, bytes).
pub fn stf_packets(stf: &str) -> Vec<(u32, Vec<u8>)> {
    stf.lines()
        .filter_map(|l| {
            let mut t = l.split_whitespace();
            if t.next()? != "packet" {
                return None;
            }
            let port: u32 = t.next()?.parse().ok()?;
            let hex: String = t.collect();
            let bytes = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                .collect::<Option<Vec<u8>>>()?;
            Some((port, bytes))
        })
        .collect()
}
