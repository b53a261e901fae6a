//! The P4Runtime mode end to end inside one process: the emulated devices against our
//! P4Runtime echo controller (every packet-in answered, RTTs recorded, per-device rows),
//! rate mode keeping its schedule, and an echo that stops answering and goes away (the
//! device is reported closed, the report stays whole).

use std::thread;
use std::time::Duration;

use sdnperf_probe::config::{Config, Mode, Protocol};
use sdnperf_probe::{p4rt, report};

fn cfg(switches: usize, devices_file: &std::path::Path) -> Config {
    Config {
        protocol: Protocol::P4Runtime,
        switches,
        mode: Mode::Throughput,
        window: 8,
        warmup: 0.2,
        duration: 0.8,
        drain: 0.2,
        timeout: 0.3,
        settle: 0.05,
        connect_timeout: 5.0,
        interval: 0.25,
        devices_file: Some(devices_file.display().to_string()),
        ..Config::default()
    }
}

fn tmpfile(name: &str) -> std::path::PathBuf {
    let p = std::env::temp_dir().join(format!(
        "sdnperf-probe-test-{}-{name}.json",
        std::process::id()
    ));
    let _ = std::fs::remove_file(&p);
    p
}

/// Start the echo for the devices in `file` once it appears (max_time bounds it).
fn echo_when_listening(file: std::path::PathBuf, max_time: f64) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for _ in 0..500 {
            if let Ok(devs) = p4rt::read_devices_file(&file.display().to_string()) {
                let _ = p4rt::echo::run(devs, 1, 1, Some(Duration::from_secs_f64(max_time)));
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        panic!("devices file never written");
    })
}

fn run(c: Config) -> serde_json::Value {
    let out = p4rt::run(c.clone()).expect("devices listen");
    let doc = report::build(&c, &out);
    serde_json::to_string(&doc).unwrap();
    doc
}

#[test]
fn echo_answers_every_packet_in_on_every_device() {
    let f = tmpfile("echo");
    let echo = echo_when_listening(f.clone(), 4.0);
    let doc = run(cfg(3, &f));
    echo.join().unwrap();
    assert_eq!(doc["protocol"], "p4runtime");
    assert_eq!(doc["status"], "ok", "{}", doc["errors"]);
    assert_eq!(doc["switches"]["ready"], 3);
    let t = &doc["totals"];
    assert!(t["answered"].as_u64().unwrap() > 100, "{t}");
    assert_eq!(t["lost"], 0);
    assert_eq!(t["unmatched"], 0);
    assert_eq!(t["controller_errors"], 0);
    assert!(doc["rtt_us"]["p50"].as_f64().unwrap() > 0.0);
    let per = doc["per_switch"].as_array().unwrap();
    assert_eq!(
        per.iter()
            .map(|s| s["dpid"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    for s in per {
        assert!(s["answered"].as_u64().unwrap() > 0);
        assert_eq!(s["messages_from_controller"]["set_pipeline"], 1);
        assert_eq!(s["messages_from_controller"]["arbitration"], 1);
    }
    assert_eq!(doc["config"]["devices"].as_array().unwrap().len(), 3);
    let _ = std::fs::remove_file(&f);
}

#[test]
fn rate_mode_keeps_its_schedule() {
    let f = tmpfile("rate");
    let echo = echo_when_listening(f.clone(), 4.0);
    let mut c = cfg(2, &f);
    c.mode = Mode::Rate;
    c.rate = 200.0;
    c.duration = 1.0;
    let doc = run(c);
    echo.join().unwrap();
    let sent = doc["totals"]["sent"].as_u64().unwrap();
    assert!((360..=440).contains(&sent), "sent {sent}");
    assert_eq!(doc["totals"]["lost"], 0);
    assert_eq!(doc["totals"]["offered_rate"], 400.0);
    let _ = std::fs::remove_file(&f);
}

#[test]
fn controller_that_goes_away_mid_run_closes_the_device_not_the_probe() {
    let f = tmpfile("away");
    // the echo serves for 0.5 s of a ~1.5 s timeline, then its runtime (and streams) end
    let echo = echo_when_listening(f.clone(), 0.5);
    let mut c = cfg(2, &f);
    c.duration = 1.2;
    let doc = run(c);
    echo.join().unwrap();
    assert_eq!(doc["status"], "partial");
    assert_eq!(doc["switches"]["disconnected"], 2);
    for s in doc["per_switch"].as_array().unwrap() {
        assert_eq!(s["state"], "closed");
        assert!(
            s["error"].as_str().unwrap().contains("stream"),
            "{}",
            s["error"]
        );
        assert!(s["answered"].as_u64().unwrap() > 0);
    }
    let _ = std::fs::remove_file(&f);
}

#[test]
fn no_controller_fails_cleanly() {
    let f = tmpfile("none");
    let mut c = cfg(1, &f);
    c.connect_timeout = 0.3;
    let doc = run(c);
    assert_eq!(doc["status"], "failed");
    assert!(doc["errors"][0]["error"]
        .as_str()
        .unwrap()
        .contains("primary"));
    let _ = std::fs::remove_file(&f);
}
