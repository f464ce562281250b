//! What an SCC's summaries depend on of the points-to partition: the answers its analysis got.
//!
//! The summaries' context used to hold the fingerprint of every class, so any new pointer flow
//! between objects — an edit that merges two classes anywhere, or takes a new variable's
//! address — re-analysed the whole program. Now an SCC is keyed without the partition, and its
//! entry keeps what its analysis asked of it ([`crate::reads`]): the nodes whose class
//! it asked for (by name), and so the classes it got — by name, with a digest of what can be
//! read of each ([`ClassTable::readable`]: the class it points to, escape, interior, the
//! functions in it). A run reuses the SCC while every node is still in a class of the same
//! name that reads the same: the analysis is a function of its inputs, and every answer it
//! got from the partition is then the same. Which other nodes joined a class is not read
//! (that is what makes a class's members differ without its readers being analysed again).
//! A node in a class private to one function (locals and return values no class points to)
//! is read for what its class points to: the class's members are fixed by the bodies in the
//! key, but not its target — a formal's comes from the callers. A node the solver made (a
//! class's target no program object stands for) is read by its class's name: the analysis got
//! it as what a class points to, and that class's target, by name, is part of the answer about
//! that class (for a private class, its read). Until session 40 private nodes were left out,
//! on the premise that their targets are recorded when the analysis follows the pointer — but
//! the target was recorded as a node, whose class can keep its name when the pointer no longer
//! points to it: a formal pointing into a class two merged objects shared, after the objects
//! split again, still read the same (tests/incremental.rs, the walkers).
//!
//! Records are read the same way: an SCC is keyed without the program's records (a body's key
//! holds the definitions of the records it names), and its entry keeps the
//! records whose definitions its analysis looked into ([`crate::reads`]: every definition an
//! analysis sees comes from `TypeTable::record`), by label, with a digest of each definition
//! — its members' types naming their records by label, and whether it is complete. An edit
//! to a struct then re-analyses the functions that name it or read it (and the callers whose
//! summaries change), not the program.
//!
//! While the partition's and the records' fingerprint is the one the answers were recorded
//! under, nothing is checked.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::classes::{ClassTable, NodeNamer};
use super::fingerprint::RecordDefinitions;
use super::labels::Labels;
use super::KeyBuilder;
use crate::ir::RecordId;
use crate::link::Program;
use crate::pta::PointsTo;
use crate::reads::Asked;

/// A class across runs: a canonical class by the hash of its name, a trivial one (one global
/// or function no class points to) by [`ClassTable::private_name`].
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ClassName {
    Canonical(u64),
    Member(String),
}

/// One question the analysis asked: the class of a node (by the hash of its name,
/// [`NodeNamer::name_hash`]), for a node of the analysis's own about a class by name, and for
/// a node in a class private to one function what that class points to.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Read {
    Node(u64),
    Class(ClassName),
    /// What a private class points to; the class by its name ([`ClassTable::private_name`]).
    Target(String),
    /// A record's definition, by the record's label.
    Record(u64),
    /// Every record's definition.
    AllRecords,
}

/// What an SCC's summaries read of the partition (see the module documentation).
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, Debug)]
pub struct ClassDeps {
    /// The partition's and the records' fingerprint when they were read
    /// ([`ClassContext::fingerprint`]).
    fingerprint: [u8; 32],
    /// Sorted; `None` when a read could not be named (only the same partition and records
    /// will do).
    reads: Option<Vec<Read>>,
    /// The answers, in the order of `reads`, hashed.
    digest: [u8; 32],
}

/// The run's nodes by name, made when first needed (naming every node of the kernel takes
/// seconds; a run whose partition is the recorded one never needs it).
#[derive(Default)]
pub struct NodeNames {
    alloc_ranks: OnceLock<Arc<FxHashMap<u32, u32>>>,
    /// `None` for a name two nodes have.
    by_hash: OnceLock<FxHashMap<u64, Option<u32>>>,
}

/// What [`ClassDeps`] are made and checked with.
pub struct ClassContext<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub labels: &'a Labels,
    pub classes: &'a ClassTable,
    pub nodes: &'a NodeNames,
    /// Every record's definition ([`super::fingerprint::ProgramText::records`]).
    pub records: &'a RecordDefinitions,
    /// The partition's fingerprint and `records`, hashed ([`ClassContext::fingerprint_of`]).
    pub fingerprint: [u8; 32],
}

impl ClassContext<'_> {
    /// What [`ClassDeps`] are recorded under: the partition's fingerprint and the records'.
    pub fn fingerprint_of(classes: &ClassTable, records: &RecordDefinitions) -> [u8; 32] {
        let k = KeyBuilder::new("class and record reads")
            .key(&classes.fingerprint)
            .key(&records.key)
            .finish();
        k.0
    }

    fn namer(&self) -> NodeNamer<'_> {
        let ranks = self
            .nodes
            .alloc_ranks
            .get_or_init(|| NodeNamer::alloc_ranks(self.pta));
        NodeNamer::with_alloc_ranks(self.program, self.pta, self.labels, ranks.clone())
    }

    /// The node named by the hash, in this run, unless its class is private (no read names
    /// one: the answer changed) or nodes of two classes have that name (strings of equal
    /// text, records of equal label): which of them a read meant is not known, so it does
    /// not hold. Nodes of one name all in one class (equal strings merged, as most are)
    /// answer alike: whichever a read meant, it is among them (the body that holds it is in
    /// the key of the SCC that asked).
    fn node(&self, hash: u64) -> Option<u32> {
        // Sequential: SCCs are checked on the scheduler's pool, and a thread waiting in a
        // parallel loop here could take up another SCC's check, which would wait for this.
        let by_hash = self.nodes.by_hash.get_or_init(|| {
            let mut namer = self.namer();
            let mut buffer = String::new();
            let mut by_hash: FxHashMap<u64, Option<u32>> = FxHashMap::default();
            for n in 0..self.pta.node_count() as u32 {
                if self.classes.is_private(self.pta.class(n)) {
                    continue;
                }
                if let Some(h) = namer.name_hash(n, &mut buffer) {
                    let class = self.pta.class(n);
                    by_hash
                        .entry(h)
                        .and_modify(|one| {
                            if one.is_some_and(|m| self.pta.class(m) != class) {
                                *one = None;
                            }
                        })
                        .or_insert(Some(n));
                }
            }
            by_hash
        });
        by_hash.get(&hash).copied().flatten()
    }

    /// What the analysis read when it asked for the classes of `asked` (nodes, any order,
    /// repeats allowed), and the reads `more` (of an earlier run, which still hold; `None`:
    /// they could not all be named, and neither can these).
    pub fn deps(&self, asked: impl IntoIterator<Item = u32>, more: Option<&[Read]>) -> ClassDeps {
        let mut namer = self.namer();
        let mut buffer = String::new();
        let mut private = FxHashMap::default();
        let mut read = |n| self.read(&mut namer, &mut buffer, &mut private, n);
        self.deps_with(&mut read, asked, more)
    }

    /// [`ClassContext::deps`] of each `(asked, more)`, naming each node once (the members of a
    /// collapsed SCC ask about much the same nodes).
    pub fn deps_each<'r>(
        &self,
        each: impl IntoIterator<Item = (&'r [u32], Option<&'r [Read]>)>,
    ) -> Vec<ClassDeps> {
        let mut namer = self.namer();
        let mut buffer = String::new();
        let mut private = FxHashMap::default();
        let mut named: FxHashMap<u32, Option<Read>> = FxHashMap::default();
        let mut read = |n: u32| {
            (named.entry(n))
                .or_insert_with(|| self.read(&mut namer, &mut buffer, &mut private, n))
                .clone()
        };
        (each.into_iter())
            .map(|(asked, more)| self.deps_with(&mut read, asked.iter().copied(), more))
            .collect()
    }

    /// How the class of node `n` is read: by the node's name; a node of the analysis's own
    /// by its class's name — the analysis got it as what a class points to (`pts`), and that
    /// class's target, by name, is among what the answer about it records
    /// ([`ClassTable::readable`]). `None` if it has neither.
    /// `private` keeps the reads of private classes made so far (naming one takes the names
    /// of its members, and a function asks about most of its locals).
    fn read(
        &self,
        namer: &mut NodeNamer<'_>,
        buffer: &mut String,
        private: &mut FxHashMap<u32, Option<Read>>,
        n: u32,
    ) -> Option<Read> {
        let c = self.pta.class(n);
        if self.classes.is_private(c) {
            // By the class's name: the solver's own nodes in it have none, and all of them
            // point where the class does.
            let name = || {
                let name = self
                    .classes
                    .private_name(self.program, self.pta, self.labels, c);
                name.map(Read::Target)
            };
            return private.entry(c).or_insert_with(name).clone();
        }
        match namer.name_hash(n, buffer) {
            Some(h) => Some(Read::Node(h)),
            None => self.name(c).map(Read::Class),
        }
    }

    fn deps_with(
        &self,
        read: &mut impl FnMut(u32) -> Option<Read>,
        asked: impl IntoIterator<Item = u32>,
        more: Option<&[Read]>,
    ) -> ClassDeps {
        let mut reads: Option<Vec<(Read, u32)>> = more.map(|_| Vec::new());
        for n in asked {
            let Some(list) = &mut reads else { break };
            match self.asked(read, n) {
                Some(r) => list.push(r),
                None => reads = None,
            }
        }
        let reads = reads.and_then(|mut reads| {
            for r in more.unwrap_or(&[]) {
                reads.push((r.clone(), self.answer(r)?));
            }
            reads.sort_unstable();
            reads.dedup_by(|a, b| a.0 == b.0);
            Some(reads)
        });
        let digest = reads
            .as_deref()
            .and_then(|r| self.digest(r.iter().map(|(r, c)| (r, Some(*c)))))
            .unwrap_or([0; 32]);
        ClassDeps {
            fingerprint: self.fingerprint,
            reads: reads.map(|r| r.into_iter().map(|(r, _)| r).collect()),
            digest,
        }
    }

    /// Whether every answer `deps` records is the same in this run's partition.
    pub fn still_hold(&self, deps: &ClassDeps) -> bool {
        if deps.fingerprint == self.fingerprint {
            return true;
        }
        let Some(reads) = &deps.reads else {
            return false;
        };
        self.digest(reads.iter().map(|r| (r, self.answer(r)))) == Some(deps.digest)
    }

    /// `deps` (which still hold) as recorded under this run's partition.
    pub fn refreshed(&self, deps: &ClassDeps) -> ClassDeps {
        ClassDeps {
            fingerprint: self.fingerprint,
            ..deps.clone()
        }
    }

    /// The reads `deps` records (`None` if it could not name them all).
    pub fn reads<'d>(&self, deps: &'d ClassDeps) -> Option<&'d [Read]> {
        deps.reads.as_deref()
    }

    fn name(&self, c: u32) -> Option<ClassName> {
        if let Some(h) = self.classes.name_hash(self.pta, c) {
            return Some(ClassName::Canonical(h));
        }
        let name = self
            .classes
            .private_name(self.program, self.pta, self.labels, c)?;
        Some(ClassName::Member(name))
    }

    /// What the logged `n` ([`Asked`]) reads, with its answer in this run ([`Self::answer`]);
    /// `read` names a node's read. `None` if it cannot be named.
    fn asked(&self, read: &mut impl FnMut(u32) -> Option<Read>, n: u32) -> Option<(Read, u32)> {
        match Asked::of(n) {
            Asked::Node(n) if (n as usize) < self.pta.node_count() => {
                Some((read(n)?, self.pta.class(n)))
            }
            // Not a node of this run: the log's marks are past any node.
            Asked::Node(_) => None,
            Asked::Record(r) if (r as usize) < self.labels.records.len() => {
                Some((Read::Record(self.labels.record(RecordId(r))), r))
            }
            Asked::Record(_) => None,
            Asked::AllRecords => Some((Read::AllRecords, 0)),
        }
    }

    /// The answer a read gets in this run: a class, or for a record its number.
    fn answer(&self, read: &Read) -> Option<u32> {
        match read {
            Read::Record(label) => self.labels.records.id(*label),
            Read::AllRecords => Some(0),
            Read::Node(h) => Some(self.pta.class(self.node(*h)?)),
            Read::Class(ClassName::Canonical(h)) => self.classes.named(*h),
            Read::Class(ClassName::Member(m)) | Read::Target(m) => {
                self.classes
                    .private_class(self.program, self.pta, self.labels, m)
            }
        }
    }

    /// The answers — each class's name and what can be read of it — hashed; `None` if a read
    /// has none (its node or class is gone, or its class is now private or unnamed).
    fn digest<'r>(
        &self,
        answers: impl Iterator<Item = (&'r Read, Option<u32>)>,
    ) -> Option<[u8; 32]> {
        let mut k = KeyBuilder::new("class reads");
        for (read, class) in answers {
            let mut c = class?;
            match read {
                Read::Record(_) => {
                    k.u64(5).u64(*self.records.digests.get(c as usize)?);
                    continue;
                }
                Read::AllRecords => {
                    k.u64(6).key(&self.records.key);
                    continue;
                }
                _ => {}
            }
            if let Read::Target(_) = read {
                // Only a private class's target is read this way: a class no longer private
                // is read otherwise now.
                if !self.classes.is_private(c) {
                    return None;
                }
                let target = crate::reads::unrecorded(|| self.pta.deref_class(c));
                match target.map(|t| (t, self.name(t))) {
                    Some((t, Some(_))) => c = t,
                    // A class without a name (the solver's nodes only): an analysis that
                    // followed the pointer asked about its node, a read that cannot be named
                    // (the SCC is analysed again on any change of the partition); one that did
                    // not got nothing of it.
                    Some((_, None)) => {
                        k.u64(4);
                        continue;
                    }
                    None => {
                        k.u64(3);
                        continue;
                    }
                }
            }
            if self.classes.is_private(c) {
                return None;
            }
            if let Read::Node(_) | Read::Target(_) = read {
                match self.name(c)? {
                    ClassName::Canonical(h) => k.u64(0).u64(h),
                    ClassName::Member(m) => k.u64(1).str(&m),
                };
            }
            k.u64(self.classes.readable(self.pta, self.labels, c)?);
        }
        Some(k.finish().0)
    }
}
