//! `relay analyze`: the whole pipeline — front end, points-to, call graph, summaries, thread
//! entries, warnings, filters — and a report (text, JSON or SARIF). Exit code 0: no warning
//! reported; 1: warnings reported; 2: usage or input error.

use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context as _, Result};
use clap::Args;

use super::{exit, Frontend, InputArgs};
use crate::models::Models;
use crate::pipeline::{self, EntryOptions};
use crate::pta::FieldMode;
use crate::race::report::{Group, ReportBuilder};
use crate::race::FilterConfig;
use crate::report::baseline::Baseline;
use crate::report::text::{render_summary, SourceCache};
use crate::report::{self, Format};
use crate::schedule;
use crate::summary;

#[derive(Args, Debug)]
pub struct AnalyzeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A thread entry besides `main` and the start routines found at thread creations (a
    /// library's API function, a system call); it may run in several threads at once.
    /// Repeatable.
    #[arg(long = "entry", value_name = "NAME")]
    pub entries: Vec<String>,
    /// A file of entry names, one per line (`#` comments).
    #[arg(long, value_name = "FILE")]
    pub entry_file: Option<PathBuf>,
    /// Every defined function that nothing calls is a thread entry (for a library).
    #[arg(long)]
    pub entry_roots: bool,
    /// Switch a filter: `NAME=on|off` with NAME one of thread-local-alloc, large-repr,
    /// bootup-thread, same-entry, or `all` (RELAY's configuration). All are off by default.
    #[arg(long = "filter", value_name = "NAME=on|off")]
    pub filters: Vec<String>,
    /// A TOML filters file: `[filters]` NAME = true|false, `k = N`, `bootup = ["fn"]`.
    #[arg(long, value_name = "FILE")]
    pub filters_file: Option<PathBuf>,
    /// `large-repr` removes lvalues whose points-to representative stands for more than K
    /// program lvalues (RELAY's k, 1 in the paper).
    #[arg(long, value_name = "K")]
    pub filter_k: Option<usize>,
    /// A boot-up thread entry for `bootup-thread` (besides main, start_kernel, kernel_init).
    #[arg(long, value_name = "NAME")]
    pub bootup: Vec<String>,
    /// Also print the warnings the filters removed (marked with the filter's name).
    #[arg(long)]
    pub show_filtered: bool,
    /// Group warnings by the member accessed or by the object (Chord's two views).
    #[arg(long, value_enum, default_value = "field")]
    pub group: Group,
    /// Report only warnings whose key is not in this baseline file.
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the reported warnings' keys to this baseline file.
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// How the points-to analysis treats struct members.
    #[arg(long, value_enum, default_value = "field-based")]
    pub fields: FieldMode,
    /// A directory of extra model files (`*.toml`, see summaries/README.md).
    #[arg(long, value_name = "DIR")]
    pub summaries: Option<PathBuf>,
    /// Bound on fixpoint rounds inside a recursive SCC.
    #[arg(long, default_value_t = summary::DEFAULT_MAX_ROUNDS)]
    pub max_rounds: u32,
    /// Do not print the run summary table on standard error.
    #[arg(short, long)]
    pub quiet: bool,
}

impl AnalyzeArgs {
    fn filter_config(&self) -> Result<FilterConfig> {
        let mut c = FilterConfig::default();
        if let Some(f) = &self.filters_file {
            c.load_file(f)?;
        }
        for s in &self.filters {
            c.apply_setting(s)?;
        }
        if let Some(k) = self.filter_k {
            c.k = k;
        }
        c.bootup.extend(self.bootup.iter().cloned());
        Ok(c)
    }

    fn entry_options(&self) -> Result<EntryOptions> {
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
        })
    }
}

pub fn run(args: &AnalyzeArgs) -> Result<i32> {
    // Options first: a typo in a flag fails before minutes of analysis.
    let filters = args.filter_config()?;
    let entries = args.entry_options()?;
    let baseline = args.baseline.as_deref().map(Baseline::read).transpose()?;
    let models = Models::load(args.summaries.as_deref())?;
    let pool = args.input.pool()?;
    let store = args.cache.open()?;

    let t0 = Instant::now();
    let Frontend {
        program,
        problems,
        totals,
    } = super::build_program(&args.input, &pool, store.as_ref())?;
    let t1 = Instant::now();
    let options = pipeline::Options {
        fields: args.fields,
        schedule: schedule::Options {
            jobs: pool.current_num_threads(),
            progress: !args.quiet,
            max_rounds: args.max_rounds.max(1),
        },
        entries,
    };
    let analysis =
        pool.install(|| pipeline::analyze_cached(&program, &models, &options, store.as_ref()))?;
    super::report_failed_sccs(&program, &analysis.summaries);
    let t2 = Instant::now();
    let (warnings, stats) = analysis.warnings(&program, &filters);
    let builder = ReportBuilder::new(
        &program,
        &analysis.pta,
        &analysis.summaries,
        &analysis.entries,
        args.group,
    );
    let mut rep = builder.build(&warnings, &stats, args.show_filtered);
    let t3 = Instant::now();
    if let Some(b) = &baseline {
        b.apply(&mut rep);
    }
    if let Some(path) = &args.write_baseline {
        Baseline::write(&rep, path)?;
    }
    rep.stats.times = vec![
        ("front end".into(), (t1 - t0).as_secs_f64()),
        ("points-to".into(), analysis.times.points_to),
        ("call graph".into(), analysis.times.callgraph),
        ("summaries".into(), analysis.times.summaries),
        ("warnings".into(), (t3 - t2).as_secs_f64()),
    ];
    write_report(args, &rep)?;
    if !args.quiet {
        let mut err = std::io::stderr().lock();
        if problems > 0 {
            writeln!(
                err,
                "{problems} translation unit(s) had input problems (reported above); the rest was analysed"
            )?;
        }
        if store.is_some() {
            writeln!(
                err,
                "front end: {} unit(s) parsed, {} reused from the cache",
                totals.units_parsed, totals.units_reused
            )?;
            super::report_summary_cache(&mut err, &analysis.summaries)?;
        }
        render_summary(&rep.stats, &mut err)?;
    }
    Ok(if rep.stats.warnings_reported > 0 {
        exit::FINDINGS
    } else {
        exit::OK
    })
}

fn write_report(args: &AnalyzeArgs, rep: &report::Report) -> Result<()> {
    let mut sources = SourceCache::new();
    // Line markers of compile_commands entries are relative to the entries' directories.
    if let Some(dir) = args
        .input
        .compile_commands
        .as_deref()
        .and_then(|f| f.parent())
    {
        sources.add_search_dir(dir);
    }
    match &args.output {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("creating {}", path.display()))?;
            let mut w = std::io::BufWriter::new(file);
            report::render(rep, args.format, &mut sources, &mut w)?;
            w.flush()?;
        }
        None => {
            let mut out = std::io::stdout().lock();
            report::render(rep, args.format, &mut sources, &mut out)?;
        }
    }
    Ok(())
}
