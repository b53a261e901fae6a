//! The shared data-plane loop's epoll wait through real veth ports: twelve switches
//! (l1_fwd, port 1 <-> port 2) in one loop, in a private network namespace (needs root;
//! nothing is left behind: the namespace goes with the test's thread). The loop serves
//! only the ports epoll reports, so these check what that could lose: a port of the
//! last switch, a port with more packets waiting than one batch (256), control requests
//! through a front end's wake fd, and a delayed port's departure by the timer.
//!
//! One test function: the loop's stop flag is process-wide.

use sdnperf_switch::ctl::{CtlHooks, Request};
use sdnperf_switch::dataplane::{self, IoKind};
use sdnperf_switch::exec::Engine;
use sdnperf_switch::json;
use sdnperf_switch::ports::RX_FRAMES_DEFAULT;
use sdnperf_switch::switch::Switch;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

const SWITCHES: usize = 12;
/// more than the loop's receive batch (256): one port must be read several times
const BURST: u32 = 700;
const MARK: [u8; 2] = [0x5d, 0x9e];

fn ip(args: &[&str]) {
    let s = Command::new("ip").args(args).status().expect("run ip");
    assert!(s.success(), "ip {:?} failed", args);
}

/// A raw socket on a host-side veth end (the test's "host").
struct Host {
    fd: i32,
    ifindex: i32,
}

impl Host {
    fn open(name: &str) -> Host {
        let ifindex = sdnperf_switch::ports::afpacket::ifindex(name).unwrap();
        let proto = (libc::ETH_P_ALL as u16).to_be();
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, proto as i32) };
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let mut sll: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = proto;
        sll.sll_ifindex = ifindex;
        let r = unsafe {
            libc::bind(
                fd,
                &sll as *const libc::sockaddr_ll as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        assert_eq!(r, 0, "bind {}: {}", name, std::io::Error::last_os_error());
        let tv = libc::timeval {
            tv_sec: 0,
            tv_usec: 100_000,
        };
        // the whole burst must fit the test's own receive queue (the default drops it)
        let big: i32 = 8 << 20;
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVBUFFORCE,
                &big as *const i32 as *const libc::c_void,
                4,
            );
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_RCVTIMEO,
                &tv as *const libc::timeval as *const libc::c_void,
                std::mem::size_of::<libc::timeval>() as u32,
            )
        };
        Host { fd, ifindex }
    }

    /// An ARP-typed frame (l1_fwd forwards non-IPv4 frames straight) carrying `seq`.
    fn send(&self, seq: u32) {
        let mut f = vec![0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1, 0x08, 0x06];
        f.extend_from_slice(&MARK);
        f.extend_from_slice(&seq.to_be_bytes());
        f.resize(64, 0);
        let r = unsafe { libc::send(self.fd, f.as_ptr() as *const libc::c_void, f.len(), 0) };
        assert_eq!(r, 64, "send: {}", std::io::Error::last_os_error());
    }

    /// The sequence numbers of marked frames arriving (not leaving) until `want` came or
    /// `within` passed.
    fn receive(&self, want: usize, within: Duration) -> Vec<u32> {
        let t0 = Instant::now();
        let mut got = vec![];
        let mut buf = [0u8; 2048];
        while got.len() < want && t0.elapsed() < within {
            let mut from: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_ll>() as u32;
            let r = unsafe {
                libc::recvfrom(
                    self.fd,
                    buf.as_mut_ptr() as *mut libc::c_void,
                    buf.len(),
                    0,
                    &mut from as *mut libc::sockaddr_ll as *mut libc::sockaddr,
                    &mut len,
                )
            };
            if r < 20 || from.sll_pkttype == libc::PACKET_OUTGOING {
                continue;
            }
            assert_eq!(from.sll_ifindex, self.ifindex);
            if buf[12..14] == [0x08, 0x06] && buf[14..16] == MARK {
                got.push(u32::from_be_bytes(buf[16..20].try_into().unwrap()));
            }
        }
        got
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        unsafe { libc::close(self.fd) };
    }
}

fn ctl(mb: &dataplane::Mailbox<Request>, line: &str) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    assert!(mb.send(Request {
        line: line.into(),
        reply: tx,
    }));
    rx.recv_timeout(Duration::from_secs(5))
        .expect("no answer from the loop")
        .unwrap()
}

fn in_own_netns() -> Result<(), String> {
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(format!(
            "unshare(CLONE_NEWNET): {}",
            std::io::Error::last_os_error()
        ));
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Err("no `ip` command".into());
    }
    ip(&["link", "set", "lo", "up"]);
    Ok(())
}

#[test]
fn epoll_loop_serves_every_port_drains_bursts_and_wakes_for_control_and_timers() {
    // the namespace belongs to this thread (and what it starts); it ends with them
    std::thread::spawn(|| {
        if let Err(e) = in_own_netns() {
            eprintln!("skipped: needs root for a private network namespace: {}", e);
            return;
        }
        run();
    })
    .join()
    .unwrap();
}

fn run() {
    let prog = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/l1_fwd.json");
    let mut fronts = vec![];
    let mut mailboxes = vec![];
    let mut all_ports = vec![];
    for k in 0..SWITCHES {
        for side in ["a", "b"] {
            let (sw, host) = (format!("s{}{}", side, k), format!("h{}{}", side, k));
            ip(&["link", "add", &sw, "type", "veth", "peer", "name", &host]);
            ip(&["link", "set", &sw, "up"]);
            ip(&["link", "set", &host, "up"]);
        }
        let mut notes = vec![];
        let ports = dataplane::open_ports(
            &[(1, format!("sa{}", k)), (2, format!("sb{}", k))],
            IoKind::AfPacket,
            false,
            RX_FRAMES_DEFAULT,
            &mut notes,
        )
        .unwrap();
        let (mb, inbox) = dataplane::mailbox::<Request>();
        let sw = Switch::new(Engine::new(
            json::load_file(prog.to_str().unwrap()).unwrap(),
        ));
        fronts.push(CtlHooks {
            sw,
            requests: Some(inbox),
        });
        mailboxes.push(mb);
        all_ports.push(ports);
    }
    let last = SWITCHES - 1;
    let (in_last, out_last) = (
        Host::open(&format!("ha{}", last)),
        Host::open(&format!("hb{}", last)),
    );
    // a burst waits in the last switch's port before the loop starts
    for seq in 0..BURST {
        in_last.send(seq);
    }
    std::thread::sleep(Duration::from_millis(200));
    let dp = std::thread::spawn(move || {
        let mut loops = vec![];
        for (front, ports) in fronts.iter_mut().zip(all_ports) {
            let opts = dataplane::Opts {
                name: "test".into(),
                ..Default::default()
            };
            loops.push(dataplane::Loop::new(front, ports, opts));
        }
        dataplane::run_shared(fronts.iter_mut().zip(loops).collect())
    });

    let mut got = out_last.receive(BURST as usize, Duration::from_secs(5));
    got.sort();
    assert_eq!(
        got,
        (0..BURST).collect::<Vec<_>>(),
        "the burst on the last switch's port was not forwarded in full ({} of {})",
        got.len(),
        BURST
    );

    // one packet at a time into a sleeping loop, on the last port of all and the first
    for (k, seq) in [(last, 10_000), (0, 10_001), (last, 10_002)] {
        let (a, b) = (
            Host::open(&format!("ha{}", k)),
            Host::open(&format!("hb{}", k)),
        );
        std::thread::sleep(Duration::from_millis(30));
        a.send(seq);
        assert_eq!(
            b.receive(1, Duration::from_secs(2)),
            vec![seq],
            "switch {}",
            k
        );
    }
    // and backwards through port 2 of a switch in the middle
    let (a, b) = (Host::open("ha5"), Host::open("hb5"));
    b.send(20_000);
    assert_eq!(a.receive(1, Duration::from_secs(2)), vec![20_000]);

    // control requests reach each switch through its wake fd while the loop sleeps
    for (k, mb) in mailboxes.iter().enumerate() {
        let want = if k == last { BURST as u64 + 2 } else { 0 };
        let stats = ctl(mb, "stats");
        let rx: u64 = stats
            .split_whitespace()
            .find_map(|w| w.strip_prefix("rx="))
            .unwrap()
            .parse()
            .unwrap();
        // IPv6 chatter of the new links also passes the switches: at least ours
        assert!(rx >= want, "switch {}: {} (want rx >= {})", k, stats, want);
    }

    // a delayed port: the packet leaves by the timer, not before, not much after
    ctl(&mailboxes[3], "port_impair 2 delay=40ms");
    let (a, b) = (Host::open("ha3"), Host::open("hb3"));
    std::thread::sleep(Duration::from_millis(30));
    let t0 = Instant::now();
    a.send(30_000);
    assert_eq!(b.receive(1, Duration::from_secs(2)), vec![30_000]);
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(40), "left after {:?}", took);
    assert!(took < Duration::from_millis(500), "left after {:?}", took);

    dataplane::request_stop();
    assert_eq!(dp.join().unwrap(), "signal");
}
