//! A saved run: the findings of an analysis in a form every report option can be applied to
//! without re-analysis — every warning before filters as report data, with its
//! [`FilterFacts`] and its group under both `--group` views, plus the run's counts and times.
//!
//! `relay analyze` builds its report through [`SavedRun::report`] and keeps the run in its
//! cache; `relay report` loads it (`crate::cache::findings`) and calls the same function, so
//! the two give the same report for the same options. Within the run each warning's report data
//! is one encoded byte string, decoded only when a report shows the warning: loading a run of
//! 140,000 warnings then costs one allocation per warning instead of forty.

use std::cmp::Ordering;
use std::path::PathBuf;

use anyhow::{Context as _, Result};
use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use rayon::prelude::*;

use super::memo::PairMemo;
use super::report::{ClassIndex, Group, RenderedFrom, ReportBuilder};
use super::{pairs_with_facts, Filter, FilterConfig, FilterFacts, PairStats, RaceInput, RaceStats};
use crate::cache::store::{decode, encode};
use crate::link::Program;
use crate::report::{self, RaceWarning, Report};

/// What produced a saved run (printed by `relay report`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunInfo {
    /// Translation units analysed.
    pub units: usize,
    /// The inputs and analysis options, as command-line words (`sqlite3.i --entry-roots`).
    pub arguments: Vec<String>,
    /// When the analysis finished, in seconds since the Unix epoch.
    pub finished_at: u64,
    /// Where the text report looks for source files whose line markers are relative paths,
    /// besides the current directory (the compilation database's directory).
    pub source_dirs: Vec<PathBuf>,
    /// What of the input the analysis could not read.
    pub unread: report::Unread,
}

/// One warning before filters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SavedWarning {
    /// The warning with `group` and `filtered_by` empty, and its locations without their file,
    /// encoded: decoded only when a report includes it (a run has up to hundreds of thousands
    /// of warnings, forty strings each, and a filtered report shows few of them).
    pub warning: Encoded,
    /// The file of each location of the warning, in [`for_each_loc`]'s order, as an index into
    /// [`SavedRun::files`]: ~20 paths a warning, they were most of a saved run's bytes.
    pub files: Vec<u32>,
    /// Its group under `--group field` and `--group object`.
    pub group_field: String,
    pub group_object: String,
    pub facts: FilterFacts,
}

impl SavedWarning {
    /// The warning, its files numbered by `files`.
    pub fn new(
        mut warning: RaceWarning,
        files: &mut FileTable,
        group_field: String,
        group_object: String,
        facts: FilterFacts,
    ) -> SavedWarning {
        let mut indices = Vec::new();
        for_each_loc(&mut warning, |l| {
            indices.push(files.index(&l.file));
            l.file.clear();
        });
        SavedWarning {
            warning: Encoded(encode(&warning).expect("a warning encodes")),
            files: indices,
            group_field,
            group_object,
            facts,
        }
    }

    pub fn group(&self, group: Group) -> &str {
        match group {
            Group::Field => &self.group_field,
            Group::Object => &self.group_object,
        }
    }

    /// The warning (`group` and `filtered_by` empty); `files`: the run's.
    pub fn warning(&self, files: &[String]) -> Result<RaceWarning> {
        let corrupt = "the saved analysis is corrupt: a warning does not decode";
        let mut warning: RaceWarning = decode(&self.warning.0).context(corrupt)?;
        let mut indices = self.files.iter();
        let mut complete = true;
        for_each_loc(&mut warning, |l| {
            match indices.next().and_then(|&i| files.get(i as usize)) {
                Some(file) => l.file.clone_from(file),
                None => complete = false,
            }
        });
        anyhow::ensure!(complete && indices.next().is_none(), corrupt);
        Ok(warning)
    }
}

/// Every location of a warning's report data, in one order.
fn for_each_loc(w: &mut RaceWarning, mut f: impl FnMut(&mut report::SourceLoc)) {
    for a in &mut w.accesses {
        f(&mut a.location);
        a.call_path.iter_mut().for_each(|c| f(&mut c.location));
        a.also_at.iter_mut().for_each(&mut f);
    }
}

/// The files the warnings of a run name, each once, numbered as met.
#[derive(Default)]
pub struct FileTable {
    files: Vec<String>,
    index: FxHashMap<String, u32>,
}

impl FileTable {
    fn index(&mut self, file: &str) -> u32 {
        if let Some(&i) = self.index.get(file) {
            return i;
        }
        let i = self.files.len() as u32;
        self.files.push(file.to_string());
        self.index.insert(file.to_string(), i);
        i
    }
}

/// Warnings numbered by several tables, numbered by one: their files, sorted (the same
/// whichever tables numbered them).
pub fn with_sorted_files(
    parts: Vec<(Vec<SavedWarning>, FileTable)>,
) -> (Vec<SavedWarning>, Vec<String>) {
    let mut files: Vec<String> = parts
        .iter()
        .flat_map(|(_, t)| t.files.iter().cloned())
        .collect();
    files.sort_unstable();
    files.dedup();
    let mut all = Vec::new();
    for (mut warnings, table) in parts {
        let to: Vec<u32> = (table.files.iter())
            .map(|f| files.binary_search(f).map_or(u32::MAX, |i| i as u32))
            .collect();
        for w in &mut warnings {
            w.files.iter_mut().for_each(|i| *i = to[*i as usize]);
        }
        all.extend(warnings);
    }
    (all, files)
}

/// A value encoded with bincode, stored as one byte string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoded(Vec<u8>);

impl Serialize for Encoded {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

impl<'de> Deserialize<'de> for Encoded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Encoded, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Encoded;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Encoded, E> {
                Ok(Encoded(v.to_vec()))
            }
            fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Encoded, E> {
                Ok(Encoded(v))
            }
        }
        d.deserialize_byte_buf(Bytes)
    }
}

/// Everything a report needs that its options (filters, format, group, baseline,
/// `--show-filtered`) do not change.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SavedRun {
    pub info: RunInfo,
    /// In the order of the racing pairs (sorted by access locations).
    pub warnings: Vec<SavedWarning>,
    /// The files the warnings name, sorted ([`SavedWarning::files`]).
    pub files: Vec<String>,
    pub pairs: PairStats,
    pub functions: usize,
    pub thread_entries: usize,
    pub callback_entries: Vec<report::CallbackEntry>,
    pub family_entries: Vec<report::FamilyEntries>,
    /// (entry name, family) of every entry an entry family found, sorted by name.
    pub entry_families: Vec<(String, String)>,
    /// Wall-clock seconds per stage of the analysing run.
    pub times: Vec<(String, f64)>,
    /// How to reuse the run after lines moved (set by the cache that keeps it).
    pub relocation: crate::cache::relocate::Relocation,
    /// What its report data read besides the warnings (not kept: the cache turns it into
    /// `relocation`).
    #[serde(skip)]
    pub rendered: super::report::RenderedFrom,
}

impl SavedRun {
    /// The warnings of an analysis, before filters, with what every report needs, and (when
    /// `input.memo` is given) what the pair stage found by bucket, for the next run. `times` is
    /// left empty for the caller to fill.
    pub fn new(input: &RaceInput<'_>, info: RunInfo) -> (SavedRun, Option<PairMemo>) {
        let (pairs, stats, memo) = pairs_with_facts(input);
        let classes = ClassIndex::default();
        let builder = || {
            ReportBuilder::new(
                input.program,
                input.pta,
                input.summaries,
                input.entries,
                &classes,
            )
        };
        // In one slice per thread, each with its builder (a builder remembers the names it
        // gave; a class is named at most once per slice). In order: the warnings do not depend
        // on the number of threads.
        let per_slice = pairs.len().div_ceil(rayon::current_num_threads()).max(1);
        let slices: Vec<((Vec<SavedWarning>, FileTable), RenderedFrom)> = pairs
            .par_chunks(per_slice)
            .map(|slice| {
                let b = builder();
                let mut files = FileTable::default();
                let warnings = slice
                    .iter()
                    .map(|(p, facts)| {
                        SavedWarning::new(
                            b.warning(&p.first, &p.second),
                            &mut files,
                            b.group_of(&p.first, Group::Field),
                            b.group_of(&p.first, Group::Object),
                            facts.clone(),
                        )
                    })
                    .collect();
                ((warnings, files), b.rendered_from())
            })
            .collect();
        let b = builder();
        let callback_entries = b.callback_entries(input.entries);
        let (parts, mut rendered): (Vec<_>, Vec<_>) = slices.into_iter().unzip();
        rendered.push(b.rendered_from());
        let (warnings, files) = with_sorted_files(parts);
        let run = SavedRun {
            info,
            warnings,
            files,
            pairs: stats,
            functions: input.program.functions.len(),
            thread_entries: input.entries.len(),
            callback_entries,
            family_entries: family_entries(input.entries),
            entry_families: entry_families(input.program, input.entries),
            times: Vec::new(),
            relocation: Default::default(),
            rendered: RenderedFrom::union(rendered),
        };
        (run, memo)
    }

    /// Rewrites every location the report data names (warnings, callback entries).
    pub fn map_locations(&mut self, mut f: impl FnMut(&mut report::SourceLoc)) -> Result<()> {
        let mut table = FileTable::default();
        let mut warnings = Vec::with_capacity(self.warnings.len());
        for w in std::mem::take(&mut self.warnings) {
            let mut warning = w.warning(&self.files)?;
            for_each_loc(&mut warning, &mut f);
            let SavedWarning {
                group_field,
                group_object,
                facts,
                ..
            } = w;
            warnings.push(SavedWarning::new(
                warning,
                &mut table,
                group_field,
                group_object,
                facts,
            ));
        }
        (self.warnings, self.files) = with_sorted_files(vec![(warnings, table)]);
        for c in &mut self.callback_entries {
            f(&mut c.at);
        }
        Ok(())
    }

    /// The report under these options: warnings (filtered ones only if `show_filtered`)
    /// sorted by group, then location, then key; the counts with the filters applied.
    pub fn report(
        &self,
        config: &FilterConfig,
        group: Group,
        show_filtered: bool,
    ) -> Result<Report> {
        let filtered: Vec<Vec<Filter>> = self
            .warnings
            .iter()
            .map(|w| w.facts.matching(config))
            .collect();
        let stats = RaceStats::count(
            self.pairs.clone(),
            config,
            filtered.iter().map(Vec::as_slice),
        );
        let mut warnings: Vec<RaceWarning> = self
            .warnings
            .iter()
            .zip(&filtered)
            .filter(|(_, by)| show_filtered || by.is_empty())
            .map(|(w, by)| {
                Ok(RaceWarning {
                    group: w.group(group).to_string(),
                    filtered_by: by.iter().map(|f| f.name().to_string()).collect(),
                    ..w.warning(&self.files)?
                })
            })
            .collect::<Result<_>>()?;
        warnings.sort_by(report_order);
        let reported = warnings.iter().filter(|w| w.is_reported()).count();
        let (family_entries, callback_warnings, collapsed_scc_warnings) =
            self.warnings_by_origin(&warnings);
        Ok(Report {
            schema_version: report::SCHEMA_VERSION,
            tool: "relay".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            warnings,
            stats: report::RunStats {
                functions: self.functions,
                thread_entries: self.thread_entries,
                callback_entries: self.callback_entries.clone(),
                callback_warnings,
                collapsed_scc_warnings,
                family_entries,
                pairs_considered: stats.pairs.considered,
                pairs_private_arg: stats.pairs.private_arg,
                pairs_type_alias: stats.pairs.type_alias,
                pairs_distinct_objects: stats.pairs.distinct_objects,
                pairs_may_alias: stats.pairs.may_alias,
                pairs_concurrent: stats.pairs.concurrent,
                pairs_unlocked: stats.pairs.unlocked,
                warnings_before_filters: stats.before_filters,
                filters: stats
                    .filters
                    .iter()
                    .map(|f| report::FilterStat {
                        name: f.filter.to_string(),
                        enabled: f.enabled,
                        removed: f.removed,
                        remaining: f.remaining,
                    })
                    .collect(),
                warnings_reported: reported,
                baseline_suppressed: 0,
                times: self.times.clone(),
                unread: self.info.unread.clone(),
            },
        })
    }
}

impl SavedRun {
    /// The family rows with the reported warnings that have an access from an entry of the
    /// family (a collapsed SCC's access counts for none: its entry is only one of many), and the
    /// numbers of reported warnings with an access from a callback entry and with an access of
    /// a collapsed SCC.
    fn warnings_by_origin(
        &self,
        warnings: &[RaceWarning],
    ) -> (Vec<report::FamilyEntries>, usize, usize) {
        let family_of = |entry: &str| {
            self.entry_families
                .binary_search_by(|(e, _)| e.as_str().cmp(entry))
                .ok()
                .map(|i| self.entry_families[i].1.as_str())
        };
        let callbacks: FxHashSet<&str> = self
            .callback_entries
            .iter()
            .map(|c| c.function.as_str())
            .collect();
        let mut per_family: FxHashMap<&str, usize> = FxHashMap::default();
        let (mut callback_warnings, mut collapsed_warnings) = (0, 0);
        for w in warnings.iter().filter(|w| w.is_reported()) {
            collapsed_warnings += w.accesses.iter().any(|a| a.collapsed_scc.is_some()) as usize;
            let mut families: Vec<&str> = w
                .accesses
                .iter()
                .filter(|a| a.collapsed_scc.is_none())
                .filter_map(|a| family_of(&a.entry))
                .collect();
            families.sort_unstable();
            families.dedup();
            for f in families {
                *per_family.entry(f).or_default() += 1;
            }
            callback_warnings +=
                w.accesses
                    .iter()
                    .any(|a| callbacks.contains(a.entry.as_str())) as usize;
        }
        let rows = self
            .family_entries
            .iter()
            .map(|f| report::FamilyEntries {
                warnings: per_family.get(f.family.as_str()).copied().unwrap_or(0),
                ..f.clone()
            })
            .collect();
        (rows, callback_warnings, collapsed_warnings)
    }
}

/// The order of a report's warnings: by group, then by the accesses' locations, then by key.
fn report_order(a: &RaceWarning, b: &RaceWarning) -> Ordering {
    fn locations(w: &RaceWarning) -> impl Iterator<Item = &report::SourceLoc> {
        w.accesses.iter().map(|s| &s.location)
    }
    a.group
        .cmp(&b.group)
        .then_with(|| locations(a).cmp(locations(b)))
        .then_with(|| a.key.cmp(&b.key))
}

/// The entries of each entry family, by family name.
fn family_entries(entries: &[super::ThreadEntry]) -> Vec<report::FamilyEntries> {
    let mut counts: std::collections::BTreeMap<&str, usize> = Default::default();
    for e in entries {
        if let super::entries::EntryOrigin::Family { name } = &e.origin {
            *counts.entry(name).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .map(|(family, entries)| report::FamilyEntries {
            family: family.to_string(),
            entries,
            warnings: 0,
        })
        .collect()
}

/// (entry name, family) of the entries of entry families, sorted by name. Entries are named as
/// the report's accesses name them (by function name).
fn entry_families(program: &Program, entries: &[super::ThreadEntry]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = entries
        .iter()
        .filter_map(|e| match &e.origin {
            super::entries::EntryOrigin::Family { name } => {
                Some((program.function_name(e.func).to_string(), name.clone()))
            }
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::report::{AccessKind, AccessSite, SourceLoc};

    fn site(entry: &str, line: u32) -> AccessSite {
        AccessSite {
            lvalue: "s.n".into(),
            kind: AccessKind::Write,
            atomic: false,
            location: SourceLoc {
                file: "a.c".into(),
                line,
                col: 1,
            },
            function: entry.into(),
            entry: entry.into(),
            entry_multiple: false,
            locks: Vec::new(),
            call_path: Vec::new(),
            call_path_truncated: false,
            also_at: Vec::new(),
            collapsed_scc: None,
        }
    }

    /// A write-write warning on `s.n` between two entries, at `line` and the next.
    fn race_warning(key: &str, entries: [&str; 2], line: u32) -> RaceWarning {
        RaceWarning {
            key: key.into(),
            lvalue: "s.n".into(),
            group: String::new(),
            accesses: vec![site(entries[0], line), site(entries[1], line + 1)],
            filtered_by: Vec::new(),
            notes: Vec::new(),
        }
    }

    #[test]
    fn warnings_numbered_by_several_tables_name_their_files_again() {
        let named = |files: [&str; 2]| {
            let mut w = race_warning("k", ["t", "u"], 3);
            for (a, f) in w.accesses.iter_mut().zip(files) {
                a.location.file = f.into();
                a.also_at = vec![report::SourceLoc {
                    file: format!("{f}.h"),
                    line: 1,
                    col: 1,
                }];
            }
            w
        };
        let originals = [named(["b.c", "a.c"]), named(["a.c", "c.c"])];
        let parts: Vec<(Vec<SavedWarning>, FileTable)> = originals
            .iter()
            .map(|w| {
                let mut t = FileTable::default();
                let saved = SavedWarning::new(
                    w.clone(),
                    &mut t,
                    "g".into(),
                    "g".into(),
                    FilterFacts::default(),
                );
                (vec![saved], t)
            })
            .collect();
        let (warnings, files) = with_sorted_files(parts);
        assert_eq!(files, ["a.c", "a.c.h", "b.c", "b.c.h", "c.c", "c.c.h"]);
        for (w, original) in warnings.iter().zip(&originals) {
            assert_eq!(&w.warning(&files).unwrap(), original);
        }
        assert!(
            warnings[0].warning(&files[..2]).is_err(),
            "an index past the table"
        );
        let mut short = warnings[0].clone();
        short.files.pop();
        assert!(
            short.warning(&files).is_err(),
            "a location without its file"
        );
    }

    /// Two warnings: one from `main` (line 9) in group `b`, one between `t` and `u` (line 5)
    /// in group `a` under `--group field` and `z` under `--group object`.
    pub(crate) fn run() -> SavedRun {
        let mut table = FileTable::default();
        let mut warning = |key: &str, entries: [&str; 2], line: u32, groups: [&str; 2]| {
            let w = race_warning(key, entries, line);
            let facts = FilterFacts {
                is_main: entries.map(|e| e == "main"),
                entry_names: entries.map(String::from),
                ..Default::default()
            };
            SavedWarning::new(w, &mut table, groups[0].into(), groups[1].into(), facts)
        };
        let warnings = vec![
            warning("k1", ["main", "t"], 9, ["b", "b"]),
            warning("k2", ["t", "u"], 5, ["a", "z"]),
        ];
        let (warnings, files) = with_sorted_files(vec![(warnings, table)]);
        SavedRun {
            info: RunInfo {
                units: 1,
                arguments: vec!["a.c".into()],
                ..Default::default()
            },
            warnings,
            files,
            pairs: PairStats::default(),
            functions: 3,
            thread_entries: 3,
            callback_entries: Vec::new(),
            family_entries: Vec::new(),
            entry_families: Vec::new(),
            times: vec![("summaries".into(), 1.5)],
            relocation: Default::default(),
            rendered: Default::default(),
        }
    }

    fn keys(r: &Report) -> Vec<(&str, &str, Vec<String>)> {
        r.warnings
            .iter()
            .map(|w| (w.key.as_str(), w.group.as_str(), w.filtered_by.clone()))
            .collect()
    }

    #[test]
    fn reports_apply_filters_groups_and_order() {
        let run = run();
        let report = |c: &FilterConfig, g: Group, show: bool| run.report(c, g, show).unwrap();
        let plain = report(&FilterConfig::default(), Group::Field, false);
        assert_eq!(
            keys(&plain),
            [("k2", "a", vec![]), ("k1", "b", vec![])],
            "sorted by group"
        );
        assert_eq!(plain.stats.warnings_reported, 2);
        assert_eq!(plain.stats.times, run.times);
        let by_object = report(&FilterConfig::default(), Group::Object, false);
        assert_eq!(keys(&by_object)[0], ("k1", "b", vec![]));
        let mut bootup = FilterConfig::default();
        bootup.set(Filter::BootupThread, true);
        let filtered = report(&bootup, Group::Field, false);
        assert_eq!(keys(&filtered), [("k2", "a", vec![])]);
        assert_eq!(filtered.stats.warnings_before_filters, 2);
        assert_eq!(filtered.stats.filters[2].removed, 1);
        let shown = report(&bootup, Group::Field, true);
        assert_eq!(shown.warnings[1].filtered_by, ["bootup-thread"]);
        assert_eq!(shown.stats.warnings_reported, 1);
    }

    /// `t` and `u` are the `workqueue` family's two entries.
    fn make_work_handlers(run: &mut SavedRun) {
        run.family_entries = vec![report::FamilyEntries {
            family: "workqueue".into(),
            entries: 2,
            warnings: 0,
        }];
        run.entry_families = vec![
            ("t".into(), "workqueue".into()),
            ("u".into(), "workqueue".into()),
        ];
    }

    #[test]
    fn family_rows_count_the_reported_warnings_they_take_part_in() {
        let mut run = run();
        // t and u are work handlers, main is not; t is in both warnings, u in one.
        make_work_handlers(&mut run);
        let rows = |c: &FilterConfig| run.report(c, Group::Field, true).unwrap().stats;
        let plain = rows(&FilterConfig::default());
        assert_eq!(
            plain.family_entries[0].warnings, 2,
            "once per warning, not per access"
        );
        let mut bootup = FilterConfig::default();
        bootup.set(Filter::BootupThread, true);
        assert_eq!(
            rows(&bootup).family_entries[0].warnings,
            1,
            "filtered warnings are not counted"
        );
    }

    #[test]
    fn a_collapsed_scc_access_counts_for_no_family() {
        let mut run = run();
        make_work_handlers(&mut run);
        // Both of t's accesses come from a collapsed SCC (t is only the entry shown for it):
        // k1 (main, t) counts for no family, k2 (t, u) for u's.
        let mut table = FileTable::default();
        let warnings = [("k1", ["main", "t"], 9), ("k2", ["t", "u"], 5)]
            .into_iter()
            .map(|(key, entries, line)| {
                let mut w = race_warning(key, entries, line);
                for a in w.accesses.iter_mut().filter(|a| a.entry == "t") {
                    a.collapsed_scc = Some(report::CollapsedScc {
                        scc: "walk".into(),
                        entries: 2,
                    });
                }
                let facts = FilterFacts {
                    entry_names: entries.map(String::from),
                    ..Default::default()
                };
                SavedWarning::new(w, &mut table, "a".into(), "a".into(), facts)
            })
            .collect();
        (run.warnings, run.files) = with_sorted_files(vec![(warnings, table)]);
        let stats = run
            .report(&FilterConfig::default(), Group::Field, true)
            .unwrap()
            .stats;
        assert_eq!(stats.family_entries[0].warnings, 1);
        assert_eq!(stats.collapsed_scc_warnings, 2);
    }
}
