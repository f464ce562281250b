//! Command-line interface: argument types shared by subcommands, and one module per subcommand.

pub mod analyze;
pub mod cache;
pub mod callgraph;
pub mod ir;
pub mod parse;
pub mod report;
pub mod summary;
mod unchanged;

use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::driver;
use crate::link::Program;

use crate::frontend::input::{self, Input, PreprocessOptions};

/// Exit codes, as documented in README.md.
pub mod exit {
    /// Success: nothing to report.
    pub const OK: i32 = 0;
    /// The run found something: skipped declarations (parse), warnings or input it could not
    /// analyse (analyze, report).
    pub const FINDINGS: i32 = 1;
    /// Usage or input error; no input could be read (analyze).
    pub const USAGE: i32 = 2;
}

/// Points-to and call-resolution options shared by `callgraph`, `summary` and `analyze`.
#[derive(Args, Debug, Clone)]
pub struct PointsToArgs {
    /// How the points-to analysis treats struct members.
    #[arg(long, value_enum, default_value = "field-based")]
    pub fields: crate::pta::FieldMode,
    /// Resolve indirect calls by points-to class and argument count only, without matching
    /// the pointer's parameter types (for code that calls functions through pointers of
    /// another type after a cast to `void *`; see README, `relay callgraph`).
    #[arg(long)]
    pub no_signature_filter: bool,
    /// In that matching, let a `void *` parameter match a pointer to a struct too (for code
    /// that calls a function through a pointer type whose parameters are `void *` where the
    /// function's are `struct T *`, undefined in C; see README, "What relay assumes").
    #[arg(long)]
    pub loose_signatures: bool,
    /// Do not assume that a `static` function nothing calls, whose address is never taken,
    /// never runs (for code that runs one through an attribute or `asm`; see README, "What
    /// relay assumes").
    #[arg(long)]
    pub no_dead_statics: bool,
    /// The input is a whole linked program (the kernel's defconfig): a function with neither
    /// body nor model is assembly that calls nothing of the program back, or is never called
    /// (its call was compiled out). No callback escapes to unknown code (see README, "What
    /// relay assumes").
    #[arg(long)]
    pub closed_world: bool,
}

impl PointsToArgs {
    /// How indirect calls are matched against their targets' parameter types.
    pub fn signature_filter(&self) -> crate::pta::SignatureFilter {
        use crate::pta::SignatureFilter;
        match (self.no_signature_filter, self.loose_signatures) {
            (true, _) => SignatureFilter::Off,
            (false, true) => SignatureFilter::Loose,
            (false, false) => SignatureFilter::Strict,
        }
    }

    /// What the points-to analysis may assume of the code it cannot see.
    pub fn world(&self) -> crate::pta::World {
        crate::pta::World {
            dead_statics: !self.no_dead_statics,
            closed: self.closed_world,
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Where the translation units come from.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// `.i` files, `.c` files (preprocessed with `cc -E`), or directories of them.
    pub paths: Vec<PathBuf>,
    /// A compile_commands.json: every entry is preprocessed with its own flags.
    #[arg(long, value_name = "FILE")]
    pub compile_commands: Option<PathBuf>,
    /// Include directory for `.c` inputs (passed to the preprocessor).
    #[arg(short = 'I', value_name = "DIR")]
    pub include: Vec<String>,
    /// Macro definition for `.c` inputs (passed to the preprocessor).
    #[arg(short = 'D', value_name = "NAME[=VALUE]")]
    pub define: Vec<String>,
    /// Any other preprocessor flag for `.c` inputs, verbatim (e.g. `--cflag=-std=gnu2x`).
    #[arg(long = "cflag", value_name = "FLAG", allow_hyphen_values = true)]
    pub cflags: Vec<String>,
    /// Preprocessor to run on `.c` inputs (default: $CC, then `cc`).
    #[arg(long, value_name = "CMD")]
    pub cc: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,
}

impl InputArgs {
    pub fn inputs(&self) -> Result<Vec<Input>> {
        let mut flags: Vec<String> = self.include.iter().map(|i| format!("-I{i}")).collect();
        flags.extend(self.define.iter().map(|d| format!("-D{d}")));
        flags.extend(self.cflags.iter().cloned());
        let pp = PreprocessOptions {
            compiler: self.cc.clone(),
            flags,
        };
        let input::Collected { mut inputs, twins } = input::collect_paths(&self.paths, &pp)?;
        for c in &twins {
            eprintln!(
                "note: {} not analysed: {} beside it is its preprocessed form, analysed instead",
                c.display(),
                c.with_extension("i").display()
            );
        }
        if let Some(cc) = &self.compile_commands {
            inputs.extend(input::collect_compile_commands(cc)?);
        }
        if inputs.is_empty() {
            anyhow::bail!("no input files (give .i/.c files, directories, or --compile-commands)");
        }
        Ok(inputs)
    }

    /// A thread pool of the requested size, with the analyses' stack
    /// ([`crate::schedule::THREAD_STACK`]).
    pub fn pool(&self) -> Result<rayon::ThreadPool> {
        let mut b = rayon::ThreadPoolBuilder::new().stack_size(crate::schedule::THREAD_STACK);
        if let Some(j) = self.jobs {
            b = b.num_threads(j.max(1));
        }
        Ok(b.build()?)
    }
}

/// What the front end produced (the same totals as `relay parse`).
#[derive(Serialize, Default, Debug, Clone)]
pub struct FrontendTotals {
    pub units: usize,
    pub clean_units: usize,
    /// Units that could not be read or preprocessed.
    pub units_failed: usize,
    pub skipped_decls: usize,
    pub function_definitions: usize,
    pub functions_lowered: usize,
    pub duplicates_removed: usize,
    pub lowering_failures: usize,
    /// Units parsed and lowered in this run / loaded from the cache.
    pub units_parsed: usize,
    pub units_reused: usize,
    /// Definitions of reused units not loaded: an earlier unit holds the same `static` one.
    #[serde(skip)]
    pub copies_skipped: usize,
    /// Calls to trampolines of the models rewritten as calls through their key's member.
    pub trampoline_calls: usize,
}

/// The linked program of a run, its totals, and how many units had problems (reported on
/// stderr with file and line).
pub struct Frontend {
    pub program: Program,
    pub totals: FrontendTotals,
    pub problems: usize,
    /// The messages about the input printed on stderr, in order.
    pub messages: Vec<String>,
    /// Every unit's cache key, in input order, when a cache is used and every unit was read.
    pub unit_keys: Option<Vec<crate::cache::Key>>,
}

/// Parses, lowers and links the inputs, and rewrites the calls to the models' trampolines;
/// input problems go to stderr, the rest is analysed.
pub fn build_program(
    input: &InputArgs,
    pool: &rayon::ThreadPool,
    cache: Option<&crate::cache::Store>,
    progress: bool,
    models: &crate::models::Models,
) -> Result<Frontend> {
    let inputs = input.inputs()?;
    build_inputs(&inputs, pool, cache, progress, models, &[], None)
}

/// [`build_program`] of `inputs`, those [`driver::probe`] found loaded by their key; the
/// status of each preprocessed input read is recorded in `file_status`.
pub fn build_inputs(
    inputs: &[crate::frontend::input::Input],
    pool: &rayon::ThreadPool,
    cache: Option<&crate::cache::Store>,
    progress: bool,
    models: &crate::models::Models,
    probed: &[Option<driver::ProbedUnit>],
    file_status: Option<&crate::cache::file_status::FileStatuses>,
) -> Result<Frontend> {
    let options = driver::BuildOptions {
        cache,
        progress,
        probed,
        file_status,
        ..Default::default()
    };
    let build = driver::build(inputs, pool, options);
    let problems = build
        .units
        .iter()
        .filter(|u| u.load_error.is_some() || !u.parse_errors.is_empty())
        .count();
    let mut totals = FrontendTotals {
        units: build.units.len(),
        units_parsed: build.units_parsed,
        units_reused: build.units_reused,
        copies_skipped: build.copies_skipped,
        ..Default::default()
    };
    let mut messages = Vec::new();
    for u in &build.units {
        if let Some(e) = &u.load_error {
            messages.push(format!("error: {}: {e}", u.tu));
        }
        for e in &u.parse_errors {
            messages.push(format!("error: {e} (declaration skipped)"));
        }
        totals.clean_units += (u.load_error.is_none() && u.parse_errors.is_empty()) as usize;
        totals.units_failed += u.load_error.is_some() as usize;
        totals.skipped_decls += u.parse_errors.len();
        totals.function_definitions += u.function_definitions;
    }
    let mut program = build.program;
    totals.trampoline_calls = crate::link::trampolines::rewrite(&mut program, models.trampolines());
    {
        let printer = program.printer();
        for d in program.units.iter().flat_map(|u| &u.diagnostics) {
            messages.push(format!(
                "error: {}: {} (statement skipped)",
                printer.loc(d.loc),
                d.message
            ));
        }
    }
    for m in &messages {
        eprintln!("{m}");
    }
    let unit_keys = build.units.iter().map(|u| u.key).collect();
    totals.functions_lowered = program.stats.functions_defined;
    totals.duplicates_removed = program.stats.duplicates_removed;
    totals.lowering_failures = program.units.iter().map(|u| u.diagnostics.len()).sum();
    Ok(Frontend {
        program,
        totals,
        problems,
        messages,
        unit_keys,
    })
}

/// Reports SCCs whose analysis panicked (their functions have no summary) on stderr.
pub fn report_failed_sccs(program: &Program, sums: &crate::summary::Summaries) {
    for f in &sums.schedule.failed {
        let names: Vec<String> = f
            .functions
            .iter()
            .map(|g| program.function_label(*g))
            .collect();
        eprintln!(
            "error: internal error while summarising {}: {} (no summary; callers assume no effect)",
            names.join(", "),
            f.message
        );
    }
}

/// The summaries cache line of a run: SCCs analysed and reused.
pub fn report_summary_cache(
    out: &mut impl std::io::Write,
    sums: &crate::summary::Summaries,
    cache: Option<&crate::cache::summaries::SummaryCacheStats>,
) -> std::io::Result<()> {
    let st = &sums.schedule.stats;
    write!(
        out,
        "summaries: {} SCC(s) analysed, {} reused from the cache",
        st.sccs_analyzed - st.sccs_reused,
        st.sccs_reused
    )?;
    match cache {
        Some(c) if c.lost_before > 0 => writeln!(
            out,
            " ({} summaries loaded; repeated after {} could not be loaded)",
            c.loaded, c.lost_before
        )?,
        Some(c) => writeln!(out, " ({} summaries loaded)", c.loaded)?,
        None => writeln!(out)?,
    }
    if st.replayed_steps > 0 {
        writeln!(
            out,
            "summaries: {} step(s) of collapsed SCCs' fixpoints replayed from the cache, {} analysed",
            st.replayed_steps, st.analyze_calls
        )?;
    }
    if let Some(c) = cache.filter(|c| c.repartitioned > 0) {
        writeln!(
            out,
            "summaries: {} of the SCCs analysed were found in the cache, but what they read of the points-to partition changed",
            c.repartitioned
        )?;
    }
    if let Some(c) = cache.filter(|c| c.kept > 0) {
        writeln!(
            out,
            "summaries: {} member(s) of re-analysed collapsed SCCs stored as before (not encoded again)",
            c.kept
        )?;
    }
    Ok(())
}
