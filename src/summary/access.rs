//! Guarded accesses (RELAY §3.3): an lvalue, the relative lockset where it is accessed, read or
//! write, and where — plus the call chain from the summarised function down to the access, so a
//! report can show the path from a thread entry (Chord's counterexamples).

use serde::{Deserialize, Serialize};

use super::lockset::RelativeLockset;
use super::path::Path;
use super::threads::Phase;
use crate::ir::{FuncId, Loc};

#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum AccessKind {
    Read,
    Write,
}

/// A call on the way from the summarised function to an access: the call site and the callee.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct CallSite {
    pub loc: Loc,
    pub callee: FuncId,
}

/// At most this many calls are kept per chain (the ones nearest the summarised function).
pub const MAX_CHAIN: usize = 8;

/// Where an access happens: its location (in the function that performs it) and the calls from
/// the summarised function down to that function.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Witness {
    pub loc: Loc,
    pub chain: Vec<CallSite>,
    /// The function whose body performs the access (the chain may be truncated before it).
    #[serde(default)]
    pub func: Option<FuncId>,
}

/// At most this many witnesses are kept per guarded access (the shortest chains first).
pub const MAX_WITNESSES: usize = 2;

/// A summary with more guarded accesses than this is widened ([`AccessSet::coarsen`]).
pub const MAX_ACCESSES: usize = 2000;

/// RELAY's guarded access `(o, L, k)`: one per lvalue, relative lockset, kind (and atomicity),
/// however many program points perform it — summary sizes depend on that. A few of those program
/// points are kept as witnesses for reports; the race check does not depend on them.
///
/// The lvalue and lockset are indices into the summary's tables ([`AccessTables`]): a summary
/// has far fewer distinct paths and locksets than accesses, and callers rebind each once.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
pub struct GuardedAccess {
    pub path: u32,
    pub locks: u32,
    pub kind: AccessKind,
    /// Through an `_Atomic` object or an atomic operation: never races with another atomic access.
    pub atomic: bool,
    /// The points-to class of the accessed memory (the race stage buckets by it).
    pub class: Option<u32>,
    /// Whether threads the summarised function created may run at the access.
    #[serde(default)]
    pub phase: Phase,
    /// Sorted by (chain length, location); at least one, at most [`MAX_WITNESSES`].
    pub witnesses: Vec<Witness>,
}

/// The distinct paths and locksets the accesses of one summary refer to.
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct AccessTables {
    pub paths: Vec<Path>,
    pub locksets: Vec<RelativeLockset>,
}

/// A guarded access with its path and lockset resolved.
#[derive(Copy, Clone, Debug)]
pub struct AccessView<'a> {
    pub path: &'a Path,
    pub locks: &'a RelativeLockset,
    pub kind: AccessKind,
    pub atomic: bool,
    pub class: Option<u32>,
    pub phase: Phase,
    pub witnesses: &'a [Witness],
}

impl<'a> AccessView<'a> {
    /// The first witness: the access with the shortest call chain.
    pub fn witness(&self) -> &'a Witness {
        &self.witnesses[0]
    }
}

/// (path, lockset, kind, atomic, phase).
pub type AccessKey = (u32, u32, AccessKind, bool, Phase);
/// What [`AccessSet::coarsen`] merges by, and what it keeps per merged access.
type MergedKey = (Path, AccessKind, bool, Phase);
type Merged = (RelativeLockset, Option<u32>, Witness);

/// Builds the accesses of one function, deduplicated by `(o, L, k)`.
#[derive(Default)]
pub struct AccessSet {
    paths: indexmap::IndexSet<Path, rustc_hash::FxBuildHasher>,
    locksets: indexmap::IndexSet<RelativeLockset, rustc_hash::FxBuildHasher>,
    map: rustc_hash::FxHashMap<AccessKey, (Option<u32>, Vec<Witness>)>,
}

impl AccessSet {
    pub fn path_id(&mut self, p: Path) -> u32 {
        self.paths.insert_full(p).0 as u32
    }

    pub fn lockset_id(&mut self, l: &RelativeLockset) -> u32 {
        match self.locksets.get_index_of(l) {
            Some(i) => i as u32,
            None => self.locksets.insert_full(l.clone()).0 as u32,
        }
    }

    /// Adds a witness of access `key`; `chain_len` and `loc` order witnesses, `make` builds the
    /// witness only if it is kept (callers' accesses arrive by the thousand).
    pub fn insert(
        &mut self,
        key: AccessKey,
        class: Option<u32>,
        chain_len: usize,
        loc: Loc,
        make: impl FnOnce() -> Witness,
    ) {
        let (_, ws) = self.map.entry(key).or_insert_with(|| (class, Vec::new()));
        let order = |w: &Witness| (w.chain.len(), w.loc);
        let pos = ws.partition_point(|x| order(x) <= (chain_len, loc));
        if pos >= MAX_WITNESSES {
            return;
        }
        // Among equal (length, location) the first inserted is kept: insertion order is
        // deterministic, and one witness per program point is enough.
        if pos > 0 && order(&ws[pos - 1]) == (chain_len, loc) {
            return;
        }
        ws.insert(pos, make());
        ws.truncate(MAX_WITNESSES);
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// The widening applied to a summary that grew past [`MAX_ACCESSES`]: every path becomes
    /// its representative form (`collapse`, `None` drops it) and the accesses of one path, kind
    /// and atomicity merge into one, with the join of their locksets (fewer must-held, more
    /// may-released locks: only more warnings). One witness is kept per merged access.
    pub fn coarsen(self, mut collapse: impl FnMut(&Path) -> Option<Path>) -> AccessSet {
        let AccessSet {
            paths,
            locksets,
            map,
        } = self;
        let new_path: Vec<Option<Path>> = paths.iter().map(&mut collapse).collect();
        let mut merged: rustc_hash::FxHashMap<MergedKey, Merged> = rustc_hash::FxHashMap::default();
        for ((p, l, kind, atomic, phase), (class, ws)) in map {
            let Some(path) = new_path[p as usize].clone() else {
                continue;
            };
            let locks = &locksets[l as usize];
            let w = ws.into_iter().next().expect("an access has a witness");
            match merged.entry((path, kind, atomic, phase)) {
                std::collections::hash_map::Entry::Occupied(mut e) => {
                    let (ls, _, best) = e.get_mut();
                    ls.join(locks);
                    if (w.chain.len(), w.loc) < (best.chain.len(), best.loc) {
                        *best = w;
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert((locks.clone(), class, w));
                }
            }
        }
        let mut out = AccessSet::default();
        let mut entries: Vec<_> = merged.into_iter().collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for ((path, kind, atomic, phase), (locks, class, w)) in entries {
            let key = (
                out.path_id(path),
                out.lockset_id(&locks),
                kind,
                atomic,
                phase,
            );
            let (len, loc) = (w.chain.len(), w.loc);
            out.insert(key, class, len, loc, || w);
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The tables, sorted, and the accesses in canonical order: the result depends only on the
    /// set of accesses, not on the order they were found in (recursive SCCs compare summaries
    /// between rounds).
    pub fn finish(self) -> (AccessTables, Vec<GuardedAccess>) {
        let (paths, path_new) = sorted_table(self.paths);
        let (locksets, lockset_new) = sorted_table(self.locksets);
        let mut accesses: Vec<GuardedAccess> = self
            .map
            .into_iter()
            .map(
                |((path, locks, kind, atomic, phase), (class, witnesses))| GuardedAccess {
                    path: path_new[path as usize],
                    locks: lockset_new[locks as usize],
                    kind,
                    atomic,
                    class,
                    phase,
                    witnesses,
                },
            )
            .collect();
        accesses.sort_by_key(|a| (a.path, a.locks, a.kind, a.atomic, a.phase));
        (AccessTables { paths, locksets }, accesses)
    }
}

/// A table in sorted order, and the new index of each old one.
pub(super) fn sorted_table<T: Ord>(table: impl IntoIterator<Item = T>) -> (Vec<T>, Vec<u32>) {
    let mut items: Vec<(T, usize)> = table.into_iter().enumerate().map(|(i, t)| (t, i)).collect();
    items.sort();
    let mut new = vec![0u32; items.len()];
    for (pos, (_, old)) in items.iter().enumerate() {
        new[*old] = pos as u32;
    }
    (items.into_iter().map(|(t, _)| t).collect(), new)
}

/// A thread creation performed by the function or its callees.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Spawn {
    /// The start routines the creation may run.
    pub start: Vec<FuncId>,
    /// The creation site (in the function that calls the model).
    pub loc: Loc,
    /// Whether the creation site is inside a loop (the entry may run more than once).
    pub in_loop: bool,
    /// How many distinct call paths reach the site, counted up to 2: a function that creates
    /// a thread and is called twice starts it twice.
    pub paths: u8,
    /// The shortest call chain to the creation site.
    pub chain: Vec<CallSite>,
    /// The one object the thread's argument points to, when every path agrees on it (in the
    /// summarised function's terms): lets the race stage name `arg->lock` in the thread.
    #[serde(default)]
    pub arg: Option<Path>,
    /// The function containing the creation site (the chain may be truncated before it).
    #[serde(default)]
    pub func: Option<FuncId>,
}
