//! Match-action table *state*: the entries of one table and the lookup index its key kinds
//! call for: exact (one hash map), lpm (one hash map per prefix length, longest first), and
//! ternary/range/optional/mixed (priority-ordered list). Entries are addressed by a stable
//! handle. Lookups take the key as a slice of `u128` (built on the stack by `exec`), so no
//! allocation happens per packet. The table's *definition* (keys, actions, sizes; fixed at
//! load) is `pipeline::TableDef`; this module depends on it, never the other way round.

use crate::control_error::ControlError;
use crate::pipeline::{width_mask, KeySpec, Layout, MatchKind, TableDef};
use std::collections::HashMap;

/// Table keys are fixed-width integers (not attacker-chosen strings), so rustc-hash's fast
/// multiplicative Fx hash is enough and much cheaper than SipHash per packet.
pub type FastMap<K, V> = HashMap<K, V, rustc_hash::FxBuildHasher>;

/// Key -> entry handle. Single-field keys are stored inline (one cache line per probe);
/// multi-field keys as boxed slices.
#[derive(Debug, Clone)]
enum KeyMap {
    Single(FastMap<u128, u32>),
    Multi(FastMap<Box<[u128]>, u32>),
}

impl KeyMap {
    fn new(nkeys: usize) -> KeyMap {
        if nkeys == 1 {
            KeyMap::Single(FastMap::default())
        } else {
            KeyMap::Multi(FastMap::default())
        }
    }
    #[inline]
    fn get(&self, k: &[u128]) -> Option<u32> {
        match self {
            KeyMap::Single(m) => m.get(&k[0]).copied(),
            KeyMap::Multi(m) => m.get(k).copied(),
        }
    }
    fn contains(&self, k: &[u128]) -> bool {
        self.get(k).is_some()
    }
    fn insert(&mut self, k: &[u128], h: u32) {
        match self {
            KeyMap::Single(m) => {
                m.insert(k[0], h);
            }
            KeyMap::Multi(m) => {
                m.insert(k.to_vec().into_boxed_slice(), h);
            }
        }
    }
    fn remove(&mut self, k: &[u128]) {
        match self {
            KeyMap::Single(m) => {
                m.remove(&k[0]);
            }
            KeyMap::Multi(m) => {
                m.remove(k);
            }
        }
    }
    fn len(&self) -> usize {
        match self {
            KeyMap::Single(m) => m.len(),
            KeyMap::Multi(m) => m.len(),
        }
    }
    fn clear(&mut self) {
        match self {
            KeyMap::Single(m) => m.clear(),
            KeyMap::Multi(m) => m.clear(),
        }
    }
}

/// One prefix length of an lpm table, with a one-hash Bloom filter (for large levels)
/// that skips most probes of lengths the key cannot match.
#[derive(Debug, Clone)]
struct LpmLevel {
    prefix: u32,
    map: KeyMap,
    bloom: Vec<u64>,
    bloom_shift: u32,
}

#[inline]
fn bloom_hash(k: &[u128]) -> u64 {
    let mut h = 0x9E37_79B9_7F4A_7C15u64;
    for v in k {
        h = (h ^ (*v as u64) ^ ((*v >> 64) as u64).rotate_left(29))
            .wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 32;
    }
    h.wrapping_mul(0xc4ce_b9fe_1a85_ec53)
}

impl LpmLevel {
    const BLOOM_MIN_ENTRIES: usize = 4096;
    #[inline]
    fn may_contain(&self, k: &[u128]) -> bool {
        if self.bloom.is_empty() {
            return true;
        }
        let b = bloom_hash(k) >> self.bloom_shift;
        self.bloom[(b >> 6) as usize] & (1 << (b & 63)) != 0
    }
    fn bloom_add(&mut self, k: &[u128]) {
        if !self.bloom.is_empty() {
            let b = bloom_hash(k) >> self.bloom_shift;
            self.bloom[(b >> 6) as usize] |= 1 << (b & 63);
        }
    }
    /// (Re)builds the filter at ~16 bits per entry once the level is large.
    fn maybe_rebuild(&mut self, entries: &[Option<Entry>]) {
        let n = self.map.len();
        if n < Self::BLOOM_MIN_ENTRIES {
            return;
        }
        let bits = self.bloom.len() * 64;
        if bits >= n * 8 {
            return;
        }
        let want = (n * 16).next_power_of_two().max(1 << 16);
        self.bloom = vec![0u64; want / 64];
        self.bloom_shift = 64 - want.trailing_zeros();
        let handles: Vec<u32> = match &self.map {
            KeyMap::Single(m) => m.values().copied().collect(),
            KeyMap::Multi(m) => m.values().copied().collect(),
        };
        for h in handles {
            if let Some(Some(e)) = entries.get(h as usize) {
                let k = e.key.clone();
                self.bloom_add(&k);
            }
        }
    }
}

/// Action parameters of an entry, stored inline when there are at most three.
#[derive(Debug, Clone)]
pub struct ActionData {
    inline: [u128; 3],
    len: u8,
    heap: Option<Box<[u128]>>,
}

impl ActionData {
    pub fn new(v: Vec<u128>) -> ActionData {
        if v.len() <= 3 {
            let mut inline = [0u128; 3];
            inline[..v.len()].copy_from_slice(&v);
            ActionData {
                inline,
                len: v.len() as u8,
                heap: None,
            }
        } else {
            ActionData {
                inline: [0; 3],
                len: 0,
                heap: Some(v.into_boxed_slice()),
            }
        }
    }
    #[inline]
    pub fn as_slice(&self) -> &[u128] {
        match &self.heap {
            None => &self.inline[..self.len as usize],
            Some(b) => b,
        }
    }
}

impl std::ops::Deref for ActionData {
    type Target = [u128];
    fn deref(&self) -> &[u128] {
        self.as_slice()
    }
}

#[derive(Debug, Clone)]
pub struct Entry {
    /// key values (already masked by the entry's masks/prefix)
    pub key: Box<[u128]>,
    /// per key: ternary/optional mask, or range upper bound; empty for exact/lpm tables
    pub aux: Box<[u128]>,
    pub prefix: u32,
    pub priority: i64,
    pub action: u32,
    /// action data (up to 3 values inline: no extra cache miss on a hit)
    pub data: ActionData,
    pub packets: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone)]
pub struct Table {
    /// copied from the definition: error messages and the index layout need them per call
    name: String,
    keys: Vec<KeySpec>,
    layout: Layout,
    pub entries: Vec<Option<Entry>>,
    free: Vec<u32>,
    exact: KeyMap,
    /// one level per prefix length, longest first
    lpm: Vec<LpmLevel>,
    generic: Vec<u32>,
    /// the action taken on a miss (starts as the definition's, changed by set-default)
    pub default_action: u32,
    pub default_data: Box<[u128]>,
    pub num_entries: usize,
    insert_seq: i64,
    /// bumped by every change of the entries (mirrors elsewhere resync only on change)
    pub version: u64,
}

impl Table {
    /// Empty state for table `def`, with its initial default action (not its const entries).
    pub fn new(def: &TableDef) -> Table {
        let mut t = Table::with_keys(def.name.clone(), def.keys.clone());
        t.default_action = def.default_action;
        t.default_data = def.default_data.clone();
        t
    }

    /// Empty state for a table with these keys (no actions).
    pub fn with_keys(name: String, keys: Vec<KeySpec>) -> Table {
        let nkeys = keys.len();
        let layout = Layout::of(&keys);
        Table {
            name,
            keys,
            layout,
            entries: Vec::new(),
            free: Vec::new(),
            exact: KeyMap::new(nkeys),
            lpm: Vec::new(),
            generic: Vec::new(),
            default_action: 0,
            default_data: Box::new([]),
            num_entries: 0,
            insert_seq: 0,
            version: 0,
        }
    }

    /// Adds an entry. `key` values, `aux` (masks / range highs, one per key; ignored for
    /// exact/lpm layouts), `prefix` for the lpm key. Returns the entry handle.
    pub fn add(
        &mut self,
        mut key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
        action: u32,
        data: Vec<u128>,
    ) -> Result<u32, ControlError> {
        if key.len() != self.keys.len() {
            return Err(ControlError::KeyCount {
                table: self.name.clone(),
                expected: self.keys.len(),
                got: key.len(),
            });
        }
        for (i, k) in self.keys.iter().enumerate() {
            key[i] &= width_mask(k.width);
        }
        let mut lpm_level = None;
        let handle = match self.free.pop() {
            Some(h) => h,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        self.insert_seq += 1;
        let seq = self.insert_seq;
        match self.layout {
            Layout::Keyless => {
                return Err(ControlError::Keyless {
                    table: self.name.clone(),
                })
            }
            Layout::Exact => {
                if self.exact.contains(&key) {
                    self.free.push(handle);
                    return Err(ControlError::DuplicateEntry {
                        table: self.name.clone(),
                    });
                }
                self.exact.insert(&key, handle);
            }
            Layout::Lpm(pos) => {
                let w = self.keys[pos].width;
                if prefix > w {
                    self.free.push(handle);
                    return Err(ControlError::PrefixTooLong {
                        table: self.name.clone(),
                        prefix,
                        width: w,
                    });
                }
                key[pos] &= prefix_mask(prefix, w);
                let nk = self.keys.len();
                let idx = match self.lpm.iter().position(|l| l.prefix == prefix) {
                    Some(i) => i,
                    None => {
                        self.lpm.push(LpmLevel {
                            prefix,
                            map: KeyMap::new(nk),
                            bloom: Vec::new(),
                            bloom_shift: 0,
                        });
                        self.lpm.sort_by_key(|l| std::cmp::Reverse(l.prefix));
                        self.lpm.iter().position(|l| l.prefix == prefix).unwrap()
                    }
                };
                if self.lpm[idx].map.contains(&key) {
                    self.free.push(handle);
                    return Err(ControlError::DuplicateEntry {
                        table: self.name.clone(),
                    });
                }
                self.lpm[idx].map.insert(&key, handle);
                self.lpm[idx].bloom_add(&key);
                lpm_level = Some(idx);
            }
            Layout::Generic => {}
        }
        let mut aux = aux;
        if self.layout == Layout::Generic {
            aux.resize(self.keys.len(), 0);
            for (i, k) in self.keys.iter().enumerate() {
                let wm = width_mask(k.width);
                match k.kind {
                    MatchKind::Exact | MatchKind::Valid => aux[i] = wm,
                    MatchKind::Lpm => aux[i] = prefix_mask(prefix, k.width),
                    MatchKind::Ternary | MatchKind::Optional => aux[i] &= wm,
                    MatchKind::Range => aux[i] &= wm,
                }
                if k.kind != MatchKind::Range {
                    key[i] &= aux[i];
                }
            }
        } else {
            aux.clear();
        }
        // bmv2 convention: a lower priority number wins; without one, earlier entries win.
        let priority = priority.unwrap_or(seq);
        self.entries[handle as usize] = Some(Entry {
            key: key.into_boxed_slice(),
            aux: aux.into_boxed_slice(),
            prefix,
            priority,
            action,
            data: ActionData::new(data),
            packets: 0,
            bytes: 0,
        });
        if self.layout == Layout::Generic {
            let entries = &self.entries;
            let pos = self.generic.partition_point(|&h| {
                let e = entries[h as usize].as_ref().unwrap();
                e.priority <= priority
            });
            self.generic.insert(pos, handle);
        }
        self.num_entries += 1;
        self.version += 1;
        if let Some(i) = lpm_level {
            let entries = &self.entries;
            self.lpm[i].maybe_rebuild(entries);
        }
        Ok(handle)
    }

    pub fn delete(&mut self, handle: u32) -> Result<(), ControlError> {
        let e = match self.entries.get_mut(handle as usize).and_then(|e| e.take()) {
            Some(e) => e,
            None => {
                return Err(ControlError::NoEntry {
                    table: self.name.clone(),
                    handle,
                })
            }
        };
        match self.layout {
            Layout::Exact => {
                self.exact.remove(&e.key);
            }
            Layout::Lpm(_) => {
                if let Some(i) = self.lpm.iter().position(|l| l.prefix == e.prefix) {
                    self.lpm[i].map.remove(&e.key);
                    if self.lpm[i].map.len() == 0 {
                        self.lpm.remove(i);
                    }
                }
            }
            Layout::Generic => self.generic.retain(|&h| h != handle),
            Layout::Keyless => {}
        }
        self.free.push(handle);
        self.num_entries -= 1;
        self.version += 1;
        Ok(())
    }

    pub fn clear(&mut self) {
        self.entries.clear();
        self.free.clear();
        self.exact.clear();
        self.lpm.clear();
        self.generic.clear();
        self.num_entries = 0;
        self.version += 1;
    }

    pub fn modify(
        &mut self,
        handle: u32,
        action: u32,
        data: Vec<u128>,
    ) -> Result<(), ControlError> {
        match self
            .entries
            .get_mut(handle as usize)
            .and_then(|e| e.as_mut())
        {
            Some(e) => {
                e.action = action;
                e.data = ActionData::new(data);
                self.version += 1;
                Ok(())
            }
            None => Err(ControlError::NoEntry {
                table: self.name.clone(),
                handle,
            }),
        }
    }

    /// Looks the key up; `scratch` must be at least as long as `key`.
    #[inline]
    pub fn lookup(&self, key: &[u128], scratch: &mut [u128]) -> Option<u32> {
        match self.layout {
            Layout::Keyless => None,
            Layout::Exact => self.exact.get(key),
            Layout::Lpm(pos) => {
                let n = key.len();
                scratch[..n].copy_from_slice(key);
                let w = self.keys[pos].width;
                for l in &self.lpm {
                    scratch[pos] = key[pos] & prefix_mask(l.prefix, w);
                    let k = &scratch[..n];
                    if l.may_contain(k) {
                        if let Some(h) = l.map.get(k) {
                            return Some(h);
                        }
                    }
                }
                None
            }
            Layout::Generic => {
                'outer: for &h in &self.generic {
                    let e = self.entries[h as usize].as_ref().unwrap();
                    for (i, ks) in self.keys.iter().enumerate() {
                        let k = key[i];
                        if ks.kind == MatchKind::Range {
                            if k < e.key[i] || k > e.aux[i] {
                                continue 'outer;
                            }
                        } else if k & e.aux[i] != e.key[i] {
                            continue 'outer;
                        }
                    }
                    return Some(h);
                }
                None
            }
        }
    }
}

pub fn prefix_mask(prefix: u32, width: u32) -> u128 {
    if prefix == 0 {
        0
    } else {
        width_mask(width) & !width_mask(width - prefix.min(width))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::KeySrc;
    fn spec(kind: MatchKind, width: u32) -> KeySpec {
        KeySpec {
            name: "k".into(),
            kind,
            src: KeySrc::Field(0),
            mask: None,
            width,
        }
    }
    #[test]
    fn lpm_longest_wins() {
        let mut t = Table::with_keys("t".into(), vec![spec(MatchKind::Lpm, 32)]);
        let a = t.add(vec![0x0a000000], vec![], 8, None, 1, vec![]).unwrap();
        let b = t
            .add(vec![0x0a010000], vec![], 16, None, 2, vec![])
            .unwrap();
        let mut s = [0u128; 4];
        assert_eq!(t.lookup(&[0x0a010203], &mut s), Some(b));
        assert_eq!(t.lookup(&[0x0a020203], &mut s), Some(a));
        assert_eq!(t.lookup(&[0x0b020203], &mut s), None);
        t.delete(b).unwrap();
        assert_eq!(t.lookup(&[0x0a010203], &mut s), Some(a));
    }
    #[test]
    fn lpm_large_levels_with_bloom() {
        let mut t = Table::with_keys("t".into(), vec![spec(MatchKind::Lpm, 32)]);
        let mut s = [0u128; 4];
        for i in 0..20_000u128 {
            t.add(vec![(16 << 24) | (i << 8)], vec![], 24, None, 1, vec![])
                .unwrap();
        }
        let wide = t.add(vec![16 << 24], vec![], 8, None, 2, vec![]).unwrap();
        for i in (0..20_000u128).step_by(97) {
            let h = t.lookup(&[(16 << 24) | (i << 8) | 5], &mut s).unwrap();
            assert_eq!(t.entries[h as usize].as_ref().unwrap().action, 1);
        }
        // outside the /24s but inside the /8
        assert_eq!(t.lookup(&[(16 << 24) | (30_000 << 8)], &mut s), Some(wide));
        assert_eq!(t.lookup(&[17 << 24], &mut s), None);
        let h = t.lookup(&[(16 << 24) | (77 << 8)], &mut s).unwrap();
        t.delete(h).unwrap();
        assert_eq!(t.lookup(&[(16 << 24) | (77 << 8)], &mut s), Some(wide));
    }
    #[test]
    fn ternary_priority() {
        let mut t = Table::with_keys(
            "t".into(),
            vec![spec(MatchKind::Ternary, 16), spec(MatchKind::Range, 16)],
        );
        let a = t
            .add(vec![0x1200, 0], vec![0xff00, 100], 0, Some(10), 1, vec![])
            .unwrap();
        let b = t
            .add(vec![0x1234, 0], vec![0xffff, 0xffff], 0, Some(5), 2, vec![])
            .unwrap();
        let mut s = [0u128; 4];
        assert_eq!(t.lookup(&[0x1234, 50], &mut s), Some(b));
        assert_eq!(t.lookup(&[0x1235, 50], &mut s), Some(a));
        assert_eq!(t.lookup(&[0x1235, 101], &mut s), None);
    }
}
