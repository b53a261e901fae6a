//! Log-bucketed latency histogram: 16 sub-buckets per power of two (≤ 6.25 % relative
//! error), fixed size, no allocation when recording.

pub const SUB_BITS: u32 = 4;
const SUB: usize = 1 << SUB_BITS;
pub const BUCKETS: usize = 64 * SUB;

#[derive(Clone)]
pub struct Histogram {
    pub counts: Box<[u64; BUCKETS]>,
    pub count: u64,
    pub sum: u128,
    pub min: u64,
    pub max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// Bucket of a value (nanoseconds).
#[inline]
pub fn index(v: u64) -> usize {
    if v < SUB as u64 {
        return v as usize;
    }
    let msb = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = ((v >> shift) as usize) & (SUB - 1);
    ((shift as usize + 1) << SUB_BITS) + sub
}

/// Smallest and largest value that fall in bucket `i`.
pub fn bounds(i: usize) -> (u64, u64) {
    if i < SUB {
        return (i as u64, i as u64);
    }
    let shift = (i >> SUB_BITS) - 1;
    let sub = (i & (SUB - 1)) as u64;
    if shift >= 60 {
        return (u64::MAX, u64::MAX); // beyond index(u64::MAX): never used
    }
    let low = (SUB as u64 + sub) << shift;
    let high = low.saturating_add((1u64 << shift) - 1);
    (low, high)
}

impl Histogram {
    pub fn new() -> Self {
        Histogram {
            counts: Box::new([0; BUCKETS]),
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[index(v)] += 1;
        self.count += 1;
        self.sum += v as u128;
        if v < self.min {
            self.min = v;
        }
        if v > self.max {
            self.max = v;
        }
    }

    pub fn merge(&mut self, o: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(o.counts.iter()) {
            *a += *b;
        }
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
    }

    pub fn mean(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum as f64 / self.count as f64
        }
    }

    /// Value at quantile q (0..=1): the midpoint of the bucket holding it, clamped to
    /// [min, max].
    pub fn quantile(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        if q >= 1.0 {
            return self.max;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lo, hi) = bounds(i);
                return (lo + (hi - lo) / 2).clamp(self.min, self.max);
            }
        }
        self.max
    }

    /// Non-empty buckets as (low, high, count).
    pub fn nonzero(&self) -> impl Iterator<Item = (u64, u64, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, c)| **c > 0)
            .map(|(i, c)| {
                let (lo, hi) = bounds(i);
                (lo, hi, *c)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values() {
        for v in [
            0u64,
            1,
            15,
            16,
            17,
            31,
            32,
            1000,
            123_456,
            10_000_000_000,
            u64::MAX / 2,
        ] {
            let (lo, hi) = bounds(index(v));
            assert!(lo <= v && v <= hi, "{v} not in [{lo},{hi}]");
        }
        for i in 1..=index(u64::MAX) {
            assert_eq!(bounds(i).0, bounds(i - 1).1 + 1, "bucket {i} contiguous");
        }
    }

    #[test]
    fn quantiles_are_close() {
        let mut h = Histogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 10);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 / 500_000.0 - 1.0).abs() < 0.07, "{p50}");
        let p99 = h.quantile(0.99) as f64;
        assert!((p99 / 990_000.0 - 1.0).abs() < 0.07, "{p99}");
        assert_eq!(h.max, 1_000_000);
        assert_eq!(h.quantile(1.0), 1_000_000);
        let mut g = Histogram::new();
        g.merge(&h);
        assert_eq!(g.count, h.count);
    }
}
