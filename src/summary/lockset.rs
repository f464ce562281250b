//! Relative locksets (RELAY §3.2, Figures 3–5): the change in held locks since function entry.
//! `plus` (L+) holds the locks that must have been acquired on every path, `minus` (L−) those that
//! may have been released on some path. Join is `(∩, ∪)`.
//!
//! Unlike RELAY, an unlock of a lock the function took itself, while its caller's hold (if any)
//! was untouched, gives back only that acquisition: the lock goes back to "held iff the caller
//! held it", not into L−. That is what a recursive mutex does (SQLite's `db->mutex`, entered
//! again by a nested API call), and for any other lock it changes nothing: a caller holding a
//! non-recursive lock cannot reach the function's unlock, because the function's own lock of it
//! would have deadlocked (or, for a trylock, failed). `rehold` ⊆ L+ marks the locks that were
//! taken after the caller's hold may have been released (unlock, then lock): their unlock
//! releases for good (L−). So per lock: untouched; acquired over the caller's hold (L+);
//! released (L−); released and acquired again (L+ and `rehold`).
//!
//! L− is bounded: once it would hold more than [`MAX_RELEASED`] locks it becomes ⊤ ("any lock may
//! have been released", `minus_top`). In the kernel's big recursive SCC, locks released anywhere
//! below a function flow into its L−, which grew to thousands of paths, each one joined and
//! searched at every call. ⊤ only adds warnings: a caller's locks are no longer held after the
//! call.

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

/// The most locks L− lists before it becomes ⊤.
pub const MAX_RELEASED: usize = 64;

/// `(L+, L−)`. Releasing a lock releases it in every mode, so L− holds paths.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize)]
pub struct RelativeLockset {
    pub plus: SortedSet<Lock>,
    /// The paths of L+ whose caller's hold may have been released before they were taken
    /// again (⊆ L+): unlocking them releases for good.
    #[serde(default)]
    pub rehold: SortedSet<Path>,
    /// Empty when `minus_top`.
    pub minus: SortedSet<Path>,
    /// L− is ⊤: every lock may have been released.
    pub minus_top: bool,
}

impl RelativeLockset {
    /// Frees spare capacity (for locksets kept in a summary's tables).
    pub fn shrink_to_fit(&mut self) {
        self.plus.shrink_to_fit(|l| l.path.shrink_to_fit());
        self.rehold.shrink_to_fit(Path::shrink_to_fit);
        self.minus.shrink_to_fit(Path::shrink_to_fit);
    }

    /// L− is ⊤ if it grew past [`MAX_RELEASED`].
    fn bound_minus(&mut self) {
        if self.minus.as_slice().len() > MAX_RELEASED {
            self.set_minus_top();
        }
    }

    fn set_minus_top(&mut self) {
        self.minus_top = true;
        self.minus = SortedSet::default();
    }

    /// `(∩, ∪)`, and `rehold` the union kept inside L+; returns whether `self` changed.
    pub fn join(&mut self, other: &RelativeLockset) -> bool {
        let plus = self.plus.intersect_with(&other.plus);
        let rehold = self.rehold.union_with(&other.rehold) | self.keep_rehold_in_plus();
        let minus = match (self.minus_top, other.minus_top) {
            (true, _) => false,
            (false, true) => {
                self.set_minus_top();
                true
            }
            (false, false) => {
                let changed = self.minus.union_with(&other.minus);
                self.bound_minus();
                changed
            }
        };
        plus || rehold || minus
    }

    /// Drops the `rehold` paths no longer in L+; returns whether any was dropped.
    fn keep_rehold_in_plus(&mut self) -> bool {
        let before = self.rehold.as_slice().len();
        let plus = &self.plus;
        self.rehold.retain(|p| holds_path(plus, p));
        before != self.rehold.as_slice().len()
    }

    /// `self ⊑ other`: other has fewer must-acquired and more may-released locks, and more of
    /// its acquired ones marked as taken after a release.
    pub fn leq(&self, other: &RelativeLockset) -> bool {
        other.plus.is_subset(&self.plus)
            && (other.minus_top || (!self.minus_top && self.minus.is_subset(&other.minus)))
            && self
                .rehold
                .iter()
                .all(|p| !other.holds(p) || other.rehold.contains(p))
    }

    /// A lock operation: `lockUpdate(self, ({lock}, {}))`. A lock whose caller's hold was
    /// released is taken again (`rehold`).
    pub fn acquire(&mut self, lock: Lock) {
        if self.minus_top || self.minus.remove(&lock.path) {
            self.rehold.insert(lock.path.clone());
        }
        self.plus.insert(lock);
    }

    /// An unlock operation: gives back the function's own acquisition if it was taken over the
    /// caller's untouched hold (see the module comment), else releases for good (L−).
    pub fn release(&mut self, path: &Path) {
        let own = self.holds(path) && !self.rehold.contains(path);
        self.plus.retain(|l| l.path != *path);
        self.rehold.remove(path);
        if !own && !self.minus_top {
            self.minus.insert(path.clone());
            self.bound_minus();
        }
    }

    /// An unlock of a lock nothing names (a mutex pointer of unknown origin): any lock held may
    /// be the one released.
    pub fn release_any(&mut self) {
        self.plus = SortedSet::default();
        self.rehold = SortedSet::default();
        self.set_minus_top();
    }

    /// Whether `path` is must-acquired in some mode.
    fn holds(&self, path: &Path) -> bool {
        holds_path(&self.plus, path)
    }

    /// RELAY's lockUpdate (Figure 3): applies the effect `callee` (a callee's relative lockset,
    /// already rebound to the caller) after `self`:
    /// `((L+ ∪ L'+) − L'−, (L− ∪ L'−) − L'+)`; `rehold` as `(H − L'−) ∪ H' ∪ (L'+ ∩ L−)` (a lock
    /// the callee takes after the caller released it, or that the callee released and took
    /// again, is taken after a release).
    pub fn update(&self, callee: &RelativeLockset) -> RelativeLockset {
        let mut out = self.clone();
        if callee.minus_top {
            out.plus = SortedSet::default();
            out.rehold = SortedSet::default();
            out.set_minus_top();
        } else if !callee.minus.is_empty() {
            out.plus.retain(|l| !callee.minus.contains(&l.path));
            out.rehold.retain(|p| !callee.minus.contains(p));
            if !out.minus_top {
                out.minus.union_with(&callee.minus);
                out.bound_minus();
            }
        }
        if !callee.plus.is_empty() {
            for l in callee.plus.iter() {
                if self.minus_top || self.minus.contains(&l.path) {
                    out.rehold.insert(l.path.clone());
                }
            }
            out.minus.retain(|p| !callee.holds(p));
            out.plus.union_with(&callee.plus);
        }
        out.rehold.union_with(&callee.rehold);
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
        // A released lock the caller cannot name may be any lock: ⊤.
        let mut unnamed = false;
        let minus = self
            .minus
            .iter()
            .flat_map(|p| {
                let ps = map(p);
                unnamed |= ps.is_empty();
                ps
            })
            .collect();
        let mut out = RelativeLockset {
            plus,
            rehold: self
                .rehold
                .iter()
                .filter_map(|p| match map(p).as_slice() {
                    [q] => Some(q.clone()),
                    _ => None,
                })
                .collect(),
            minus,
            minus_top: self.minus_top,
        };
        out.keep_rehold_in_plus();
        if unnamed {
            out.set_minus_top();
        }
        out.bound_minus();
        out
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

/// Whether `path` is in `plus` in some mode (`plus` is sorted by (path, mode): a search by
/// path finds any mode).
fn holds_path(plus: &SortedSet<Lock>, path: &Path) -> bool {
    plus.as_slice()
        .binary_search_by(|l| l.path.cmp(path))
        .is_ok()
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
            rehold: SortedSet::default(),
            minus: minus.iter().map(|&i| p(i)).collect(),
            minus_top: false,
        }
    }

    fn top(plus: &[u32]) -> RelativeLockset {
        RelativeLockset {
            minus_top: true,
            ..ls(plus, &[])
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
            top(&[]),
            top(&[1]),
            reheld(ls(&[1], &[]), &[1]),
            reheld(ls(&[1, 2], &[3]), &[2]),
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
        // A callee that acquires what the caller released: ({}, {1}) · ({1}, {}) = ({1}, {}),
        // taken after a release.
        assert_eq!(
            ls(&[], &[1]).update(&ls(&[1], &[])),
            reheld(ls(&[1], &[]), &[1])
        );
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
        a.release(&p(3));
        assert_eq!(a, ls(&[2], &[1]).update(&ls(&[1], &[3])));
    }

    fn reheld(mut l: RelativeLockset, paths: &[u32]) -> RelativeLockset {
        l.rehold = paths.iter().map(|&i| p(i)).collect();
        l
    }

    #[test]
    fn a_lock_taken_and_given_back_leaves_the_callers_hold() {
        // lock(m); unlock(m): nothing released, so a caller's (recursive) hold survives.
        let mut f = ls(&[], &[]);
        f.acquire(x(1));
        f.release(&p(1));
        assert_eq!(f, ls(&[], &[]));
        assert_eq!(ls(&[1], &[]).update(&f), ls(&[1], &[]));
        // unlock(m); lock(m): held again, whether or not the caller held it.
        let mut g = ls(&[], &[]);
        g.release(&p(1));
        g.acquire(x(1));
        assert_eq!(g, reheld(ls(&[1], &[]), &[1]));
        assert_eq!(ls(&[], &[]).update(&g), g);
        // The join with the untouched path is "held iff the caller held it" (a loop that cycles
        // the lock): a caller's hold survives the function.
        let mut j = g.clone();
        j.join(&ls(&[], &[]));
        assert_eq!(j, ls(&[], &[]));
        // … then unlock: the caller's hold went with the first unlock.
        g.release(&p(1));
        assert_eq!(g, ls(&[], &[1]));
        assert_eq!(ls(&[1], &[]).update(&g), ls(&[], &[1]));
        // A callee that releases and takes again, then the caller unlocks: released.
        let mut h = ls(&[1], &[]).update(&reheld(ls(&[1], &[]), &[1]));
        assert_eq!(h, reheld(ls(&[1], &[]), &[1]));
        h.release(&p(1));
        assert_eq!(h, ls(&[], &[1]));
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

    #[test]
    fn released_locks_past_the_bound_become_top() {
        let mut l = ls(&[1000], &[]);
        for i in 0..MAX_RELEASED as u32 {
            l.release(&p(i));
        }
        assert!(!l.minus_top);
        l.release(&p(MAX_RELEASED as u32));
        assert!(l.minus_top && l.minus.is_empty(), "{l:?}");
        assert_eq!(
            l.plus,
            ls(&[1000], &[]).plus,
            "releasing others keeps held locks"
        );
        // A callee whose L− is ⊤ releases whatever the caller held; its own L+ survives.
        let after = ls(&[1, 2], &[3]).update(&top(&[4]));
        assert_eq!(after, top(&[4]));
        // ⊤ absorbs in joins, and a join that grows L− past the bound is ⊤.
        assert_eq!(joined(&ls(&[1], &[2]), &top(&[1])), top(&[1]));
        let many: Vec<u32> = (0..=MAX_RELEASED as u32).collect();
        let (a, b) = many.split_at(many.len() / 2);
        assert_eq!(joined(&ls(&[], a), &ls(&[], b)), top(&[]));
    }
}
