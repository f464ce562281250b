//! The constructors a run found (functions that return only an object they allocated,
//! [`crate::summary::SummaryStats::constructors`]), kept for the next run in the same context —
//! kind `summary-constructors` — by label.
//!
//! The inclusion-based points-to needs them (each call of one is an allocation site of its own)
//! and they are known only once the summaries are; they rarely change between two runs. So a
//! run computes the inclusion-based points-to for the constructors the previous run found
//! *beside* its summaries, and uses it if it finds the same ones
//! ([`crate::pipeline`]'s `Ahead`): on SQLite the solve takes about as long as what a
//! one-function edit re-analyses.

use super::SummaryCache;
use crate::cache::KeyBuilder;
use crate::ir::FuncId;

/// The cache kind.
pub(crate) const KIND: &str = "summary-constructors";

/// Entries kept: the latest of this many contexts.
const KEEP: usize = 8;

impl SummaryCache<'_> {
    /// The constructors the latest run in this context found, in this run's ids (sorted), if
    /// it kept them and each is still a function here.
    pub fn previous_constructors(&self) -> Option<Vec<FuncId>> {
        let labels: Vec<u64> = self.store.get_value(KIND, &self.constructors_key())?;
        let mut ids = labels
            .iter()
            .map(|&l| self.labels.functions.id(l).map(FuncId))
            .collect::<Option<Vec<_>>>()?;
        ids.sort_unstable();
        Some(ids)
    }

    /// Keeps `constructors` (this run's) for the next run, unless they are the ones kept.
    pub fn keep_constructors(&self, constructors: &[FuncId]) {
        if self.previous_constructors().as_deref() == Some(constructors) {
            return;
        }
        let labels: Vec<u64> = constructors
            .iter()
            .map(|&f| self.labels.function(f))
            .collect();
        if self
            .store
            .put_value_or_warn(KIND, &self.constructors_key(), &labels)
        {
            self.store.prune(KIND, KEEP);
        }
    }

    fn constructors_key(&self) -> crate::cache::Key {
        KeyBuilder::new(KIND).key(&self.context).finish()
    }
}
