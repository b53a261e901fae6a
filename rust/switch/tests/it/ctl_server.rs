//! The control server/client pair over a Unix socket, with requests executed the way the
//! data-plane loop does (on the thread that owns the switch).

use sdnperf_switch::ctl::{self, Listen};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::json;
use sdnperf_switch::switch::Switch;
use std::path::Path;

#[test]
fn ctl_roundtrip_over_unix_socket() {
    let prog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/externs_hash.json");
    let prog = json::load_file(prog.to_str().unwrap()).unwrap();
    let sock = format!("/tmp/sdnperf-switch-test-{}.sock", std::process::id());
    let rx = ctl::start_server(Listen::Unix(sock.clone())).unwrap();
    let owner = std::thread::spawn(move || {
        let mut sw = Switch::new(Engine::new(prog));
        // serve until the test's last request ("stats") has been answered
        loop {
            let req = rx.rx.recv().unwrap();
            let last = req.line == "stats";
            let _ = req.reply.send(ctl::execute(&mut sw, &req.line));
            if last {
                return;
            }
        }
    });
    let ok = ctl::client(
        &sock,
        &[
            "register_write pkt_count 3 77".to_string(),
            "register_read pkt_count 3".to_string(),
            "table_add t_hash hash_crc32 7".to_string(),
            "table_num_entries t_hash".to_string(),
        ],
    )
    .unwrap();
    assert!(ok);
    // an invalid command reports an error but keeps the connection and the switch alive
    let bad = ctl::client(&sock, &["table_add no_such_table x 1".to_string()]).unwrap();
    assert!(!bad);
    assert!(ctl::client(&sock, &["stats".to_string()]).unwrap());
    owner.join().unwrap();
    let _ = std::fs::remove_file(&sock);
}

#[test]
fn ctl_parses_values_and_keys() {
    use sdnperf_switch::ctl::{parse_key, parse_value};
    use sdnperf_switch::pipeline::MatchKind;
    assert_eq!(parse_value("10.0.0.1").unwrap(), 0x0a000001);
    assert_eq!(parse_value("00:11:22:33:44:55").unwrap(), 0x001122334455);
    assert_eq!(parse_value("0x1F").unwrap(), 31);
    assert_eq!(
        parse_value("2001:db8::1").unwrap(),
        0x20010db8000000000000000000000001
    );
    let k = parse_key("10.1.0.0/16", MatchKind::Lpm, 32).unwrap();
    assert_eq!((k.value, k.prefix), (0x0a010000, Some(16)));
    let k = parse_key("0x0a0b****", MatchKind::Ternary, 32).unwrap();
    assert_eq!((k.value, k.aux), (0x0a0b0000, 0xffff0000));
    let k = parse_key("5->9", MatchKind::Range, 16).unwrap();
    assert_eq!((k.value, k.aux), (5, 9));
    assert!(parse_key("0x0a**", MatchKind::Exact, 16).is_err());
    assert!(parse_value("12zz").is_err());
}

/// Malformed control commands get an error answer, never a panic (which `execute`
/// would turn into "internal error").
#[test]
fn ctl_garbage_never_panics() {
    let prog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/selector.json");
    let prog = json::load_file(prog.to_str().unwrap()).unwrap();
    let mut sw = Switch::new(Engine::new(prog));
    let cmds = [
        "table_add",
        "table_set_default",
        "table_clear",
        "table_delete",
        "table_modify",
        "table_num_entries",
        "table_dump",
        "show_tables",
        "mc_mgrp_create",
        "mc_mgrp_destroy",
        "mc_node_create",
        "mc_node_update",
        "mc_node_destroy",
        "mc_node_associate",
        "mc_node_dissociate",
        "mirroring_add",
        "mirroring_add_mc",
        "mirroring_delete",
        "register_read",
        "register_write",
        "register_reset",
        "counter_read",
        "counter_reset",
        "meter_set_rates",
        "set_queue_rate",
        "set_queue_depth",
        "port_impair",
        "pvs_add",
        "pvs_remove",
        "pvs_clear",
        "act_prof_create_member",
        "act_prof_delete_member",
        "act_prof_create_group",
        "act_prof_delete_group",
        "act_prof_add_member_to_group",
        "act_prof_remove_member_from_group",
        "table_indirect_add",
        "table_indirect_add_with_group",
        "table_indirect_set_default",
        "table_indirect_set_default_with_group",
        "packet_out",
        "packet_out_port",
        "packet_in_read",
        "stats",
        "digests",
        "help",
    ];
    let args = [
        "=>",
        "ing.t",
        "ing.sel",
        "fwd",
        "drop",
        "0",
        "1",
        "511",
        "512",
        "-1",
        "0x",
        "0xffffffffffffffffffffffffffffffffff",
        "10.0.0.1/33",
        "1->",
        "&&&",
        "*",
        "delay=",
        "rate=1gbit",
        "loss=200%",
        "1:2",
        "a:b",
        "ff",
        "f",
        "99999999999",
        "t_missing",
        "1.2.3.4",
        "00:11:22:33:44:55",
        "",
    ];
    let mut x = 0x9e3779b97f4a7c15u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as usize
    };
    for _ in 0..20_000 {
        let mut line = cmds[next() % cmds.len()].to_string();
        for _ in 0..next() % 7 {
            line.push(' ');
            line.push_str(args[next() % args.len()]);
        }
        if let Err(e) = ctl::execute(&mut sw, &line) {
            assert!(!e.starts_with("internal error"), "{} -> {}", line, e);
        }
    }
}
