//! Bottom-up function summaries (RELAY §2–3.3): for every function, independent of its callers,
//! the relative lockset at its exit, its guarded accesses (its own and its callees', rebound to
//! its formals and globals), its return value, and the threads it creates.
//!
//! - [`path`]: symbolic lvalues (access paths) and their points-to classes, k-limited;
//! - [`value`]: symbolic values;
//! - [`lockset`]: the relative lockset lattice, lockUpdate, rebind;
//! - [`access`]: guarded accesses and thread creations;
//! - [`threads`]: threads created and joined (the phase of an access);
//! - [`exec`]: the per-function dataflow (symbolic execution + locksets) and access collection;
//! - [`print`]: Figure-1-style tables.
//!
//! [`compute`] runs the per-function analysis over the call graph's SCCs with the parallel
//! scheduler ([`crate::schedule`]); a recursive SCC iterates to a fixpoint bounded by
//! [`crate::schedule::Options::max_rounds`].

pub mod access;
pub mod chain;
mod class_reads;
pub mod exec;
pub mod heap;
pub mod intern;
pub mod lockset;
pub mod owned;
pub mod path;
pub mod print;
pub mod remap;
pub mod shared;
pub mod sorted_set;
mod stored_sets;
pub mod threads;
pub mod value;

use std::sync::Arc;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::callgraph::{CallGraph, Scc};
use crate::ir::FuncId;
use crate::link::Program;
use crate::models::{Model, Models};
use crate::pta::PointsTo;
use crate::schedule::{self, Digest, Lookup, Made, SccAnalysis, Schedule, StepMemo};
use shared::SharedAccesses;

pub use access::{AccessKind, AccessTables, AccessView, CallSite, GuardedAccess, Spawn, Witness};
pub use chain::Chain;
pub use lockset::{Lock, RelativeLockset};
pub use path::{Path, Root, Step};
pub use threads::{Phase, ThreadState};
pub use value::SymVal;

/// Whether a recursive SCC is collapsed at size `collapse_at` ([`shared`]).
pub fn collapses(scc: &Scc, collapse_at: usize) -> bool {
    scc.recursive && scc.functions.len() >= collapse_at.max(2)
}

/// The default size from which a recursive SCC is collapsed (`--collapse-scc`, [`shared`]).
pub const DEFAULT_COLLAPSE_AT: usize = 5000;

/// A function's summary. Plain serde data (the cache stores it).
#[derive(Clone, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
pub struct Summary {
    /// The relative lockset at the function's exit (RELAY's LockSummary).
    pub lockset: RelativeLockset,
    /// The symbolic return value (⊤ when unknown).
    pub ret: SymVal,
    /// RELAY's AccessSummary: accesses refer to `tables` for their paths and locksets.
    pub accesses: Vec<GuardedAccess>,
    pub tables: AccessTables,
    pub spawns: Vec<Spawn>,
    /// Threads created and joined, at the exit (relative to the entry).
    #[serde(default)]
    pub threads: ThreadState,
    /// Per formal: its value may escape (stored, returned, passed on to something keeping it).
    #[serde(default)]
    pub formal_escapes: Vec<bool>,
    /// Per formal: the object it points to may be made to hold pointers to itself
    /// (`p->next = p`; `exec/escape.rs`).
    #[serde(default)]
    pub formal_self_refs: Vec<bool>,
    /// Per formal: a value loaded from the object it points to (or reached from it) is kept —
    /// an escape if the object holds pointers to itself.
    #[serde(default)]
    pub formal_loads_escape: Vec<bool>,
    /// Every value the function returns points to an object allocated during the call that
    /// nothing else points to yet (or is null): a caller treats the call as an allocation
    /// (interprocedural thread escape, [`exec`]'s `fresh`).
    #[serde(default)]
    pub returns_fresh: bool,
    /// The calls to other members of the function's collapsed SCC, with what each argument
    /// points to ([`owned`]); empty outside a collapsed SCC.
    #[serde(default)]
    pub member_calls: Vec<owned::MemberCall>,
    /// The dataflow needed widening (a loop did not stabilise within the bound).
    pub widened: bool,
    /// The function has a model; its body (if any) was not analysed.
    pub modelled: bool,
    /// The accesses exceeded [`access::MAX_ACCESSES`] and were merged per representative path.
    pub coarsened: bool,
    /// The accesses of collapsed SCCs this function may reach ([`shared`]), sorted by SCC: its
    /// own SCC's and its callees'. Part of the function's accesses, held by reference. Not
    /// serialised here: a store keeps the SCCs' names ([`SharedAccesses::scc`]) and
    /// [`SummaryStore::load`] resolves them.
    #[serde(skip)]
    pub shared: Vec<std::sync::Arc<shared::SharedAccesses>>,
}

impl Summary {
    /// An access with its path and lockset resolved.
    pub fn view<'a>(&'a self, a: &'a GuardedAccess) -> AccessView<'a> {
        self.tables.view(a)
    }

    /// Equal up to witnesses (locations and call chains kept for reports): what callers'
    /// summaries depend on, and what a recursive SCC's fixpoint must stabilise.
    pub fn same_facts(&self, other: &Summary) -> bool {
        let same_access = |(a, b): (AccessView<'_>, AccessView<'_>)| {
            (a.path, a.locks, a.kind, a.atomic, a.value, a.class, a.phase)
                == (b.path, b.locks, b.kind, b.atomic, b.value, b.class, b.phase)
        };
        let same_spawn = |(a, b): (&Spawn, &Spawn)| {
            (&a.start, a.loc, a.in_loop, a.paths, &a.arg)
                == (&b.start, b.loc, b.in_loop, b.paths, &b.arg)
                && (a.fresh_arg, a.alone, a.distinct_arg) == (b.fresh_arg, b.alone, b.distinct_arg)
        };
        self.lockset == other.lockset
            && self.threads == other.threads
            && self.formal_escapes == other.formal_escapes
            && self.formal_self_refs == other.formal_self_refs
            && self.formal_loads_escape == other.formal_loads_escape
            && self.returns_fresh == other.returns_fresh
            && self.member_calls == other.member_calls
            && self.ret == other.ret
            && self.modelled == other.modelled
            && self.shared == other.shared
            && self.accesses.len() == other.accesses.len()
            && self.spawns.len() == other.spawns.len()
            && self.spawns.iter().zip(&other.spawns).all(same_spawn)
            && self.accesses().zip(other.accesses()).all(same_access)
    }

    /// The summary's own accesses, resolved.
    pub fn accesses(&self) -> impl Iterator<Item = AccessView<'_>> {
        self.accesses.iter().map(|a| self.view(a))
    }

    /// Every access: the own ones, then those of the collapsed SCCs it reaches.
    pub fn all_accesses(&self) -> impl Iterator<Item = AccessView<'_>> {
        self.accesses()
            .chain(self.shared.iter().flat_map(|s| s.accesses()))
    }
}

/// Somewhere summaries of earlier runs are kept (the summaries cache, [`crate::cache::summaries`]):
/// the scheduler asks it before analysing an SCC and gives it every SCC it analysed. Stored
/// summaries are loaded one by one, only when read.
pub trait SummaryStore: Sync {
    /// If `scc` is stored under its current key: parallel to its functions, the facts of
    /// each one's summary (`None`: it has none).
    fn reuse(&self, scc: &Scc) -> Option<Vec<Option<SummaryFacts>>>;
    /// The summary of `f`, whose SCC [`SummaryStore::reuse`] found, with the shared sets it
    /// refers to resolved by `shared` (by the SCC that names them); `None` if the store lost
    /// it, or a set is not resolved ([`SummaryStore::lost`] counts it).
    fn load(&self, f: FuncId, shared: &SharedSets) -> Option<Summary>;
    /// How many summaries found stored could not be loaded: a run that read none of them
    /// must be repeated.
    fn lost(&self) -> usize;
    /// The summaries just computed for `scc`; `digests` as [`crate::schedule::SccAnalysis::finished`]
    /// gives them.
    /// `read`: the nodes whose points-to class their analysis asked for
    /// ([`crate::reads`]).
    fn finished(
        &self,
        scc: &Scc,
        summaries: &[Option<&Summary>],
        digests: Option<&[Option<Digest>]>,
        read: &[u32],
    );
    /// The steps of collapsed `scc`'s fixpoint, if the store keeps them.
    fn scc_steps(&self, scc: &Scc) -> Option<Box<dyn SccSteps + '_>>;
}

/// The stored steps of one collapsed SCC's fixpoint ([`StepMemo`]: the same calls, with the
/// shared sets a loaded summary refers to resolved by `shared`; a made summary's
/// [`Made::read`] names its [`Summary::read_by_members`]).
pub trait SccSteps: Sync {
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest;
    /// The outcome of `f`'s step named `input` in the stored fixpoint, if it may be replayed.
    fn replay(&self, f: FuncId, input: &Digest) -> Option<Option<Made>>;
    fn load(&self, f: FuncId, digest: &Digest, shared: &SharedSets) -> Option<Summary>;
    fn record(&self, f: FuncId, input: &Digest, output: Option<&Summary>) -> Option<Made>;
    /// `read`: per member, the nodes whose points-to class its analysed steps asked for.
    fn finish(&self, read: &[(FuncId, Vec<u32>)]);
}

/// The shared sets of the run's collapsed SCCs, by the SCC's name ([`SharedAccesses::scc`]):
/// built when a collapsed SCC is analysed, or rebuilt from its stored members' summaries.
pub type SharedSets = std::sync::RwLock<rustc_hash::FxHashMap<FuncId, Arc<SharedAccesses>>>;

/// The set named `scc` in `sets`.
pub fn shared_set(sets: &SharedSets, scc: FuncId) -> Option<Arc<SharedAccesses>> {
    sets.read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&scc)
        .cloned()
}

/// What the statistics and the later stages need of a summary without loading it: stored
/// beside it in the cache.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SummaryFacts {
    pub returns_fresh: bool,
    pub modelled: bool,
    pub widened: bool,
    pub coarsened: bool,
    pub accesses: usize,
    pub bytes: heap::SummaryBytes,
}

impl SummaryFacts {
    pub fn of(s: &Summary) -> SummaryFacts {
        SummaryFacts {
            returns_fresh: s.returns_fresh,
            modelled: s.modelled,
            widened: s.widened,
            coarsened: s.coarsened,
            accesses: s.accesses.len(),
            bytes: s.heap_bytes(),
        }
    }
}

/// What every function's analysis shares.
pub struct Context<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    /// The model of each function (by `FuncId`), if it has one.
    models: Vec<Option<&'a Model>>,
    /// Classes reachable from globals or thread arguments.
    pub escaping: rustc_hash::FxHashSet<u32>,
    cg: &'a CallGraph,
    store: Option<&'a dyn SummaryStore>,
    /// By `FuncId`: the summaries wanted at the end; `None` keeps all.
    keep: Option<Vec<bool>>,
    /// Statistics of the SCCs done so far (summaries may be dropped before the end).
    stats: std::sync::Mutex<StatsAcc>,
    /// Recursive SCCs of at least this many functions are collapsed ([`shared`]).
    pub collapse_at: usize,
    /// A fresh object handed to a callee that keeps it, or returned, with no lock held, is
    /// a racy publication too (`--strict-publication`; see `exec/fresh.rs`).
    pub strict_publication: bool,
    /// The collapsed SCCs' shared sets so far.
    shared_sets: SharedSets,
    /// By `FuncId`: the functions that may be called other than by the direct calls of the
    /// call graph (address used, a named entry). `None`: any function may be; no formal of a
    /// collapsed SCC is then owned ([`owned`]).
    pub called_from_outside: Option<Vec<bool>>,
    /// Collapsed SCCs reused from the store whose sets are not rebuilt yet ([`stored_sets`]).
    pending_sets: stored_sets::PendingSets,
    /// With a store: the nodes whose points-to class each function's analysis asked for.
    class_reads: class_reads::ReadLog,
}

impl<'a> Context<'a> {
    pub fn new(
        program: &'a Program,
        pta: &'a PointsTo,
        cg: &'a CallGraph,
        models: &'a Models,
    ) -> Self {
        let models: Vec<Option<&Model>> = (0..program.functions.len())
            .map(|i| models.get(program.function_name(FuncId(i as u32))))
            .collect();
        // The names the analysis gives pseudo locations get their ids now, in function order,
        // not in whatever order the parallel SCCs reach them: ids order paths.
        program.names.intern(exec::ANONYMOUS_THREAD);
        for m in models.iter().flatten() {
            for name in m.pseudo_names() {
                program.names.intern(name);
            }
        }
        Context {
            program,
            pta,
            models,
            escaping: pta.escaping(),
            cg,
            store: None,
            keep: None,
            stats: Default::default(),
            collapse_at: DEFAULT_COLLAPSE_AT,
            strict_publication: false,
            called_from_outside: None,
            shared_sets: Default::default(),
            pending_sets: Default::default(),
            class_reads: Default::default(),
        }
    }

    /// Whether `scc` is analysed as a collapsed SCC ([`shared`]).
    pub fn collapsed(&self, scc: &Scc) -> bool {
        collapses(scc, self.collapse_at)
    }

    /// Whether a call from `f` to `g` stays inside one collapsed SCC.
    pub fn collapsed_call(&self, f: FuncId, g: FuncId) -> bool {
        match (self.cg.scc_of.get(f.index()), self.cg.scc_of.get(g.index())) {
            (Some(a), Some(b)) if a == b => self.collapsed(self.cg.scc(*a)),
            _ => false,
        }
    }

    /// Whether a call from `f` to `g` is recursive (both in one SCC of the call graph).
    pub fn recursive_call(&self, f: FuncId, g: FuncId) -> bool {
        self.cg.scc_of.get(f.index()) == self.cg.scc_of.get(g.index())
    }

    pub fn model(&self, f: FuncId) -> Option<&'a Model> {
        self.models.get(f.index()).copied().flatten()
    }
}

impl SccAnalysis for Context<'_> {
    type Summary = Summary;

    fn analyze(&self, f: FuncId, callees: &Lookup<'_, Summary>) -> Summary {
        if self.model(f).is_some() {
            return Summary {
                modelled: true,
                ..Summary::default()
            };
        }
        match &self.program.functions[f.index()].body {
            Some(body) => self
                .class_reads
                .run(f, || exec::FnAnalysis::new(self, f, body, callees).run()),
            None => Summary::default(),
        }
    }

    fn changed(&self, old: &Summary, new: &Summary) -> bool {
        !old.same_facts(new)
    }

    fn complete(&self, scc: &Scc, summaries: &mut [Option<Arc<Summary>>]) {
        if !self.collapsed(scc) {
            return;
        }
        let Some(set) = self.name_set(scc) else {
            return;
        };
        self.class_reads
            .run(set.scc, || self.share(scc, summaries, &set));
        for s in summaries.iter_mut().flatten() {
            shared::merge_into(&mut Arc::make_mut(s).shared, std::slice::from_ref(&set));
        }
    }

    fn stored(&self, scc: &Scc) -> Option<Vec<bool>> {
        let store = self.store?;
        let facts = store.reuse(scc)?;
        if self.collapsed(scc) {
            if let Some(set) = self.name_set(scc) {
                let of = self.cg.scc_of[set.scc.index()];
                self.pending_sets.add(of, set, facts.clone());
            }
        }
        let mut acc = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        for (&f, facts) in scc.functions.iter().zip(&facts) {
            if let Some(facts) = facts {
                acc.add(f, facts);
            }
        }
        Some(facts.iter().map(Option::is_some).collect())
    }

    fn load(&self, f: FuncId) -> Option<Summary> {
        self.store?.load(f, &self.shared_sets)
    }

    fn finished(
        &self,
        scc: &Scc,
        summaries: &[Option<&Summary>],
        digests: Option<&[Option<Digest>]>,
    ) {
        if let Some(store) = self.store {
            let read = self.class_reads.of(&scc.functions);
            store.finished(scc, summaries, digests, &read);
            self.class_reads.clear(&scc.functions);
        }
        let mut acc = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        for (&f, s) in scc.functions.iter().zip(summaries) {
            if let Some(s) = s {
                acc.add(f, &SummaryFacts::of(s));
            }
        }
        acc.sample_chains();
    }

    fn keep(&self, f: FuncId) -> bool {
        self.keep.as_ref().is_none_or(|k| k[f.index()])
    }

    /// A collapsed SCC's steps are memoised by the store: its members' summaries hold only
    /// their own accesses, so an edit changes few of them, and its key changes with any.
    fn steps(&self, scc: &Scc) -> Option<Box<dyn StepMemo<Summary> + '_>> {
        if !self.collapsed(scc) {
            return None;
        }
        let steps = self.store?.scc_steps(scc)?;
        Some(Box::new(ContextSteps {
            cx: self,
            steps,
            functions: scc.functions.clone(),
        }))
    }
}

/// A collapsed SCC's stored steps, with what loading a summary needs of the context.
struct ContextSteps<'c, 'a> {
    cx: &'c Context<'a>,
    steps: Box<dyn SccSteps + 'c>,
    /// The SCC's.
    functions: Vec<FuncId>,
}

impl StepMemo<Summary> for ContextSteps<'_, '_> {
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest {
        self.steps.input(f, own, members)
    }

    fn replay(&self, f: FuncId, input: &Digest) -> Option<Option<Made>> {
        self.steps.replay(f, input)
    }

    fn load(&self, f: FuncId, digest: &Digest) -> Option<Summary> {
        self.steps.load(f, digest, &self.cx.shared_sets)
    }

    fn record(&self, f: FuncId, input: &Digest, output: Option<&Summary>) -> Option<Made> {
        self.steps.record(f, input, output)
    }

    fn finish(&self) {
        self.steps
            .finish(&self.cx.class_reads.each(&self.functions));
    }
}

impl Context<'_> {
    /// Names the shared set of collapsed `scc` among the run's sets, its accesses not built yet:
    /// summaries that refer to it can be loaded from then on.
    fn name_set(&self, scc: &Scc) -> Option<Arc<SharedAccesses>> {
        let &first = scc.functions.first()?;
        let set = Arc::new(SharedAccesses::named(first, scc.functions.len()));
        self.shared_sets
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(first, set.clone());
        Some(set)
    }

    /// Builds the accesses of `set`, collapsed `scc`'s, from its members' summaries.
    fn share(&self, scc: &Scc, summaries: &[Option<Arc<Summary>>], set: &SharedAccesses) {
        let owned = match &self.called_from_outside {
            Some(outside) => {
                let members: Vec<Option<&Summary>> =
                    summaries.iter().map(|s| s.as_deref()).collect();
                owned::OwnedFormals::solve(self.cg, scc, &members, outside)
            }
            None => owned::OwnedFormals::none(),
        };
        let content = shared::SetContent::build(self.program, self.pta, scc, summaries, &owned);
        let mut acc = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        acc.stats.collapsed_sccs += 1;
        acc.stats.collapsed_functions += scc.functions.len();
        acc.stats.shared_accesses += content.accesses.len();
        acc.stats.owned_formals += content.owned_formals;
        acc.stats.owned_accesses += content.owned_accesses;
        drop(acc);
        let filled = set.fill(content);
        debug_assert!(filled, "a shared set built twice");
    }
}

/// [`SummaryStats`] as SCCs finish, in an order-independent way.
#[derive(Default)]
struct StatsAcc {
    stats: SummaryStats,
    /// The function with the most accesses (the smallest id among equals).
    largest: Option<(usize, std::cmp::Reverse<FuncId>)>,
}

impl StatsAcc {
    fn add(&mut self, f: FuncId, s: &SummaryFacts) {
        let st = &mut self.stats;
        st.functions += 1;
        if s.returns_fresh {
            st.constructors.push(f);
        }
        st.modelled += s.modelled as usize;
        st.widened += s.widened as usize;
        st.coarsened += s.coarsened as usize;
        st.bytes.add(&s.bytes);
        let n = s.accesses;
        st.accesses += n;
        let bucket = match n {
            0 => 0,
            1..=10 => 1,
            11..=100 => 2,
            101..=1000 => 3,
            _ => 4,
        };
        st.access_histogram[bucket] += 1;
        self.largest = self.largest.max(Some((n, std::cmp::Reverse(f))));
    }

    fn sample_chains(&mut self) {
        let (nodes, node_bytes) = chain::live_nodes();
        self.stats.bytes.chains = self.stats.bytes.chains.max(nodes * node_bytes);
    }
}

/// The summaries of a program.
pub struct Summaries {
    /// `schedule.summaries` is by `FuncId`; `None` for body-less functions and failed SCCs.
    pub schedule: Schedule<Summary>,
    pub stats: SummaryStats,
    /// The collapsed SCCs' shared sets, for loading stored summaries that refer to them.
    pub shared_sets: SharedSets,
}

impl Summaries {
    /// No summary loaded: every one of `sccs` SCCs was found unchanged in the cache, and what
    /// the caller needs from the summaries was saved with them (see `pipeline::analyze_cached`).
    pub fn all_reused(functions: usize, sccs: usize) -> Summaries {
        Summaries {
            schedule: Schedule {
                summaries: vec![None; functions],
                stored: Vec::new(),
                failed: Vec::new(),
                stats: schedule::ScheduleStats {
                    sccs_analyzed: sccs,
                    sccs_reused: sccs,
                    ..Default::default()
                },
                elapsed: std::time::Duration::ZERO,
            },
            stats: SummaryStats::default(),
            shared_sets: Default::default(),
        }
    }

    pub fn get(&self, f: FuncId) -> Option<&Summary> {
        self.schedule.summaries.get(f.index())?.as_ref()
    }

    /// Loads the kept summaries still in `store` ([`Schedule::stored`]), in parallel; those
    /// the store lost stay `None` ([`SummaryStore::lost`] counts them).
    pub fn load_stored(&mut self, store: &dyn SummaryStore) {
        use rayon::prelude::*;
        let stored = std::mem::take(&mut self.schedule.stored);
        let sets = &self.shared_sets;
        let loaded: Vec<Option<Summary>> =
            stored.par_iter().map(|&f| store.load(f, sets)).collect();
        for (f, s) in stored.into_iter().zip(loaded) {
            self.schedule.summaries[f.index()] = s;
        }
    }
}

/// Figures for the run's report.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SummaryStats {
    pub functions: usize,
    /// Defined functions replaced by a model.
    pub modelled: usize,
    pub widened: usize,
    /// Summaries merged per representative path for size ([`Summary::coarsened`]).
    pub coarsened: usize,
    /// Recursive SCCs collapsed ([`shared`]), their functions, and the accesses of their
    /// shared sets.
    pub collapsed_sccs: usize,
    pub collapsed_functions: usize,
    pub shared_accesses: usize,
    /// Formals of collapsed SCCs' members found to own their objects ([`owned`]), and the
    /// accesses inside those objects left out of the shared sets.
    pub owned_formals: usize,
    pub owned_accesses: usize,
    pub accesses: usize,
    /// Functions by number of accesses in their summary: 0, 1–10, 11–100, 101–1000, > 1000.
    pub access_histogram: [usize; 5],
    pub max_accesses: usize,
    pub max_accesses_function: String,
    /// Call sites of body-less functions without a model (no lock or memory effect assumed),
    /// and how many distinct functions they call.
    pub unknown_external_calls: usize,
    pub unknown_externals: usize,
    pub failed_sccs: usize,
    /// Recursive SCCs that reached the round bound (their latest summaries are kept).
    pub nonconverged_sccs: usize,
    /// The most rounds one recursive SCC needed.
    pub max_scc_rounds: u32,
    /// Approximate heap bytes of the summaries by component: what every summary computed takes
    /// (some are dropped before the end), and the most call-chain nodes alive at once.
    pub bytes: heap::SummaryBytes,
    pub seconds: f64,
    /// The functions whose summary returns only objects they allocated
    /// ([`Summary::returns_fresh`]), sorted: what the inclusion-based points-to clones per
    /// call site. Kept here because most summaries are dropped before the race stage.
    #[serde(skip)]
    pub constructors: Vec<FuncId>,
}

/// Computes every defined function's summary, bottom-up over the call graph.
pub fn compute(
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    models: &Models,
    options: &schedule::Options,
) -> Summaries {
    compute_with_store(program, pta, cg, models, options, Setup::default())
}

/// How [`compute_with_store`] runs, besides the scheduler's options.
pub struct Setup<'a> {
    /// Reuses the SCCs it has and is given the others.
    pub store: Option<&'a dyn SummaryStore>,
    /// By `FuncId`: only those summaries are in the result (the others are dropped as soon as
    /// their callers are done, see [`crate::schedule`]); `None` keeps all.
    pub keep: Option<Vec<bool>>,
    /// [`Context::collapse_at`].
    pub collapse_at: usize,
    /// [`Context::strict_publication`].
    pub strict_publication: bool,
    /// [`Context::called_from_outside`].
    pub called_from_outside: Option<Vec<bool>>,
    /// Asked once every SCC is done, with the functions that return a fresh object (sorted,
    /// [`SummaryStats::constructors`]): whether the caller reads every kept summary (the sets
    /// of reused collapsed SCCs are then rebuilt, [`stored_sets`]). `None`: it does.
    pub sets_needed: Option<SetsNeeded<'a>>,
}

/// [`Setup::sets_needed`].
pub type SetsNeeded<'a> = Box<dyn FnOnce(&[FuncId]) -> bool + 'a>;

impl Default for Setup<'_> {
    fn default() -> Self {
        Setup {
            store: None,
            keep: None,
            collapse_at: DEFAULT_COLLAPSE_AT,
            strict_publication: false,
            called_from_outside: None,
            sets_needed: None,
        }
    }
}

/// [`compute`] with a store, a set of summaries to keep and a collapse size ([`Setup`]).
pub fn compute_with_store(
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    models: &Models,
    options: &schedule::Options,
    setup: Setup<'_>,
) -> Summaries {
    let start = Instant::now();
    let mut ctx = Context::new(program, pta, cg, models);
    ctx.store = setup.store;
    if setup.store.is_some() {
        ctx.class_reads = class_reads::ReadLog::new(program.functions.len());
    }
    ctx.keep = setup.keep;
    ctx.collapse_at = setup.collapse_at.max(2);
    ctx.strict_publication = setup.strict_publication;
    ctx.called_from_outside = setup.called_from_outside;
    let schedule = schedule::run_with(cg, &ctx, options);
    let needed = setup.sets_needed.is_none_or(|needed| {
        let mut constructors = ctx
            .stats
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .stats
            .constructors
            .clone();
        constructors.sort_unstable();
        constructors.dedup();
        needed(&constructors)
    });
    if needed {
        ctx.rebuild_pending_sets();
    }
    let mut stats = summary_stats(program, &ctx);
    stats.failed_sccs = schedule.failed.len();
    stats.nonconverged_sccs = schedule.stats.nonconverged;
    stats.max_scc_rounds = schedule.stats.max_scc_iterations;
    stats.seconds = start.elapsed().as_secs_f64();
    stats.constructors.sort_unstable();
    stats.constructors.dedup();
    Summaries {
        schedule,
        stats,
        shared_sets: ctx.shared_sets,
    }
}

fn summary_stats(program: &Program, ctx: &Context<'_>) -> SummaryStats {
    let acc = std::mem::take(&mut *ctx.stats.lock().unwrap_or_else(|e| e.into_inner()));
    let mut st = acc.stats;
    (st.bytes.interned_paths, st.bytes.interned_locksets) = heap::interned();
    if let Some((n, std::cmp::Reverse(f))) = acc.largest.filter(|&(n, _)| n > 0) {
        st.max_accesses = n;
        st.max_accesses_function = program.function_label(f);
    }
    let mut unknown = rustc_hash::FxHashSet::default();
    for (i, f) in program.functions.iter().enumerate() {
        let Some(body) = &f.body else { continue };
        if ctx.model(FuncId(i as u32)).is_some() {
            continue;
        }
        for b in &body.blocks {
            for ins in &b.instrs {
                if let crate::ir::Instr::Call {
                    callee: crate::ir::Expr::Func(crate::ir::FuncRef::Linked(g)),
                    ..
                } = ins
                {
                    if program.functions[g.index()].body.is_none() && ctx.model(*g).is_none() {
                        st.unknown_external_calls += 1;
                        unknown.insert(*g);
                    }
                }
            }
        }
    }
    st.unknown_externals = unknown.len();
    st
}
