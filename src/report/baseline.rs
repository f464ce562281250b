//! The CI baseline: the keys of warnings already known, so that a CI run reports only new ones.
//!
//! The file is small, versioned JSON, sorted by key so that it diffs well:
//!
//! ```json
//! {
//!   "relay_baseline": 1,
//!   "warnings": [
//!     { "key": "…", "lvalue": "rx_p->count", "entries": ["airo_thread", "main"] }
//!   ]
//! }
//! ```
//!
//! Only `key` is used when applying a baseline; `lvalue` and `entries` are for the humans who
//! review the file.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use super::Report;

/// Version of the baseline file format (`relay_baseline`).
pub const BASELINE_VERSION: u32 = 1;

/// The keys of the warnings in a baseline file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Baseline {
    keys: BTreeSet<String>,
}

#[derive(Serialize, Deserialize)]
struct File {
    relay_baseline: u32,
    warnings: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    key: String,
    #[serde(default)]
    lvalue: String,
    #[serde(default)]
    entries: Vec<String>,
}

impl Baseline {
    /// Reads a baseline file written by [`Baseline::write`].
    pub fn read(path: &Path) -> anyhow::Result<Baseline> {
        let text = fs::read_to_string(path)
            .with_context(|| format!("cannot read baseline {}", path.display()))?;
        Baseline::parse(&text).with_context(|| format!("invalid baseline {}", path.display()))
    }

    /// Parses the contents of a baseline file.
    pub fn parse(text: &str) -> anyhow::Result<Baseline> {
        let value: serde_json::Value = serde_json::from_str(text).context("not valid JSON")?;
        match value.get("relay_baseline") {
            None => bail!("not a relay baseline: no `relay_baseline` field"),
            Some(v) if v.as_u64() == Some(u64::from(BASELINE_VERSION)) => {}
            Some(v) => bail!(
                "unsupported relay_baseline version {v} (this relay reads version {BASELINE_VERSION})"
            ),
        }
        let file: File = serde_json::from_value(value)?;
        Ok(Baseline {
            keys: file.warnings.into_iter().map(|e| e.key).collect(),
        })
    }

    /// The baseline of `report`: the keys of the warnings it reports (those no filter removed).
    pub fn of(report: &Report) -> Baseline {
        Baseline {
            keys: report.reported().map(|w| w.key.clone()).collect(),
        }
    }

    /// Writes the baseline of `report` (its reported warnings) to `path`, atomically: a
    /// temporary file in the same directory, then a rename over `path`.
    pub fn write(report: &Report, path: &Path) -> anyhow::Result<()> {
        let text = Baseline::contents(report);
        write_atomically(path, text.as_bytes())
            .with_context(|| format!("cannot write baseline {}", path.display()))
    }

    /// The text [`Baseline::write`] writes: sorted by key, one entry per key.
    pub fn contents(report: &Report) -> String {
        let mut by_key: BTreeMap<&str, Entry> = BTreeMap::new();
        for w in report.reported() {
            by_key.entry(&w.key).or_insert_with(|| Entry {
                key: w.key.clone(),
                lvalue: w.lvalue.clone(),
                entries: w.accesses.iter().map(|a| a.entry.clone()).collect(),
            });
        }
        let file = File {
            relay_baseline: BASELINE_VERSION,
            warnings: by_key.into_values().collect(),
        };
        let mut text = serde_json::to_string_pretty(&file).expect("a baseline serializes");
        text.push('\n');
        text
    }

    /// Removes from `report` the reported warnings whose key is in the baseline; they are
    /// counted in `stats.baseline_suppressed` and no longer in `stats.warnings_reported`.
    /// Warnings a filter removed (shown under `--show-filtered`) stay as they are.
    pub fn apply(&self, report: &mut Report) {
        let before = report.warnings.len();
        report
            .warnings
            .retain(|w| !(w.is_reported() && self.keys.contains(&w.key)));
        let removed = before - report.warnings.len();
        report.stats.baseline_suppressed += removed;
        report.stats.warnings_reported = report.stats.warnings_reported.saturating_sub(removed);
    }

    /// `key` is in the baseline.
    pub fn contains(&self, key: &str) -> bool {
        self.keys.contains(key)
    }

    /// The keys, sorted.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.keys.iter().map(String::as_str)
    }

    pub fn len(&self) -> usize {
        self.keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }
}

/// Writes `bytes` to a fresh temporary file next to `path`, syncs it, and renames it over
/// `path`; the temporary file is removed on failure.
fn write_atomically(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file path", path.display()))?;
    let mut n = 0u32;
    let (tmp, mut file) = loop {
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(".{}.{n}.tmp", std::process::id()));
        let tmp = dir.join(tmp_name);
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => break (tmp, f),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(e).with_context(|| format!("cannot create {}", tmp.display())),
        }
    };
    let written = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .map_err(anyhow::Error::from)
        .and_then(|()| {
            drop(file);
            fs::rename(&tmp, path).map_err(anyhow::Error::from)
        });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::super::sample;
    use super::*;

    #[test]
    fn write_read_apply() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("relay-baseline.json");
        let report = sample::report("a.c");
        Baseline::write(&report, &path).unwrap();
        // Only the file itself is left in the directory (no temporary file).
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("{\n  \"relay_baseline\": 1,"), "{text}");
        assert!(
            text.contains("\"entries\": [\n        \"airo_thread\",\n        \"main\"\n"),
            "{text}"
        );
        assert!(
            !text.contains("stats.n"),
            "filtered warnings are not in the baseline:\n{text}"
        );

        let baseline = Baseline::read(&path).unwrap();
        assert_eq!(baseline, Baseline::of(&report));
        assert_eq!(baseline.len(), 1);
        assert!(baseline.contains(&report.warnings[0].key));

        let mut again = report.clone();
        baseline.apply(&mut again);
        assert_eq!(again.warnings.len(), 1, "the filtered warning stays");
        assert_eq!(again.warnings[0].lvalue, "stats.n");
        assert_eq!(again.stats.baseline_suppressed, 3 + 1);
        assert_eq!(again.stats.warnings_reported, 0);

        // Overwriting works and is sorted by key.
        let mut two = report.clone();
        two.warnings[1].filtered_by.clear();
        two.warnings.reverse();
        Baseline::write(&two, &path).unwrap();
        let text = fs::read_to_string(&path).unwrap();
        let first = text.find("data-race|rx_p").unwrap();
        let second = text.find("data-race|stats.n").unwrap();
        assert!(first < second);
        assert_eq!(Baseline::read(&path).unwrap().len(), 2);
    }

    #[test]
    fn errors_name_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.json");
        let err = format!("{:#}", Baseline::read(&missing).unwrap_err());
        assert!(err.contains("missing.json"), "{err}");

        let bad = dir.path().join("bad.json");
        fs::write(&bad, "{\"relay_baseline\": 2, \"warnings\": []}").unwrap();
        let err = format!("{:#}", Baseline::read(&bad).unwrap_err());
        assert!(
            err.contains("bad.json") && err.contains("version 2"),
            "{err}"
        );

        fs::write(&bad, "not json").unwrap();
        let err = format!("{:#}", Baseline::read(&bad).unwrap_err());
        assert!(
            err.contains("bad.json") && err.contains("not valid JSON"),
            "{err}"
        );

        fs::write(&bad, "{\"warnings\": []}").unwrap();
        assert!(Baseline::read(&bad).is_err());

        fs::write(
            &bad,
            "{\"relay_baseline\": 1, \"warnings\": [{\"key\": \"k\"}]}",
        )
        .unwrap();
        assert!(Baseline::read(&bad).unwrap().contains("k"));

        let no_dir = dir.path().join("no/such/dir/b.json");
        let err = format!(
            "{:#}",
            Baseline::write(&sample::report("a.c"), &no_dir).unwrap_err()
        );
        assert!(err.contains("b.json"), "{err}");
    }
}
