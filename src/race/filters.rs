//! RELAY's four warning filters (§4.3). They are heuristics — unsound, they can remove real
//! races — so every one is named, switchable, counted, and a filtered warning is kept (marked
//! with the filters that remove it) for `--show-filtered` and SARIF suppressions.
//!
//! All four are off by default: the default output is the analysis' answer, and the sound
//! refinements (orderings with `main`, conditional must-not-alias) are built into it.
//! `--filter all=on` is RELAY's configuration (with `--filter-k 1`, the paper's k).

use std::collections::BTreeMap;
use std::path::Path as FsPath;

use anyhow::{bail, Context as _, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::entries::ThreadEntry;
use super::pairs::{Pair, Side};
use crate::callgraph::{CallGraph, SccId};
use crate::ir::FuncId;
use crate::link::Program;
use crate::pta::{Origin, PointsTo};
use crate::summary::path::Classes;

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Filter {
    /// The object was allocated inside the thread that performs one of the accesses
    /// (RELAY's "initialization" false positives).
    ThreadLocalAlloc,
    /// The lvalue's points-to representative stands for more than k program lvalues
    /// ("unlikely aliasing", "unsharing").
    LargeRepr,
    /// One access is in the boot-up thread (`main`, `start_kernel`, `kernel_init`, `rest_init`,
    /// or a `--bootup` function): "re-entrant locks" it holds for most of its run.
    BootupThread,
    /// Both accesses come from the same entry ("non-parallel threads").
    SameEntry,
}

impl Filter {
    /// In RELAY's order, which is the order they are applied and counted in.
    pub const ALL: [Filter; 4] = [
        Filter::ThreadLocalAlloc,
        Filter::LargeRepr,
        Filter::BootupThread,
        Filter::SameEntry,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Filter::ThreadLocalAlloc => "thread-local-alloc",
            Filter::LargeRepr => "large-repr",
            Filter::BootupThread => "bootup-thread",
            Filter::SameEntry => "same-entry",
        }
    }

    /// The filter's position in [`Filter::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    pub fn from_name(name: &str) -> Option<Filter> {
        Filter::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Which filters run, and their parameters.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FilterConfig {
    enabled: BTreeMap<Filter, bool>,
    /// `large-repr` removes lvalues whose representative stands for more than `k` lvalues.
    pub k: usize,
    /// Extra boot-up thread entries, by function name.
    pub bootup: Vec<String>,
}

/// The paper's k.
pub const DEFAULT_K: usize = 1;

/// Boot-up threads recognised by name.
const BOOTUP_NAMES: &[&str] = &["main", "start_kernel", "kernel_init", "rest_init"];

impl Default for FilterConfig {
    fn default() -> Self {
        FilterConfig {
            enabled: Filter::ALL.into_iter().map(|f| (f, false)).collect(),
            k: DEFAULT_K,
            bootup: Vec::new(),
        }
    }
}

/// A filters file (`--filters-file`): `[filters]` with `NAME = true|false`, optional `k` and
/// `bootup = ["fn", …]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FiltersFile {
    #[serde(default)]
    filters: BTreeMap<String, bool>,
    k: Option<usize>,
    #[serde(default)]
    bootup: Vec<String>,
}

impl FilterConfig {
    pub fn is_enabled(&self, f: Filter) -> bool {
        self.enabled.get(&f).copied().unwrap_or(false)
    }

    pub fn set(&mut self, f: Filter, on: bool) {
        self.enabled.insert(f, on);
    }

    /// Applies one `NAME=on|off` setting (`all` names every filter).
    pub fn apply_setting(&mut self, setting: &str) -> Result<()> {
        let Some((name, value)) = setting.split_once('=') else {
            bail!("--filter {setting:?}: expected NAME=on|off");
        };
        let on = match value {
            "on" | "true" | "1" => true,
            "off" | "false" | "0" => false,
            _ => bail!("--filter {setting:?}: the value must be on or off"),
        };
        self.set_named(name, on)
    }

    fn set_named(&mut self, name: &str, on: bool) -> Result<()> {
        if name == "all" {
            for f in Filter::ALL {
                self.set(f, on);
            }
            return Ok(());
        }
        match Filter::from_name(name) {
            Some(f) => {
                self.set(f, on);
                Ok(())
            }
            None => bail!(
                "unknown filter {name:?} (filters: all, {})",
                Filter::ALL.map(Filter::name).join(", ")
            ),
        }
    }

    pub fn load_file(&mut self, path: &FsPath) -> Result<()> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading filters file {}", path.display()))?;
        let file: FiltersFile = toml::from_str(&text)
            .with_context(|| format!("parsing filters file {}", path.display()))?;
        for (name, on) in &file.filters {
            self.set_named(name, *on)
                .with_context(|| format!("in {}", path.display()))?;
        }
        if let Some(k) = file.k {
            self.k = k;
        }
        self.bootup.extend(file.bootup);
        Ok(())
    }
}

/// What the filters need from the analysis.
pub struct FilterContext<'a> {
    pub program: &'a Program,
    pub pta: &'a PointsTo,
    pub cg: &'a CallGraph,
    pub entries: &'a [ThreadEntry],
}

/// What the filters look at in one warning, independent of which filters are on and of their
/// parameters: computed once per pair by [`FactFinder`], saved with the run, and turned into a
/// decision by [`FilterFacts::matching`] for any [`FilterConfig`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterFacts {
    /// One side's object class has an allocation site in a function reachable from that
    /// side's entry.
    pub thread_local_alloc: bool,
    /// The larger of the two sides' object class sizes (program lvalues).
    pub repr_size: usize,
    /// Per side: the entry is `main`.
    pub is_main: [bool; 2],
    /// Per side: the entry function's name (`BOOTUP_NAMES`, `--bootup`).
    pub entry_names: [String; 2],
    /// Both sides come from the same entry function.
    pub same_entry: bool,
}

impl FilterFacts {
    /// The enabled filters that remove this warning, in RELAY's order.
    pub fn matching(&self, config: &FilterConfig) -> Vec<Filter> {
        Filter::ALL
            .into_iter()
            .filter(|&f| config.is_enabled(f) && self.removes(f, config))
            .collect()
    }

    fn removes(&self, f: Filter, config: &FilterConfig) -> bool {
        match f {
            Filter::ThreadLocalAlloc => self.thread_local_alloc,
            Filter::LargeRepr => self.repr_size > config.k,
            Filter::BootupThread => (0..2).any(|i| {
                let name = self.entry_names[i].as_str();
                self.is_main[i]
                    || BOOTUP_NAMES.contains(&name)
                    || config.bootup.iter().any(|b| b == name)
            }),
            Filter::SameEntry => self.same_entry,
        }
    }
}

/// Computes the [`FilterFacts`] of pairs, caching what is expensive: the allocation sites of
/// each class (one pass over the points-to nodes), the functions reachable from each entry,
/// and whether an entry reaches an allocation site of a class.
pub struct FactFinder<'a> {
    ctx: FilterContext<'a>,
    /// Functions with an allocation site in the class, by class representative (sorted).
    alloc_sites: FxHashMap<u32, Vec<FuncId>>,
    mains: FxHashSet<FuncId>,
    /// The functions reachable from each entry, as bitsets (on the kernel thousands of entries
    /// reach tens of thousands of functions each: hash sets took gigabytes).
    reachable: FxHashMap<FuncId, Vec<u64>>,
    allocates: FxHashMap<(FuncId, u32), bool>,
}

impl<'a> FactFinder<'a> {
    pub fn new(ctx: FilterContext<'a>) -> Self {
        let pta = ctx.pta;
        let mut alloc_sites: FxHashMap<u32, Vec<FuncId>> = FxHashMap::default();
        for n in 0..pta.node_count() as u32 {
            if let Origin::Alloc(f, _) = pta.origin(n) {
                alloc_sites.entry(pta.class(n)).or_default().push(f);
            }
        }
        for sites in alloc_sites.values_mut() {
            sites.sort_unstable();
            sites.dedup();
        }
        let mains = ctx
            .entries
            .iter()
            .filter(|e| e.is_main)
            .map(|e| e.func)
            .collect();
        FactFinder {
            ctx,
            alloc_sites,
            mains,
            reachable: FxHashMap::default(),
            allocates: FxHashMap::default(),
        }
    }

    pub fn facts(&mut self, pair: &Pair<'_>) -> FilterFacts {
        let sides = [&pair.first, &pair.second];
        let classes = sides.map(|s| self.object_class(s));
        let name = |s: &Side<'_>| self.ctx.program.function_name(s.entry).to_string();
        FilterFacts {
            thread_local_alloc: (0..2).any(|i| self.allocated_by_entry(sides[i].entry, classes[i])),
            repr_size: classes
                .iter()
                .map(|c| c.map_or(0, |c| self.ctx.pta.class_size(c)))
                .max()
                .unwrap_or(0),
            is_main: sides.map(|s| self.mains.contains(&s.entry)),
            entry_names: sides.map(name),
            same_entry: pair.first.entry == pair.second.entry,
        }
    }

    /// The class of the object the access goes into (the lvalue's base for `p->f`).
    fn object_class(&self, s: &Side<'_>) -> Option<u32> {
        let classes = Classes {
            program: self.ctx.program,
            pta: self.ctx.pta,
            func: s.entry,
        };
        classes
            .object_class(s.access.path)
            .or(s.access.class)
            .map(|c| self.ctx.pta.class(c))
    }

    /// Whether `class` has an allocation site in a function reachable from `entry`.
    fn allocated_by_entry(&mut self, entry: FuncId, class: Option<u32>) -> bool {
        let Some(c) = class else {
            return false;
        };
        let Some(sites) = self.alloc_sites.get(&c) else {
            return false;
        };
        if let Some(&known) = self.allocates.get(&(entry, c)) {
            return known;
        }
        let cg = self.ctx.cg;
        let reach = self
            .reachable
            .entry(entry)
            .or_insert_with(|| reachable_functions(cg, entry));
        let found = sites
            .iter()
            .any(|f| reach[f.index() / 64] & 1 << (f.index() % 64) != 0);
        self.allocates.insert((entry, c), found);
        found
    }
}

/// The functions reachable from `f` in the call graph (itself included), a bit per function:
/// the functions of every SCC the condensation reaches from `f`'s (the functions of one SCC
/// reach each other). Callee SCCs have smaller ids, so one sweep down from `f`'s SCC finds
/// them all — walking the functions' edges instead crossed the kernel's collapsed SCC (22
/// million edges) once per entry.
fn reachable_functions(cg: &CallGraph, f: FuncId) -> Vec<u64> {
    let mut seen = vec![0u64; cg.len().div_ceil(64)];
    let Some(&top) = cg.scc_of.get(f.index()) else {
        return seen;
    };
    let mut reached = vec![false; top.index() + 1];
    reached[top.index()] = true;
    for s in (0..=top.index()).rev() {
        if !reached[s] {
            continue;
        }
        let scc = cg.scc(SccId(s as u32));
        for &c in &scc.callees {
            reached[c.index()] = true;
        }
        for g in &scc.functions {
            seen[g.index() / 64] |= 1 << (g.index() % 64);
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reachable_functions_are_those_a_walk_of_the_edges_finds() {
        let n = 60u32;
        // Cycles of several sizes, chains between them, and functions nothing reaches.
        let edges: Vec<(FuncId, FuncId)> = (0..n)
            .flat_map(|i| [(i, (i * 7 + 3) % n), (i, (i / 2 + 11) % n)])
            .filter(|&(a, b)| a % 5 != 0 || b < a)
            .map(|(a, b)| (FuncId(a), FuncId(b)))
            .collect();
        let cg = CallGraph::from_edges(vec![true; n as usize], edges);
        for f in (0..n).map(FuncId) {
            let mut walk = vec![false; n as usize];
            let mut stack = vec![f];
            while let Some(g) = stack.pop() {
                if !std::mem::replace(&mut walk[g.index()], true) {
                    stack.extend(cg.callees(g));
                }
            }
            let bits = reachable_functions(&cg, f);
            for g in 0..n as usize {
                assert_eq!(
                    bits[g / 64] & 1 << (g % 64) != 0,
                    walk[g],
                    "{f:?} reaches {g}?"
                );
            }
        }
    }

    #[test]
    fn settings_parse_and_reject() {
        let mut c = FilterConfig::default();
        assert!(Filter::ALL.iter().all(|&f| !c.is_enabled(f)));
        c.apply_setting("large-repr=on").unwrap();
        assert!(c.is_enabled(Filter::LargeRepr));
        c.apply_setting("all=on").unwrap();
        assert!(Filter::ALL.iter().all(|&f| c.is_enabled(f)));
        c.apply_setting("same-entry=off").unwrap();
        assert!(!c.is_enabled(Filter::SameEntry));
        assert!(c.apply_setting("nope=on").is_err());
        assert!(c.apply_setting("large-repr").is_err());
        assert!(c.apply_setting("large-repr=maybe").is_err());
    }

    fn facts() -> FilterFacts {
        FilterFacts {
            thread_local_alloc: false,
            repr_size: 1,
            is_main: [false, false],
            entry_names: ["reader".into(), "writer".into()],
            same_entry: false,
        }
    }

    fn on(filters: &[Filter]) -> FilterConfig {
        let mut c = FilterConfig::default();
        for &f in filters {
            c.set(f, true);
        }
        c
    }

    #[test]
    fn facts_match_only_enabled_filters_in_order() {
        assert_eq!(Filter::ALL.map(Filter::index), [0, 1, 2, 3]);
        let all = on(&Filter::ALL);
        assert!(facts().matching(&all).is_empty());
        let every = FilterFacts {
            thread_local_alloc: true,
            repr_size: 5,
            is_main: [false, true],
            same_entry: true,
            ..facts()
        };
        assert_eq!(every.matching(&all), Filter::ALL.to_vec());
        assert!(every.matching(&FilterConfig::default()).is_empty());
        let some = on(&[Filter::SameEntry, Filter::ThreadLocalAlloc]);
        assert_eq!(
            every.matching(&some),
            vec![Filter::ThreadLocalAlloc, Filter::SameEntry]
        );
    }

    #[test]
    fn large_repr_compares_with_k() {
        let big = FilterFacts {
            repr_size: 3,
            ..facts()
        };
        let mut c = on(&[Filter::LargeRepr]);
        assert_eq!(big.matching(&c), vec![Filter::LargeRepr]);
        c.k = 3;
        assert!(big.matching(&c).is_empty());
        c.k = 2;
        assert_eq!(big.matching(&c), vec![Filter::LargeRepr]);
        // Size 0: no class known.
        let none = FilterFacts {
            repr_size: 0,
            ..facts()
        };
        c.k = 0;
        assert!(none.matching(&c).is_empty());
    }

    #[test]
    fn bootup_by_main_by_name_and_by_option() {
        let mut c = on(&[Filter::BootupThread]);
        assert!(facts().matching(&c).is_empty());
        let main = FilterFacts {
            is_main: [true, false],
            ..facts()
        };
        assert_eq!(main.matching(&c), vec![Filter::BootupThread]);
        for name in ["main", "start_kernel", "kernel_init", "rest_init"] {
            let named = FilterFacts {
                entry_names: ["reader".into(), name.into()],
                ..facts()
            };
            assert_eq!(named.matching(&c), vec![Filter::BootupThread], "{name}");
        }
        c.bootup.push("writer".into());
        assert_eq!(facts().matching(&c), vec![Filter::BootupThread]);
    }

    #[test]
    fn filters_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f.toml");
        std::fs::write(
            &p,
            "k = 3\nbootup = [\"init\"]\n[filters]\nbootup-thread = true\n",
        )
        .unwrap();
        let mut c = FilterConfig::default();
        c.load_file(&p).unwrap();
        assert_eq!(c.k, 3);
        assert!(c.is_enabled(Filter::BootupThread));
        assert_eq!(c.bootup, vec!["init".to_string()]);
        std::fs::write(&p, "[filters]\nbogus = true\n").unwrap();
        let err = FilterConfig::default().load_file(&p).unwrap_err();
        assert!(format!("{err:#}").contains("bogus"));
    }
}
