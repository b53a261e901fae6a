//! The P4Runtime mode: emulated devices (`device`) the controller dials, the hand-written
//! stream encoding (`wire`), and our P4Runtime echo controller (`echo`).

pub mod device;
pub mod echo;
pub mod wire;

use crate::config::Config;
use crate::engine::{self, RunOutput};

/// Bind the devices, announce their addresses (`--devices-file`, and stderr), run the
/// benchmark timeline. Err when a device cannot listen.
pub fn run(cfg: Config) -> Result<RunOutput, String> {
    let listeners = device::bind(&cfg)?;
    let mut endpoints = Vec::new();
    for l in &listeners {
        endpoints.push(
            l.local_addr()
                .map_err(|e| format!("local_addr: {e}"))?
                .to_string(),
        );
    }
    let devices: Vec<serde_json::Value> = endpoints
        .iter()
        .enumerate()
        .map(|(i, a)| serde_json::json!({"device_id": cfg.dpid_base + i as u64, "address": a}))
        .collect();
    let doc = serde_json::json!({"devices": devices});
    if let Some(path) = &cfg.devices_file {
        // written whole, then renamed: a reader never sees half a file
        let tmp = format!("{path}.tmp");
        std::fs::write(&tmp, doc.to_string()).map_err(|e| format!("--devices-file {tmp}: {e}"))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("--devices-file {path}: {e}"))?;
    }
    eprintln!(
        "sdnperf-probe p4runtime: {} device(s) listening: {}",
        endpoints.len(),
        endpoints
            .iter()
            .enumerate()
            .map(|(i, a)| format!("{}@{a}", cfg.dpid_base + i as u64))
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut out = engine::run_timeline(cfg, move |cfg, sh| {
        let (c, s) = (cfg.clone(), sh.clone());
        vec![std::thread::spawn(move || device::serve(c, s, listeners))]
    });
    out.endpoints = endpoints;
    Ok(out)
}

/// Parse a devices file (`{"devices": [{"device_id": N, "address": "127.0.0.1:P"}]}`).
pub fn read_devices_file(path: &str) -> Result<Vec<(u64, String)>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| format!("{path}: not JSON: {e}"))?;
    let list = v["devices"]
        .as_array()
        .ok_or_else(|| format!("{path}: no \"devices\" list"))?;
    list.iter()
        .enumerate()
        .map(|(i, d)| {
            let id = d["device_id"]
                .as_u64()
                .ok_or_else(|| format!("{path}: devices[{i}].device_id: expected a number"))?;
            let a = d["address"].as_str().ok_or_else(|| {
                format!("{path}: devices[{i}].address: expected \"127.0.0.1:PORT\"")
            })?;
            crate::config::parse_loopback(a, &format!("{path}: devices[{i}].address"))?;
            Ok((id, a.to_string()))
        })
        .collect()
}
