//! Memoised steps of a collapsed SCC's fixpoint ([`crate::schedule::StepMemo`]).
//!
//! An SCC's entry is keyed by every member's body and every callee's summary, so an edit
//! anywhere in a collapsed SCC (the kernel's has ~39,000 functions) or below it analysed the
//! whole SCC again, though a lock taken in one member changes a few hundred summaries. Each step
//! of the fixpoint is recorded instead, named by what it reads:
//!
//! ```text
//! step(f) = H(context, f, f's body, for each callee g outside the SCC: g and its content hash,
//!             the digests of the summaries f and its callees in the SCC hold)
//! ```
//!
//! and what it did: nothing (its summary had the facts f's held), or made a summary, named by
//! its digest. Those summaries are kept in portable form with their locations relative to their
//! function's start (the SCC's own locations, which rank the locations of stored summaries, are
//! known only once the fixpoint is done); a digest is the hash of that form, so two steps that
//! make the same summary give their callers the same input.
//!
//! One entry per collapsed SCC (kind `summary-steps`, keyed by the context and the SCC's
//! smallest function) holds the steps of its latest fixpoint and the summaries they made: the
//! kernel's fixpoint has ~120,000 steps, and an entry of its own per step cost the cold run
//! ~15 s of creating files. A re-run reads it whole, replays every step the edit does not reach,
//! decodes a summary only when an analysed step reads it or the fixpoint ends, and writes the
//! entry again with the steps of its own fixpoint.

use std::sync::Mutex;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use serde_bytes::ByteBuf;

use super::{LocForm, SummaryCache};
use crate::cache::{Key, KeyBuilder};
use crate::callgraph::Scc;
use crate::ir::FuncId;
use crate::schedule::Digest;
use crate::summary::{SccSteps, SharedSets, Summary};

/// The steps of collapsed SCCs' fixpoints, one entry per SCC ([`StoredSteps`]).
const STEPS: &str = "summary-steps";

/// What a step did: `None` nothing, `Some(d)` made the summary with digest `d`.
type Outcome = Option<Digest>;

/// An SCC's entry: its steps by name, sorted, and the summaries they made by digest, sorted.
#[derive(Serialize, Deserialize, Default)]
struct StoredSteps {
    steps: Vec<(Digest, Outcome)>,
    made: Vec<(Digest, ByteBuf)>,
}

/// The steps of one collapsed SCC's fixpoint: those of the latest stored fixpoint, and those of
/// this one, stored when it is done.
pub(super) struct Steps<'c, 'a> {
    cache: &'c SummaryCache<'a>,
    key: Key,
    stored: StoredSteps,
    /// This fixpoint's steps, and the summaries they made that the stored entry does not hold.
    steps: Mutex<FxHashMap<Digest, Outcome>>,
    made: Mutex<FxHashMap<Digest, Vec<u8>>>,
}

impl SummaryCache<'_> {
    /// The steps of collapsed `scc`'s latest stored fixpoint.
    pub(super) fn scc_steps(&self, scc: &Scc) -> Option<Steps<'_, '_>> {
        let first = scc.functions.first()?;
        let key = KeyBuilder::new(STEPS)
            .key(&self.context)
            .u64(first.0.into())
            .finish();
        let stored = self.store.get_value::<StoredSteps>(STEPS, &key);
        Some(Steps {
            cache: self,
            key,
            stored: stored.unwrap_or_default(),
            steps: Mutex::default(),
            made: Mutex::default(),
        })
    }
}

impl Steps<'_, '_> {
    fn stored_made(&self, digest: &Digest) -> Option<&[u8]> {
        let made = &self.stored.made;
        let i = made.binary_search_by(|(d, _)| d.cmp(digest)).ok()?;
        Some(&made[i].1)
    }
}

impl SccSteps for Steps<'_, '_> {
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest {
        let cache = self.cache;
        let mut k = KeyBuilder::new("summary step");
        k.key(&cache.context).u64(f.0.into());
        match &cache.bodies[f.index()] {
            Some(b) => k.key(b),
            None => k.u64(0),
        };
        let scc = cache.cg.scc_of.get(f.index()).copied();
        for g in cache.cg.callees(f) {
            if cache.cg.scc_of.get(g.index()).copied() == scc {
                continue;
            }
            k.u64(g.0.into());
            match cache.content[g.index()].get() {
                Some(c) => k.key(c),
                None => k.u64(0),
            };
        }
        k.u64(members.len() as u64);
        for d in std::iter::once(own).chain(members.iter().map(Option::as_ref)) {
            match d {
                Some(d) => k.u64(1).bytes(d),
                None => k.u64(0),
            };
        }
        k.finish().0
    }

    fn replay(&self, input: &Digest) -> Option<Outcome> {
        let steps = &self.stored.steps;
        let outcome = steps[steps.binary_search_by(|(i, _)| i.cmp(input)).ok()?].1;
        lock(&self.steps).insert(*input, outcome);
        Some(outcome)
    }

    fn load(&self, f: FuncId, digest: &Digest, sets: &SharedSets) -> Option<Summary> {
        // One this fixpoint made (rare: most are stored) is copied out, so that decoding runs
        // without the lock.
        let made = lock(&self.made).get(digest).cloned();
        let bytes = match &made {
            Some(bytes) => bytes.as_slice(),
            None => self.stored_made(digest)?,
        };
        self.cache.decode_as(f, bytes, sets, LocForm::Relative).ok()
    }

    fn record(&self, f: FuncId, input: &Digest, output: Option<&Summary>) -> Option<Digest> {
        let Some(output) = output else {
            lock(&self.steps).insert(*input, None);
            return None;
        };
        let Some(bytes) = self.cache.encode_as(f, output, LocForm::Relative) else {
            // Not kept, so never replayed; a step is a function of its input, so the input
            // names what it made.
            return Some(KeyBuilder::new("unportable step").bytes(input).finish().0);
        };
        let digest = KeyBuilder::new("summary step content")
            .bytes(&bytes)
            .finish()
            .0;
        if self.stored_made(&digest).is_none() {
            lock(&self.made).insert(digest, bytes);
        }
        lock(&self.steps).insert(*input, Some(digest));
        Some(digest)
    }

    fn finish(&self) {
        let mut steps: Vec<(Digest, Outcome)> = lock(&self.steps).drain().collect();
        steps.sort_unstable();
        let mut new = lock(&self.made);
        let mut made: Vec<(Digest, ByteBuf)> = Vec::new();
        let mut digests: Vec<Digest> = steps.iter().filter_map(|s| s.1).collect();
        digests.sort_unstable();
        digests.dedup();
        for d in digests {
            let bytes = match new.remove(&d) {
                Some(b) => b,
                None => match self.stored_made(&d) {
                    Some(b) => b.to_vec(),
                    None => continue,
                },
            };
            made.push((d, ByteBuf::from(bytes)));
        }
        let entry = StoredSteps { steps, made };
        self.cache.store.put_value_or_warn(STEPS, &self.key, &entry);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
