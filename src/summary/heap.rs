//! Approximate heap bytes of summaries, by component: what the run's statistics report so that
//! memory work is measured, not guessed. Counts capacities (not lengths) and ignores allocator
//! overhead, so it is a lower bound of what the summaries occupy.

use std::mem::size_of;

use serde::{Deserialize, Serialize};

use super::access::{GuardedAccess, Witness};
use super::intern::Internable;
use super::lockset::{Lock, RelativeLockset};
use super::path::{Path, Step};
use super::Summary;

/// Bytes held by summaries, by component.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryBytes {
    /// The guarded-access records themselves.
    pub accesses: u64,
    /// Their witnesses (locations and call-chain pointers).
    pub witnesses: u64,
    /// The call chains' nodes, shared among witnesses: every node alive in the process when
    /// the statistics were taken ([`super::chain::live_nodes`]).
    pub chains: u64,
    /// The path and lockset tables the accesses refer to (pointers to interned values).
    pub tables: u64,
    /// The interned paths and locksets, shared by all summaries (program-wide, at the end).
    pub interned_paths: u64,
    pub interned_locksets: u64,
    /// Everything else (exit lockset, return value, spawns, thread state).
    pub other: u64,
}

impl SummaryBytes {
    pub fn total(&self) -> u64 {
        self.accesses
            + self.witnesses
            + self.chains
            + self.tables
            + self.interned_paths
            + self.interned_locksets
            + self.other
    }

    pub fn add(&mut self, o: &SummaryBytes) {
        self.accesses += o.accesses;
        self.witnesses += o.witnesses;
        self.chains += o.chains;
        self.tables += o.tables;
        self.interned_paths += o.interned_paths;
        self.interned_locksets += o.interned_locksets;
        self.other += o.other;
    }
}

fn vec_bytes<T>(v: &Vec<T>) -> u64 {
    (v.capacity() * size_of::<T>()) as u64
}

fn path_bytes(p: &Path) -> u64 {
    (p.steps.capacity() * size_of::<Step>()) as u64
}

fn lockset_bytes(l: &RelativeLockset) -> u64 {
    let plus: u64 = l.plus.iter().map(|k: &Lock| path_bytes(&k.path)).sum();
    let minus: u64 = l.minus.iter().map(path_bytes).sum();
    plus + minus
        + (l.plus.capacity() * size_of::<Lock>()) as u64
        + (l.minus.capacity() * size_of::<Path>()) as u64
}

/// The bytes of every interned path and lockset ([`super::intern`]).
pub fn interned() -> (u64, u64) {
    let paths = Path::interner().footprint(path_bytes).1;
    let locksets = RelativeLockset::interner().footprint(lockset_bytes).1;
    (paths, locksets)
}

impl Summary {
    /// The summary's heap bytes (its own `size_of` included in `other`).
    pub fn heap_bytes(&self) -> SummaryBytes {
        let witnesses = self
            .accesses
            .iter()
            .map(|a| (a.witnesses.len() * size_of::<Witness>()) as u64)
            .sum();
        let tables = vec_bytes(&self.tables.paths) + vec_bytes(&self.tables.locksets);
        SummaryBytes {
            accesses: vec_bytes::<GuardedAccess>(&self.accesses),
            witnesses,
            chains: 0,
            tables,
            interned_paths: 0,
            interned_locksets: 0,
            other: size_of::<Summary>() as u64
                + lockset_bytes(&self.lockset)
                + vec_bytes(&self.spawns),
        }
    }
}
