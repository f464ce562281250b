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
use rustc_hash::FxHashMap;
use serde::Deserialize;

use super::entries::ThreadEntry;
use super::pairs::{Pair, Side};
use crate::callgraph::CallGraph;
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
    /// One access is in the boot-up thread (`main`, `start_kernel`, `kernel_init`, or a
    /// `--bootup` function): "re-entrant locks" it holds for most of its run.
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

/// Evaluates filters on warnings, caching what is expensive (class members, reachability).
pub struct Filters<'a> {
    ctx: FilterContext<'a>,
    config: &'a FilterConfig,
    members: FxHashMap<u32, Vec<Origin>>,
    reachable: FxHashMap<FuncId, rustc_hash::FxHashSet<FuncId>>,
}

impl<'a> Filters<'a> {
    pub fn new(ctx: FilterContext<'a>, config: &'a FilterConfig) -> Self {
        Filters {
            ctx,
            config,
            members: FxHashMap::default(),
            reachable: FxHashMap::default(),
        }
    }

    /// The enabled filters that remove this pair, in order.
    pub fn matching(&mut self, pair: &Pair<'_>) -> Vec<Filter> {
        Filter::ALL
            .into_iter()
            .filter(|&f| self.config.is_enabled(f) && self.removes(f, pair))
            .collect()
    }

    fn removes(&mut self, f: Filter, pair: &Pair<'_>) -> bool {
        let sides = [&pair.first, &pair.second];
        match f {
            Filter::ThreadLocalAlloc => sides.into_iter().any(|s| self.allocated_by_entry(s)),
            Filter::LargeRepr => sides.into_iter().any(|s| self.repr_size(s) > self.config.k),
            Filter::BootupThread => sides.into_iter().any(|s| self.is_bootup(s.entry)),
            Filter::SameEntry => pair.first.entry == pair.second.entry,
        }
    }

    /// The class of the object the access goes into (the lvalue's base for `p->f`).
    fn object_class(&self, s: &Side<'_>) -> Option<u32> {
        let classes = Classes {
            program: self.ctx.program,
            pta: self.ctx.pta,
            func: s.entry,
        };
        classes.object_class(s.access.path).or(s.access.class)
    }

    fn repr_size(&self, s: &Side<'_>) -> usize {
        self.object_class(s)
            .map_or(0, |c| self.ctx.pta.class_size(c))
    }

    fn allocated_by_entry(&mut self, s: &Side<'_>) -> bool {
        let Some(c) = self.object_class(s) else {
            return false;
        };
        let pta = self.ctx.pta;
        let members = self
            .members
            .entry(pta.class(c))
            .or_insert_with(|| pta.class_members(c));
        let sites: Vec<FuncId> = members
            .iter()
            .filter_map(|o| match o {
                Origin::Alloc(f, _) => Some(*f),
                _ => None,
            })
            .collect();
        if sites.is_empty() {
            return false;
        }
        let cg = self.ctx.cg;
        let reach = self
            .reachable
            .entry(s.entry)
            .or_insert_with(|| reachable_functions(cg, s.entry));
        sites.iter().any(|f| reach.contains(f))
    }

    fn is_bootup(&self, entry: FuncId) -> bool {
        let name = self.ctx.program.function_name(entry);
        self.ctx
            .entries
            .iter()
            .any(|e| e.func == entry && e.is_main)
            || BOOTUP_NAMES.contains(&name)
            || self.config.bootup.iter().any(|b| b == name)
    }
}

/// The functions reachable from `f` in the call graph (itself included).
fn reachable_functions(cg: &CallGraph, f: FuncId) -> rustc_hash::FxHashSet<FuncId> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut stack = vec![f];
    while let Some(g) = stack.pop() {
        if seen.insert(g) {
            stack.extend(cg.callees(g));
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

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
