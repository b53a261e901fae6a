//! The XDP fast path against the engine: every program of the test corpus in the fast
//! path's subset, its STF table set-up, and its STF packets plus thousands of mutated and
//! random ones, run through both (the fast path with BPF_PROG_TEST_RUN, needs root).
//! Wherever the fast path finishes a packet (forward or drop) it must agree with the
//! engine byte for byte; what it hands to the engine is counted, and must stay a minority
//! for well-formed packets.

use crate::common;

use crate::common::{corpus, programs_dir, stf_packets, Rng};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::xdpfast::{self, FastPath, Outcome};
use std::path::Path;

/// The engine's verdict: (egress port, bytes) of every copy sent.
fn engine_run(sw: &mut Switch, port: u32, pkt: &[u8]) -> Vec<(u32, Vec<u8>)> {
    let now = sw.now_ns();
    sw.receive(port, pkt, None, now);
    sw.service(now);
    let mut out = Vec::new();
    for j in sw.take_ready() {
        let mut v = Vec::new();
        j.out_bytes(&mut v);
        out.push((j.egress_port, v));
        sw.recycle(j);
    }
    out
}

/// Runs `name` (STF set-up + packets + mutations) through engine and fast path.
/// Returns (packets compared, punted).
fn differential(name: &str, extra_setup: &[&str], seed: u64) -> (usize, usize) {
    differential_at(
        &programs_dir().join(format!("{}.json", name)),
        extra_setup,
        seed,
    )
}

fn differential_at(program: &Path, extra_setup: &[&str], seed: u64) -> (usize, usize) {
    differential_with(
        program,
        &program.with_extension("stf"),
        extra_setup,
        seed,
        None,
    )
}

/// `differential_at` with the STF file named and an optional CPU port.
fn differential_with(
    program: &Path,
    stf_path: &Path,
    extra_setup: &[&str],
    seed: u64,
    cpu_port: Option<u32>,
) -> (usize, usize) {
    let name = program.file_name().unwrap().to_string_lossy().to_string();
    let name = name.as_str();
    let stf = std::fs::read_to_string(stf_path).unwrap();
    let prog = sdnperf_switch::load_program(program.to_str().unwrap()).unwrap();
    let mut sw = Switch::new(Engine::new(prog));
    // table and multicast set-up only: the STF without its packets and expectations
    let setup: String = stf
        .lines()
        .filter(|l| !l.trim_start().starts_with("packet") && !l.trim_start().starts_with("expect"))
        .chain(extra_setup.iter().copied())
        .collect::<Vec<_>>()
        .join("\n");
    let r = sdnperf_switch::stf::setup(&mut sw, &setup);
    assert!(r.passed, "{}: set-up failed: {}", name, r.report);
    let ports: Vec<(u32, u32)> = (0..8).map(|p| (p, 1)).collect(); // every port -> lo (never used: test runs do not redirect)
    sw.set_cpu_port(cpu_port);
    let fp = FastPath::new(&sw, &ports, cpu_port).unwrap_or_else(|e| panic!("{}: {}", name, e));
    let mut base = stf_packets(&stf);
    // only ports with an XDP hook (packet-outs on a CPU port come from the controller)
    base.retain(|(p, _)| *p < 8 && Some(*p) != cpu_port);
    assert!(!base.is_empty());
    let mut rng = Rng(seed);
    let (mut compared, mut punted) = (0, 0);
    for i in 0..4000 {
        let (port, mut pkt) = base[i % base.len()].clone();
        let port = if i % 7 == 0 {
            rng.below(5) as u32
        } else {
            port
        };
        match i % 4 {
            0 => {}
            1 => {
                // a few random bytes in the headers
                for _ in 0..1 + rng.below(3) {
                    let at = rng.below(pkt.len().min(40));
                    pkt[at] = rng.next() as u8;
                }
            }
            2 => pkt.truncate(rng.below(pkt.len() + 1)),
            _ => {
                let n = rng.below(80);
                pkt = (0..n).map(|_| rng.next() as u8).collect();
            }
        }
        if pkt.len() < 14 {
            continue; // no Ethernet header: never reaches an XDP hook (test runs refuse it)
        }
        let want = engine_run(&mut sw, port, &pkt);
        match fp.test_packet(port, &pkt).unwrap() {
            Outcome::Punt => punted += 1,
            Outcome::Drop => {
                assert!(
                    want.is_empty(),
                    "{}: packet {} port {} {:02x?}: fast path dropped, engine sent {:02x?}",
                    name,
                    i,
                    port,
                    pkt,
                    want
                );
                compared += 1;
            }
            Outcome::Forward(p, bytes) => {
                assert_eq!(
                    want,
                    vec![(p, bytes.clone())],
                    "{}: packet {} port {} {:02x?}: fast path sent to {} {:02x?}",
                    name,
                    i,
                    port,
                    pkt,
                    p,
                    bytes
                );
                compared += 1;
            }
        }
    }
    let c = fp.counters();
    assert_eq!(c[2] as usize, punted, "punt counter");
    (compared, punted)
}

const EXPECTED_CORPUS_INSIDE: [&str; 18] = [
    // per-table copies of one action, all of one name: the fast path keys them by id
    "action_copies",
    "basic_router",
    "control_copy_in",
    "ctor_args",
    "fn_shadowing",
    "functions",
    // inside since header validity changes run in the PHV (a packet whose length would
    // change punts at the deparser; see ALL_PUNTED)
    "hdr_functions",
    "header_struct",
    "list_values",
    "multicast",
    "nested_exit",
    // an out header parameter invalid on entry: the packets whose header it invalidates punt
    "out_header_invalid",
    // packet-in/out headers: what goes to or comes from the controller punts
    "packet_io",
    "subparser",
    "switch_nested",
    "table_in_expr",
    "table_under_ops",
    // encapsulation (setValid of the outer header) punts; plain forwarding runs in XDP
    "tunnel",
];

#[test]
fn corpus_programs_in_the_subset_are_recognised() {
    let mut inside = Vec::new();
    for p in common::programs() {
        let prog = sdnperf_switch::json::load_file(p.to_str().unwrap()).unwrap();
        if xdpfast::unsupported_reason(&prog).is_none() {
            inside.push(p.file_stem().unwrap().to_string_lossy().to_string());
        }
    }
    assert_eq!(inside, ["l1_fwd", "l2_basic", "l2_mcast"]);
    // and the reasons name what is missing
    let q = sdnperf_switch::json::load_file(programs_dir().join("queues.json").to_str().unwrap())
        .unwrap();
    assert!(xdpfast::unsupported_reason(&q)
        .unwrap()
        .contains("enq_qdepth"));
    let c = sdnperf_switch::json::load_file(programs_dir().join("basic_l3.json").to_str().unwrap())
        .unwrap();
    assert!(xdpfast::unsupported_reason(&c)
        .unwrap()
        .contains("checksum"));
}

#[test]
fn l1_fwd_agrees_with_the_engine() {
    let (compared, punted) = differential("l1_fwd", &[], 0x1234_5678_9abc_def1);
    println!("l1_fwd: {} compared, {} punted", compared, punted);
    assert!(
        compared > 2000,
        "too few packets finished by the fast path: {}",
        compared
    );
}

#[test]
fn l2_basic_agrees_with_the_engine() {
    let (compared, punted) = differential("l2_basic", &[], 0x0bad_cafe_f00d_0001);
    println!("l2_basic: {} compared, {} punted", compared, punted);
    assert!(
        compared > 300 && punted > 0,
        "compared {} punted {}",
        compared,
        punted
    ); // floods go to the engine (multicast)
}

#[test]
fn l2_mcast_agrees_with_the_engine() {
    let (compared, punted) = differential("l2_mcast", &[], 0x5eed_0000_0000_0007);
    println!("l2_mcast: {} compared, {} punted", compared, punted);
    assert!(
        compared > 500 && punted > 0,
        "compared {} punted {}",
        compared,
        punted
    );
}

/// The lab's default program (sdnperf/p4/l2l3.p4, the `p4` architecture's with its
/// reactive apps) fits since a packet-out header (extracted on the CPU port only) and a
/// packet-in header (added on the way to the controller) punt: it agrees with the engine,
/// and what goes to the controller is left to the engine.
#[test]
fn lab_l2l3_agrees_with_the_engine() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p4 = repo.join("sdnperf/p4/l2l3.p4");
    let stf = repo.join("sdnperf/p4/tests/l2l3/reactive.stf");
    let (compared, punted) = differential_with(&p4, &stf, &[], 0x12_1313_0000_0001, Some(255));
    println!("l2l3: {} compared, {} punted", compared, punted);
    assert!(
        compared > 300 && punted > 0,
        "compared {} punted {}",
        compared,
        punted
    );
}

/// The workload-complexity study's VLAN program (sdnperf/p4/vlan.p4): every frame gets a
/// tag on its access port and loses it on the way out. The fast path once punted every
/// such packet (an action changing header validity), so a `datapath = "auto"` run was
/// the engine's; now the tag lives in the PHV and access-to-access frames, which leave
/// as long as they came, forward in the kernel, agreeing with the engine byte for byte;
/// a frame that leaves tagged (to the trunk) or untagged (from it) changes length and
/// punts.
#[test]
fn lab_vlan_access_to_access_forwards_in_the_kernel() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let p4 = repo.join("sdnperf/p4/vlan.p4");
    let stf = repo.join("sdnperf/p4/tests/vlan/tagging.stf");
    let (compared, punted) = differential_with(&p4, &stf, &[], 0x7a6c_0000_0000_0010, None);
    println!("vlan: {} compared, {} punted", compared, punted);
    assert!(
        compared > 300 && punted > 0,
        "compared {} punted {}",
        compared,
        punted
    );
    // the study's one case on its own: host to host through access ports of one VLAN
    let prog = sdnperf_switch::load_program(p4.to_str().unwrap()).unwrap();
    let mut sw = Switch::new(Engine::new(prog));
    let text = std::fs::read_to_string(&stf).unwrap();
    let setup: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("packet") && !l.trim_start().starts_with("expect"))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(sdnperf_switch::stf::setup(&mut sw, &setup).passed);
    let ports: Vec<(u32, u32)> = (0..8).map(|p| (p, 1)).collect();
    let fp = FastPath::new(&sw, &ports, None).unwrap();
    let mut frame = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x00];
    frame.extend_from_slice(&[0x45; 50]);
    match fp.test_packet(1, &frame).unwrap() {
        Outcome::Forward(2, bytes) => assert_eq!(bytes, frame),
        other => panic!("access to access: {:?}", other),
    }
    let mut to_trunk = frame.clone();
    to_trunk[5] = 0x33;
    assert!(matches!(
        fp.test_packet(1, &to_trunk).unwrap(),
        Outcome::Punt
    ));
}

/// Corpus programs inside the subset that the fast path hands entirely to the engine: on
/// every path a header ends valid that was not extracted, or the reverse (the packet
/// would change length), which punts at the deparser.
const EXPECTED_CORPUS_ALL_PUNTED: &[&str] = &["hdr_functions", "list_values"];

/// The compiler's corpus (P4 source, compiled on the fly): the programs inside the subset
/// are the expected ones, and each agrees with the engine.
#[test]
fn compiler_corpus_programs_in_the_subset_agree_with_the_engine() {
    let (mut inside, mut all_punted) = (Vec::new(), Vec::new());
    for p in corpus() {
        let prog = sdnperf_switch::load_program(p.to_str().unwrap()).unwrap();
        if xdpfast::unsupported_reason(&prog).is_none() {
            let (compared, punted) = differential_at(&p, &[], 0xfeed_beef_0000_0001);
            println!("{}: {} compared, {} punted", p.display(), compared, punted);
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            if compared == 0 {
                all_punted.push(stem.clone());
            } else {
                assert!(
                    compared > 100,
                    "{}: only {} packets finished by the fast path",
                    p.display(),
                    compared
                );
            }
            inside.push(stem);
        }
    }
    assert_eq!(all_punted, EXPECTED_CORPUS_ALL_PUNTED);
    assert_eq!(inside, EXPECTED_CORPUS_INSIDE);
}

/// A table applied for its hit/miss result (`if (t.apply().hit)`): the fast path branches
/// on what the lookup found, as the engine does. Neither corpus has such a program inside
/// the subset, so it is written here.
#[test]
fn hit_miss_branches_agree_with_the_engine() {
    let dir = std::env::temp_dir().join(format!("sdnperf-xdp-hitmiss-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("hit_miss.p4");
    std::fs::write(
        &prog,
        r#"#include <core.p4>
#include <v1model.p4>
header ethernet_t { bit<48> dst; bit<48> src; bit<16> etherType; }
struct headers { ethernet_t eth; }
struct meta { }
parser P(packet_in pkt, out headers h, inout meta m, inout standard_metadata_t sm) {
    state start { pkt.extract(h.eth); transition accept; }
}
control VC(inout headers h, inout meta m) { apply { } }
control I(inout headers h, inout meta m, inout standard_metadata_t sm) {
    action fwd(bit<9> port) { sm.egress_spec = port; }
    action nop() { }
    table known {
        key = { h.eth.dst: exact; }
        actions = { fwd; nop; }
        default_action = nop();
    }
    apply {
        if (known.apply().hit) {
            h.eth.src = 0x0a0b0c0d0e0f;
        } else {
            sm.egress_spec = 3;
            h.eth.etherType = h.eth.etherType + 1;
        }
    }
}
control E(inout headers h, inout meta m, inout standard_metadata_t sm) { apply { } }
control C(inout headers h, inout meta m) { apply { } }
control D(packet_out pkt, in headers h) { apply { pkt.emit(h.eth); } }
V1Switch(P(), VC(), I(), E(), C(), D()) main;
"#,
    )
    .unwrap();
    std::fs::write(
        prog.with_extension("stf"),
        "add known h.eth.dst:0x000000000002 fwd(port:2)\n\
         packet 1 000000000002 000000000001 0800 00112233\n\
         packet 2 000000000009 000000000001 0800 00112233\n",
    )
    .unwrap();
    let r = std::panic::catch_unwind(|| {
        let compiled = sdnperf_switch::load_program(prog.to_str().unwrap()).unwrap();
        assert!(
            compiled.tables.iter().any(|t| t.hit_miss.is_some()),
            "the program should branch on hit/miss"
        );
        differential_at(&prog, &[], 0x0dd_ba11_0000_0003)
    });
    let _ = std::fs::remove_dir_all(&dir);
    let (compared, punted) = r.unwrap();
    println!("hit_miss: {} compared, {} punted", compared, punted);
    assert!(compared > 2000, "compared {} punted {}", compared, punted);
}

/// l1_fwd (port 1 <-> 2) with a fast path over ports 0..8, and the 1000-byte frame used
/// by the shaper tests.
fn l1_fwd_switch() -> (Switch, Vec<u8>) {
    let prog =
        sdnperf_switch::load_program(programs_dir().join("l1_fwd.json").to_str().unwrap()).unwrap();
    let sw = Switch::new(Engine::new(prog));
    let mut pkt = vec![0x78u8; 1000];
    pkt[..14].copy_from_slice(&[0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x06]);
    (sw, pkt)
}

#[test]
fn shaped_port_forwards_on_an_idle_link_and_hands_the_rest_to_the_engine_with_a_slot() {
    use sdnperf_switch::impair::ImpairCfg;
    use sdnperf_switch::xdpfast::shaper::{self, Slot};
    let (mut sw, pkt) = l1_fwd_switch();
    // 1000 B at 100 kbit/s: 80 ms on the link (the second packet below must find it still
    // busy on the real clock, also on a loaded machine)
    sw.set_impair(2, ImpairCfg::parse("rate=100kbit").unwrap())
        .unwrap();
    let ports: Vec<(u32, u32)> = (0..8).map(|p| (p, 1)).collect();
    let fp = FastPath::new(&sw, &ports, None).unwrap();
    let lc = fp.shaper();
    assert_eq!(lc.mode(2), shaper::SHAPED);
    assert_eq!(lc.mode(1), shaper::FREE);
    // an idle link: forwarded at once, the link busy for the frame's 80 ms
    let t0 = shaper::monotonic_ns();
    assert!(matches!(
        fp.test_packet(1, &pkt).unwrap(),
        Outcome::Forward(2, _)
    ));
    let busy = lc.tat(2);
    assert!(busy >= t0 + 80_000_000 && busy <= shaper::monotonic_ns() + 80_000_000);
    assert_eq!(lc.counters(2), (1, 1000, 0));
    // the next one finds the link busy: to the engine, its slot in the XDP metadata
    let (ret, mut out) = sdnperf_switch::bpf::test_run_xdp(fp.prog(1).unwrap(), &pkt).unwrap();
    assert_eq!(ret, 2, "punted (no socket in a test run: XDP_PASS)");
    assert_eq!(out.len(), pkt.len() + 32, "metadata + frame");
    assert_eq!(&out[32..], &pkt[..], "the frame is untouched");
    let slot = Slot::take(&mut out[..32]).expect("a slot in the metadata");
    assert_eq!(slot.port, 2);
    assert_eq!(
        slot.start, busy,
        "it starts when the previous frame has left"
    );
    assert!(slot.arrived < slot.start);
    assert_eq!(lc.tat(2), busy + 80_000_000);
    assert_eq!(lc.counters(2), (1, 1000, 1));
    // the way back (port 2 -> 1) is not shaped: forwarded whatever port 2 does
    assert!(matches!(
        fp.test_packet(2, &pkt).unwrap(),
        Outcome::Forward(1, _)
    ));

    // the engine sends the slotted packet at its start, not before
    sw.set_link_clock(Some(fp.shaper()));
    let off = shaper::monotonic_ns() - sw.now_ns();
    let now = sw.now_ns();
    sw.receive_slotted(1, &pkt, None, now, Some(slot));
    sw.service(now);
    assert!(sw.take_ready().is_empty());
    // while it holds the packet the kernel forwards nothing to the port, even once the
    // link is idle (FIFO): a packet arriving after every claim still punts
    let start_e = slot.start - off;
    assert!(sw.next_deadline().unwrap().abs_diff(start_e) < 50_000);
    // a packet without a slot (from the engine's own path) claims one after the others
    sw.receive(1, &pkt, None, now);
    sw.service(now);
    let claimed = lc.tat(2);
    assert_eq!(claimed, busy + 160_000_000);
    sw.service(start_e + 100_000);
    let ready = sw.take_ready();
    assert_eq!(ready.len(), 1, "the slotted packet leaves at its start");
    for j in ready {
        sw.recycle(j);
    }
    sw.service(claimed - off);
    let ready = sw.take_ready();
    assert_eq!(ready.len(), 1, "the engine's own leaves after it");
    for j in ready {
        sw.recycle(j);
    }
    // the link report merges the kernel's departures into the port's counters
    let show = sw.describe_impairments();
    assert!(show.contains("offered=3 released=3 bytes=3000"), "{}", show);
    assert!(show.contains("xdp_forwarded=1 xdp_slotted=1"), "{}", show);

    // delay, loss or serialisation need the engine: everything to the port punts
    sw.set_impair(2, ImpairCfg::parse("rate=1mbit,delay=1ms").unwrap())
        .unwrap();
    fp.apply_port_modes(&sw);
    assert_eq!(lc.mode(2), shaper::ENGINE);
    assert_eq!(fp.test_packet(1, &pkt).unwrap(), Outcome::Punt);
    // an impaired ingress holds what a port receives before the pipeline
    sw.set_impair(2, ImpairCfg::default()).unwrap();
    sw.set_port_impair(
        1,
        sdnperf_switch::impair::Direction::In,
        ImpairCfg::parse("delay=1ms").unwrap(),
    )
    .unwrap();
    fp.apply_port_modes(&sw);
    assert_eq!(fp.test_packet(1, &pkt).unwrap(), Outcome::Punt);
    assert!(matches!(
        fp.test_packet(2, &pkt).unwrap(),
        Outcome::Forward(1, _)
    ));
}

#[test]
fn shaped_port_lets_its_burst_through_in_the_kernel_then_slots_at_the_rate() {
    use sdnperf_switch::impair::ImpairCfg;
    use sdnperf_switch::xdpfast::shaper::{self, Slot};
    let (mut sw, pkt) = l1_fwd_switch();
    // 1000 B at 1 Mbit/s = 8 ms; a 2000-B bucket (tau 16 ms): three frames may start at
    // once (the bucket is not empty before each), the fourth waits until TAT - tau
    sw.set_impair(2, ImpairCfg::parse("rate=1mbit,burst=2000").unwrap())
        .unwrap();
    let ports: Vec<(u32, u32)> = (0..8).map(|p| (p, 1)).collect();
    let fp = FastPath::new(&sw, &ports, None).unwrap();
    let lc = fp.shaper();
    let t0 = shaper::monotonic_ns();
    for _ in 0..3 {
        assert!(matches!(
            fp.test_packet(1, &pkt).unwrap(),
            Outcome::Forward(2, _)
        ));
    }
    let tat = lc.tat(2);
    assert!(tat >= t0 + 24_000_000 && tat <= shaper::monotonic_ns() + 24_000_000);
    assert_eq!(lc.counters(2), (3, 3000, 0));
    let (ret, mut out) = sdnperf_switch::bpf::test_run_xdp(fp.prog(1).unwrap(), &pkt).unwrap();
    assert_eq!(ret, 2, "punted (no socket in a test run: XDP_PASS)");
    let slot = Slot::take(&mut out[..32]).expect("a slot in the metadata");
    assert_eq!(
        slot.start,
        tat - 16_000_000,
        "it starts when the bucket allows"
    );
    assert!(slot.arrived < slot.start);
    assert_eq!(lc.tat(2), tat + 8_000_000);
    assert_eq!(lc.counters(2), (3, 3000, 1));
}

/// Until `when` (CLOCK_MONOTONIC ns) has passed.
fn sleep_until_mono(when: u64) {
    use sdnperf_switch::xdpfast::shaper::monotonic_ns;
    while monotonic_ns() <= when {
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

#[test]
fn kernel_never_overtakes_a_packet_it_handed_to_the_engine() {
    use sdnperf_switch::impair::ImpairCfg;
    use sdnperf_switch::xdpfast::shaper::{self, Slot};
    let (mut sw, pkt) = l1_fwd_switch();
    // 1000 B at 1 Mbit/s: 8 ms on the link, no burst
    sw.set_impair(2, ImpairCfg::parse("rate=1mbit").unwrap())
        .unwrap();
    let ports: Vec<(u32, u32)> = (0..8).map(|p| (p, 1)).collect();
    let fp = FastPath::new(&sw, &ports, None).unwrap();
    let lc = fp.shaper();
    sw.set_link_clock(Some(fp.shaper()));
    let punt = || {
        let (ret, mut out) = sdnperf_switch::bpf::test_run_xdp(fp.prog(1).unwrap(), &pkt).unwrap();
        assert_eq!(ret, 2, "punted");
        Slot::take(&mut out[..32]).expect("a slot in the metadata")
    };
    assert!(matches!(
        fp.test_packet(1, &pkt).unwrap(),
        Outcome::Forward(2, _)
    ));
    // the next one finds the link busy: handed to the engine, which has not read it yet
    // (still in the socket's ring: the engine holds nothing, `held` is 0)
    let first = punt();
    assert_eq!(lc.unfinished(2), 1);
    // once the link is idle again the kernel still forwards nothing to the port: the
    // packet it handed over would be overtaken (TCP reads that as loss)
    sleep_until_mono(lc.tat(2));
    let second = punt();
    assert_eq!(
        second.start, second.arrived,
        "the bucket let it leave now, yet it goes behind the first"
    );
    assert_eq!(lc.unfinished(2), 2);
    // the engine sends both in order and counts them done as it recycles them
    let now = sw.now_ns();
    sw.receive_slotted(1, &pkt, None, now, Some(first));
    sw.receive_slotted(1, &pkt, None, now, Some(second));
    sw.service(now);
    let ready = sw.take_ready();
    assert_eq!(ready.len(), 2, "both slots have come");
    assert_eq!(lc.unfinished(2), 2, "counted done only once sent");
    for j in ready {
        sw.recycle(j);
    }
    assert_eq!(lc.unfinished(2), 0);
    sleep_until_mono(lc.tat(2));
    assert!(matches!(
        fp.test_packet(1, &pkt).unwrap(),
        Outcome::Forward(2, _)
    ));

    // a packet whose claim lost the race to another CPU (start 0): the engine claims its
    // slot on the shared clock, and it counts like any handed-over packet
    let tat = lc.tat(2);
    let raced = Slot {
        port: 2,
        arrived: shaper::monotonic_ns(),
        start: 0,
    };
    let now = sw.now_ns();
    sw.receive_slotted(1, &pkt, None, now, Some(raced));
    sw.service(now);
    assert_eq!(lc.tat(2), tat + 8_000_000, "the engine claimed the link");
    let due = lc.tat(2) - shaper::monotonic_ns() + sw.now_ns();
    sw.service(due);
    for j in sw.take_ready() {
        sw.recycle(j);
    }

    // that hand-made slot was never counted by the kernel: DONE is one ahead, which
    // also holds the port back until the engine gives up on it (an earlier fast path's
    // count)
    assert_eq!(lc.unfinished(2), u64::MAX);
    let later = shaper::monotonic_ns() + shaper::LOST_AFTER_NS + 1;
    assert!(lc.resync(2, later, shaper::LOST_AFTER_NS));
    assert_eq!(lc.unfinished(2), 0);

    // a handed-over packet lost before the engine saw it (its ring full) holds the port
    // back only until LOST_AFTER_NS after the last punt
    sleep_until_mono(lc.tat(2));
    assert!(matches!(
        fp.test_packet(1, &pkt).unwrap(),
        Outcome::Forward(2, _)
    ));
    let _lost = punt();
    assert_eq!(lc.unfinished(2), 1);
    let now = shaper::monotonic_ns();
    assert!(!lc.resync(2, now, shaper::LOST_AFTER_NS), "not yet");
    assert!(lc.resync(2, now + shaper::LOST_AFTER_NS + 1, shaper::LOST_AFTER_NS));
    assert_eq!(lc.unfinished(2), 0);
    assert!(!lc.resync(2, now + 2 * shaper::LOST_AFTER_NS, shaper::LOST_AFTER_NS));
}
