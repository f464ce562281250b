//! `relay summary`: computes every function's summary (relative lockset, guarded accesses)
//! and prints the ones asked for, the way RELAY's Figure 1 shows them, plus run statistics.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use super::PointsToArgs;
use super::{exit, Format, Frontend, FrontendTotals, InputArgs};
use crate::ir::FuncId;
use crate::models::Models;
use crate::pipeline;
use crate::schedule;
use crate::summary::print::SummaryPrinter;
use crate::summary::{self, AccessKind, Summary, SummaryStats};

#[derive(Args, Debug)]
pub struct SummaryArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    /// Print the summary of the function(s) with this name (repeatable). Without it only the
    /// statistics are printed.
    #[arg(long, value_name = "NAME")]
    pub function: Vec<String>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub pta: PointsToArgs,
    /// A directory of extra model files (`*.toml`, see models/README.md); a file named like a
    /// built-in family replaces it. `--summaries` is an older name of this option.
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
}

#[derive(Serialize)]
struct Timings {
    frontend_seconds: f64,
    points_to_seconds: f64,
    callgraph_seconds: f64,
    summaries_seconds: f64,
}

#[derive(Serialize)]
struct AccessOut {
    lvalue: String,
    kind: AccessKind,
    atomic: bool,
    locks_acquired: Vec<String>,
    locks_released: Vec<String>,
    file: String,
    line: u32,
    col: u32,
    via: Vec<String>,
    /// Other program points performing the same guarded access (up to MAX_WITNESSES - 1).
    also_at: Vec<String>,
}

#[derive(Serialize)]
struct FunctionOut {
    name: String,
    modelled: bool,
    locks_acquired: Vec<String>,
    locks_released: Vec<String>,
    returns: String,
    threads_created: Vec<String>,
    accesses: Vec<AccessOut>,
}

/// The JSON report (version 1).
#[derive(Serialize)]
struct Report {
    version: u32,
    frontend: FrontendTotals,
    stats: SummaryStats,
    functions: Vec<FunctionOut>,
    timings: Timings,
}

pub fn run(args: &SummaryArgs) -> Result<i32> {
    let models = Models::load(args.models.as_deref())?;
    let pool = args.input.pool()?;
    let store = args.cache.open()?;
    let t0 = Instant::now();
    let Frontend {
        program,
        totals,
        problems,
        ..
    } = super::build_program(&args.input, &pool, store.as_ref(), true, &models)?;
    let t1 = Instant::now();
    let wanted: Vec<FuncId> = (0..program.functions.len() as u32)
        .map(FuncId)
        .filter(|&f| {
            program.functions[f.index()].body.is_some()
                && args
                    .function
                    .iter()
                    .any(|n| program.names.get(program.functions[f.index()].name) == n)
        })
        .collect();
    for n in &args.function {
        if !wanted
            .iter()
            .any(|&f| program.names.get(program.functions[f.index()].name) == n)
        {
            eprintln!("warning: no function named `{n}` with a body");
        }
    }
    let options = pipeline::Options {
        fields: args.pta.fields,
        signature_filter: args.pta.signature_filter(),
        world: args.pta.world(),
        schedule: schedule::Options {
            jobs: pool.current_num_threads(),
            progress: true,
            max_rounds: args.max_rounds.max(1),
        },
        collapse_at: args.collapse_scc,
        strict_publication: args.strict_publication,
        type_alias: true,
        per_access: false,
        inclusion: true,
        entries: Default::default(),
        // The statistics are taken as SCCs finish: only the printed summaries stay.
        keep: pipeline::KeepSummaries::Functions(wanted.clone()),
    };
    let pipeline::Summarized {
        summaries: sums,
        times,
        cache,
        ..
    } = pool.install(|| pipeline::summarize_cached(&program, &models, &options, store.as_ref()));
    super::report_failed_sccs(&program, &sums);
    if store.is_some() {
        super::report_summary_cache(&mut std::io::stderr().lock(), &sums, cache.as_ref())?;
    }
    super::cache::collect_after_run(store.as_ref(), false);
    let timings = Timings {
        frontend_seconds: (t1 - t0).as_secs_f64(),
        points_to_seconds: times.points_to,
        callgraph_seconds: times.callgraph,
        summaries_seconds: times.summaries,
    };
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Text => {
            for &f in &wanted {
                if let Some(s) = sums.get(f) {
                    let p = SummaryPrinter {
                        program: &program,
                        func: f,
                    };
                    writeln!(out, "{}", p.summary(s))?;
                }
            }
            write_stats(&mut out, &sums.stats, &timings, models.len())?;
        }
        Format::Json => {
            let functions = wanted
                .iter()
                .filter_map(|&f| sums.get(f).map(|s| function_out(&program, f, s)))
                .collect();
            let report = Report {
                version: 1,
                frontend: totals,
                stats: sums.stats.clone(),
                functions,
                timings,
            };
            writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        }
    }
    Ok(if problems > 0 || !sums.schedule.failed.is_empty() {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

fn function_out(program: &crate::link::Program, f: FuncId, s: &Summary) -> FunctionOut {
    let p = SummaryPrinter { program, func: f };
    let plus = |l: &summary::RelativeLockset| l.plus.iter().map(|x| p.lock(x)).collect();
    // L− is ⊤ ("any lock may have been released") past its bound: listed as `⊤`.
    let minus = |l: &summary::RelativeLockset| -> Vec<String> {
        if l.minus_top {
            return vec!["⊤".to_string()];
        }
        l.minus.iter().map(|x| p.path(x)).collect()
    };
    let pr = program.printer();
    FunctionOut {
        name: program.function_label(f),
        modelled: s.modelled,
        locks_acquired: plus(&s.lockset),
        locks_released: minus(&s.lockset),
        returns: p.value(&s.ret),
        threads_created: s
            .spawns
            .iter()
            .flat_map(|sp| sp.start.iter().map(|g| program.function_label(*g)))
            .collect(),
        accesses: s
            .accesses()
            .map(|a| AccessOut {
                lvalue: p.path(a.path),
                kind: a.kind,
                atomic: a.atomic,
                locks_acquired: plus(a.locks),
                locks_released: minus(a.locks),
                file: program
                    .files
                    .get(a.witness().loc.file as usize)
                    .cloned()
                    .unwrap_or_default(),
                line: a.witness().loc.line,
                col: a.witness().loc.col,
                via: a
                    .witness()
                    .chain()
                    .iter()
                    .map(|c| format!("{} ({})", program.function_label(c.callee), pr.loc(c.loc)))
                    .collect(),
                also_at: a.witnesses[1..].iter().map(|w| pr.loc(w.loc)).collect(),
            })
            .collect(),
    }
}

fn write_stats(
    out: &mut impl Write,
    s: &SummaryStats,
    t: &Timings,
    models: usize,
) -> std::io::Result<()> {
    writeln!(
        out,
        "summaries: {} functions ({} modelled, {} widened, {} coarsened), {} guarded accesses",
        s.functions, s.modelled, s.widened, s.coarsened, s.accesses
    )?;
    let h = s.access_histogram;
    writeln!(
        out,
        "accesses per function: 0: {}, 1-10: {}, 11-100: {}, 101-1000: {}, >1000: {}; max {} ({})",
        h[0], h[1], h[2], h[3], h[4], s.max_accesses, s.max_accesses_function
    )?;
    writeln!(
        out,
        "unknown externals (no model, no body; assumed no lock or memory effect): {} functions, {} call sites; {} models loaded",
        s.unknown_externals, s.unknown_external_calls, models
    )?;
    writeln!(
        out,
        "recursive SCCs: at most {} rounds, {} reached the bound; {} failed; {} collapsed ({} functions, {} shared accesses; {} owned formals, {} accesses inside their objects left out)",
        s.max_scc_rounds, s.nonconverged_sccs, s.failed_sccs, s.collapsed_sccs,
        s.collapsed_functions, s.shared_accesses, s.owned_formals, s.owned_accesses
    )?;
    let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
    let b = s.bytes;
    writeln!(
        out,
        "summary memory (approximate): {:.0} MiB: accesses {:.0}, witnesses {:.0}, call chains {:.0}, tables {:.0}, interned paths {:.0} and locksets {:.0}, other {:.0}",
        mib(b.total()), mib(b.accesses), mib(b.witnesses), mib(b.chains), mib(b.tables),
        mib(b.interned_paths), mib(b.interned_locksets), mib(b.other)
    )?;
    writeln!(
        out,
        "time: front end {:.2}s, points-to {:.2}s, call graph {:.2}s, summaries {:.2}s",
        t.frontend_seconds, t.points_to_seconds, t.callgraph_seconds, t.summaries_seconds
    )
}
