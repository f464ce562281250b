//! The analysis pipeline after the front end, as one call: points-to → call graph → summaries
//! → thread entries → warnings. The CLI and the fixture tests both go through here.

mod findings;

use std::sync::OnceLock;
use std::time::Instant;

use crate::cache::classes::ClassTable;
use crate::cache::fingerprint::ProgramText;
use crate::cache::summaries::{KeyInputs, SummaryCache, SummaryCacheStats, SummaryOptions};
use crate::cache::Store;
use crate::callgraph::CallGraph;
use crate::link::Program;
use crate::models::Models;
use crate::progress::Heartbeat;
use crate::pta::inclusion::SiteObjects;
use crate::pta::{FieldMode, PointsTo};
use crate::race::saved::SavedRun;
use crate::race::{self, FilterConfig, RaceInput, RaceStats, ThreadEntry, Warning};
use crate::schedule;
use crate::summary::{self, Summaries, SummaryStore};
pub use findings::FindingsPlace;
use findings::{FindingsLookup, Found};

#[derive(Clone, Debug)]
pub struct Options {
    pub fields: FieldMode,
    /// Indirect calls matched against the pointer's parameter types ([`crate::pta::signature`]).
    pub signature_filter: crate::pta::SignatureFilter,
    /// What the points-to analysis may assume of the code it cannot see.
    pub world: crate::pta::World,
    pub schedule: schedule::Options,
    /// Recursive SCCs of at least this many functions are collapsed
    /// ([`crate::summary::shared`], `--collapse-scc`).
    pub collapse_at: usize,
    /// Publication through calls and returns counts as racy ([`summary::Context`]).
    pub strict_publication: bool,
    /// Accesses of incompatible types are not paired (`crate::race::types`; `--no-type-alias`).
    pub type_alias: bool,
    /// One warning per racing access (`--per-access`).
    pub per_access: bool,
    /// Accesses whose sites' objects are disjoint by the inclusion-based points-to are not
    /// paired ([`crate::pta::inclusion`]; `--no-inclusion`).
    pub inclusion: bool,
    /// Thread entries besides `main` and the start routines found (`--entry`).
    pub entries: EntryOptions,
    /// The summaries [`summarize`] returns ([`analyze`] keeps those the race stage reads).
    pub keep: KeepSummaries,
}

/// Which summaries a run returns. The others are dropped as soon as every caller's summary is
/// computed: a whole kernel's summaries do not fit in memory at once.
#[derive(Clone, Debug, Default)]
pub enum KeepSummaries {
    #[default]
    All,
    Functions(Vec<crate::ir::FuncId>),
}

/// What [`summarize_inner`] keeps: as asked, or the race stage's needs.
enum Keep<'a> {
    Asked(&'a KeepSummaries),
    /// `main`, these extra entries, roots and possible start routines.
    RaceEntries(&'a [crate::ir::FuncId]),
}

/// Extra thread entries: for a library or kernel code there is no `main` to start from.
#[derive(Clone, Debug, Default)]
pub struct EntryOptions {
    /// Functions named as entries; each may run in several threads at once.
    pub names: Vec<String>,
    /// Every defined function that nothing calls is an entry (a library's API).
    pub roots: bool,
    /// Which of the models' entry families are on (`--entry-family`).
    pub families: crate::models::FamilySwitches,
    /// Ignore the families' `non_reentrant`: a handler may run twice at once on one object
    /// (`--reentrant-families`).
    pub reentrant_families: bool,
}

impl Default for Options {
    /// Field-based points-to, all CPUs, the summaries' round bound (as `relay summary`).
    fn default() -> Self {
        Options {
            fields: FieldMode::default(),
            signature_filter: Default::default(),
            world: Default::default(),
            schedule: schedule::Options {
                max_rounds: schedule::DEFAULT_MAX_ROUNDS,
                ..Default::default()
            },
            collapse_at: summary::DEFAULT_COLLAPSE_AT,
            strict_publication: false,
            type_alias: true,
            per_access: false,
            inclusion: true,
            entries: EntryOptions::default(),
            keep: KeepSummaries::All,
        }
    }
}

/// Wall-clock seconds of each stage.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct StageTimes {
    pub points_to: f64,
    pub callgraph: f64,
    pub summaries: f64,
    /// The inclusion-based points-to of the race query (after the summaries).
    pub inclusion: f64,
}

impl StageTimes {
    /// From the instants the stages started, and when the last one ended.
    fn new(points_to: Instant, callgraph: Instant, summaries: Instant, end: Instant) -> Self {
        StageTimes {
            points_to: (callgraph - points_to).as_secs_f64(),
            callgraph: (summaries - callgraph).as_secs_f64(),
            summaries: (end - summaries).as_secs_f64(),
            inclusion: 0.0,
        }
    }

    /// Moves `seconds` of the summaries stage, spent on the inclusion-based points-to (to key
    /// the saved findings), to the inclusion stage.
    fn inclusion_within_summaries(mut self, seconds: f64) -> Self {
        self.summaries = (self.summaries - seconds).max(0.0);
        self.inclusion += seconds;
        self
    }
}

pub struct Analysis {
    pub pta: PointsTo,
    pub cg: CallGraph,
    pub summaries: Summaries,
    /// What the summaries cache did, when one was used.
    pub summaries_cache: Option<SummaryCacheStats>,
    pub entries: Vec<ThreadEntry>,
    pub times: StageTimes,
    /// The findings an earlier run saved for exactly this analysis, when nothing they depend
    /// on changed: then no summary was loaded (`summaries` and `entries` are empty).
    pub findings: Option<SavedRun>,
    /// They were saved where other lines were, and rewritten: keep them again.
    pub findings_moved: bool,
    /// Where this analysis's findings are kept, when a cache is used.
    pub findings_place: Option<FindingsPlace>,
    /// Accesses of incompatible types are not paired ([`Options::type_alias`]).
    pub type_alias: bool,
    /// One warning per racing access ([`Options::per_access`]).
    pub per_access: bool,
    /// The objects of each access site ([`Options::inclusion`]; `None` when off, or when the
    /// findings were reused).
    pub objects: Option<crate::pta::inclusion::SiteObjects>,
    /// How the pair stage's digests name this run's ids ([`race::memo::StableIds`]; ids as
    /// they are without a cache).
    pub stable_ids: race::memo::StableIds,
}

impl Analysis {
    /// The warnings between the thread entries (they borrow the summaries), filtered ones
    /// included and marked.
    pub fn warnings<'a>(
        &'a self,
        program: &'a Program,
        filters: &FilterConfig,
    ) -> (Vec<Warning<'a>>, RaceStats) {
        let input = RaceInput {
            program,
            pta: &self.pta,
            cg: &self.cg,
            summaries: &self.summaries,
            entries: &self.entries,
            type_alias: self.type_alias,
            per_access: self.per_access,
            objects: self.objects.as_ref(),
            progress: false,
            memo: None,
        };
        race::warnings(&input, filters)
    }
}

/// Points-to, call graph and summaries (everything `relay summary` needs).
pub fn summarize(
    program: &Program,
    models: &Models,
    options: &Options,
) -> (PointsTo, CallGraph, Summaries, StageTimes) {
    let s = summarize_cached(program, models, options, None);
    (s.pta, s.cg, s.summaries, s.times)
}

/// [`summarize`] with the summaries cache.
pub fn summarize_cached(
    program: &Program,
    models: &Models,
    options: &Options,
    store: Option<&Store>,
) -> Summarized {
    summarize_inner(program, models, options, store, Keep::Asked(&options.keep))
}

/// What the pipeline computed up to the summaries, and what the summaries cache did.
pub struct Summarized {
    pub pta: PointsTo,
    pub cg: CallGraph,
    pub summaries: Summaries,
    pub times: StageTimes,
    /// What the summaries cache did, when one was used.
    pub cache: Option<SummaryCacheStats>,
    /// For the race stage, with a cache: the findings saved for this analysis, when nothing
    /// they depend on changed (then no summary was loaded), where to keep them, and the
    /// inclusion-based points-to computed to look for them.
    found: Option<Found>,
    /// For the race stage: the functions of the switched-on entry families.
    families: Vec<race::families::FamilyEntry>,
    /// For the race stage's digests, with a cache: this run's ids named by what they stand for.
    stable_ids: race::memo::StableIds,
}

/// Points-to, call graph, summaries; for the race stage, first looks for findings saved for
/// this very analysis (every SCC stored under its current key, same entries) and, if there are,
/// loads no summary at all.
fn summarize_inner(
    program: &Program,
    models: &Models,
    options: &Options,
    store: Option<&Store>,
    keep: Keep<'_>,
) -> Summarized {
    let findings = matches!(keep, Keep::RaceEntries(_));
    let t0 = Instant::now();
    let beat = Heartbeat::start(options.schedule.progress, "points-to");
    // What the summaries' keys read of the program's text is computed beside the points-to
    // analysis, which leaves a core idle most of the time (its time counts as points-to's).
    let (pta, text) = rayon::join(
        || {
            PointsTo::analyze_with_options(program, options.fields, models, options.world)
                .with_signature_filter(options.signature_filter)
        },
        || store.map(|_| ProgramText::of(program)),
    );
    drop(beat);
    let t1 = Instant::now();
    let beat = Heartbeat::start(options.schedule.progress, "call graph");
    // The entry families and the summaries cache's class table need only the points-to
    // classes: found beside the call graph (their time counts as the call graph's; the class
    // table is mostly one sequential pass, which the call graph's parallel part absorbs).
    let (cg, (families, classes)) = rayon::join(
        || CallGraph::build(program, &pta),
        || {
            rayon::join(
                || {
                    if findings {
                        race::families::family_entries(
                            program,
                            &pta,
                            models.entry_families(),
                            &options.entries.families,
                            !options.entries.reentrant_families,
                        )
                    } else {
                        Vec::new()
                    }
                },
                || {
                    text.as_ref()
                        .map(|text| ClassTable::new(program, &pta, &text.labels))
                },
            )
        },
    );
    drop(beat);
    let t2 = Instant::now();
    let inputs = text
        .zip(classes)
        .and_then(|(text, classes)| key_inputs(text, classes));
    let stage = AfterCallGraph {
        program,
        pta: &pta,
        cg: &cg,
        models,
        options,
        store,
        families: &families,
    };
    // The inclusion-based points-to may run on a thread of its own beside the summaries
    // (`Ahead`): the scope ends before `pta` and `cg` are handed out.
    let cached = std::thread::scope(|scope| stage.summaries(scope, keep, inputs));
    let times =
        |seconds| StageTimes::new(t0, t1, t2, Instant::now()).inclusion_within_summaries(seconds);
    match cached {
        // The saved findings, found before any summary was needed.
        Cached::Found(sccs, found) => Summarized {
            summaries: Summaries::all_reused(program.functions.len(), sccs),
            pta,
            cg,
            times: times(found.seconds),
            families,
            found: Some(*found),
            stable_ids: Default::default(),
            cache: Some(SummaryCacheStats {
                reused: sccs,
                stored: 0,
                loaded: 0,
                unportable: 0,
                kept: 0,
                lost_before: 0,
                repartitioned: 0,
            }),
        },
        Cached::Computed(computed) => {
            let (summaries, found, cache, stable_ids) = *computed;
            Summarized {
                pta,
                cg,
                summaries,
                times: times(found.as_ref().map_or(0.0, |f| f.seconds)),
                families,
                // Not when the cache was given up.
                found: found.filter(|_| cache.is_some()),
                cache,
                stable_ids,
            }
        }
    }
}

/// What the summaries stage reads: the program and what the stages before made of it.
struct AfterCallGraph<'p> {
    program: &'p Program,
    pta: &'p PointsTo,
    cg: &'p CallGraph,
    models: &'p Models,
    options: &'p Options,
    store: Option<&'p Store>,
    families: &'p [race::families::FamilyEntry],
}

impl<'p> AfterCallGraph<'p> {
    /// How the race stage looks for saved findings (`relay analyze`), or `None`.
    fn lookup(&self, keep: &Keep<'_>) -> Option<FindingsLookup<'p>> {
        let Keep::RaceEntries(named) = keep else {
            return None;
        };
        let (program, pta, options) = (self.program, self.pta, self.options);
        Some(FindingsLookup {
            program,
            pta,
            models: self.models,
            options,
            // Read only by the inclusion-based points-to.
            outside: match options.inclusion {
                true => race::entries::outside_entries(
                    program,
                    self.cg,
                    pta,
                    named,
                    options.entries.roots,
                    self.families,
                ),
                false => Vec::new(),
            },
            ahead: OnceLock::new(),
        })
    }

    /// The summaries, through the cache when there is one (`inputs`), after looking for the
    /// saved findings (the inclusion-based points-to started in `scope` beside the keys).
    fn summaries<'s>(
        &self,
        scope: &'s std::thread::Scope<'s, '_>,
        keep: Keep<'_>,
        inputs: Option<KeyInputs>,
    ) -> Cached
    where
        'p: 's,
    {
        let (program, pta, cg, models, options, store) = (
            self.program,
            self.pta,
            self.cg,
            self.models,
            self.options,
            self.store,
        );
        let lookup: Option<FindingsLookup<'s>> = self.lookup(&keep);
        // Which summaries to keep is needed only when the saved findings are not found at
        // once; computed beside the SCCs' keys, which are mostly one sequential pass.
        let ((cache, saved), (keep, called_from_outside)) = rayon::join(
            || {
                let cache = store.zip(inputs).map(|(store, inputs)| {
                    summary_cache(store, program, pta, cg, models, options, inputs)
                });
                if let (Some(c), Some(lookup)) = (&cache, &lookup) {
                    lookup.compute_ahead(scope, c);
                }
                let saved = cache.as_ref().zip(store).zip(lookup.as_ref()).and_then(
                    |((c, store), lookup)| {
                        let (program_key, constructors) = c.stored_program_key()?;
                        let found = lookup.find(c, store, &program_key, &constructors);
                        Some((c.sccs_with_bodies(), found))
                    },
                );
                (cache, saved)
            },
            || {
                (
                    summaries_to_keep(program, pta, cg, models, keep, self.families),
                    collapses(cg, options.collapse_at)
                        .then(|| called_from_outside(program, models, &options.entries)),
                )
            },
        );
        let saved = match saved {
            Some((sccs, found)) if found.run.is_some() => {
                if let Some(c) = &cache {
                    c.save_metas();
                }
                return Cached::Found(sccs, Box::new(found));
            }
            other => other,
        };
        // Not found there: the findings are not looked for again (nothing they depend on can
        // change before the race stage), which reads what the lookup computed.
        let mut found = saved.map(|(_, f)| f);
        let run = SummaryRun {
            program,
            pta,
            cg,
            models,
            options,
            keep,
            called_from_outside,
        };
        let lookup = lookup.filter(|_| found.is_none());
        let stable_ids = cache.as_ref().map(|c| c.stable_ids()).unwrap_or_default();
        let (summaries, cache) = match cache {
            Some(cache) => {
                let (sums, looked, stats) = run.cached(cache, store, lookup.as_ref());
                found = found.or(looked);
                (sums, stats)
            }
            None => (run.compute(None, None), None),
        };
        Cached::Computed(Box::new((summaries, found, cache, stable_ids)))
    }
}

/// What [`AfterCallGraph::summaries`] made: the saved findings,
/// found before any summary was needed (with how many SCCs have a body), or the summaries,
/// what the lookup found, the cache's counts and the ids' stable names.
enum Cached {
    Found(usize, Box<Found>),
    Computed(Box<Computed>),
}

/// [`Cached::Computed`]'s parts.
type Computed = (
    Summaries,
    Option<Found>,
    Option<SummaryCacheStats>,
    race::memo::StableIds,
);

/// [`summary::Setup::keep`] for what the run keeps (`None`: every summary).
fn summaries_to_keep(
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    models: &Models,
    keep: Keep<'_>,
    families: &[race::families::FamilyEntry],
) -> Option<Vec<bool>> {
    match keep {
        Keep::Asked(KeepSummaries::All) => None,
        Keep::Asked(KeepSummaries::Functions(fs)) => {
            let mut k = vec![false; program.functions.len()];
            for f in fs {
                k[f.index()] = true;
            }
            Some(k)
        }
        Keep::RaceEntries(extra) => {
            let extra: Vec<crate::ir::FuncId> = extra
                .iter()
                .copied()
                .chain(families.iter().map(|f| f.func))
                .collect();
            Some(race::entries::summaries_needed(
                program, pta, cg, models, &extra,
            ))
        }
    }
}

/// Whether some recursive SCC is big enough to be collapsed ([`summary::shared`]).
fn collapses(cg: &CallGraph, collapse_at: usize) -> bool {
    cg.sccs.iter().any(|s| summary::collapses(s, collapse_at))
}

/// The functions that may be called other than by the program's direct calls
/// ([`summary::owned::called_from_outside`]): besides those whose address is used, `main`, the
/// `--entry` names and every entry family's function names (switched on or not).
fn called_from_outside(program: &Program, models: &Models, entries: &EntryOptions) -> Vec<bool> {
    let families = models.entry_families();
    summary::owned::called_from_outside(program, |name| {
        name == "main"
            || entries.names.iter().any(|n| n == name)
            || families.iter().any(|f| f.names(name))
    })
}

/// The summaries cache of a run, or `None` (with a note) when the points-to classes have no
/// canonical names.
fn summary_cache<'a>(
    store: &'a Store,
    program: &'a Program,
    pta: &'a PointsTo,
    cg: &'a CallGraph,
    models: &Models,
    options: &Options,
    inputs: KeyInputs,
) -> SummaryCache<'a> {
    let summary_options = SummaryOptions {
        fields: options.fields,
        signature_filter: options.signature_filter,
        world: options.world,
        max_rounds: options.schedule.max_rounds,
        collapse_at: options.collapse_at,
        strict_publication: options.strict_publication,
    };
    SummaryCache::new(store, program, pta, cg, models, &summary_options, inputs)
}

/// The summaries' key inputs, unless the points-to classes have no canonical names
/// ([`ClassTable::new`] gave `None`): then summaries are not cached.
fn key_inputs(text: ProgramText, classes: Option<ClassTable>) -> Option<KeyInputs> {
    let Some(classes) = classes else {
        eprintln!(
            "relay: note: the points-to classes have no canonical names (two string \
             literals with one text in different classes); summaries are not cached"
        );
        return None;
    };
    Some(KeyInputs { text, classes })
}

/// The summaries stage of one run.
struct SummaryRun<'a> {
    program: &'a Program,
    pta: &'a PointsTo,
    cg: &'a CallGraph,
    models: &'a Models,
    options: &'a Options,
    /// [`summary::Setup::keep`].
    keep: Option<Vec<bool>>,
    /// [`summary::Setup::called_from_outside`] (computed only when some SCC is collapsed).
    called_from_outside: Option<Vec<bool>>,
}

impl SummaryRun<'_> {
    /// The summaries; `sets_needed` as [`summary::Setup::sets_needed`].
    fn compute<'s>(
        &self,
        store: Option<&'s dyn summary::SummaryStore>,
        sets_needed: Option<summary::SetsNeeded<'s>>,
    ) -> Summaries {
        summary::compute_with_store(
            self.program,
            self.pta,
            self.cg,
            self.models,
            &self.options.schedule,
            summary::Setup {
                store,
                keep: self.keep.clone(),
                collapse_at: self.options.collapse_at,
                strict_publication: self.options.strict_publication,
                called_from_outside: self.called_from_outside.clone(),
                sets_needed,
            },
        )
    }

    /// The summaries through the cache: stored SCCs are reused without loading their
    /// summaries; then either the findings saved for exactly this analysis are found
    /// (`lookup`: the race stage is next) and no summary is loaded, or the kept summaries
    /// still stored are loaded (with the inclusion-based points-to the lookup computed). A
    /// summary the cache lost (a corrupt or deleted entry) makes the run repeat — the lost
    /// SCCs' entries are gone by then, so they are analysed again —; a third attempt goes
    /// without the cache.
    fn cached(
        &self,
        first: SummaryCache<'_>,
        store: Option<&Store>,
        lookup: Option<&FindingsLookup<'_>>,
    ) -> (Summaries, Option<Found>, Option<SummaryCacheStats>) {
        let mut cache = Some(first);
        let mut lost_before = 0;
        let stats = |c: &SummaryCache<'_>, lost_before| SummaryCacheStats {
            lost_before,
            ..c.stats()
        };
        for _ in 0..2 {
            let Some(c) = cache.take() else { break };
            // The saved findings, looked for once every SCC is keyed: when they are there, no
            // summary is read, and a reused collapsed SCC's set is not rebuilt.
            let mut found: Option<Found> = None;
            let look = |constructors: &[crate::ir::FuncId]| {
                let (Some(lookup), Some(store)) = (lookup, store) else {
                    return true;
                };
                if c.lost() != 0 {
                    return true;
                }
                let f = found.insert(lookup.find(&c, store, &c.program_key(), constructors));
                f.run.is_none()
            };
            let sets_needed = lookup.map(|_| -> summary::SetsNeeded<'_> { Box::new(look) });
            let mut sums = self.compute(Some(&c), sets_needed);
            if found.as_ref().is_some_and(|f| f.run.is_some()) {
                c.save_metas();
                return (sums, found, Some(stats(&c, lost_before)));
            }
            let beat = Heartbeat::start(self.options.schedule.progress, "loading summaries");
            sums.load_stored(&c);
            drop(beat);
            c.save_metas();
            if c.lost() == 0 {
                return (sums, found, Some(stats(&c, lost_before)));
            }
            lost_before += c.lost();
            cache = store.and_then(|s| {
                let text = ProgramText::of(self.program);
                let classes = ClassTable::new(self.program, self.pta, &text.labels);
                let inputs = key_inputs(text, classes)?;
                Some(summary_cache(
                    s,
                    self.program,
                    self.pta,
                    self.cg,
                    self.models,
                    self.options,
                    inputs,
                ))
            });
        }
        if lost_before > 0 {
            eprintln!(
                "relay: note: {lost_before} stored summaries could not be loaded in two attempts \
                 (damaged entries, or functions moved past each other since they were stored); \
                 analysing without the cache"
            );
        }
        (self.compute(None, None), None, None)
    }
}

/// The whole pipeline up to the thread entries; [`Analysis::warnings`] pairs their accesses.
/// Fails only on an `--entry` that names no defined function.
pub fn analyze(program: &Program, models: &Models, options: &Options) -> anyhow::Result<Analysis> {
    analyze_cached(program, models, options, None)
}

/// [`analyze`], reusing and storing summaries in `store` when one is given (the summaries
/// cache: an SCC whose key is unchanged is loaded instead of analysed).
pub fn analyze_cached(
    program: &Program,
    models: &Models,
    options: &Options,
    store: Option<&Store>,
) -> anyhow::Result<Analysis> {
    let extra = extra_entries(program, &options.entries)?;
    let Summarized {
        pta,
        cg,
        summaries,
        times,
        families,
        found,
        cache,
        mut stable_ids,
    } = summarize_inner(program, models, options, store, Keep::RaceEntries(&extra));
    let (findings, findings_moved, objects, findings_place) = match found {
        Some(f) => {
            stable_ids.objects = f.object_names.map(std::sync::Arc::new);
            (f.run, f.moved, f.objects, Some(f.place))
        }
        None => (None, false, None, None),
    };
    if findings.is_some() {
        return Ok(Analysis {
            pta,
            cg,
            summaries,
            summaries_cache: cache,
            entries: Vec::new(),
            times,
            findings,
            findings_moved,
            findings_place,
            type_alias: options.type_alias,
            per_access: options.per_access,
            objects: None,
            stable_ids,
        });
    }
    let named = extra;
    // With `--entry-roots` every defined function nothing calls is an entry from outside, as
    // the named ones are.
    let mut extra = named.clone();
    if options.entries.roots {
        extra.extend(race::entries::uncalled_functions(program, &cg, &pta));
    }
    let beat = Heartbeat::start(options.schedule.progress, "thread entries");
    let entries = race::thread_entries(program, &cg, &summaries, &extra, &families, &pta);
    drop(beat);
    // `summaries_needed` must have kept every entry's summary (a dropped one would silently
    // lose the entry's accesses).
    let failed = |f| {
        summaries
            .schedule
            .failed
            .iter()
            .any(|s| s.functions.contains(&f))
    };
    for e in &entries {
        let f = e.func;
        if program.functions[f.index()].body.is_some() && summaries.get(f).is_none() && !failed(f) {
            eprintln!(
                "relay: internal error: the summary of thread entry `{}` was dropped; its accesses are missing",
                program.function_name(f)
            );
        }
    }
    let t = Instant::now();
    let objects = objects.or_else(|| {
        let beat = Heartbeat::start(options.schedule.progress, "inclusion points-to");
        let outside = race::entries::outside_entries(
            program,
            &cg,
            &pta,
            &named,
            options.entries.roots,
            &families,
        );
        let objects = options.inclusion.then(|| {
            SiteObjects::compute(
                program,
                &pta,
                models,
                &outside,
                &summaries.stats.constructors,
            )
        });
        drop(beat);
        objects
    });
    let mut times = times;
    times.inclusion += t.elapsed().as_secs_f64();
    Ok(Analysis {
        pta,
        cg,
        summaries,
        summaries_cache: cache,
        entries,
        times,
        findings: None,
        findings_moved: false,
        findings_place,
        type_alias: options.type_alias,
        per_access: options.per_access,
        objects,
        stable_ids,
    })
}

fn extra_entries(program: &Program, e: &EntryOptions) -> anyhow::Result<Vec<crate::ir::FuncId>> {
    let by_name: std::collections::HashMap<&str, crate::ir::FuncId> = (0..program.functions.len()
        as u32)
        .map(crate::ir::FuncId)
        .filter(|f| program.functions[f.index()].body.is_some())
        .map(|f| (program.function_name(f), f))
        .collect();
    e.names
        .iter()
        .map(|n| {
            by_name.get(n.as_str()).copied().ok_or_else(|| {
                anyhow::anyhow!("--entry {n}: no function with a body has this name")
            })
        })
        .collect()
}
