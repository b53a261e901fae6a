//! The steady state allocates nothing: after a warm-up, packets through parser, tables,
//! checksums, deparser, multicast and recirculation cause no heap allocation.

use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{json, stf};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::Path;

/// Counts the allocations of each thread: the other tests of this binary run on other
/// threads at the same time, and theirs must not count against the hot path measured here.
struct Counting;

thread_local! {
    // const-initialised and without a destructor: reading it never allocates
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // try_with: a thread being torn down may still free and allocate
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

/// This thread's allocations so far.
fn allocs() -> u64 {
    ALLOCS.with(|c| c.get())
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count_one();
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        count_one();
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Counting = Counting;

fn packets(stf_text: &str) -> Vec<(u32, Vec<u8>)> {
    stf_text
        .lines()
        .filter_map(|l| l.strip_prefix("packet "))
        .map(|l| {
            let mut it = l.split_whitespace();
            let port: u32 = it.next().unwrap().parse().unwrap();
            let hex: String = it.collect();
            (
                port,
                (0..hex.len() / 2)
                    .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn steady_state_does_not_allocate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    // programs without digests (a digest is a message to the control plane and allocates)
    for name in [
        "basic_l3",
        "l2_mcast",
        "acl_ternary",
        "recirc_n",
        "stack_vlan",
        "selector",
        "l1_fwd",
    ] {
        let prog = json::load_file(dir.join(format!("{}.json", name)).to_str().unwrap()).unwrap();
        let text = std::fs::read_to_string(dir.join(format!("{}.stf", name))).unwrap();
        let mut sw = Switch::new(Engine::new(prog));
        let _ = stf::run(&mut sw, &text); // installs entries, groups, ...
        let pkts = packets(&text);
        let mut now = 10_000_000_000u64;
        let mut run = |sw: &mut Switch, rounds: usize| {
            for _ in 0..rounds {
                for (port, p) in &pkts {
                    now += 1000;
                    sw.receive(*port, p, None, now);
                    sw.service(now);
                    while let Some(j) = sw.pop_ready() {
                        sw.recycle(j);
                    }
                }
            }
        };
        run(&mut sw, 50); // warm-up: pools and buffers reach their working size
        let before = allocs();
        run(&mut sw, 200);
        let after = allocs();
        assert_eq!(
            after - before,
            0,
            "{}: {} allocations in the steady state",
            name,
            after - before
        );
    }
}

/// Ingress and egress impairment (delay lines, loss, rate) hold pooled jobs: after a
/// warm-up that fills the delay lines once, nothing allocates. (Its own test since the
/// counter is per thread; it was global to the test binary.)
#[test]
fn impaired_ports_do_not_allocate() {
    use sdnperf_switch::impair::{Direction, ImpairCfg};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    let prog = json::load_file(dir.join("l1_fwd.json").to_str().unwrap()).unwrap();
    let text = std::fs::read_to_string(dir.join("l1_fwd.stf")).unwrap();
    let mut sw = Switch::new(Engine::new(prog));
    let cfg = ImpairCfg::parse("delay=1ms,jitter=100us,loss=5%,rate=1gbit").unwrap();
    sw.set_port_impair(1, Direction::Both, cfg).unwrap();
    sw.set_port_impair(2, Direction::In, cfg).unwrap();
    let pkts = packets(&text);
    let mut now = 10_000_000_000u64;
    let mut run = |sw: &mut Switch, rounds: usize, gap: u64| {
        for _ in 0..rounds {
            for (port, p) in &pkts {
                now += gap;
                sw.receive(*port, p, None, now);
                sw.service(now);
                while let Some(j) = sw.pop_ready() {
                    sw.recycle(j);
                }
            }
        }
    };
    // warm up at twice the measured packet rate (the random high-water marks of the delay
    // lines and of live jobs are reached), then at that rate (the job pool's own high-water
    // mark: more jobs rest in the pool when fewer are held)
    run(&mut sw, 1000, 5_000);
    run(&mut sw, 1000, 10_000);
    let before = allocs();
    run(&mut sw, 2000, 10_000); // 10 us apart: about 100 packets held per delay line
    let after = allocs();
    assert_eq!(
        after - before,
        0,
        "impaired ports: {} allocations in the steady state",
        after - before
    );
}
