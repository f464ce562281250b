//! Distinct objects: two accesses whose sites may touch no common object, by the
//! inclusion-based points-to analysis ([`crate::pta::inclusion`]), are not the same memory,
//! whatever class their paths name. An access stands for all its witness sites (every site it
//! was merged from); one with more witnesses than a summary keeps, or with a site whose objects
//! are unknown, proves nothing.

use rustc_hash::FxHashMap;

use super::memo::ObjectNames;
use crate::pta::inclusion::{Bits, Interner, SiteObjects};

/// An object set's name: how many objects, the sum of their names' hashes (order-free), and
/// whether unknown code reaches one of them ([`AccessObjects::named_sets`]).
pub(super) type SetName = (u64, u128, bool);
use crate::summary::access::MAX_WITNESSES;
use crate::summary::{AccessView, Witness};

/// The object sets of the accesses the pair check sees, interned.
pub(super) struct AccessObjects<'s> {
    sites: &'s SiteObjects,
    sets: Interner,
    /// By witness list (accesses share them: rebound copies, interned views): its address
    /// and length.
    by_witnesses: FxHashMap<(usize, usize), Option<u32>>,
    /// Own number of each site set met alone.
    by_site_set: FxHashMap<u32, u32>,
}

impl<'s> AccessObjects<'s> {
    pub(super) fn new(sites: &'s SiteObjects) -> Self {
        AccessObjects {
            sites,
            sets: Interner::default(),
            by_witnesses: FxHashMap::default(),
            by_site_set: FxHashMap::default(),
        }
    }

    /// The objects an access may touch (an interned set), `None` when unknown.
    pub(super) fn of(&mut self, a: &AccessView<'_>) -> Option<u32> {
        let key = (a.witnesses.as_ptr() as usize, a.witnesses.len());
        if let Some(&id) = self.by_witnesses.get(&key) {
            return id;
        }
        let id = self.compute(a.witnesses);
        self.by_witnesses.insert(key, id);
        id
    }

    fn compute(&mut self, witnesses: &[Witness]) -> Option<u32> {
        if witnesses.is_empty() || witnesses.len() >= MAX_WITNESSES {
            // Sites past the bound were not kept: some are unknown.
            return None;
        }
        if let [w] = witnesses {
            // One site: its set is interned already, in the sites' numbering.
            let site = self.sites.site(w.func, w.loc)?;
            if let Some(&id) = self.by_site_set.get(&site) {
                return Some(id);
            }
            let id = self.sets.intern(self.sites.set(site).clone());
            self.by_site_set.insert(site, id);
            return Some(id);
        }
        let mut all = Bits::default();
        for w in witnesses {
            let id = self.sites.site(w.func, w.loc)?;
            all.union_new(self.sites.set(id));
        }
        Some(self.sets.intern(all))
    }

    /// The names of the interned sets, in their numbering (`None` if an object has no name
    /// in `names`): what [`Self::disjoint`] reads of each, named independently of how the run
    /// numbered objects and sets (the pair stage's digests, [`super::memo`]). Two sets may
    /// share an object if they intersect, or if one holds the opaque object (which its name
    /// tells) and the other an object unknown code reaches: so a set's name is its objects'
    /// (how many, and the sum of their names' hashes) and whether unknown code reaches one.
    pub(super) fn named_sets(&self, names: &ObjectNames) -> Option<Vec<SetName>> {
        let escaped = self.sites.escaped();
        let name = |set: &Bits| -> Option<SetName> {
            let (count, sum) = set.iter().try_fold((0u64, 0u128), |(count, sum), o| {
                Some((count + 1, sum.wrapping_add(*names.get(&o)?)))
            })?;
            Some((count, sum, set.intersects(escaped)))
        };
        self.sets.sets().iter().map(name).collect()
    }

    /// Whether both accesses' objects are known and disjoint (`memo`: the answers so far, a
    /// worker's own).
    pub(super) fn disjoint(
        &self,
        x: Option<u32>,
        y: Option<u32>,
        memo: &mut FxHashMap<(u32, u32), bool>,
    ) -> bool {
        let (Some(x), Some(y)) = (x, y) else {
            return false;
        };
        if x == y {
            return false;
        }
        let key = (x.min(y), x.max(y));
        *memo
            .entry(key)
            .or_insert_with(|| !self.sites.may_share(self.sets.set(x), self.sets.set(y)))
    }
}
