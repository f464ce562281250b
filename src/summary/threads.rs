//! Thread phases (beyond RELAY; the ordering analysis of the warnings issue): which threads a
//! function may have created and not yet joined, relative to its entry, like the relative
//! lockset. An access records the [`Phase`] it happens in, so the race stage can tell that
//! `main`'s accesses before its first `pthread_create`, or after it joined every thread it
//! created, do not race with those threads.
//!
//! Threads are named by their handle's lvalue (`t` of `pthread_create(&t, …)` and
//! `pthread_join(t, …)`); a thread whose handle has no name the caller understands is the
//! anonymous handle, which no join removes. A join of an array slot (`t[i]`) inside a loop is
//! taken to join every slot (the usual create-all / join-all loops); outside a loop it joins
//! nothing. That is the one unsound assumption here, and it is documented in README.md.

use crate::ir::FuncId;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::path::Path;
use super::sorted_set::SortedSet;

/// Where an access happens with respect to the threads its entry creates.
#[derive(
    Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Default, Serialize, Deserialize,
)]
pub enum Phase {
    /// No thread created yet on any path.
    #[default]
    Before,
    /// Threads were created, and every one of them has been joined on every path.
    Joined,
    /// Some created thread may still run.
    Threaded,
}

/// The threads created and joined since the function's entry.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct ThreadState {
    /// Some thread may have been created (on some path).
    pub spawned: bool,
    /// Handles of threads that may have been created and not joined (∪ at merges).
    pub live: BTreeSet<Path>,
    /// Handles that are joined on every path and not created since (∩ at merges): a callee
    /// that joins its caller's threads.
    pub joined: BTreeSet<Path>,
    /// The start routines of threads that may be live (∪ at merges): those created since the
    /// last point where every created thread was joined. A creation of a routine not in it
    /// has no earlier instance of that routine running beside it.
    #[serde(default)]
    pub live_starts: LiveStarts,
}

/// At most this many start routines are told apart in [`ThreadState::live_starts`]; past it,
/// every routine may be live (the kernel's big SCC creates threads of thousands of routines,
/// and a set that size, merged at every join point, made its fixpoint take hours).
pub const MAX_LIVE_STARTS: usize = 64;

/// The start routines of threads that may be live: a set, or ⊤ (any routine).
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default, Serialize, Deserialize)]
pub struct LiveStarts {
    /// Empty when `any`.
    set: SortedSet<crate::ir::FuncId>,
    any: bool,
}

impl LiveStarts {
    /// `self ∪= other`.
    fn union(&mut self, other: &LiveStarts) {
        if self.any {
            return;
        }
        if other.any {
            *self = LiveStarts::top();
            return;
        }
        self.set.union_with(&other.set);
        if self.set.len() > MAX_LIVE_STARTS {
            *self = LiveStarts::top();
        }
    }

    /// The set with every routine renamed by `m` (`None` if one cannot be).
    pub fn remap(&self, mut m: impl FnMut(FuncId) -> Option<FuncId>) -> Option<LiveStarts> {
        Some(LiveStarts {
            set: self.set.iter().map(|&f| m(f)).collect::<Option<_>>()?,
            any: self.any,
        })
    }

    fn top() -> LiveStarts {
        LiveStarts {
            set: SortedSet::default(),
            any: true,
        }
    }

    fn add(&mut self, starts: &[crate::ir::FuncId]) {
        let more = LiveStarts {
            set: starts.iter().copied().collect(),
            any: false,
        };
        self.union(&more);
    }

    fn clear(&mut self) {
        *self = LiveStarts::default();
    }

    fn contains(&self, f: &crate::ir::FuncId) -> bool {
        self.any || self.set.contains(f)
    }

    /// Changes only grow it: the size, ⊤ above every set.
    fn size(&self) -> usize {
        if self.any {
            usize::MAX
        } else {
            self.set.len()
        }
    }
}

impl ThreadState {
    /// The lattice join: (∨, ∪, ∩). Returns whether `self` changed.
    pub fn join(&mut self, other: &ThreadState) -> bool {
        let before = (
            self.spawned,
            self.live.len(),
            self.joined.len(),
            self.live_starts.size(),
        );
        self.spawned |= other.spawned;
        self.live.extend(other.live.iter().cloned());
        self.joined.retain(|p| other.joined.contains(p));
        self.live_starts.union(&other.live_starts);
        before
            != (
                self.spawned,
                self.live.len(),
                self.joined.len(),
                self.live_starts.size(),
            )
    }

    pub fn phase(&self) -> Phase {
        if !self.live.is_empty() {
            Phase::Threaded
        } else if self.spawned {
            Phase::Joined
        } else {
            Phase::Before
        }
    }

    /// A thread creation whose handle is `handle`, running one of `starts`.
    pub fn create(&mut self, handle: Path, starts: &[crate::ir::FuncId]) {
        self.spawned = true;
        self.joined.remove(&handle);
        self.live.insert(handle);
        self.live_starts.add(starts);
    }

    /// A join of the thread whose handle is `handle`.
    pub fn join_thread(&mut self, handle: Path) {
        self.live.remove(&handle);
        self.joined.insert(handle);
        if self.live.is_empty() {
            self.live_starts.clear();
        }
    }

    /// Whether an instance of one of `starts` created here may still run.
    pub fn may_run(&self, starts: &[crate::ir::FuncId]) -> bool {
        starts.iter().any(|f| self.live_starts.contains(f))
    }

    /// The state after calling a function whose (rebound) exit state is `callee`.
    pub fn update(&self, callee: &ThreadState) -> ThreadState {
        let mut out = self.clone();
        out.spawned |= callee.spawned;
        for h in &callee.joined {
            out.live.remove(h);
            out.joined.insert(h.clone());
        }
        if out.live.is_empty() {
            out.live_starts.clear();
        }
        for h in &callee.live {
            out.joined.remove(h);
            out.live.insert(h.clone());
        }
        out.live_starts.union(&callee.live_starts);
        out
    }

    /// The callee's exit state in the caller's terms: `map` rebinds a handle (formals →
    /// actuals). A live handle with no single name becomes `anonymous`; a joined one is dropped
    /// (must information needs one name).
    pub fn rebind(&self, map: impl Fn(&Path) -> Vec<Path>, anonymous: &Path) -> ThreadState {
        let mut out = ThreadState {
            spawned: self.spawned,
            live_starts: self.live_starts.clone(),
            ..Default::default()
        };
        for h in &self.live {
            let mut ps = map(h);
            if ps.is_empty() {
                ps.push(anonymous.clone());
            }
            out.live.extend(ps);
        }
        for h in &self.joined {
            if let [p] = map(h).as_slice() {
                out.joined.insert(p.clone());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::GlobalId;
    use crate::summary::path::Root;

    fn h(i: u32) -> Path {
        Path::new(Root::Global(GlobalId(i)))
    }

    #[test]
    fn phases_follow_create_and_join() {
        let mut s = ThreadState::default();
        assert_eq!(s.phase(), Phase::Before);
        s.create(h(1), &[]);
        assert_eq!(s.phase(), Phase::Threaded);
        s.join_thread(h(2));
        assert_eq!(s.phase(), Phase::Threaded);
        s.join_thread(h(1));
        assert_eq!(s.phase(), Phase::Joined);
    }

    #[test]
    fn join_is_may_live_must_joined() {
        let mut a = ThreadState::default();
        a.create(h(1), &[]);
        a.join_thread(h(1));
        let mut b = ThreadState::default();
        b.create(h(1), &[]);
        assert!(a.join(&b));
        assert_eq!(a.phase(), Phase::Threaded);
        assert!(a.joined.is_empty());
        assert!(!a.join(&b), "idempotent");
        let mut c = ThreadState::default();
        c.join(&ThreadState::default());
        assert_eq!(c.phase(), Phase::Before);
    }

    #[test]
    fn update_applies_callee_joins_then_creations() {
        let mut caller = ThreadState::default();
        caller.create(h(1), &[]);
        let mut joiner = ThreadState::default();
        joiner.join_thread(h(1));
        let after = caller.update(&joiner);
        assert_eq!(after.phase(), Phase::Joined);
        let mut spawner = ThreadState::default();
        spawner.create(h(3), &[]);
        assert_eq!(after.update(&spawner).phase(), Phase::Threaded);
    }

    #[test]
    fn rebind_names_unknown_live_handles_anonymous() {
        let mut s = ThreadState::default();
        s.create(h(1), &[]);
        s.join_thread(h(2));
        let anon = h(99);
        let r = s.rebind(|_| Vec::new(), &anon);
        assert!(r.live.contains(&anon));
        assert!(r.joined.is_empty());
        let r = s.rebind(|p| vec![p.clone()], &anon);
        assert_eq!(r, s);
    }

    #[test]
    fn past_the_bound_every_start_routine_may_run() {
        use crate::ir::FuncId;
        let mut t = ThreadState::default();
        let few: Vec<FuncId> = (0..MAX_LIVE_STARTS as u32).map(FuncId).collect();
        t.create(h(1), &few);
        assert!(t.may_run(&[FuncId(3)]));
        assert!(!t.may_run(&[FuncId(1000)]));
        let mut other = ThreadState::default();
        other.create(h(2), &[FuncId(999)]);
        assert!(t.join(&other), "one more routine changes the state");
        assert!(t.may_run(&[FuncId(1000)]), "past the bound: any routine");
        t.join_thread(h(1));
        t.join_thread(h(2));
        assert!(!t.may_run(&[FuncId(1000)]), "all joined: none");
    }
}
