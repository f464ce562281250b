//! The race stage's saved findings: where a run keeps them in the cache, and how a later run
//! finds them — under a key of everything they depend on but where lines are, then rewritten
//! to where the lines are now ([`crate::cache::relocate`]).

use std::sync::{Mutex, OnceLock};
use std::thread::{Scope, ScopedJoinHandle};
use std::time::Instant;

use super::Options;
use crate::cache::findings::{latest_at, set_latest_at};
use crate::cache::relocate::{self, LocTable, Relocation};
use crate::cache::summaries::SummaryCache;
use crate::cache::{Key, KeyBuilder, Store};
use crate::ir::FuncId;
use crate::link::Program;
use crate::models::Models;
use crate::progress::Heartbeat;
use crate::pta::inclusion::SiteObjects;
use crate::pta::PointsTo;
use crate::race::memo::ObjectNames;
use crate::race::saved::SavedRun;

/// Looks for the findings saved for this analysis: under the summaries cache's program key,
/// the order of the locations the findings can name, the entry options and, with
/// `--inclusion`, the objects of the sites the summaries name
/// ([`SummaryCache::site_objects_key`]) — the inclusion-based points-to reads every body and
/// initializer, which the program key does not cover.
pub(super) struct FindingsLookup<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub models: &'a Models,
    pub options: &'a Options,
    /// [`crate::race::entries::outside_entries`].
    pub outside: Vec<FuncId>,
    /// The inclusion-based points-to, computed ahead for the constructors the previous run
    /// found ([`FindingsLookup::compute_ahead`]).
    pub ahead: OnceLock<Ahead<'a>>,
}

/// The inclusion-based points-to computed on a thread of its own, beside the summaries, for
/// the constructors the previous run in the same context found
/// ([`SummaryCache::previous_constructors`]): the lookup takes it when this run finds the
/// same ones (nearly always), and computes it again otherwise.
pub(super) struct Ahead<'scope> {
    computing: Mutex<Option<(Vec<FuncId>, ScopedJoinHandle<'scope, SiteObjects>)>>,
}

impl<'scope> Ahead<'scope> {
    /// Starts computing it in `scope` for `constructors` (sorted); `None` if no thread could
    /// be started (the lookup then computes it).
    pub fn start<'env>(
        scope: &'scope Scope<'scope, 'env>,
        (program, pta, models): (&'scope Program, &'scope PointsTo, &'scope Models),
        outside: Vec<FuncId>,
        constructors: Vec<FuncId>,
    ) -> Option<Ahead<'scope>> {
        let for_them = constructors.clone();
        let handle = std::thread::Builder::new()
            .name("relay-inclusion".into())
            .spawn_scoped(scope, move || {
                SiteObjects::compute(program, pta, models, &outside, &for_them)
            })
            .ok()?;
        Some(Ahead {
            computing: Mutex::new(Some((constructors, handle))),
        })
    }

    /// What it computed, once done, if it was for `constructors`. (If not, the scope waits for
    /// the thread at its end and drops what it made.)
    fn take(&self, constructors: &[FuncId]) -> Option<SiteObjects> {
        let mut slot = self.computing.lock().unwrap_or_else(|e| e.into_inner());
        let (computed_for, handle) = slot.take()?;
        (computed_for == constructors)
            .then(|| handle.join().ok())
            .flatten()
    }
}

/// What [`FindingsLookup::find`] found: the saved findings, if any, and what it computed to
/// look for them.
pub(super) struct Found {
    pub run: Option<SavedRun>,
    /// The findings were saved where other lines were: rewritten, to be saved again.
    pub moved: bool,
    pub objects: Option<SiteObjects>,
    /// Their objects' names, when they have names of their own (for the pair stage's digests,
    /// [`crate::race::memo::StableIds::objects`]).
    pub object_names: Option<ObjectNames>,
    /// Where this analysis's findings are kept.
    pub place: FindingsPlace,
    /// How long computing `objects` took (a stage of its own in the run table).
    pub seconds: f64,
}

impl<'a> FindingsLookup<'a> {
    /// Starts computing the inclusion-based points-to in `scope`, beside the summaries, for
    /// the constructors the previous run in `c`'s context found (none: nothing to start).
    /// Not with `-j1`: the thread would be a second worker.
    pub fn compute_ahead<'env>(&self, scope: &'a Scope<'a, 'env>, c: &SummaryCache<'_>) {
        if !self.options.inclusion || self.options.schedule.jobs == 1 {
            return;
        }
        if let Some(constructors) = c.previous_constructors() {
            let analyses = (self.program, self.pta, self.models);
            if let Some(ahead) = Ahead::start(scope, analyses, self.outside.clone(), constructors) {
                let _ = self.ahead.set(ahead);
            }
        }
    }

    /// The saved findings, if any, and the inclusion-based points-to computed to key them
    /// (`constructors`: [`crate::summary::SummaryStats::constructors`]). Every function's own
    /// locations must be recorded in `c`.
    pub fn find(
        &self,
        c: &SummaryCache<'_>,
        store: &Store,
        program_key: &Key,
        constructors: &[FuncId],
    ) -> Found {
        let beat = Heartbeat::start(self.options.schedule.progress, "inclusion points-to");
        let t = Instant::now();
        let objects = self.options.inclusion.then(|| {
            c.keep_constructors(constructors);
            let ahead = self.ahead.get().and_then(|a| a.take(constructors));
            ahead.unwrap_or_else(|| {
                SiteObjects::compute(
                    self.program,
                    self.pta,
                    self.models,
                    &self.outside,
                    constructors,
                )
            })
        });
        drop(beat);
        let seconds = t.elapsed().as_secs_f64();
        let (site_objects, object_names) = match objects.as_ref().map(|o| c.site_objects_key(o)) {
            Some((key, names)) => (Some(key), names),
            None => (None, None),
        };
        let locations = c.loc_table();
        let unplaced = findings_key(program_key, self.options, site_objects.as_ref(), &locations);
        let place = FindingsPlace {
            key: placed_key(&unplaced, &locations),
            unplaced,
            locations,
        };
        let relocated = |key: &Key| {
            let run = SavedRun::find(store, key)?;
            relocate::apply(run, &place.locations, self.program, self.pta)
        };
        // Saved where the lines are now; else the latest run with the same findings but for
        // where lines are.
        let (run, moved) = match relocated(&place.key) {
            Some(run) => (Some(run), false),
            None => {
                let latest = latest_at(store, &place.unplaced).filter(|k| *k != place.key);
                (latest.and_then(|k| relocated(&k)), true)
            }
        };
        Found {
            moved: moved && run.is_some(),
            run,
            objects,
            object_names,
            place,
            seconds,
        }
    }
}

/// Where an analysis's findings are kept in the cache: under `key`, which names where their
/// lines are, and found from `unplaced`, which does not.
pub struct FindingsPlace {
    pub key: Key,
    unplaced: Key,
    /// Every location the findings can name, in order.
    locations: LocTable,
}

impl FindingsPlace {
    /// Keeps `run`, the findings this analysis computed (its points-to is `pta`), and makes it
    /// the latest saved run, and the one a run with other lines finds.
    pub fn save_computed(
        &self,
        store: &Store,
        run: &mut SavedRun,
        pta: &PointsTo,
    ) -> anyhow::Result<()> {
        run.relocation = Relocation::new(&run.rendered, &self.locations, pta);
        self.save(store, run)
    }

    /// Keeps `run` (computed, or saved elsewhere and rewritten by [`FindingsLookup::find`])
    /// here, and makes it the latest saved run.
    pub fn save(&self, store: &Store, run: &SavedRun) -> anyhow::Result<()> {
        run.save(store, &self.key)?;
        self.set_latest(store, run)
    }

    /// Makes `run`, saved here, the latest saved run, and the one a run with other lines
    /// finds.
    pub fn set_latest(&self, store: &Store, run: &SavedRun) -> anyhow::Result<()> {
        run.set_latest(store, &self.key)?;
        set_latest_at(store, &self.unplaced, &self.key)
    }
}

/// The key findings are found under: all summaries and the call graph (the summaries cache's
/// program key), the order of the locations they can name, the thread entries asked for, the
/// alias analyses of the race stage and, with `--inclusion`, what it reads of the
/// inclusion-based points-to (`site_objects`).
fn findings_key(
    program: &Key,
    options: &Options,
    site_objects: Option<&Key>,
    locations: &LocTable,
) -> Key {
    let mut k = KeyBuilder::new(crate::cache::findings::FINDINGS);
    k.key(program).key(&locations.order);
    if let Some(o) = site_objects {
        k.key(o);
    }
    k.u64(u64::from(options.entries.roots))
        .u64(u64::from(options.type_alias))
        .u64(u64::from(options.per_access))
        .u64(u64::from(options.inclusion))
        .u64(u64::from(options.entries.reentrant_families));
    for n in &options.entries.names {
        k.str(n);
    }
    for (family, on) in &options.entries.families.settings {
        k.str(family).u64(u64::from(*on));
    }
    k.finish()
}

/// The key findings are kept under: [`findings_key`] and where the lines are.
fn placed_key(unplaced: &Key, locations: &LocTable) -> Key {
    KeyBuilder::new("findings placed")
        .key(unplaced)
        .key(&locations.placed)
        .finish()
}
