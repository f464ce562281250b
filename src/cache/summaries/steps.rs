//! Memoised steps of a collapsed SCC's fixpoint ([`crate::schedule::StepMemo`]).
//!
//! An SCC's entry is keyed by every member's body and every callee's summary, so an edit
//! anywhere in a collapsed SCC (the kernel's has ~39,000 functions) or below it analysed the
//! whole SCC again, though a lock taken in one member changes a few hundred summaries. Each step
//! of the fixpoint is stored instead, keyed by what it reads:
//!
//! ```text
//! step(f) = H(context, f, f's body, for each callee g outside the SCC: g and its content hash,
//!             the digests of the summaries f's callees in the SCC hold)
//! ```
//!
//! The entry (kind `summary-step`) is the summary the step produced, in portable form with its
//! locations relative to their function's start (the SCC's own locations, which rank the
//! locations of stored summaries, are known only once the fixpoint is done). A summary's digest
//! is the hash of that form, so two steps that produce the same summary give their callers the
//! same input: a re-run replays every step the edit does not reach.

use super::{LocForm, SummaryCache};
use crate::cache::{Key, KeyBuilder};
use crate::ir::FuncId;
use crate::schedule::Digest;
use crate::summary::{SharedSets, Summary};

/// Steps of collapsed SCCs' fixpoints, keyed by [`SummaryCache::step_input`].
const STEP: &str = "summary-step";

impl SummaryCache<'_> {
    /// The name of analysing `f` while its callees in its SCC hold summaries with the digests
    /// `members` (see the module documentation).
    pub(super) fn step_input(&self, f: FuncId, members: &[Option<Digest>]) -> Digest {
        let mut k = KeyBuilder::new(STEP);
        k.key(&self.context).u64(f.0.into());
        match &self.bodies[f.index()] {
            Some(b) => k.key(b),
            None => k.u64(0),
        };
        let scc = self.cg.scc_of.get(f.index()).copied();
        for g in self.cg.callees(f) {
            if self.cg.scc_of.get(g.index()).copied() == scc {
                continue;
            }
            k.u64(g.0.into());
            match self.content[g.index()].get() {
                Some(c) => k.key(c),
                None => k.u64(0),
            };
        }
        k.u64(members.len() as u64);
        for m in members {
            match m {
                Some(d) => k.u64(1).bytes(d),
                None => k.u64(0),
            };
        }
        k.finish().0
    }

    /// The summary the step `input` of `f` produced, and its digest, if it is stored.
    pub(super) fn replay_step(
        &self,
        f: FuncId,
        input: &Digest,
        sets: &SharedSets,
    ) -> Option<(Summary, Digest)> {
        let key = Key(*input);
        let decoded = self.store.read(STEP, &key).and_then(|bytes| {
            let Some(bytes) = bytes else { return Ok(None) };
            let s = self.decode_as(f, &bytes, sets, LocForm::Relative)?;
            Ok(Some((s, step_digest(&bytes))))
        });
        match decoded {
            Ok(found) => found,
            Err(c) => {
                self.store.invalidate(STEP, &key, &c);
                None
            }
        }
    }

    /// Stores what the step `input` of `f` produced; gives its digest.
    pub(super) fn record_step(&self, f: FuncId, input: &Digest, output: &Summary) -> Digest {
        match self.encode_as(f, output, LocForm::Relative) {
            Some(bytes) => {
                self.store.put_or_warn(STEP, &Key(*input), &bytes);
                step_digest(&bytes)
            }
            // Not stored; a step is a function of its input, so the input names the output.
            None => KeyBuilder::new("unportable step").bytes(input).finish().0,
        }
    }
}

/// The digest of a step's summary, by its stored form.
fn step_digest(bytes: &[u8]) -> Digest {
    KeyBuilder::new("summary step content")
        .bytes(bytes)
        .finish()
        .0
}
