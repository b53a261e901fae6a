//! Stateful externs (registers, counters, two-rate three-colour meters) and the hash /
//! checksum algorithms. All state is owned by the single data-plane thread; the control
//! API reaches it through the command channel, so no locks are needed on the packet path.

use crate::pipeline::{width_mask, Algo, Program};

pub struct Register {
    pub width: u32,
    pub vals: Vec<u128>,
}

pub struct Counter {
    pub packets: Vec<u64>,
    pub bytes: Vec<u64>,
}

#[derive(Clone, Copy, Default)]
pub struct MeterCell {
    /// rates in units per microsecond, bursts in units (bmv2 CLI convention); None = unset
    pub cir: f64,
    pub cbs: f64,
    pub pir: f64,
    pub pbs: f64,
    /// P4Runtime's excess burst, kept for Reads only (see `control::MeterRates::ebs`)
    pub ebs: f64,
    pub set: bool,
    pub tc: f64,
    pub tp: f64,
    pub last_us: f64,
}

pub const GREEN: u128 = 0;
pub const YELLOW: u128 = 1;
pub const RED: u128 = 2;

impl MeterCell {
    pub fn configure(&mut self, cir: f64, cbs: f64, pir: f64, pbs: f64) {
        *self = MeterCell {
            cir,
            cbs,
            pir,
            pbs,
            ebs: 0.0,
            set: true,
            tc: cbs,
            tp: pbs,
            last_us: -1.0,
        };
    }
    /// RFC 2698 colour-blind trTCM.
    pub fn execute(&mut self, now_us: f64, amount: f64) -> u128 {
        if !self.set {
            return GREEN;
        }
        if self.last_us >= 0.0 {
            let dt = (now_us - self.last_us).max(0.0);
            self.tc = (self.tc + dt * self.cir).min(self.cbs);
            self.tp = (self.tp + dt * self.pir).min(self.pbs);
        }
        self.last_us = now_us;
        if self.tp < amount {
            RED
        } else if self.tc < amount {
            self.tp -= amount;
            YELLOW
        } else {
            self.tp -= amount;
            self.tc -= amount;
            GREEN
        }
    }
}

pub struct Meter {
    pub bytes: bool,
    pub cells: Vec<MeterCell>,
}

pub struct Externs {
    pub registers: Vec<Register>,
    pub counters: Vec<Counter>,
    pub meters: Vec<Meter>,
    /// direct meters: one per table (indexed by table), cells per entry handle
    pub direct_meters: Vec<Option<Meter>>,
    pub rng: u64,
}

impl Externs {
    pub fn new(p: &Program) -> Externs {
        Externs {
            registers: p
                .registers
                .iter()
                .map(|r| Register {
                    width: r.width,
                    vals: vec![0; r.size],
                })
                .collect(),
            counters: p
                .counters
                .iter()
                .map(|c| Counter {
                    packets: vec![0; c.size],
                    bytes: vec![0; c.size],
                })
                .collect(),
            meters: p
                .meters
                .iter()
                .map(|m| Meter {
                    bytes: m.bytes,
                    cells: vec![MeterCell::default(); m.size],
                })
                .collect(),
            direct_meters: p
                .tables
                .iter()
                .map(|t| {
                    t.direct_meter.map(|m| Meter {
                        bytes: p.meters[m].bytes,
                        cells: Vec::new(),
                    })
                })
                .collect(),
            rng: 0x2545F4914F6CDD1D,
        }
    }
    pub fn register_write(&mut self, r: usize, idx: usize, v: u128) -> bool {
        let reg = &mut self.registers[r];
        if let Some(slot) = reg.vals.get_mut(idx) {
            *slot = v & width_mask(reg.width);
            true
        } else {
            false
        }
    }
    pub fn random(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.rng;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng = x;
        x.wrapping_mul(0x2545F4914F6CDD1D)
    }
}

// ---------------------------------------------------------------- hash algorithms

fn crc32_table() -> &'static [u32; 256] {
    static T: std::sync::OnceLock<[u32; 256]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u32; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    })
}

fn crc16_table() -> &'static [u16; 256] {
    static T: std::sync::OnceLock<[u16; 256]> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        let mut t = [0u16; 256];
        for (i, slot) in t.iter_mut().enumerate() {
            let mut c = i as u16;
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    0xA001 ^ (c >> 1)
                } else {
                    c >> 1
                };
            }
            *slot = c;
        }
        t
    })
}

/// CRC-32 (IEEE 802.3, reflected, init and xor-out 0xffffffff).
pub fn crc32(data: &[u8]) -> u32 {
    let t = crc32_table();
    let mut c = 0xFFFF_FFFFu32;
    for &b in data {
        c = t[((c ^ b as u32) & 0xff) as usize] ^ (c >> 8);
    }
    !c
}

/// CRC-16/ARC (poly 0x8005 reflected, init 0, no xor-out), the bmv2 "crc16".
pub fn crc16(data: &[u8]) -> u16 {
    let t = crc16_table();
    let mut c = 0u16;
    for &b in data {
        c = t[((c ^ b as u16) & 0xff) as usize] ^ (c >> 8);
    }
    c
}

/// Internet checksum (ones' complement of the ones' complement sum of 16-bit words).
pub fn csum16(data: &[u8]) -> u16 {
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [b] = chunks.remainder() {
        sum += (*b as u64) << 8;
    }
    while sum >> 16 != 0 {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

pub fn xor16(data: &[u8]) -> u16 {
    let mut x = 0u16;
    let mut chunks = data.chunks_exact(2);
    for c in &mut chunks {
        x ^= u16::from_be_bytes([c[0], c[1]]);
    }
    if let [b] = chunks.remainder() {
        x ^= (*b as u16) << 8;
    }
    x
}

pub fn identity(data: &[u8]) -> u64 {
    let start = data.len().saturating_sub(8);
    data[start..].iter().fold(0u64, |a, &b| (a << 8) | b as u64)
}

pub fn run_algo(algo: Algo, data: &[u8], ext: &mut Externs) -> u128 {
    match algo {
        Algo::Crc16 | Algo::Crc16Custom => crc16(data) as u128,
        Algo::Crc32 | Algo::Crc32Custom => crc32(data) as u128,
        Algo::Csum16 => csum16(data) as u128,
        Algo::Xor16 => xor16(data) as u128,
        Algo::Identity => identity(data) as u128,
        Algo::Random => ext.random() as u128,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn check_values() {
        assert_eq!(crc32(b"123456789"), 0xCBF43926);
        assert_eq!(crc16(b"123456789"), 0xBB3D);
        // RFC 1071 example
        assert_eq!(
            csum16(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
            !0xddf2u16
        );
        assert_eq!(xor16(&[0x12, 0x34, 0x56, 0x78]), 0x1234 ^ 0x5678);
        assert_eq!(identity(&[1, 2]), 0x0102);
    }
    #[test]
    fn meter_colours() {
        let mut m = MeterCell::default();
        assert_eq!(m.execute(0.0, 1.0), GREEN);
        m.configure(0.0, 1.0, 0.0, 2.0);
        assert_eq!(m.execute(0.0, 1.0), GREEN);
        assert_eq!(m.execute(0.0, 1.0), YELLOW);
        assert_eq!(m.execute(0.0, 1.0), RED);
    }
}
