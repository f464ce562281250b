//! Program-wide interned names, shared by all units lowered in parallel.

use std::sync::{Arc, Mutex};

use dashmap::DashMap;
use rustc_hash::FxBuildHasher;

use super::Name;

/// A concurrent string interner: units lowered on different threads agree on every [`Name`].
///
/// Resolving a name is an index into an append-only vector, without a lock or a hash: the
/// analyses resolve names millions of times per run (printing bodies for cache keys, matching
/// entry families, naming points-to nodes). Interning looks the string up in a sharded map
/// first and takes a lock only to add a new one, so ids are dense and in order of addition.
pub struct Names {
    ids: DashMap<Arc<str>, Name, FxBuildHasher>,
    strings: boxcar::Vec<Arc<str>>,
    adding: Mutex<()>,
}

impl Default for Names {
    fn default() -> Self {
        Self::new()
    }
}

impl Names {
    pub fn new() -> Self {
        Names {
            ids: DashMap::with_hasher(FxBuildHasher),
            strings: boxcar::Vec::new(),
            adding: Mutex::new(()),
        }
    }

    pub fn intern(&self, s: &str) -> Name {
        if let Some(n) = self.ids.get(s) {
            return *n;
        }
        let _adding = self.adding.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = self.ids.get(s) {
            return *n;
        }
        let s: Arc<str> = s.into();
        // Pushes happen under the lock, so the index is the number of names before this one.
        let index = self.strings.push(s.clone());
        let name = Name(u32::try_from(index).expect("fewer than 2^32 names"));
        self.ids.insert(s, name);
        name
    }

    /// The string of a name this interner made.
    ///
    /// # Panics
    /// On a name of another interner beyond this one's end (a bug, like indexing a slice).
    pub fn get(&self, n: Name) -> &str {
        &self.strings[n.0 as usize]
    }

    pub fn len(&self) -> usize {
        self.strings.count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_dense_and_shared_across_threads() {
        let names = Names::new();
        let words: Vec<String> = (0..2000).map(|i| format!("w{}", i % 500)).collect();
        let ids: Vec<Vec<Name>> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4)
                .map(|_| s.spawn(|| words.iter().map(|w| names.intern(w)).collect()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(ids.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(names.len(), 500);
        for (w, &n) in words.iter().zip(&ids[0]) {
            assert_eq!(names.get(n), w);
            assert!((n.0 as usize) < 500);
        }
    }
}
