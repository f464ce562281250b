//! `relay report`: the report of the last `relay analyze` run saved in the cache, under any
//! filter, group, baseline and format options, without reading or analysing any C. Exit codes
//! as `relay analyze`: 0 no warning reported, 1 warnings reported, 2 usage error or no usable
//! saved run.
//!
//! Also the report options both commands take ([`ReportArgs`]) and the one path by which both
//! turn a [`SavedRun`] into a written report ([`ReportArgs::emit`]).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use clap::Args;

use crate::cache;
use crate::cli::exit;
use crate::race::report::Group;
use crate::race::saved::{RunInfo, SavedRun};
use crate::race::FilterConfig;
use crate::report::baseline::Baseline;
use crate::report::text::{render_summary, SourceCache};
use crate::report::{self, Format, Report};

/// The options of a report: format, output, filters, grouping, baseline.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Report format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
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
    /// A boot-up thread entry for `bootup-thread` (besides main, start_kernel, kernel_init,
    /// rest_init).
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
    /// Do not print the run summary table (or progress) on standard error.
    #[arg(short, long)]
    pub quiet: bool,
}

impl ReportArgs {
    /// The filters from `--filters-file`, then `--filter`, `--filter-k` and `--bootup`.
    pub fn filter_config(&self) -> Result<FilterConfig> {
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

    /// Fails now, before any analysis, when `-o` or `--write-baseline` cannot be written.
    pub fn check_outputs(&self) -> Result<()> {
        if let Some(path) = &self.output {
            check_writable(path)
                .with_context(|| format!("cannot write the report to {}", path.display()))?;
        }
        if let Some(path) = &self.write_baseline {
            // Written to a temporary file beside it, then renamed over it.
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d,
                _ => Path::new("."),
            };
            let probe = dir.join(format!(".relay-baseline-check.{}", std::process::id()));
            check_writable(&probe)
                .and_then(|()| check_not_dir(path))
                .with_context(|| format!("cannot write baseline {}", path.display()))?;
        }
        Ok(())
    }

    /// The `--baseline` file, read.
    pub fn read_baseline(&self) -> Result<Option<Baseline>> {
        self.baseline.as_deref().map(Baseline::read).transpose()
    }

    /// The report of `run` under these options (`filters` and `baseline` as read by
    /// [`ReportArgs::filter_config`] and [`ReportArgs::read_baseline`]), written out; the
    /// baseline file written if asked for.
    pub fn emit(
        &self,
        run: &SavedRun,
        filters: &FilterConfig,
        baseline: Option<&Baseline>,
    ) -> Result<Report> {
        let mut rep = run.report(filters, self.group, self.show_filtered)?;
        if let Some(b) = baseline {
            b.apply(&mut rep);
        }
        if let Some(path) = &self.write_baseline {
            Baseline::write(&rep, path)?;
        }
        self.write(&rep, &run.info)?;
        Ok(rep)
    }

    fn write(&self, rep: &Report, info: &RunInfo) -> Result<()> {
        let mut sources = SourceCache::new();
        for dir in &info.source_dirs {
            sources.add_search_dir(dir);
        }
        match &self.output {
            Some(path) => {
                let file = std::fs::File::create(path)
                    .with_context(|| format!("creating {}", path.display()))?;
                let mut w = std::io::BufWriter::new(file);
                report::render(rep, self.format, &mut sources, &mut w)
                    .and_then(|()| w.flush())
                    .with_context(|| format!("writing the report to {}", path.display()))?;
            }
            None => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                report::render(rep, self.format, &mut sources, &mut out)?;
                out.flush()?;
            }
        }
        Ok(())
    }
}

/// Whether `path` can be written: opened for writing if it exists (not truncated: the report
/// there stays until the new one replaces it), else created and removed again.
fn check_writable(path: &Path) -> std::io::Result<()> {
    check_not_dir(path)?;
    match std::fs::OpenOptions::new().write(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::File::create_new(path)?;
            std::fs::remove_file(path)
        }
        Err(e) => Err(e),
    }
}

fn check_not_dir(path: &Path) -> std::io::Result<()> {
    if path.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::IsADirectory,
            "it is a directory",
        ));
    }
    Ok(())
}

/// The exit code of a report: 1 when it reports warnings or part of the input was not analysed
/// (a run never says "clean" about code it did not read).
pub fn exit_code(rep: &Report) -> i32 {
    if rep.stats.warnings_reported > 0 || rep.stats.unread.any() {
        exit::FINDINGS
    } else {
        exit::OK
    }
}

/// `relay report`.
#[derive(Args, Debug)]
pub struct ReportCommand {
    /// The cache directory `relay analyze` saved its run in (default: .relay-cache in the
    /// current directory).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    #[command(flatten)]
    pub report: ReportArgs,
}

pub fn run(args: &ReportCommand) -> Result<i32> {
    let filters = args.report.filter_config()?;
    let baseline = args.report.read_baseline()?;
    args.report.check_outputs()?;
    let dir = args
        .cache
        .clone()
        .unwrap_or_else(|| PathBuf::from(cache::DEFAULT_DIR));
    let run = SavedRun::load(&dir)?;
    let rep = args.report.emit(&run, &filters, baseline.as_ref())?;
    if !args.report.quiet {
        let mut err = std::io::stderr().lock();
        let info = &run.info;
        writeln!(
            err,
            "report of the analysis of {} unit(s) run at {} (relay analyze {})",
            info.units,
            utc(info.finished_at),
            shorten(&info.arguments.join(" "), 200)
        )?;
        render_summary(&rep.stats, &mut err)?;
    }
    Ok(exit_code(&rep))
}

/// `s`, cut to `max` characters with an ellipsis.
fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS UTC`.
fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_shortening() {
        assert_eq!(utc(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc(1_763_801_526), "2025-11-22 08:52:06 UTC");
        assert_eq!(shorten("abc", 5), "abc");
        assert_eq!(shorten("abcdef", 3), "abc…");
    }
}
