//! Memoised steps of a collapsed SCC's fixpoint ([`crate::schedule::StepMemo`]).
//!
//! An SCC's entry is keyed by every member's body and every callee's summary, so an edit
//! anywhere in a collapsed SCC (the kernel's has ~39,000 functions) or below it analysed the
//! whole SCC again, though a lock taken in one member changes a few hundred summaries. Each step
//! of the fixpoint is recorded instead, named by what it reads:
//!
//! ```text
//! step(f) = H(context, f, f's body, for each callee g outside the SCC: g and its content hash,
//!             the digest of the summary f holds,
//!             for each callee g in the SCC: the digest of what f reads of g's summary)
//! ```
//!
//! and what it did: nothing (its summary had the facts f's held), or made a summary, named by
//! its digest. Those summaries are kept in portable form with their locations relative to their
//! function's start (the SCC's own locations, which rank the locations of stored summaries, are
//! known only once the fixpoint is done); a digest is the hash of that form, so two steps that
//! make the same summary give their callers the same input. A call to another member reads all
//! of its summary but its accesses ([`Summary::read_by_members`]), and that part is named by
//! the hash of its own portable form: an edit that adds an access below the SCC analyses again
//! the steps of the members that reach it, and their callers' steps only if a lockset, a
//! return value or another fact they read changed.
//!
//! One entry per collapsed SCC (kind `summary-steps`, keyed by the context and the SCC's
//! smallest function) holds the steps of its latest fixpoint and where the summaries they made
//! are: the kernel's fixpoint has ~120,000 steps, and an entry of its own per step cost the cold
//! run ~15 s of creating files. The summaries are packed into entries of kind
//! `summary-step-pack` (each keyed by its content), which are never rewritten: a run that makes
//! new summaries writes them to a pack of its own and refers to the older packs for the rest.
//! So a re-run reads the small steps entry, replays every step the edit does not reach, reads a
//! summary (a range of its pack, checked against its digest) only when an analysed step reads
//! it or the fixpoint ends, and writes the steps entry and a pack of what it made — not the
//! 360 MB of the kernel's summaries again. A pack whose summaries are less than half still
//! referred to is compacted into the new one and removed, so at most half of the packs' bytes
//! are dead.
//!
//! A step's name leaves out the points-to partition, which it reads too: the entry keeps, per
//! member, what that member's steps read of it ([`crate::cache::class_deps`]), and a member's
//! steps are replayed only while those answers are the same — a new pointer flow that one
//! member reads runs that member's steps again (and those whose inputs its new summary
//! changes), not the whole fixpoint.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::portable::LocForm;
use super::SummaryCache;
use crate::cache::class_deps::{ClassDeps, Read};
use crate::cache::store::EntryReader;
use crate::cache::{Key, KeyBuilder};
use crate::callgraph::Scc;
use crate::ir::FuncId;
use crate::schedule::{Digest, Made};
use crate::summary::{SccSteps, SharedSets, Summary};

/// The steps of collapsed SCCs' fixpoints, one entry per SCC ([`StoredSteps`]).
const STEPS: &str = "summary-steps";

/// Summaries made by steps, one after the other, each encoded on its own ([`Packed`]).
const PACKS: &str = "summary-step-pack";

/// What a step did: `None` nothing, `Some(m)` made the summary `m` names.
type Outcome = Option<Made>;

/// An SCC's entry: its steps by name, sorted, the summaries they made by digest, sorted, and
/// the packs those are in.
#[derive(Serialize, Deserialize, Default)]
struct StoredSteps {
    steps: Vec<(Digest, Outcome)>,
    made: Vec<(Digest, Packed)>,
    /// Each pack's key and length.
    packs: Vec<(Digest, u64)>,
    /// What each member's steps read of the points-to partition
    /// ([`crate::cache::class_deps`]), by the member's label, sorted: a member's steps are
    /// replayed only while what they read reads the same.
    #[serde(default)]
    classes: Vec<(u64, ClassDeps)>,
}

/// Where a summary is: `len` bytes from `start` of pack `pack` (an index into
/// [`StoredSteps::packs`]).
#[derive(Serialize, Deserialize, Clone, Copy, Debug)]
struct Packed {
    pack: u32,
    start: u64,
    len: u64,
}

/// The steps of one collapsed SCC's fixpoint: those of the latest stored fixpoint, and those of
/// this one, stored when it is done.
pub(super) struct Steps<'c, 'a> {
    cache: &'c SummaryCache<'a>,
    key: Key,
    stored: StoredSteps,
    /// The members whose stored steps may be replayed, and what those read of the partition
    /// (still the same; `None`: unnamed, the partition is the one they were taken on): what
    /// the steps replayed read, which this run does not record.
    previous: FxHashMap<FuncId, Option<Vec<Read>>>,
    /// This fixpoint's steps, and the summaries they made that no readable pack holds.
    steps: Mutex<FxHashMap<Digest, Outcome>>,
    made: Mutex<FxHashMap<Digest, Vec<u8>>>,
    /// Per stored pack: a range of it could not be read (it is not referred to again).
    lost: Vec<AtomicBool>,
    /// Per stored pack: opened on first read (`None`: it could not be).
    readers: Vec<OnceLock<Option<EntryReader>>>,
}

impl SummaryCache<'_> {
    /// The steps of collapsed `scc`'s latest stored fixpoint.
    pub(super) fn scc_steps(&self, scc: &Scc) -> Option<Steps<'_, '_>> {
        let first = scc.functions.first()?;
        let key = KeyBuilder::new(STEPS)
            .key(&self.context)
            .u64(self.labels.function(*first))
            .finish();
        let stored: StoredSteps = self.store.get_value(STEPS, &key).unwrap_or_default();
        // A member whose steps read another answer of this partition has none replayed (the
        // summaries only its steps made are dropped when this fixpoint's entry is written).
        let classes = self.class_context();
        let previous: FxHashMap<FuncId, Option<Vec<Read>>> = (stored.classes.iter())
            .filter(|(_, deps)| classes.still_hold(deps))
            .filter_map(|(label, deps)| {
                let f = FuncId(self.labels.functions.id(*label)?);
                Some((f, classes.reads(deps).map(<[Read]>::to_vec)))
            })
            .collect();
        self.note_replayed_classes(*first, previous.values().map(Option::as_deref));
        Some(Steps {
            cache: self,
            key,
            previous,
            lost: stored
                .packs
                .iter()
                .map(|_| AtomicBool::new(false))
                .collect(),
            readers: stored.packs.iter().map(|_| OnceLock::new()).collect(),
            stored,
            steps: Mutex::default(),
            made: Mutex::default(),
        })
    }
}

/// The digest of a summary made by a step: the hash of its portable form.
fn made_digest(bytes: &[u8]) -> Digest {
    KeyBuilder::new("summary step content")
        .bytes(bytes)
        .finish()
        .0
}

impl Steps<'_, '_> {
    /// Where the stored summary with `digest` is, unless its pack was found lost.
    fn stored_made(&self, digest: &Digest) -> Option<Packed> {
        let made = &self.stored.made;
        let packed = made[made.binary_search_by(|(d, _)| d.cmp(digest)).ok()?].1;
        (!self.lost[packed.pack as usize].load(Ordering::Relaxed)).then_some(packed)
    }

    /// The bytes of a stored summary, checked against its digest; a pack that fails is lost.
    fn read_made(&self, digest: &Digest, at: Packed) -> Option<Vec<u8>> {
        let reader = self.readers[at.pack as usize].get_or_init(|| {
            let pack = Key(self.stored.packs[at.pack as usize].0);
            self.cache.store.entry_reader(PACKS, &pack).ok().flatten()
        });
        let bytes = match reader.as_ref().map(|r| r.read(at.start, at.len)) {
            Some(Ok(bytes)) if made_digest(&bytes) == *digest => Some(bytes),
            _ => None,
        };
        if bytes.is_none() {
            self.lost[at.pack as usize].store(true, Ordering::Relaxed);
        }
        bytes
    }

    /// Per stored pack: whether the next entry keeps referring to it — at least half of its
    /// bytes are summaries in `digests` that `new` does not hold.
    fn kept_packs(&self, digests: &[Digest], new: &FxHashMap<Digest, Vec<u8>>) -> Vec<bool> {
        let mut live = vec![0u64; self.stored.packs.len()];
        for d in digests {
            if let Some(at) = self.stored_made(d).filter(|_| !new.contains_key(d)) {
                live[at.pack as usize] += at.len;
            }
        }
        (self.stored.packs.iter().zip(&live))
            .map(|(&(_, len), &live)| live > 0 && 2 * live >= len)
            .collect()
    }

    /// What to write for this fixpoint ([`NextEntry`]).
    fn entry(&self) -> NextEntry {
        let mut steps: Vec<(Digest, Outcome)> = lock(&self.steps).drain().collect();
        steps.sort_unstable_by_key(|&(input, _)| input);
        let mut new = lock(&self.made);
        // A step whose summary is lost (its pack failed and this fixpoint did not make it
        // again) is not kept: replaying it would only fail to load.
        steps.retain(|(_, out)| {
            out.is_none_or(|m| {
                new.contains_key(&m.summary) || self.stored_made(&m.summary).is_some()
            })
        });
        let mut digests: Vec<Digest> = steps
            .iter()
            .filter_map(|s| s.1.map(|m| m.summary))
            .collect();
        digests.sort_unstable();
        digests.dedup();
        let kept = self.kept_packs(&digests, &new);
        let mut packs: Vec<(Digest, u64)> = Vec::new();
        let mut renumbered: Vec<Option<u32>> = vec![None; kept.len()];
        for (i, _) in kept.iter().enumerate().filter(|(_, &k)| k) {
            renumbered[i] = Some(packs.len() as u32);
            packs.push(self.stored.packs[i]);
        }
        let fresh = packs.len() as u32;
        let mut pack = Vec::new();
        let mut made = Vec::with_capacity(digests.len());
        for d in digests {
            let stored = self.stored_made(&d);
            if let Some(at) = stored.filter(|at| kept[at.pack as usize]) {
                let pack = renumbered[at.pack as usize].unwrap_or(fresh);
                made.push((d, Packed { pack, ..at }));
                continue;
            }
            let bytes = match new.remove(&d) {
                Some(b) => b,
                None => match stored.and_then(|at| self.read_made(&d, at)) {
                    Some(b) => b,
                    // Lost while compacting: the steps that made it are dropped below.
                    None => continue,
                },
            };
            let at = Packed {
                pack: fresh,
                start: pack.len() as u64,
                len: bytes.len() as u64,
            };
            pack.extend_from_slice(&bytes);
            made.push((d, at));
        }
        steps.retain(|(_, out)| {
            out.is_none_or(|o| made.binary_search_by(|m| m.0.cmp(&o.summary)).is_ok())
        });
        let pack = (!pack.is_empty()).then(|| (pack_key(&pack), pack));
        if let Some((key, bytes)) = &pack {
            packs.push((key.0, bytes.len() as u64));
        }
        // (A lost pack made again has the key of the new one.)
        let dropped = (self.stored.packs.iter().zip(&kept))
            .filter(|&(&(key, _), &k)| !k && pack.as_ref().is_none_or(|p| p.0 .0 != key))
            .map(|(&(key, _), _)| Key(key))
            .collect();
        NextEntry {
            entry: StoredSteps {
                steps,
                made,
                packs,
                classes: Vec::new(),
            },
            pack,
            dropped,
        }
    }
}

/// What a fixpoint leaves: the entry of its steps; a new pack (key and content) with the
/// summaries they made that are not in a pack the entry keeps; the packs no longer referred to.
struct NextEntry {
    entry: StoredSteps,
    pack: Option<(Key, Vec<u8>)>,
    dropped: Vec<Key>,
}

/// The key of a pack: its content's hash.
fn pack_key(pack: &[u8]) -> Key {
    KeyBuilder::new(PACKS).bytes(pack).finish()
}

impl SccSteps for Steps<'_, '_> {
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest {
        let cache = self.cache;
        let mut k = KeyBuilder::new("summary step");
        k.key(&cache.context)
            .u64(cache.labels.function(f))
            .u64(cache.function_decls[f.index()]);
        match &cache.bodies[f.index()] {
            Some(b) => k.key(b),
            None => k.u64(0),
        };
        let scc = cache.cg.scc_of.get(f.index()).copied();
        for g in cache.cg.callees(f) {
            if cache.cg.scc_of.get(g.index()).copied() == scc {
                continue;
            }
            k.u64(cache.labels.function(g))
                .u64(cache.function_decls[g.index()]);
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

    fn replay(&self, f: FuncId, input: &Digest) -> Option<Outcome> {
        if !self.previous.contains_key(&f) {
            return None;
        }
        let steps = &self.stored.steps;
        let outcome = steps[steps.binary_search_by(|(i, _)| i.cmp(input)).ok()?].1;
        lock(&self.steps).insert(*input, outcome);
        Some(outcome)
    }

    fn load(&self, f: FuncId, digest: &Digest, sets: &SharedSets) -> Option<Summary> {
        // One this fixpoint made (rare: most are stored) is copied out, so that decoding runs
        // without the lock.
        let made = lock(&self.made).get(digest).cloned();
        let bytes = match made {
            Some(bytes) => bytes,
            None => self.read_made(digest, self.stored_made(digest)?)?,
        };
        self.cache
            .decode_as(f, &bytes, sets, LocForm::Relative)
            .ok()
    }

    fn record(&self, f: FuncId, input: &Digest, output: Option<&Summary>) -> Option<Made> {
        let Some(output) = output else {
            lock(&self.steps).insert(*input, None);
            return None;
        };
        let portable = |s: &Summary| self.cache.encode_as(f, s, LocForm::Relative);
        let (Some(bytes), Some(read)) = (portable(output), portable(&output.read_by_members()))
        else {
            // Not kept, so never replayed; a step is a function of its input, so the input
            // names what it made.
            let digest = KeyBuilder::new("unportable step").bytes(input).finish().0;
            return Some(Made {
                summary: digest,
                read: digest,
            });
        };
        let made = Made {
            summary: made_digest(&bytes),
            read: KeyBuilder::new("summary step read").bytes(&read).finish().0,
        };
        if self.stored_made(&made.summary).is_none() {
            lock(&self.made).insert(made.summary, bytes);
        }
        lock(&self.steps).insert(*input, Some(made));
        Some(made)
    }

    fn finish(&self, read: &[(FuncId, Vec<u32>)]) {
        let NextEntry {
            mut entry,
            pack,
            dropped,
        } = self.entry();
        let classes = self.cache.class_context();
        let each = read.iter().map(|(f, asked)| {
            let previous = self.previous.get(f).map_or(Some(&[][..]), Option::as_deref);
            (&asked[..], previous)
        });
        let labels = read.iter().map(|&(f, _)| self.cache.labels.function(f));
        entry.classes = labels.zip(classes.deps_each(each)).collect();
        entry.classes.sort_unstable_by_key(|&(label, _)| label);
        let store = &self.cache.store;
        if let Some((key, bytes)) = pack {
            if !store.put_or_warn(PACKS, &key, &bytes) {
                return;
            }
        }
        // The packs the entry no longer refers to go once it is written.
        if store.put_value_or_warn(STEPS, &self.key, &entry) {
            for key in dropped {
                store.remove(PACKS, &key);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
