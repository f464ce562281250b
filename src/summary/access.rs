//! Guarded accesses (RELAY §3.3): an lvalue, the relative lockset where it is accessed, read or
//! write, and where — plus the call chain from the summarised function down to the access, so a
//! report can show the path from a thread entry (Chord's counterexamples).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::lockset::RelativeLockset;
use super::path::Path;
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
}

/// At most this many witnesses are kept per guarded access (the shortest chains first).
pub const MAX_WITNESSES: usize = 4;

/// RELAY's guarded access `(o, L, k)`: one per lvalue, relative lockset, kind (and atomicity),
/// however many program points perform it — the summary sizes depend on that. A few of those
/// program points are kept as witnesses for reports; the race check does not depend on them.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct GuardedAccess {
    pub path: Path,
    pub locks: RelativeLockset,
    pub kind: AccessKind,
    /// Through an `_Atomic` object or an atomic operation: never races with another atomic access.
    pub atomic: bool,
    /// The points-to class of the accessed memory (the race stage buckets by it).
    pub class: Option<u32>,
    /// Sorted by (chain length, location); at least one, at most [`MAX_WITNESSES`].
    pub witnesses: Vec<Witness>,
}

impl GuardedAccess {
    /// The first witness: the access with the shortest call chain.
    pub fn witness(&self) -> &Witness {
        &self.witnesses[0]
    }
}

type AccessKey = (Path, RelativeLockset, AccessKind, bool);

/// The accesses of one function, deduplicated by `(o, L, k)`.
#[derive(Default)]
pub struct AccessSet {
    map: BTreeMap<AccessKey, (Option<u32>, Vec<Witness>)>,
}

fn witness_order(w: &Witness) -> (usize, &Witness) {
    (w.chain.len(), w)
}

impl AccessSet {
    /// Adds an access with one witness (or merges its witness into an existing entry).
    pub fn insert(&mut self, key: AccessKey, class: Option<u32>, w: Witness) {
        let (_, ws) = self.map.entry(key).or_insert_with(|| (class, Vec::new()));
        if ws.contains(&w) {
            return;
        }
        let pos = ws
            .binary_search_by(|x| witness_order(x).cmp(&witness_order(&w)))
            .unwrap_or_else(|p| p);
        if pos < MAX_WITNESSES {
            ws.insert(pos, w);
            ws.truncate(MAX_WITNESSES);
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The accesses in a deterministic order (by path, lockset, kind).
    pub fn into_sorted(self) -> Vec<GuardedAccess> {
        self.map
            .into_iter()
            .map(
                |((path, locks, kind, atomic), (class, witnesses))| GuardedAccess {
                    path,
                    locks,
                    kind,
                    atomic,
                    class,
                    witnesses,
                },
            )
            .collect()
    }
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
    pub chain: Vec<CallSite>,
}
