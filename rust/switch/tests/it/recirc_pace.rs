//! The recirculation path's latency (`--recirc-pace-us`, Switch::set_recirc_pace_ns): a
//! recirculated packet re-enters ingress only once the latency has passed since it left
//! egress, `next_deadline` names that time (so the data-plane loop sleeps until it instead
//! of spinning); without a latency a packet's passes all run at once.

use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{json, stf};
use std::path::Path;

const PACKET: &str = "00000000000200000000000108007878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878787878";

/// recirc_n.p4 set to recirculate each packet from port 2 seven times
fn switch(pace_ns: u64) -> Switch {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let prog = json::load_file(dir.join("recirc_n.json").to_str().unwrap()).unwrap();
    let mut sw = Switch::new(Engine::new(prog));
    let _ = stf::run(&mut sw, "setdefault t_n set_n(n:7)\n");
    sw.set_recirc_pace_ns(pace_ns);
    sw
}

fn bytes(hex: &str) -> Vec<u8> {
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn a_paced_packet_reenters_only_after_the_latency_and_the_deadline_says_when() {
    let pace = 50_000u64; // 50 µs
    let mut sw = switch(pace);
    let t0 = 1_000_000_000u64;
    sw.receive(2, &bytes(PACKET), None, t0);
    sw.service(t0);
    assert!(sw.pop_ready().is_none(), "it recirculates first");
    let mut now = t0;
    let mut passes = 0;
    loop {
        let at = sw
            .next_deadline()
            .expect("a packet on the recirculation path");
        assert_eq!(at, now + pace, "re-entry one latency after the last pass");
        // just before its time: nothing happens
        sw.service(at - 1);
        assert!(sw.pop_ready().is_none());
        assert_eq!(sw.next_deadline(), Some(at));
        now = at;
        sw.service(now);
        passes += 1;
        if let Some(j) = sw.pop_ready() {
            assert_eq!(j.egress_port, 1);
            break;
        }
        assert!(passes < 7, "more passes than the program asks");
    }
    assert_eq!(passes, 7);
    assert_eq!(now, t0 + 7 * pace, "held seven latencies");
    assert_eq!(sw.next_deadline(), None, "nothing left: the loop may sleep");
}

#[test]
fn without_a_latency_a_looping_packet_runs_its_passes_in_one_service_call() {
    let mut sw = switch(0);
    let t0 = 1_000_000_000u64;
    sw.receive(2, &bytes(PACKET), None, t0);
    sw.service(t0);
    let j = sw.pop_ready().expect("seven passes at once");
    assert_eq!(j.egress_port, 1);
    assert_eq!(sw.next_deadline(), None);
}
