//! Golden P4Info (text format) for a few corpus programs, plus checks of the id
//! prefix scheme and of the binary encoding.

use std::path::Path;

fn compile(name: &str) -> p4c::Output {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(format!("{}.p4", name));
    p4c::compile_file(&p, &p4c::Options::default()).unwrap_or_else(|d| panic!("{}", d))
}

fn golden(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(format!("{}.p4info.txtpb", name));
    std::fs::read_to_string(p).unwrap()
}

#[test]
fn golden_p4info_basic_router() {
    assert_eq!(compile("basic_router").p4info_text, golden("basic_router"));
}

#[test]
fn golden_p4info_acl_stateful() {
    // counters, direct counters, meters, direct meters, registers, const table
    assert_eq!(compile("acl_stateful").p4info_text, golden("acl_stateful"));
}

/// The per-table copies of an action bound with an `out` argument in each table's
/// action list are one P4Info action, referred to by both tables.
#[test]
fn golden_p4info_action_copies() {
    assert_eq!(
        compile("action_copies").p4info_text,
        golden("action_copies")
    );
}

#[test]
fn golden_p4info_l2_switch() {
    // digest with type_info
    assert_eq!(compile("l2_switch").p4info_text, golden("l2_switch"));
}

/// Keys on fields inside a struct-typed header field are named by their path.
#[test]
fn golden_p4info_header_struct() {
    assert_eq!(
        compile("header_struct").p4info_text,
        golden("header_struct")
    );
}

#[test]
fn golden_p4info_packet_io() {
    assert_eq!(compile("packet_io").p4info_text, golden("packet_io"));
}

/// All `id:` values inside `preamble { ... }` blocks, with the block kind.
fn preamble_ids(text: &str) -> Vec<(String, u32)> {
    let mut out = vec![];
    let mut stack: Vec<String> = vec![];
    for line in text.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_suffix(" {") {
            stack.push(name.to_string());
        } else if t == "}" {
            stack.pop();
        } else if let Some(v) = t.strip_prefix("id: ") {
            if stack.last().map(|s| s == "preamble").unwrap_or(false) && stack.len() >= 2 {
                out.push((stack[stack.len() - 2].clone(), v.parse().unwrap()));
            }
        }
    }
    out
}

#[test]
fn ids_use_the_p4runtime_prefixes_and_are_unique() {
    for prog in [
        "basic_router",
        "acl_stateful",
        "ecmp",
        "packet_io",
        "l2_switch",
        "ipv4_options",
    ] {
        let out = compile(prog);
        let ids = preamble_ids(&out.p4info_text);
        assert!(!ids.is_empty());
        let mut seen = std::collections::HashSet::new();
        for (kind, id) in ids {
            let prefix = id >> 24;
            let want = match kind.as_str() {
                "actions" => 0x01,
                "tables" => 0x02,
                "value_sets" => 0x03,
                "controller_packet_metadata" => 0x04,
                "action_profiles" => 0x11,
                "counters" => 0x12,
                "direct_counters" => 0x13,
                "meters" => 0x14,
                "direct_meters" => 0x15,
                "registers" => 0x16,
                "digests" => 0x17,
                k => panic!("unexpected preamble in {}", k),
            };
            assert_eq!(prefix, want, "{}: {} id {:#x}", prog, kind, id);
            assert!(seen.insert(id), "{}: duplicate id {:#x}", prog, id);
        }
    }
}

#[test]
fn at_id_is_honoured() {
    let out = compile("packet_io");
    assert!(out.p4info_text.contains(&format!("id: {}", 0x0200abcdu32)));
}

#[test]
fn binary_encoding_starts_with_pkg_info() {
    let out = compile("basic_router");
    // field 1 (pkg_info), wire type 2
    assert_eq!(out.p4info_binary[0], 0x0a);
    // the table name appears verbatim in the binary
    let needle = b"MyIngress.ipv4_lpm";
    assert!(out.p4info_binary.windows(needle.len()).any(|w| w == needle));
}
