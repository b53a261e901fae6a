//! Expression width semantics: wrap-around, saturation, casts, concatenation,
//! slices, signed arithmetic and the errors for mixed widths. Each case compiles a
//! one-statement program and inspects the assignment the compiler produced.

use serde_json::Value;

fn program(stmt: &str) -> String {
    format!(
        r#"#include <core.p4>
#include <v1model.p4>
header h_t {{ bit<8> a; bit<8> b; bit<16> w; int<8> s; bit<4> n; bit<1> f; }}
struct headers {{ h_t h; }}
struct metadata {{ }}
parser P(packet_in pkt, out headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    state start {{ pkt.extract(hdr.h); transition accept; }}
}}
control V(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control I(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{
    apply {{ {} }}
}}
control E(inout headers hdr, inout metadata meta, inout standard_metadata_t sm) {{ apply {{ }} }}
control C(inout headers hdr, inout metadata meta) {{ apply {{ }} }}
control D(packet_out pkt, in headers hdr) {{ apply {{ pkt.emit(hdr.h); }} }}
V1Switch(P(), V(), I(), E(), C(), D()) main;
"#,
        stmt
    )
}

/// The right-hand side of the (first) assign primitive of the program.
fn rhs(stmt: &str) -> Value {
    let out = p4c::compile_source("w.p4", &program(stmt), &p4c::Options::default())
        .unwrap_or_else(|d| panic!("{}\n{}", stmt, d));
    let j: Value = serde_json::from_str(&out.bmv2_json).unwrap();
    for a in j["actions"].as_array().unwrap() {
        for p in a["primitives"].as_array().unwrap() {
            if p["op"] == "assign" {
                return p["parameters"][1].clone();
            }
        }
    }
    panic!("no assignment for {}", stmt)
}

fn err(stmt: &str) -> String {
    match p4c::compile_source("w.p4", &program(stmt), &p4c::Options::default()) {
        Ok(_) => panic!("{} should not compile", stmt),
        Err(d) => d.errors[0].message.clone(),
    }
}

fn hex(v: &Value) -> &str {
    assert_eq!(v["type"], "hexstr", "{}", v);
    v["value"].as_str().unwrap()
}

#[test]
fn constants_wrap_to_the_type_width() {
    assert_eq!(hex(&rhs("hdr.h.a = 8w255 + 8w1;")), "0x0");
    assert_eq!(hex(&rhs("hdr.h.a = 8w0 - 8w1;")), "0xff");
    assert_eq!(hex(&rhs("hdr.h.a = -8w1;")), "0xff");
    assert_eq!(hex(&rhs("hdr.h.a = 8w16 * 8w17;")), "0x10");
    assert_eq!(hex(&rhs("hdr.h.a = 8w1 << 9;")), "0x0");
    assert_eq!(hex(&rhs("hdr.h.a = ~8w0x0f;")), "0xf0");
}

#[test]
fn unsized_literals_take_the_other_operand_width() {
    assert_eq!(hex(&rhs("hdr.h.a = 8w250 + 10;")), "0x4");
    assert_eq!(hex(&rhs("hdr.h.w = 16w1 + 65535;")), "0x0");
}

#[test]
fn saturating_operators() {
    assert_eq!(hex(&rhs("hdr.h.a = 8w250 |+| 8w10;")), "0xff");
    assert_eq!(hex(&rhs("hdr.h.a = 8w5 |-| 8w10;")), "0x0");
    let v = rhs("hdr.h.a = hdr.h.a |+| hdr.h.b;");
    assert_eq!(v["value"]["value"]["op"], "usat_cast");
}

#[test]
fn casts_concatenation_and_slices() {
    assert_eq!(hex(&rhs("hdr.h.n = (bit<4>)8w0xab;")), "0xb");
    assert_eq!(hex(&rhs("hdr.h.w = 8w0x12 ++ 8w0x34;")), "0x1234");
    assert_eq!(hex(&rhs("hdr.h.n = 8w0xab[7:4];")), "0xa");
    assert_eq!(hex(&rhs("hdr.h.w = (bit<16>)(8w0xff) + 1;")), "0x100");
    let v = rhs("hdr.h.w = hdr.h.a ++ hdr.h.b;");
    assert_eq!(v["value"]["value"]["op"], "|");
}

#[test]
fn runtime_arithmetic_is_masked() {
    let v = rhs("hdr.h.a = hdr.h.a + hdr.h.b;");
    let e = &v["value"]["value"];
    assert_eq!(e["op"], "&");
    assert_eq!(e["right"]["value"], "0xff");
    assert_eq!(e["left"]["value"]["op"], "+");
}

#[test]
fn signed_arithmetic_uses_twos_complement() {
    let v = rhs("hdr.h.s = hdr.h.s - 1;");
    assert_eq!(v["value"]["value"]["op"], "two_comp_mod");
    assert_eq!(hex(&rhs("hdr.h.s = -8s3 - 8s127;")), "0x7e");
    assert_eq!(hex(&rhs("hdr.h.s = (int<8>)8w200;")), "-0x38");
}

#[test]
fn bool_to_bit_conversions() {
    let v = rhs("hdr.h.f = (bit<1>)(hdr.h.a == 3);");
    assert_eq!(v["value"]["value"]["op"], "b2d");
}

#[test]
fn width_errors() {
    assert_eq!(
        err("hdr.h.a = hdr.h.w;"),
        "cannot assign a value of type bit<16> to a location of type bit<8>"
    );
    assert_eq!(
        err("hdr.h.a = hdr.h.a + hdr.h.w;"),
        "operands of '+' have different types: bit<8> and bit<16>"
    );
    assert_eq!(
        err("hdr.h.a = 1 << hdr.h.b;"),
        "the left operand of a shift needs a width (e.g. 8w1)"
    );
    assert_eq!(
        err("hdr.h.s = hdr.h.a;"),
        "cannot assign a value of type bit<8> to a location of type int<8>"
    );
    assert_eq!(
        err("hdr.h.n = hdr.h.a[8:1];"),
        "invalid slice [8:1] of a 8-bit value"
    );
}

#[test]
fn a_constant_wider_than_its_type_is_truncated_with_a_warning() {
    // valid P4 (p4c accepts it with a warning): the value is taken modulo 2^8
    let src = program("hdr.h.a = 300;");
    let out = p4c::compile_source("w.p4", &src, &p4c::Options::default()).unwrap();
    assert_eq!(hex(&rhs("hdr.h.a = 300;")), "0x2c");
    let shown: Vec<String> = out.warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(shown.len(), 1, "{:?}", shown);
    assert!(
        shown[0].starts_with(
            "w.p4:11:23: warning: value 300 does not fit in type bit<8>: truncated to 44"
        ),
        "{}",
        shown[0]
    );
    // a select case too: 0x1ff on an 8-bit key selects 0xff
    let sel = program("").replace(
        "transition accept;",
        "transition select(hdr.h.a) { 0x1ff: accept; default: accept; }",
    );
    let out = p4c::compile_source("s.p4", &sel, &p4c::Options::default()).unwrap();
    assert!(
        out.bmv2_json.contains("\"0xff\""),
        "select case not truncated"
    );
    assert_eq!(out.warnings.len(), 1);
    assert!(out.warnings[0]
        .0
        .message
        .contains("does not fit in 8 bits: truncated to 255"));
    // a program without one has none
    assert!(
        p4c::compile_source("w.p4", &program("hdr.h.a = 255;"), &p4c::Options::default())
            .unwrap()
            .warnings
            .is_empty()
    );
}
