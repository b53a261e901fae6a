//! Per-port impairment through the whole switch (receive -> pipeline -> ready), on the
//! l1_fwd program (port 1 <-> port 2): ingress and egress delay, loss and rate, and the
//! `port_impair` control command with its direction.

use sdnperf_switch::ctl;
use sdnperf_switch::exec::Engine;
use sdnperf_switch::impair::{Direction, ImpairCfg};
use sdnperf_switch::json;
use sdnperf_switch::switch::Switch;
use std::path::Path;

const MS: u64 = 1_000_000;

fn switch() -> Switch {
    let prog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/l1_fwd.json");
    Switch::new(Engine::new(
        json::load_file(prog.to_str().unwrap()).unwrap(),
    ))
}

/// An ARP-typed frame (l1_fwd forwards non-IPv4 frames straight) of `len` bytes.
fn frame(len: usize, tag: u8) -> Vec<u8> {
    let mut p = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x06];
    p.resize(len, tag);
    p
}

/// Runs service at `now` and returns (egress port, tag byte) of what left.
fn out(sw: &mut Switch, now: u64) -> Vec<(u32, u8)> {
    sw.service(now);
    let mut v = vec![];
    let ready: Vec<_> = sw.take_ready();
    for j in ready {
        v.push((j.egress_port, *j.buf.last().unwrap())); // the payload's last byte
        sw.recycle(j);
    }
    v
}

fn cfg(s: &str) -> ImpairCfg {
    ImpairCfg::parse(s).unwrap()
}

#[test]
fn ingress_delay_holds_packets_before_the_pipeline() {
    let mut sw = switch();
    sw.set_port_impair(1, Direction::In, cfg("delay=2ms"))
        .unwrap();
    let t0 = 10 * MS;
    sw.receive(1, &frame(64, 0xa1), None, t0);
    sw.receive(2, &frame(64, 0xb2), None, t0); // port 2 is not impaired: leaves at once
    assert_eq!(out(&mut sw, t0), vec![(1, 0xb2)]);
    assert!(sw.pending());
    assert_eq!(sw.next_deadline(), Some(t0 + 2 * MS));
    assert_eq!(out(&mut sw, t0 + 2 * MS - 1), vec![]);
    assert_eq!(out(&mut sw, t0 + 2 * MS), vec![(2, 0xa1)]);
    assert!(!sw.pending());
    assert_eq!(sw.stats().rx, 2);
}

#[test]
fn both_directions_add_the_delay_once_each_way() {
    let mut sw = switch();
    sw.set_port_impair(1, Direction::Both, cfg("delay=3ms"))
        .unwrap();
    let t0 = 5 * MS;
    sw.receive(1, &frame(64, 1), None, t0); // in on the impaired port: ingress delay
    sw.receive(2, &frame(64, 2), None, t0); // out on the impaired port: egress delay
    assert_eq!(out(&mut sw, t0), vec![]);
    assert_eq!(out(&mut sw, t0 + 3 * MS - 1), vec![]);
    let mut got = out(&mut sw, t0 + 3 * MS);
    got.sort();
    assert_eq!(got, vec![(1, 2), (2, 1)]);
    // a packet in and back out through the same impaired port would pay both: 6 ms
}

#[test]
fn ingress_and_egress_of_one_path_add_up() {
    // 1 -> 2 with ingress delay on 1 and egress delay on 2: both apply, in sequence
    let mut sw = switch();
    sw.set_port_impair(1, Direction::In, cfg("delay=2ms"))
        .unwrap();
    sw.set_port_impair(2, Direction::Out, cfg("delay=5ms"))
        .unwrap();
    sw.receive(1, &frame(64, 9), None, 0);
    assert_eq!(out(&mut sw, 2 * MS), vec![]);
    assert_eq!(sw.next_deadline(), Some(7 * MS));
    assert_eq!(out(&mut sw, 7 * MS - 1), vec![]);
    assert_eq!(out(&mut sw, 7 * MS), vec![(2, 9)]);
}

#[test]
fn ingress_loss_rate_within_bounds() {
    let mut sw = switch();
    sw.set_port_impair(1, Direction::In, cfg("loss=20%"))
        .unwrap();
    let n = 20_000u64;
    let mut delivered = 0;
    for i in 0..n {
        sw.receive(1, &frame(64, 0), None, i * 1000);
        delivered += out(&mut sw, i * 1000).len();
    }
    let lost = n as usize - delivered;
    // 20 % of 20000: mean 4000, sd ~57; ±5 sd
    assert!((3715..=4285).contains(&lost), "lost {} of {}", lost, n);
    assert_eq!(sw.drops().impair as usize, lost);
    // the other direction of the port is untouched
    sw.receive(2, &frame(64, 0), None, n * 1000);
    assert_eq!(out(&mut sw, n * 1000).len(), 1);
}

#[test]
fn ingress_loss_is_repeatable_and_independent_of_egress() {
    let run = |dir: Direction, spec: &str| {
        let mut sw = switch();
        sw.set_port_impair(1, dir, cfg(spec)).unwrap();
        (0..2000u64)
            .map(|i| {
                // a packet through port 1 in (1 -> 2) and one out (2 -> 1)
                sw.receive(1, &frame(64, 1), None, i);
                sw.receive(2, &frame(64, 2), None, i);
                let o = out(&mut sw, i);
                (o.contains(&(2, 1)), o.contains(&(1, 2)))
            })
            .collect::<Vec<_>>()
    };
    let a = run(Direction::Both, "loss=50%");
    assert_eq!(a, run(Direction::Both, "loss=50%"));
    // the two sides draw from different sequences: their losses are not the same packets
    assert!(a.iter().filter(|(i, o)| i != o).count() > 500);
    let seeded = run(Direction::Both, "loss=50%,seed=11");
    assert_eq!(seeded, run(Direction::Both, "loss=50%,seed=11"));
    assert_ne!(seeded, a);
}

#[test]
fn ingress_rate_serialises_arrivals() {
    let mut sw = switch();
    // 1000 B at 8 Mbit/s = 1 ms each
    sw.set_port_impair(1, Direction::In, cfg("rate=8mbit"))
        .unwrap();
    for tag in 0..5u8 {
        sw.receive(1, &frame(1000, tag), None, 0);
    }
    let mut times = vec![];
    let mut t = 0;
    while times.len() < 5 && t <= 10 * MS {
        for _ in out(&mut sw, t) {
            times.push(t);
        }
        t += 100_000;
    }
    // the first leaves at once (an idle link), the rest one serialisation time apart
    assert_eq!(times, vec![0, MS, 2 * MS, 3 * MS, 4 * MS]);
}

#[test]
fn ingress_limit_drops_when_full() {
    let mut sw = switch();
    sw.set_port_impair(1, Direction::In, cfg("delay=10ms,limit=3"))
        .unwrap();
    for _ in 0..5 {
        sw.receive(1, &frame(64, 0), None, 0);
    }
    assert_eq!(sw.drops().impair, 2);
    assert_eq!(out(&mut sw, 10 * MS).len(), 3);
}

#[test]
fn removing_an_impairment_drains_what_it_holds() {
    let mut sw = switch();
    sw.set_port_impair(1, Direction::In, cfg("delay=4ms"))
        .unwrap();
    sw.receive(1, &frame(64, 7), None, 0);
    sw.set_port_impair(1, Direction::In, ImpairCfg::default())
        .unwrap();
    assert!(sw.pending());
    assert_eq!(out(&mut sw, 4 * MS), vec![(2, 7)]);
    sw.set_port_impair(1, Direction::In, ImpairCfg::default())
        .unwrap();
    sw.receive(1, &frame(64, 8), None, 5 * MS);
    assert_eq!(out(&mut sw, 5 * MS), vec![(2, 8)]); // gone: no hold any more
}

#[test]
fn port_impair_command_with_direction() {
    let mut sw = switch();
    ctl::execute(
        &mut sw,
        "port_impair 1 direction=both delay=5ms loss=1% seed=3",
    )
    .unwrap();
    ctl::execute(&mut sw, "port_impair 2 rate=100mbit").unwrap(); // default: egress only
    let show = ctl::execute(&mut sw, "port_impair_show").unwrap();
    let lines: Vec<&str> = show.lines().collect();
    assert_eq!(lines.len(), 3, "{}", show);
    assert!(
        lines[0].starts_with("port 1 in: delay=5000us,loss=1%,seed=3 held=0"),
        "{}",
        show
    );
    assert!(lines[1].starts_with("port 1 out: delay=5000us"), "{}", show);
    assert!(
        lines[2].starts_with("port 2 out: rate=100000000bit"),
        "{}",
        show
    );
    ctl::execute(&mut sw, "port_impair 1 direction=in").unwrap(); // removes the ingress side
    assert!(!ctl::execute(&mut sw, "port_impair_show")
        .unwrap()
        .contains("port 1 in"));
    let err = ctl::execute(&mut sw, "port_impair 1 direction=sideways delay=1ms").unwrap_err();
    assert!(err.contains("in, out or both"), "{}", err);
    assert!(
        ctl::execute(&mut sw, "port_impair 600 direction=in delay=1ms")
            .unwrap_err()
            .contains("out of range")
    );
}
