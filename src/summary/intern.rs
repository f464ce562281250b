//! Hash-consed paths and locksets for the summaries' tables.
//!
//! Every summary keeps a table of the distinct paths and relative locksets its accesses refer
//! to. Callers repeat most of their callees' paths and locksets (rebinding changes formals, not
//! globals or representatives), so per-summary copies made the tables three quarters of the
//! summaries' memory (Linux subset: 4.9 of 6.4 GiB). Interned, a table entry is a pointer to
//! one program-wide copy.
//!
//! The interners live for the whole process and never forget a value: the distinct paths and
//! locksets of a run are few next to the accesses referring to them.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hash, Hasher};
use std::ops::Deref;
use std::sync::{Arc, LazyLock, Mutex};

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::lockset::RelativeLockset;
use super::path::Path;

/// A shared, immutable value from its type's [`Interner`]. Compares, orders, hashes and
/// serialises as the value (so it can replace the value in a serde type without changing the
/// bytes); equal interned values are one allocation, so equality is a pointer check first.
pub struct Interned<T>(Arc<T>);

/// Types with a program-wide interner.
pub trait Internable: Hash + Eq + Send + Sync + Sized + 'static {
    fn interner() -> &'static Interner<Self>;
}

impl<T: Internable> Interned<T> {
    /// The value's program-wide copy; inside [`transient`], a copy of its own.
    pub fn new(value: T) -> Interned<T> {
        match SHARING.get() {
            true => T::interner().intern(value),
            false => Interned(Arc::new(value)),
        }
    }
}

thread_local! {
    /// Off inside [`transient`].
    static SHARING: std::cell::Cell<bool> = const { std::cell::Cell::new(true) };
}

/// Runs `f` with the values it makes interned each on its own, not in the program-wide
/// interners: for summaries in transit — the portable form the cache encodes, or decodes and
/// renames right away — whose paths name ids of another numbering. Interning them cost a third
/// of loading a summary, and kept them for the rest of the run.
pub fn transient<R>(f: impl FnOnce() -> R) -> R {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            SHARING.set(self.0);
        }
    }
    let _restore = Restore(SHARING.replace(false));
    f()
}

const SHARDS: usize = 64;

/// A concurrent hash-consing table: shards of sets, each behind its own lock.
pub struct Interner<T> {
    shards: Box<[Mutex<rustc_hash::FxHashSet<Arc<T>>>]>,
}

impl<T: Hash + Eq> Interner<T> {
    fn new() -> Self {
        Interner {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    pub fn intern(&self, value: T) -> Interned<T> {
        let hash = rustc_hash::FxBuildHasher.hash_one(&value);
        let shard = &self.shards[(hash >> 58) as usize % SHARDS];
        let mut set = shard.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(a) = set.get(&value) {
            return Interned(a.clone());
        }
        let a = Arc::new(value);
        set.insert(a.clone());
        Interned(a)
    }

    /// How many values are interned, and their heap bytes by `size` (plus the `Arc` headers).
    pub fn footprint(&self, size: impl Fn(&T) -> u64) -> (u64, u64) {
        let mut count = 0;
        let mut bytes = 0;
        for shard in self.shards.iter() {
            let set = shard.lock().unwrap_or_else(|e| e.into_inner());
            count += set.len() as u64;
            bytes += set
                .iter()
                .map(|a| size(a) + std::mem::size_of::<(usize, usize, T)>() as u64)
                .sum::<u64>();
        }
        (count, bytes)
    }
}

impl Internable for Path {
    fn interner() -> &'static Interner<Path> {
        static PATHS: LazyLock<Interner<Path>> = LazyLock::new(Interner::new);
        &PATHS
    }
}

impl Internable for RelativeLockset {
    fn interner() -> &'static Interner<RelativeLockset> {
        static LOCKSETS: LazyLock<Interner<RelativeLockset>> = LazyLock::new(Interner::new);
        &LOCKSETS
    }
}

impl<T> Deref for Interned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for Interned<T> {
    fn clone(&self) -> Self {
        Interned(self.0.clone())
    }
}

impl<T: PartialEq> PartialEq for Interned<T> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0) || *self.0 == *other.0
    }
}

impl<T: Eq> Eq for Interned<T> {}

impl<T: Ord> PartialOrd for Interned<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T: Ord> Ord for Interned<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        if Arc::ptr_eq(&self.0, &other.0) {
            return Ordering::Equal;
        }
        self.0.cmp(&other.0)
    }
}

impl<T: Hash> Hash for Interned<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.hash(state)
    }
}

impl<T: std::fmt::Debug> std::fmt::Debug for Interned<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl<T: Serialize> Serialize for Interned<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de, T: Internable + Deserialize<'de>> Deserialize<'de> for Interned<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Interned::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GlobalId;
    use crate::summary::path::Root;

    #[test]
    fn equal_values_share_one_allocation_and_keep_their_bytes() {
        let p = || Path::new(Root::Global(GlobalId(7)));
        let (a, b) = (Interned::new(p()), Interned::new(p()));
        assert!(Arc::ptr_eq(&a.0, &b.0));
        let q = Interned::new(Path::new(Root::Global(GlobalId(8))));
        assert_ne!(a, q);
        assert_eq!(a.cmp(&q), p().cmp(&q));
        let bytes = bincode::serialize(&a).unwrap();
        assert_eq!(bytes, bincode::serialize(&p()).unwrap());
        let back: Interned<Path> = bincode::deserialize(&bytes).unwrap();
        assert!(
            Arc::ptr_eq(&back.0, &a.0),
            "deserialised values are interned too"
        );
        let own: Interned<Path> = transient(|| bincode::deserialize(&bytes).unwrap());
        assert!(!Arc::ptr_eq(&own.0, &a.0), "in transit, a copy of its own");
        assert_eq!(own, a, "equal all the same");
        assert!(
            Arc::ptr_eq(&Interned::new(p()).0, &a.0),
            "shared again after `transient`"
        );
    }
}
