//! Program-wide interned names, shared by all units lowered in parallel.

use lasso::{Key, ThreadedRodeo};
use rustc_hash::FxBuildHasher;

use super::Name;

// SAFETY: `into_usize` and `try_from_usize` round-trip exactly, which is all `Key` requires.
unsafe impl Key for Name {
    fn into_usize(self) -> usize {
        self.0 as usize
    }
    fn try_from_usize(int: usize) -> Option<Self> {
        u32::try_from(int).ok().map(Name)
    }
}

/// A concurrent string interner: units lowered on different threads agree on every [`Name`].
///
/// Hashed with FxHash, not SipHash: names come from the program, and every `get` hashes the
/// id (resolving is a hash-map lookup in `ThreadedRodeo`), millions of times per run.
pub struct Names {
    rodeo: ThreadedRodeo<Name, FxBuildHasher>,
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl Names {
    pub fn new() -> Self {
        Names {
            rodeo: ThreadedRodeo::with_hasher(FxBuildHasher),
        }
    }
    pub fn intern(&self, s: &str) -> Name {
        self.rodeo.get_or_intern(s)
    }
    pub fn get(&self, n: Name) -> &str {
        self.rodeo.resolve(&n)
    }
    pub fn len(&self) -> usize {
        self.rodeo.len()
    }
    pub fn is_empty(&self) -> bool {
        self.rodeo.is_empty()
    }
}
