//! The pair stage's results by bucket, kept from one run for the next ([`PairMemo`]): a bucket
//! whose digest is the same gives the same races, so a run after an edit checks only the
//! buckets the edit changed and replays the others' racing checks (on the kernel, a lock edit
//! changes 3 of 46,474 buckets).
//!
//! What a bucket's races depend on, and so what its digest holds ([`bucket_digest`]):
//!
//! - its groups in the order they are paired ([`Arranged`]): where each object class's run
//!   starts, and per group what [`super::check::check`] reads — path, lockset, kind, atomicity,
//!   value class, phase, type facts, the entries performing it, `may_order`, `arg_locks` — and,
//!   with `--per-access`, which groups are one access (which of them share a warning);
//! - the run's context ([`context_digest`]): the entries (what the check reads of them), the
//!   type-aware aliasing tables, which records are unions, and the race options.
//!
//! Ids (globals, records, names, points-to classes in paths, entries) are hashed as they are:
//! within one run the check compares them only for equality, or looks them up in the tables the
//! context holds, so equal digests mean equal verdicts even if another run numbered them
//! otherwise (it then finds nothing to reuse). The witnesses' sites are not hashed: the check
//! does not read them, and a replayed race is checked again on this run's groups, so it names
//! this run's sites. With the inclusion-based objects on (`--inclusion`), nothing is reused:
//! the object sets are numbered per run.
//!
//! A bucket's counts ([`PairStats`]) are its own: the pair stage cuts its batches so that a
//! bucket's checks do not depend on the buckets before it ([`super::pairs`]).

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::candidates::{Group, Performers};
use super::entries::ThreadEntry;
use super::pairs::PairStats;
use super::rows::Arranged;
use super::types::TypeAlias;
use crate::link::Program;

/// A bucket's or a context's digest.
pub(super) type Digest = [u8; 32];

/// The pair stage's results of a run, by bucket digest.
#[derive(Default, Serialize, Deserialize)]
pub struct PairMemo {
    /// The run's [`context_digest`]; a run with another context reuses nothing.
    context: Digest,
    buckets: FxHashMap<Digest, BucketRecord>,
    /// Of the run that made it: how many buckets it replayed, and how many it checked.
    #[serde(skip)]
    replayed: usize,
    #[serde(skip)]
    checked: usize,
}

/// What a bucket's rows found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct BucketRecord {
    /// The counts of its checks (not `entries` or `buckets`).
    pub stats: PairStats,
    /// Its racing checks, as (head, partner) positions in [`Arranged`]'s order, in the order
    /// they were found.
    pub racing: Vec<(u32, u32)>,
}

impl PairMemo {
    /// The memo of a run with context `context`, whose buckets (their digests) found what
    /// `records` says, `replayed` of them replayed.
    pub(super) fn of_run(
        context: Digest,
        records: impl ExactSizeIterator<Item = (Digest, BucketRecord)>,
        replayed: usize,
    ) -> PairMemo {
        let checked = records.len().saturating_sub(replayed);
        PairMemo {
            context,
            buckets: records.collect(),
            replayed,
            checked,
        }
    }

    /// How many buckets the run that made it replayed from the previous run's memo.
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// How many buckets the run that made it checked.
    pub fn checked(&self) -> usize {
        self.checked
    }

    /// What the bucket with `digest` found in the run this memo comes from, if that run had
    /// context `context`.
    pub(super) fn get(&self, context: &Digest, digest: &Digest) -> Option<&BucketRecord> {
        (self.context == *context)
            .then(|| self.buckets.get(digest))
            .flatten()
    }
}

/// A [`Hasher`] collecting the bytes `#[derive(Hash)]` types write, digested at once with BLAKE3
/// (fed piece by piece, BLAKE3 spent more time copying eight-byte writes than hashing).
struct Blake(Vec<u8>);

impl Blake {
    fn new(domain: &str) -> Blake {
        Blake::reusing(Vec::new(), domain)
    }

    /// Starts over in `buffer`'s storage.
    fn reusing(mut buffer: Vec<u8>, domain: &str) -> Blake {
        buffer.clear();
        buffer.extend_from_slice(domain.as_bytes());
        Blake(buffer)
    }

    fn digest(&self) -> Digest {
        *blake3::hash(&self.0).as_bytes()
    }
}

impl Hasher for Blake {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }

    fn finish(&self) -> u64 {
        let d = self.digest();
        u64::from_le_bytes([d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]])
    }
}

/// What the check reads besides the groups: the entries, the type-aware aliasing tables (when
/// on), which records are unions, and the options that change the pair stage.
pub(super) fn context_digest(
    program: &Program,
    entries: &[ThreadEntry],
    type_alias: Option<&TypeAlias>,
    per_access: bool,
) -> Digest {
    let mut h = Blake::new("relay pair context");
    per_access.hash(&mut h);
    entries.len().hash(&mut h);
    for e in entries {
        // Not its origin: that decides how accesses are grouped, and the groups are hashed.
        (e.func, e.multiple, e.is_main, &e.ordered_by, &e.joined_by).hash(&mut h);
        (&e.arg, e.private_arg, e.private_element).hash(&mut h);
    }
    match type_alias {
        Some(t) => {
            true.hash(&mut h);
            t.hash(&mut h);
        }
        None => false.hash(&mut h),
    }
    for r in program.types.records() {
        (r.kind == crate::ir::types::RecordKind::Union).hash(&mut h);
    }
    h.digest()
}

/// The digests of the entry lists of collapsed SCCs' performers, by address (they are shared
/// by every access of the SCC, and long: hashed once each).
pub(super) struct ListDigests(FxHashMap<usize, Digest>);

/// A list's address, as [`ListDigests`] keys it (only compared, never dereferenced).
fn address(list: &Arc<[usize]>) -> usize {
    Arc::as_ptr(list).cast::<usize>() as usize
}

impl ListDigests {
    pub fn new(groups: &[Group<'_>]) -> ListDigests {
        let mut map = FxHashMap::default();
        for g in groups {
            if let Performers::Reaching { entries, .. } = &g.performers {
                map.entry(address(entries)).or_insert_with(|| {
                    let mut h = Blake::new("entries");
                    entries.hash(&mut h);
                    h.digest()
                });
            }
        }
        ListDigests(map)
    }
}

/// Every bucket's digest (see the module documentation), in parallel. `accesses`: per group,
/// its `--per-access` access number (empty without it).
pub(super) fn bucket_digests(
    arranged: &[Arranged],
    groups: &[Group<'_>],
    accesses: &[u32],
) -> Vec<Digest> {
    let lists = ListDigests::new(groups);
    arranged
        .par_iter()
        .map_init(Scratch::default, |scratch, bucket| {
            bucket_digest(bucket, groups, accesses, &lists, scratch)
        })
        .collect()
}

/// A worker's storage for [`bucket_digest`].
#[derive(Default)]
struct Scratch {
    /// Per access, the first position of the bucket that is that access.
    first: FxHashMap<u32, u32>,
    bytes: Vec<u8>,
}

/// One bucket's digest.
fn bucket_digest(
    bucket: &Arranged,
    groups: &[Group<'_>],
    accesses: &[u32],
    lists: &ListDigests,
    scratch: &mut Scratch,
) -> Digest {
    let first = &mut scratch.first;
    let mut h = Blake::reusing(std::mem::take(&mut scratch.bytes), "relay pair bucket");
    bucket.rows().hash(&mut h);
    bucket.starts().hash(&mut h);
    first.clear();
    for position in 0..bucket.rows() {
        let g = &groups[bucket.group(position)];
        let a = &g.access;
        (
            a.path,
            a.locks,
            a.kind,
            a.atomic,
            a.value,
            a.class.is_some(),
            a.phase,
        )
            .hash(&mut h);
        (g.ty, g.may_order, g.arg_locks).hash(&mut h);
        match &g.performers {
            Performers::Listed(list) => {
                0u8.hash(&mut h);
                list.len().hash(&mut h);
                for p in list {
                    p.entry.hash(&mut h);
                }
            }
            Performers::Reaching { entries, .. } => {
                1u8.hash(&mut h);
                lists.0.get(&address(entries)).hash(&mut h);
            }
        }
        // Which earlier group of the bucket is the same access, if any.
        if let Some(&access) = accesses.get(bucket.group(position)) {
            first.entry(access).or_insert(position as u32).hash(&mut h);
        }
    }
    let digest = h.digest();
    scratch.bytes = h.0;
    digest
}
