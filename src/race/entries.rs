//! Thread entries (RELAY §3.4): `main` and every start routine of a thread creation found in the
//! summaries, with whether the entry may run more than once at a time.

use std::collections::{BTreeMap, BTreeSet};

use crate::callgraph::CallGraph;
use crate::ir::FuncId;
use crate::link::Program;
use crate::summary::Summaries;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadEntry {
    pub func: FuncId,
    /// Started from two creation sites, in a loop, or by an entry that itself runs more than
    /// once: concurrent with itself.
    pub multiple: bool,
    pub is_main: bool,
}

/// Finds the entries: `main` (if defined) and `extra` are roots; so is every defined function
/// nothing calls (kernel init code, a library's API). Thread creations in a root's summary
/// (its own and its callees') start entries; the entries' own summaries may start more.
pub fn thread_entries(
    program: &Program,
    cg: &CallGraph,
    sums: &Summaries,
    extra: &[FuncId],
) -> Vec<ThreadEntry> {
    let main = (0..program.functions.len() as u32).map(FuncId).find(|&f| {
        let pf = &program.functions[f.index()];
        pf.body.is_some() && program.names.get(pf.name) == "main"
    });
    let callers = cg.callers();
    let mut roots: BTreeSet<FuncId> = (0..program.functions.len() as u32)
        .map(FuncId)
        .filter(|f| program.functions[f.index()].body.is_some() && callers[f.index()].is_empty())
        .collect();
    roots.extend(main);
    roots.extend(extra.iter().copied());

    // For each started function: the distinct creation sites, whether one is in a loop or
    // reached along two call paths, and whether a multiply-running entry starts it.
    #[derive(Default)]
    struct Starts {
        sites: BTreeSet<crate::ir::Loc>,
        multiple: bool,
    }
    let mut started: BTreeMap<FuncId, Starts> = BTreeMap::new();
    let record = |from: FuncId, from_multiple: bool, started: &mut BTreeMap<FuncId, Starts>| {
        let Some(s) = sums.get(from) else { return };
        for sp in &s.spawns {
            for &f in &sp.start {
                let st = started.entry(f).or_default();
                st.sites.insert(sp.loc);
                st.multiple |= sp.in_loop || sp.paths > 1 || from_multiple;
            }
        }
    };
    for &r in &roots {
        record(r, false, &mut started);
    }
    // Entries may start threads too; iterate until multiplicities are stable.
    let mut entries: BTreeMap<FuncId, bool> = BTreeMap::new();
    loop {
        let current: BTreeMap<FuncId, bool> = started
            .iter()
            .map(|(&f, s)| (f, s.multiple || s.sites.len() > 1))
            .collect();
        if current == entries {
            break;
        }
        entries = current;
        for (&f, &multiple) in &entries {
            if !roots.contains(&f) {
                record(f, multiple, &mut started);
            }
        }
    }
    let mut out: Vec<ThreadEntry> = entries
        .into_iter()
        .map(|(func, multiple)| ThreadEntry {
            func,
            multiple,
            is_main: Some(func) == main,
        })
        .collect();
    if let Some(m) = main {
        if !out.iter().any(|e| e.func == m) {
            out.push(ThreadEntry {
                func: m,
                multiple: false,
                is_main: true,
            });
        }
    }
    for &x in extra {
        if !out.iter().any(|e| e.func == x) {
            out.push(ThreadEntry {
                func: x,
                multiple: false,
                is_main: false,
            });
        }
    }
    out.sort_by_key(|e| e.func);
    out
}
