//! `sdnperf-p4c`: command-line front end of the P4_16 (v1model) compiler.
//!
//! Two ways to say where the output goes: ours (`-o OUTDIR`: PROGRAM.json and
//! PROGRAM.p4info.txtpb in it) and p4c-bm2-ss's, as the P4 tutorials' Makefiles write it
//! (`--p4v 16 --p4runtime-files build/prog.p4.p4info.txtpb -o build/prog.json prog.p4`).
//! Flags of p4c-bm2-ss that change nothing here are accepted; flags whose meaning we cannot
//! honour are refused by name (exit 2), never ignored.

use clap::{ArgAction, Parser};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::exit;

const AFTER_HELP: &str = "\
Output: with -o OUTDIR (a folder), OUTDIR/PROGRAM.json and OUTDIR/PROGRAM.p4info.txtpb
(.p4info.bin with --p4info-format binary). With -o FILE.json (p4c-bm2-ss's form), the
BMv2 JSON goes to FILE.json and P4Info only where --p4runtime-files says.

p4c-bm2-ss flags accepted because they change nothing here: --std p4-16, --p4v 16,
--arch v1model, --target bmv2, -v, --Wdisable[=W], --Wwarn[=W]. Refused by name: P4_14
(--std p4-14, --p4v 14), other architectures and targets, P4Info as JSON, -E, --pp,
--toJSON, --dump, --top4, --emit-externs, --Werror, --p4runtime-entries-files.

Exit status: 0 success, 1 compile errors (file:line:col: message), 2 usage errors.";

#[derive(Parser, Debug)]
#[command(
    name = "sdnperf-p4c",
    version,
    about = "Compile a P4_16 program for v1model into BMv2 JSON and P4Info \
             (PSA, PNA, eBPF and TNA are out of scope)",
    after_help = AFTER_HELP
)]
struct Cli {
    /// the P4_16 program
    #[arg(value_name = "PROGRAM.p4")]
    input: PathBuf,
    /// output folder, or the BMv2 JSON file itself when it ends in .json (as p4c-bm2-ss)
    #[arg(short = 'o', long = "output", value_name = "OUTDIR|FILE.json")]
    output: PathBuf,
    /// define a preprocessor macro (VALUE defaults to 1)
    #[arg(short = 'D', value_name = "NAME[=VALUE]", action = ArgAction::Append)]
    defines: Vec<String>,
    /// add DIR to the #include search path
    #[arg(short = 'I', value_name = "DIR", action = ArgAction::Append)]
    include_dirs: Vec<PathBuf>,
    /// P4Info format in OUTDIR: text (default) or binary
    #[arg(long, value_name = "FORMAT", value_parser = ["text", "binary"])]
    p4info_format: Option<String>,
    /// write P4Info to these files (comma-separated); the format from each name:
    /// .txt/.txtpb/.txtproto text, .bin/.pb binary
    #[arg(long, value_name = "FILES", action = ArgAction::Append)]
    p4runtime_files: Vec<String>,
    /// write P4Info to FILE (older p4c), in --p4runtime-format
    #[arg(long, value_name = "FILE")]
    p4runtime_file: Option<String>,
    /// format for --p4runtime-file: text or binary (json is refused)
    #[arg(long, value_name = "FORMAT")]
    p4runtime_format: Option<String>,
    /// language version: p4-16 only (accepted for p4c-bm2-ss compatibility)
    #[arg(long, value_name = "STD")]
    std: Option<String>,
    /// language version: 16 only (accepted for p4c-bm2-ss compatibility)
    #[arg(long, value_name = "VERSION")]
    p4v: Option<String>,
    /// architecture: v1model only
    #[arg(long, value_name = "ARCH")]
    arch: Option<String>,
    /// target: bmv2 only
    #[arg(long, value_name = "TARGET")]
    target: Option<String>,
    /// more output (accepted; changes nothing)
    #[arg(short = 'v', action = ArgAction::Count)]
    verbose: u8,
    /// disable a warning (accepted; changes nothing)
    #[arg(long = "Wdisable", value_name = "WARNING", num_args = 0..=1, require_equals = true, action = ArgAction::Append)]
    wdisable: Vec<String>,
    /// report a warning as a warning (accepted; changes nothing)
    #[arg(long = "Wwarn", value_name = "WARNING", num_args = 0..=1, require_equals = true, action = ArgAction::Append)]
    wwarn: Vec<String>,
    // p4c-bm2-ss flags parsed only to be refused by name
    #[arg(short = 'E', hide = true)]
    preprocess_only: bool,
    #[arg(long = "pp", hide = true, value_name = "FILE")]
    pretty_print: Option<String>,
    #[arg(long = "toJSON", hide = true, value_name = "FILE")]
    to_json: Option<String>,
    #[arg(long = "dump", hide = true, value_name = "FOLDER")]
    dump: Option<String>,
    #[arg(long = "top4", hide = true, value_name = "PASSES")]
    top4: Option<String>,
    #[arg(long = "emit-externs", hide = true)]
    emit_externs: bool,
    #[arg(long = "Werror", hide = true, num_args = 0..=1, require_equals = true)]
    werror: Option<Option<String>>,
    #[arg(long = "p4runtime-entries-files", hide = true, value_name = "FILES")]
    p4runtime_entries_files: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum P4InfoFormat {
    Text,
    Binary,
}

/// Where the outputs go: the BMv2 JSON file and each P4Info file with its format.
#[derive(Debug, PartialEq)]
struct Outputs {
    json: PathBuf,
    p4info: Vec<(PathBuf, P4InfoFormat)>,
}

impl Cli {
    /// A p4c-bm2-ss flag whose meaning we cannot honour: its refusal, in words.
    fn refusal(&self) -> Option<String> {
        let no = |flag: &str, why: &str| Some(format!("{} is not supported: {}", flag, why));
        if let Some(std) = &self.std {
            if !matches!(std.as_str(), "p4-16" | "p4_16") {
                return no(
                    &format!("--std {}", std),
                    "sdnperf-p4c compiles P4_16 only (p4-16)",
                );
            }
        }
        if let Some(v) = &self.p4v {
            if v != "16" {
                return no(
                    &format!("--p4v {}", v),
                    "sdnperf-p4c compiles P4_16 only (16)",
                );
            }
        }
        if let Some(arch) = &self.arch {
            if arch != "v1model" {
                return no(&format!("--arch {}", arch), "the v1model architecture only");
            }
        }
        if let Some(target) = &self.target {
            if target != "bmv2" {
                return no(
                    &format!("--target {}", target),
                    "BMv2 JSON is the only output",
                );
            }
        }
        if self.preprocess_only {
            return no("-E", "preprocessing alone is not offered");
        }
        if self.pretty_print.is_some() || self.top4.is_some() {
            return no("--pp/--top4", "no P4 pretty printer");
        }
        if self.to_json.is_some() || self.dump.is_some() {
            return no("--toJSON/--dump", "the compiler's IR is not written out");
        }
        if self.emit_externs {
            return no("--emit-externs", "only v1model's own externs are compiled");
        }
        if self.werror.is_some() {
            return no("--Werror", "warnings are not reported separately");
        }
        if self.p4runtime_entries_files.is_some() {
            return no(
                "--p4runtime-entries-files",
                "const entries are in the BMv2 JSON only",
            );
        }
        None
    }

    fn outputs(&self) -> Result<Outputs, String> {
        let stem = self
            .input
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "prog".into());
        let mut p4info = vec![];
        for file in self.p4runtime_files.iter().flat_map(|f| f.split(',')) {
            if file.is_empty() {
                return Err("--p4runtime-files: an empty file name".into());
            }
            p4info.push((PathBuf::from(file), format_from_name(file)?));
        }
        if let Some(file) = &self.p4runtime_file {
            let format = match self.p4runtime_format.as_deref() {
                None | Some("text") => P4InfoFormat::Text,
                Some("binary") => P4InfoFormat::Binary,
                Some("json") => {
                    return Err("--p4runtime-format json is not supported: P4Info is \
                                written as text or binary"
                        .into())
                }
                Some(other) => {
                    return Err(format!(
                        "--p4runtime-format {}: expected text or binary",
                        other
                    ))
                }
            };
            p4info.push((PathBuf::from(file), format));
        } else if self.p4runtime_format.is_some() {
            return Err("--p4runtime-format needs --p4runtime-file".into());
        }
        let as_file = self.output.extension().is_some_and(|e| e == "json");
        if as_file {
            if self.p4info_format.is_some() {
                return Err(
                    "--p4info-format is for -o OUTDIR; with -o FILE.json name the \
                            P4Info files with --p4runtime-files"
                        .into(),
                );
            }
            return Ok(Outputs {
                json: self.output.clone(),
                p4info,
            });
        }
        let format = match self.p4info_format.as_deref() {
            Some("binary") => P4InfoFormat::Binary,
            _ => P4InfoFormat::Text,
        };
        let ours = match format {
            P4InfoFormat::Text => format!("{}.p4info.txtpb", stem),
            P4InfoFormat::Binary => format!("{}.p4info.bin", stem),
        };
        p4info.insert(0, (self.output.join(ours), format));
        Ok(Outputs {
            json: self.output.join(format!("{}.json", stem)),
            p4info,
        })
    }
}

fn format_from_name(file: &str) -> Result<P4InfoFormat, String> {
    let ext = Path::new(file)
        .extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "txt" | "txtpb" | "txtproto" | "textproto" | "pbtxt" => Ok(P4InfoFormat::Text),
        "bin" | "pb" => Ok(P4InfoFormat::Binary),
        "json" => Err(format!(
            "--p4runtime-files {}: P4Info as JSON is not supported (name the file .txtpb \
             for text or .bin for binary)",
            file
        )),
        _ => Err(format!(
            "--p4runtime-files {}: cannot tell the format from the name (.txt/.txtpb for \
             text, .bin/.pb for binary)",
            file
        )),
    }
}

/// A message on stderr; a closed stderr (`... 2>&1 | head -2`) is not an error worth a
/// panic: the message had no reader.
fn say(text: &str) {
    let _ = writeln!(std::io::stderr(), "{}", text);
}

fn usage_error(message: &str) -> ! {
    say(&format!(
        "sdnperf-p4c: {}\n(sdnperf-p4c --help shows the options)",
        message
    ));
    exit(2);
}

fn split_define(d: &str) -> (String, String) {
    match d.split_once('=') {
        Some((k, v)) => (k.to_string(), v.to_string()),
        None => (d.to_string(), "1".to_string()),
    }
}

fn write_file(path: &Path, bytes: &[u8]) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("cannot create {}: {}", parent.display(), e))?;
    }
    std::fs::write(path, bytes).map_err(|e| format!("cannot write {}: {}", path.display(), e))
}

fn main() {
    let cli = Cli::parse(); // usage errors: exit 2; --help/--version: exit 0
    if let Some(refusal) = cli.refusal() {
        usage_error(&refusal);
    }
    let outputs = cli.outputs().unwrap_or_else(|e| usage_error(&e));
    let opts = p4c::Options {
        defines: cli.defines.iter().map(|d| split_define(d)).collect(),
        include_dirs: cli.include_dirs.clone(),
    };
    let input = cli.input.clone();
    let result = std::panic::catch_unwind(move || p4c::compile_file(&input, &opts));
    let output = match result {
        Ok(Ok(o)) => o,
        Ok(Err(d)) => {
            say(&d.to_string());
            exit(1);
        }
        Err(_) => {
            say("sdnperf-p4c: internal compiler error (please report this program)");
            exit(1);
        }
    };
    for warning in &output.warnings {
        say(&warning.to_string());
    }
    let mut writes = vec![(outputs.json.clone(), output.bmv2_json.as_bytes())];
    for (path, format) in &outputs.p4info {
        let bytes: &[u8] = match format {
            P4InfoFormat::Text => output.p4info_text.as_bytes(),
            P4InfoFormat::Binary => &output.p4info_binary,
        };
        writes.push((path.clone(), bytes));
    }
    for (path, bytes) in writes {
        if let Err(e) = write_file(&path, bytes) {
            say(&format!("sdnperf-p4c: {}", e));
            exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("sdnperf-p4c").chain(args.iter().copied()))
    }

    #[test]
    fn tutorials_command_line_writes_json_and_text_p4info_where_named() {
        let c = cli(&[
            "--p4v",
            "16",
            "--p4runtime-files",
            "build/basic.p4.p4info.txtpb",
            "-o",
            "build/basic.json",
            "basic.p4",
        ])
        .unwrap();
        assert_eq!(c.refusal(), None);
        assert_eq!(
            c.outputs().unwrap(),
            Outputs {
                json: "build/basic.json".into(),
                p4info: vec![("build/basic.p4.p4info.txtpb".into(), P4InfoFormat::Text)],
            }
        );
    }

    #[test]
    fn our_command_line_writes_into_a_folder() {
        let c = cli(&["prog.p4", "-o", "out", "--p4info-format", "binary", "-DX=2"]).unwrap();
        assert_eq!(c.defines, vec!["X=2".to_string()]);
        assert_eq!(
            c.outputs().unwrap(),
            Outputs {
                json: "out/prog.json".into(),
                p4info: vec![("out/prog.p4info.bin".into(), P4InfoFormat::Binary)],
            }
        );
    }

    #[test]
    fn flags_that_change_nothing_are_accepted() {
        let c = cli(&[
            "--std",
            "p4-16",
            "--arch",
            "v1model",
            "--target",
            "bmv2",
            "-v",
            "--Wdisable",
            "p.p4",
            "-o",
            "o",
        ])
        .unwrap();
        assert_eq!(c.refusal(), None);
    }

    #[test]
    fn flags_we_cannot_honour_are_refused_by_name() {
        for (args, named) in [
            (vec!["--std", "p4-14"], "--std p4-14"),
            (vec!["--p4v", "14"], "--p4v 14"),
            (vec!["--arch", "psa"], "--arch psa"),
            (vec!["--target", "ebpf"], "--target ebpf"),
            (vec!["-E"], "-E"),
            (vec!["--emit-externs"], "--emit-externs"),
            (vec!["--Werror"], "--Werror"),
        ] {
            let mut all = args.clone();
            all.extend(["p.p4", "-o", "o"]);
            let refusal = cli(&all).unwrap().refusal().unwrap();
            assert!(refusal.starts_with(named), "{}", refusal);
        }
        let json = cli(&["p.p4", "-o", "o.json", "--p4runtime-files", "x.json"]).unwrap();
        assert!(json
            .outputs()
            .unwrap_err()
            .contains("JSON is not supported"));
        assert!(cli(&["p.p4", "-o", "o", "--frobnicate"]).is_err());
    }
}
