//! The JSON document printed by `sdnperf-probe openflow` and `sdnperf-probe p4runtime`
//! (schema "sdnperf-probe/1", described field by field in README.md).

use serde_json::{json, Map, Value};

use crate::config::{Config, Protocol};
use crate::engine::{RunOutput, SwResult, SwState};
use crate::hist::Histogram;

pub const SCHEMA: &str = "sdnperf-probe/1";

fn us(ns: u64) -> f64 {
    (ns as f64 / 1000.0 * 1000.0).round() / 1000.0
}

pub fn rtt_json(h: &Histogram, buckets: bool) -> Value {
    let mut m = Map::new();
    m.insert("count".into(), json!(h.count));
    if h.count > 0 {
        m.insert("min".into(), json!(us(h.min)));
        m.insert(
            "mean".into(),
            json!((h.mean() / 1000.0 * 1000.0).round() / 1000.0),
        );
        for (k, q) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999)] {
            m.insert(k.into(), json!(us(h.quantile(q))));
        }
        m.insert("max".into(), json!(us(h.max)));
    } else {
        for k in ["min", "mean", "p50", "p90", "p99", "p999", "max"] {
            m.insert(k.into(), Value::Null);
        }
    }
    if buckets {
        let b: Vec<Value> = h
            .nonzero()
            .map(|(lo, hi, c)| json!([us(lo), us(hi), c]))
            .collect();
        m.insert("buckets".into(), Value::Array(b));
    }
    Value::Object(m)
}

/// Jain's fairness index of `xs` (1 = perfectly fair; 1/n = one gets everything).
pub fn jain(xs: &[f64]) -> Option<f64> {
    let n = xs.len() as f64;
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if xs.is_empty() || s2 == 0.0 {
        None
    } else {
        Some(s * s / (n * s2))
    }
}

fn state(s: SwState) -> &'static str {
    match s {
        SwState::Connecting => "connecting",
        SwState::Handshake => "handshake",
        SwState::Ready => "ready",
        SwState::Closed => "closed",
    }
}

fn r3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn build(cfg: &Config, out: &RunOutput) -> Value {
    let rs: &[SwResult] = &out.results;
    let m = out.timeline.measure_s;
    let rate = |n: u64| if m > 0.0 { r3(n as f64 / m) } else { 0.0 };
    let mut hist = Histogram::new();
    for r in rs {
        hist.merge(&r.hist);
    }
    let sum = |f: fn(&SwResult) -> u64| rs.iter().map(f).sum::<u64>();
    let (sent, answered, lost) = (sum(|r| r.sent), sum(|r| r.answered), sum(|r| r.lost));
    let ready_now = rs.iter().filter(|r| r.state == SwState::Ready).count();
    let ever_ready = rs.iter().filter(|r| r.ever_ready).count();
    let disconnected = rs
        .iter()
        .filter(|r| r.ever_ready && r.state == SwState::Closed)
        .count();
    let active: Vec<f64> = rs
        .iter()
        .filter(|r| r.ever_ready)
        .map(|r| r.answered as f64)
        .collect();
    let n_ticks = rs.iter().map(|r| r.ticks.len()).max().unwrap_or(0);
    let mut tot = vec![[0u64; 3]; n_ticks];
    for r in rs {
        for (i, tk) in r.ticks.iter().enumerate() {
            tot[i][0] += tk.sent;
            tot[i][1] += tk.answered;
            tot[i][2] += tk.outstanding;
        }
    }
    let iv = cfg.interval;
    let warm = out.timeline.warmup_s;
    let phase_of = |i: usize| {
        let t = i as f64 * iv;
        if t + 1e-9 < warm {
            "warmup"
        } else if t + 1e-9 < warm + m {
            "measure"
        } else {
            "drain"
        }
    };
    let mut errors: Vec<Value> = Vec::new();
    for r in rs {
        if let Some(e) = &r.error {
            errors.push(json!({"switch": r.index, "dpid": r.dpid, "at_s": r.closed_at_s.map(r3), "error": e}));
        }
    }
    let status = if ever_ready == 0 {
        "failed"
    } else if disconnected > 0 || ever_ready < cfg.switches {
        "partial"
    } else {
        "ok"
    };
    let per_switch: Vec<Value> = rs
        .iter()
        .map(|r| {
            let mut msgs = Map::new();
            for (name, c) in &r.messages {
                msgs.insert(name.clone(), json!(c));
            }
            json!({
                "index": r.index, "dpid": r.dpid, "state": state(r.state), "ready": r.ever_ready,
                "error": r.error, "closed_at_s": r.closed_at_s.map(r3),
                "sent": r.sent, "answered": r.answered, "lost": r.lost, "late": r.late,
                "duplicates": r.duplicates, "unmatched": r.unmatched,
                "schedule_slips": r.schedule_slips, "backpressure_skipped": r.backpressure_skipped, "backpressure_s": r3(r.backpressure_ns as f64 * 1e-9),
                "controller_errors": r.ctl_errors,
                "sent_rate": rate(r.sent), "answered_rate": rate(r.answered),
                "rtt_us": rtt_json(&r.hist, false),
                "messages_from_controller": Value::Object(msgs),
                "series": {
                    "sent": r.ticks.iter().map(|t| t.sent).collect::<Vec<_>>(),
                    "answered": r.ticks.iter().map(|t| t.answered).collect::<Vec<_>>(),
                    "outstanding": r.ticks.iter().map(|t| t.outstanding).collect::<Vec<_>>(),
                },
            })
        })
        .collect();
    json!({
        "schema": SCHEMA,
        "protocol": cfg.protocol.name(),
        "status": status,
        "config": {
            "controller": if cfg.protocol == Protocol::OpenFlow13 { json!(cfg.controller.to_string()) } else { Value::Null },
            "devices": out.endpoints, "switches": cfg.switches, "mode": cfg.mode.name(),
            "rate_per_switch": if cfg.mode == crate::config::Mode::Rate { json!(cfg.rate) } else { Value::Null },
            "window": cfg.window_per_switch().min(u32::MAX as usize),
            "warmup_s": cfg.warmup, "duration_s": cfg.duration, "packets": cfg.packets,
            "drain_s": cfg.drain, "timeout_s": cfg.timeout, "hosts": cfg.hosts, "ports": cfg.ports,
            "dpid_base": cfg.dpid_base, "threads": cfg.threads, "buffer_ids": cfg.buffer_ids,
            "interval_s": cfg.interval, "frame": if cfg.vlan.is_some() { "ethernet/802.1q/ipv4/tcp-syn, 70 bytes, 64-bit id in payload" } else { "ethernet/ipv4/tcp-syn, 66 bytes, 64-bit id in payload" },
            "vlan": cfg.vlan, "reason": if cfg.reason_action { "action" } else { "no-match" }, "table_id": cfg.table_id,
        },
        "switches": {"requested": cfg.switches, "ready": ever_ready, "ready_at_end": ready_now,
                     "disconnected": disconnected, "failed_to_connect": cfg.switches - ever_ready},
        "window_s": {"handshake": r3(out.timeline.connected_s), "warmup": out.timeline.warmup_s,
                     "measure": r3(m), "drain": out.timeline.drain_s},
        "totals": {
            "sent": sent, "answered": answered, "lost": lost,
            "late": sum(|r| r.late), "duplicates": sum(|r| r.duplicates), "unmatched": sum(|r| r.unmatched),
            "schedule_slips": sum(|r| r.schedule_slips), "backpressure_skipped": sum(|r| r.backpressure_skipped), "controller_errors": sum(|r| r.ctl_errors),
            "sent_rate": rate(sent), "answered_rate": rate(answered),
            "offered_rate": if cfg.mode == crate::config::Mode::Rate { json!(cfg.rate * ever_ready as f64) } else { Value::Null },
            "loss_ratio": if sent > 0 { json!(r3(lost as f64 / sent as f64 * 1000.0) / 1000.0) } else { Value::Null },
            "fairness_jain": jain(&active).map(|x| (x * 10000.0).round() / 10000.0),
        },
        "rtt_us": rtt_json(&hist, true),
        "probe_cpu": {"measure_pct": r3(out.cpu_measure_pct), "run_pct": r3(out.cpu_run_pct),
                      "threads": cfg.threads, "cores": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)},
        "series": {
            "interval_s": iv,
            "t": (0..n_ticks).map(|i| r3(i as f64 * iv)).collect::<Vec<_>>(),
            "phase": (0..n_ticks).map(phase_of).collect::<Vec<_>>(),
            "sent": tot.iter().map(|x| x[0]).collect::<Vec<_>>(),
            "answered": tot.iter().map(|x| x[1]).collect::<Vec<_>>(),
            "outstanding": tot.iter().map(|x| x[2]).collect::<Vec<_>>(),
        },
        "errors": errors,
        "per_switch": per_switch,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain(&[1.0, 0.0, 0.0, 0.0]).unwrap() - 0.25).abs() < 1e-12);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
    }
}
