//! A set kept as a sorted, deduplicated vector: what relative locksets are made of.
//!
//! Locksets are built, joined, hashed and compared for every access a caller inherits from a
//! callee (the kernel's recursive SCCs spent most of their time there); a contiguous vector
//! hashes and compares several times faster than a `BTreeSet` and clones with one allocation.
//! It orders and serialises exactly like the `BTreeSet` it replaces (a sequence in
//! ascending order), so stored summaries and canonical orders are unchanged.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct SortedSet<T>(Vec<T>);

impl<T> Default for SortedSet<T> {
    fn default() -> Self {
        SortedSet(Vec::new())
    }
}

impl<T: Ord> SortedSet<T> {
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.0.iter()
    }

    pub fn as_slice(&self) -> &[T] {
        &self.0
    }

    /// Elements allocated for (memory statistics).
    pub fn capacity(&self) -> usize {
        self.0.capacity()
    }

    /// Frees spare capacity, after `each` did the same inside an element (it must not change
    /// the element's order).
    pub fn shrink_to_fit(&mut self, each: impl FnMut(&mut T)) {
        self.0.iter_mut().for_each(each);
        self.0.shrink_to_fit();
    }

    pub fn contains(&self, x: &T) -> bool {
        self.0.binary_search(x).is_ok()
    }

    /// Returns whether `x` was new.
    pub fn insert(&mut self, x: T) -> bool {
        match self.0.binary_search(&x) {
            Ok(_) => false,
            Err(i) => {
                self.0.insert(i, x);
                true
            }
        }
    }

    /// Returns whether `x` was present.
    pub fn remove(&mut self, x: &T) -> bool {
        match self.0.binary_search(x) {
            Ok(i) => {
                self.0.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    pub fn retain(&mut self, f: impl FnMut(&T) -> bool) {
        self.0.retain(f);
    }

    pub fn is_subset(&self, other: &SortedSet<T>) -> bool {
        let mut rest = other.0.as_slice();
        self.0.iter().all(|x| match rest.binary_search(x) {
            Ok(i) => {
                rest = &rest[i + 1..];
                true
            }
            Err(_) => false,
        })
    }

    /// `self ∩= other`; returns whether `self` changed.
    pub fn intersect_with(&mut self, other: &SortedSet<T>) -> bool {
        let before = self.0.len();
        let mut rest = other.0.as_slice();
        self.0.retain(|x| match rest.binary_search(x) {
            Ok(i) => {
                rest = &rest[i + 1..];
                true
            }
            Err(i) => {
                rest = &rest[i..];
                false
            }
        });
        before != self.0.len()
    }
}

impl<T: Ord + Clone> SortedSet<T> {
    /// `self ∪= other` by one merge; returns whether `self` changed.
    pub fn union_with(&mut self, other: &SortedSet<T>) -> bool {
        if other.0.is_empty() || other.is_subset(self) {
            return false;
        }
        let mut merged = Vec::with_capacity(self.0.len() + other.0.len());
        let (mut a, mut b) = (
            std::mem::take(&mut self.0).into_iter().peekable(),
            other.0.iter().peekable(),
        );
        loop {
            match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => match x.cmp(y) {
                    std::cmp::Ordering::Less => merged.extend(a.next()),
                    std::cmp::Ordering::Greater => merged.extend(b.next().cloned()),
                    std::cmp::Ordering::Equal => {
                        merged.extend(a.next());
                        b.next();
                    }
                },
                (Some(_), None) => merged.extend(a.by_ref()),
                (None, Some(_)) => merged.extend(b.by_ref().cloned()),
                (None, None) => break,
            }
        }
        self.0 = merged;
        true
    }
}

impl<T: Ord> FromIterator<T> for SortedSet<T> {
    fn from_iter<I: IntoIterator<Item = T>>(iter: I) -> Self {
        let mut v: Vec<T> = iter.into_iter().collect();
        v.sort();
        v.dedup();
        SortedSet(v)
    }
}

impl<'a, T> IntoIterator for &'a SortedSet<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T: Serialize> Serialize for SortedSet<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

/// Any sequence is accepted and put in order (a corrupt or hand-written entry cannot break the
/// invariant).
impl<'de, T: Deserialize<'de> + Ord> Deserialize<'de> for SortedSet<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Vec::<T>::deserialize(d)?.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn set(v: &[u32]) -> SortedSet<u32> {
        v.iter().copied().collect()
    }

    /// Every operation agrees with `BTreeSet` on all pairs of subsets of {0..5}.
    #[test]
    fn agrees_with_btreeset() {
        let subsets: Vec<Vec<u32>> = (0u32..32)
            .map(|m| (0..5).filter(|i| m & (1 << i) != 0).collect())
            .collect();
        for a in &subsets {
            for b in &subsets {
                let (ba, bb): (BTreeSet<u32>, BTreeSet<u32>) =
                    (a.iter().copied().collect(), b.iter().copied().collect());
                let mut i = set(a);
                let changed = i.intersect_with(&set(b));
                let want: Vec<u32> = ba.intersection(&bb).copied().collect();
                assert_eq!(i.as_slice(), want.as_slice());
                assert_eq!(changed, want.len() != a.len());
                let mut u = set(a);
                let changed = u.union_with(&set(b));
                let want: Vec<u32> = ba.union(&bb).copied().collect();
                assert_eq!(u.as_slice(), want.as_slice());
                assert_eq!(changed, want.len() != a.len());
                assert_eq!(set(a).is_subset(&set(b)), ba.is_subset(&bb));
                assert_eq!(set(a).cmp(&set(b)), ba.cmp(&bb), "same order as BTreeSet");
            }
        }
        let mut s = set(&[3, 1]);
        assert!(s.insert(2) && !s.insert(2));
        assert!(s.remove(&1) && !s.remove(&1));
        assert_eq!(s.as_slice(), &[2, 3]);
    }

    #[test]
    fn serialises_like_btreeset_and_sorts_on_load() {
        let b: BTreeSet<u32> = [5, 1, 3].into_iter().collect();
        let s: SortedSet<u32> = [5, 1, 3].into_iter().collect();
        assert_eq!(
            bincode::serialize(&b).unwrap(),
            bincode::serialize(&s).unwrap()
        );
        let unsorted = bincode::serialize(&vec![5u32, 1, 5, 3]).unwrap();
        let loaded: SortedSet<u32> = bincode::deserialize(&unsorted).unwrap();
        assert_eq!(loaded, s);
    }
}
