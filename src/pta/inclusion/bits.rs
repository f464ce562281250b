//! Sparse bit sets of object numbers: sorted 64-bit blocks, so a union is one merge of two
//! sorted lists (the way inclusion solvers keep points-to sets; a hash set per node spent its
//! time hashing).

#[derive(Clone, Default, Debug, PartialEq, Eq, Hash)]
pub struct Bits {
    blocks: Vec<(u32, u64)>,
}

impl Bits {
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    pub fn contains(&self, x: u32) -> bool {
        self.blocks
            .binary_search_by_key(&(x / 64), |&(k, _)| k)
            .is_ok_and(|i| self.blocks[i].1 & (1u64 << (x % 64)) != 0)
    }

    /// Adds `x`; whether it was new.
    pub fn insert(&mut self, x: u32) -> bool {
        let (b, bit) = (x / 64, 1u64 << (x % 64));
        match self.blocks.binary_search_by_key(&b, |&(k, _)| k) {
            Ok(i) => {
                let new = self.blocks[i].1 & bit == 0;
                self.blocks[i].1 |= bit;
                new
            }
            Err(i) => {
                self.blocks.insert(i, (b, bit));
                true
            }
        }
    }

    /// Adds every element of `other`; returns those that were new.
    pub fn union_new(&mut self, other: &Bits) -> Bits {
        if other.blocks.len() * 16 < self.blocks.len() {
            return self.union_small(other);
        }
        // One pass finds the new bits without building anything (most unions of a solve add
        // nothing: a delta sent to a set that has it already), then they are merged in place.
        let mut added = Vec::new();
        let mut fresh = 0;
        let a = &self.blocks;
        let mut i = 0;
        for &(kb, vb) in &other.blocks {
            while i < a.len() && a[i].0 < kb {
                i += 1;
            }
            match a.get(i) {
                Some(&(ka, va)) if ka == kb => {
                    if vb & !va != 0 {
                        added.push((kb, vb & !va));
                    }
                    i += 1;
                }
                _ => {
                    added.push((kb, vb));
                    fresh += 1;
                }
            }
        }
        self.merge_new(&added, fresh);
        Bits { blocks: added }
    }

    /// Merges `added` (sorted blocks of bits this set lacks, `fresh` of them in blocks it does
    /// not have) into this set, from the back, in place.
    fn merge_new(&mut self, added: &[(u32, u64)], fresh: usize) {
        let old = self.blocks.len();
        self.blocks.resize(old + fresh, (0, 0));
        let (mut i, mut w) = (old, old + fresh);
        for &(kb, vb) in added.iter().rev() {
            while i > 0 && self.blocks[i - 1].0 > kb {
                w -= 1;
                i -= 1;
                self.blocks[w] = self.blocks[i];
            }
            w -= 1;
            if i > 0 && self.blocks[i - 1].0 == kb {
                i -= 1;
                self.blocks[w] = (kb, self.blocks[i].1 | vb);
            } else {
                self.blocks[w] = (kb, vb);
            }
        }
    }

    /// [`Bits::union_new`] of a set much smaller than this one: a search per block instead
    /// of a merge of both (a delta of a few objects into a set of thousands).
    fn union_small(&mut self, other: &Bits) -> Bits {
        let mut added = Vec::new();
        for &(k, v) in &other.blocks {
            match self.blocks.binary_search_by_key(&k, |&(b, _)| b) {
                Ok(i) => {
                    let new = v & !self.blocks[i].1;
                    if new != 0 {
                        self.blocks[i].1 |= v;
                        added.push((k, new));
                    }
                }
                Err(i) => {
                    self.blocks.insert(i, (k, v));
                    added.push((k, v));
                }
            }
        }
        Bits { blocks: added }
    }

    /// The elements not in `other`.
    pub fn minus(&self, other: &Bits) -> Bits {
        let blocks = self
            .blocks
            .iter()
            .filter_map(|&(k, v)| {
                let off = other
                    .blocks
                    .binary_search_by_key(&k, |&(b, _)| b)
                    .map_or(0, |i| other.blocks[i].1);
                let left = v & !off;
                (left != 0).then_some((k, left))
            })
            .collect();
        Bits { blocks }
    }

    /// Whether the two sets share an element.
    pub fn intersects(&self, other: &Bits) -> bool {
        let (a, b) = (&self.blocks, &other.blocks);
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            match a[i].0.cmp(&b[j].0) {
                std::cmp::Ordering::Less => i += 1,
                std::cmp::Ordering::Greater => j += 1,
                std::cmp::Ordering::Equal => {
                    if a[i].1 & b[j].1 != 0 {
                        return true;
                    }
                    i += 1;
                    j += 1;
                }
            }
        }
        false
    }

    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().flat_map(|&(k, mut v)| {
            std::iter::from_fn(move || {
                if v == 0 {
                    return None;
                }
                let t = v.trailing_zeros();
                v &= v - 1;
                Some(k * 64 + t)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_reports_exactly_the_new_elements() {
        let mut a = Bits::default();
        assert!(a.insert(3) && a.insert(200) && !a.insert(3));
        let mut b = Bits::default();
        for x in [3, 4, 64, 200, 1000] {
            b.insert(x);
        }
        let new = a.union_new(&b);
        assert_eq!(new.iter().collect::<Vec<_>>(), vec![4, 64, 1000]);
        assert_eq!(a.iter().collect::<Vec<_>>(), vec![3, 4, 64, 200, 1000]);
        assert!(a.union_new(&b).is_empty());
        let mut c = Bits::default();
        for x in [1, 65, 64 * 90, 64 * 95 + 3, 1001] {
            c.insert(x);
        }
        let new = a.union_new(&c);
        assert_eq!(
            new.iter().collect::<Vec<_>>(),
            vec![1, 65, 1001, 64 * 90, 64 * 95 + 3]
        );
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            vec![1, 3, 4, 64, 65, 200, 1000, 1001, 64 * 90, 64 * 95 + 3]
        );
        let mut big = Bits::default();
        for x in 0..64 {
            big.insert(x * 64);
        }
        let mut small = Bits::default();
        small.insert(65);
        small.insert(64 * 70);
        let new = big.union_new(&small);
        assert_eq!(new.iter().collect::<Vec<_>>(), vec![65, 64 * 70]);
        assert!(big.intersects(&small) && !Bits::default().intersects(&small));
        assert_eq!(big.iter().filter(|&x| x == 65 || x == 64).count(), 2);
    }

    #[test]
    fn unions_agree_with_a_plain_set() {
        use std::collections::BTreeSet;
        // A small linear congruential generator: sets of every density, merged both ways.
        let mut seed = 0x2545_f491_u64;
        let mut next = move |bound: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % bound
        };
        for _ in 0..500 {
            let (span, n, m) = (1 + next(5000), next(60), next(60));
            let mut a = Bits::default();
            let mut b = Bits::default();
            let mut sa = BTreeSet::new();
            let mut sb = BTreeSet::new();
            for _ in 0..n {
                let x = next(span) as u32;
                a.insert(x);
                sa.insert(x);
            }
            for _ in 0..m {
                let x = next(span) as u32;
                b.insert(x);
                sb.insert(x);
            }
            let new = a.union_new(&b);
            let want: Vec<u32> = sb.difference(&sa).copied().collect();
            assert_eq!(new.iter().collect::<Vec<_>>(), want);
            sa.extend(sb);
            assert_eq!(
                a.iter().collect::<Vec<_>>(),
                sa.iter().copied().collect::<Vec<_>>()
            );
        }
    }
}
