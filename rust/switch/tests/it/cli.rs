//! The command lines of both switch binaries: `--help` everywhere exits 0 with its own
//! help, unknown and unimplemented flags are refused by name with the supported list,
//! simple_switch's flags parse.

use std::process::Command;

fn switch(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_sdnperf-switch"))
        .args(args)
        .output()
        .unwrap()
}

fn text(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn help_on_every_subcommand_exits_0_with_its_own_help() {
    for (sub, mark) in [
        ("", "Usage: sdnperf-switch"),
        ("stf", "Usage: sdnperf-switch stf"),
        ("run", "Usage: sdnperf-switch run"),
        ("ctl", "Usage: sdnperf-switch ctl"),
        ("check", "Usage: sdnperf-switch check"),
        ("compile", "Usage: sdnperf-switch compile"),
        ("blast", "Usage: sdnperf-switch blast"),
        ("xdp-sink", "Usage: sdnperf-switch xdp-sink"),
        ("membench", "Usage: sdnperf-switch membench"),
    ] {
        let mut args: Vec<&str> = if sub.is_empty() { vec![] } else { vec![sub] };
        args.push("--help");
        let o = switch(&args);
        assert_eq!(o.status.code(), Some(0), "{}: {}", sub, text(&o));
        assert!(
            String::from_utf8_lossy(&o.stdout).contains(mark),
            "{}: {}",
            sub,
            text(&o)
        );
    }
}

#[test]
fn unknown_and_unimplemented_flags_are_refused_by_name() {
    let prog = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/programs/l1_fwd.json");
    let o = switch(&["run", prog, "--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(
        t.contains("unknown option --bogus")
            && t.contains("supported options: --json")
            && t.contains("--thrift-port"),
        "{}",
        t
    );
    for (flag, value) in [("--nanolog", "ipc:///tmp/x"), ("--priority-queues", "4")] {
        let o = switch(&["run", prog, "-i", "1@lo", flag, value]);
        assert_eq!(o.status.code(), Some(1));
        let t = text(&o);
        assert!(
            t.contains(&format!("{} is not implemented", flag)) && t.contains("supported options:"),
            "{}",
            t
        );
    }
    let o = switch(&["run", "--no-p4"]);
    assert!(
        text(&o).contains("--no-p4 is not supported by `run`"),
        "{}",
        text(&o)
    );
    let o = switch(&["run", prog, "-i", "lo"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("N@IFACE"), "{}", text(&o));
}
