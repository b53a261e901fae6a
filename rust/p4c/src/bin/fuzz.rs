//! Mutation fuzzer for the compiler (stable Rust, no external tools).
//!
//! `sdnperf-p4c-fuzz [--seconds N] [--seed S] [--dir rust/p4c]` mutates the corpus
//! programs and the saved seeds (byte flips, token splices, chunk copies, line
//! swaps, truncation) and compiles each result under `catch_unwind`. A panicking
//! input is written to `fuzz/crashes/`, an input that takes over 10 s to
//! `fuzz/crashes/hang-*.p4`; inputs that produce a diagnostic not seen before are
//! kept in `fuzz/seeds/` (up to 250) to steer later mutations.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    ";",
    ",",
    ".",
    "=",
    "==",
    "&&&",
    "..",
    "++",
    "|+|",
    "|-|",
    "<<",
    ">>",
    "?",
    ":",
    "bit<8>",
    "bit<0>",
    "int<4>",
    "varbit<32>",
    "bool",
    "error",
    "header",
    "struct",
    "header_union",
    "enum",
    "enum bit<8>",
    "typedef",
    "type",
    "const",
    "control",
    "parser",
    "state",
    "transition",
    "select",
    "default",
    "_",
    "accept",
    "reject",
    "apply",
    "table",
    "key",
    "actions",
    "default_action",
    "entries",
    "size",
    "action",
    "if",
    "else",
    "switch",
    "exit",
    "return",
    "extern",
    "package",
    "value_set",
    "tuple",
    "true",
    "false",
    "0",
    "1",
    "8w255",
    "16s-1",
    "0xffffffffffffffffffffffffffffffffff",
    "32w0x1",
    "hdr",
    "meta",
    "standard_metadata",
    "isValid()",
    "setValid()",
    "setInvalid()",
    "next",
    "last",
    "lastIndex",
    "push_front(1)",
    "pop_front(1)",
    "lookahead<bit<8>>()",
    "extract",
    "emit",
    "mark_to_drop",
    "@name(\"x\")",
    "@id(7)",
    "@priority(2)",
    "@field_list(1)",
    "#define X 3\n",
    "#ifdef X\n",
    "#endif\n",
    "#include <core.p4>\n",
    "\"str\"",
    "/*",
    "*/",
    "//",
    "\n",
    "$",
    "\\\n",
    "[7:0]",
    "[3:4]",
    "(bit<4>)",
    "(bool)",
    "-",
    "~",
    "!",
    "*",
    "/",
    "%",
    "|",
    "^",
    "&",
];

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn mutate(rng: &mut Rng, input: &[u8], pool: &[Vec<u8>]) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = v.len();
        match rng.below(12) {
            9 if len > 0 => {
                // replace a number by an interesting value
                const NUMS: &[&str] = &[
                    "0",
                    "1",
                    "2",
                    "7",
                    "8",
                    "9",
                    "15",
                    "16",
                    "31",
                    "32",
                    "33",
                    "63",
                    "64",
                    "127",
                    "128",
                    "255",
                    "256",
                    "65535",
                    "65536",
                    "4294967295",
                    "4294967296",
                    "8w0",
                    "8w255",
                    "1w1",
                    "16s-1",
                    "0xffff",
                    "128w1",
                    "2048",
                    "4096",
                ];
                let i = rng.below(len);
                if let Some(st) = (i..len).find(|&k| v[k].is_ascii_digit()) {
                    let mut e = st;
                    while e < v.len() && (v[e].is_ascii_alphanumeric() || v[e] == b'_') {
                        e += 1;
                    }
                    v.splice(st..e, NUMS[rng.below(NUMS.len())].bytes());
                }
            }
            10 | 11 if len > 0 => {
                // replace an identifier by another identifier of the same input
                let text = String::from_utf8_lossy(&v).into_owned();
                let words: Vec<(usize, usize)> = {
                    let b = text.as_bytes();
                    let mut out = vec![];
                    let mut k = 0;
                    while k < b.len() {
                        if b[k].is_ascii_alphabetic() || b[k] == b'_' {
                            let st = k;
                            while k < b.len() && (b[k].is_ascii_alphanumeric() || b[k] == b'_') {
                                k += 1;
                            }
                            out.push((st, k));
                        } else {
                            k += 1;
                        }
                    }
                    out
                };
                if words.len() > 2 {
                    let (a0, a1) = words[rng.below(words.len())];
                    let (b0, b1) = words[rng.below(words.len())];
                    let repl = text[b0..b1].to_string();
                    let mut t2 = text.clone();
                    t2.replace_range(a0..a1, &repl);
                    v = t2.into_bytes();
                }
            }
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = b" \n{}();<>=.,:0123456789abcxyz_#@\"/*"[rng.below(34)];
            }
            2 => {
                let i = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                let t = format!(" {} ", t);
                v.splice(i..i, t.bytes());
            }
            3 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(64)).min(len);
                v.drain(a..b);
            }
            4 if len > 0 => {
                let a = rng.below(len);
                let b = (a + 1 + rng.below(200)).min(len);
                let chunk: Vec<u8> = v[a..b].to_vec();
                let i = rng.below(len + 1);
                v.splice(i..i, chunk);
            }
            5 if len > 0 => {
                v.truncate(rng.below(len));
            }
            6 if !pool.is_empty() => {
                let other = &pool[rng.below(pool.len())];
                if !other.is_empty() {
                    let a = rng.below(other.len());
                    let b = (a + 1 + rng.below(300)).min(other.len());
                    let i = rng.below(len + 1);
                    v.splice(i..i, other[a..b].iter().copied());
                }
            }
            7 => {
                // swap two lines
                let text = String::from_utf8_lossy(&v).into_owned();
                let mut lines: Vec<&str> = text.lines().collect();
                if lines.len() > 2 {
                    let a = rng.below(lines.len());
                    let b = rng.below(lines.len());
                    lines.swap(a, b);
                    v = lines.join("\n").into_bytes();
                }
            }
            _ => {
                // replace an identifier-ish word by a token
                if len > 0 {
                    let i = rng.below(len);
                    let mut j = i;
                    while j < v.len() && (v[j].is_ascii_alphanumeric() || v[j] == b'_') {
                        j += 1;
                    }
                    let t = TOKENS[rng.below(TOKENS.len())];
                    v.splice(i..j, t.bytes());
                }
            }
        }
    }
    v
}

#[path = "fuzz/gen.rs"]
mod gen;

/// Mutation fuzzing of the compiler (no panic on any input), or `gen`: random valid
/// programs for bench/p4c/differential.py.
#[derive(clap::Parser, Debug)]
#[command(name = "sdnperf-p4c-fuzz", version)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    /// how long to fuzz
    #[arg(long, value_name = "N", default_value_t = 60)]
    seconds: u64,
    /// random seed of the mutations
    #[arg(long, value_name = "S", default_value_t = 0x5eed_1234)]
    seed: u64,
    /// the p4c crate folder (seeds in tests/corpus, fuzz/seeds; crashes to fuzz/crashes)
    #[arg(long, value_name = "P4C_CRATE_DIR", default_value = env!("CARGO_MANIFEST_DIR"))]
    dir: PathBuf,
}

#[derive(clap::Subcommand, Debug)]
enum Cmd {
    /// write OUT/gNNNNNN.p4 + .stf: random valid v1model programs with input packets (no
    /// expectations), for bench/p4c/differential.py
    Gen {
        #[arg(long, value_name = "S", default_value_t = 1)]
        seed: u64,
        #[arg(long, value_name = "N", default_value_t = 100)]
        count: usize,
        #[arg(long, value_name = "DIR", default_value = "gen-out")]
        out: PathBuf,
    },
}

fn main() {
    let cli = <Cli as clap::Parser>::parse();
    if let Some(Cmd::Gen { seed, count, out }) = cli.cmd {
        gen::main(seed, count, out);
        return;
    }
    let (seconds, seed, dir) = (cli.seconds, cli.seed, cli.dir);
    let crashes = dir.join("fuzz/crashes");
    let seeds_dir = dir.join("fuzz/seeds");
    let _ = std::fs::create_dir_all(&crashes);
    let _ = std::fs::create_dir_all(&seeds_dir);
    let mut pool: Vec<Vec<u8>> = vec![];
    for d in [
        dir.join("tests/corpus"),
        seeds_dir.clone(),
        dir.join("tests/errors/parse"),
        dir.join("tests/errors/check"),
    ] {
        if let Ok(rd) = std::fs::read_dir(&d) {
            let mut files: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().map(|x| x == "p4").unwrap_or(false))
                .collect();
            files.sort();
            for f in files {
                if let Ok(b) = std::fs::read(&f) {
                    pool.push(b);
                }
            }
        }
    }
    if pool.is_empty() {
        eprintln!("no seeds found under {}", dir.display());
        std::process::exit(2);
    }
    let n_seeds_start = std::fs::read_dir(&seeds_dir)
        .map(|r| r.count())
        .unwrap_or(0);
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = Rng(seed | 1);
    let start = Instant::now();
    let deadline = Duration::from_secs(seconds);
    let current: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(vec![]));
    let started = Arc::new(AtomicU64::new(0));
    {
        // watchdog: an input running for more than 10 s is saved as a hang
        let current = current.clone();
        let started = started.clone();
        let crashes = crashes.clone();
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let s = started.load(Ordering::SeqCst);
            let now = Instant::now().duration_since(start).as_millis() as u64;
            if s != 0 && now > s + 10_000 {
                let inp = current.lock().map(|c| c.clone()).unwrap_or_default();
                let p = crashes.join(format!("hang-{:016x}.p4", hash(&inp)));
                let _ = std::fs::write(&p, &inp);
                eprintln!("HANG: input saved to {}", p.display());
                std::process::exit(3);
            }
        });
    }
    let mut seen_msgs: HashSet<String> = HashSet::new();
    let mut execs = 0u64;
    let mut crashes_found = 0u64;
    let mut new_seeds = 0usize;
    let opts = p4c::Options::default();
    while start.elapsed() < deadline {
        let base = pool[rng.below(pool.len())].clone();
        let input = mutate(&mut rng, &base, &pool);
        let text = String::from_utf8_lossy(&input).into_owned();
        if let Ok(mut c) = current.lock() {
            *c = input.clone();
        }
        started.store(start.elapsed().as_millis() as u64 + 1, Ordering::SeqCst);
        let r = std::panic::catch_unwind(|| p4c::compile_source_unguarded("fuzz.p4", &text, &opts));
        started.store(0, Ordering::SeqCst);
        execs += 1;
        match r {
            Err(e) => {
                crashes_found += 1;
                let msg = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                let p = crashes.join(format!("crash-{:016x}.p4", hash(&input)));
                let _ = std::fs::write(&p, &input);
                eprintln!("CRASH ({}): saved {}", msg, p.display());
            }
            Ok(Err(d)) => {
                if let Some(e) = d.errors.first() {
                    // the message with digits and quoted names removed is the "feature"
                    let key: String = strip_specifics(&e.message);
                    if seen_msgs.insert(key) && n_seeds_start + new_seeds < 250 {
                        let p = seeds_dir.join(format!("seed-{:016x}.p4", hash(&input)));
                        if !p.exists() && input.len() < 20_000 {
                            let _ = std::fs::write(&p, &input);
                            new_seeds += 1;
                        }
                        pool.push(input);
                    }
                }
            }
            Ok(Ok(_)) => {
                if rng.below(50) == 0 && pool.len() < 2000 {
                    pool.push(input);
                }
            }
        }
    }
    println!(
        "fuzz: {} executions in {:.0} s, {} crash(es), {} new seed(s), {} distinct diagnostics",
        execs,
        start.elapsed().as_secs_f64(),
        crashes_found,
        new_seeds,
        seen_msgs.len()
    );
    if crashes_found > 0 {
        std::process::exit(1);
    }
}

fn strip_specifics(m: &str) -> String {
    let mut out = String::new();
    let mut in_q = false;
    for c in m.chars() {
        if c == '\'' {
            in_q = !in_q;
            continue;
        }
        if in_q || c.is_ascii_digit() {
            continue;
        }
        out.push(c);
    }
    out
}

fn hash(b: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &x in b {
        h ^= x as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

#[allow(dead_code)]
fn _unused(_: &Path) {}
