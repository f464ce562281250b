//! Relative locksets (RELAY §3.2, Figures 3–5): the change in held locks since function entry.
//! `plus` (L+) holds the locks that must have been acquired on every path, `minus` (L−) those that
//! may have been released on some path. Join is `(∩, ∪)`.

use serde::{Deserialize, Serialize};

use super::path::Path;
use super::sorted_set::SortedSet;
pub use crate::models::LockMode;

/// A lock held in some mode.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub struct Lock {
    pub path: Path,
    pub mode: LockMode,
}

/// `(L+, L−)`. Releasing a lock releases it in every mode, so L− holds paths.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize)]
pub struct RelativeLockset {
    pub plus: SortedSet<Lock>,
    pub minus: SortedSet<Path>,
}

impl RelativeLockset {
    /// Frees spare capacity (for locksets kept in a summary's tables).
    pub fn shrink_to_fit(&mut self) {
        self.plus.shrink_to_fit(|l| l.path.shrink_to_fit());
        self.minus.shrink_to_fit(Path::shrink_to_fit);
    }

    /// `(∩, ∪)`; returns whether `self` changed.
    pub fn join(&mut self, other: &RelativeLockset) -> bool {
        let plus = self.plus.intersect_with(&other.plus);
        let minus = self.minus.union_with(&other.minus);
        plus || minus
    }

    /// `self ⊑ other`: other has fewer must-acquired and more may-released locks.
    pub fn leq(&self, other: &RelativeLockset) -> bool {
        other.plus.is_subset(&self.plus) && self.minus.is_subset(&other.minus)
    }

    /// A lock operation: `lockUpdate(self, ({lock}, {}))`.
    pub fn acquire(&mut self, lock: Lock) {
        self.minus.remove(&lock.path);
        self.plus.insert(lock);
    }

    /// An unlock operation: `lockUpdate(self, ({}, {path}))`.
    pub fn release(&mut self, path: &Path) {
        self.plus.retain(|l| l.path != *path);
        self.minus.insert(path.clone());
    }

    /// Whether `path` is must-acquired in some mode.
    fn holds(&self, path: &Path) -> bool {
        // `plus` is sorted by (path, mode): a search by path finds any mode.
        self.plus
            .as_slice()
            .binary_search_by(|l| l.path.cmp(path))
            .is_ok()
    }

    /// RELAY's lockUpdate (Figure 3): applies the effect `callee` (a callee's relative lockset,
    /// already rebound to the caller) after `self`:
    /// `((L+ ∪ L'+) − L'−, (L− ∪ L'−) − L'+)`.
    pub fn update(&self, callee: &RelativeLockset) -> RelativeLockset {
        let mut out = self.clone();
        if !callee.minus.is_empty() {
            out.plus.retain(|l| !callee.minus.contains(&l.path));
            out.minus.union_with(&callee.minus);
        }
        if !callee.plus.is_empty() {
            out.minus.retain(|p| !callee.holds(p));
            out.plus.union_with(&callee.plus);
        }
        out
    }

    /// RELAY's rebind (Figure 5) for locksets: every lock path is mapped to the paths it denotes
    /// in the caller. A lock in L+ survives only if it maps to exactly one path (a *must*); a
    /// lock in L− is released at every path it may denote.
    pub fn rebind<'a>(&'a self, mut map: impl FnMut(&'a Path) -> Vec<Path>) -> RelativeLockset {
        let plus = self
            .plus
            .iter()
            .filter_map(|l| {
                let mut ps = map(&l.path);
                (ps.len() == 1).then(|| Lock {
                    path: ps.pop().expect("one path"),
                    mode: l.mode,
                })
            })
            .collect();
        let minus = self.minus.iter().flat_map(&mut map).collect();
        RelativeLockset { plus, minus }
    }

    /// Whether two absolute locksets (L+ of accesses from thread entries) exclude each other:
    /// they share a lock that at least one side holds exclusively.
    pub fn excludes(a: &SortedSet<Lock>, b: &SortedSet<Lock>) -> bool {
        a.iter().any(|la| {
            b.iter().any(|lb| {
                la.path == lb.path
                    && (la.mode == LockMode::Exclusive || lb.mode == LockMode::Exclusive)
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GlobalId;
    use crate::summary::path::Root;

    fn p(i: u32) -> Path {
        Path::new(Root::Global(GlobalId(i)))
    }
    fn x(i: u32) -> Lock {
        Lock {
            path: p(i),
            mode: LockMode::Exclusive,
        }
    }
    fn ls(plus: &[u32], minus: &[u32]) -> RelativeLockset {
        RelativeLockset {
            plus: plus.iter().map(|&i| x(i)).collect(),
            minus: minus.iter().map(|&i| p(i)).collect(),
        }
    }

    fn samples() -> Vec<RelativeLockset> {
        vec![
            ls(&[], &[]),
            ls(&[1], &[]),
            ls(&[1, 2], &[]),
            ls(&[], &[1]),
            ls(&[2], &[1]),
            ls(&[1, 3], &[2, 4]),
        ]
    }

    fn joined(a: &RelativeLockset, b: &RelativeLockset) -> RelativeLockset {
        let mut j = a.clone();
        j.join(b);
        j
    }

    #[test]
    fn join_laws() {
        for a in samples() {
            assert_eq!(joined(&a, &a), a, "idempotent");
            let mut same = a.clone();
            assert!(!same.join(&a), "no change reported");
            for b in samples() {
                let j = joined(&a, &b);
                assert_eq!(j, joined(&b, &a), "commutative");
                assert!(a.leq(&j) && b.leq(&j), "upper bound");
                for c in samples() {
                    assert_eq!(joined(&j, &c), joined(&a, &joined(&b, &c)), "associative");
                    // Least: any upper bound of a and b is above the join.
                    if a.leq(&c) && b.leq(&c) {
                        assert!(j.leq(&c));
                    }
                }
            }
        }
    }

    #[test]
    fn lock_update_follows_figure_3() {
        // airo_thread: ({l}, {}) then airo_read_stats' rebound ({}, {l}) gives ({}, {l}).
        assert_eq!(ls(&[1], &[]).update(&ls(&[], &[1])), ls(&[], &[1]));
        // A callee that acquires what the caller released: ({}, {1}) · ({1}, {}) = ({1}, {}).
        assert_eq!(ls(&[], &[1]).update(&ls(&[1], &[])), ls(&[1], &[]));
        // Independent locks accumulate.
        assert_eq!(ls(&[1], &[2]).update(&ls(&[3], &[4])), ls(&[1, 3], &[2, 4]));
        // The empty effect is the identity; the identity is a left unit too.
        for a in samples() {
            assert_eq!(a.update(&ls(&[], &[])), a);
            assert_eq!(ls(&[], &[]).update(&a), a);
        }
        // acquire/release are updates with singleton effects.
        let mut a = ls(&[2], &[1]);
        a.acquire(x(1));
        assert_eq!(a, ls(&[2], &[1]).update(&ls(&[1], &[])));
        a.release(&p(2));
        assert_eq!(
            a,
            ls(&[1], &[]).update(&ls(&[], &[2])).update(&ls(&[], &[]))
        );
    }

    #[test]
    fn rebind_keeps_must_locks_and_all_may_releases() {
        let callee = ls(&[1, 2], &[3]);
        let r = callee.rebind(|q| {
            if *q == p(1) {
                vec![p(10)]
            } else if *q == p(2) {
                vec![p(20), p(21)]
            } else {
                vec![p(30), p(31)]
            }
        });
        assert_eq!(r.plus, [x(10)].into_iter().collect());
        assert_eq!(r.minus, [p(30), p(31)].into_iter().collect());
    }

    #[test]
    fn modes_exclude_unless_both_shared() {
        let s = |i| Lock {
            path: p(i),
            mode: LockMode::Shared,
        };
        let set = |l: Lock| [l].into_iter().collect::<SortedSet<_>>();
        assert!(RelativeLockset::excludes(&set(x(1)), &set(x(1))));
        assert!(RelativeLockset::excludes(&set(x(1)), &set(s(1))));
        assert!(!RelativeLockset::excludes(&set(s(1)), &set(s(1))));
        assert!(!RelativeLockset::excludes(&set(x(1)), &set(x(2))));
    }
}
