//! The steady state allocates nothing: after a warm-up, packets through parser, tables,
//! checksums, deparser, multicast and recirculation cause no heap allocation.

use sdnperf_switch::exec::Engine;
use sdnperf_switch::switch::Switch;
use sdnperf_switch::{json, stf};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
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
            (port, (0..hex.len() / 2).map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap()).collect())
        })
        .collect()
}

#[test]
fn steady_state_does_not_allocate() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
    // programs without digests (a digest is a message to the control plane and allocates)
    for name in ["basic_l3", "l2_mcast", "acl_ternary", "recirc_n", "stack_vlan", "selector", "l1_fwd"] {
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
                    while let Some(j) = sw.ready.pop() {
                        sw.eng.recycle(j);
                    }
                }
            }
        };
        run(&mut sw, 50); // warm-up: pools and buffers reach their working size
        let before = ALLOCS.load(Ordering::Relaxed);
        run(&mut sw, 200);
        let after = ALLOCS.load(Ordering::Relaxed);
        assert_eq!(after - before, 0, "{}: {} allocations in the steady state", name, after - before);
    }
}
