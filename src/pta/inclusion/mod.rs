//! Inclusion-based (Andersen) points-to for the race query: which objects each access site may
//! touch.
//!
//! Steensgaard's classes ([`super::PointsTo`]) drive everything else — call resolution,
//! summaries, buckets — and stay. But unification merges unrelated objects (one pointer that
//! may hold either merges them for good, and so does everything that ever points to them), and
//! an access path rooted at a class representative cannot say which of the class's objects it
//! touches. Here the same constraints are solved as inclusions instead (field-based, flow- and
//! context-insensitive, every allocation call one object), and indexed by access site: the
//! objects an access at `(function, location)` may lie in are those its lvalues' base pointers
//! may point to, in every context. Two accesses whose every site's objects are disjoint cannot
//! touch the same memory, whatever paths the summaries give them (the race stage's *distinct
//! objects*).
//!
//! What makes a site's objects unknown (never proving anything): a pointer that points nowhere
//! known (an integer cast to a pointer, or a member of such), a model's hidden state, or no
//! pointer at all. A pointer to a member (`&p->m`) points to the member's node and to the
//! objects around it (what `p` points to): `container_of` leads back to them, and so the
//! objects of a site are its set without member nodes. Memory the program did not allocate (`argv`, a library's static buffer, whatever unknown
//! code returns) is one object, the unknown code's memory, which also holds every object
//! handed to unknown code.

pub mod bits;
mod build;
mod handed;
mod solve;

use rustc_hash::FxHashMap;

pub use bits::Bits;

use super::{Origin, PointsTo};
use crate::ir::{FuncId, Loc};
use crate::link::Program;
use crate::models::Models;

/// An access site: the function performing it and the location of its instruction.
type Site = (FuncId, Loc);

/// Counts for the run table.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct InclusionStats {
    pub nodes: usize,
    pub sites: usize,
    /// Sites with a known, non-empty object set; of which may touch memory the program did
    /// not allocate (or anything unknown code reaches).
    pub known_sites: usize,
    pub opaque_sites: usize,
    /// Objects unknown code may reach.
    pub escaped_objects: usize,
    pub allocation_sites: usize,
}

/// The objects each access site may touch; see the module documentation.
pub struct SiteObjects {
    /// Interned object sets, by site. `None`: unknown.
    by_site: FxHashMap<Site, Option<u32>>,
    /// The same, for a location in any function (a witness whose function is not recorded).
    by_loc: FxHashMap<Loc, Option<u32>>,
    sets: Vec<Bits>,
    /// The objects unknown code may reach, and the opaque object (in it), which a set holds
    /// for all of them.
    escaped: Bits,
    opaque: u32,
    /// What the objects that are not points-to nodes stand for ([`SiteObjects::object`]).
    world: u32,
    nowhere: u32,
    pta_nodes: u32,
    allocations: FxHashMap<u32, (FuncId, u32)>,
    pub stats: InclusionStats,
}

/// What an object of [`SiteObjects`] stands for, in terms that do not depend on how the
/// analysis numbered its nodes (the findings cache keys the race stage's result with them).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectLabel {
    /// A points-to node ([`PointsTo::origin`]).
    Node(u32),
    /// An allocation object of the inclusion analysis: the function whose body allocates it
    /// (`FuncId(u32::MAX)`: a global's initializer) and its rank among that function's.
    Allocation(FuncId, u32),
    /// Memory the program did not allocate, or that unknown code reaches.
    Opaque,
    /// What unknown code is handed.
    World,
    /// Somewhere unknown.
    Nowhere,
}

/// Object sets interned: equal sets get one number.
#[derive(Default)]
pub struct Interner {
    ids: FxHashMap<Bits, u32>,
    sets: Vec<Bits>,
}

impl Interner {
    pub fn intern(&mut self, set: Bits) -> u32 {
        if let Some(&id) = self.ids.get(&set) {
            return id;
        }
        let id = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.ids.insert(set, id);
        id
    }

    /// The set numbered `id`.
    pub fn set(&self, id: u32) -> &Bits {
        &self.sets[id as usize]
    }

    /// Every set, in their numbering.
    pub fn sets(&self) -> &[Bits] {
        &self.sets
    }
}

impl SiteObjects {
    /// Solves the program's inclusion constraints. The `outside` functions (`main`, the
    /// `--entry` names, a library's API under `--entry-roots`) are called from outside the
    /// program with any memory; a function nothing calls otherwise never runs. A call of one of
    /// the `constructors` (sorted; functions
    /// that return only an object they allocated and nothing else points to) is an allocation
    /// site of its own: each call returns a new object.
    pub fn compute(
        program: &Program,
        pta: &PointsTo,
        models: &Models,
        outside: &[FuncId],
        constructors: &[FuncId],
    ) -> SiteObjects {
        let resolved = super::models::resolve(program, models);
        let mut roots = vec![false; program.functions.len()];
        for f in outside {
            if let Some(r) = roots.get_mut(f.index()) {
                *r = true;
            }
        }
        let mut b = build::Builder::new(program, pta, &resolved);
        b.constructors = constructors;
        b.program(&roots);
        b.graph.solve();
        // Member nodes: a pointer to a member also points to the objects around it (or to
        // `nowhere`), so the objects of a set are those without its member nodes.
        let mut interior = Bits::default();
        for n in 0..pta.node_count() as u32 {
            if matches!(pta.origin(n), Origin::Field(..)) {
                interior.insert(n);
            }
        }
        let escaped = b.graph.set(b.world).clone();
        // A set holding one of these proves nothing: `nowhere`, and the opaque object when
        // unknown code may hold a member of an object nobody knows.
        let mut unknowable = Bits::default();
        unknowable.insert(b.nowhere);
        if escaped.contains(b.nowhere) {
            unknowable.insert(b.opaque);
        }
        let mut interner = Interner::default();
        // By the representative of a site's one value node (most sites have one).
        let mut single: FxHashMap<u32, Option<u32>> = FxHashMap::default();
        let mut by_site = FxHashMap::default();
        let mut by_loc: FxHashMap<Loc, Option<Bits>> = FxHashMap::default();
        let mut known_sites = 0;
        let mut sites: Vec<(&Site, &Option<Vec<u32>>)> = b.sites.iter().collect();
        sites.sort_unstable_by_key(|(site, _)| **site);
        for (&site, values) in sites {
            let id = match values.as_deref() {
                None | Some([]) => None,
                Some(&[v]) => *single.entry(b.graph.representative(v)).or_insert_with(|| {
                    known(
                        b.graph.set(v).clone(),
                        &interior,
                        &unknowable,
                        &mut interner,
                    )
                }),
                Some(vs) => {
                    let mut all = Bits::default();
                    for &v in vs {
                        all.union_new(b.graph.set(v));
                    }
                    known(all, &interior, &unknowable, &mut interner)
                }
            };
            known_sites += id.is_some() as usize;
            by_site.insert(site, id);
            let any = by_loc
                .entry(site.1)
                .or_insert_with(|| Some(Bits::default()));
            match (any.as_mut(), id) {
                (Some(all), Some(id)) => {
                    all.union_new(&interner.sets[id as usize]);
                }
                _ => *any = None,
            }
        }
        let by_loc = by_loc
            .into_iter()
            .map(|(loc, o)| {
                (
                    loc,
                    o.and_then(|o| known(o, &interior, &unknowable, &mut interner)),
                )
            })
            .collect();
        let opaque_sites = by_site
            .values()
            .filter(|id| id.is_some_and(|i| interner.sets[i as usize].contains(b.opaque)))
            .count();
        SiteObjects {
            stats: InclusionStats {
                nodes: b.graph.len(),
                sites: by_site.len(),
                known_sites,
                opaque_sites,
                escaped_objects: escaped.iter().count(),
                allocation_sites: b.allocations.len(),
            },
            by_site,
            by_loc,
            sets: interner.sets,
            escaped,
            opaque: b.opaque,
            world: b.world,
            nowhere: b.nowhere,
            pta_nodes: pta.node_count() as u32,
            allocations: b.allocations.iter().map(|&(n, f, r)| (n, (f, r))).collect(),
        }
    }

    /// What the object `node` of a set stands for; `None` for a node the analysis made that
    /// is no object (sets hold none).
    pub fn object(&self, node: u32) -> Option<ObjectLabel> {
        if node < self.pta_nodes {
            return Some(ObjectLabel::Node(node));
        }
        if let Some(&(f, rank)) = self.allocations.get(&node) {
            return Some(ObjectLabel::Allocation(f, rank));
        }
        [
            (self.opaque, ObjectLabel::Opaque),
            (self.world, ObjectLabel::World),
            (self.nowhere, ObjectLabel::Nowhere),
        ]
        .into_iter()
        .find_map(|(n, l)| (n == node).then_some(l))
    }

    /// The objects unknown code may reach.
    pub fn escaped(&self) -> &Bits {
        &self.escaped
    }

    /// Whether two object sets may share an object: they intersect, or one holds the opaque
    /// object and the other an object unknown code may reach.
    pub fn may_share(&self, a: &Bits, b: &Bits) -> bool {
        a.intersects(b)
            || (a.contains(self.opaque) && b.intersects(&self.escaped))
            || (b.contains(self.opaque) && a.intersects(&self.escaped))
    }

    /// The interned object set of the site `(func, loc)` (any function's site at `loc` when
    /// `func` is `None`); `None` when unknown or never seen.
    pub fn site(&self, func: Option<FuncId>, loc: Loc) -> Option<u32> {
        match func {
            Some(f) => self.by_site.get(&(f, loc)).copied().flatten(),
            None => self.by_loc.get(&loc).copied().flatten(),
        }
    }

    /// The objects of an interned set.
    pub fn set(&self, id: u32) -> &Bits {
        &self.sets[id as usize]
    }
}

/// An object set that proves something, interned: its objects without member nodes (a
/// pointer to a member points to the objects around it too), not empty, and holding none of
/// the `unknowable` objects.
fn known(set: Bits, interior: &Bits, unknowable: &Bits, interner: &mut Interner) -> Option<u32> {
    let set = if set.intersects(interior) {
        set.minus(interior)
    } else {
        set
    };
    if set.is_empty() || set.intersects(unknowable) {
        return None;
    }
    Some(interner.intern(set))
}
