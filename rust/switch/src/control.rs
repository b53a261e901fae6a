//! Entry-level control of a running switch: the one place table entries are added,
//! modified, deleted and cleared, so every front end (ctl text commands, P4Runtime) leaves
//! the per-entry state the same way: an entry's direct counter and direct meter start
//! fresh when it is added and are wiped when it goes (a later entry may reuse the handle).

use crate::switch::Switch;

impl Switch {
    /// Adds an entry to table `ti` (see `Table::add`); returns its handle.
    // the arguments are an entry's parts, as ctl and P4Runtime both hold them
    #[allow(clippy::too_many_arguments)]
    pub fn entry_add(
        &mut self,
        ti: usize,
        key: Vec<u128>,
        aux: Vec<u128>,
        prefix: u32,
        priority: Option<i64>,
        action: u32,
        data: Vec<u128>,
    ) -> Result<u32, String> {
        let h = self.eng.prog.tables[ti].add(key, aux, prefix, priority, action, data)?;
        self.reset_entry_state(ti, h);
        Ok(h)
    }

    pub fn entry_modify(
        &mut self,
        ti: usize,
        handle: u32,
        action: u32,
        data: Vec<u128>,
    ) -> Result<(), String> {
        self.eng.prog.tables[ti].modify(handle, action, data)
    }

    pub fn entry_delete(&mut self, ti: usize, handle: u32) -> Result<(), String> {
        self.eng.prog.tables[ti].delete(handle)?;
        self.reset_entry_state(ti, handle);
        Ok(())
    }

    /// Removes every entry of table `ti` with its direct counters and meters.
    pub fn table_clear(&mut self, ti: usize) {
        self.eng.prog.tables[ti].clear();
        self.eng.direct_counters[ti].clear();
        self.eng.direct_meter_cells[ti].clear();
    }

    fn reset_entry_state(&mut self, ti: usize, h: u32) {
        if let Some(c) = self.eng.direct_counters[ti].get_mut(h as usize) {
            *c = (0, 0);
        }
        if let Some(c) = self.eng.direct_meter_cells[ti].get_mut(h as usize) {
            *c = Default::default();
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::exec::Engine;
    use crate::switch::Switch;

    /// An entry added where a deleted one was starts with a zero direct counter.
    #[test]
    fn a_reused_handle_starts_fresh() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/programs/acl_ternary.json");
        let mut sw = Switch::new(Engine::new(
            crate::json::load_file(p.to_str().unwrap()).unwrap(),
        ));
        let ti = (0..sw.eng.prog.tables.len())
            .find(|&t| !sw.eng.prog.tables[t].keys.is_empty())
            .unwrap();
        let nk = sw.eng.prog.tables[ti].keys.len();
        let act = sw.eng.prog.tables[ti].action_ids[0];
        let nparams = sw.eng.prog.actions[act as usize].params.len();
        let h = sw
            .entry_add(
                ti,
                vec![1; nk],
                vec![u128::MAX; nk],
                0,
                Some(1),
                act,
                vec![0; nparams],
            )
            .unwrap();
        sw.eng.direct_counters[ti].resize(h as usize + 1, (0, 0));
        sw.eng.direct_counters[ti][h as usize] = (5, 500);
        sw.entry_delete(ti, h).unwrap();
        let h2 = sw
            .entry_add(
                ti,
                vec![2; nk],
                vec![u128::MAX; nk],
                0,
                Some(1),
                act,
                vec![0; nparams],
            )
            .unwrap();
        assert_eq!(h, h2);
        assert_eq!(sw.eng.direct_counters[ti][h2 as usize], (0, 0));
    }
}
