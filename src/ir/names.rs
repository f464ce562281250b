//! Program-wide interned names, shared by all units lowered in parallel.

use lasso::{Key, ThreadedRodeo};

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
pub struct Names {
    rodeo: ThreadedRodeo<Name>,
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl Names {
    pub fn new() -> Self {
        Names {
            rodeo: ThreadedRodeo::new(),
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
