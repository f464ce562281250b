//! How the pair stage lays out a bucket's checks: rows (one group against the groups after
//! it), cut into chunks of about the same number of checks; and, with `--per-access`, which
//! groups of each bucket have no warning yet ([`Unreported`]), so that a row whose head has
//! its warning visits only the partners that have none.

use std::collections::BTreeMap;
use std::ops::Range;

use rayon::slice::ParallelSliceMut;

/// One bucket's groups arranged for pairing: those of one object class together (groups whose
/// object classes prove them apart are never paired: a bucket is one member of one record, over
/// every object of that record), and those in no known object, paired with every group.
///
/// The checks of one group of a bucket against the groups after it are a row: every unordered
/// pair of the bucket (a group with itself too) is in exactly one row. A row is named by the
/// position of its head in [`Arranged::order`].
pub(super) struct Arranged {
    /// The groups, placed ones first (class by class, in class order), then those in no known
    /// object.
    order: Vec<usize>,
    /// Where each class's groups start in `order`; the last element is the number of placed
    /// groups.
    starts: Vec<usize>,
}

impl Arranged {
    /// The groups `ids`, whose object classes `object` gives.
    pub fn new(ids: &[u32], object: impl Fn(usize) -> Option<u32>) -> Arranged {
        let mut by_object: BTreeMap<Option<u32>, Vec<usize>> = BTreeMap::new();
        for &g in ids {
            by_object
                .entry(object(g as usize))
                .or_default()
                .push(g as usize);
        }
        let anywhere = by_object.remove(&None).unwrap_or_default();
        let mut order = Vec::with_capacity(ids.len());
        let mut starts = vec![0];
        for class in by_object.into_values() {
            order.extend(class);
            starts.push(order.len());
        }
        order.extend(anywhere);
        Arranged { order, starts }
    }

    /// How many groups have an object class.
    fn placed_len(&self) -> usize {
        self.starts.last().copied().unwrap_or(0)
    }

    /// Where each object class's groups start, and the number of placed groups.
    pub fn starts(&self) -> &[usize] {
        &self.starts
    }

    pub fn rows(&self) -> usize {
        self.order.len()
    }

    /// The group at `position`.
    pub fn group(&self, position: usize) -> usize {
        self.order[position]
    }

    /// The positions of row `row`'s partners, in the order they are checked: the rest of its
    /// class; or, for a group in no known object, the rest of those and every placed group.
    pub fn partners(&self, row: usize) -> [Range<usize>; 2] {
        let placed = self.placed_len();
        if row < placed {
            let c = self.starts.partition_point(|&s| s <= row) - 1;
            [row..self.starts[c + 1], 0..0]
        } else {
            [row..self.order.len(), 0..placed]
        }
    }

    /// Calls `f` on the pairs of row `row`, head first.
    #[cfg(test)]
    pub fn for_each_in_row(&self, row: usize, mut f: impl FnMut(usize, usize)) {
        let head = self.order[row];
        for range in self.partners(row) {
            for &b in &self.order[range] {
                f(head, b);
            }
        }
    }

    /// The number of checks of each row, in order.
    fn row_costs(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.rows()).map(|row| self.partners(row).iter().map(Range::len).sum())
    }
}

/// Rows of one bucket paired by one task.
pub(super) struct Chunk {
    pub bucket: usize,
    pub rows: Range<usize>,
}

/// About how many checks one task makes: small enough that a giant bucket spreads over every
/// thread, large enough that tasks cost little to schedule and merge.
const CHECKS_PER_CHUNK: usize = 1 << 16;

/// The buckets' rows cut into chunks of about [`CHECKS_PER_CHUNK`] checks, in bucket and row
/// order; the cut depends on the buckets alone (not on the number of threads), so the merge
/// order and the report do not either.
pub(super) fn chunks(buckets: &[Arranged]) -> Vec<Chunk> {
    let mut out = Vec::new();
    for (bucket, arranged) in buckets.iter().enumerate() {
        let (mut start, mut checks) = (0, 0);
        for (row, cost) in arranged.row_costs().enumerate() {
            checks += cost;
            if checks >= CHECKS_PER_CHUNK {
                out.push(Chunk {
                    bucket,
                    rows: start..row + 1,
                });
                (start, checks) = (row + 1, 0);
            }
        }
        if start < arranged.rows() {
            out.push(Chunk {
                bucket,
                rows: start..arranged.rows(),
            });
        }
    }
    out
}

/// `--per-access`: per bucket, one bit per position whose group's access had no warning when
/// the batch of tasks started. Once most accesses of a big bucket have their warning, nearly
/// every check of its rows is one the pair stage skips (both accesses reported); visiting
/// them one by one was two thirds of the kernel's pair stage.
pub(super) struct Unreported {
    bits: Vec<Vec<u64>>,
    /// (access, bucket, position) of every group, sorted.
    at: Vec<(u32, u32, u32)>,
}

impl Unreported {
    /// Every group of `buckets` unreported; `access` gives a group's access number.
    pub fn new(buckets: &[Arranged], access: impl Fn(usize) -> u32) -> Unreported {
        let bits = buckets
            .iter()
            .map(|b| {
                let n = b.rows();
                let mut words = vec![u64::MAX; n.div_ceil(64)];
                if n % 64 != 0 {
                    if let Some(last) = words.last_mut() {
                        *last = (1 << (n % 64)) - 1;
                    }
                }
                words
            })
            .collect();
        let access = &access;
        let mut at: Vec<(u32, u32, u32)> = buckets
            .iter()
            .enumerate()
            .flat_map(|(b, arranged)| {
                arranged
                    .order
                    .iter()
                    .enumerate()
                    .map(move |(p, &g)| (access(g), b as u32, p as u32))
            })
            .collect();
        at.par_sort_unstable();
        Unreported { bits, at }
    }

    /// `access` has its warning: its groups are reported.
    pub fn remove(&mut self, access: u32) {
        let from = self.at.partition_point(|x| x.0 < access);
        for &(_, b, p) in self.at[from..].iter().take_while(|x| x.0 == access) {
            if let Some(w) = self.bits[b as usize].get_mut(p as usize / 64) {
                *w &= !(1 << (p % 64));
            }
        }
    }

    /// The first position in `range` of bucket `bucket` that is unreported.
    pub fn next(&self, bucket: usize, range: Range<usize>) -> Option<usize> {
        let words = &self.bits[bucket];
        let mut word = range.start / 64;
        // The bits below the start of the range, cleared.
        let mut bits = words.get(word)? & (u64::MAX << (range.start % 64));
        loop {
            if bits != 0 {
                let p = word * 64 + bits.trailing_zeros() as usize;
                return (p < range.end).then_some(p);
            }
            word += 1;
            if word * 64 >= range.end {
                return None;
            }
            bits = *words.get(word)?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustc_hash::FxHashMap;

    /// Every unordered pair of groups of one object class, or with a group in no known object,
    /// is checked exactly once over the chunks; no pair across two object classes is.
    #[test]
    fn chunks_check_each_candidate_pair_once() {
        // Groups 0..n; object classes: none for every third, else one of three.
        let n = 700;
        let object = |g: usize| (!g.is_multiple_of(3)).then_some((g % 7 % 3) as u32);
        let ids: Vec<u32> = (0..n as u32).rev().collect();
        let buckets = vec![
            Arranged::new(&ids, object),
            Arranged::new(&[], object),
            Arranged::new(&[5], object),
        ];
        let mut seen: FxHashMap<(usize, usize, usize), usize> = FxHashMap::default();
        let mut rows = vec![Vec::new(); buckets.len()];
        let cut = chunks(&buckets);
        assert!(cut.len() > 1, "the big bucket is cut");
        for chunk in &cut {
            rows[chunk.bucket].extend(chunk.rows.clone());
            for row in chunk.rows.clone() {
                buckets[chunk.bucket].for_each_in_row(row, |x, y| {
                    *seen.entry((chunk.bucket, x.min(y), x.max(y))).or_default() += 1;
                });
            }
        }
        for (b, r) in rows.iter().enumerate() {
            assert_eq!(*r, (0..buckets[b].rows()).collect::<Vec<_>>(), "bucket {b}");
        }
        let mut expected = 0;
        for x in 0..n {
            for y in x..n {
                let candidate = match (object(x), object(y)) {
                    (Some(p), Some(q)) => p == q,
                    _ => true,
                };
                if candidate {
                    expected += 1;
                    assert_eq!(seen.get(&(0, x, y)), Some(&1), "pair {x} {y}");
                }
            }
        }
        assert_eq!(seen.get(&(2, 5, 5)), Some(&1));
        assert_eq!(seen.len(), expected + 1);
        assert!(seen.values().all(|&k| k == 1));
    }

    /// The unreported positions of a range are found in order, exactly those of the accesses
    /// not removed, across word boundaries.
    #[test]
    fn unreported_positions_are_those_of_accesses_without_a_warning() {
        let ids: Vec<u32> = (0..200).collect();
        let buckets = vec![Arranged::new(&ids, |_| None), Arranged::new(&[7], |_| None)];
        // Groups g and g + 100 are one access.
        let access = |g: usize| (g % 100) as u32;
        let mut u = Unreported::new(&buckets, access);
        let removed = [0u32, 1, 63, 64, 65, 99];
        for a in removed {
            u.remove(a);
        }
        let unreported = |u: &Unreported, b: usize, range: Range<usize>| {
            let mut found = Vec::new();
            let mut from = range.start;
            while let Some(p) = u.next(b, from..range.end) {
                found.push(p);
                from = p + 1;
            }
            found
        };
        for range in [0..200, 0..1, 60..70, 130..170, 199..200, 150..150] {
            let expected: Vec<usize> = range
                .clone()
                .filter(|&p| !removed.contains(&access(buckets[0].group(p))))
                .collect();
            assert_eq!(unreported(&u, 0, range.clone()), expected, "{range:?}");
        }
        assert_eq!(unreported(&u, 1, 0..1), vec![0]);
        u.remove(7);
        assert_eq!(unreported(&u, 1, 0..1), Vec::<usize>::new());
    }
}
