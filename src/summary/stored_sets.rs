//! The shared sets of collapsed SCCs reused from the store, built when the stage ends.
//!
//! A collapsed SCC's set is a function of its members' own accesses ([`super::shared`]), so a
//! reused SCC's set is rebuilt from its members' stored summaries — on the kernel, 52,409 of
//! them. Nothing may read it: a re-run after a one-line edit re-analyses one SCC whose callees
//! reach no collapsed SCC, and then reuses the saved findings. And nothing reads it during the
//! stage: a summary refers to the sets it reaches by name, and the analysis of its callers
//! passes the reference on without reading the accesses ([`super::shared`]). So a reused SCC's
//! set is named at once ([`super::Context::stored`]), summaries that refer to it load, and
//! its accesses are built once every SCC is done, when the caller needs every summary
//! ([`super::Setup::sets_needed`]), with every core (built in the middle of the schedule, the
//! worker that needed it held the others up: 9.5 s of a kernel re-run on one thread).

use std::sync::{Arc, Mutex};

use super::{Context, SharedAccesses, SummaryFacts};
use crate::callgraph::SccId;

/// A reused collapsed SCC whose set is not built yet.
struct PendingSet {
    scc: SccId,
    set: Arc<SharedAccesses>,
    facts: Vec<Option<SummaryFacts>>,
}

/// The sets still to build.
#[derive(Default)]
pub(super) struct PendingSets(Mutex<Vec<PendingSet>>);

impl PendingSets {
    pub fn add(&self, scc: SccId, set: Arc<SharedAccesses>, facts: Vec<Option<SummaryFacts>>) {
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(PendingSet { scc, set, facts });
    }

    fn take(&self) -> Vec<PendingSet> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Context<'_> {
    /// Builds every pending set from its members' stored summaries (their own accesses: the
    /// set is a function of them), once the schedule is done. A member the store lost leaves
    /// its set empty and is counted lost ([`super::SummaryStore::lost`]): the stage is then
    /// run again.
    pub(super) fn rebuild_pending_sets(&self) {
        use rayon::prelude::*;
        let Some(store) = self.store else { return };
        for p in self.pending_sets.take() {
            let scc = self.cg.scc(p.scc);
            let members: Option<Vec<Option<Arc<super::Summary>>>> = scc
                .functions
                .par_iter()
                .zip(&p.facts)
                .map(|(&f, facts)| match facts {
                    Some(_) => store.load(f, &self.shared_sets).map(|s| Some(Arc::new(s))),
                    None => Some(None),
                })
                .collect();
            if let Some(members) = members {
                self.share(scc, &members, &p.set);
            }
        }
    }
}
