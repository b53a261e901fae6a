//! Per-port link impairment applied to packets leaving a port: fixed delay, jitter
//! (uniform ±jitter, packets stay in FIFO order), random loss, and a rate limit
//! (serialisation at `rate_bps` with a bounded backlog). Replaces netem where the kernel
//! lacks it.

use std::collections::VecDeque;

#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ImpairCfg {
    pub delay_ns: u64,
    pub jitter_ns: u64,
    /// probability 0..1
    pub loss: f64,
    /// bits per second; 0 = unlimited
    pub rate_bps: u64,
    /// max packets held (delay line + rate backlog); 0 = default 10000
    pub limit: usize,
}

impl ImpairCfg {
    pub fn is_noop(&self) -> bool {
        self.delay_ns == 0 && self.jitter_ns == 0 && self.loss == 0.0 && self.rate_bps == 0
    }
    /// Parses "delay=5ms,jitter=1ms,loss=1%,rate=100mbit,limit=1000".
    pub fn parse(s: &str) -> Result<ImpairCfg, String> {
        let mut c = ImpairCfg::default();
        for part in s.split(',').filter(|x| !x.is_empty()) {
            let (k, v) = part.split_once('=').ok_or_else(|| format!("impairment: expected key=value, got {}", part))?;
            match k.trim() {
                "delay" => c.delay_ns = parse_time_ns(v)?,
                "jitter" => c.jitter_ns = parse_time_ns(v)?,
                "loss" => {
                    let v = v.trim();
                    c.loss = if let Some(p) = v.strip_suffix('%') {
                        p.parse::<f64>().map_err(|e| format!("loss {}: {}", v, e))? / 100.0
                    } else {
                        v.parse::<f64>().map_err(|e| format!("loss {}: {}", v, e))?
                    };
                    if !(0.0..=1.0).contains(&c.loss) {
                        return Err(format!("loss {} out of range", v));
                    }
                }
                "rate" => c.rate_bps = parse_rate_bps(v)?,
                "limit" => c.limit = v.trim().parse().map_err(|e| format!("limit {}: {}", v, e))?,
                other => return Err(format!("impairment: unknown key {}", other)),
            }
        }
        Ok(c)
    }
}

pub fn parse_time_ns(v: &str) -> Result<u64, String> {
    let v = v.trim();
    let (num, mul) = if let Some(x) = v.strip_suffix("ms") {
        (x, 1e6)
    } else if let Some(x) = v.strip_suffix("us") {
        (x, 1e3)
    } else if let Some(x) = v.strip_suffix("ns") {
        (x, 1.0)
    } else if let Some(x) = v.strip_suffix('s') {
        (x, 1e9)
    } else {
        (v, 1e6) // bare number = milliseconds
    };
    let f: f64 = num.trim().parse().map_err(|e| format!("time {}: {}", v, e))?;
    if f < 0.0 {
        return Err(format!("negative time {}", v));
    }
    Ok((f * mul) as u64)
}

pub fn parse_rate_bps(v: &str) -> Result<u64, String> {
    let l = v.trim().to_ascii_lowercase();
    let (num, mul) = if let Some(x) = l.strip_suffix("gbit") {
        (x.to_string(), 1e9)
    } else if let Some(x) = l.strip_suffix("mbit") {
        (x.to_string(), 1e6)
    } else if let Some(x) = l.strip_suffix("kbit") {
        (x.to_string(), 1e3)
    } else if let Some(x) = l.strip_suffix("bit") {
        (x.to_string(), 1.0)
    } else {
        (l.clone(), 1e6) // bare number = Mbit/s
    };
    let f: f64 = num.trim().parse().map_err(|e| format!("rate {}: {}", v, e))?;
    Ok((f * mul) as u64)
}

pub struct Impair<T> {
    pub cfg: ImpairCfg,
    line: VecDeque<(u64, T)>,
    last_release: u64,
    link_free_at: u64,
    rng: u64,
    pub dropped_loss: u64,
    pub dropped_full: u64,
}

impl<T> Impair<T> {
    pub fn new(cfg: ImpairCfg, seed: u64) -> Self {
        Impair { cfg, line: VecDeque::new(), last_release: 0, link_free_at: 0, rng: seed | 1, dropped_loss: 0, dropped_full: 0 }
    }
    fn rand(&mut self) -> u64 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        x
    }
    /// Offers a packet of `len` bytes at `now`; returns it back if dropped.
    pub fn offer(&mut self, now: u64, len: usize, item: T) -> Result<(), T> {
        let limit = if self.cfg.limit == 0 { 10_000 } else { self.cfg.limit };
        if self.line.len() >= limit {
            self.dropped_full += 1;
            return Err(item);
        }
        if self.cfg.loss > 0.0 && (self.rand() as f64 / u64::MAX as f64) < self.cfg.loss {
            self.dropped_loss += 1;
            return Err(item);
        }
        let mut t = now;
        if self.cfg.rate_bps > 0 {
            let start = t.max(self.link_free_at);
            let ser = (len as u64 * 8).saturating_mul(1_000_000_000) / self.cfg.rate_bps;
            self.link_free_at = start + ser;
            t = self.link_free_at;
        }
        t += self.cfg.delay_ns;
        if self.cfg.jitter_ns > 0 {
            let j = self.rand() % (2 * self.cfg.jitter_ns + 1);
            t = (t + j).saturating_sub(self.cfg.jitter_ns);
        }
        // FIFO: never release before the previous packet
        t = t.max(self.last_release);
        self.last_release = t;
        self.line.push_back((t, item));
        Ok(())
    }
    /// Pops the next packet whose release time has come.
    pub fn poll(&mut self, now: u64) -> Option<T> {
        match self.line.front() {
            Some((t, _)) if *t <= now => self.line.pop_front().map(|x| x.1),
            _ => None,
        }
    }
    pub fn next_release(&self) -> Option<u64> {
        self.line.front().map(|x| x.0)
    }
    pub fn len(&self) -> usize {
        self.line.len()
    }
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn delay_and_rate() {
        let cfg = ImpairCfg::parse("delay=1ms,rate=8mbit").unwrap();
        assert_eq!(cfg.delay_ns, 1_000_000);
        let mut im = Impair::new(cfg, 1);
        im.offer(0, 1000, 1).unwrap(); // 1000 B at 8 Mbit/s = 1 ms
        im.offer(0, 1000, 2).unwrap();
        assert_eq!(im.poll(1_999_999), None);
        assert_eq!(im.poll(2_000_000), Some(1));
        assert_eq!(im.poll(2_500_000), None);
        assert_eq!(im.poll(3_000_000), Some(2));
    }
    #[test]
    fn loss_all() {
        let mut im = Impair::new(ImpairCfg::parse("loss=100%").unwrap(), 1);
        assert!(im.offer(0, 10, 1).is_err());
    }
}
