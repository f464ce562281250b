//! The race ground truth: every `fixtures/race/*.c` is preprocessed, analysed with the whole
//! pipeline, and its annotations checked (DESIGN.md, "Fixtures convention"): a `// RACE` line must
//! have an access in some warning, a `// NORACE` line must have none (the sites a warning names
//! for the accesses it absorbed, `also`, count).
//!
//! Fixtures that need analyses of a later stage are listed in [`PENDING`] with the reason; for
//! them the test requires the annotations to *fail* (so a fixture that starts passing is noticed
//! and moved out of the list).

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::program_of;
use relay::models::Models;
use relay::pipeline;
use relay::pta::SignatureFilter;
use relay::race::FilterConfig;

/// Fixtures whose annotations need a later stage, and why.
const PENDING: &[(&str, &str)] = &[];

#[derive(Debug, PartialEq, Eq, PartialOrd, Ord, Clone, Copy)]
enum Expect {
    Race,
    NoRace,
}

fn annotations(text: &str) -> Vec<(u32, Expect)> {
    text.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let (code, comment) = l.split_once("//")?;
            if code.trim().is_empty() {
                // A comment line (a fixture's header), not an annotated access.
                return None;
            }
            let c = comment.trim();
            let e = if c.starts_with("NORACE") {
                Expect::NoRace
            } else if c.starts_with("RACE") {
                Expect::Race
            } else {
                return None;
            };
            Some((i as u32 + 1, e))
        })
        .collect()
}

/// A fixture's `// relay-args:` line: the `relay analyze` options it needs (`--filter`,
/// `--filter-k`, `--entry`, `--entry-roots`, `--entry-family`, `--collapse-scc`,
/// `--strict-publication`).
fn fixture_options(text: &str) -> (pipeline::Options, FilterConfig) {
    let mut options = pipeline::Options::default();
    let mut filters = FilterConfig::default();
    let Some(line) = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("// relay-args:"))
    else {
        return (options, filters);
    };
    let mut words = line.split_whitespace();
    while let Some(w) = words.next() {
        let mut value = || words.next().unwrap_or_else(|| panic!("{w} needs a value"));
        match w {
            "--filter" => filters.apply_setting(value()).unwrap(),
            "--filter-k" => filters.k = value().parse().unwrap(),
            "--entry" => options.entries.names.push(value().to_string()),
            "--entry-roots" => options.entries.roots = true,
            "--entry-family" => {
                options
                    .entries
                    .families
                    .settings
                    .push(match value().split_once('=') {
                        Some((name, v)) => (name.to_string(), v == "on"),
                        None => panic!("--entry-family needs NAME=on|off"),
                    })
            }
            "--collapse-scc" => options.collapse_at = value().parse().unwrap(),
            "--strict-publication" => options.strict_publication = true,
            "--closed-world" => options.world.closed = true,
            "--reentrant-families" => options.entries.reentrant_families = true,
            "--no-signature-filter" => options.signature_filter = SignatureFilter::Off,
            "--loose-signatures" => options.signature_filter = SignatureFilter::Loose,
            _ => panic!("relay-args: unsupported option {w}"),
        }
    }
    (options, filters)
}

/// The annotation failures of one fixture, one line each.
fn check(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut program = program_of(path);
    // As `relay analyze` builds it: calls to the models' trampolines are calls through a member.
    relay::link::trampolines::rewrite(&mut program, Models::builtin_ref().trampolines());
    let (options, filters) = fixture_options(&text);
    let analysis = pipeline::analyze(&program, Models::builtin_ref(), &options)
        .unwrap_or_else(|e| panic!("{}: {e:#}", path.display()));
    let file_name = path.file_name().unwrap().to_str().unwrap();
    let in_fixture = |file: u32| {
        program
            .files
            .get(file as usize)
            .is_some_and(|f| f.ends_with(file_name))
    };
    let mut racy_lines = BTreeSet::new();
    let (warnings, _) = analysis.warnings(&program, &filters);
    for w in warnings.iter().filter(|w| w.filtered_by.is_empty()) {
        for side in [&w.first, &w.second] {
            // Every site the warning names: those its accesses were found at and those of
            // the accesses it absorbed (`also`, reported on the same warning).
            let sites = side.access.witnesses.iter().map(|w| w.loc);
            for loc in sites.chain(side.also.iter().copied()) {
                if in_fixture(loc.file) {
                    racy_lines.insert(loc.line);
                }
            }
        }
    }
    let mut failures = Vec::new();
    for (line, expect) in annotations(&text) {
        let reported = racy_lines.contains(&line);
        match (expect, reported) {
            (Expect::Race, false) => {
                failures.push(format!("{file_name}:{line}: RACE not reported"))
            }
            (Expect::NoRace, true) => failures.push(format!("{file_name}:{line}: NORACE reported")),
            _ => {}
        }
    }
    failures
}

#[test]
fn race_fixture_annotations_hold() {
    let files = common::c_fixtures("race");
    assert!(
        files.len() >= 13,
        "expected the race fixtures, found {}",
        files.len()
    );
    let mut failures = Vec::new();
    let mut pending_passing = Vec::new();
    for f in &files {
        let name = f.file_name().unwrap().to_str().unwrap();
        let text = std::fs::read_to_string(f).unwrap();
        assert!(!annotations(&text).is_empty(), "{name}: no annotations");
        let fails = check(f);
        match PENDING.iter().find(|(n, _)| *n == name) {
            Some((_, why)) => {
                if fails.is_empty() {
                    pending_passing.push(format!("{name} passes; remove it from PENDING ({why})"));
                } else {
                    eprintln!("pending {name} ({why}): {}", fails.join("; "));
                }
            }
            None => failures.extend(fails),
        }
    }
    assert!(
        failures.is_empty() && pending_passing.is_empty(),
        "{}",
        failures
            .iter()
            .chain(&pending_passing)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
