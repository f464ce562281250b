//! `relay analyze`: the whole pipeline — front end, points-to, call graph, summaries, thread
//! entries, warnings, filters — and a report (text, JSON or SARIF). Exit code 0: no warning
//! reported and every input analysed; 1: warnings reported, or part of the input not analysed;
//! 2: usage error, or no input could be read. With a cache, the run is saved in
//! it for `relay report` ([`report`]), and the report is made from the saved run either way.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context as _, Result};
use clap::Args;

use super::{Frontend, InputArgs};
use crate::cache::file_status::FileStatuses;
use crate::cache::findings;
use crate::models::{FamilySwitches, Models};
use crate::pipeline::{self, EntryOptions};
use crate::pta::FieldMode;
use crate::race::memo::MemoInput;

use super::PointsToArgs;
use crate::race::saved::{RunInfo, SavedRun};
use crate::race::RaceInput;
use crate::report::text::render_summary;
use crate::report::Unread;
use crate::schedule;
use crate::summary;

pub use super::report::ReportArgs;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    /// Hash every preprocessed input to tell whether it changed, even when its file status
    /// (size, modification and change times, inode) is the one recorded with its key in the
    /// cache.
    #[arg(long, conflicts_with = "no_cache")]
    pub rehash_inputs: bool,
    /// A thread entry besides `main` and the start routines found at thread creations (a
    /// library's API function, a system call); it may run in several threads at once.
    /// Repeatable.
    #[arg(long = "entry", value_name = "NAME")]
    pub entries: Vec<String>,
    /// A file of entry names, one per line (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub entry_file: Option<PathBuf>,
    /// Switch an entry family of the models (`NAME=on|off`, or `all=on|off`; all are on): the
    /// kernel's system calls, work items, timers, interrupt handlers… (models/README.md
    /// lists them; an unknown name is an error that lists them too). Repeatable, later words
    /// win.
    #[arg(long = "entry-family", value_name = "NAME=on|off")]
    pub entry_families: Vec<String>,
    /// Every defined function that nothing calls is a thread entry (for a library).
    #[arg(long)]
    pub entry_roots: bool,
    /// Ignore the entry families' `non_reentrant` (models/README.md): a work handler, timer or
    /// RCU callback may then run twice at once on the same work item, timer or RCU head.
    #[arg(long)]
    pub reentrant_families: bool,
    #[command(flatten)]
    pub pta: PointsToArgs,
    /// A directory of extra model files (`*.toml`, see models/README.md). `--summaries` is
    /// an older name of this option.
    #[arg(long = "models", alias = "summaries", value_name = "DIR")]
    pub models: Option<PathBuf>,
    /// Bound on fixpoint rounds inside a recursive SCC.
    #[arg(long, default_value_t = schedule::DEFAULT_MAX_ROUNDS)]
    pub max_rounds: u32,
    /// Collapse recursive SCCs of at least this many functions: their members share one set
    /// of accesses instead of each holding the whole SCC's (README, "Big recursive SCCs").
    #[arg(long, value_name = "N", default_value_t = summary::DEFAULT_COLLAPSE_AT)]
    pub collapse_scc: usize,
    /// Treat an object a function allocates and then hands to a callee that keeps it, or
    /// returns, while holding no lock, as published with a data race: its earlier accesses
    /// are shared (by default only an unlocked store publishes racily; README, "Publication").
    #[arg(long)]
    pub strict_publication: bool,
    /// Pair accesses of incompatible types too (an `int` and a pointer member of objects the
    /// points-to analysis merged, or members of two unrelated struct types): by default C's
    /// effective-type rules say they are different memory (README, "Type-aware aliasing"; code
    /// built with `-fno-strict-aliasing` may break them)
    #[arg(long)]
    pub no_type_alias: bool,
    /// One warning per racing access — its first conflicting access as the other side —
    /// instead of one per pair of racing sites: every racing access is still reported, but
    /// not every pair (for code bases where the pairs run into millions, like the kernel;
    /// README, "One warning per access")
    #[arg(long)]
    pub per_access: bool,
    /// Pair accesses even when the inclusion-based points-to analysis proves their objects
    /// disjoint (by default two accesses whose sites may touch no common object are not
    /// paired; README, "Distinct objects").
    #[arg(long)]
    pub no_inclusion: bool,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl AnalyzeArgs {
    fn entry_options(&self, models: &Models) -> Result<EntryOptions> {
        let mut names = self.entries.clone();
        if let Some(f) = &self.entry_file {
            let text = std::fs::read_to_string(f)
                .with_context(|| format!("reading entry file {}", f.display()))?;
            names.extend(
                text.lines()
                    .map(|l| l.split('#').next().unwrap_or("").trim())
                    .filter(|l| !l.is_empty())
                    .map(String::from),
            );
        }
        Ok(EntryOptions {
            names,
            roots: self.entry_roots,
            families: FamilySwitches::parse(&self.entry_families, models.entry_families())
                .map_err(anyhow::Error::msg)?,
            reentrant_families: self.reentrant_families,
        })
    }

    /// The inputs and the options that change the analysis (not the report, not the cache or
    /// the thread count), as command-line words.
    pub(super) fn analysis_arguments(&self) -> Vec<String> {
        let i = &self.input;
        let mut words: Vec<String> = i.paths.iter().map(|p| p.display().to_string()).collect();
        let mut opt = |flag: &str, value: String| words.push(format!("{flag}{value}"));
        if let Some(f) = &i.compile_commands {
            opt("--compile-commands=", f.display().to_string());
        }
        i.include.iter().for_each(|v| opt("-I", v.clone()));
        i.define.iter().for_each(|v| opt("-D", v.clone()));
        i.cflags.iter().for_each(|v| opt("--cflag=", v.clone()));
        if let Some(cc) = &i.cc {
            opt("--cc=", cc.clone());
        }
        self.entries.iter().for_each(|v| opt("--entry=", v.clone()));
        if let Some(f) = &self.entry_file {
            opt("--entry-file=", f.display().to_string());
        }
        if self.entry_roots {
            opt("--entry-roots", String::new());
        }
        if self.reentrant_families {
            opt("--reentrant-families", String::new());
        }
        self.entry_families
            .iter()
            .for_each(|v| opt("--entry-family=", v.clone()));
        if self.pta.fields != FieldMode::default() {
            opt("--fields=", "insensitive".into());
        }
        if self.pta.no_signature_filter {
            opt("--no-signature-filter", String::new());
        }
        if self.pta.loose_signatures {
            opt("--loose-signatures", String::new());
        }
        if self.pta.no_dead_statics {
            opt("--no-dead-statics", String::new());
        }
        if self.pta.closed_world {
            opt("--closed-world", String::new());
        }
        if self.strict_publication {
            opt("--strict-publication", String::new());
        }
        if self.no_type_alias {
            opt("--no-type-alias", String::new());
        }
        if self.per_access {
            opt("--per-access", String::new());
        }
        if self.no_inclusion {
            opt("--no-inclusion", String::new());
        }
        if let Some(d) = &self.models {
            opt("--models=", d.display().to_string());
        }
        if self.max_rounds != schedule::DEFAULT_MAX_ROUNDS {
            opt("--max-rounds=", self.max_rounds.to_string());
        }
        if self.collapse_scc != summary::DEFAULT_COLLAPSE_AT {
            opt("--collapse-scc=", self.collapse_scc.to_string());
        }
        words
    }
}

/// Saved findings kept in a cache directory (the most recent ones).
const KEEP_FINDINGS: usize = 4;

impl AnalyzeArgs {
    /// The analysis the arguments ask for.
    fn pipeline_options(
        &self,
        pool: &rayon::ThreadPool,
        entries: EntryOptions,
    ) -> pipeline::Options {
        pipeline::Options {
            fields: self.pta.fields,
            signature_filter: self.pta.signature_filter(),
            world: self.pta.world(),
            schedule: schedule::Options {
                jobs: pool.current_num_threads(),
                progress: !self.report.quiet,
                max_rounds: self.max_rounds.max(1),
            },
            collapse_at: self.collapse_scc,
            strict_publication: self.strict_publication,
            type_alias: !self.no_type_alias,
            per_access: self.per_access,
            inclusion: !self.no_inclusion,
            entries,
            keep: Default::default(),
        }
    }
}

pub fn run(args: &AnalyzeArgs) -> Result<i32> {
    // Options first: a typo in a flag fails before minutes of analysis.
    let filters = args.report.filter_config()?;
    let models = Models::load(args.models.as_deref())?;
    let entries = args.entry_options(&models)?;
    let baseline = args.report.read_baseline()?;
    args.report.check_outputs()?;
    let pool = args.input.pool()?;
    let store = args.cache.open()?;
    let quiet = args.report.quiet;

    let t0 = Instant::now();
    let options = args.pipeline_options(&pool, entries);
    let inputs = args.input.inputs()?;
    let statuses = store
        .as_ref()
        .map(|s| FileStatuses::load(s, !args.rehash_inputs));
    let probed = match (&store, &statuses) {
        (Some(s), Some(statuses)) => crate::driver::probe(&inputs, &pool, s, statuses, !quiet),
        _ => Vec::new(),
    };
    let unchanged = super::unchanged::RunInputs::new(args, &options, &models);
    if let Some(store) = &store {
        let keys: Option<Vec<_>> = probed.iter().map(|p| p.map(|p| p.key)).collect();
        if let Some(code) =
            keys.and_then(|k| unchanged.reuse(store, &k, args, t0, &filters, baseline.as_ref()))
        {
            if let Some(statuses) = statuses {
                statuses.save(store);
            }
            return code;
        }
    }
    let front = super::build_inputs(
        &inputs,
        &pool,
        store.as_ref(),
        !quiet,
        &models,
        &probed,
        statuses.as_ref(),
    );
    if let Some((statuses, store)) = statuses.zip(store.as_ref()) {
        statuses.save(store);
    }
    let Frontend {
        program,
        problems,
        totals,
        messages,
        unit_keys,
    } = front?;
    if totals.clean_units == 0 && totals.functions_lowered == 0 {
        anyhow::bail!(
            "nothing to analyse: none of the {} unit(s) could be read (errors above)",
            totals.units
        );
    }
    let t1 = Instant::now();
    let mut analysis =
        pool.install(|| pipeline::analyze_cached(&program, &models, &options, store.as_ref()))?;
    super::report_failed_sccs(&program, &analysis.summaries);
    let t2 = Instant::now();
    // With every summary's content unchanged and the same entries, the pipeline found the
    // findings saved by the run that computed them: no need to pair accesses again.
    let place = analysis.findings_place.take().filter(|_| store.is_some());
    let reused = analysis.findings.take();
    let reused_findings = reused.is_some();
    // Else the buckets the latest run paired are replayed where nothing they depend on changed.
    let per_access = args.per_access;
    let type_alias = !args.no_type_alias;
    let pair_options = findings::PairOptions {
        per_access,
        type_alias,
        inclusion: analysis.objects.is_some(),
    };
    let previous_pairs = match (&store, reused_findings) {
        (Some(store), false) => Some(findings::pair_memo(store, pair_options)),
        _ => None,
    };
    let input = RaceInput {
        program: &program,
        pta: &analysis.pta,
        cg: &analysis.cg,
        summaries: &analysis.summaries,
        entries: &analysis.entries,
        type_alias,
        per_access,
        objects: analysis.objects.as_ref(),
        progress: !quiet,
        memo: previous_pairs.as_ref().map(|previous| MemoInput {
            previous,
            ids: &analysis.stable_ids,
        }),
    };
    let info = RunInfo {
        units: totals.units,
        arguments: args.analysis_arguments(),
        finished_at: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        // Line markers of compile_commands entries are relative to the entries' directories.
        source_dirs: args
            .input
            .compile_commands
            .as_deref()
            .and_then(|f| f.parent())
            .map(|d| std::path::absolute(d).unwrap_or_else(|_| d.to_path_buf()))
            .into_iter()
            .collect(),
        unread: Unread {
            units: totals.units_failed,
            declarations: totals.skipped_decls,
            statements: totals.lowering_failures,
            summaries: analysis
                .summaries
                .schedule
                .failed
                .iter()
                .map(|f| f.functions.len())
                .sum(),
        },
    };
    let (mut run, next_pairs) = match reused {
        Some(mut run) => {
            run.info = info;
            (run, None)
        }
        // The pair stage runs on the analysis pool (`-j`).
        None => pool.install(|| SavedRun::new(&input, info)),
    };
    let t3 = Instant::now();
    run.times = vec![
        ("front end".into(), (t1 - t0).as_secs_f64()),
        ("points-to".into(), analysis.times.points_to),
        ("call graph".into(), analysis.times.callgraph),
        ("summaries".into(), analysis.times.summaries),
        ("inclusion points-to".into(), analysis.times.inclusion),
        ("warnings".into(), (t3 - t2).as_secs_f64()),
    ];
    let rep = args.report.emit(&run, &filters, baseline.as_ref())?;
    if let (Some(store), Some(place)) = (&store, &place) {
        let key = &place.key;
        let saved = match (reused_findings, analysis.findings_moved) {
            (true, false) => place.set_latest(store, &run),
            // Rewritten to where the lines are now: kept there too.
            (true, true) => place.save(store, &run),
            (false, _) => place.save_computed(store, &mut run, &analysis.pta),
        };
        if !reused_findings || analysis.findings_moved {
            // Findings are large (hundreds of MB for SQLite) and only the latest ones are
            // likely to be asked for again: keep a few.
            store.prune(crate::cache::findings::FINDINGS, KEEP_FINDINGS);
        }
        if let Err(e) = saved {
            eprintln!("relay: warning: {e:#}; `relay report` will not find this run");
        }
        if let Some(memo) = &next_pairs {
            if let Err(e) = findings::save_pair_memo(store, pair_options, memo) {
                eprintln!("relay: warning: {e:#}; the next run will pair every bucket again");
            }
        }
        // A run with these very inputs can take the findings as they are.
        if let (Some(units), true) = (&unit_keys, analysis.summaries.schedule.failed.is_empty()) {
            unchanged.save(store, units, key, messages, problems);
        }
    }
    if !quiet {
        let mut err = std::io::stderr().lock();
        super::unchanged::input_problems(&mut err, problems, &rep)?;
        if store.is_some() {
            writeln!(
                err,
                "front end: {} unit(s) parsed, {} reused from the cache ({} identical \
                 definitions not loaded)",
                totals.units_parsed, totals.units_reused, totals.copies_skipped
            )?;
            super::report_summary_cache(
                &mut err,
                &analysis.summaries,
                analysis.summaries_cache.as_ref(),
            )?;
            if analysis.findings_moved {
                writeln!(
                    err,
                    "warnings: reused from the cache (only lines moved: rewritten to the new lines)"
                )?;
            } else if reused_findings {
                writeln!(
                    err,
                    "warnings: reused from the cache (nothing they depend on changed)"
                )?;
            } else if let Some(memo) = &next_pairs {
                let wholes = match memo.wholes() {
                    (0, 0) => String::new(),
                    (replayed, run) => {
                        let members = memo.whole_members();
                        format!(
                            "; {replayed} whole-object access(es) replayed, {run} paired again \
                             ({} of their member checks replayed, {} made)",
                            members.replayed, members.checked
                        )
                    }
                };
                writeln!(
                    err,
                    "pairs: {} bucket(s) replayed from the cache, {} checked{wholes}",
                    memo.replayed(),
                    memo.checked()
                )?;
            }
        }
        render_summary(&rep.stats, &mut err)?;
    }
    super::cache::collect_after_run(store.as_ref(), quiet);
    let code = super::report::exit_code(&rep);
    // The process exits as soon as this returns (`main`): freeing the program, the analysis
    // and the findings piece by piece would only delay that (0.6 s on the kernel).
    std::mem::forget((program, analysis, run));
    Ok(code)
}
