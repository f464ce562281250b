//! The shared sets of collapsed SCCs reused from the store, rebuilt when something reads them.
//!
//! A collapsed SCC's set is a function of its members' own accesses ([`super::shared`]), so a
//! reused SCC's set is rebuilt from its members' stored summaries — on the kernel, 44,869 of
//! them, 13 s of a re-run. Nothing may read it: a re-run after a one-line edit re-analyses one
//! SCC whose callees reach no collapsed SCC, and then reuses the saved findings. So the rebuild
//! waits until a summary that refers to the set is loaded (a stored summary refers to the sets
//! of the collapsed SCCs its function reaches in the call graph), or until the end of the
//! stage when the caller needs every summary ([`super::Setup::sets_needed`]).

use std::sync::{Arc, Mutex, OnceLock};

use super::{Context, SharedAccesses, SharedSets, SummaryFacts, SummaryStore};
use crate::callgraph::{CallGraph, Scc, SccId};
use crate::ir::FuncId;

/// A reused collapsed SCC whose set is not rebuilt yet.
pub(super) struct PendingSet {
    scc: SccId,
    facts: Vec<Option<SummaryFacts>>,
    /// Per SCC of the call graph: whether it reaches this one (computed on the first query).
    reached_from: OnceLock<Vec<bool>>,
}

/// The sets still to rebuild.
#[derive(Default)]
pub(super) struct PendingSets(Mutex<Vec<PendingSet>>);

impl PendingSets {
    pub fn add(&self, scc: SccId, facts: Vec<Option<SummaryFacts>>) {
        self.lock().push(PendingSet {
            scc,
            facts,
            reached_from: OnceLock::new(),
        });
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<PendingSet>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Context<'_> {
    /// Rebuilds the pending sets `f` reaches, before a stored summary of `f` is loaded.
    pub(super) fn rebuild_sets_reached(&self, store: &dyn SummaryStore, f: FuncId) {
        let Some(&of_f) = self.cg.scc_of.get(f.index()) else {
            return;
        };
        // Held while rebuilding: a load that needs the set waits for it, and no set is
        // rebuilt twice. The rebuild runs on this thread alone: a parallel one would let this
        // worker wait for others of the schedule's pool, which may be waiting for the lock.
        let mut pending = self.pending_sets.lock();
        let mut i = 0;
        while i < pending.len() {
            let p = &pending[i];
            let reached = p.reached_from.get_or_init(|| reaching(self.cg, p.scc));
            if reached[of_f.index()] {
                // In the order they were reused, callees first: a set is rebuilt before the
                // sets of SCCs above it, whose members refer to it.
                let p = pending.remove(i);
                self.rebuild(store, self.cg.scc(p.scc), &p.facts, false);
            } else {
                i += 1;
            }
        }
    }

    /// Rebuilds every pending set (once the schedule is done: in parallel).
    pub(super) fn rebuild_pending_sets(&self) {
        let Some(store) = self.store else { return };
        let pending = std::mem::take(&mut *self.pending_sets.lock());
        for p in pending {
            self.rebuild(store, self.cg.scc(p.scc), &p.facts, true);
        }
    }

    /// A stored collapsed SCC: its set, rebuilt from its members' stored summaries (their
    /// own accesses: it is a function of them). A member the store lost leaves the set out;
    /// loading a summary that refers to it then fails, and the run is repeated
    /// ([`SummaryStore::lost`]).
    fn rebuild(
        &self,
        store: &dyn SummaryStore,
        scc: &Scc,
        facts: &[Option<SummaryFacts>],
        parallel: bool,
    ) {
        use rayon::prelude::*;
        let Some(&name) = scc.functions.first() else {
            return;
        };
        // The members refer to the set being rebuilt: a stand-in resolves its name (the build
        // reads only their own accesses).
        let mut sets = self
            .shared_sets
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let stand_in = SharedAccesses::empty(name, scc.functions.len());
        sets.insert(name, Arc::new(stand_in));
        let sets = SharedSets::new(sets);
        let load = |(&f, facts): (&FuncId, &Option<SummaryFacts>)| match facts {
            Some(_) => store.load(f, &sets).map(|s| Some(Arc::new(s))),
            None => Some(None),
        };
        let members: Option<Vec<Option<Arc<super::Summary>>>> = match parallel {
            true => scc.functions.par_iter().zip(facts).map(load).collect(),
            false => scc.functions.iter().zip(facts).map(load).collect(),
        };
        if let Some(members) = members {
            self.share(scc, &members);
        }
    }
}

/// Per SCC of `cg`, whether it reaches `target` through call edges (itself included). SCCs
/// are in reverse topological order, callees first: one pass.
fn reaching(cg: &CallGraph, target: SccId) -> Vec<bool> {
    let mut reached = vec![false; cg.sccs.len()];
    for (i, scc) in cg.sccs.iter().enumerate() {
        reached[i] = i == target.index()
            || scc.functions.iter().any(|&f| {
                cg.callees(f)
                    .any(|g| cg.scc_of.get(g.index()).is_some_and(|s| reached[s.index()]))
            });
    }
    reached
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> CallGraph {
        CallGraph::from_edges(
            vec![true; n],
            edges.iter().map(|&(a, b)| (FuncId(a), FuncId(b))),
        )
    }

    #[test]
    fn an_scc_reaches_what_its_callees_reach() {
        // 0 → 1 → 2, 3 → 2, 4 alone.
        let cg = graph(5, &[(0, 1), (1, 2), (3, 2)]);
        let target = cg.scc_of[2];
        let reached = reaching(&cg, target);
        let of = |f: u32| reached[cg.scc_of[f as usize].index()];
        assert!(of(0) && of(1) && of(2) && of(3));
        assert!(!of(4));
        let from_1 = reaching(&cg, cg.scc_of[1]);
        assert!(from_1[cg.scc_of[0].index()] && !from_1[cg.scc_of[3].index()]);
    }
}
