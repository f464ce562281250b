//! The races the pair stage found so far ([`Found`]), merged task by task in task order, and
//! what `--per-access` numbers and remembers of the accesses it reports.

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::candidates::{same_sites, Group};
use super::pairs::{Pair, Side};
use crate::ir::Loc;
use crate::summary::AccessView;

/// The races found so far: one warning per pair of first sites and lvalues. The same pair of
/// lvalues found again (another lockset, entry, or a widened summary's merged access) adds its
/// sites to it; in the end, another pair of lvalues at exactly the same sites (the members of
/// one whole-struct copy) adds nothing (the first found is kept), and one with other sites is a
/// warning of its own. Which pairs are warnings does not depend on the order they are found in.
///
/// With `--per-access`, one warning per racing access instead (RacerD's report): each access —
/// its first site and lvalue — with the first access found racing with it, in chunk order; a
/// pair that is both accesses' first is one warning.
pub(super) struct Found<'a> {
    at: FxHashMap<(Loc, Loc), Vec<Pair<'a>>>,
    /// Per access (numbered by [`number_accesses`]), the first race found with it
    /// (`--per-access` only).
    per_access: Option<FxHashMap<u32, Pair<'a>>>,
    /// A task's racing checks, as (head, partner) positions of its bucket, in order
    /// ([`super::memo::BucketRecord::racing`]); emptied when the task's races are merged.
    pub racing: Vec<(u32, u32)>,
    /// Parallel to `racing` for a bucket's rows: [`super::memo::BucketRecord::performers`].
    pub performers: Vec<[u32; 2]>,
}

/// An access as `--per-access` reports it: its sites and its lvalue (its class, or its path).
/// Two groups at the same sites are one access to report. Ordered by value, sites and paths
/// included — not by where an interned path happens to live, which differs between a run that
/// computed its summaries and one that loaded them, nor by a hash of the sites, which moves
/// with their lines: the order decides which of two accesses at one site is reported, and it
/// must stay when lines move (saved findings are reused then, `crate::cache::relocate`).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct AccessId<'a>(
    Loc,
    Sites<'a>,
    Option<u32>,
    Option<&'a crate::summary::Path>,
);

/// An access's sites, compared by their locations in order.
#[derive(Copy, Clone)]
struct Sites<'a>(&'a [crate::summary::access::Witness]);

impl PartialEq for Sites<'_> {
    fn eq(&self, other: &Self) -> bool {
        same_sites(self.0, other.0)
    }
}

impl Eq for Sites<'_> {}

impl PartialOrd for Sites<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Sites<'_> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0
            .iter()
            .map(|w| w.loc)
            .cmp(other.0.iter().map(|w| w.loc))
    }
}

impl<'a> AccessId<'a> {
    fn of(a: &AccessView<'a>) -> AccessId<'a> {
        let path = a.class.is_none().then_some(a.path);
        AccessId(a.witness().loc, Sites(a.witnesses), a.class, path)
    }
}

impl<'a> Found<'a> {
    pub(super) fn new(per_access: bool) -> Found<'a> {
        Found {
            at: FxHashMap::default(),
            per_access: per_access.then(FxHashMap::default),
            racing: Vec::new(),
            performers: Vec::new(),
        }
    }

    /// How many races it holds (by access with `--per-access`, else by pair of first sites).
    pub(super) fn len(&self) -> usize {
        self.per_access.as_ref().map_or(self.at.len(), |m| m.len())
    }

    pub(super) fn reserve(&mut self, races: usize) {
        match &mut self.per_access {
            Some(by_access) => by_access.reserve(races),
            None => self.at.reserve(races),
        }
    }

    /// Whether `--per-access` has this access reported already.
    pub(super) fn reported(&self, access: u32) -> bool {
        self.per_access
            .as_ref()
            .is_some_and(|m| m.contains_key(&access))
    }

    /// The accesses `--per-access` has reported (none without it).
    pub(super) fn reported_accesses(&self) -> impl Iterator<Item = u32> + '_ {
        self.per_access.iter().flat_map(|m| m.keys().copied())
    }

    /// Adds a race between the accesses numbered `accesses` (`--per-access` only).
    pub(super) fn add(&mut self, pair: Pair<'a>, accesses: [Option<u32>; 2]) {
        match &mut self.per_access {
            Some(by_access) => {
                for a in accesses.into_iter().flatten() {
                    by_access.entry(a).or_insert_with(|| pair.clone());
                }
            }
            None => self.add_pair(pair),
        }
    }

    pub(super) fn add_pair(&mut self, mut pair: Pair<'a>) {
        let order = |s: &Side<'_>| (s.access.witness().loc, s.entry);
        if order(&pair.second) < order(&pair.first) {
            std::mem::swap(&mut pair.first, &mut pair.second);
        }
        let key = (
            pair.first.access.witness().loc,
            pair.second.access.witness().loc,
        );
        let at = self.at.entry(key).or_default();
        match at.iter_mut().find(|p| p.same_lvalues(&pair)) {
            Some(kept) => {
                kept.first.absorb(&pair.first);
                kept.second.absorb(&pair.second);
            }
            None => at.push(pair),
        }
    }

    /// Adds a later worker's races.
    pub(super) fn merge(&mut self, other: Found<'a>) {
        if let (Some(mine), Some(theirs)) = (&mut self.per_access, other.per_access) {
            for (id, pair) in theirs {
                mine.entry(id).or_insert(pair);
            }
            return;
        }
        for pair in other.at.into_values().flatten() {
            self.add_pair(pair);
        }
    }

    pub(super) fn into_sorted(mut self) -> Vec<Pair<'a>> {
        if let Some(by_access) = self.per_access.take() {
            // Each access's pair, in access order: the same pair reported for both of its
            // accesses is one warning (`add_pair` merges a pair found again).
            let mut pairs: Vec<(u32, Pair<'a>)> = by_access.into_iter().collect();
            pairs.sort_unstable_by_key(|(id, _)| *id);
            for (_, pair) in pairs {
                self.add_pair(pair);
            }
        }
        let mut keyed: Vec<((Loc, Loc), Vec<Pair<'a>>)> = self.at.into_iter().collect();
        keyed.sort_unstable_by_key(|(k, _)| *k);
        let mut out = Vec::new();
        for (_, pairs) in keyed {
            let from = out.len();
            for p in pairs {
                if !out[from..].iter().any(|q: &Pair<'a>| q.same_sites(&p)) {
                    out.push(p);
                }
            }
        }
        out
    }
}

/// `--per-access`: the accesses (by [`number_accesses`]) that have their warning, one bit each.
/// Every pair the stage tests asks about both of its accesses: a bit is a cache hit where a
/// map of hundreds of thousands of accesses was a miss (a quarter of the kernel's pair stage).
pub(super) struct ReportedAccesses(Vec<u64>);

impl ReportedAccesses {
    /// No access reported among `n`.
    pub(super) fn new(n: usize) -> ReportedAccesses {
        ReportedAccesses(vec![0; n.div_ceil(64)])
    }

    pub(super) fn contains(&self, access: u32) -> bool {
        let a = access as usize;
        self.0.get(a / 64).is_some_and(|w| w >> (a % 64) & 1 == 1)
    }

    pub(super) fn extend(&mut self, accesses: impl Iterator<Item = u32>) {
        for a in accesses.map(|a| a as usize) {
            if let Some(w) = self.0.get_mut(a / 64) {
                *w |= 1 << (a % 64);
            }
        }
    }
}

/// Per group, the number of the access `--per-access` reports it as: the accesses
/// ([`AccessId`]s) numbered in order, so the numbers compare as the accesses do.
pub(super) fn number_accesses(groups: &[Group<'_>]) -> Vec<u32> {
    let ids: Vec<AccessId> = groups.iter().map(|g| AccessId::of(&g.access)).collect();
    let mut sorted = ids.clone();
    sorted.par_sort_unstable();
    sorted.dedup();
    ids.par_iter()
        .map(|id| sorted.partition_point(|x| x < id) as u32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_accesses_hold_exactly_those_added() {
        let mut r = ReportedAccesses::new(200);
        r.extend([0, 63, 64, 130, 199].into_iter());
        let held: Vec<u32> = (0..200).filter(|&a| r.contains(a)).collect();
        assert_eq!(held, vec![0, 63, 64, 130, 199]);
        assert!(!r.contains(200) && !r.contains(u32::MAX));
    }

    /// Two accesses at one site are numbered by their paths' values, not by where the paths
    /// live: a run that loaded its summaries interns them elsewhere than one that computed them.
    #[test]
    fn accesses_at_one_site_are_ordered_by_path_value() {
        use crate::ir::{GlobalId, Loc};
        use crate::summary::lockset::RelativeLockset;
        use crate::summary::{Path, Phase, Root, Witness};
        // The greater path first in memory.
        let paths = [
            Path::new(Root::Global(GlobalId(2))),
            Path::new(Root::Global(GlobalId(1))),
        ];
        let locks = RelativeLockset::default();
        let witness = [Witness::new(Loc::default(), Default::default(), None)];
        let view = |path| AccessView {
            path,
            locks: &locks,
            kind: crate::summary::AccessKind::Write,
            atomic: false,
            value: None,
            class: None,
            phase: Phase::Threaded,
            witnesses: &witness,
        };
        let (high, low) = (view(&paths[0]), view(&paths[1]));
        assert!(AccessId::of(&low) < AccessId::of(&high));
        let copy = paths[1].clone();
        assert!(
            AccessId::of(&view(&copy)) == AccessId::of(&low),
            "equal by value"
        );
    }
}
