//! `relay analyze` over inputs unchanged since a saved run ([`crate::cache::inputs`]): every
//! unit's preprocessed text, the analysis arguments and the models are those of a run whose
//! findings are stored, so they are reported as they are — with the front end's messages
//! printed again — and no unit is loaded, nothing analysed.

use std::io::Write;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use anyhow::Result;

use super::analyze::AnalyzeArgs;
use crate::cache::inputs::{self, UnchangedInputs};
use crate::cache::{fingerprint, Key, KeyBuilder, Store};
use crate::models::Models;
use crate::pipeline;
use crate::race::saved::SavedRun;
use crate::race::FilterConfig;
use crate::report::baseline::Baseline;
use crate::report::text::render_summary;
use crate::report::Report;

/// What a run's findings depend on besides its units.
pub(super) struct RunInputs {
    arguments: Vec<String>,
    /// The pipeline options and the models.
    context: Key,
}

impl RunInputs {
    pub fn new(args: &AnalyzeArgs, options: &pipeline::Options, models: &Models) -> RunInputs {
        // Parallelism and progress change nothing the analysis computes.
        let mut options = options.clone();
        options.schedule.jobs = 0;
        options.schedule.progress = false;
        let context = KeyBuilder::new("analysis options")
            .str(&format!("{options:?}"))
            .key(&fingerprint::models(models))
            .finish();
        RunInputs {
            arguments: args.analysis_arguments(),
            context,
        }
    }

    fn key(&self, units: &[Key]) -> Key {
        inputs::run_key(units, &self.arguments, &self.context)
    }

    /// Reports the findings a run with these `units` saved, if they are still stored: the exit
    /// code, or `None` (then the analysis runs).
    pub fn reuse(
        &self,
        store: &Store,
        units: &[Key],
        args: &AnalyzeArgs,
        started: Instant,
        filters: &FilterConfig,
        baseline: Option<&Baseline>,
    ) -> Option<Result<i32>> {
        let saved = UnchangedInputs::find(store, &self.key(units))?;
        let mut run = SavedRun::find(store, &saved.findings_key())?;
        Some(self.report(store, &saved, &mut run, args, started, filters, baseline))
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        store: &Store,
        saved: &UnchangedInputs,
        run: &mut SavedRun,
        args: &AnalyzeArgs,
        started: Instant,
        filters: &FilterConfig,
        baseline: Option<&Baseline>,
    ) -> Result<i32> {
        for m in &saved.messages {
            eprintln!("{m}");
        }
        run.info.arguments = self.arguments.clone();
        run.info.finished_at = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        run.times = vec![("front end".into(), started.elapsed().as_secs_f64())];
        let rep = args.report.emit(run, filters, baseline)?;
        if let Err(e) = run.set_latest(store, &saved.findings_key()) {
            eprintln!("relay: warning: {e:#}; `relay report` will not find this run");
        }
        if !args.report.quiet {
            let mut err = std::io::stderr().lock();
            input_problems(&mut err, saved.problems, &rep)?;
            writeln!(
                err,
                "inputs: unchanged since a saved run (every unit's text, the arguments and the \
                 models): its warnings are reused, nothing analysed"
            )?;
            render_summary(&rep.stats, &mut err)?;
        }
        Ok(super::report::exit_code(&rep))
    }

    /// Remembers that a run with these `units` computed the findings saved under `findings`.
    pub fn save(
        &self,
        store: &Store,
        units: &[Key],
        findings: &Key,
        messages: Vec<String>,
        problems: usize,
    ) {
        let entry = UnchangedInputs {
            findings: findings.0,
            messages,
            problems,
        };
        entry.save(store, &self.key(units));
    }
}

/// The closing lines about input problems.
pub(super) fn input_problems(
    err: &mut impl Write,
    problems: usize,
    rep: &Report,
) -> std::io::Result<()> {
    if problems > 0 {
        writeln!(
            err,
            "{problems} translation unit(s) had input problems (reported above); the rest was analysed"
        )?;
    }
    if rep.stats.warnings_reported == 0 && rep.stats.unread.any() {
        writeln!(
            err,
            "no warnings, but part of the input was not analysed (above): exit status 1"
        )?;
    }
    Ok(())
}
