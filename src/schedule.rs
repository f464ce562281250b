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
//! - **Fixpoint inside an SCC.** A non-recursive SCC's function is analysed once. A recursive
//!   SCC runs a worklist: every defined function starts on it; the function analysed next is the
//!   one earliest in a depth-first post-order of the SCC's internal edges (from its smallest id,
//!   callees in id order), so callees tend to come before their callers; when a summary changes,
//!   its callers inside the SCC go back on the worklist. The SCC is done when the worklist is
//!   empty. Before its first analysis a function of the SCC has no summary (the lookup returns
//!   `None`); later analyses see the latest summaries. The SCC's *iterations* are the largest
//!   number of times one of its functions was analysed (what the rounds of a round-robin would
//!   be). They are bounded by [`Options::max_rounds`] ([`DEFAULT_MAX_ROUNDS`] = 32): an SCC that
//!   would analyse a function once more keeps its latest summaries instead and is counted in
//!   [`ScheduleStats::nonconverged`]. The analysis must be monotone for the fixpoint to exist.
//! - **Reuse.** Before analysing an SCC the scheduler asks [`SccAnalysis::reuse`] for its
//!   summaries (the summaries cache answers when the SCC's key is stored); an analysed SCC is
//!   handed to [`SccAnalysis::finished`] before its callers are released.
//! - **Failures.** A panic inside [`SccAnalysis::analyze`] is caught: the SCC is reported in
//!   [`Schedule::failed`] with the panic message, its functions get no summary, and the run goes
//!   on (its callers see `None` for them).
//! - **Determinism.** An SCC's summaries depend only on the summaries of the SCCs it calls
//!   (the lookup answers only for the current SCC and its callee SCCs), so the result is the same
//!   for any `jobs` and any timing.

use std::collections::BinaryHeap;
use std::io::IsTerminal;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::callgraph::{CallGraph, Scc, SccId};
use crate::ir::FuncId;

/// The default bound on fixpoint rounds in one SCC.
pub const DEFAULT_MAX_ROUNDS: u32 = 32;

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

    /// The summaries of `scc` (parallel to its functions) from elsewhere — a cache — instead
    /// of analysing it. Called when every callee SCC is done. By default nothing is reused.
    fn reuse(&self, scc: &Scc) -> Option<Vec<Option<Self::Summary>>> {
        let _ = scc;
        None
    }

    /// Called with the summaries of an analysed SCC (not a reused one) before its callers
    /// can start: a cache stores them here.
    fn finished(&self, scc: &Scc, summaries: &[Option<Self::Summary>]) {
        let _ = (scc, summaries);
    }
}

/// The summaries visible while analysing a function of one SCC: those of the SCC (current
/// fixpoint round) and of the SCCs it calls (final). Any other function reads as `None`, so the
/// result cannot depend on which unrelated SCCs happen to be finished.
pub struct Lookup<'a, S> {
    cg: &'a CallGraph,
    scc: SccId,
    /// The current SCC's summaries, parallel to its `functions`.
    local: &'a [Option<S>],
    done: &'a [OnceLock<Option<S>>],
}

impl<'a, S> Lookup<'a, S> {
    pub fn get(&self, f: FuncId) -> Option<&'a S> {
        let s = *self.cg.scc_of.get(f.index())?;
        let scc = self.cg.scc(self.scc);
        if s == self.scc {
            let pos = scc.functions.binary_search(&f).ok()?;
            self.local[pos].as_ref()
        } else if scc.callees.binary_search(&s).is_ok() {
            self.done[f.index()].get()?.as_ref()
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
    /// Iterations (the most analyses of one function) summed over the analysed SCCs: a
    /// non-recursive SCC takes one, a recursive one at least two (the last analysis confirms
    /// nothing changed).
    pub iterations: usize,
    pub max_scc_iterations: u32,
    /// SCCs that hit the iteration bound without converging (their latest summaries are kept).
    pub nonconverged: usize,
    pub failed: usize,
}

pub struct Schedule<S> {
    /// By `FuncId`; `None` for body-less functions and the functions of failed SCCs.
    pub summaries: Vec<Option<S>>,
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
    reused: bool,
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
    let nsccs = cg.sccs.len();
    let done_summaries: Vec<OnceLock<Option<A::Summary>>> =
        (0..cg.len()).map(|_| OnceLock::new()).collect();
    let needs_analysis = |s: &Scc| -> bool { s.functions.iter().any(|f| cg.defined[f.index()]) };

    let mut stats = ScheduleStats {
        sccs: nsccs,
        ..ScheduleStats::default()
    };
    let mut failed = Vec::new();

    // Priority: the heaviest chain of work from the SCC up to a root (callers have larger ids).
    let callers = cg.scc_callers();
    let mut priority = vec![0u64; nsccs];
    for i in (0..nsccs).rev() {
        let own: u64 = cg.sccs[i]
            .functions
            .iter()
            .map(|f| u64::from(cg.size[f.index()]) + 1)
            .sum();
        let up = callers[i].iter().map(|c| priority[c.index()]).max();
        priority[i] = own + up.unwrap_or(0);
    }

    let mut pending: Vec<usize> = cg.sccs.iter().map(|s| s.callees.len()).collect();
    let mut ready: BinaryHeap<(u64, std::cmp::Reverse<u32>)> = BinaryHeap::new();
    // SCCs finished but whose callers are not yet released.
    let mut finished: Vec<SccId> = Vec::new();
    let mut total_work = 0u64;
    for (i, s) in cg.sccs.iter().enumerate() {
        if needs_analysis(s) {
            stats.sccs_analyzed += 1;
            stats.functions_analyzed +=
                s.functions.iter().filter(|f| cg.defined[f.index()]).count();
            total_work += s.functions.len() as u64;
        } else {
            for f in &s.functions {
                let _ = done_summaries[f.index()].set(None);
            }
            finished.push(SccId(i as u32));
        }
    }
    let release = |finished: &mut Vec<SccId>,
                   pending: &mut Vec<usize>,
                   ready: &mut BinaryHeap<(u64, std::cmp::Reverse<u32>)>| {
        while let Some(s) = finished.pop() {
            for &c in &callers[s.index()] {
                pending[c.index()] -= 1;
                if pending[c.index()] == 0 {
                    if needs_analysis(cg.scc(c)) {
                        ready.push((priority[c.index()], std::cmp::Reverse(c.0)));
                    } else {
                        finished.push(c);
                    }
                }
            }
        }
    };
    for (i, s) in cg.sccs.iter().enumerate() {
        if s.callees.is_empty() && needs_analysis(s) {
            ready.push((priority[i], std::cmp::Reverse(i as u32)));
        }
    }
    release(&mut finished, &mut pending, &mut ready);

    // Not a terminal (CI logs, `2> file`): a plain line every PLAIN_PROGRESS_SECS instead.
    let mut plain = (opts.progress && !std::io::stderr().is_terminal())
        .then(|| crate::progress::PlainProgress::new("summaries", total_work));
    let bar = if opts.progress && std::io::stderr().is_terminal() {
        let bar = indicatif::ProgressBar::new(total_work);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} functions {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_prefix("summaries");
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };

    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("relay-scc-{i}"))
        .build()
        .expect("building the analysis thread pool");
    let (tx, rx) = crossbeam_channel::unbounded::<Done>();
    let max_in_flight = 2 * jobs;
    let mut remaining = stats.sccs_analyzed;

    // SCCs handed to the pool and not finished, with when they were handed over.
    let mut running: Vec<(SccId, Instant)> = Vec::new();
    pool.in_place_scope(|scope| {
        let mut in_flight = 0usize;
        while remaining > 0 {
            while in_flight < max_in_flight {
                let Some((_, std::cmp::Reverse(i))) = ready.pop() else {
                    break;
                };
                in_flight += 1;
                running.push((SccId(i), Instant::now()));
                let tx = tx.clone();
                let done = &done_summaries;
                scope.spawn(move |_| {
                    let scc = SccId(i);
                    let outcome = catch_unwind(AssertUnwindSafe(|| {
                        analyze_scc(cg, analysis, scc, done, max_rounds)
                    }));
                    let outcome = match outcome {
                        Ok(run) => Ok(run),
                        Err(payload) => {
                            for f in &cg.scc(scc).functions {
                                let _ = done[f.index()].set(None);
                            }
                            Err(panic_message(payload.as_ref()))
                        }
                    };
                    // The receiver lives until every SCC has reported.
                    let _ = tx.send(Done { scc, outcome });
                });
            }
            assert!(in_flight > 0, "SCC DAG has an SCC that never becomes ready");
            let done = loop {
                let wait = Duration::from_secs(crate::progress::PLAIN_PROGRESS_SECS);
                match rx.recv_timeout(wait) {
                    Ok(done) => break done,
                    Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                        if let Some(p) = &mut plain {
                            p.tick(&running_detail(cg, &running));
                        }
                    }
                    Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                        unreachable!("a worker reports every SCC")
                    }
                }
            };
            running.retain(|&(s, _)| s != done.scc);
            in_flight -= 1;
            remaining -= 1;
            let scc = cg.scc(done.scc);
            match done.outcome {
                Ok(run) => {
                    stats.sccs_reused += run.reused as usize;
                    stats.iterations += run.rounds as usize;
                    stats.max_scc_iterations = stats.max_scc_iterations.max(run.rounds);
                    stats.analyze_calls += run.analyze_calls;
                    if !run.converged {
                        stats.nonconverged += 1;
                    }
                }
                Err(message) => {
                    failed.push(SccFailure {
                        scc: done.scc,
                        functions: scc.functions.clone(),
                        message,
                    });
                    bar.set_message(format!("{} failed", failed.len()));
                }
            }
            bar.inc(scc.functions.len() as u64);
            if let Some(p) = &mut plain {
                p.advance(scc.functions.len() as u64);
            }
            finished.push(done.scc);
            release(&mut finished, &mut pending, &mut ready);
        }
    });
    bar.finish_and_clear();

    failed.sort_by_key(|f: &SccFailure| f.scc);
    stats.failed = failed.len();
    Schedule {
        summaries: done_summaries
            .into_iter()
            .map(|s| s.into_inner().flatten())
            .collect(),
        failed,
        stats,
        elapsed: start.elapsed(),
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

/// Runs one SCC to its fixpoint and publishes its summaries.
fn analyze_scc<A: SccAnalysis>(
    cg: &CallGraph,
    analysis: &A,
    id: SccId,
    done: &[OnceLock<Option<A::Summary>>],
    max_rounds: u32,
) -> SccRun {
    let scc = cg.scc(id);
    let funcs = &scc.functions;
    let mut local: Vec<Option<A::Summary>> = vec![None; funcs.len()];
    let mut run = SccRun {
        rounds: 0,
        converged: true,
        analyze_calls: 0,
        reused: false,
    };
    if let Some(sums) = analysis.reuse(scc).filter(|s| s.len() == funcs.len()) {
        for (&f, s) in funcs.iter().zip(sums) {
            let _ = done[f.index()].set(s);
        }
        run.reused = true;
        return run;
    }
    let analyze_at = |pos: usize, local: &[Option<A::Summary>]| {
        let lookup = Lookup {
            cg,
            scc: id,
            local,
            done,
        };
        analysis.analyze(funcs[pos], &lookup)
    };

    if !scc.recursive {
        // One function, not calling itself: its analysis cannot depend on itself.
        for pos in 0..funcs.len() {
            if cg.defined[funcs[pos].index()] {
                local[pos] = Some(analyze_at(pos, &local));
                run.analyze_calls += 1;
                run.rounds = 1;
            }
        }
    } else {
        let pos_of = |f: FuncId| funcs.binary_search(&f).ok();
        // Internal edges, by position in `funcs`.
        let succ: Vec<Vec<usize>> = funcs
            .iter()
            .map(|f| cg.callees(*f).filter_map(pos_of).collect())
            .collect();
        let mut preds: Vec<Vec<usize>> = vec![Vec::new(); funcs.len()];
        for (p, ss) in succ.iter().enumerate() {
            for &q in ss {
                preds[q].push(p);
            }
        }
        let rank = post_order_rank(&succ);
        let mut queued = vec![false; funcs.len()];
        let mut work = BinaryHeap::new();
        for (p, f) in funcs.iter().enumerate() {
            if cg.defined[f.index()] {
                queued[p] = true;
                work.push(std::cmp::Reverse((rank[p], p)));
            }
        }
        let mut count = vec![0u32; funcs.len()];
        while let Some(std::cmp::Reverse((_, p))) = work.pop() {
            if count[p] == max_rounds {
                // Keep its latest summary; the SCC's other functions still get theirs.
                run.converged = false;
                queued[p] = false;
                continue;
            }
            queued[p] = false;
            count[p] += 1;
            run.analyze_calls += 1;
            let new = analyze_at(p, &local);
            if local[p]
                .as_ref()
                .is_none_or(|old| analysis.changed(old, &new))
            {
                local[p] = Some(new);
                for &q in &preds[p] {
                    if !queued[q] && cg.defined[funcs[q].index()] {
                        queued[q] = true;
                        work.push(std::cmp::Reverse((rank[q], q)));
                    }
                }
            }
        }
        run.rounds = count.iter().copied().max().unwrap_or(0);
    }
    analysis.finished(scc, &local);
    for (&f, s) in funcs.iter().zip(local) {
        let _ = done[f.index()].set(s);
    }
    run
}

/// The rank of each node in a depth-first post-order of `succ` (roots in index order, successors
/// in list order), iteratively.
fn post_order_rank(succ: &[Vec<usize>]) -> Vec<usize> {
    let n = succ.len();
    let mut rank = vec![usize::MAX; n];
    let mut seen = vec![false; n];
    let mut next = 0;
    let mut path: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if seen[root] {
            continue;
        }
        seen[root] = true;
        path.push((root, 0));
        while let Some(top) = path.last_mut() {
            let v = top.0;
            if let Some(&w) = succ[v].get(top.1) {
                top.1 += 1;
                if !seen[w] {
                    seen[w] = true;
                    path.push((w, 0));
                }
            } else {
                path.pop();
                rank[v] = next;
                next += 1;
            }
        }
    }
    rank
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
                out.extend_from_slice(s);
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
mod tests {
    use super::*;

    fn graph(n: usize, edges: &[(u32, u32)]) -> CallGraph {
        CallGraph::from_edges(
            vec![true; n],
            edges.iter().map(|&(a, b)| (FuncId(a), FuncId(b))),
        )
    }

    fn ids(v: &[u32]) -> Vec<FuncId> {
        v.iter().map(|&i| FuncId(i)).collect()
    }

    /// The reference: functions reachable from `f` by one or more edges, by DFS.
    fn dfs_reach(cg: &CallGraph, f: FuncId) -> Vec<FuncId> {
        let mut seen = vec![false; cg.len()];
        let mut stack: Vec<FuncId> = cg.callees(f).collect();
        let mut out = Vec::new();
        while let Some(g) = stack.pop() {
            if std::mem::replace(&mut seen[g.index()], true) {
                continue;
            }
            out.push(g);
            stack.extend(cg.callees(g));
        }
        out.sort();
        out
    }

    /// A deterministic pseudo-random graph: mostly downward edges (a DAG-like bulk), some upward
    /// edges (cycles, a few large SCCs), self-loops and external leaves.
    fn random_graph(n: u32, seed: u64) -> CallGraph {
        let mut x = seed;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut edges = Vec::new();
        let defined: Vec<bool> = (0..n).map(|_| rnd() % 10 != 0).collect();
        for a in 0..n {
            if !defined[a as usize] {
                continue;
            }
            for _ in 0..rnd() % 4 {
                let b = match rnd() % 20 {
                    0 => (rnd() % u64::from(n)) as u32,
                    1 => a,
                    _ => a + 1 + (rnd() % 40) as u32,
                };
                if b < n {
                    edges.push((FuncId(a), FuncId(b)));
                }
            }
        }
        CallGraph::from_edges(defined, edges)
    }

    fn assert_same<S: PartialEq + std::fmt::Debug>(a: &Schedule<S>, b: &Schedule<S>) {
        assert_eq!(a.summaries, b.summaries);
        assert_eq!(a.failed, b.failed);
        assert_eq!(a.stats, b.stats);
    }

    #[test]
    fn diamond() {
        // 0 -> 1, 0 -> 2, 1 -> 3, 2 -> 3
        let cg = graph(4, &[(0, 1), (0, 2), (1, 3), (2, 3)]);
        let s = run(
            &cg,
            &Reach {
                cg: &cg,
                cap: usize::MAX,
            },
            2,
            false,
        );
        assert_eq!(s.summaries[0], Some(ids(&[1, 2, 3])));
        assert_eq!(s.summaries[1], Some(ids(&[3])));
        assert_eq!(s.summaries[3], Some(vec![]));
        assert!(s.failed.is_empty());
        assert_eq!(s.stats.sccs_analyzed, 4);
        assert_eq!(s.stats.iterations, 4);
        assert_eq!(s.stats.analyze_calls, 4);
        assert_eq!(s.stats.max_scc_iterations, 1);
    }

    #[test]
    fn cycle_reaches_fixpoint() {
        // 0 -> 1 <-> 2 -> 3, 2 -> 4 -> 4
        let cg = graph(5, &[(0, 1), (1, 2), (2, 1), (2, 3), (2, 4), (4, 4)]);
        let s = run(
            &cg,
            &Reach {
                cg: &cg,
                cap: usize::MAX,
            },
            1,
            false,
        );
        assert_eq!(s.summaries[0], Some(ids(&[1, 2, 3, 4])));
        assert_eq!(s.summaries[1], Some(ids(&[1, 2, 3, 4])));
        assert_eq!(s.summaries[2], Some(ids(&[1, 2, 3, 4])));
        assert_eq!(s.summaries[4], Some(ids(&[4])));
        assert_eq!(s.stats.nonconverged, 0);
        assert!(s.stats.max_scc_iterations >= 2);
    }

    #[test]
    fn externals_have_no_summary() {
        let cg = CallGraph::from_edges(vec![true, false], [(FuncId(0), FuncId(1))]);
        let s = run(
            &cg,
            &Reach {
                cg: &cg,
                cap: usize::MAX,
            },
            1,
            false,
        );
        assert_eq!(s.summaries, [Some(ids(&[1])), None]);
        assert_eq!(s.stats.sccs_analyzed, 1);
        assert_eq!(s.stats.functions_analyzed, 1);
    }

    /// Counts rounds: the summary of f is one more than the largest of its callees', capped at
    /// 1000; in a cycle this does not converge within the bound.
    struct Counter<'a>(&'a CallGraph);
    impl SccAnalysis for Counter<'_> {
        type Summary = u32;
        fn analyze(&self, f: FuncId, callees: &Lookup<'_, u32>) -> u32 {
            let m = self.0.callees(f).filter_map(|g| callees.get(g)).max();
            (m.copied().unwrap_or(0) + 1).min(1000)
        }
    }

    #[test]
    fn round_bound() {
        let cg = graph(3, &[(0, 1), (1, 0), (2, 0)]);
        let opts = Options {
            jobs: 2,
            max_rounds: 5,
            ..Options::default()
        };
        let s = run_with(&cg, &Counter(&cg), &opts);
        assert_eq!(s.stats.nonconverged, 1);
        assert_eq!(s.stats.max_scc_iterations, 5);
        // Post-order 1, 0: 1 sees None for 0 (1), 0 sees 1 (2), 1 sees 2 (3), ... until 0's
        // fifth analysis (10) would need a sixth of 1.
        assert_eq!(s.summaries[1], Some(9));
        assert_eq!(s.summaries[0], Some(10));
        assert_eq!(s.summaries[2], Some(11));
        assert_eq!(s.stats.analyze_calls, 11);
    }

    /// Panics on one function; otherwise as [`Reach`].
    struct Panicky<'a> {
        reach: Reach<'a>,
        bad: FuncId,
    }
    impl SccAnalysis for Panicky<'_> {
        type Summary = Vec<FuncId>;
        fn analyze(&self, f: FuncId, callees: &Lookup<'_, Vec<FuncId>>) -> Vec<FuncId> {
            if f == self.bad {
                panic!("boom in {}", f.0);
            }
            self.reach.analyze(f, callees)
        }
    }

    #[test]
    fn panic_fails_one_scc() {
        // 0 -> 1 <-> 2 -> 3; 4 -> 3; 1's SCC panics.
        let cg = graph(5, &[(0, 1), (1, 2), (2, 1), (2, 3), (4, 3)]);
        let a = Panicky {
            reach: Reach {
                cg: &cg,
                cap: usize::MAX,
            },
            bad: FuncId(2),
        };
        for jobs in [1, 2] {
            let s = run(&cg, &a, jobs, false);
            assert_eq!(s.failed.len(), 1);
            let f = &s.failed[0];
            assert_eq!(f.functions, ids(&[1, 2]));
            assert_eq!(f.message, "boom in 2");
            assert_eq!(f.scc, cg.scc_of[1]);
            assert_eq!(s.stats.failed, 1);
            assert_eq!(s.summaries[1], None);
            assert_eq!(s.summaries[2], None);
            // The caller sees no summary for 1 but still completes.
            assert_eq!(s.summaries[0], Some(ids(&[1])));
            assert_eq!(s.summaries[3], Some(vec![]));
            assert_eq!(s.summaries[4], Some(ids(&[3])));
        }
    }

    #[test]
    fn same_result_for_any_jobs() {
        let cg = random_graph(3000, 0x9e37_79b9_7f4a_7c15);
        assert!(cg.stats.recursive_sccs > 0 && cg.stats.largest_scc > 2);
        let a = Reach {
            cg: &cg,
            cap: usize::MAX,
        };
        let s1 = run(&cg, &a, 1, false);
        let s2 = run(&cg, &a, 2, false);
        let s4 = run(&cg, &a, 4, false);
        assert_same(&s1, &s2);
        assert_same(&s1, &s4);
        let c = Counter(&cg);
        assert_same(&run(&cg, &c, 1, false), &run(&cg, &c, 4, false));
    }

    #[test]
    fn toy_matches_dfs() {
        for seed in [1u64, 42, 0xdead_beef] {
            let cg = random_graph(1500, seed);
            let full = run(
                &cg,
                &Reach {
                    cg: &cg,
                    cap: usize::MAX,
                },
                2,
                false,
            );
            let capped = run(&cg, &Reach { cg: &cg, cap: 5 }, 2, false);
            assert!(full.failed.is_empty());
            assert_eq!(full.stats.nonconverged, 0);
            for f in 0..cg.len() {
                let f = FuncId(f as u32);
                if !cg.defined[f.index()] {
                    assert_eq!(full.summaries[f.index()], None);
                    continue;
                }
                let want = dfs_reach(&cg, f);
                assert_eq!(full.summaries[f.index()].as_ref(), Some(&want), "{f:?}");
                let want5: Vec<FuncId> = want.into_iter().take(5).collect();
                assert_eq!(capped.summaries[f.index()].as_ref(), Some(&want5), "{f:?}");
            }
        }
    }

    #[test]
    fn bench_runs() {
        let cg = random_graph(2000, 7);
        assert!(bench_toy(&cg, 2) > Duration::ZERO);
    }
}
