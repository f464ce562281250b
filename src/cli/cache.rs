//! The cache options of the commands that use the cache (`--cache DIR`, `--no-cache`), and
//! `relay cache stats|gc|clear`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use super::{exit, Format};
use crate::cache::gc::{self, Collected};
use crate::cache::{self, CacheStats, Store};

/// Where parsed units, summaries and findings are cached.
#[derive(Args, Debug, Clone, Default)]
pub struct CacheArgs {
    /// Cache directory (default: .relay-cache in the current directory): units whose
    /// preprocessed text is cached are loaded instead of parsed and lowered, SCCs whose inputs
    /// are unchanged reuse their summaries, and an unchanged analysis its findings.
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    /// Neither read nor write the cache.
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache directory named (or the default), whether or not the cache is disabled.
    pub fn dir(&self) -> PathBuf {
        self.cache
            .clone()
            .unwrap_or_else(|| PathBuf::from(cache::DEFAULT_DIR))
    }

    /// The store to use: `None` with `--no-cache`. A directory given with `--cache` that cannot
    /// be used is an error; the default one is only a warning, and the run goes on without it.
    pub fn open(&self) -> Result<Option<Store>> {
        if self.no_cache {
            return Ok(None);
        }
        match Store::open(self.dir()) {
            Ok(s) => Ok(Some(s)),
            Err(e) if self.cache.is_none() => {
                eprintln!("relay: warning: {e:#}; running without a cache");
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }
}

/// `relay cache`.
#[derive(Args, Debug)]
pub struct CacheCommand {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Subcommand, Debug)]
pub enum CacheAction {
    /// Entries and bytes per kind of entry, and the total.
    Stats(CacheDirArgs),
    /// Remove the parsed units and summaries that none of the latest runs uses (relay also
    /// does this after a run, once the cache has grown by half since the last time).
    Gc(CacheDirArgs),
    /// Remove every entry.
    Clear(CacheDirArgs),
}

#[derive(Args, Debug)]
pub struct CacheDirArgs {
    /// Cache directory (default: .relay-cache in the current directory).
    #[arg(long, value_name = "DIR")]
    pub cache: Option<PathBuf>,
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

pub fn run(args: &CacheCommand) -> Result<i32> {
    let a = match &args.action {
        CacheAction::Stats(a) | CacheAction::Gc(a) | CacheAction::Clear(a) => a,
    };
    let dir = a
        .cache
        .clone()
        .unwrap_or_else(|| PathBuf::from(cache::DEFAULT_DIR));
    let mut out = std::io::stdout().lock();
    // No command creates a cache that is not there.
    if let CacheAction::Gc(_) = args.action {
        let collected = if dir.exists() {
            let store = Store::open(&dir)?;
            gc::collect(&store, std::time::SystemTime::now()).ok_or_else(|| {
                anyhow::anyhow!(
                    "cannot read what the latest runs use in {}; nothing removed",
                    dir.display()
                )
            })?
        } else {
            Collected::default()
        };
        match a.format {
            Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&collected)?)?,
            Format::Text => writeln!(out, "{} from {}", describe(&collected), dir.display())?,
        }
        return Ok(exit::OK);
    }
    let clear = matches!(args.action, CacheAction::Clear(_));
    let stats = if !dir.exists() {
        cache::store::stats_of(&dir)?
    } else if clear {
        Store::open(&dir)?.clear()?
    } else {
        Store::open(&dir)?.stats()?
    };
    match a.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string_pretty(&stats)?)?,
        Format::Text if clear => writeln!(
            out,
            "removed {} entries ({}) from {}",
            stats.entries,
            human(stats.bytes),
            stats.dir
        )?,
        Format::Text => print_stats(&mut out, &stats)?,
    }
    Ok(exit::OK)
}

/// After a run that used `store`: collects what no recent run uses, when the cache has grown
/// enough since the last collection ([`gc::after_run`]), and says so on stderr unless `quiet`.
pub fn collect_after_run(store: Option<&Store>, quiet: bool) {
    let Some(collected) = store.and_then(gc::after_run) else {
        return;
    };
    if !quiet && collected.removed > 0 {
        eprintln!("cache: {}", describe(&collected));
    }
}

fn describe(c: &Collected) -> String {
    format!(
        "removed {} entries ({}) no recent run uses; kept {} ({})",
        c.removed,
        human(c.removed_bytes),
        c.kept,
        human(c.kept_bytes)
    )
}

fn print_stats(out: &mut impl Write, s: &CacheStats) -> Result<()> {
    writeln!(out, "cache {}", s.dir)?;
    let w = s
        .kinds
        .iter()
        .map(|k| k.kind.len())
        .max()
        .unwrap_or(0)
        .max(8);
    let rows = std::iter::once(("kind", "entries".to_string(), "bytes".to_string()))
        .chain(
            s.kinds
                .iter()
                .map(|k| (k.kind.as_str(), k.entries.to_string(), human(k.bytes))),
        )
        .chain(std::iter::once((
            "total",
            s.entries.to_string(),
            human(s.bytes),
        )));
    for (kind, entries, bytes) in rows {
        writeln!(out, "{kind:<w$} {entries:>10} {bytes:>12}")?;
    }
    if s.temp_files > 0 {
        writeln!(
            out,
            "{} temporary files (writes in progress, or left by interrupted runs)",
            s.temp_files
        )?;
    }
    Ok(())
}

/// Decimal units, as `relay parse` reports input sizes.
fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        1_000_000_000.. => format!("{:.1} GB", b / 1e9),
        1_000_000.. => format!("{:.1} MB", b / 1e6),
        1_000.. => format!("{:.1} KB", b / 1e3),
        _ => format!("{bytes} B"),
    }
}
