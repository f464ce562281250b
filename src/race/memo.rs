//! The pair stage's results by bucket, kept from one run for the next ([`PairMemo`]): a bucket
//! whose digest is the same gives the same races, so a run after an edit checks only the
//! buckets the edit changed and replays the others' racing checks (on the kernel, a lock edit
//! changes 3 of 46,474 buckets).
//!
//! What a bucket's races depend on, and so what its digest holds ([`bucket_digest`]):
//!
//! - its groups in the order they are paired ([`Arranged`]): where each object class's run
//!   starts, and per group what [`super::check::check`] reads — path, lockset, kind, atomicity,
//!   value class, phase, type facts and the rows of the type-aware aliasing tables they lead
//!   to ([`super::types::TypeAlias::hash_rows`]), whether each member on its path is a
//!   union's, the entries performing it, `may_order`, `arg_locks`, the objects its sites may
//!   touch by the inclusion-based points-to — and, with `--per-access`, which groups are one
//!   access (which of them share a warning);
//! - the run's context ([`context_digest`]): the entries (what the check reads of them) and
//!   the race options. (Until session 42 it held the whole type-aware aliasing tables and
//!   every record's union flag, so an edit to any struct replayed no bucket.)
//!
//! Ids: within one run the check compares ids (globals, functions, names, points-to classes,
//! records, entries) only for equality, or looks them up in the tables the context holds. So
//! any naming of them that is one-to-one within a run gives equal verdicts for equal digests.
//! The digests name what an edit renumbers by what it stands for ([`StableIds`]): functions
//! and globals by label, names by their text, points-to classes by a hash of their canonical
//! name — a new global or function above others (which shifts every later id) leaves the
//! buckets it does not reach as they were. Records, record keys and entries are hashed as
//! they are (a record added before others shifts them, and the buckets that name them are
//! checked; entries are hashed in the context in their order). The witnesses' sites are not hashed: the check
//! does not read them, and a replayed race is made again on this run's groups from the two
//! performances it was found between ([`BucketRecord::performers`]), so it names this run's
//! sites without being checked again (checked again, a replayed bucket cost what checking
//! it does). The inclusion-based objects (`--inclusion`) are numbered per run: a group's set
//! is named by its objects' names, which the findings key gives them
//! ([`StableIds::objects`]; without them nothing is reused), and by whether unknown code
//! reaches one of them — what the distinct-objects test reads of it.
//!
//! Whole-object tasks ([`super::wholes`]) are kept too, without `--per-access`: found by the
//! digest of the whole access's group, compared by runs of its object's member groups.
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
use super::objects::SetName;
use super::pairs::PairStats;
use super::rows::Arranged;
use super::types::TypeAlias;
use super::wholes::{MemberDigest, MemberRun, WholeRecord};
use crate::ir::{FuncId, GlobalId, Name};
use crate::link::Program;
use crate::pta::PointsTo;
use crate::summary::{Lock, Path, RelativeLockset, Root, Step};

/// A bucket's or a context's digest.
pub(super) type Digest = [u8; 32];

/// The pair stage's results of a run, by bucket digest.
#[derive(Default, Serialize, Deserialize)]
pub struct PairMemo {
    /// The run's [`context_digest`]; a run with another context reuses nothing.
    context: Digest,
    /// By digest: buckets.
    buckets: FxHashMap<Digest, BucketRecord>,
    /// By the whole access's digest: whole-object tasks, by runs of members
    /// ([`super::wholes`]).
    #[serde(default)]
    wholes: FxHashMap<Digest, WholeRecord>,
    /// Of the run that made it: how many buckets it replayed, and how many it checked; how
    /// many whole-object tasks it took whole from the previous run, and how many it checked in
    /// part or whole; and how many of their member checks it replayed and made.
    #[serde(skip)]
    replayed: usize,
    #[serde(skip)]
    checked: usize,
    #[serde(skip)]
    wholes_replayed: usize,
    #[serde(skip)]
    wholes_checked: usize,
    #[serde(skip)]
    members: WholeMembers,
}

/// How many member checks of whole-object tasks a run (or a task) took from the previous
/// run's record, and how many it made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WholeMembers {
    pub replayed: usize,
    pub checked: usize,
}

impl WholeMembers {
    /// A task's counts: whether it was taken whole from the previous run's record (found there,
    /// nothing checked).
    pub(super) fn taken_whole(&self, found: bool) -> bool {
        found && self.checked == 0
    }
}

/// What a bucket's rows found.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct BucketRecord {
    /// The counts of its checks (not `entries` or `buckets`).
    pub stats: PairStats,
    /// Its racing checks, as (head, partner) positions in [`Arranged`]'s order, in the order
    /// they were found.
    pub racing: Vec<(u32, u32)>,
    /// Parallel to `racing` (a bucket's, not a whole-object task's): the entries (indices) of
    /// the head's and the partner's performances the race was found between
    /// ([`super::pairs::Pair::performers`]). A replayed race is made again from them, on this
    /// run's groups, without checking it again.
    #[serde(default)]
    pub performers: Vec<[u32; 2]>,
}

impl PairMemo {
    /// The memo of a run with context `context`, whose buckets and whole-object tasks (their
    /// digests) found what `buckets` and `wholes` say, `replayed` of the buckets replayed; a
    /// task's counts and whether the previous run's record had it come with it.
    pub(super) fn of_run(
        context: Digest,
        buckets: impl ExactSizeIterator<Item = (Digest, BucketRecord)>,
        wholes: impl Iterator<Item = (Digest, WholeRecord, WholeMembers, bool)>,
        replayed: usize,
    ) -> PairMemo {
        let checked = buckets.len().saturating_sub(replayed);
        let mut memo = PairMemo {
            context,
            buckets: buckets.collect(),
            replayed,
            checked,
            ..Default::default()
        };
        for (digest, record, members, found) in wholes {
            match members.taken_whole(found) {
                true => memo.wholes_replayed += 1,
                false => memo.wholes_checked += 1,
            }
            memo.members.replayed += members.replayed;
            memo.members.checked += members.checked;
            memo.wholes.insert(digest, record);
        }
        memo
    }

    /// How many buckets the run that made it replayed from the previous run's memo.
    pub fn replayed(&self) -> usize {
        self.replayed
    }

    /// How many buckets the run that made it checked.
    pub fn checked(&self) -> usize {
        self.checked
    }

    /// How many whole-object tasks the run that made it took whole from the previous run,
    /// and how many it checked (some or all of their members).
    pub fn wholes(&self) -> (usize, usize) {
        (self.wholes_replayed, self.wholes_checked)
    }

    /// How many member checks of whole-object tasks the run that made it replayed and made.
    pub fn whole_members(&self) -> WholeMembers {
        self.members
    }

    /// What the bucket with `digest` found in the run this memo comes from, if that run had
    /// context `context`.
    pub(super) fn get(&self, context: &Digest, digest: &Digest) -> Option<&BucketRecord> {
        (self.context == *context)
            .then(|| self.buckets.get(digest))
            .flatten()
    }

    /// What the whole-object task of the whole access with `digest` found in the run this
    /// memo comes from, if that run had context `context`.
    pub(super) fn get_whole(&self, context: &Digest, digest: &Digest) -> Option<&WholeRecord> {
        (self.context == *context)
            .then(|| self.wholes.get(digest))
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

/// The names of points-to classes private to one function, by their members (a class of one
/// address-taken local is named after it): made on demand, there are too many to list.
pub trait PrivateNames: Send + Sync {
    /// The name of `class` if it is private to one function, one-to-one among such classes.
    fn name(&self, program: &Program, pta: &PointsTo, class: u32) -> Option<String>;
}

/// Names of ids that do not depend on how a run numbered them (see the module documentation),
/// given by the summaries cache; an id it has no name for (or every id, [`StableIds::default`])
/// is hashed as it is, apart from the names.
#[derive(Default)]
pub struct StableIds {
    /// By function id: its label.
    pub functions: Vec<u64>,
    /// By global id: its label.
    pub globals: Vec<u64>,
    /// By class representative: a hash of the class's canonical name, one-to-one.
    pub classes: FxHashMap<u32, u64>,
    /// The names of the classes private to one function (not in `classes`).
    pub private: Option<Arc<dyn PrivateNames>>,
    /// The inclusion-based points-to's objects (`--inclusion`), by their names; without them
    /// its object sets have no names, and nothing is replayed.
    pub objects: Option<Arc<ObjectNames>>,
}

/// The hashes of the names of the inclusion-based points-to's objects
/// ([`crate::pta::inclusion::SiteObjects`]), by object number: one-to-one.
pub type ObjectNames = FxHashMap<u32, u128>;

/// What the pair stage needs to replay a previous run's buckets.
#[derive(Clone, Copy)]
pub struct MemoInput<'a> {
    /// What the previous run found by bucket.
    pub previous: &'a PairMemo,
    /// How this run's ids are named in digests.
    pub ids: &'a StableIds,
}

/// Hashes ids by [`StableIds`]: a named id as `(0, name)`, a private class as `(2, its name's
/// text)`, another as `(1, id)` — one-to-one.
#[derive(Clone, Copy)]
pub(super) struct IdHasher<'a> {
    ids: &'a StableIds,
    program: &'a Program,
    pta: &'a PointsTo,
}

impl<'a> IdHasher<'a> {
    pub fn new(program: &'a Program, pta: &'a PointsTo, ids: &'a StableIds) -> IdHasher<'a> {
        IdHasher { ids, program, pta }
    }

    fn named(h: &mut Blake, name: Option<u64>, id: u32) {
        match name {
            Some(n) => (0u8, n).hash(h),
            None => (1u8, id).hash(h),
        }
    }

    fn function(&self, h: &mut Blake, f: FuncId) {
        Self::named(h, self.ids.functions.get(f.index()).copied(), f.0);
    }

    fn global(&self, h: &mut Blake, g: GlobalId) {
        Self::named(h, self.ids.globals.get(g.index()).copied(), g.0);
    }

    fn class(&self, h: &mut Blake, c: u32) {
        if let Some(&name) = self.ids.classes.get(&c) {
            return Self::named(h, Some(name), c);
        }
        // Only a representative is named: `c` and its representative are two ids to the check.
        let private = (self.pta.class(c) == c)
            .then(|| self.ids.private.as_ref()?.name(self.program, self.pta, c))
            .flatten();
        match private {
            Some(name) => (2u8, name).hash(h),
            None => Self::named(h, None, c),
        }
    }

    fn name(&self, h: &mut Blake, n: Name) {
        self.program.names.get(n).hash(h);
    }

    fn path(&self, h: &mut Blake, p: &Path) {
        // Destructured: a field added to a path must be hashed here too.
        let Path { root, steps } = p;
        match *root {
            Root::Global(g) => {
                0u8.hash(h);
                self.global(h, g);
            }
            Root::Formal(i) => (1u8, i).hash(h),
            Root::Local(l) => (2u8, l).hash(h),
            Root::Rep(c) => {
                3u8.hash(h);
                self.class(h, c);
            }
            Root::Pseudo(n) => {
                4u8.hash(h);
                self.name(h, n);
            }
        }
        steps.len().hash(h);
        for s in steps {
            match *s {
                Step::Deref => 0u8.hash(h),
                Step::Field(r, n) => {
                    // Whether it is a union's: `may_alias` reads it.
                    let types = &self.program.types;
                    let union = ((r.0 as usize) < types.record_count())
                        .then(|| types.record(r).kind == crate::ir::types::RecordKind::Union);
                    (1u8, r, union).hash(h);
                    self.name(h, n);
                }
                Step::Index => 2u8.hash(h),
                Step::Elem(i) => (3u8, i).hash(h),
            }
        }
    }

    fn paths<'p>(&self, h: &mut Blake, paths: impl ExactSizeIterator<Item = &'p Path>) {
        paths.len().hash(h);
        for p in paths {
            self.path(h, p);
        }
    }

    fn lockset(&self, h: &mut Blake, l: &RelativeLockset) {
        // Destructured: a field added to a lockset or a lock must be hashed here too.
        let RelativeLockset {
            plus,
            rehold,
            minus,
            minus_top,
        } = l;
        plus.len().hash(h);
        for Lock { path, mode } in plus.iter() {
            self.path(h, path);
            mode.hash(h);
        }
        self.paths(h, rehold.iter());
        self.paths(h, minus.iter());
        minus_top.hash(h);
    }

    fn functions(&self, h: &mut Blake, fs: &[FuncId]) {
        fs.len().hash(h);
        for &f in fs {
            self.function(h, f);
        }
    }
}

/// What the check reads besides the groups: the entries, whether the type-aware aliasing
/// rules are on, and the options that change the pair stage.
pub(super) fn context_digest(
    ids: IdHasher<'_>,
    entries: &[ThreadEntry],
    type_alias: Option<&TypeAlias>,
    per_access: bool,
) -> Digest {
    let mut h = Blake::new("relay pair context");
    per_access.hash(&mut h);
    entries.len().hash(&mut h);
    for e in entries {
        // Not its origin: that decides how accesses are grouped, and the groups are hashed.
        ids.function(&mut h, e.func);
        (e.multiple, e.is_main).hash(&mut h);
        ids.functions(&mut h, &e.ordered_by);
        ids.functions(&mut h, &e.joined_by);
        match &e.arg {
            Some(arg) => {
                true.hash(&mut h);
                ids.path(&mut h, arg);
            }
            None => false.hash(&mut h),
        }
        (e.private_arg, e.private_element).hash(&mut h);
    }
    // Whether the type rules apply; what they read of the records is each group's
    // ([`hash_group`]), and which records are unions each path's ([`IdHasher::path`]).
    type_alias.is_some().hash(&mut h);
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

/// What a bucket's digest reads besides its groups: per group, its `--per-access` access
/// number (`accesses`, empty without it), the names of the interned object sets of the
/// inclusion-based points-to (`object_sets`, empty without it), and the digests of the
/// performer lists groups share (hashed once, `lists`).
pub(super) struct GroupFacts<'a> {
    pub accesses: &'a [u32],
    /// The type-aware aliasing tables, when they apply: each group's digest holds the rows
    /// its type facts lead the check to.
    pub type_alias: Option<&'a TypeAlias>,
    pub object_sets: &'a [SetName],
    /// The digests of the collapsed SCCs' performer lists.
    pub lists: ListDigests,
}

/// Every bucket's digest (see the module documentation), in parallel.
pub(super) fn bucket_digests(
    ids: IdHasher<'_>,
    arranged: &[Arranged],
    groups: &[Group<'_>],
    facts: &GroupFacts<'_>,
) -> Vec<Digest> {
    arranged
        .par_iter()
        .map_init(Scratch::default, |scratch, bucket| {
            bucket_digest(ids, bucket, groups, facts, scratch)
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

/// What the check reads of group `g`.
fn hash_group(ids: IdHasher<'_>, h: &mut Blake, g: &Group<'_>, facts: &GroupFacts<'_>) {
    let a = &g.access;
    ids.path(h, a.path);
    ids.lockset(h, a.locks);
    (a.kind, a.atomic, a.value, a.class.is_some(), a.phase).hash(h);
    (g.ty, g.may_order, g.arg_locks).hash(h);
    if let Some(t) = facts.type_alias {
        t.hash_rows(&g.ty, h);
    }
    // (Without the inclusion-based objects every group's are unknown: `None`.)
    g.objects
        .and_then(|id| facts.object_sets.get(id as usize))
        .hash(h);
    match &g.performers {
        Performers::Listed(list) => {
            0u8.hash(h);
            list.len().hash(h);
            for p in list {
                p.entry.hash(h);
            }
        }
        Performers::Reaching { entries, .. } => {
            1u8.hash(h);
            facts.lists.0.get(&address(entries)).hash(h);
        }
    }
}

/// The digests of the whole-object tasks (without `--per-access`, where a task reads nothing
/// else, [`super::wholes`]): each whole access's group (what its record is found by), and per
/// object the runs of its member groups in order, each with the digest of its members' digests
/// (what the record's runs are compared by). Apart from the buckets' by their domains.
pub(super) struct WholeDigests {
    pub tasks: Vec<Digest>,
    pub runs: FxHashMap<u32, Vec<MemberRun>>,
}

/// [`WholeDigests`] of the whole accesses `wholes` and the member groups of their objects
/// (`members`, by object).
pub(super) fn whole_digests(
    ids: IdHasher<'_>,
    wholes: &[u32],
    members: &FxHashMap<u32, Vec<u32>>,
    groups: &[Group<'_>],
    facts: &GroupFacts<'_>,
) -> WholeDigests {
    // An object's members once, not once per whole access to it (SQLite has objects with
    // thousands of members and hundreds of whole accesses).
    let objects: Vec<(&u32, &Vec<u32>)> = members.iter().collect();
    let runs = objects
        .par_iter()
        .map(|&(&o, list)| {
            let mut h = Blake::new("");
            let digests = list
                .iter()
                .map(|&m| {
                    h = Blake::reusing(std::mem::take(&mut h.0), "relay pair member");
                    hash_group(ids, &mut h, &groups[m as usize], facts);
                    let mut d = [0u8; 16];
                    d.copy_from_slice(&h.digest()[..16]);
                    d
                })
                .collect::<Vec<MemberDigest>>();
            (o, super::wholes::runs(&digests))
        })
        .collect();
    let tasks = wholes
        .par_iter()
        .map(|&w| {
            let mut h = Blake::new("relay pair whole");
            hash_group(ids, &mut h, &groups[w as usize], facts);
            h.digest()
        })
        .collect();
    WholeDigests { tasks, runs }
}

/// One bucket's digest.
fn bucket_digest(
    ids: IdHasher<'_>,
    bucket: &Arranged,
    groups: &[Group<'_>],
    facts: &GroupFacts<'_>,
    scratch: &mut Scratch,
) -> Digest {
    let first = &mut scratch.first;
    let mut h = Blake::reusing(std::mem::take(&mut scratch.bytes), "relay pair bucket");
    bucket.rows().hash(&mut h);
    bucket.starts().hash(&mut h);
    first.clear();
    for position in 0..bucket.rows() {
        hash_group(ids, &mut h, &groups[bucket.group(position)], facts);
        // Which earlier group of the bucket is the same access, if any.
        if let Some(&access) = facts.accesses.get(bucket.group(position)) {
            first.entry(access).or_insert(position as u32).hash(&mut h);
        }
    }
    let digest = h.digest();
    scratch.bytes = h.0;
    digest
}
