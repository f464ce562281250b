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

/// A toy analysis whose fixpoint steps can be memoised: a function's value is the smallest of
/// its own body's and one more than its callees' values; its summary is that value and a note
/// of its own that callers do not read. A memo records every step, keyed as the summaries
/// cache keys them: the function, its body, what lies outside its SCC (here every body and note
/// there, a conservative stand-in for the callees' content hashes), its own digest and what it
/// reads of its callees' summaries — their values (`read_values`) or their whole summaries.
struct Nearest<'a> {
    cg: &'a CallGraph,
    bodies: Vec<u32>,
    notes: Vec<u32>,
    memo: Option<&'a ToyMemo>,
    read_values: bool,
}

/// A [`Nearest`] summary: the value, and the function's note.
type Noted = (u32, u32);

/// Steps by input: what each did (`None`: nothing), and the summaries made, by digest.
#[derive(Default)]
struct ToyMemo {
    steps: std::sync::Mutex<std::collections::HashMap<Digest, Option<Made>>>,
    made: std::sync::Mutex<std::collections::HashMap<Digest, Noted>>,
}

impl SccAnalysis for Nearest<'_> {
    type Summary = Noted;

    fn analyze(&self, f: FuncId, callees: &Lookup<'_, Noted>) -> Noted {
        let value = self
            .cg
            .callees(f)
            .filter_map(|g| callees.get(g))
            .map(|s| s.0 + 1)
            .fold(self.bodies[f.index()], u32::min);
        (value, self.notes[f.index()])
    }

    fn steps(&self, _: &Scc) -> Option<Box<dyn StepMemo<Noted> + '_>> {
        self.memo
            .map(|_| Box::new(ToySteps(self)) as Box<dyn StepMemo<Noted> + '_>)
    }
}

/// The memo of [`Nearest`], for one SCC.
struct ToySteps<'n, 'a>(&'n Nearest<'a>);

impl StepMemo<Noted> for ToySteps<'_, '_> {
    fn input(&self, f: FuncId, own: Option<&Digest>, members: &[Option<Digest>]) -> Digest {
        let mut h = blake3::Hasher::new();
        h.update(&f.0.to_le_bytes());
        let scc = self.0.cg.scc_of[f.index()];
        for (g, (body, note)) in self.0.bodies.iter().zip(&self.0.notes).enumerate() {
            if g == f.index() || self.0.cg.scc_of[g] != scc {
                h.update(&body.to_le_bytes()).update(&note.to_le_bytes());
            }
        }
        for m in std::iter::once(own).chain(members.iter().map(Option::as_ref)) {
            match m {
                Some(d) => h.update(&[1]).update(d),
                None => h.update(&[0]),
            };
        }
        *h.finalize().as_bytes()
    }

    fn replay(&self, _: FuncId, input: &Digest) -> Option<Option<Made>> {
        self.0.memo?.steps.lock().unwrap().get(input).copied()
    }

    fn load(&self, _: FuncId, digest: &Digest) -> Option<Noted> {
        self.0.memo?.made.lock().unwrap().get(digest).copied()
    }

    fn record(&self, _: FuncId, input: &Digest, output: Option<&Noted>) -> Option<Made> {
        let memo = self.0.memo?;
        let hash = |v: u32, note: Option<u32>| {
            let mut h = blake3::Hasher::new();
            h.update(&v.to_le_bytes());
            if let Some(n) = note {
                h.update(&n.to_le_bytes());
            }
            *h.finalize().as_bytes()
        };
        let made = output.map(|&(v, note)| Made {
            summary: hash(v, Some(note)),
            read: hash(v, (!self.0.read_values).then_some(note)),
        });
        if let (Some(m), Some(&s)) = (made, output) {
            memo.made.lock().unwrap().insert(m.summary, s);
        }
        memo.steps.lock().unwrap().insert(*input, made);
        made
    }
}

/// Runs [`Nearest`] with `bodies` and no notes, memoised in `memo` or not, with at most
/// `rounds` rounds.
fn nearest(cg: &CallGraph, bodies: &[u32], memo: Option<&ToyMemo>, rounds: u32) -> Schedule<Noted> {
    noted(cg, bodies, &vec![0; bodies.len()], memo, rounds, true)
}

/// Runs [`Nearest`] with `bodies` and `notes`, the memo naming callees by their values only
/// (`read_values`) or by their whole summaries.
fn noted(
    cg: &CallGraph,
    bodies: &[u32],
    notes: &[u32],
    memo: Option<&ToyMemo>,
    rounds: u32,
    read_values: bool,
) -> Schedule<Noted> {
    let analysis = Nearest {
        cg,
        bodies: bodies.to_vec(),
        notes: notes.to_vec(),
        memo,
        read_values,
    };
    let options = Options {
        jobs: 2,
        progress: false,
        max_rounds: rounds,
    };
    run_with(cg, &analysis, &options)
}

/// The same fixpoint, step counts aside.
fn assert_same_fixpoint(a: &Schedule<Noted>, b: &Schedule<Noted>) {
    assert_eq!(a.summaries, b.summaries);
    assert_eq!(a.stats.iterations, b.stats.iterations);
    assert_eq!(a.stats.nonconverged, b.stats.nonconverged);
    assert_eq!(
        a.stats.analyze_calls + a.stats.replayed_steps,
        b.stats.analyze_calls + b.stats.replayed_steps
    );
}

#[test]
fn replayed_steps_give_what_the_analysis_gives() {
    for seed in 1..16u64 {
        let cg = random_graph(300, seed);
        let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut bodies: Vec<u32> = (0..300).map(|_| (rnd() % 50) as u32).collect();
        let rounds = 2 + (seed % 4) as u32;
        let memo = ToyMemo::default();
        let plain = nearest(&cg, &bodies, None, rounds);
        let cold = nearest(&cg, &bodies, Some(&memo), rounds);
        assert_same_fixpoint(&cold, &plain);
        assert_eq!(cold.stats.replayed_steps, 0);
        let again = nearest(&cg, &bodies, Some(&memo), rounds);
        assert_same_fixpoint(&again, &plain);
        let recursive_steps = plain.stats.analyze_calls - again.stats.analyze_calls;
        assert_eq!(again.stats.replayed_steps, recursive_steps, "seed {seed}");
        assert!(
            recursive_steps > 0,
            "seed {seed}: the graph has recursive SCCs"
        );
        for _ in 0..3 {
            let f = (rnd() % 300) as usize;
            bodies[f] = (rnd() % 50) as u32;
        }
        let edited = nearest(&cg, &bodies, Some(&memo), rounds);
        assert_same_fixpoint(&edited, &nearest(&cg, &bodies, None, rounds));
    }
}

#[test]
fn an_edit_that_changes_one_summary_replays_the_other_steps() {
    // A ring 0 → 1 → … → 49 → 0: each value is the distance to 0 along the ring.
    let n = 50u32;
    let edges: Vec<(u32, u32)> = (0..n).map(|i| (i, (i + 1) % n)).collect();
    let cg = graph(n as usize, &edges);
    let mut bodies = vec![1000; n as usize];
    bodies[0] = 0;
    let memo = ToyMemo::default();
    let cold = nearest(&cg, &bodies, Some(&memo), 100);
    assert_eq!(cold.stats.nonconverged, 0);
    // Function 25's own body is not its final value, before or after: its steps run again, and
    // those of the callers an intermediate value of it reaches, until one comes out as before.
    bodies[25] = 2000;
    let edited = nearest(&cg, &bodies, Some(&memo), 100);
    assert_same_fixpoint(&edited, &nearest(&cg, &bodies, None, 100));
    let analysed = edited.stats.analyze_calls;
    assert!(analysed >= 1 && analysed * 10 < cold.stats.analyze_calls);
    // Function 25's body now is its value: every function before it on the ring changes.
    bodies[25] = 3;
    let reached = nearest(&cg, &bodies, Some(&memo), 100);
    assert_same_fixpoint(&reached, &nearest(&cg, &bodies, None, 100));
    assert_eq!(reached.summaries[24], Some((4, 0)));
    assert!(reached.stats.analyze_calls > 20);
}

#[test]
fn an_edit_to_what_callers_do_not_read_replays_their_steps() {
    // Function 0 calls 1..=40 and each of them calls 0 back; 0's note changes, its value
    // does not.
    let n = 41u32;
    let edges: Vec<(u32, u32)> = (1..n).flat_map(|i| [(0, i), (i, 0)]).collect();
    let cg = graph(n as usize, &edges);
    let mut bodies = vec![1000; n as usize];
    bodies[0] = 0;
    let mut notes = vec![0; n as usize];
    let mut edited_steps = Vec::new();
    for read_values in [true, false] {
        let memo = ToyMemo::default();
        noted(&cg, &bodies, &notes, Some(&memo), 100, read_values);
        notes[0] = 7;
        let edited = noted(&cg, &bodies, &notes, Some(&memo), 100, read_values);
        let plain = noted(&cg, &bodies, &notes, None, 100, read_values);
        assert_same_fixpoint(&edited, &plain);
        assert_eq!(edited.summaries[0], Some((0, 7)));
        assert_eq!(edited.summaries[40], Some((1, 0)));
        edited_steps.push(edited.stats.analyze_calls);
        notes[0] = 0;
    }
    // Named by the values they read, only function 0's own steps run again; named by their
    // callees' whole summaries, so do those of the 40 functions calling it.
    let [values, whole] = edited_steps[..] else {
        unreachable!()
    };
    assert!(values >= 1 && values + 40 <= whole, "{values} vs {whole}");
}

#[test]
fn a_lost_step_summary_runs_the_fixpoint_again_and_records_it() {
    let cg = random_graph(300, 7);
    let bodies: Vec<u32> = (0..300).map(|i| (i * 37 % 50) as u32).collect();
    let memo = ToyMemo::default();
    let plain = nearest(&cg, &bodies, None, 4);
    nearest(&cg, &bodies, Some(&memo), 4);
    let warm = nearest(&cg, &bodies, Some(&memo), 4);
    assert!(warm.stats.replayed_steps > 0);
    // Every summary a step made is gone: an SCC that reads one runs its fixpoint again (the
    // values its steps make are then there again for the SCCs after it).
    memo.made.lock().unwrap().clear();
    let lost = nearest(&cg, &bodies, Some(&memo), 4);
    assert_same_fixpoint(&lost, &plain);
    assert!(lost.stats.analyze_calls > warm.stats.analyze_calls);
    // The run that lost them recorded them again.
    let again = nearest(&cg, &bodies, Some(&memo), 4);
    assert_same_fixpoint(&again, &plain);
    assert_eq!(again.stats.replayed_steps, warm.stats.replayed_steps);
}

#[test]
fn summaries_lost_under_an_edit_still_give_the_analysis_fixpoint() {
    for seed in 1..8u64 {
        let cg = random_graph(300, seed);
        let mut bodies: Vec<u32> = (0..300).map(|i| (i * 37 % 50) as u32).collect();
        let memo = ToyMemo::default();
        nearest(&cg, &bodies, Some(&memo), 4);
        // An edit makes some steps analysed; the summaries they read are gone.
        for f in [3, 150, 299] {
            bodies[f] = 7;
        }
        memo.made.lock().unwrap().clear();
        let plain = nearest(&cg, &bodies, None, 4);
        assert_same_fixpoint(&nearest(&cg, &bodies, Some(&memo), 4), &plain);
        // What the run that lost them recorded is replayed right.
        assert_same_fixpoint(&nearest(&cg, &bodies, Some(&memo), 4), &plain);
    }
}
