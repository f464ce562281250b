//! Thread entries (RELAY §3.4): `main`, every start routine of a thread creation found in the
//! summaries, every callback that escapes to code relay cannot see (it may run at any time, in
//! any thread: [`crate::pta::callbacks`]) and the named ones, each with whether it may run more
//! than once at a time and where it came from.

use std::collections::{BTreeMap, BTreeSet};

use rustc_hash::{FxHashMap, FxHashSet};

use super::families::FamilyEntry;
use crate::callgraph::{CallGraph, IndirectCalls};
use crate::ir::{Expr, FuncId, Instr, Loc};
use crate::link::Program;
use crate::models::Models;
use crate::pta::callbacks::EscapedCallback;
use crate::pta::PointsTo;
use crate::summary::{Path, Root, Summaries};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadEntry {
    pub func: FuncId,
    /// Started from two creation sites, in a loop, or by an entry that itself runs more than
    /// once: concurrent with itself.
    pub multiple: bool,
    pub is_main: bool,
    /// The entries run once (`main`, a thread started once) inside whose threads every creation
    /// of this one happens (started by the entry or by threads that are themselves ordered by
    /// it): the entry's accesses before its first thread creation precede this thread. Sorted.
    pub ordered_by: Vec<FuncId>,
    /// Those of `ordered_by` that also see this thread finished once they have joined every
    /// thread they created: every entry between them and this one joins all its threads
    /// before it ends. Sorted.
    pub joined_by: Vec<FuncId>,
    /// The one global object every creation passes as the thread's argument (`&dev_c`), if
    /// they agree: the entry's `arg->lock` is then one lock in all its instances.
    pub arg: Option<Path>,
    /// Every creation hands the thread an object of its own (allocated by the creating
    /// function and not yet escaped there): what the thread reaches through its argument
    /// without following a pointer stored in memory is a different object in each instance.
    pub private_arg: bool,
    /// … and some of those objects are array elements: `arg[k]` may be a neighbour.
    pub private_element: bool,
    pub origin: EntryOrigin,
}

/// Why a function is a thread entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EntryOrigin {
    Main,
    /// A thread creation starts it.
    Started,
    /// `--entry`, `--entry-file` or `--entry-roots`.
    Named,
    /// A function of an entry family of the models (`[[entries]]`: a system call, a work
    /// item handler, …).
    Family {
        name: String,
    },
    /// Handed to a library function that may call it at any time, in any thread: `via` at
    /// `loc` in `caller`; `unknown` when `via` has neither body nor model.
    Callback {
        via: FuncId,
        caller: FuncId,
        loc: Loc,
        unknown: bool,
    },
}

/// For each started function: the distinct creation sites, whether one is in a loop or
/// reached along two call paths, and whether a multiply-running entry starts it.
#[derive(Default)]
struct Starts {
    sites: BTreeSet<crate::ir::Loc>,
    multiple: bool,
    starters: BTreeSet<FuncId>,
    /// `None` once two creations disagree or one has no known global argument.
    arg: Option<Option<Path>>,
    /// Some creation passes an argument that is neither a fresh object nor a distinct
    /// element.
    shared_arg: bool,
    /// Some creation passes an array element (not a whole fresh object).
    element_arg: bool,
}

impl Starts {
    fn runs_more_than_once(&self) -> bool {
        self.multiple || self.sites.len() > 1 || self.starters.len() > 1
    }
}

/// Finds the entries: `main` (if defined), `named` and the functions of the entry `families` are roots;
/// so is every defined function
/// nothing calls (kernel init code, a library's API). Thread creations in a root's summary
/// (its own and its callees') start entries; the entries' own summaries may start more.
pub fn thread_entries(
    program: &Program,
    cg: &CallGraph,
    sums: &Summaries,
    named: &[FuncId],
    families: &[FamilyEntry],
    pta: &PointsTo,
) -> Vec<ThreadEntry> {
    let callbacks = pta.callbacks.escaped();
    // Family entries are entries from outside, as named ones are.
    let extra: BTreeSet<FuncId> = named
        .iter()
        .copied()
        .chain(families.iter().map(|f| f.func))
        .collect();
    let main = main_function(program);
    let mut roots: BTreeSet<FuncId> = uncalled_functions(program, cg, pta).into_iter().collect();
    roots.extend(main);
    roots.extend(extra.iter().copied());
    let (started, entries) = started_functions(sums, &roots, &extra, callbacks);
    // The entries that run once: `main` and threads started once (a callback runs any number
    // of times, and a named entry in several threads: neither is here).
    let escaped: FxHashSet<FuncId> = callbacks.iter().map(|cb| cb.func).collect();
    let once: Vec<FuncId> = main
        .into_iter()
        .chain(entries.iter().filter(|(_, &m)| !m).map(|(&f, _)| f))
        .filter(|f| !escaped.contains(f) && !extra.contains(f))
        .collect();
    let (mut ordered_by, mut joined_by) = orderings(sums, &started, &once);
    let mut out: Vec<ThreadEntry> = entries
        .into_iter()
        .map(|(func, multiple)| {
            let s = &started[&func];
            ThreadEntry {
                func,
                multiple,
                is_main: Some(func) == main,
                ordered_by: ordered_by.remove(&func).unwrap_or_default(),
                joined_by: joined_by.remove(&func).unwrap_or_default(),
                arg: s.arg.clone().flatten(),
                // Elements are distinct per creation at one site, by one starter.
                private_arg: !s.shared_arg
                    && (!s.element_arg || (s.sites.len() == 1 && s.starters.len() == 1)),
                private_element: s.element_arg,
                origin: EntryOrigin::Started,
            }
        })
        .collect();
    if let Some(m) = main {
        if !out.iter().any(|e| e.func == m) {
            out.push(root_entry(m, true));
        }
    }
    add_outside_entries(&mut out, callbacks, named, families);
    out.sort_by_key(|e| e.func);
    out
}

/// The functions threads start, from the roots, the escaped callbacks and the started
/// functions themselves until multiplicities are stable; and whether each runs more than once.
fn started_functions(
    sums: &Summaries,
    roots: &BTreeSet<FuncId>,
    extra: &BTreeSet<FuncId>,
    callbacks: &[EscapedCallback],
) -> (BTreeMap<FuncId, Starts>, BTreeMap<FuncId, bool>) {
    let mut started: BTreeMap<FuncId, Starts> = BTreeMap::new();
    // Recording a function again adds nothing unless it now runs more than once: on the kernel,
    // thousands of entries each reach thousands of creations, every round.
    let mut recorded: BTreeMap<FuncId, bool> = BTreeMap::new();
    let mut record = |from: FuncId, multiple: bool, started: &mut BTreeMap<FuncId, Starts>| {
        if recorded.get(&from).is_some_and(|&m| m || !multiple) {
            return;
        }
        recorded.insert(from, multiple);
        record_starts(sums, from, multiple, started);
    };
    for &r in roots {
        // A named entry (or one of an entry family) may run in several threads at once: so
        // may the threads it starts.
        record(r, extra.contains(&r), &mut started);
    }
    // Escaped callbacks run any number of times: so do the threads they start.
    for cb in callbacks {
        record(cb.func, true, &mut started);
    }
    // Entries may start threads too; iterate until multiplicities are stable.
    let mut entries: BTreeMap<FuncId, bool> = BTreeMap::new();
    loop {
        let current: BTreeMap<FuncId, bool> = started
            .iter()
            .map(|(&f, s)| (f, s.runs_more_than_once()))
            .collect();
        if current == entries {
            return (started, entries);
        }
        entries = current;
        // Start routines are usually roots too (nothing calls them directly): recording them
        // again carries their multiplicity to the threads they start.
        for (&f, &multiple) in &entries {
            record(f, multiple, &mut started);
        }
    }
}

/// Records the thread creations in `from`'s summary (its own and its callees').
fn record_starts(
    sums: &Summaries,
    from: FuncId,
    from_multiple: bool,
    started: &mut BTreeMap<FuncId, Starts>,
) {
    let Some(s) = sums.get(from) else { return };
    for sp in &s.spawns {
        for &f in &sp.start {
            let st = started.entry(f).or_default();
            st.sites.insert(sp.loc);
            st.starters.insert(from);
            let global = sp.arg.clone().filter(|p| matches!(p.root, Root::Global(_)));
            st.arg = match st.arg.take() {
                None => Some(global),
                Some(a) if a == global => Some(a),
                Some(_) => Some(None),
            };
            st.multiple |= ((sp.in_loop || sp.paths > 1) && !sp.alone) || from_multiple;
            let element = !sp.fresh_arg && sp.distinct_arg && sp.paths == 1 && !from_multiple;
            st.shared_arg |= !sp.fresh_arg && !element;
            st.element_arg |= element;
        }
    }
}

/// Per started function, the entries that run `once` and order it: it runs only after their
/// creation of it (`ordered_by`), or also ends before their joins (`joined_by`).
fn orderings(
    sums: &Summaries,
    started: &BTreeMap<FuncId, Starts>,
    once: &[FuncId],
) -> (BTreeMap<FuncId, Vec<FuncId>>, BTreeMap<FuncId, Vec<FuncId>>) {
    let starters: BTreeMap<FuncId, &BTreeSet<FuncId>> =
        started.iter().map(|(&f, s)| (f, &s.starters)).collect();
    let leaves_no_threads = |s: FuncId| sums.get(s).is_some_and(|x| x.threads.live.is_empty());
    // By starter, the functions it starts.
    let mut starts: FxHashMap<FuncId, Vec<FuncId>> = FxHashMap::default();
    for (&f, by) in &starters {
        for &s in by.iter() {
            starts.entry(s).or_default().push(f);
        }
    }
    let mut ordered_by: BTreeMap<FuncId, Vec<FuncId>> = BTreeMap::new();
    let mut joined_by: BTreeMap<FuncId, Vec<FuncId>> = BTreeMap::new();
    for &e in once {
        if !starts.contains_key(&e) {
            continue;
        }
        let ordered = greatest_fixpoint(&starters, &starts, e, |_| true);
        let joined = greatest_fixpoint(&starters, &starts, e, leaves_no_threads);
        for &f in ordered.iter().filter(|&&f| f != e) {
            ordered_by.entry(f).or_default().push(e);
            if joined.contains(&f) {
                joined_by.entry(f).or_default().push(e);
            }
        }
    }
    (ordered_by, joined_by)
}

/// An entry nothing starts: `main`, or a function named or of a family.
fn root_entry(func: FuncId, is_main: bool) -> ThreadEntry {
    ThreadEntry {
        func,
        multiple: false,
        is_main,
        ordered_by: Vec::new(),
        joined_by: Vec::new(),
        arg: None,
        private_arg: false,
        private_element: false,
        origin: if is_main {
            EntryOrigin::Main
        } else {
            EntryOrigin::Named
        },
    }
}

/// Adds the entries that come from outside the program: escaped callbacks, named entries and
/// those of the entry families. Each may run several times at once; a callback is ordered with
/// nothing.
fn add_outside_entries(
    out: &mut Vec<ThreadEntry>,
    callbacks: &[EscapedCallback],
    named: &[FuncId],
    families: &[FamilyEntry],
) {
    // Where each entry is in `out`.
    let mut at: BTreeMap<FuncId, usize> =
        out.iter().enumerate().map(|(i, e)| (e.func, i)).collect();
    for cb in callbacks {
        let origin = EntryOrigin::Callback {
            via: cb.via,
            caller: cb.caller,
            loc: cb.loc,
            unknown: cb.unknown,
        };
        match at.get(&cb.func) {
            Some(&i) => {
                let e = &mut out[i];
                e.multiple = true;
                e.ordered_by.clear();
                e.joined_by.clear();
                e.private_arg = false;
            }
            None => {
                at.insert(cb.func, out.len());
                out.push(ThreadEntry {
                    multiple: true,
                    origin,
                    ..root_entry(cb.func, false)
                });
            }
        }
    }
    let named_set: BTreeSet<FuncId> = named.iter().copied().collect();
    let family: BTreeMap<FuncId, &FamilyEntry> = families.iter().map(|f| (f.func, f)).collect();
    let extra = named.iter().copied().chain(families.iter().map(|f| f.func));
    for x in extra {
        match at.get(&x) {
            Some(&i) => {
                let e = &mut out[i];
                e.multiple = true;
                e.private_arg = false;
            }
            None => {
                at.insert(x, out.len());
                let from_family = family.get(&x).filter(|_| !named_set.contains(&x));
                out.push(ThreadEntry {
                    multiple: true,
                    // A non-reentrant handler's instances run on distinct objects.
                    private_arg: from_family.is_some_and(|f| f.own_object),
                    origin: match from_family {
                        Some(f) => EntryOrigin::Family {
                            name: f.family.clone(),
                        },
                        None => EntryOrigin::Named,
                    },
                    ..root_entry(x, false)
                });
            }
        }
    }
}

/// The largest set of started functions each of whose starters is `e`, or in the set and
/// `keeps`: every function with another starter is out, then every function one that is out
/// starts, until nothing more goes (linear in the starts, once per `e`; on the kernel the
/// entries that run once are thousands).
fn greatest_fixpoint(
    starters: &BTreeMap<FuncId, &BTreeSet<FuncId>>,
    starts: &FxHashMap<FuncId, Vec<FuncId>>,
    e: FuncId,
    keeps: impl Fn(FuncId) -> bool,
) -> BTreeSet<FuncId> {
    let mut out: FxHashSet<FuncId> = FxHashSet::default();
    let mut work: Vec<FuncId> = Vec::new();
    for (&f, by) in starters {
        let violated = by
            .iter()
            .any(|&s| s != e && (!starters.contains_key(&s) || !keeps(s)));
        if violated && out.insert(f) {
            work.push(f);
        }
    }
    while let Some(s) = work.pop() {
        if s == e {
            continue;
        }
        for &f in starts.get(&s).into_iter().flatten() {
            if out.insert(f) {
                work.push(f);
            }
        }
    }
    starters
        .keys()
        .copied()
        .filter(|f| !out.contains(f))
        .collect()
}

/// `main`, if the program defines it.
pub fn main_function(program: &Program) -> Option<FuncId> {
    (0..program.functions.len() as u32).map(FuncId).find(|&f| {
        let pf = &program.functions[f.index()];
        pf.body.is_some() && program.names.get(pf.name) == "main"
    })
}

/// The entries called from outside the program: `main`, the `named` entries, with `roots`
/// every defined function nothing calls, and the entry families' functions — not the start
/// routines and callbacks, whose arguments the program passes. What the inclusion-based
/// points-to takes as called with any memory.
pub fn outside_entries(
    program: &Program,
    cg: &CallGraph,
    pta: &PointsTo,
    named: &[FuncId],
    roots: bool,
    families: &[FamilyEntry],
) -> Vec<FuncId> {
    let mut outside: Vec<FuncId> = main_function(program)
        .into_iter()
        .chain(named.iter().copied())
        .chain(families.iter().map(|f| f.func))
        .collect();
    if roots {
        outside.extend(uncalled_functions(program, cg, pta));
    }
    outside
}

/// The defined functions nothing calls and that may run ([`PointsTo::may_run`]): kernel init
/// code, a library's API. Their thread creations start entries (`--entry-roots`: they are
/// entries themselves).
pub fn uncalled_functions(program: &Program, cg: &CallGraph, pta: &PointsTo) -> Vec<FuncId> {
    let called = cg.called();
    (0..program.functions.len() as u32)
        .map(FuncId)
        .filter(|&f| {
            program.functions[f.index()].body.is_some()
                && !called.get(f.index()).copied().unwrap_or(false)
                && pta.may_run(f)
        })
        .collect()
}

/// The functions whose summaries the race stage reads: `main`, `extra`, every defined function
/// nothing calls, and every function a thread creation may start. Known before any summary is
/// computed (start routines from the thread-creation calls in the IR and the points-to targets
/// of their start argument), so the scheduler can drop every other summary as soon as its
/// callers are done. By `FuncId`.
pub fn summaries_needed(
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    models: &Models,
    extra: &[FuncId],
) -> Vec<bool> {
    let n = program.functions.len();
    let mut need: Vec<bool> = (0..n)
        .map(|i| {
            let f = &program.functions[i];
            f.body.is_some() && program.names.get(f.name) == "main"
        })
        .collect();
    for f in uncalled_functions(program, cg, pta)
        .into_iter()
        .chain(extra.iter().copied())
    {
        need[f.index()] = true;
    }
    for f in possible_start_routines(program, pta, cg, models) {
        need[f.index()] = true;
    }
    for cb in pta.callbacks.escaped() {
        need[cb.func.index()] = true;
    }
    need
}

/// `(T)f`, `(T)(U)f`, …: a function constant under one cast or more.
fn casts_a_function(callee: &Expr) -> bool {
    matches!(callee, Expr::Cast(..)) && matches!(callee.strip_casts(), Expr::Func(_))
}

/// Every function some thread-creation call may start: a superset of the start routines the
/// summaries find (they follow the same argument, with flow-sensitive values inside a function,
/// which the flow-insensitive points-to targets include). Only the bodies of functions the call
/// graph says call a thread-creating function (or that call through a cast, below) are walked:
/// its edges hold every target an indirect call site resolves to; walking every body resolved
/// every indirect call of the program again (its targets filtered by signature) on every run.
fn possible_start_routines(
    program: &Program,
    pta: &PointsTo,
    cg: &CallGraph,
    models: &Models,
) -> Vec<FuncId> {
    let model = |g: FuncId| models.get(program.function_name(g));
    let creates: Vec<bool> = (0..program.functions.len() as u32)
        .map(|g| model(FuncId(g)).is_some_and(|m| m.thread_create.is_some()))
        .collect();
    let mut out = Vec::new();
    for (i, func) in program.functions.iter().enumerate() {
        let f = FuncId(i as u32);
        let Some(body) = &func.body else { continue };
        let calls_a_creator = cg.edges.get(i).is_some_and(|es| {
            es.iter()
                .any(|e| creates.get(e.callee.index()).copied().unwrap_or(false))
        });
        let calls = || {
            body.blocks
                .iter()
                .flat_map(|b| &b.instrs)
                .filter_map(|ins| match ins {
                    Instr::Call { callee, args, .. } => Some((callee, args)),
                    _ => None,
                })
        };
        // A call of a function cast to another type has an edge to that function only, but is
        // resolved by points-to like an indirect call: such a body is walked too.
        if !calls_a_creator && !calls().any(|(callee, _)| casts_a_function(callee)) {
            continue;
        }
        for (callee, args) in calls() {
            for g in pta.resolve(program, f, callee, args.len()) {
                let Some(start) = model(g)
                    .and_then(|m| m.thread_create.as_ref())
                    .and_then(|t| args.get(t.start))
                else {
                    continue;
                };
                out.extend(pta.function_argument(program, f, start, Some(1)));
            }
        }
    }
    out
}
