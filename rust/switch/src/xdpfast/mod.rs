//! XDP fast path: programs in a simple subset (see `compile`) run inside the kernel, in
//! the XDP hook of each AF_XDP port, and forward straight to the egress interface with
//! an XDP redirect (no socket, no skb on veth). Everything else — and every packet the
//! fast path does not finish — reaches the port's AF_XDP socket as before, where the
//! full engine runs it. Tables live in BPF maps, kept equal to the engine's tables by
//! `sync` after every control-plane change.
//!
//! Caveats (printed by the switch when the fast path is on): a redirect into a veth is
//! accepted only when the peer end runs NAPI (an XDP program, or GRO on:
//! `ethtool -K PEER gro on`), otherwise the kernel drops it (`ethtool -S` shows
//! xdp_xmit_errors). A port with a rate alone is shaped by the kernel and the engine
//! together on one shared link clock (`shaper`); delay, jitter, loss, serialisation and
//! ingress impairment send that port's packets to the engine; egress queue rates
//! (set_queue_rate) turn the fast path off while any is set.

pub mod asm;
pub mod compile;
pub mod shaper;

use crate::bpf::*;
use crate::pipeline::Program;
use crate::switch::Switch;
use compile::{key_layout, value_params, KeyLayout, MapFds, PhvLayout, COUNTERS};
use shaper::ShaperMap;
use std::collections::HashMap;
use std::sync::Arc;

/// Ports numbered below this can be fast-path egress ports (devmap size).
pub const MAX_PORTS: u32 = 512;

struct TableMap {
    fd: Fd,
    key: KeyLayout,
    nparams: usize,
    /// what the map holds (key bytes -> value bytes), to update only differences
    shadow: HashMap<Vec<u8>, Vec<u8>>,
    /// the table's `version` the map was last made equal to
    synced: Option<u64>,
}

pub struct FastPath {
    phv: Fd,
    ctl: Fd,
    defaults: Fd,
    defaults_params: usize,
    tables: Vec<Option<TableMap>>,
    /// port -> ifindex; only the programs use it (kept open with them)
    _devmap: Fd,
    xskmap: Fd,
    /// per-port link clocks and modes, shared with the engine
    shaper: Arc<ShaperMap>,
    progs: Vec<(u32, Fd)>,
    lay: PhvLayout,
    /// where standard_metadata.egress_port is in the scratch area (tests read it)
    egress_port_off: i16,
}

/// What the fast path did with one packet (tests).
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Drop,
    Forward(u32, Vec<u8>),
    /// left to the engine (AF_XDP socket)
    Punt,
}

fn io(what: &str) -> impl Fn(std::io::Error) -> String + '_ {
    move |e| format!("xdp fast path: {}: {}", what, e)
}

/// Why the fast path cannot run this program (None: it can).
pub fn unsupported_reason(p: &Program) -> Option<String> {
    compile::check(p).err()
}

impl FastPath {
    /// Compiles and loads one XDP program per port (`ports`: (port, ifindex)); nothing is
    /// attached yet (see `prog`). Tables are copied into the maps.
    pub fn new(
        sw: &Switch,
        ports: &[(u32, u32)],
        cpu_port: Option<u32>,
    ) -> Result<FastPath, String> {
        let p = sw.program();
        compile::check(p)?;
        let lay = PhvLayout {
            nfields: p.fields.len(),
            nheaders: p.headers.len(),
        };
        let phv =
            map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, lay.size(), 1, 0).map_err(io("phv map"))?;
        let ctl = map_create(BPF_MAP_TYPE_ARRAY, 4, 4, 1, 0).map_err(io("ctl map"))?;
        let defaults_params = p
            .tables
            .iter()
            .map(|t| value_params(p, t))
            .max()
            .unwrap_or(0);
        let defaults = map_create(
            BPF_MAP_TYPE_ARRAY,
            4,
            8 + 8 * defaults_params as u32,
            p.tables.len().max(1) as u32,
            0,
        )
        .map_err(io("defaults map"))?;
        let mut tables = Vec::new();
        for (ti, t) in p.tables.iter().enumerate() {
            tables.push(match key_layout(t)? {
                None => None,
                Some(key) => {
                    let nparams = value_params(p, t);
                    let (kind, cap) = if key.lpm {
                        (BPF_MAP_TYPE_LPM_TRIE, 1 << 24)
                    } else {
                        (
                            BPF_MAP_TYPE_HASH,
                            (t.max_size.max(sw.table(ti).num_entries).max(65536))
                                .next_power_of_two() as u32,
                        )
                    };
                    let fd = map_create(
                        kind,
                        key.size,
                        8 + 8 * nparams as u32,
                        cap,
                        BPF_F_NO_PREALLOC,
                    )
                    .map_err(io(&format!("table {} map", t.name)))?;
                    Some(TableMap {
                        fd,
                        key,
                        nparams,
                        shadow: HashMap::new(),
                        synced: None,
                    })
                }
            });
        }
        let devmap = map_create(BPF_MAP_TYPE_DEVMAP, 4, 4, MAX_PORTS, 0).map_err(io("devmap"))?;
        let xskmap = map_create(BPF_MAP_TYPE_XSKMAP, 4, 4, MAX_PORTS, 0).map_err(io("xskmap"))?;
        let shaper = Arc::new(ShaperMap::new(MAX_PORTS)?);
        for &(port, ifindex) in ports {
            if port < MAX_PORTS {
                map_update(&devmap, &port.to_ne_bytes(), &ifindex.to_ne_bytes())
                    .map_err(io("devmap update"))?;
            }
        }
        let fds = MapFds {
            phv: phv.0,
            ctl: ctl.0,
            defaults: defaults.0,
            tables: tables.iter().map(|t| t.as_ref().map(|t| t.fd.0)).collect(),
            devmap: devmap.0,
            xskmap: xskmap.0,
            shaper: shaper.fd.0,
        };
        let mut progs = Vec::new();
        for &(port, _) in ports {
            let code = compile::compile(p, port, cpu_port, &fds)?;
            progs.push((
                port,
                load_xdp(&code, BPF_XDP)
                    .map_err(|e| format!("xdp fast path: port {}: {}", port, e))?,
            ));
        }
        let egress_port_off = lay.field(p.std.egress_port.unwrap());
        let mut fp = FastPath {
            phv,
            ctl,
            defaults,
            defaults_params,
            tables,
            _devmap: devmap,
            xskmap,
            shaper,
            progs,
            lay,
            egress_port_off,
        };
        fp.sync(sw)?;
        fp.apply_port_modes(sw);
        fp.set_enabled(true)?;
        Ok(fp)
    }

    /// The XDP program of `port` (attach it instead of the plain AF_XDP redirect).
    pub fn prog(&self, port: u32) -> Option<&Fd> {
        self.progs.iter().find(|(p, _)| *p == port).map(|(_, f)| f)
    }

    /// Registers `port`'s AF_XDP socket: the fast path hands it what it does not finish.
    pub fn set_socket(&self, port: u32, xsk_fd: i32) -> Result<(), String> {
        map_update(
            &self.xskmap,
            &port.to_ne_bytes(),
            &(xsk_fd as u32).to_ne_bytes(),
        )
        .map_err(io("xskmap update"))
    }

    /// The link clocks the engine shares (Switch::set_link_clock).
    pub fn shaper(&self) -> Arc<ShaperMap> {
        self.shaper.clone()
    }

    /// Writes every port's shaping mode (Switch::port_mode) into the shaper map.
    pub fn apply_port_modes(&self, sw: &Switch) {
        for p in 0..MAX_PORTS {
            let (mode, rate, tau, in_engine) = sw.port_mode(p);
            self.shaper.set_port(p, mode, rate, tau, in_engine);
        }
    }

    /// On: the fast path forwards what it can. Off: every packet goes to the sockets.
    pub fn set_enabled(&self, on: bool) -> Result<(), String> {
        map_update(&self.ctl, &0u32.to_ne_bytes(), &(on as u32).to_ne_bytes())
            .map_err(io("ctl update"))
    }

    /// Makes the maps equal the engine's tables and default actions (tables whose entries
    /// changed since the last sync are compared, and only differences are written). On
    /// error the fast path is switched off, so the engine decides alone.
    pub fn sync(&mut self, sw: &Switch) -> Result<(), String> {
        let r = self.sync_inner(sw);
        if r.is_err() {
            let _ = self.set_enabled(false);
        }
        r
    }

    fn sync_inner(&mut self, sw: &Switch) -> Result<(), String> {
        for (ti, def) in sw.program().tables.iter().enumerate() {
            let t = sw.table(ti);
            let v = value_bytes(t.default_action, &t.default_data, self.defaults_params)
                .ok_or_else(|| {
                    format!(
                        "xdp fast path: table {}: default action data wider than 64 bits",
                        def.name
                    )
                })?;
            map_update(&self.defaults, &(ti as u32).to_ne_bytes(), &v)
                .map_err(io("defaults update"))?;
            let tm = match &mut self.tables[ti] {
                Some(tm) if tm.synced != Some(t.version) => tm,
                _ => continue,
            };
            let mut want: HashMap<Vec<u8>, Vec<u8>> = HashMap::with_capacity(t.num_entries);
            for e in t.entries.iter().flatten() {
                let mut k = Vec::with_capacity(tm.key.size as usize);
                if tm.key.lpm {
                    let exact_bits: u32 = tm.key.parts[..tm.key.parts.len() - 1]
                        .iter()
                        .map(|p| 8 * p.1)
                        .sum();
                    k.extend_from_slice(&(exact_bits + e.prefix).to_ne_bytes());
                }
                for &(ki, bytes) in &tm.key.parts {
                    let v = e.key[ki] as u64;
                    for b in (0..bytes).rev() {
                        k.push((v >> (8 * b)) as u8);
                    }
                }
                let v = value_bytes(e.action, &e.data, tm.nparams).ok_or_else(|| {
                    format!(
                        "xdp fast path: table {}: action data wider than 64 bits",
                        def.name
                    )
                })?;
                want.insert(k, v);
            }
            for k in tm.shadow.keys() {
                if !want.contains_key(k) {
                    map_delete(&tm.fd, k).map_err(io(&format!("table {} delete", def.name)))?;
                }
            }
            for (k, v) in &want {
                if tm.shadow.get(k) != Some(v) {
                    map_update(&tm.fd, k, v).map_err(io(&format!("table {} update", def.name)))?;
                }
            }
            tm.shadow = want;
            tm.synced = Some(t.version);
        }
        Ok(())
    }

    /// Packets forwarded, dropped and handed to the engine by the fast path (all CPUs).
    pub fn counters(&self) -> [u64; 3] {
        let ncpu = possible_cpus();
        let sz = self.lay.size() as usize;
        let mut buf = vec![0u8; sz * ncpu];
        let mut out = [0u64; 3];
        if let Ok(true) = map_lookup(&self.phv, &0u32.to_ne_bytes(), &mut buf) {
            for c in 0..ncpu {
                for (i, o) in out.iter_mut().enumerate().take(COUNTERS.len()) {
                    let off = c * sz + self.lay.counter(i) as usize;
                    *o += u64::from_ne_bytes(buf[off..off + 8].try_into().unwrap());
                }
            }
        }
        out
    }

    /// Runs one packet through `port`'s program with BPF_PROG_TEST_RUN (tests).
    pub fn test_packet(&self, port: u32, data: &[u8]) -> Result<Outcome, String> {
        let prog = self
            .prog(port)
            .ok_or_else(|| format!("no program for port {}", port))?;
        // the scratch area is per CPU: run and read on one CPU
        let cpu = unsafe { libc::sched_getcpu() }.max(0) as usize;
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let mut one: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut old);
            libc::CPU_SET(cpu, &mut one);
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &one);
        }
        let r = test_run_xdp(prog, data);
        let sz = self.lay.size() as usize;
        let mut buf = vec![0u8; sz * possible_cpus()];
        let looked = map_lookup(&self.phv, &0u32.to_ne_bytes(), &mut buf);
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &old) };
        let (ret, out) = r.map_err(io("test run"))?;
        looked.map_err(io("phv lookup"))?;
        Ok(match ret {
            1 => Outcome::Drop,
            2 => Outcome::Punt,
            4 => {
                let off = cpu * sz + self.egress_port_off as usize;
                Outcome::Forward(
                    u64::from_ne_bytes(buf[off..off + 8].try_into().unwrap()) as u32,
                    out,
                )
            }
            other => return Err(format!("xdp fast path: unexpected XDP action {}", other)),
        })
    }
}

/// Map value: u32 action id, u32 padding, then each parameter as u64 (None: too wide).
fn value_bytes(action: u32, data: &[u128], nparams: usize) -> Option<Vec<u8>> {
    let mut v = Vec::with_capacity(8 + 8 * nparams);
    v.extend_from_slice(&action.to_ne_bytes());
    v.extend_from_slice(&[0; 4]);
    for i in 0..nparams {
        let d = data.get(i).copied().unwrap_or(0);
        if d > u64::MAX as u128 {
            return None;
        }
        v.extend_from_slice(&(d as u64).to_ne_bytes());
    }
    Some(v)
}

/// Number of possible CPUs (per-CPU map values come one per possible CPU).
fn possible_cpus() -> usize {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/possible").unwrap_or_default();
    s.trim()
        .split(',')
        .filter_map(|r| {
            let mut it = r.split('-');
            let a: usize = it.next()?.parse().ok()?;
            let b: usize = it.next().map(|b| b.parse().ok()).unwrap_or(Some(a))?;
            Some(b + 1)
        })
        .max()
        .unwrap_or(1)
}
