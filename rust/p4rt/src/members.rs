//! `sdnperf-switch-grpc --switch SPEC`: the switches one process serves together (one
//! data-plane thread for all of them, each with its own P4Runtime server, device id,
//! pipeline, tables and ctl socket). A SPEC names one switch:
//!
//! ```text
//! device=3;grpc=127.0.0.1:50003;ctl=/run/s3.ctl;ports=1@s3-eth1,2@s3-eth2
//! ```
//!
//! (`;` between fields, `,` between ports; `ctl` is optional).

/// One switch of a shared process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberSpec {
    pub device_id: u64,
    /// P4Runtime listen address (host:port)
    pub grpc: String,
    /// ctl text commands on this Unix socket
    pub ctl_socket: Option<String>,
    pub ports: Vec<(u32, String)>,
}

/// Parses one `--switch` value.
pub fn parse_member(v: &str) -> Result<MemberSpec, String> {
    let (mut device, mut grpc, mut ctl, mut ports) = (None, None, None, None);
    for field in v.split(';').filter(|f| !f.is_empty()) {
        let (k, val) = field
            .split_once('=')
            .ok_or_else(|| format!("--switch {}: field {:?} is not KEY=VALUE", v, field))?;
        match k {
            "device" => {
                device = Some(
                    val.parse::<u64>()
                        .map_err(|_| format!("--switch {}: device {:?} is not a number", v, val))?,
                )
            }
            "grpc" => {
                let (_, p) = val
                    .rsplit_once(':')
                    .ok_or_else(|| format!("--switch {}: grpc {:?}: expected ADDR:PORT", v, val))?;
                p.parse::<u16>()
                    .map_err(|_| format!("--switch {}: grpc {:?}: bad port", v, val))?;
                grpc = Some(val.to_string())
            }
            "ctl" => ctl = Some(val.to_string()),
            "ports" => {
                let list = val
                    .split(',')
                    .filter(|p| !p.is_empty())
                    .map(sdnperf_switch::cli::parse_iface)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| format!("--switch {}: ports: {}", v, e))?;
                ports = Some(list)
            }
            _ => {
                return Err(format!(
                    "--switch {}: unknown field {:?} (device, grpc, ctl, ports)",
                    v, k
                ))
            }
        }
    }
    Ok(MemberSpec {
        device_id: device.ok_or_else(|| format!("--switch {}: device=N missing", v))?,
        grpc: grpc.ok_or_else(|| format!("--switch {}: grpc=ADDR:PORT missing", v))?,
        ctl_socket: ctl,
        ports: ports.unwrap_or_default(),
    })
}

/// Checks the switches of one process against each other: device ids, gRPC addresses,
/// ctl sockets and interfaces are each one switch's own.
pub fn check_members(ms: &[MemberSpec]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for m in ms {
        let mut keys = vec![
            format!("device id {}", m.device_id),
            format!("gRPC address {}", m.grpc),
        ];
        keys.extend(m.ctl_socket.iter().map(|c| format!("ctl socket {}", c)));
        keys.extend(m.ports.iter().map(|(_, i)| format!("interface {}", i)));
        let mut nums = std::collections::HashSet::new();
        for (n, _) in &m.ports {
            if !nums.insert(*n) {
                return Err(format!(
                    "--switch device={}: port {} given twice",
                    m.device_id, n
                ));
            }
        }
        for k in keys {
            if !seen.insert(k.clone()) {
                return Err(format!("--switch: {} given to two switches", k));
            }
        }
    }
    Ok(())
}

/// Splits the switches into `n` contiguous groups of near-equal size (one per
/// data-plane thread; never an empty group).
pub fn groups<T>(items: Vec<T>, n: usize) -> Vec<Vec<T>> {
    let n = n.clamp(1, items.len().max(1));
    let (base, extra) = (items.len() / n, items.len() % n);
    let mut out = Vec::with_capacity(n);
    let mut it = items.into_iter();
    for i in 0..n {
        out.push(it.by_ref().take(base + usize::from(i < extra)).collect());
    }
    out
}
