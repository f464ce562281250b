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
//! known (an integer cast to a pointer), an object that is a member node (a pointer into the
//! middle of an object, which `container_of` leaves), a model's hidden state, or no pointer at
//! all. Memory the program did not allocate (`argv`, a library's static buffer, whatever unknown
//! code returns) is one object, the unknown code's memory, which also holds every object
//! handed to unknown code.

mod bits;
mod build;
mod solve;

use rustc_hash::FxHashMap;

use super::{Origin, PointsTo};
use crate::callgraph::CallGraph;
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
    /// Sites with a known, non-empty object set.
    pub known_sites: usize,
    pub allocation_sites: usize,
}

/// The objects each access site may touch; see the module documentation.
pub struct SiteObjects {
    /// Interned object sets (sorted), by site. `None`: unknown.
    by_site: FxHashMap<Site, Option<u32>>,
    /// The same, for a location in any function (a witness whose function is not recorded).
    by_loc: FxHashMap<Loc, Option<u32>>,
    sets: Vec<Box<[u32]>>,
    pub stats: InclusionStats,
}

impl SiteObjects {
    /// Solves the program's inclusion constraints. The functions nothing in the program calls
    /// (by `cg`) and the `extra` thread entries (`--entry`) are called from outside (`main`, a
    /// library's API) with any memory.
    pub fn compute(
        program: &Program,
        pta: &PointsTo,
        cg: &CallGraph,
        models: &Models,
        extra: &[FuncId],
    ) -> SiteObjects {
        let resolved = super::models::resolve(program, models);
        let callers = cg.callers();
        let mut roots: Vec<bool> = (0..program.functions.len())
            .map(|i| callers.get(i).is_none_or(|c| c.is_empty()))
            .collect();
        for f in extra {
            if let Some(r) = roots.get_mut(f.index()) {
                *r = true;
            }
        }
        let mut b = build::Builder::new(program, pta, &resolved);
        b.program(&roots);
        b.graph.solve();
        let allocations = b.allocations;
        let mut interned: FxHashMap<Box<[u32]>, u32> = FxHashMap::default();
        let mut sets = Vec::new();
        let mut by_site = FxHashMap::default();
        let mut by_loc: FxHashMap<Loc, Option<Vec<u32>>> = FxHashMap::default();
        let mut known_sites = 0;
        for (&site, values) in &b.sites {
            let objects = values.as_ref().and_then(|v| objects(&b.graph, pta, v));
            let id = objects.as_ref().map(|o| {
                let boxed: Box<[u32]> = o.clone().into_boxed_slice();
                *interned.entry(boxed.clone()).or_insert_with(|| {
                    sets.push(boxed);
                    sets.len() as u32 - 1
                })
            });
            known_sites += id.is_some() as usize;
            by_site.insert(site, id);
            let any = by_loc.entry(site.1).or_insert_with(|| Some(Vec::new()));
            match (any.as_mut(), objects) {
                (Some(all), Some(o)) => all.extend(o),
                _ => *any = None,
            }
        }
        let by_loc = by_loc
            .into_iter()
            .map(|(loc, o)| {
                let id = o.map(|mut o| {
                    o.sort_unstable();
                    o.dedup();
                    let boxed = o.into_boxed_slice();
                    *interned.entry(boxed.clone()).or_insert_with(|| {
                        sets.push(boxed);
                        sets.len() as u32 - 1
                    })
                });
                (loc, id)
            })
            .collect();
        SiteObjects {
            stats: InclusionStats {
                nodes: b.graph.len(),
                sites: by_site.len(),
                known_sites,
                allocation_sites: allocations,
            },
            by_site,
            by_loc,
            sets,
        }
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
    pub fn set(&self, id: u32) -> &[u32] {
        &self.sets[id as usize]
    }
}

/// The objects the value nodes point to, sorted; `None` when that proves nothing: no object,
/// or one that may lie inside another.
fn objects(graph: &solve::Graph, pta: &PointsTo, values: &[u32]) -> Option<Vec<u32>> {
    let mut out: Vec<u32> = values.iter().flat_map(|&v| graph.points_to(v)).collect();
    out.sort_unstable();
    out.dedup();
    let interior =
        |&o: &u32| (o as usize) < pta.node_count() && matches!(pta.origin(o), Origin::Field(..));
    if out.is_empty() || out.iter().any(interior) {
        return None;
    }
    Some(out)
}

/// Whether two sorted object sets share an object.
pub fn intersect(a: &[u32], b: &[u32]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}
