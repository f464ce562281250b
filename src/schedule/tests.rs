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
        (m.map(|x| *x).unwrap_or(0) + 1).min(1000)
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

/// [`Reach`] keeping only the summaries of functions with an even id.
struct KeepEven<'a>(Reach<'a>);
impl SccAnalysis for KeepEven<'_> {
    type Summary = Vec<FuncId>;
    fn analyze(&self, f: FuncId, callees: &Lookup<'_, Vec<FuncId>>) -> Vec<FuncId> {
        self.0.analyze(f, callees)
    }
    fn keep(&self, f: FuncId) -> bool {
        f.0.is_multiple_of(2)
    }
}

#[test]
fn summaries_not_kept_are_dropped_without_changing_the_others() {
    for seed in 1..6 {
        let cg = random_graph(400, seed);
        let reach = || Reach { cg: &cg, cap: 16 };
        let all = run(&cg, &reach(), 2, false);
        let some = run(&cg, &KeepEven(reach()), 2, false);
        let mut dropped = 0;
        for (i, (a, s)) in all.summaries.iter().zip(&some.summaries).enumerate() {
            if i % 2 == 0 {
                assert_eq!(a, s, "kept summary of {i} (seed {seed})");
            } else {
                assert_eq!(*s, None, "{i} is not kept (seed {seed})");
                // Every caller was done by the end, so every odd summary was dropped.
                dropped += a.is_some() as usize;
            }
        }
        assert_eq!(some.stats.dropped, dropped, "seed {seed}");
        assert!(dropped > 0);
    }
}
