//! The P4Runtime hot path allocates nothing per packet: booking a packet-in in the
//! engine's Flight, encoding it (frame template + metadata) into a reused buffer, parsing
//! the controller's packet-out in place and matching it by id. (tonic's framing and the
//! stream's queue are outside this test.)

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use sdnperf_probe::config::{Config, Mode};
use sdnperf_probe::engine::{Clock, Flight, Phase};
use sdnperf_probe::frame;
use sdnperf_probe::p4rt::wire::{self, DevIn, MetaKind, PacketInLayout};

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

#[test]
fn packet_in_out_round_trip_allocates_nothing() {
    let cfg = Config {
        mode: Mode::Throughput,
        window: 64,
        ..Config::default()
    };
    let mut fl = Flight::new(3, &cfg);
    let layout = PacketInLayout {
        fields: vec![(1, 9, MetaKind::IngressPort), (2, 7, MetaKind::Zero)],
    };
    let mut fr = Vec::new();
    frame::frame_template(&mut fr, None);
    let mut pin = Vec::with_capacity(4096);
    let mut pout = Vec::with_capacity(4096);
    let clk = Clock {
        load_start: 0,
        measure_start: 0,
        measure_end: u64::MAX / 2,
        run_end: u64::MAX / 2,
    };
    let mut now = 1_000u64;
    let round =
        |fl: &mut Flight, pin: &mut Vec<u8>, pout: &mut Vec<u8>, fr: &mut Vec<u8>, now: u64| {
            let (n, measured) = fl.due(&cfg, &clk, now, Phase::Measure, false, 1 << 20);
            for _ in 0..n {
                let seq = fl.record(now, measured);
                let (s, d) = fl.hosts_of(seq);
                pin.clear();
                wire::encode_packet_in(
                    pin,
                    fr,
                    &layout,
                    fl.id_of(seq),
                    frame::host_mac(3, d),
                    frame::host_mac(3, s),
                    s % 4 + 1,
                );
                // the controller echoes the frame in a packet-out
                let body = &pin[2..]; // field 2 key + 1-byte length (< 128 bytes)
                let (payload, port) = wire::packet_in_view(body, 1).expect("our packet-in parses");
                pout.clear();
                wire::encode_packet_out(pout, payload, 1, port);
                match wire::parse_request(pout) {
                    DevIn::PacketOut { id: Some(id) } => fl.answer_id(id, &clk, now + 10),
                    other => panic!("{other:?}"),
                }
            }
            fl.expire(now, 1_000_000_000);
        };
    // warm-up (the histogram, the ring and the buffers are already sized; nothing grows)
    round(&mut fl, &mut pin, &mut pout, &mut fr, now);
    let before = allocs();
    for _ in 0..2000 {
        now += 1000;
        round(&mut fl, &mut pin, &mut pout, &mut fr, now);
    }
    let n = allocs() - before;
    assert!(fl.answered > 100_000, "answered {}", fl.answered);
    assert_eq!(n, 0, "{n} allocations for {} packets", fl.answered);
}
