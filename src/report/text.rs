//! The text rendering: one block per warning, laid out like a compiler diagnostic, and the run
//! summary table.
//!
//! ```text
//! warning[data-race]: `rx_p->count` may be accessed concurrently without a common lock
//!    --> drivers/net/airo.c:120:5: write in airo_read_stats (thread airo_thread, may run twice)
//!     |     locks held: none
//!     |     call path: airo_thread
//!     |                → airo_read_stats  (call at drivers/net/airo.c:80:3)
//!     |
//! 120 |     rx_p->count = 0;
//!     |     ^ write
//!     |
//!    --> drivers/net/airo.c:140:9: read in airo_ioctl (thread main)
//!     |     locks held: {dev->lock}
//!     …
//!     = filtered by: large-repr
//!     = note: …
//! ```
//!
//! Everything is printed in the order of the model (no hash-map iteration), so the output is
//! deterministic.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::{AccessKind, AccessSite, RaceWarning, Report, RunStats};

/// Tabs in source lines are shown as this many spaces.
const TAB_WIDTH: usize = 4;
/// Source lines wider than this are shown as a window around the caret.
const MAX_LINE_WIDTH: usize = 160;

/// Source files read lazily for the snippets under each access. A file is read at most once;
/// an unreadable file (or a line past its end) silently shows no snippet.
#[derive(Debug, Default)]
pub struct SourceCache {
    /// Directories tried, in order, for relative paths that do not exist relative to the
    /// current directory (e.g. the compilation database's directories).
    search_dirs: Vec<PathBuf>,
    /// `false`: never read anything (`--no-source`, tests).
    enabled: bool,
    /// File path as given → its lines (`None`: unreadable).
    files: HashMap<String, Option<Vec<String>>>,
}

impl SourceCache {
    /// A cache that reads files relative to the current directory.
    pub fn new() -> SourceCache {
        SourceCache {
            enabled: true,
            ..SourceCache::default()
        }
    }

    /// A cache that never reads a file: no snippets.
    pub fn disabled() -> SourceCache {
        SourceCache::default()
    }

    /// Also look for relative paths under `dir` (after the current directory).
    pub fn add_search_dir(&mut self, dir: impl Into<PathBuf>) {
        self.search_dirs.push(dir.into());
    }

    /// Line `line` (1-based) of `file`, without its line terminator; `None` when the file is
    /// unreadable or shorter.
    pub fn line(&mut self, file: &str, line: u32) -> Option<&str> {
        if !self.enabled || line == 0 || file.is_empty() {
            return None;
        }
        if !self.files.contains_key(file) {
            let lines = self.read(file);
            self.files.insert(file.to_string(), lines);
        }
        let lines = self.files.get(file)?.as_ref()?;
        lines.get(line as usize - 1).map(String::as_str)
    }

    fn read(&self, file: &str) -> Option<Vec<String>> {
        let path = Path::new(file);
        let mut candidates = vec![path.to_path_buf()];
        if path.is_relative() {
            candidates.extend(self.search_dirs.iter().map(|d| d.join(path)));
        }
        let bytes = candidates.iter().find_map(|p| fs::read(p).ok())?;
        let text = String::from_utf8_lossy(&bytes);
        Some(
            text.split('\n')
                .map(|l| l.strip_suffix('\r').unwrap_or(l).to_string())
                .collect(),
        )
    }
}

/// Writes one diagnostic block per warning of `report`, separated by blank lines (nothing for
/// an empty report). The summary is separate: [`render_summary`].
pub fn render_text(
    report: &Report,
    sources: &mut SourceCache,
    out: &mut dyn Write,
) -> io::Result<()> {
    for (i, w) in report.warnings.iter().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        render_warning(w, sources, out)?;
    }
    Ok(())
}

/// One warning's block.
pub fn render_warning(
    w: &RaceWarning,
    sources: &mut SourceCache,
    out: &mut dyn Write,
) -> io::Result<()> {
    // A points-to class (`{a, b, +9}.len`) names the memory, not what the code wrote: the
    // headline shows the lvalue as written at the first site, the class below.
    let written = w
        .lvalue
        .contains('{')
        .then(|| w.accesses.first())
        .flatten()
        .and_then(|a| {
            let src = sources.line(&a.location.file, a.location.line)?;
            lvalue_text(src, a.location.col)
        });
    writeln!(
        out,
        "warning[data-race]: `{}` may be accessed concurrently without a common lock",
        written.as_deref().unwrap_or(&w.lvalue)
    )?;
    // Gutter as wide as the largest line number shown, like rustc.
    let width = w
        .accesses
        .iter()
        .map(|a| a.location.line.to_string().len())
        .max()
        .unwrap_or(1);
    let bar = format!("{:width$} |", "", width = width);
    // A self-race (two instances of one entry at the same access) is shown once.
    let same = w.accesses.len() == 2 && w.accesses[0] == w.accesses[1];
    let shown = if same {
        &w.accesses[..1]
    } else {
        &w.accesses[..]
    };
    for a in shown {
        render_access(a, w, &bar, width, sources, out)?;
    }
    let eq = format!("{:width$} =", "", width = width);
    if same {
        writeln!(
            out,
            "{eq} races with itself: two instances of thread {} may run it at once",
            w.accesses[0].entry
        )?;
    }
    if written.is_some() {
        writeln!(out, "{eq} memory: `{}` (points-to class)", w.lvalue)?;
    }
    if !w.filtered_by.is_empty() {
        writeln!(out, "{eq} filtered by: {}", w.filtered_by.join(", "))?;
    }
    for note in &w.notes {
        writeln!(out, "{eq} note: {note}")?;
    }
    Ok(())
}

fn render_access(
    a: &AccessSite,
    w: &RaceWarning,
    bar: &str,
    width: usize,
    sources: &mut SourceCache,
    out: &mut dyn Write,
) -> io::Result<()> {
    writeln!(
        out,
        "{:width$}--> {}:{}:{}: {}",
        "",
        a.location.file,
        a.location.line,
        a.location.col,
        describe(a),
        width = width
    )?;
    if a.lvalue != w.lvalue {
        writeln!(out, "{bar}     lvalue: `{}`", a.lvalue)?;
    }
    writeln!(out, "{bar}     locks held: {}", locks(&a.locks))?;
    if !a.also_at.is_empty() {
        let at: Vec<String> = a
            .also_at
            .iter()
            .map(|l| format!("{}:{}:{}", l.file, l.line, l.col))
            .collect();
        writeln!(out, "{bar}     also at: {}", at.join(", "))?;
    }
    for (i, line) in call_path_lines(a).iter().enumerate() {
        if i == 0 {
            writeln!(out, "{bar}     call path: {line}")?;
        } else {
            writeln!(out, "{bar}                {line}")?;
        }
    }
    if let Some(src) = sources.line(&a.location.file, a.location.line) {
        let (shown, caret) = snippet(src, a.location.col);
        writeln!(out, "{bar}")?;
        writeln!(out, "{:>width$} | {shown}", a.location.line, width = width)?;
        writeln!(out, "{bar} {:caret$}^ {}", "", kind(a), caret = caret)?;
    }
    writeln!(out, "{bar}")
}

/// `write in f (thread T, may run twice)`.
pub(crate) fn describe(a: &AccessSite) -> String {
    let twice = if a.entry_multiple {
        ", may run twice"
    } else {
        ""
    };
    let through = match &a.collapsed_scc {
        Some(c) if c.entries > 1 => format!(
            "; one of {} entries reaching the collapsed SCC of {}",
            c.entries, c.scc
        ),
        Some(c) => format!("; through the collapsed SCC of {}", c.scc),
        None => String::new(),
    };
    format!(
        "{} in {} (thread {}{twice}{through})",
        kind(a),
        a.function,
        a.entry
    )
}

/// `read`, `write`, `atomic read`, `atomic write`.
pub(crate) fn kind(a: &AccessSite) -> String {
    let k = match a.kind {
        AccessKind::Read => "read",
        AccessKind::Write => "write",
    };
    if a.atomic {
        format!("atomic {k}")
    } else {
        k.to_string()
    }
}

/// `{a, b (read)}` or `none`.
pub(crate) fn locks(locks: &[String]) -> String {
    if locks.is_empty() {
        "none".to_string()
    } else {
        format!("{{{}}}", locks.join(", "))
    }
}

/// The call path from the entry to the function performing the access, one hop per line.
fn call_path_lines(a: &AccessSite) -> Vec<String> {
    let mut lines = vec![a.entry.clone()];
    let mut at = a.entry.as_str();
    for f in &a.call_path {
        if f.caller != at {
            lines.push(format!("→ … → {}", f.caller));
        }
        lines.push(format!(
            "→ {}  (call at {}:{}:{})",
            f.callee, f.location.file, f.location.line, f.location.col
        ));
        at = &f.callee;
    }
    if a.call_path_truncated {
        lines.push("→ …  (call path truncated)".to_string());
    }
    if at != a.function {
        if !a.call_path_truncated {
            lines.push("→ …".to_string());
        }
        lines.push(format!("→ {}", a.function));
    }
    lines
}

/// The source line as shown (tabs expanded, control characters blanked, long lines windowed
/// around the column) and the caret's offset in it. `col` is a 1-based byte column.
/// The lvalue written at byte column `col` (1-based) of a source line: an identifier followed
/// by member accesses (`->f`, `.f`) and subscripts (`[i]`), with leading `*`s. `None` when the
/// column does not start one.
fn lvalue_text(src: &str, col: u32) -> Option<String> {
    let rest = src.get(col.checked_sub(1)? as usize..)?;
    let b = rest.as_bytes();
    let ident = |i: usize| {
        let mut j = i;
        while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
            j += 1;
        }
        (j > i && !b[i].is_ascii_digit()).then_some(j)
    };
    let mut i = 0;
    while i < b.len() && b[i] == b'*' {
        i += 1;
    }
    let mut end = ident(i)?;
    loop {
        let next = if rest[end..].starts_with("->") {
            ident(end + 2)
        } else if rest[end..].starts_with('.') {
            ident(end + 1)
        } else if rest[end..].starts_with('[') {
            // A balanced subscript on this line.
            let mut depth = 0usize;
            let close = rest[end..].char_indices().find_map(|(k, c)| {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(end + k + 1);
                        }
                    }
                    _ => {}
                }
                None
            });
            close
        } else {
            None
        };
        match next {
            Some(e) => end = e,
            None => break,
        }
    }
    Some(rest[..end].to_string())
}

fn snippet(src: &str, col: u32) -> (String, usize) {
    let byte = (col.max(1) as usize - 1).min(src.len());
    let mut shown = String::new();
    let mut caret = None;
    let mut width = 0;
    for (i, c) in src.char_indices() {
        if caret.is_none() && i >= byte {
            caret = Some(width);
        }
        match c {
            '\t' => {
                shown.extend(std::iter::repeat_n(' ', TAB_WIDTH));
                width += TAB_WIDTH;
            }
            c if c.is_control() => {
                shown.push(' ');
                width += 1;
            }
            c => {
                shown.push(c);
                width += 1;
            }
        }
    }
    let caret = caret.unwrap_or(width);
    let shown = shown.trim_end();
    let chars: Vec<char> = shown.chars().collect();
    if chars.len() <= MAX_LINE_WIDTH {
        return (shown.to_string(), caret);
    }
    // A window of MAX_LINE_WIDTH characters that contains the caret.
    let start = caret
        .saturating_sub(MAX_LINE_WIDTH / 2)
        .min(chars.len() - MAX_LINE_WIDTH);
    let end = start + MAX_LINE_WIDTH;
    let mut s = String::new();
    let mut caret = caret - start;
    if start > 0 {
        s.push('…');
        caret += 1;
    }
    s.extend(&chars[start..end]);
    if end < chars.len() {
        s.push('…');
    }
    (s, caret)
}

/// The callbacks among the entries, where each was handed over (at most [`SHOWN`], the JSON has
/// them all).
fn render_callback_entries(
    entries: &[super::CallbackEntry],
    warnings: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    const SHOWN: usize = 20;
    if entries.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "    of which callbacks        {:>10}   in {warnings} reported warning(s)",
        entries.len()
    )?;
    for e in entries.iter().take(SHOWN) {
        let what = if e.unknown {
            "passed to unknown"
        } else {
            "registered with"
        };
        writeln!(
            out,
            "      {} ({what} {} at {}:{})",
            e.function, e.via, e.at.file, e.at.line
        )?;
    }
    if entries.len() > SHOWN {
        writeln!(
            out,
            "      … {} more (all in --format json)",
            entries.len() - SHOWN
        )?;
    }
    Ok(())
}

/// The run summary: sizes, the access-pair stages, the warnings left after each filter, the
/// baseline, and stage times.
pub fn render_summary(stats: &RunStats, out: &mut dyn Write) -> io::Result<()> {
    const W: usize = 26;
    let row = |out: &mut dyn Write, label: &str, n: usize| writeln!(out, "  {label:<W$} {n:>10}");
    writeln!(out, "run table")?;
    row(out, "functions", stats.functions)?;
    row(out, "thread entries", stats.thread_entries)?;
    render_callback_entries(&stats.callback_entries, stats.callback_warnings, out)?;
    for f in &stats.family_entries {
        writeln!(
            out,
            "    of which {:<16} {:>10}   in {} reported warning(s)",
            f.family, f.entries, f.warnings
        )?;
    }
    if stats.collapsed_scc_warnings > 0 {
        writeln!(
            out,
            "    a collapsed SCC's             in {} reported warning(s)",
            stats.collapsed_scc_warnings
        )?;
    }
    writeln!(out, "  access pairs")?;
    let considered = stats.pairs_considered;
    for (label, n) in [
        ("  considered", considered),
        ("  − private arguments", stats.pairs_private_arg),
        ("  − incompatible types", stats.pairs_type_alias),
        ("  − distinct objects", stats.pairs_distinct_objects),
        ("  → may alias", stats.pairs_may_alias),
        ("  → concurrent", stats.pairs_concurrent),
        ("  → unlocked", stats.pairs_unlocked),
    ] {
        // The arrow is one char but three bytes: pad by characters.
        let pad = W - label.chars().count();
        write!(out, "  {label}{:pad$} {n:>10}", "")?;
        if considered > 0 && label != "  considered" {
            write!(out, "  {:>5.1}%", 100.0 * n as f64 / considered as f64)?;
        }
        writeln!(out)?;
    }
    row(
        out,
        "warnings before filters",
        stats.warnings_before_filters,
    )?;
    if !stats.filters.is_empty() {
        let name_w = stats
            .filters
            .iter()
            .map(|f| f.name.chars().count())
            .max()
            .unwrap_or(0)
            .max("filter".len());
        writeln!(
            out,
            "    {:<name_w$}  {:<3}  {:>8}  {:>9}",
            "filter", "on", "removed", "remaining"
        )?;
        for f in &stats.filters {
            let on = if f.enabled { "on" } else { "off" };
            writeln!(
                out,
                "    {:<name_w$}  {on:<3}  {:>8}  {:>9}",
                f.name, f.removed, f.remaining
            )?;
        }
    }
    row(out, "baseline suppressed", stats.baseline_suppressed)?;
    row(out, "reported", stats.warnings_reported)?;
    let u = &stats.unread;
    if u.any() {
        writeln!(out, "  not analysed (errors above)")?;
        row(out, "  units unreadable", u.units)?;
        row(out, "  declarations skipped", u.declarations)?;
        row(out, "  statements not lowered", u.statements)?;
        row(out, "  summaries failed", u.summaries)?;
    }
    if !stats.times.is_empty() {
        writeln!(out, "  time")?;
        for (stage, secs) in &stats.times {
            let label = format!("  {stage}");
            let pad = W.saturating_sub(label.chars().count());
            writeln!(out, "  {label}{:pad$} {:>10}", "", format!("{secs:.3}s"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    fn text(report: &Report, sources: &mut SourceCache) -> String {
        let mut out = Vec::new();
        render_text(report, sources, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn warning_block_has_everything() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("airo.c");
        fs::write(&file, sample::SOURCE).unwrap();
        let file = file.to_str().unwrap().to_string();
        let mut report = sample::report(&file);
        report.warnings.truncate(1);
        let out = text(&report, &mut SourceCache::new());
        let expected = format!(
            "\
warning[data-race]: `rx_p->count` may be accessed concurrently without a common lock
  --> {file}:3:5: write in airo_read_stats (thread airo_thread, may run twice)
   |     locks held: none
   |     also at: {file}:4:5
   |     call path: airo_thread
   |                → airo_read_stats  (call at {file}:9:3)
   |
 3 |     rx_p->count = 0;
   |     ^ write
   |
  --> {file}:12:9: atomic read in airo_ioctl (thread main)
   |     lvalue: `dev->rx.count`
   |     locks held: {{dev->lock, cfg_lock (read)}}
   |     call path: main
   |                → dev_ioctl  (call at {file}:20:5)
   |                → airo_ioctl  (call at {file}:16:12)
   |
"
        );
        assert_eq!(out, expected, "\n{out}");
    }

    #[test]
    fn a_collapsed_scc_access_names_the_scc_and_is_counted_apart() {
        let mut report = sample::report("/nonexistent/airo.c");
        report.warnings[0].accesses[0].collapsed_scc = Some(crate::report::CollapsedScc {
            scc: "printk".into(),
            entries: 812,
        });
        report.stats.collapsed_scc_warnings = 1;
        let out = text(&report, &mut SourceCache::new());
        assert!(out.contains(
            "(thread airo_thread, may run twice; one of 812 entries reaching the collapsed SCC of printk)"
        ), "{out}");
        let mut table = Vec::new();
        render_summary(&report.stats, &mut table).unwrap();
        let table = String::from_utf8(table).unwrap();
        assert!(
            table.contains("    a collapsed SCC's             in 1 reported warning(s)\n"),
            "{table}"
        );
    }

    #[test]
    fn filtered_and_notes_and_missing_source() {
        let report = sample::report("/nonexistent/airo.c");
        let out = text(&report, &mut SourceCache::new());
        assert!(
            !out.contains('^'),
            "no snippet for an unreadable file:\n{out}"
        );
        assert!(out.contains(
            "  --> /abs/dir/my file.c:40:2: write in worker (thread worker, may run twice)"
        ));
        assert!(out.contains("   = filtered by: large-repr, init-only\n"));
        assert!(out.contains("   = note: summary of worker was widened"));
        assert!(out.contains("call path: worker\n   |                → …  (call path truncated)\n"));
        // Blocks are separated by one blank line and the output is deterministic.
        assert_eq!(out.matches("\n\nwarning[data-race]").count(), 1);
        assert_eq!(out, text(&report, &mut SourceCache::new()));
        assert_eq!(text(&Report::default(), &mut SourceCache::new()), "");
    }

    #[test]
    fn search_dirs_and_disabled_cache() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("rel_only_here.c"), "a\r\n\tb\n").unwrap();
        let mut cache = SourceCache::new();
        assert_eq!(cache.line("rel_only_here.c", 1), None);
        let mut cache = SourceCache::new();
        cache.add_search_dir(dir.path());
        assert_eq!(cache.line("rel_only_here.c", 1), Some("a"));
        assert_eq!(cache.line("rel_only_here.c", 2), Some("\tb"));
        assert_eq!(cache.line("rel_only_here.c", 0), None);
        assert_eq!(cache.line("rel_only_here.c", 9), None);
        let path = dir.path().join("rel_only_here.c");
        assert_eq!(
            SourceCache::disabled().line(path.to_str().unwrap(), 1),
            None
        );
    }

    #[test]
    fn lvalues_as_written() {
        let line = "    c->rbuf[i].len = *p + settings.verbose;";
        assert_eq!(lvalue_text(line, 5).as_deref(), Some("c->rbuf[i].len"));
        assert_eq!(lvalue_text(line, 22).as_deref(), Some("*p"));
        assert_eq!(lvalue_text(line, 27).as_deref(), Some("settings.verbose"));
        assert_eq!(lvalue_text(line, 20), None, "`=` starts no lvalue");
        assert_eq!(lvalue_text(line, 200), None);
        assert_eq!(lvalue_text("x[a[1]] = 0;", 1).as_deref(), Some("x[a[1]]"));
    }

    #[test]
    fn snippet_tabs_and_long_lines() {
        assert_eq!(snippet("\tx = 1;", 2), ("    x = 1;".to_string(), 4));
        assert_eq!(snippet("é = 1;", 3), ("é = 1;".to_string(), 1));
        assert_eq!(snippet("ab", 99), ("ab".to_string(), 2));
        let long = format!("{}X{}", "a".repeat(500), "b".repeat(500));
        let (shown, caret) = snippet(&long, 501);
        assert_eq!(shown.chars().nth(caret), Some('X'));
        assert!(shown.starts_with('…') && shown.ends_with('…'));
        assert_eq!(shown.chars().count(), MAX_LINE_WIDTH + 2);
    }

    #[test]
    fn summary_table() {
        let report = sample::report("a.c");
        let mut out = Vec::new();
        render_summary(&report.stats, &mut out).unwrap();
        let out = String::from_utf8(out).unwrap();
        let expected = "\
run table
  functions                        1234
  thread entries                      3
    of which callbacks                 1   in 1 reported warning(s)
      on_read (registered with event_set at src/net.c:40)
    of which workqueue                 2   in 1 reported warning(s)
  access pairs
    considered                   100000
    − private arguments               0    0.0%
    − incompatible types              0    0.0%
    − distinct objects                0    0.0%
    → may alias                    5000    5.0%
    → concurrent                   3000    3.0%
    → unlocked                      200    0.2%
  warnings before filters            12
    filter      on    removed  remaining
    large-repr  on          8          4
    init-only   off         0          4
  baseline suppressed                 3
  reported                            1
  time
    front end                    1.250s
    summaries                    0.500s
";
        assert_eq!(out, expected, "\n{out}");
    }
}
