//! Installing a forwarding pipeline (SetForwardingPipelineConfig): a fresh switch, and
//! with reconcile the old forwarding state replayed into it.

use super::*;

impl Device {
    /// Installs a verified pipeline: a fresh switch, empty tables (like BMv2's
    /// VERIFY_AND_COMMIT). With `reconcile`, the current forwarding state is replayed into
    /// the new pipeline where its ids still exist.
    pub fn commit(&mut self, pipe: Pipe, mut prog: Program, reconcile: bool) {
        let saved = if reconcile && self.pipe.is_some() {
            self.read_all()
        } else {
            vec![]
        };
        // tables that report idle timeouts count their hits (direct counters) so we see them
        for t in pipe.tables.values() {
            if t.idle_timeout {
                prog.tables[t.sw].with_counters = true;
            }
        }
        let mut eng = Engine::new(prog);
        if let Some(m) = self.max_passes {
            eng.max_passes = m;
        }
        let mut sw = Switch::new(eng);
        sw.set_live_clock(self.live_clock);
        sw.set_recirc_pace_ns(self.recirc_pace_ns);
        if let Some(c) = pipe.cookie {
            sw.set_config_version(c);
        }
        // the program's own (const) entries are the switch's: Reads show them, is_const
        self.entry_extras.clear();
        self.digest_by_list = pipe.digests.values().map(|d| (d.list, d.id)).collect();
        self.members.clear();
        self.groups.clear();
        self.group_max_size.clear();
        self.mcast_metadata.clear();
        self.clone_cos.clear();
        self.digest_cfg.clear();
        self.digest_pending.clear();
        self.digest_lists.clear();
        self.sw = Some(sw);
        self.pipe = Some(Arc::new(pipe));
        self.generation += 1;
        // members before groups before tables: read_all returns them in that order
        for e in saved {
            let _ = self.write(p4::update::Type::Insert as i32, &e);
        }
    }
}
