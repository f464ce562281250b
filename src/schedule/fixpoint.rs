//! The fixpoint inside one SCC (see the module documentation of [`super`]): a non-recursive
//! SCC's function is analysed once; a recursive SCC iterates in *passes* over *waves*.
//!
//! The SCC's internal edges are split by a depth-first post-order (from its smallest function,
//! callees in id order): an edge to a function earlier in the order is a *forward* edge (callee
//! first, as in a DAG), an edge to a later one a *back* edge (it closes a cycle). A function's
//! wave is the longest chain of forward edges below it, so the functions of one wave never call
//! each other by a forward edge: a wave's dirty functions are analysed in parallel, all reading
//! the summaries as they were before the wave, and their results are applied together. A pass
//! runs every wave bottom-up; a function is dirty until analysed, and again when a callee's
//! summary changes: a forward caller is reached later in the same pass, a back-edge caller in
//! the next. What a function reads therefore depends only on the graph, never on timing or on
//! the number of threads.
//!
//! **Replayed steps.** When the analysis memoises a recursive SCC's steps
//! ([`SccAnalysis::steps`]: the summaries cache does for collapsed SCCs), each step is first
//! named by what it reads — the member, the digest of the summary it holds, and those of the
//! parts of its callees' summaries in the SCC that it reads ([`super::Made::read`]) — and a
//! step stored under that name says what it did without analysing: left the member's summary
//! as it was, or made it a stored summary (loaded only when an analysed step reads it, and at
//! the end). The passes, waves and dirty flags stay as they are, so a
//! re-run after an edit takes the very path of a cold run: every step the edit does not reach
//! is replayed, and the fixpoint (bound included) ends where the cold run's would. A stored
//! summary that cannot be loaded makes the fixpoint run again, analysing and recording every
//! step; nothing a step computed after a failed load is recorded.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use rayon::prelude::*;

use super::{Digest, Lookup, Made, Published, SccAnalysis, SccRun, StepMemo};
use crate::callgraph::{CallGraph, SccId};
use crate::ir::FuncId;

/// Runs one SCC to its fixpoint and publishes its summaries.
pub(super) fn analyze_scc<A: SccAnalysis>(
    cg: &CallGraph,
    analysis: &A,
    id: SccId,
    done: &Published<A::Summary>,
    max_rounds: u32,
) -> SccRun {
    let scc = cg.scc(id);
    let funcs = &scc.functions;
    let mut run = SccRun::default();
    if let Some(has) = analysis.stored(scc).filter(|h| h.len() == funcs.len()) {
        for (&f, has) in funcs.iter().zip(has) {
            match has {
                true => done.set_stored(f),
                false => done.set(f, None),
            }
        }
        run.reused = true;
        return run;
    }
    let scope = Scope {
        cg,
        analysis,
        id,
        done,
        max_rounds,
    };
    // With memoised steps: the digests of the summaries the fixpoint ended with.
    let mut digests: Option<Vec<Option<Digest>>> = None;
    let mut local = if !scc.recursive {
        scope.once(&mut run)
    } else {
        let steps = analysis.steps(scc);
        let memo = steps.as_deref();
        // A replayed summary the store lost: the fixpoint is run again, analysing (and
        // recording) every step.
        let (local, ended) = scope.fixpoint(memo, true, &mut run).unwrap_or_else(|| {
            run = SccRun::default();
            scope
                .fixpoint(memo, false, &mut run)
                .expect("without steps replayed nothing is loaded")
        });
        if let Some(memo) = memo {
            memo.finish();
            digests = Some(ended);
        }
        local
    };
    analysis.complete(scc, &mut local);
    // Handed to the analysis, then made visible to callers.
    let refs: Vec<Option<&A::Summary>> = local.iter().map(Option::as_deref).collect();
    analysis.finished(scc, &refs, digests.as_deref());
    for (&f, s) in funcs.iter().zip(local) {
        done.set(f, s);
    }
    run
}

/// One SCC being analysed.
struct Scope<'a, A: SccAnalysis> {
    cg: &'a CallGraph,
    analysis: &'a A,
    id: SccId,
    done: &'a Published<A::Summary>,
    max_rounds: u32,
}

/// A member's summary during the fixpoint: `None` before its first step. A replayed step's
/// summary is named by its digests and loaded the first time something reads it (most are
/// never read: every step that reads them is replayed too).
struct Current<S> {
    summary: OnceLock<Option<Arc<S>>>,
    made: Option<Made>,
}

impl<S> Current<S> {
    fn known(summary: Option<Arc<S>>, made: Option<Made>) -> Self {
        Current {
            summary: OnceLock::from(summary),
            made,
        }
    }

    /// The digest of the whole summary.
    fn digest(&self) -> Option<Digest> {
        self.made.map(|m| m.summary)
    }
}

impl<A: SccAnalysis> Scope<'_, A> {
    fn functions(&self) -> &[FuncId] {
        &self.cg.scc(self.id).functions
    }

    fn defined(&self, pos: usize) -> bool {
        self.cg.defined[self.functions()[pos].index()]
    }

    /// The summary of the function at `pos`, the SCC's members reading as `local` says.
    fn analyze_at(
        &self,
        pos: usize,
        local: &(dyn Fn(usize) -> Option<Arc<A::Summary>> + Sync),
    ) -> A::Summary {
        let load = |f: FuncId| self.analysis.load(f);
        let lookup = Lookup {
            cg: self.cg,
            scc: self.id,
            local,
            done: self.done,
            load: &load,
        };
        self.analysis.analyze(self.functions()[pos], &lookup)
    }

    /// A non-recursive SCC: its one function cannot depend on itself.
    fn once(&self, run: &mut SccRun) -> Vec<Option<Arc<A::Summary>>> {
        let n = self.functions().len();
        let mut local: Vec<Option<Arc<A::Summary>>> = vec![None; n];
        for pos in (0..n).filter(|&p| self.defined(p)) {
            let new = self.analyze_at(pos, &|q| local[q].clone());
            local[pos] = Some(Arc::new(new));
            run.analyze_calls += 1;
            run.rounds = 1;
        }
        local
    }

    /// A recursive SCC's fixpoint, its steps recorded in `memo` and, with `replay`, replayed
    /// from it where stored; `None` if a replayed summary could not be loaded.
    fn fixpoint(
        &self,
        memo: Option<&dyn StepMemo<A::Summary>>,
        replay: bool,
        run: &mut SccRun,
    ) -> Option<Ended<A::Summary>> {
        let funcs = self.functions();
        let graph = SccGraph::new(self.cg, funcs);
        let mut current: Vec<Current<A::Summary>> = (0..funcs.len())
            .map(|_| Current::known(None, None))
            .collect();
        let lost = AtomicBool::new(false);
        let read = |current: &[Current<A::Summary>], q: usize| -> Option<Arc<A::Summary>> {
            let c = &current[q];
            c.summary
                .get_or_init(|| {
                    let loaded = memo.zip(c.digest()).and_then(|(m, d)| m.load(funcs[q], &d));
                    if loaded.is_none() {
                        lost.store(true, Ordering::SeqCst);
                    }
                    loaded.map(Arc::new)
                })
                .clone()
        };
        let mut dirty: Vec<bool> = (0..funcs.len()).map(|p| self.defined(p)).collect();
        let mut count = vec![0u32; funcs.len()];
        while dirty.iter().any(|&d| d) {
            for wave in &graph.waves {
                let mut todo = Vec::new();
                for &p in wave {
                    if !std::mem::take(&mut dirty[p]) {
                        continue;
                    }
                    if count[p] == self.max_rounds {
                        // Keep its latest summary; the SCC's other functions still get theirs.
                        run.converged = false;
                    } else {
                        count[p] += 1;
                        todo.push(p);
                    }
                }
                let step = |&p: &usize| -> Step<A::Summary> {
                    // The step's name, when steps are memoised; a stored step is replayed.
                    let input = memo.map(|m| {
                        let members: Vec<Option<Digest>> = graph.succ[p]
                            .iter()
                            .map(|&q| current[q].made.map(|m| m.read))
                            .collect();
                        (m, m.input(funcs[p], current[p].digest().as_ref(), &members))
                    });
                    if let Some(outcome) = input
                        .filter(|_| replay)
                        .and_then(|(m, input)| m.replay(funcs[p], &input))
                    {
                        return Step::Replayed(outcome);
                    }
                    let new = self.analyze_at(p, &|q| read(&current, q));
                    let is_new =
                        read(&current, p).is_none_or(|old| self.analysis.changed(&old, &new));
                    if lost.load(Ordering::SeqCst) {
                        // It may have read a summary that was not there: not to be recorded
                        // (the fixpoint is run again anyway).
                        return Step::Analysed(None);
                    }
                    if !is_new {
                        if let Some((m, input)) = input {
                            m.record(funcs[p], &input, None);
                        }
                        return Step::Analysed(None);
                    }
                    let made = input.and_then(|(m, input)| m.record(funcs[p], &input, Some(&new)));
                    Step::Analysed(Some((Arc::new(new), made)))
                };
                // Only changed summaries are held until the wave is applied: in later passes
                // most are not, and a wave of a big SCC holds thousands.
                let steps: Vec<Step<A::Summary>> = if todo.len() > 1 {
                    todo.par_iter().map(step).collect()
                } else {
                    todo.iter().map(step).collect()
                };
                for (&p, step) in todo.iter().zip(steps) {
                    let new = match step {
                        Step::Replayed(outcome) => {
                            run.replayed_steps += 1;
                            outcome.map(|m| Current {
                                summary: OnceLock::new(),
                                made: Some(m),
                            })
                        }
                        Step::Analysed(outcome) => {
                            run.analyze_calls += 1;
                            outcome.map(|(s, d)| Current::known(Some(s), d))
                        }
                    };
                    let Some(new) = new else { continue };
                    current[p] = new;
                    for &q in &graph.preds[p] {
                        dirty[q] |= self.defined(q);
                    }
                }
                if lost.load(Ordering::SeqCst) {
                    return None;
                }
            }
        }
        run.rounds = count.iter().copied().max().unwrap_or(0);
        // Most members' summaries are still to be loaded (replayed steps): in parallel.
        let local: Vec<Option<Arc<A::Summary>>> = (0..funcs.len())
            .into_par_iter()
            .map(|q| read(&current, q))
            .collect();
        let digests = current.iter().map(Current::digest).collect();
        (!lost.load(Ordering::SeqCst)).then_some((local, digests))
    }
}

/// The summaries a fixpoint ended with, and their digests (with memoised steps).
type Ended<S> = (Vec<Option<Arc<S>>>, Vec<Option<Digest>>);

/// What one step did to its member's summary.
enum Step<S> {
    /// Replayed: `None` left it as it was, `Some(m)` made it the stored summary `m` names.
    Replayed(Option<Made>),
    /// Analysed: `None` left it as it was (same facts), or the new summary and its digests.
    Analysed(Option<(Arc<S>, Option<Made>)>),
}

/// A recursive SCC's internal call edges, by position in its (sorted) function list.
struct SccGraph {
    /// The callees of each function inside the SCC, in [`CallGraph::callees`] order.
    succ: Vec<Vec<usize>>,
    /// The callers of each function inside the SCC.
    preds: Vec<Vec<usize>>,
    /// Positions grouped by wave, lowest first; each wave in depth-first post-order.
    waves: Vec<Vec<usize>>,
}

impl SccGraph {
    fn new(cg: &CallGraph, funcs: &[FuncId]) -> SccGraph {
        let pos_of = |f: FuncId| funcs.binary_search(&f).ok();
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
        let mut order: Vec<usize> = (0..funcs.len()).collect();
        order.sort_by_key(|&p| rank[p]);
        // Forward callees come earlier in the post-order, so one pass in that order suffices.
        let mut level = vec![0usize; funcs.len()];
        for &p in &order {
            level[p] = succ[p]
                .iter()
                .filter(|&&q| rank[q] < rank[p])
                .map(|&q| level[q] + 1)
                .max()
                .unwrap_or(0);
        }
        let mut waves: Vec<Vec<usize>> = vec![Vec::new(); level.iter().max().map_or(0, |l| l + 1)];
        for &p in &order {
            waves[level[p]].push(p);
        }
        SccGraph { succ, preds, waves }
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn scc_graph(n: u32, edges: &[(u32, u32)]) -> SccGraph {
        let cg = CallGraph::from_edges(
            vec![true; n as usize],
            edges.iter().map(|&(a, b)| (FuncId(a), FuncId(b))),
        );
        let funcs: Vec<FuncId> = (0..n).map(FuncId).collect();
        SccGraph::new(&cg, &funcs)
    }

    #[test]
    fn waves_follow_forward_edges() {
        // 0 → 1 → 2 → 0 (back edge 2 → 0), and 0 → 3 → 2.
        let g = scc_graph(4, &[(0, 1), (1, 2), (2, 0), (0, 3), (3, 2)]);
        // Post-order from 0: 2, 1, 3, 0. Forward edges: 1→2, 3→2, 0→1, 0→3.
        assert_eq!(g.waves, vec![vec![2], vec![1, 3], vec![0]]);
        assert_eq!(g.preds[2], vec![1, 3]);
    }

    #[test]
    fn no_wave_holds_a_forward_edge() {
        let n = 40u32;
        let edges: Vec<(u32, u32)> = (0..n)
            .flat_map(|i| [(i, (i * 7 + 3) % n), (i, (i + 1) % n)])
            .collect();
        let g = scc_graph(n, &edges);
        let wave_of = |p: usize| g.waves.iter().position(|w| w.contains(&p)).unwrap();
        assert_eq!(g.waves.iter().map(Vec::len).sum::<usize>(), n as usize);
        for &(a, b) in &edges {
            let (a, b) = (a as usize, b as usize);
            // Every edge inside one wave goes against the post-order (a back edge).
            if wave_of(a) == wave_of(b) && a != b {
                let pos = |p| g.waves[wave_of(p)].iter().position(|&x| x == p).unwrap();
                assert!(
                    pos(b) > pos(a),
                    "{a} → {b} inside a wave must be a back edge"
                );
            }
        }
    }
}
