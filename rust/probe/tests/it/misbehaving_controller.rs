//! A controller that misbehaves never crashes the probe: each test runs a fake controller
//! on loopback and checks the probe returns a well-formed report saying what happened.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use sdnperf_probe::config::{Config, Mode};
use sdnperf_probe::{echo, engine, of13, report};

fn cfg(addr: std::net::SocketAddr, switches: usize) -> Config {
    Config {
        controller: addr,
        switches,
        mode: Mode::Throughput,
        window: 8,
        warmup: 0.2,
        duration: 0.8,
        drain: 0.2,
        timeout: 0.3,
        settle: 0.05,
        connect_timeout: 2.0,
        interval: 0.25,
        ..Config::default()
    }
}

/// Accept connections forever, each handled by `f` in its own thread.
fn fake<F>(f: F) -> std::net::SocketAddr
where
    F: Fn(TcpStream) + Send + Sync + Clone + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    thread::spawn(move || {
        for s in l.incoming().flatten() {
            let f = f.clone();
            thread::spawn(move || f(s));
        }
    });
    addr
}

/// Do the handshake of a well-behaved controller: hello + features request, read replies
/// until the features reply arrives.
fn handshake(s: &mut TcpStream) {
    let mut v = Vec::new();
    of13::hello(&mut v, 1);
    of13::simple(&mut v, of13::t::FEATURES_REQUEST, 2);
    s.write_all(&v).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let mut buf = vec![0u8; 65536];
    let mut have = 0;
    loop {
        let n = s.read(&mut buf[have..]).unwrap_or(0);
        if n == 0 {
            return;
        }
        have += n;
        let mut off = 0;
        while have - off >= 8 {
            let len = u16::from_be_bytes([buf[off + 2], buf[off + 3]]) as usize;
            if buf[off + 1] == of13::t::FEATURES_REPLY {
                return;
            }
            off += len.max(8);
        }
        buf.copy_within(off..have, 0);
        have -= off;
    }
}

fn run(c: Config) -> serde_json::Value {
    let out = engine::run(c.clone());
    let doc = report::build(&c, &out);
    // the document always serializes
    serde_json::to_string(&doc).unwrap();
    doc
}

#[test]
fn connection_refused() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    drop(l);
    let doc = run(cfg(addr, 2));
    assert_eq!(doc["status"], "failed");
    assert_eq!(doc["switches"]["ready"], 0);
    assert_eq!(doc["errors"].as_array().unwrap().len(), 2);
}

#[test]
fn controller_closes_at_once() {
    let addr = fake(drop);
    let doc = run(cfg(addr, 3));
    assert_eq!(doc["status"], "failed");
    let e = doc["errors"][0]["error"].as_str().unwrap();
    assert!(e.contains("closed") || e.contains("failed"), "{e}");
}

#[test]
fn controller_sends_length_below_header() {
    let addr = fake(|mut s| {
        let _ = s.write_all(&[4, 0, 0, 3, 0, 0, 0, 1, 9, 9, 9]);
        thread::sleep(Duration::from_secs(3));
    });
    let doc = run(cfg(addr, 1));
    assert_eq!(doc["status"], "failed");
    assert!(
        doc["errors"][0]["error"]
            .as_str()
            .unwrap()
            .contains("malformed"),
        "{doc}"
    );
}

#[test]
fn controller_speaks_openflow_10() {
    let addr = fake(|mut s| {
        let _ = s.write_all(&[1, 0, 0, 8, 0, 0, 0, 1]);
        thread::sleep(Duration::from_secs(3));
    });
    let doc = run(cfg(addr, 1));
    assert!(
        doc["errors"][0]["error"].as_str().unwrap().contains("1.3"),
        "{doc}"
    );
}

#[test]
fn controller_crashes_mid_run_keeps_partial_results() {
    let addr = fake(|mut s| {
        handshake(&mut s);
        // answer nothing, read for a while, then vanish (a crash)
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        let mut buf = [0u8; 4096];
        let until = std::time::Instant::now() + Duration::from_millis(650);
        while std::time::Instant::now() < until {
            let _ = s.read(&mut buf);
        }
    });
    let doc = run(cfg(addr, 2));
    assert_eq!(
        doc["status"],
        "failed_or_partial".replace("failed_or_", ""),
        "{doc}"
    );
    assert_eq!(doc["switches"]["disconnected"], 2);
    assert!(doc["totals"]["sent"].as_u64().unwrap() > 0);
    assert!(doc["totals"]["lost"].as_u64().unwrap() > 0);
    assert!(doc["errors"][0]["at_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn controller_sends_garbage_after_handshake() {
    let addr = fake(|mut s| {
        handshake(&mut s);
        let mut junk = Vec::new();
        // a PACKET_OUT whose actions_len runs past its end, then random bytes
        junk.extend_from_slice(&[4, of13::t::PACKET_OUT, 0, 24, 0, 0, 0, 7]);
        junk.extend_from_slice(&[
            0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x01, 0x00, 0, 0, 0, 0, 0, 0,
        ]);
        let mut x = 0x9e3779b97f4a7c15u64;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            junk.push(x as u8);
        }
        let _ = s.write_all(&junk);
        thread::sleep(Duration::from_secs(3));
    });
    let doc = run(cfg(addr, 1));
    assert_eq!(doc["switches"]["disconnected"], 1, "{doc}");
    assert!(
        doc["errors"][0]["error"]
            .as_str()
            .unwrap()
            .contains("malformed"),
        "{doc}"
    );
}

#[test]
fn unknown_and_odd_messages_get_errors_not_crashes() {
    let addr = fake(|mut s| {
        handshake(&mut s);
        let mut v = Vec::new();
        of13::put_header(&mut v, 200, 8, 5); // unknown type
        of13::put_header(&mut v, of13::t::MULTIPART_REQUEST, 16, 6); // unknown multipart
        v.extend_from_slice(&[0xff, 0xfe, 0, 0, 0, 0, 0, 0]);
        of13::put_header(&mut v, of13::t::ROLE_REQUEST, 8, 7); // truncated role request
        of13::put_header(&mut v, of13::t::BARRIER_REQUEST, 8, 8);
        let _ = s.write_all(&v);
        // read until the barrier reply
        let mut buf = vec![0u8; 1 << 16];
        let _ = s.set_read_timeout(Some(Duration::from_millis(1500)));
        let mut seen = Vec::new();
        while let Ok(n) = s.read(&mut buf) {
            if n == 0 {
                break;
            }
            seen.extend_from_slice(&buf[..n]);
            if seen.windows(2).any(|w| w == [4, of13::t::BARRIER_REPLY]) {
                break;
            }
        }
        thread::sleep(Duration::from_secs(2));
    });
    let doc = run(cfg(addr, 1));
    assert_eq!(doc["switches"]["ready"], 1, "{doc}");
    assert_eq!(doc["switches"]["disconnected"], 0, "{doc}");
}

#[test]
fn echo_controller_answers_everything() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let h = thread::spawn(move || {
        echo::serve(
            l,
            st,
            Arc::new(echo::EchoStats::default()),
            Some(Duration::from_secs(10)),
        )
    });
    for (mode, buffer_ids) in [
        (Mode::Throughput, false),
        (Mode::Latency, false),
        (Mode::Rate, true),
    ] {
        let mut c = cfg(addr, 3);
        c.mode = mode;
        c.rate = 500.0;
        c.buffer_ids = buffer_ids;
        let doc = run(c);
        assert_eq!(doc["status"], "ok", "{doc}");
        let t = &doc["totals"];
        assert!(t["answered"].as_u64().unwrap() > 0);
        assert_eq!(t["unmatched"], 0);
        assert_eq!(t["lost"], 0, "{doc}");
        assert!(doc["rtt_us"]["p50"].as_f64().unwrap() > 0.0);
        assert!(doc["totals"]["fairness_jain"].as_f64().unwrap() > 0.5);
        let ps = doc["per_switch"].as_array().unwrap();
        assert_eq!(ps.len(), 3);
        assert_eq!(ps[2]["dpid"], 3);
    }
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    h.join().unwrap().unwrap();
}

#[test]
fn count_mode_ends_early() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let h = thread::spawn(move || {
        echo::serve(
            l,
            st,
            Arc::new(echo::EchoStats::default()),
            Some(Duration::from_secs(10)),
        )
    });
    let mut c = cfg(addr, 2);
    c.packets = Some(1000);
    c.duration = 30.0;
    let doc = run(c);
    assert_eq!(doc["totals"]["sent"], 2000, "{doc}");
    assert_eq!(doc["totals"]["answered"], 2000);
    assert!(doc["window_s"]["measure"].as_f64().unwrap() < 5.0);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    h.join().unwrap().unwrap();
}

#[test]
fn rate_mode_keeps_its_schedule() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let st = stop.clone();
    let h = thread::spawn(move || {
        echo::serve(
            l,
            st,
            Arc::new(echo::EchoStats::default()),
            Some(Duration::from_secs(10)),
        )
    });
    let mut c = cfg(addr, 2);
    c.mode = Mode::Rate;
    c.rate = 2000.0;
    c.duration = 1.0;
    let doc = run(c);
    let sent = doc["totals"]["sent"].as_u64().unwrap() as f64;
    assert!((sent - 4000.0).abs() < 400.0, "{doc}");
    assert_eq!(doc["totals"]["offered_rate"], 4000.0);
    assert_eq!(doc["totals"]["answered"], doc["totals"]["sent"]);
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    h.join().unwrap().unwrap();
}

#[test]
fn controller_that_never_answers_loses_everything_and_keeps_the_window() {
    let addr = fake(|mut s| {
        handshake(&mut s);
        let _ = s.set_read_timeout(Some(Duration::from_millis(50)));
        let mut buf = [0u8; 4096];
        let until = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < until {
            let _ = s.read(&mut buf);
        }
    });
    let mut c = cfg(addr, 1);
    c.window = 4;
    let doc = run(c);
    assert_eq!(doc["status"], "ok", "{doc}");
    assert_eq!(doc["totals"]["answered"], 0);
    // every timeout (0.3 s) frees the window: a few rounds of 4 in 0.8 s, all lost
    let sent = doc["totals"]["sent"].as_u64().unwrap();
    assert!((4..=16).contains(&sent), "{doc}");
    assert_eq!(doc["totals"]["lost"], doc["totals"]["sent"]);
    assert!(doc["rtt_us"]["p50"].is_null());
}

/// A controller that answers every packet-in with a FLOW_MOD only (no PACKET_OUT): the
/// probe matches it by the frame's MACs, in order, even with several packet-ins per host
/// outstanding.
#[test]
fn flow_mod_answers_match_by_mac_in_order() {
    let addr = fake(|mut s| {
        handshake(&mut s);
        let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
        let mut buf = vec![0u8; 1 << 17];
        let mut have = 0;
        let mut out = Vec::new();
        let until = std::time::Instant::now() + Duration::from_secs(3);
        while std::time::Instant::now() < until {
            let n = match s.read(&mut buf[have..]) {
                Ok(0) => return,
                Ok(n) => n,
                Err(_) => continue,
            };
            have += n;
            let mut off = 0;
            while have - off >= 8 {
                let len = u16::from_be_bytes([buf[off + 2], buf[off + 3]]) as usize;
                if have - off < len {
                    break;
                }
                if let Some(pi) = of13::parse_packet_in(&buf[off..off + len]) {
                    let mut dst = [0u8; 6];
                    let mut src = [0u8; 6];
                    dst.copy_from_slice(&pi.data[0..6]);
                    src.copy_from_slice(&pi.data[6..12]);
                    of13::flow_mod_add(
                        &mut out,
                        9,
                        of13::NO_BUFFER,
                        pi.in_port.unwrap_or(1),
                        dst,
                        src,
                        2,
                    );
                }
                off += len;
            }
            buf.copy_within(off..have, 0);
            have -= off;
            if !out.is_empty() {
                thread::sleep(Duration::from_millis(2)); // let several per host queue up
                if s.write_all(&out).is_err() {
                    return;
                }
                out.clear();
            }
        }
    });
    let mut c = cfg(addr, 1);
    c.hosts = 2;
    c.window = 8;
    let doc = run(c);
    let t = &doc["totals"];
    assert!(t["answered"].as_u64().unwrap() > 100, "{doc}");
    assert_eq!(t["duplicates"], 0, "{doc}");
    assert_eq!(t["late"], 0, "{doc}");
    // whatever is still in flight at the end of the drain is at most one window
    assert!(t["lost"].as_u64().unwrap() <= 8, "{doc}");
    assert!(doc["rtt_us"]["p50"].as_f64().unwrap() >= 1000.0, "{doc}");
}
