//! `sdnperf-p4c`: command-line front end of the P4_16 (v1model) compiler.

use std::path::PathBuf;
use std::process::exit;

const USAGE: &str = "usage: sdnperf-p4c PROGRAM.p4 -o OUTDIR [-D NAME[=VALUE]]... [-I DIR]... [--p4info-format text|binary]

Compiles a P4_16 program for the v1model architecture into BMv2 JSON
(OUTDIR/PROGRAM.json) and P4Info (OUTDIR/PROGRAM.p4info.txtpb, or
OUTDIR/PROGRAM.p4info.bin with --p4info-format binary).
Other architectures (PSA, PNA, eBPF, TNA) are out of scope.

options:
  -o OUTDIR                 output directory (created if missing)
  -D NAME[=VALUE]           define a preprocessor macro (VALUE defaults to 1)
  -I DIR                    add DIR to the #include search path
  --p4info-format FORMAT    text (default) or binary
  -h, --help                show this help

exit status: 0 success, 1 compile errors, 2 usage errors";

fn usage_err(msg: &str) -> ! {
    eprintln!("sdnperf-p4c: {}\n\n{}", msg, USAGE);
    exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut input: Option<PathBuf> = None;
    let mut out: Option<PathBuf> = None;
    let mut opts = p4c::Options::default();
    let mut binary = false;
    let mut i = 0;
    let take = |i: &mut usize, flag: &str, inline: Option<String>| -> String {
        if let Some(v) = inline {
            return v;
        }
        *i += 1;
        match args.get(*i) {
            Some(v) => v.clone(),
            None => usage_err(&format!("{} needs a value", flag)),
        }
    };
    while i < args.len() {
        let a = args[i].clone();
        match a.as_str() {
            "-h" | "--help" => {
                println!("{}", USAGE);
                exit(0);
            }
            "-o" | "--output" => out = Some(PathBuf::from(take(&mut i, "-o", None))),
            "-D" => {
                let d = take(&mut i, "-D", None);
                opts.defines.push(split_define(&d));
            }
            "-I" => opts
                .include_dirs
                .push(PathBuf::from(take(&mut i, "-I", None))),
            "--p4info-format" => match take(&mut i, "--p4info-format", None).as_str() {
                "text" => binary = false,
                "binary" => binary = true,
                other => usage_err(&format!(
                    "unknown P4Info format '{}' (use text or binary)",
                    other
                )),
            },
            _ if a.starts_with("--p4info-format=") => match &a["--p4info-format=".len()..] {
                "text" => binary = false,
                "binary" => binary = true,
                other => usage_err(&format!(
                    "unknown P4Info format '{}' (use text or binary)",
                    other
                )),
            },
            _ if a.starts_with("-D") && a.len() > 2 => opts.defines.push(split_define(&a[2..])),
            _ if a.starts_with("-I") && a.len() > 2 => {
                opts.include_dirs.push(PathBuf::from(&a[2..]))
            }
            _ if a.starts_with("-o") && a.len() > 2 => out = Some(PathBuf::from(&a[2..])),
            _ if a.starts_with('-') && a != "-" => usage_err(&format!("unknown option '{}'", a)),
            _ => {
                if input.is_some() {
                    usage_err("only one input program can be given");
                }
                input = Some(PathBuf::from(a));
            }
        }
        i += 1;
    }
    let input = input.unwrap_or_else(|| usage_err("no input program given"));
    let out = out.unwrap_or_else(|| usage_err("no output directory given (-o OUTDIR)"));
    let result = std::panic::catch_unwind(|| p4c::compile_file(&input, &opts));
    let output = match result {
        Ok(Ok(o)) => o,
        Ok(Err(d)) => {
            eprintln!("{}", d);
            exit(1);
        }
        Err(_) => {
            eprintln!("sdnperf-p4c: internal compiler error (please report this program)");
            exit(1);
        }
    };
    if let Err(e) = std::fs::create_dir_all(&out) {
        eprintln!("sdnperf-p4c: cannot create {}: {}", out.display(), e);
        exit(1);
    }
    let stem = input
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "prog".into());
    let json_path = out.join(format!("{}.json", stem));
    let res = std::fs::write(&json_path, &output.bmv2_json).and_then(|_| {
        if binary {
            std::fs::write(
                out.join(format!("{}.p4info.bin", stem)),
                &output.p4info_binary,
            )
        } else {
            std::fs::write(
                out.join(format!("{}.p4info.txtpb", stem)),
                &output.p4info_text,
            )
        }
    });
    if let Err(e) = res {
        eprintln!("sdnperf-p4c: cannot write output: {}", e);
        exit(1);
    }
}

fn split_define(d: &str) -> (String, String) {
    match d.split_once('=') {
        Some((k, v)) => (k.to_string(), v.to_string()),
        None => (d.to_string(), "1".to_string()),
    }
}
