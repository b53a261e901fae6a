//! Match-action table *state*: the entries of one table and the lookup index its key kinds
//! call for: exact (one hash map), lpm (one hash map per prefix length, longest first), and
//! ternary/range/optional/mixed (priority-ordered list, with a hash index of each entry's
//! key, masks and priority). Each layout refuses a second entry with the same match and
//! finds an entry by its match (`find`). Entries are addressed by a stable handle. Lookups take the key as a slice of `u128` (built on the stack by `exec`), so no
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
    /// unique per entry added to this table (a reused handle gets a new serial), so state a
    /// front end keeps beside an entry can tell that the entry is still the same one
    pub serial: u64,
    /// installed by the program itself (its const entries), not by a controller
    pub from_program: bool,
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
    /// generic layout: an entry's identity (key, aux, priority) -> handle, so a duplicate is
    /// refused and an entry is found by its match without walking the priority list
    generic_ids: KeyMap,
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
            generic_ids: KeyMap::new(2),
            default_action: 0,
            default_data: Box::new([]),
            num_entries: 0,
            insert_seq: 0,
            version: 0,
        }
    }

    /// An entry's key as this table holds it, and its `aux`: each value cut to its field's
    /// width and masked (lpm by the prefix, ternary/optional by the mask); `aux` holds the
    /// masks / range highs for the generic layout and is empty for the others. Refuses a
    /// key of the wrong length, a keyless table and an lpm prefix longer than its field.
    fn normalize(
        &self,
        mut key: Vec<u128>,
        mut aux: Vec<u128>,
        prefix: u32,
    ) -> Result<(Vec<u128>, Vec<u128>), ControlError> {
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
        match self.layout {
            Layout::Keyless => {
                return Err(ControlError::Keyless {
                    table: self.name.clone(),
                })
            }
            Layout::Exact => aux.clear(),
            Layout::Lpm(pos) => {
                let w = self.keys[pos].width;
                if prefix > w {
                    return Err(ControlError::PrefixTooLong {
                        table: self.name.clone(),
                        prefix,
                        width: w,
                    });
                }
                key[pos] &= prefix_mask(prefix, w);
                aux.clear();
            }
            Layout::Generic => {
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
            }
        }
        Ok((key, aux))
    }

    /// A generic-layout entry's identity: key, masks / range highs and priority.
    fn generic_id(key: &[u128], aux: &[u128], priority: i64) -> Vec<u128> {
        let mut id = Vec::with_capacity(key.len() + aux.len() + 1);
        id.extend_from_slice(key);
        id.extend_from_slice(aux);
        id.push(priority as i128 as u128);
        id
    }

    /// The entry with this (normalized) match: exact and lpm tables hold one entry per
    /// key (and prefix); the generic layout one per key, masks and priority (an entry
    /// added without a priority has its own, so it is found by handle only).
    fn find_normalized(
        &self,
        key: &[u128],
        aux: &[u128],
        prefix: u32,
        priority: Option<i64>,
    ) -> Option<u32> {
        match self.layout {
            Layout::Keyless => None,
            Layout::Exact => self.exact.get(key),
            Layout::Lpm(_) => self.lpm.iter().find(|l| l.prefix == prefix)?.map.get(key),
            Layout::Generic => self.generic_ids.get(&Self::generic_id(key, aux, priority?)),
        }
    }

    /// The handle of the entry with this match (the arguments as for `add`).
    pub fn find(
        &self,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
    ) -> Result<u32, ControlError> {
        let (key, aux) = self.normalize(key, aux, prefix)?;
        self.find_normalized(&key, &aux, prefix, priority)
            .ok_or_else(|| ControlError::NoMatchingEntry {
                table: self.name.clone(),
            })
    }

    /// Adds an entry. `key` values, `aux` (masks / range highs, one per key; ignored for
    /// exact/lpm layouts), `prefix` for the lpm key. Refuses an entry with the match of
    /// one already there (`DuplicateEntry`). Returns the entry handle.
    pub fn add(
        &mut self,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
        action: u32,
        data: Vec<u128>,
    ) -> Result<u32, ControlError> {
        let (key, aux) = self.normalize(key, aux, prefix)?;
        if self.find_normalized(&key, &aux, prefix, priority).is_some() {
            return Err(ControlError::DuplicateEntry {
                table: self.name.clone(),
            });
        }
        self.insert_seq += 1;
        let seq = self.insert_seq;
        // bmv2 convention: a lower priority number wins; without one, earlier entries win.
        let priority = priority.unwrap_or(seq);
        let handle = match self.free.pop() {
            Some(h) => h,
            None => {
                self.entries.push(None);
                (self.entries.len() - 1) as u32
            }
        };
        let mut lpm_level = None;
        match self.layout {
            Layout::Keyless => unreachable!("normalize refuses keyless tables"),
            Layout::Exact => self.exact.insert(&key, handle),
            Layout::Lpm(_) => {
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
                self.lpm[idx].map.insert(&key, handle);
                self.lpm[idx].bloom_add(&key);
                lpm_level = Some(idx);
            }
            Layout::Generic => self
                .generic_ids
                .insert(&Self::generic_id(&key, &aux, priority), handle),
        }
        self.entries[handle as usize] = Some(Entry {
            key: key.into_boxed_slice(),
            aux: aux.into_boxed_slice(),
            prefix,
            priority,
            action,
            data: ActionData::new(data),
            packets: 0,
            bytes: 0,
            serial: seq as u64,
            from_program: false,
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

    /// Adds one of the program's own (const) entries: as `add`, flagged `from_program`.
    pub fn add_program_entry(
        &mut self,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
        action: u32,
        data: Vec<u128>,
    ) -> Result<u32, ControlError> {
        let h = self.add(key, aux, prefix, priority, action, data)?;
        if let Some(e) = self.entries[h as usize].as_mut() {
            e.from_program = true;
        }
        Ok(h)
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
            Layout::Generic => {
                self.generic.retain(|&h| h != handle);
                self.generic_ids
                    .remove(&Self::generic_id(&e.key, &e.aux, e.priority));
            }
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
        self.generic_ids.clear();
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
    /// One entry per match in every layout: a duplicate is refused, `find` returns the
    /// handle of the entry with a match (ternary: key, mask and priority), and a deleted
    /// entry is no longer found; an entry without a priority is never a duplicate.
    #[test]
    fn duplicates_refused_and_entries_found_by_match() {
        let mut s = [0u128; 4];
        let mut t = Table::with_keys(
            "t".into(),
            vec![spec(MatchKind::Ternary, 16), spec(MatchKind::Range, 16)],
        );
        let a = t
            .add(vec![0x12ff, 0], vec![0xff00, 100], 0, Some(10), 1, vec![])
            .unwrap();
        // the key is masked, so 0x12ff & 0xff00 is the same match
        let dup = t.add(vec![0x1200, 0], vec![0xff00, 100], 0, Some(10), 2, vec![]);
        assert!(
            matches!(dup, Err(ControlError::DuplicateEntry { .. })),
            "{:?}",
            dup
        );
        assert_eq!(t.num_entries, 1);
        let b = t
            .add(vec![0x1200, 0], vec![0xff00, 100], 0, Some(11), 2, vec![])
            .unwrap();
        let f = |t: &Table, p| t.find(vec![0x1200, 0], vec![0xff00, 100], 0, Some(p));
        assert_eq!(f(&t, 10), Ok(a));
        assert_eq!(f(&t, 11), Ok(b));
        assert!(matches!(
            f(&t, 12),
            Err(ControlError::NoMatchingEntry { .. })
        ));
        t.delete(a).unwrap();
        assert!(f(&t, 10).is_err());
        assert_eq!(t.lookup(&[0x1234, 50], &mut s), Some(b));
        t.add(vec![0x1200, 0], vec![0xff00, 100], 0, None, 3, vec![])
            .unwrap();
        t.add(vec![0x1200, 0], vec![0xff00, 100], 0, None, 3, vec![])
            .unwrap();
        assert_eq!(t.num_entries, 3);
        t.clear();
        assert!(f(&t, 11).is_err());

        let mut l = Table::with_keys("l".into(), vec![spec(MatchKind::Lpm, 32)]);
        let h = l
            .add(vec![0x0a0000ff], vec![], 24, None, 1, vec![])
            .unwrap();
        assert!(l
            .add(vec![0x0a000000], vec![], 24, None, 1, vec![])
            .is_err());
        assert_eq!(l.find(vec![0x0a000001], vec![], 24, None), Ok(h));
        assert!(l.find(vec![0x0a000000], vec![], 16, None).is_err());

        let mut e = Table::with_keys("e".into(), vec![spec(MatchKind::Exact, 8)]);
        let h = e.add(vec![0x105], vec![], 0, None, 1, vec![]).unwrap();
        assert!(e.add(vec![5], vec![], 0, None, 1, vec![]).is_err());
        assert_eq!(e.find(vec![5], vec![], 0, None), Ok(h));
        assert!(e.find(vec![5, 6], vec![], 0, None).is_err());
        // a reused handle is another entry: another serial
        let serial = e.entries[h as usize].as_ref().unwrap().serial;
        e.delete(h).unwrap();
        let h2 = e.add(vec![6], vec![], 0, None, 1, vec![]).unwrap();
        assert_eq!(h, h2);
        assert_ne!(e.entries[h2 as usize].as_ref().unwrap().serial, serial);
    }
}
