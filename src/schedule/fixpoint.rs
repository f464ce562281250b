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
//! named by what it reads — the member, and the digests of the summaries its callees in the SCC
//! hold — and a step stored under that name gives its summary back without analysing. The
//! passes, waves and dirty flags stay as they are, so a re-run after an edit takes the very
//! path of a cold run: every step the edit does not reach is replayed, and the fixpoint (bound
//! included) ends where the cold run's would.

use std::sync::Arc;

use rayon::prelude::*;

use super::{Digest, Lookup, Published, SccAnalysis, SccRun};
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
    let mut local: Vec<Option<Arc<A::Summary>>> = vec![None; funcs.len()];
    let mut run = SccRun {
        rounds: 0,
        converged: true,
        analyze_calls: 0,
        replayed_steps: 0,
        reused: false,
    };
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
    let load = |f: FuncId| analysis.load(f);
    let analyze_at = |pos: usize, local: &[Option<Arc<A::Summary>>]| {
        let lookup = Lookup {
            cg,
            scc: id,
            local,
            done,
            load: &load,
        };
        analysis.analyze(funcs[pos], &lookup)
    };
    let defined = |pos: usize| cg.defined[funcs[pos].index()];

    if !scc.recursive {
        // One function, not calling itself: its analysis cannot depend on itself.
        for pos in (0..funcs.len()).filter(|&p| defined(p)) {
            local[pos] = Some(Arc::new(analyze_at(pos, &local)));
            run.analyze_calls += 1;
            run.rounds = 1;
        }
    } else {
        let graph = SccGraph::new(cg, funcs);
        let memo = analysis.steps(scc);
        // Per function, the digest of its summary in `local` (memoised steps only).
        let mut digests: Vec<Option<Digest>> = vec![None; funcs.len()];
        let mut dirty: Vec<bool> = (0..funcs.len()).map(defined).collect();
        let mut count = vec![0u32; funcs.len()];
        while dirty.iter().any(|&d| d) {
            for wave in &graph.waves {
                let mut todo = Vec::new();
                for &p in wave {
                    if !std::mem::take(&mut dirty[p]) {
                        continue;
                    }
                    if count[p] == max_rounds {
                        // Keep its latest summary; the SCC's other functions still get theirs.
                        run.converged = false;
                    } else {
                        count[p] += 1;
                        todo.push(p);
                    }
                }
                // A step's summary, and whether it was replayed rather than analysed.
                let step = |p: usize| -> (A::Summary, Option<Digest>, bool) {
                    let Some(memo) = memo else {
                        return (analyze_at(p, &local), None, false);
                    };
                    let members: Vec<Option<Digest>> =
                        graph.succ[p].iter().map(|&q| digests[q]).collect();
                    let input = memo.input(funcs[p], &members);
                    if let Some((s, digest)) = memo.replay(funcs[p], &input) {
                        return (s, Some(digest), true);
                    }
                    let s = analyze_at(p, &local);
                    let digest = memo.record(funcs[p], &input, &s);
                    (s, Some(digest), false)
                };
                // Only changed summaries are held until the wave is applied: in later passes
                // most are not, and a wave of a big SCC holds thousands.
                let step_changed = |&p: &usize| {
                    let (new, digest, replayed) = step(p);
                    let changed = local[p]
                        .as_ref()
                        .is_none_or(|old| analysis.changed(old, &new));
                    (replayed, changed.then(|| (p, Arc::new(new), digest)))
                };
                let steps: Vec<(bool, Option<Changed<A::Summary>>)> = if todo.len() > 1 {
                    todo.par_iter().map(step_changed).collect()
                } else {
                    todo.iter().map(step_changed).collect()
                };
                for (replayed, changed) in steps {
                    run.replayed_steps += replayed as usize;
                    run.analyze_calls += !replayed as usize;
                    let Some((p, new, digest)) = changed else {
                        continue;
                    };
                    local[p] = Some(new);
                    digests[p] = digest;
                    for &q in &graph.preds[p] {
                        dirty[q] |= defined(q);
                    }
                }
            }
        }
        run.rounds = count.iter().copied().max().unwrap_or(0);
    }
    analysis.complete(scc, &mut local);
    // Handed to the analysis, then made visible to callers.
    let refs: Vec<Option<&A::Summary>> = local.iter().map(Option::as_deref).collect();
    analysis.finished(scc, &refs);
    for (&f, s) in funcs.iter().zip(local) {
        done.set(f, s);
    }
    run
}

/// A changed summary of a wave: the function's position, its summary and digest.
type Changed<S> = (usize, Arc<S>, Option<Digest>);

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
