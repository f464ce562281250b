//! The parallel bottom-up driver over the SCC DAG of a [`CallGraph`]: RELAY's scheduler (FSE 2007
//! §4.1 — "the bottom-up analysis can process a function as soon as summaries of the callees
//! have been computed"), on threads instead of a grid.
//!
//! - **Readiness.** An SCC is *ready* when every SCC it calls is done. SCCs without a defined
//!   function (body-less externals) are done at the start, without analysis; their functions
//!   have no summary.
//! - **Parallelism.** A coordinator on the calling thread keeps a queue of ready SCCs and hands
//!   them to a rayon pool of `jobs` threads (at most `2 * jobs` in flight, so a worker finishing
//!   one finds the next waiting); each finished SCC sends a completion event on a crossbeam
//!   channel, and the coordinator then releases the callers whose last callee it was. The ready
//!   queue is ordered by the longest chain of work (function sizes, [`CallGraph::size`]) from the
//!   SCC up to a root, so the critical path starts early.
//! - **Fixpoint inside an SCC** ([`fixpoint`]). A non-recursive SCC's function is analysed
//!   once. A recursive SCC iterates in passes over *waves* of its functions (levels of the
//!   forward edges of a depth-first post-order, callees first): a wave's dirty functions are
//!   analysed in parallel against the summaries from before the wave; a changed summary makes its
//!   callers in the SCC dirty (forward callers later in the same pass, back-edge callers in the
//!   next). Before its first analysis a function of the SCC has no summary (the lookup returns
//!   `None`). The SCC's *iterations* are the largest number of times one of its functions was
//!   analysed, bounded by [`Options::max_rounds`] ([`DEFAULT_MAX_ROUNDS`]): a function
//!   that would be analysed once more keeps its latest summary instead, and the SCC is counted
//!   in [`ScheduleStats::nonconverged`]. The analysis must be monotone for the fixpoint to exist.
//! - **Reuse.** Before analysing an SCC the scheduler asks [`SccAnalysis::stored`] whether its
//!   summaries are stored elsewhere (the summaries cache answers when the SCC's key is stored).
//!   A stored SCC is done at once and its summaries stay where they are: one is loaded
//!   ([`SccAnalysis::load`]) only when a caller being analysed reads it, and those still stored
//!   at the end that the analysis keeps are listed in [`Schedule::stored`]. Every analysed SCC
//!   is handed to [`SccAnalysis::finished`] before its callers are released.
//! - **Memory.** Once every SCC calling an SCC is done, nothing can read its summaries any more:
//!   those of functions the analysis does not [`SccAnalysis::keep`] are dropped then (counted in
//!   [`ScheduleStats::dropped`]), so a run holds the summaries of its frontier, not of the whole
//!   program.
//! - **Failures.** A panic inside [`SccAnalysis::analyze`] is caught: the SCC is reported in
//!   [`Schedule::failed`] with the panic message, its functions get no summary, and the run goes
//!   on (its callers see `None` for them).
//! - **Determinism.** An SCC's summaries depend only on the summaries of the SCCs it calls
//!   (the lookup answers only for the current SCC and its callee SCCs), so the result is the same
//!   for any `jobs` and any timing.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::callgraph::{CallGraph, Scc, SccId};
use crate::ir::FuncId;

mod dag;
mod fixpoint;
use dag::Dag;
use fixpoint::analyze_scc;

/// The default bound on fixpoint rounds of a recursive SCC (`--max-rounds` of `relay analyze`
/// and `relay summary`): on SQLite's summaries, 8 rounds leave 2 of 63 recursive SCCs
/// unconverged in 62 s where 32 leave 3 in 107 s (the big SCCs grow by a few accesses per
/// round). An SCC at the bound keeps its latest summaries and is counted in the statistics.
pub const DEFAULT_MAX_ROUNDS: u32 = 8;

/// The stack of every analysis thread. The IR keeps expressions as trees and the analyses walk
/// them recursively: the parser bounds the syntax tree's depth (4,000 levels, chains included),
/// and a bounded tree can still be tens of thousands of IR levels deep (`q->p->…->p` is a load
/// of a dereference per link). Only the pages used are ever mapped.
pub const THREAD_STACK: usize = 64 << 20;

/// A bottom-up analysis computing one summary per defined function.
pub trait SccAnalysis: Sync {
    type Summary: Clone + PartialEq + Send + Sync;

    /// The summary of `f` (a function with a body) given its callees' summaries:
    /// `callees.get(g)` is `None` for a callee that has none yet in this SCC's fixpoint, whose
    /// SCC failed, or that is external (body-less).
    fn analyze(&self, f: FuncId, callees: &Lookup<'_, Self::Summary>) -> Self::Summary;

    /// Whether a recursive SCC's fixpoint must go on after `old` became `new`: by default any
    /// difference. An analysis whose summaries carry report metadata (which need not converge)
    /// compares only the facts its callers depend on.
    fn changed(&self, old: &Self::Summary, new: &Self::Summary) -> bool {
        old != new
    }

    /// Called once an SCC's summaries (parallel to its functions) are computed, before
    /// anything sees them: the analysis may rewrite them. Not called for reused ones.
    fn complete(&self, scc: &Scc, summaries: &mut [Option<Arc<Self::Summary>>]) {
        let _ = (scc, summaries);
    }

    /// Whether the summaries of `scc` are stored elsewhere — a cache — so that it need not be
    /// analysed: then, parallel to its functions, which of them have a summary (each loaded
    /// with [`SccAnalysis::load`] only if read). Called when every callee SCC is done. By
    /// default nothing is stored.
    fn stored(&self, scc: &Scc) -> Option<Vec<bool>> {
        let _ = scc;
        None
    }

    /// The stored summary of `f`, a function with a summary in an SCC that was
    /// [`SccAnalysis::stored`]; `None` if the store lost it (the analysis notices: what was
    /// computed from the missing summary must be computed again).
    fn load(&self, f: FuncId) -> Option<Self::Summary> {
        let _ = f;
        None
    }

    /// Called with the summaries of every analysed SCC before its callers can start. A cache
    /// stores them here. `digests`: when the SCC's steps were memoised ([`SccAnalysis::steps`]),
    /// the digest of each member's summary as the fixpoint ended (before
    /// [`SccAnalysis::complete`]), as [`StepMemo::record`] gave it.
    fn finished(
        &self,
        scc: &Scc,
        summaries: &[Option<&Self::Summary>],
        digests: Option<&[Option<Digest>]>,
    ) {
        let _ = (scc, summaries, digests);
    }

    /// Whether `f`'s summary must be in [`Schedule::summaries`] at the end. The others are
    /// dropped as soon as every caller is done. By default all are kept.
    fn keep(&self, f: FuncId) -> bool {
        let _ = f;
        true
    }

    /// Where the steps of recursive `scc`'s fixpoint are memoised (a cache), if they are: a
    /// step whose inputs a stored step had is replayed instead of analysed ([`fixpoint`]). By
    /// default nothing is.
    fn steps(&self, scc: &Scc) -> Option<Box<dyn StepMemo<Self::Summary> + '_>> {
        let _ = scc;
        None
    }
}

/// Names what a step of a recursive SCC's fixpoint read, or the summary it produced.
pub type Digest = [u8; 32];

/// A summary a step made, named twice: by its whole content (`summary`: what loads it, and
/// what the member's own next step reads of it) and by the part of it that the member's
/// callers in the SCC read (`read`). An analysis whose calls inside a recursive SCC read only
/// part of the callee's summary (a collapsed SCC's: not its accesses) names that part, so an
/// edit that changes only the rest replays the callers' steps; otherwise `read` is `summary`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
pub struct Made {
    pub summary: Digest,
    pub read: Digest,
}

/// Memoised steps of a recursive SCC's fixpoint ([`SccAnalysis::steps`]). A *step* analyses one
/// member while the SCC's members hold the summaries of that moment; it depends on nothing else
/// that changes during the fixpoint. So a step is named by the member, what does not change (its
/// body, the summaries of the SCC's callees, the analysis context: the memo knows those), the
/// digest of the summary the member itself holds and what its callees in the SCC hold of what
/// it reads ([`Made::read`]); what it did is then a function of that name: left the member's
/// summary as it was (the same facts), or made it a summary with given digests. Digests must
/// name summaries by content, so that a step whose callee came out the same after an edit is
/// replayed too.
pub trait StepMemo<S>: Sync {
    /// The name of analysing member `f` while it holds a summary with digest `own`
    /// ([`Made::summary`]) and its callees in the SCC, in [`CallGraph::callees`] order, hold
    /// summaries whose parts they read have the digests `members` ([`Made::read`]; `None`: no
    /// summary yet).
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest;
    /// What the stored step `input` did: `Some(None)` left `f`'s summary as it was,
    /// `Some(Some(m))` made it the summary `m` names; `None` if it is not stored.
    fn replay(&self, f: FuncId, input: &Digest) -> Option<Option<Made>>;
    /// The summary with digest `digest` ([`Made::summary`]) that a stored step of `f` made
    /// (`None`: lost).
    fn load(&self, f: FuncId, digest: &Digest) -> Option<S>;
    /// Records what the step `input` did: `None` left `f`'s summary as it was, `Some(s)` made
    /// it `s`; gives `s`'s digests.
    fn record(&self, f: FuncId, input: &Digest, output: Option<&S>) -> Option<Made>;
    /// Called once the fixpoint is done: a memo that keeps an SCC's steps together stores
    /// them here.
    fn finish(&self) {}
}

/// Where a done function's summary is.
enum Slot<S> {
    /// It has none, or nothing will read it any more.
    Absent,
    Ready(Arc<S>),
    /// In the analysis's store ([`SccAnalysis::stored`]), not loaded yet.
    Stored,
}

/// The summaries of done SCCs, by `FuncId`: published once, when the SCC is done; taken away
/// when nothing can read them any more (see the module documentation, Memory).
pub(super) struct Published<S>(Vec<RwLock<Slot<S>>>);

impl<S> Published<S> {
    fn new(len: usize) -> Self {
        Published((0..len).map(|_| RwLock::new(Slot::Absent)).collect())
    }

    /// `f`'s summary, loaded with `load` the first time it is read if it is still stored.
    fn get(&self, f: FuncId, load: impl FnOnce(FuncId) -> Option<S>) -> Option<Arc<S>> {
        let slot = &self.0[f.index()];
        match &*slot.read().unwrap_or_else(|e| e.into_inner()) {
            Slot::Absent => return None,
            Slot::Ready(s) => return Some(s.clone()),
            Slot::Stored => {}
        }
        let mut slot = slot.write().unwrap_or_else(|e| e.into_inner());
        if let Slot::Stored = *slot {
            *slot = load(f).map_or(Slot::Absent, |s| Slot::Ready(Arc::new(s)));
        }
        match &*slot {
            Slot::Ready(s) => Some(s.clone()),
            _ => None,
        }
    }

    pub(super) fn set(&self, f: FuncId, s: Option<Arc<S>>) {
        self.put(f, s.map_or(Slot::Absent, Slot::Ready));
    }

    pub(super) fn set_stored(&self, f: FuncId) {
        self.put(f, Slot::Stored);
    }

    fn put(&self, f: FuncId, slot: Slot<S>) {
        *self.0[f.index()].write().unwrap_or_else(|e| e.into_inner()) = slot;
    }

    /// Drops `f`'s summary, loaded or stored; whether it had one.
    fn take(&self, f: FuncId) -> bool {
        let mut slot = self.0[f.index()].write().unwrap_or_else(|e| e.into_inner());
        !matches!(std::mem::replace(&mut *slot, Slot::Absent), Slot::Absent)
    }
}

/// The summaries visible while analysing a function of one SCC: those of the SCC (current
/// fixpoint round) and of the SCCs it calls (final). Any other function reads as `None`, so the
/// result cannot depend on which unrelated SCCs happen to be finished.
pub struct Lookup<'a, S> {
    cg: &'a CallGraph,
    scc: SccId,
    /// The current SCC's summaries, by position in its `functions`.
    local: &'a (dyn Fn(usize) -> Option<Arc<S>> + Sync),
    done: &'a Published<S>,
    /// Loads a stored summary ([`SccAnalysis::load`]).
    load: &'a (dyn Fn(FuncId) -> Option<S> + Sync),
}

impl<S> Lookup<'_, S> {
    pub fn get(&self, f: FuncId) -> Option<Arc<S>> {
        let s = *self.cg.scc_of.get(f.index())?;
        let scc = self.cg.scc(self.scc);
        if s == self.scc {
            let pos = scc.functions.binary_search(&f).ok()?;
            (self.local)(pos)
        } else if scc.callees.binary_search(&s).is_ok() {
            self.done.get(f, self.load)
        } else {
            None
        }
    }
}

#[derive(Clone, Debug)]
pub struct Options {
    /// Worker threads; 0 means the number of CPUs.
    pub jobs: usize,
    /// Show progress: a bar on a terminal, a plain line every 30 s otherwise.
    pub progress: bool,
    /// Bound on fixpoint rounds in one SCC (at least 1).
    pub max_rounds: u32,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            jobs: 0,
            progress: false,
            max_rounds: DEFAULT_MAX_ROUNDS,
        }
    }
}

#[derive(Clone, PartialEq, Eq, Debug, Serialize)]
pub struct SccFailure {
    pub scc: SccId,
    pub functions: Vec<FuncId>,
    /// The panic message.
    pub message: String,
}

/// Counters of a run; all independent of `jobs` and timing.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize)]
pub struct ScheduleStats {
    pub sccs: usize,
    /// SCCs with at least one defined function (the others need no analysis).
    pub sccs_analyzed: usize,
    /// Of those, SCCs whose summaries came from [`SccAnalysis::reuse`] (the cache).
    pub sccs_reused: usize,
    /// Defined functions.
    pub functions_analyzed: usize,
    /// Calls of [`SccAnalysis::analyze`] (successful SCCs only).
    pub analyze_calls: usize,
    /// Steps of recursive SCCs' fixpoints replayed from [`SccAnalysis::steps`] instead of
    /// analysed.
    pub replayed_steps: usize,
    /// Iterations (the most analyses of one function) summed over the analysed SCCs: a
    /// non-recursive SCC takes one, a recursive one at least two (the last analysis confirms
    /// nothing changed).
    pub iterations: usize,
    pub max_scc_iterations: u32,
    /// Summaries dropped before the end of the run ([`SccAnalysis::keep`]).
    pub dropped: usize,
    /// SCCs that hit the iteration bound without converging (their latest summaries are kept).
    pub nonconverged: usize,
    pub failed: usize,
}

pub struct Schedule<S> {
    /// By `FuncId`; `None` for body-less functions, the functions of failed SCCs and those
    /// in [`Schedule::stored`].
    pub summaries: Vec<Option<S>>,
    /// Sorted: the functions kept ([`SccAnalysis::keep`]) whose summaries nothing read, so
    /// they are still only in the analysis's store ([`SccAnalysis::stored`]).
    pub stored: Vec<FuncId>,
    /// Sorted by SCC id.
    pub failed: Vec<SccFailure>,
    pub stats: ScheduleStats,
    /// Wall time of the run (not part of the deterministic result).
    pub elapsed: Duration,
}

/// Runs `analysis` bottom-up over `cg` on `jobs` threads (0: all CPUs); see the module
/// documentation.
pub fn run<A: SccAnalysis>(
    cg: &CallGraph,
    analysis: &A,
    jobs: usize,
    progress: bool,
) -> Schedule<A::Summary> {
    run_with(
        cg,
        analysis,
        &Options {
            jobs,
            progress,
            ..Options::default()
        },
    )
}

/// What a worker reports for one SCC.
struct Done {
    scc: SccId,
    outcome: Result<SccRun, String>,
}

struct SccRun {
    rounds: u32,
    converged: bool,
    analyze_calls: usize,
    replayed_steps: usize,
    reused: bool,
}

impl Default for SccRun {
    fn default() -> Self {
        SccRun {
            rounds: 0,
            converged: true,
            analyze_calls: 0,
            replayed_steps: 0,
            reused: false,
        }
    }
}

pub fn run_with<A: SccAnalysis>(
    cg: &CallGraph,
    analysis: &A,
    opts: &Options,
) -> Schedule<A::Summary> {
    let start = Instant::now();
    let jobs = match opts.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        j => j,
    };
    let max_rounds = opts.max_rounds.max(1);
    let done_summaries: Published<A::Summary> = Published::new(cg.len());
    let mut dag = Dag::new(cg);
    let mut stats = ScheduleStats {
        sccs: cg.sccs.len(),
        ..ScheduleStats::default()
    };
    let mut failed = Vec::new();
    let mut progress = SummaryProgress::new(cg, &dag, &mut stats, opts.progress);

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .stack_size(THREAD_STACK)
        .thread_name(|i| format!("relay-scc-{i}"))
        .build()
        .expect("building the analysis thread pool");
    let (tx, rx) = crossbeam_channel::unbounded::<Done>();
    let max_in_flight = 2 * jobs;
    let mut remaining = stats.sccs_analyzed;
    pool.in_place_scope(|scope| {
        let mut in_flight = 0usize;
        while remaining > 0 {
            while in_flight < max_in_flight {
                let Some(scc) = dag.pop_ready() else { break };
                in_flight += 1;
                progress.running.push((scc, Instant::now()));
                let tx = tx.clone();
                let done = &done_summaries;
                scope.spawn(move |_| {
                    let outcome = run_scc(cg, analysis, scc, done, max_rounds);
                    // The receiver lives until every SCC has reported.
                    let _ = tx.send(Done { scc, outcome });
                });
            }
            assert!(in_flight > 0, "SCC DAG has an SCC that never becomes ready");
            let done = progress.wait(&rx);
            in_flight -= 1;
            remaining -= 1;
            record(&mut stats, &mut failed, cg, &done);
            progress.done(done.scc, failed.len());
            for c in dag.done(done.scc) {
                for &f in &cg.scc(c).functions {
                    if !analysis.keep(f) && done_summaries.take(f) {
                        stats.dropped += 1;
                    }
                }
            }
        }
    });
    progress.progress.finish();

    failed.sort_by_key(|f: &SccFailure| f.scc);
    stats.failed = failed.len();
    let mut stored = Vec::new();
    let summaries = done_summaries
        .0
        .into_iter()
        .enumerate()
        .map(
            |(i, slot)| match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
                Slot::Absent => None,
                Slot::Ready(s) => Some(Arc::try_unwrap(s).unwrap_or_else(|s| (*s).clone())),
                Slot::Stored => {
                    stored.push(FuncId(i as u32));
                    None
                }
            },
        )
        .collect();
    Schedule {
        summaries,
        stored,
        failed,
        stats,
        elapsed: start.elapsed(),
    }
}

/// Analyses one SCC on a worker; a panic leaves its functions without summaries.
fn run_scc<A: SccAnalysis>(
    cg: &CallGraph,
    analysis: &A,
    scc: SccId,
    done: &Published<A::Summary>,
    max_rounds: u32,
) -> Result<SccRun, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        analyze_scc(cg, analysis, scc, done, max_rounds)
    }));
    outcome.map_err(|payload| {
        for &f in &cg.scc(scc).functions {
            done.set(f, None);
        }
        panic_message(payload.as_ref())
    })
}

/// Counts a finished SCC in the statistics, or records its failure.
fn record(stats: &mut ScheduleStats, failed: &mut Vec<SccFailure>, cg: &CallGraph, done: &Done) {
    match &done.outcome {
        Ok(run) => {
            stats.sccs_reused += run.reused as usize;
            stats.iterations += run.rounds as usize;
            stats.max_scc_iterations = stats.max_scc_iterations.max(run.rounds);
            stats.analyze_calls += run.analyze_calls;
            stats.replayed_steps += run.replayed_steps;
            stats.nonconverged += !run.converged as usize;
        }
        Err(message) => failed.push(SccFailure {
            scc: done.scc,
            functions: cg.scc(done.scc).functions.clone(),
            message: message.clone(),
        }),
    }
}

/// Progress of the summaries by functions: every function counts, as in the run table; those
/// with nothing to analyse (declarations, models) are done from the start. A bar on a terminal,
/// a line every [`crate::progress::PLAIN_PROGRESS_SECS`] otherwise, naming the SCC that has run
/// longest (a big SCC completes nothing for minutes, and a silent log looks hung).
struct SummaryProgress<'a> {
    cg: &'a CallGraph,
    progress: crate::progress::Progress,
    /// SCCs handed to the pool and not finished, with when they were handed over.
    running: Vec<(SccId, Instant)>,
}

impl<'a> SummaryProgress<'a> {
    /// Also counts the SCCs and functions to analyse into `stats`.
    fn new(cg: &'a CallGraph, dag: &Dag<'_>, stats: &mut ScheduleStats, on: bool) -> Self {
        let (mut total, mut done_at_start) = (0u64, 0u64);
        for s in &cg.sccs {
            total += s.functions.len() as u64;
            if dag.needs_analysis(s) {
                stats.sccs_analyzed += 1;
                stats.functions_analyzed +=
                    s.functions.iter().filter(|f| cg.defined[f.index()]).count();
            } else {
                done_at_start += s.functions.len() as u64;
            }
        }
        let progress = crate::progress::Progress::new(on, "summaries", "functions", total);
        progress.advance(done_at_start);
        SummaryProgress {
            cg,
            progress,
            running: Vec::new(),
        }
    }

    /// The next SCC a worker finishes, ticking the plain progress while waiting.
    fn wait(&mut self, rx: &crossbeam_channel::Receiver<Done>) -> Done {
        loop {
            let wait = Duration::from_secs(crate::progress::PLAIN_PROGRESS_SECS);
            match rx.recv_timeout(wait) {
                Ok(done) => return done,
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    self.progress.tick(&running_detail(self.cg, &self.running));
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    unreachable!("a worker reports every SCC")
                }
            }
        }
    }

    fn done(&mut self, scc: SccId, failures: usize) {
        self.running.retain(|&(s, _)| s != scc);
        if failures > 0 {
            self.progress.set_message(format!("{failures} failed"));
        }
        self.progress
            .advance(self.cg.scc(scc).functions.len() as u64);
    }
}

/// `; running for 300 s: an SCC of 1234 function(s)`: the SCC handed out longest ago.
fn running_detail(cg: &CallGraph, running: &[(SccId, Instant)]) -> String {
    let Some(&(scc, since)) = running.iter().min_by_key(|(_, t)| *t) else {
        return String::new();
    };
    let funcs = &cg.scc(scc).functions;
    format!(
        "; running for {} s: an SCC of {} function(s)",
        since.elapsed().as_secs(),
        funcs.len()
    )
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_string()
    }
}

/// A toy analysis: the functions each function transitively calls (reachable by one or more
/// edges, so a function in a recursive SCC reaches itself), as a sorted vector, truncated to the
/// `cap` smallest ids. Truncation is exact: the `cap` smallest reachable ids are among the callees
/// and the `cap` smallest of each callee's set, so the result equals the `cap` smallest ids a
/// depth-first search finds.
pub struct Reach<'a> {
    pub cg: &'a CallGraph,
    pub cap: usize,
}

impl SccAnalysis for Reach<'_> {
    type Summary = Vec<FuncId>;

    fn analyze(&self, f: FuncId, callees: &Lookup<'_, Vec<FuncId>>) -> Vec<FuncId> {
        let mut out = Vec::new();
        for g in self.cg.callees(f) {
            out.push(g);
            if let Some(s) = callees.get(g) {
                out.extend_from_slice(&s);
            }
        }
        out.sort_unstable();
        out.dedup();
        out.truncate(self.cap);
        out
    }
}

/// Times the toy analysis ([`Reach`] capped at 64 functions per summary) on `cg` with `jobs`
/// threads, for benchmarking the scheduler.
pub fn bench_toy(cg: &CallGraph, jobs: usize) -> Duration {
    let start = Instant::now();
    let s = run(cg, &Reach { cg, cap: 64 }, jobs, false);
    std::hint::black_box(&s.summaries);
    start.elapsed()
}

#[cfg(test)]
mod tests;
