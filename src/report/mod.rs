//! Reports: the warnings of a run as plain data ([`Report`]), and its renderings — text like a
//! compiler diagnostic, versioned JSON, SARIF 2.1.0 — plus the CI baseline.
//!
//! The race stage builds a [`Report`]; everything here only reads it, so reports can be
//! regenerated from a saved analysis without re-running it. The model is the JSON schema
//! (documented in README.md): change a field, bump [`SCHEMA_VERSION`].

pub mod baseline;
pub mod json;
#[cfg(test)]
mod sample;
pub mod sarif;
pub mod text;

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

pub use baseline::Baseline;
pub use text::SourceCache;

/// Version of the JSON report schema.
pub const SCHEMA_VERSION: u32 = 2;

/// Everything a run reports.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    /// `relay` and its version (`CARGO_PKG_VERSION`).
    pub tool: String,
    pub tool_version: String,
    /// Sorted by (first access file, line, col, second access …); deterministic.
    /// Includes filtered warnings only when the user asked for them (`--show-filtered`).
    pub warnings: Vec<RaceWarning>,
    pub stats: RunStats,
}

/// One data race: two accesses from (possibly the same) thread entries that may touch the
/// same memory, at least one writing, with no common lock.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RaceWarning {
    /// Stable identity for baselines: survives unrelated edits (no line numbers in it).
    pub key: String,
    /// The shared lvalue as source-like text (`rx_p->count`, `stats.n`, `*rep#12.len`).
    pub lvalue: String,
    /// The group the warning belongs to under `--group` (a field `struct s.f` or an object).
    pub group: String,
    /// Exactly two accesses, in a deterministic order.
    pub accesses: Vec<AccessSite>,
    /// Names of the filters that remove this warning (empty: reported).
    pub filtered_by: Vec<String>,
    /// Notes on precision, e.g. "summary of f was widened: locks at this access are joined".
    pub notes: Vec<String>,
}

/// One side of a race.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccessSite {
    /// The access's lvalue in the entry's terms.
    pub lvalue: String,
    pub kind: AccessKind,
    pub atomic: bool,
    /// Where the access is, in the original source (from the preprocessor's line markers).
    pub location: SourceLoc,
    /// The function whose body contains the access.
    pub function: String,
    /// The thread entry (start routine, or `main`) under which the access runs.
    pub entry: String,
    /// The entry may run more than once at the same time (so it races with itself).
    pub entry_multiple: bool,
    /// Locks held at the access (must-held, with mode: `l` or `l (read)`).
    pub locks: Vec<String>,
    /// Calls from the entry down to the function performing the access, outermost first;
    /// empty when the entry itself performs it. May be truncated (see `call_path_truncated`).
    pub call_path: Vec<CallFrame>,
    pub call_path_truncated: bool,
    /// The other program points performing the same access (same lvalue, locks and kind, under
    /// the same entry), sorted: each races with the other side as this one does.
    #[serde(default)]
    pub also_at: Vec<SourceLoc>,
    /// The access is one of a collapsed recursive SCC's (analysed as one summary, README "Big
    /// recursive SCCs"): `entry` is only one of the entries that reach the SCC.
    /// (Always written: the findings cache stores reports with bincode, which needs every field.)
    #[serde(default)]
    pub collapsed_scc: Option<CollapsedScc>,
}

/// The collapsed SCC an access belongs to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CollapsedScc {
    /// The SCC's name: its first function.
    pub scc: String,
    /// How many entries reach it.
    pub entries: usize,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    Read,
    Write,
}

/// A call on a call path: `caller` calls `callee` at `location` (a location in `caller`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallFrame {
    pub caller: String,
    pub callee: String,
    pub location: SourceLoc,
}

/// A source position; `file` is the original source path from the line markers.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct SourceLoc {
    pub file: String,
    pub line: u32,
    pub col: u32,
}

/// Counts a maintainer reads at the end of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RunStats {
    pub functions: usize,
    pub thread_entries: usize,
    /// Entries that are callbacks handed to library or unknown code, and where.
    #[serde(default)]
    pub callback_entries: Vec<CallbackEntry>,
    /// Reported warnings with an access from a callback entry.
    #[serde(default)]
    pub callback_warnings: usize,
    /// Reported warnings with an access of a collapsed SCC (counted there, not under the family
    /// of the one entry shown for it).
    #[serde(default)]
    pub collapsed_scc_warnings: usize,
    /// How many entries each entry family of the models found (`--entry-family`), by family.
    #[serde(default)]
    pub family_entries: Vec<FamilyEntries>,
    /// Chord-style stages over access pairs.
    pub pairs_considered: usize,
    /// Pairs of two instances of one entry, each inside its own argument object.
    #[serde(default)]
    pub pairs_private_arg: usize,
    /// Pairs of accesses of incompatible types (C's effective-type rules).
    #[serde(default)]
    pub pairs_type_alias: usize,
    /// Pairs of accesses in disjoint objects (inclusion-based points-to).
    #[serde(default)]
    pub pairs_distinct_objects: usize,
    pub pairs_may_alias: usize,
    pub pairs_concurrent: usize,
    pub pairs_unlocked: usize,
    /// Warnings before any filter, then after each enabled filter in order.
    pub warnings_before_filters: usize,
    pub filters: Vec<FilterStat>,
    /// Warnings reported (after filters and baseline).
    pub warnings_reported: usize,
    /// Warnings hidden because they are in the baseline.
    pub baseline_suppressed: usize,
    /// Wall-clock seconds per stage.
    pub times: Vec<(String, f64)>,
    /// What of the input was not analysed (named on stderr by the run that read it).
    #[serde(default)]
    pub unread: Unread,
}

/// The parts of the input a run could not analyse. A run with any is not clean, whatever it
/// reports: `relay analyze` and `relay report` exit 1.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unread {
    /// Units that could not be read or preprocessed.
    pub units: usize,
    /// Declarations skipped for a syntax error.
    pub declarations: usize,
    /// Statements (constructs) the lowering could not translate, skipped.
    pub statements: usize,
    /// Functions left without a summary by an internal error.
    pub summaries: usize,
}

impl Unread {
    pub fn any(&self) -> bool {
        *self != Unread::default()
    }
}

/// A thread entry that is a callback: `function` was handed to `via` at `at` and may run at any
/// time, in any thread (`unknown`: `via` has no body and no model).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallbackEntry {
    pub function: String,
    pub via: String,
    pub at: SourceLoc,
    pub unknown: bool,
}

/// The entries an entry family of the models contributed (a system call, a work handler…), and
/// the reported warnings with an access from one of them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FamilyEntries {
    pub family: String,
    pub entries: usize,
    #[serde(default)]
    pub warnings: usize,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterStat {
    pub name: String,
    pub enabled: bool,
    /// Warnings this filter removed (among those the earlier filters kept).
    pub removed: usize,
    /// Warnings left after it.
    pub remaining: usize,
}

/// An output format for [`render`] (`--format`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Format {
    /// One compiler-like diagnostic per warning, with source lines.
    #[default]
    Text,
    /// The report as versioned JSON (schema in README.md).
    Json,
    /// SARIF 2.1.0, for code-scanning tools.
    Sarif,
}

impl Format {
    /// The name on the command line: `text`, `json`, `sarif`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Sarif => "sarif",
        }
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Format, String> {
        match s {
            "text" => Ok(Format::Text),
            "json" => Ok(Format::Json),
            "sarif" => Ok(Format::Sarif),
            _ => Err(format!(
                "unknown report format `{s}` (expected text, json or sarif)"
            )),
        }
    }
}

/// Writes `report` in `format`. `sources` is only read by the text format (source snippets).
/// The text format does not include the run summary ([`text::render_summary`]).
pub fn render(
    report: &Report,
    format: Format,
    sources: &mut SourceCache,
    out: &mut dyn Write,
) -> io::Result<()> {
    match format {
        Format::Text => text::render_text(report, sources, out),
        Format::Json => json::render_json(report, out),
        Format::Sarif => sarif::render_sarif(report, out),
    }
}

impl Report {
    /// The warnings no filter removed.
    pub fn reported(&self) -> impl Iterator<Item = &RaceWarning> {
        self.warnings.iter().filter(|w| w.is_reported())
    }
}

impl RaceWarning {
    /// No filter removed this warning.
    pub fn is_reported(&self) -> bool {
        self.filtered_by.is_empty()
    }
}
