//! Memoised steps of a collapsed SCC's fixpoint ([`crate::schedule::StepMemo`]).
//!
//! An SCC's entry is keyed by every member's body and every callee's summary, so an edit
//! anywhere in a collapsed SCC (the kernel's has ~39,000 functions) or below it analysed the
//! whole SCC again, though a lock taken in one member changes a few hundred summaries. Each step
//! of the fixpoint is stored instead, keyed by what it reads:
//!
//! ```text
//! step(f) = H(context, f, f's body, for each callee g outside the SCC: g and its content hash,
//!             the digests of the summaries f and its callees in the SCC hold)
//! ```
//!
//! A step's entry (kind `summary-step`) says what it did: nothing (its summary had the facts
//! f's held), or which summary it made, by digest. Those summaries are entries of their own
//! (kind `summary-step-out`, keyed by digest: identical ones stored once), in portable form
//! with their locations relative to their function's start (the SCC's own locations, which rank
//! the locations of stored summaries, are known only once the fixpoint is done); a summary's
//! digest is the hash of that form, so two steps that make the same summary give their callers
//! the same input. A re-run replays every step the edit does not reach, and loads a replayed
//! summary only when a step it analyses reads it, and at the end.

use super::{LocForm, SummaryCache};
use crate::cache::{Key, KeyBuilder};
use crate::ir::FuncId;
use crate::schedule::Digest;
use crate::summary::{SharedSets, Summary};

/// Steps of collapsed SCCs' fixpoints, keyed by [`SummaryCache::step_input`]: empty (the step
/// changed nothing), or the digest of the summary it made.
const STEP: &str = "summary-step";
/// The summaries steps made, keyed by their digest.
const OUT: &str = "summary-step-out";

impl SummaryCache<'_> {
    /// The name of analysing `f` while it holds a summary with digest `own` and its callees in
    /// its SCC hold summaries with the digests `members` (see the module documentation).
    pub(super) fn step_input(
        &self,
        f: FuncId,
        own: Option<&Digest>,
        members: &[Option<Digest>],
    ) -> Digest {
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
        for d in std::iter::once(own).chain(members.iter().map(Option::as_ref)) {
            match d {
                Some(d) => k.u64(1).bytes(d),
                None => k.u64(0),
            };
        }
        k.finish().0
    }

    /// What the step `input` did, if it is stored: `Some(None)` nothing, `Some(Some(d))` made
    /// the summary with digest `d`.
    pub(super) fn replay_step(&self, input: &Digest) -> Option<Option<Digest>> {
        let key = Key(*input);
        let bytes = self.store.get(STEP, &key)?;
        match bytes.len() {
            0 => Some(None),
            32 => {
                let mut d = [0; 32];
                d.copy_from_slice(&bytes);
                Some(Some(d))
            }
            n => {
                let why = crate::cache::Corruption::Decode(format!("a step of {n} bytes"));
                self.store.invalidate(STEP, &key, &why);
                None
            }
        }
    }

    /// The summary with digest `digest` a stored step of `f` made.
    pub(super) fn load_step(
        &self,
        f: FuncId,
        digest: &Digest,
        sets: &SharedSets,
    ) -> Option<Summary> {
        let key = Key(*digest);
        let bytes = self.store.get(OUT, &key)?;
        match self.decode_as(f, &bytes, sets, LocForm::Relative) {
            Ok(s) => Some(s),
            Err(c) => {
                self.store.invalidate(OUT, &key, &c);
                None
            }
        }
    }

    /// Stores what the step `input` of `f` did: nothing (`None`), or made `output`; gives
    /// `output`'s digest.
    pub(super) fn record_step(
        &self,
        f: FuncId,
        input: &Digest,
        output: Option<&Summary>,
    ) -> Option<Digest> {
        let Some(output) = output else {
            self.store.put_or_warn(STEP, &Key(*input), &[]);
            return None;
        };
        let Some(bytes) = self.encode_as(f, output, LocForm::Relative) else {
            // Not stored, so never replayed; a step is a function of its input, so the input
            // names what it made.
            return Some(KeyBuilder::new("unportable step").bytes(input).finish().0);
        };
        let digest = KeyBuilder::new("summary step content")
            .bytes(&bytes)
            .finish();
        // Content-addressed: an entry already there holds these very bytes.
        if !self.store.entry_path(OUT, &digest).exists() {
            self.store.put_or_warn(OUT, &digest, &bytes);
        }
        self.store.put_or_warn(STEP, &Key(*input), &digest.0);
        Some(digest.0)
    }
}
