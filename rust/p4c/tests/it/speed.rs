//! A generated ~900-line program (60 tables with actions and conditions) must
//! compile well under a second, even in a debug build.

use std::time::Instant;

#[test]
fn large_program_compiles_quickly() {
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/basic_router.p4"
    ))
    .unwrap();
    let marker = "    apply {\n        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {";
    let (head, tail) = base.split_once(marker).expect("marker in basic_router.p4");
    let mut decls = String::new();
    let mut applies = String::new();
    for i in 0..60 {
        decls.push_str(&format!(
            "    action set_{i}(bit<8> v, bit<9> port) {{\n        hdr.ipv4.diffserv = v + {i};\n        standard_metadata.egress_spec = port;\n        if (hdr.ipv4.ttl > {i}) {{ hdr.ipv4.ttl = hdr.ipv4.ttl - 1; }}\n    }}\n    table t_{i} {{\n        key = {{ hdr.ipv4.srcAddr: ternary; hdr.ipv4.protocol: exact; }}\n        actions = {{ set_{i}; drop; NoAction; }}\n        default_action = NoAction();\n        size = 256;\n    }}\n"
        ));
        applies.push_str(&format!(
            "        if (hdr.ipv4.diffserv != {i}) {{ t_{i}.apply(); }}\n"
        ));
    }
    let prog = format!(
        "{}{}    apply {{\n{}        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {{{}",
        head, decls, applies, tail
    );
    assert!(prog.lines().count() > 800);
    let t = Instant::now();
    let out = p4c::compile_source("big.p4", &prog, &p4c::Options::default())
        .unwrap_or_else(|d| panic!("{}", d));
    let dt = t.elapsed();
    assert!(out.bmv2_json.contains("MyIngress.t_59"));
    assert!(dt.as_millis() < 1000, "took {:?}", dt);
}
