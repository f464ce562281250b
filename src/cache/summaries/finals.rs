//! The stored forms of a collapsed SCC's final summaries, by the summary its fixpoint ended on.
//!
//! When a collapsed SCC is analysed again (an edit reached some of its ~39,000 members on the
//! kernel), most members end on the very summary they ended on last time: its step digest
//! ([`super::steps`]) is the same. Their stored entries would be the same bytes, but encoding
//! every member again to find that out was most of storing the SCC. What the stored (ranked)
//! form of a summary depends on, besides the summary — the portable form the step digest
//! names, with locations relative to their functions — is where each location ranks among its
//! function's own locations; and the SCC's shared set (added by
//! [`crate::schedule::SccAnalysis::complete`]) is named by the SCC. So an entry (kind
//! `summary-finals`, keyed by the context and the SCC's smallest function) records, per
//! member, the step digest it ended on, its stored content key, and the functions its locations
//! are in; with, per such function, a digest of its own locations (relative to the function).
//! A member whose step digest is the one recorded, and whose functions' own locations are as
//! recorded, takes the recorded content key without encoding.

use std::sync::atomic::Ordering;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::SummaryCache;
use crate::cache::{store, Key, KeyBuilder};
use crate::callgraph::Scc;
use crate::ir::FuncId;
use crate::schedule::Digest;

const FINALS: &str = "summary-finals";

/// A member's stored form, by the summary it ended on.
/// Functions by label ([`crate::cache::labels`]).
#[derive(Clone, Serialize, Deserialize)]
pub(super) struct Final {
    func: u64,
    /// The step digest of the summary it ended on (`None`: not known, not recorded).
    step: Option<Digest>,
    pub content: [u8; 32],
    /// The functions its locations are in (ranked among their own).
    owners: Vec<u64>,
}

impl SummaryCache<'_> {
    /// `func`'s final: `owners` are the functions its locations are in.
    pub(super) fn new_final(
        &self,
        func: FuncId,
        step: Option<Digest>,
        content: Key,
        owners: &[FuncId],
    ) -> Final {
        let mut owners: Vec<u64> = owners.iter().map(|&g| self.labels.function(g)).collect();
        owners.sort_unstable();
        owners.dedup();
        Final {
            func: self.labels.function(func),
            step,
            content: content.0,
            owners,
        }
    }
}

/// An SCC's entry: its members' finals, by function, and the own-locations digest of every
/// function they name.
#[derive(Default, Serialize, Deserialize)]
struct StoredFinals {
    members: Vec<Final>,
    /// By label.
    owners: Vec<(u64, Digest)>,
}

/// The finals of one collapsed SCC's latest stored fixpoint, as this run checks them.
pub(super) struct Finals<'c, 'a> {
    cache: &'c SummaryCache<'a>,
    key: Key,
    /// By label.
    members: FxHashMap<u64, Final>,
    /// The functions (by label) whose own locations are what the stored finals were ranked by.
    unmoved: FxHashMap<u64, bool>,
}

impl SummaryCache<'_> {
    /// The stored finals of collapsed `scc` (none if there are none). Every member's own
    /// locations must be recorded.
    pub(super) fn finals(&self, scc: &Scc) -> Finals<'_, '_> {
        let key = KeyBuilder::new(FINALS)
            .key(&self.context)
            .u64(
                scc.functions
                    .first()
                    .map_or(0, |&f| self.labels.function(f)),
            )
            .finish();
        let stored: StoredFinals = self.store.get_value(FINALS, &key).unwrap_or_default();
        let unmoved = stored
            .owners
            .par_iter()
            .map(|&(g, digest)| {
                let here = self.labels.functions.id(g).map(FuncId);
                (
                    g,
                    here.and_then(|g| self.own_locs_digest(g)) == Some(digest),
                )
            })
            .collect();
        Finals {
            cache: self,
            key,
            members: stored.members.into_iter().map(|m| (m.func, m)).collect(),
            unmoved,
        }
    }

    /// A digest of `g`'s own locations relative to its start (what ranks a location of `g`);
    /// `None` if they are not recorded.
    fn own_locs_digest(&self, g: FuncId) -> Option<Digest> {
        let own = self.own_locs.get(g.index())?.get()?;
        let relative = store::encode(&self.stored_locs(own, g)).ok()?;
        Some(KeyBuilder::new("own locations").bytes(&relative).finish().0)
    }
}

impl Finals<'_, '_> {
    /// `f`'s stored form, if its fixpoint ended on the summary with step digest `step` last
    /// time too, the functions its locations are in have the same own locations, and the entry
    /// is still there.
    pub fn reuse(&self, f: FuncId, step: &Digest) -> Option<Final> {
        let made = self.members.get(&self.cache.labels.function(f))?;
        let unmoved = |g: &u64| self.unmoved.get(g).copied().unwrap_or(false);
        (made.step.as_ref() == Some(step) && made.owners.iter().all(unmoved)).then_some(())?;
        let there = self
            .cache
            .store
            .entry_path(super::KIND, &Key(made.content))
            .exists();
        there.then_some(())?;
        self.cache.kept.fetch_add(1, Ordering::Relaxed);
        Some(made.clone())
    }

    /// Keeps `made` (the members' finals) for the next fixpoint of this SCC.
    pub fn save(&self, made: impl Iterator<Item = Final>) {
        let members: Vec<Final> = made.filter(|m| m.step.is_some()).collect();
        let mut named: Vec<u64> = members
            .iter()
            .flat_map(|m| m.owners.iter().copied())
            .collect();
        named.sort_unstable();
        named.dedup();
        let labels = &self.cache.labels;
        let owners: Option<Vec<(u64, Digest)>> = named
            .par_iter()
            .map(|&g| {
                let here = FuncId(labels.functions.id(g)?);
                Some((g, self.cache.own_locs_digest(here)?))
            })
            .collect();
        // A function named without own locations: nothing it ranks could be reused anyway.
        let Some(owners) = owners else { return };
        let entry = StoredFinals { members, owners };
        self.cache
            .store
            .put_value_or_warn(FINALS, &self.key, &entry);
    }
}
