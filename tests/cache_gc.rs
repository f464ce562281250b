//! Collecting the cache (src/cache/gc.rs) on the command line: after edits, the summaries of
//! the latest eight runs stay (re-running any of them analyses nothing), those of older texts
//! go (re-running one analyses what changed since), and what a run computes with a collected
//! cache is what it computes without a cache.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

/// Versions of the program: the `v`-th writes the `v`-th global besides `*p`, so each
/// changes `leaf`'s summary, and its callers' keys too.
const VERSIONS: usize = 10;

/// Every function's summary is printed.
const FUNCTIONS: &[&str] = &[
    "--function",
    "leaf",
    "--function",
    "mid",
    "--function",
    "top",
    "--function",
    "main",
];

fn program(v: usize) -> String {
    let globals: Vec<String> = (0..VERSIONS).map(|i| format!("g{i}")).collect();
    format!(
        "int g, {};\n\
         void leaf(int *p) {{ *p = 1; g{v} = 2; }}\n\
         void mid(void) {{ leaf(&g); }}\n\
         void top(void) {{ mid(); }}\n\
         int main(void) {{ top(); return 0; }}\n",
        globals.join(", ")
    )
}

fn relay(args: &[&str], cwd: &Path) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(out.status.success(), "{args:?}: {out:?}");
    out
}

/// `relay summary` of version `v` with the cache: its stdout, and how many SCCs it analysed.
fn summarize(dir: &Path, v: usize) -> (String, usize) {
    fs::write(dir.join("prog.i"), program(v)).unwrap();
    let out = relay(
        &[&["summary", "--cache", "cache", "prog.i"], FUNCTIONS].concat(),
        dir,
    );
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !err.contains("corrupt") && !err.contains("could not"),
        "{err}"
    );
    let analysed = err
        .lines()
        .find_map(|l| {
            l.strip_prefix("summaries: ")?
                .split(" SCC(s) analysed")
                .next()
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no summaries line in {err}"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), analysed)
}

fn cold(dir: &Path, v: usize) -> String {
    fs::write(dir.join("prog.i"), program(v)).unwrap();
    let out = relay(
        &[&["summary", "--no-cache", "prog.i"], FUNCTIONS].concat(),
        dir,
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The summaries printed, without the run's statistics (times).
fn summaries(stdout: &str) -> &str {
    let end = stdout.find("\nsummaries: ").expect("statistics");
    assert!(stdout[..end].contains("function main"), "{stdout}");
    &stdout[..end]
}

#[test]
fn a_collected_cache_keeps_the_latest_eight_runs_summaries() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    for v in 0..VERSIONS {
        assert_eq!(
            summarize(dir, v).1,
            4,
            "version {v}: every function's summary changed"
        );
    }
    let out = relay(
        &["cache", "gc", "--cache", "cache", "--format", "json"],
        dir,
    );
    let collected: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(collected["kept"].as_u64().unwrap() > 0, "{collected}");
    // The latest run's summaries and the oldest of the eight kept: nothing to analyse.
    assert_eq!(summarize(dir, VERSIONS - 1).1, 0);
    assert_eq!(summarize(dir, VERSIONS - 8).1, 0);
    // The first two versions' are gone (collected automatically or by `relay cache gc`).
    let (first, analysed) = summarize(dir, 0);
    assert_eq!(analysed, 4);
    assert_eq!(summaries(&first), summaries(&cold(dir, 0)));
    let text = relay(&["cache", "gc", "--cache", "cache"], dir);
    assert!(String::from_utf8_lossy(&text.stdout).starts_with("removed "));
}
