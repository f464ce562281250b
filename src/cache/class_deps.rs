//! What an SCC's summaries depend on of the points-to partition: the classes its analysis
//! read ([`crate::pta::reads`]), by name, with a digest of what can be read of each.
//!
//! The summaries' context used to hold the fingerprint of every class, so any new pointer flow
//! between objects — an edit that merges two classes anywhere — re-analysed the whole program.
//! Now an SCC is keyed without the partition, and its entry keeps the classes its analysis
//! read; a run reuses it when each of those classes is still there under its name and reads
//! the same: the same members, the same class pointed to (by name), the same escape and size
//! ([`ClassTable::digest`]). Classes private to one function are left out: their members are
//! locals and return values no class points to, fixed by the bodies in the key; what they
//! point to is a class of its own, read and recorded when the analysis follows the pointer.
//! While the partition's fingerprint is the one the classes were recorded under, nothing is
//! checked.

use serde::{Deserialize, Serialize};

use super::classes::ClassTable;
use super::labels::Labels;
use super::KeyBuilder;
use crate::link::Program;
use crate::pta::PointsTo;

/// A class across runs: a canonical class by the hash of its name, a trivial one (one global
/// or function no class points to) by [`ClassTable::private_name`].
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum ClassName {
    Canonical(u64),
    Member(String),
}

/// The classes an SCC's summaries read (see the module documentation).
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, Debug)]
pub struct ClassDeps {
    /// The partition's fingerprint when they were read ([`ClassTable::fingerprint`]).
    fingerprint: [u8; 32],
    /// Sorted; `None` when a class read had no name (only the same partition will do).
    names: Option<Vec<ClassName>>,
    /// The classes' digests, in the order of `names`, hashed.
    digest: [u8; 32],
}

/// What [`ClassDeps`] are made and checked with.
pub struct ClassContext<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub labels: &'a Labels,
    pub classes: &'a ClassTable,
}

impl ClassContext<'_> {
    /// The dependencies on `read` (class representatives, any order, repeats allowed) and on
    /// the classes of `more`'s names (those of an earlier run, still the same).
    pub fn deps(&self, read: impl IntoIterator<Item = u32>, more: &[ClassName]) -> ClassDeps {
        let mut names: Option<Vec<ClassName>> = Some(more.to_vec());
        for c in read {
            let c = self.pta.class(c);
            if self.classes.is_private(c) {
                continue;
            }
            match self.name(c) {
                Some(n) => {
                    if let Some(names) = &mut names {
                        names.push(n);
                    }
                }
                None => names = None,
            }
        }
        if let Some(names) = &mut names {
            names.sort_unstable();
            names.dedup();
        }
        let digest = names
            .as_deref()
            .and_then(|n| self.digest(n))
            .unwrap_or([0; 32]);
        ClassDeps {
            fingerprint: self.classes.fingerprint.0,
            names,
            digest,
        }
    }

    /// Whether every class `deps` names reads the same in this run's partition.
    pub fn still_hold(&self, deps: &ClassDeps) -> bool {
        if deps.fingerprint == self.classes.fingerprint.0 {
            return true;
        }
        let Some(names) = &deps.names else {
            return false;
        };
        self.digest(names) == Some(deps.digest)
    }

    /// `deps` (which still hold) as recorded under this run's partition.
    pub fn refreshed(&self, deps: &ClassDeps) -> ClassDeps {
        ClassDeps {
            fingerprint: self.classes.fingerprint.0,
            ..deps.clone()
        }
    }

    /// The names of the classes `deps` names (none if it could not name them all).
    pub fn names<'d>(&self, deps: &'d ClassDeps) -> &'d [ClassName] {
        deps.names.as_deref().unwrap_or(&[])
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

    /// The classes' digests in this run, hashed; `None` if one of them is not there.
    fn digest(&self, names: &[ClassName]) -> Option<[u8; 32]> {
        let mut k = KeyBuilder::new("class deps");
        k.u64(names.len() as u64);
        for name in names {
            let class = match name {
                ClassName::Canonical(h) => self.classes.named(*h)?,
                ClassName::Member(m) => {
                    self.classes
                        .private_class(self.program, self.pta, self.labels, m)?
                }
            };
            k.u64(self.classes.digest(self.pta, self.labels, class)?);
        }
        Some(k.finish().0)
    }
}
