//! Saved findings reused after lines moved. An edit that adds a line changes where every later
//! location of its file is, and nothing else the race stage reads: summaries name locations by
//! their rank among their function's own ([`super::summaries`]), so their content is unchanged.
//! The race stage compares locations only by order and equality (it sorts pairs by them and
//! merges the accesses found at one site; nothing hashes where a location is into a result), so
//! when every location keeps its place in the order of all of them, its findings are those of
//! the run before with each location replaced by its new place.
//!
//! [`LocTable`] is that order: every location the findings can name — each function's own
//! locations, identified by (function, rank), and each escaped callback's, by its place in the
//! points-to's list — sorted. Its `order` key (which identities sit at each place, ties
//! included) goes into the findings' key instead of the locations themselves. A saved run
//! carries a [`Relocation`]: the locations its report data names, with their places. Reused,
//! each is rewritten to the location now at its place ([`apply`]). What report data names
//! besides locations is checked instead: the lines of allocation sites that name memory
//! (`heap@f:12`) must not have moved, and memory named by its points-to class number
//! (`rep#12`) needs the same numbering.

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use super::{Key, KeyBuilder};
use crate::ir::{FuncId, Loc};
use crate::link::Program;
use crate::pta::callbacks::EscapedCallback;
use crate::pta::{Origin, PointsTo};
use crate::race::report::{source_loc, RenderedFrom};
use crate::race::saved::SavedRun;
use crate::report::SourceLoc;

/// The identity of an escaped callback's location in the table (its "function").
const CALLBACK: u32 = u32::MAX;

/// Every location the race stage's findings can name, in order; see the module documentation.
pub struct LocTable {
    /// Distinct, sorted.
    locs: Vec<Loc>,
    /// Which identities are at each place of the order, ties included; and who the escaped
    /// callbacks are.
    pub order: Key,
    /// Where the locations are.
    pub placed: Key,
}

impl LocTable {
    /// `own_locs`: each function's own locations.
    pub fn new<'a>(
        functions: usize,
        own_locs: impl Fn(FuncId) -> &'a [Loc],
        callbacks: &[EscapedCallback],
    ) -> LocTable {
        let mut all: Vec<(Loc, u32, u32)> = Vec::new();
        for f in 0..functions as u32 {
            let own = own_locs(FuncId(f));
            all.extend(own.iter().enumerate().map(|(r, &l)| (l, f, r as u32)));
        }
        all.extend(
            callbacks
                .iter()
                .enumerate()
                .map(|(i, cb)| (cb.loc, CALLBACK, i as u32)),
        );
        all.par_sort_unstable();
        let mut order = KeyBuilder::new("location order");
        order.u64(callbacks.len() as u64);
        for cb in callbacks {
            order
                .u64(cb.func.0.into())
                .u64(cb.via.0.into())
                .u64(cb.caller.0.into())
                .u64(cb.unknown.into());
        }
        let mut placed = KeyBuilder::new("locations");
        let mut locs: Vec<Loc> = Vec::new();
        for &(l, who, rank) in &all {
            let tie = locs.last() == Some(&l);
            if !tie {
                locs.push(l);
                placed
                    .u64(l.file.into())
                    .u64(l.line.into())
                    .u64(l.col.into());
            }
            order.u64(who.into()).u64(rank.into()).u64(tie.into());
        }
        LocTable {
            locs,
            order: order.finish(),
            placed: placed.finish(),
        }
    }
}

/// What a saved run needs to be reused after lines moved; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relocation {
    /// [`LocTable::placed`] of the run that saved it: equal, nothing moved.
    placed: [u8; 32],
    /// Each location the report data names, with its place in the table; `None` when one
    /// is not in the table (the run is then reused only where nothing moved).
    locs: Option<Vec<(Loc, u32)>>,
    /// (function, rank among the function's allocation sites, line) of each allocation site
    /// whose line names memory.
    allocs: Vec<(FuncId, u32, u32)>,
    /// The points-to numbering, when memory is named by a class number.
    numbering: Option<[u8; 32]>,
}

impl Relocation {
    /// The relocation of a run whose report data read `rendered`, saved with `table`.
    pub fn new(rendered: &RenderedFrom, table: &LocTable, pta: &PointsTo) -> Relocation {
        let locs = rendered
            .locs
            .iter()
            .map(|&l| Some((l, table.locs.binary_search(&l).ok()? as u32)))
            .collect();
        let sites = allocation_sites(pta);
        // A site not found (none expected) gets no rank: the run is then never reused.
        let allocs = rendered
            .allocs
            .iter()
            .map(|&(f, l)| {
                let rank = sites.get(&f).and_then(|s| s.iter().position(|&x| x == l));
                (f, rank.map_or(u32::MAX, |r| r as u32), l.line)
            })
            .collect();
        Relocation {
            placed: table.placed.0,
            locs,
            allocs,
            numbering: rendered.numbered_classes.then(|| numbering(pta).0),
        }
    }
}

/// `run` (saved with its [`Relocation`]) as this program's: its locations rewritten to their
/// places in `table`. `None` when it cannot be: a location not in the saved table moved, an
/// allocation site that names memory moved, or the points-to numbering a name used changed.
pub fn apply(
    mut run: SavedRun,
    table: &LocTable,
    program: &Program,
    pta: &PointsTo,
) -> Option<SavedRun> {
    let r = &run.relocation;
    if r.numbering.is_some_and(|n| n != numbering(pta).0) {
        return None;
    }
    if !r.allocs.is_empty() {
        let sites = allocation_sites(pta);
        let same = |&(f, rank, line): &(FuncId, u32, u32)| {
            sites
                .get(&f)
                .and_then(|s| s.get(rank as usize))
                .is_some_and(|l| l.line == line)
        };
        if !r.allocs.iter().all(same) {
            return None;
        }
    }
    if r.placed == table.placed.0 {
        return Some(run);
    }
    let mut moved: FxHashMap<SourceLoc, SourceLoc> = FxHashMap::default();
    let mut locs = Vec::new();
    for &(old, place) in r.locs.as_ref()? {
        let new = *table.locs.get(place as usize)?;
        locs.push((new, place));
        // Two files of one name: a location the report names is then not one place.
        let new_src = source_loc(program, new);
        match moved.insert(source_loc(program, old), new_src.clone()) {
            Some(other) if other != new_src => return None,
            _ => {}
        }
    }
    moved.retain(|old, new| old != new);
    run.map_locations(|l| {
        if let Some(new) = moved.get(l) {
            *l = new.clone();
        }
    })
    .ok()?;
    run.relocation.placed = table.placed.0;
    run.relocation.locs = Some(locs);
    Some(run)
}

/// Each function's allocation sites, in the order of their points-to nodes.
fn allocation_sites(pta: &PointsTo) -> FxHashMap<FuncId, Vec<Loc>> {
    let mut sites: FxHashMap<FuncId, Vec<Loc>> = FxHashMap::default();
    for n in 0..pta.node_count() as u32 {
        if let Origin::Alloc(f, l) = pta.origin(n) {
            sites.entry(f).or_default().push(l);
        }
    }
    sites
}

/// How the points-to analysis numbered its classes.
fn numbering(pta: &PointsTo) -> Key {
    let mut k = KeyBuilder::new("points-to numbering");
    k.u64(pta.node_count() as u64);
    for n in 0..pta.node_count() as u32 {
        k.u64(pta.class(n).into());
    }
    k.finish()
}
