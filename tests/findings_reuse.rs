//! A re-run that reuses its saved findings (`warnings: reused from the cache`) must report what
//! a cold run of the edited program reports: each test edits a fixture, re-runs with the cache,
//! and compares the report with one made without it.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;
use common::warned_lines;

const REUSED: &str = "warnings: reused from the cache";

fn fixture(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/race")
        .join(name);
    std::fs::read_to_string(path).expect("fixture")
}

/// A program under edit, analysed with a cache in its own directory.
struct Edited {
    _dir: tempfile::TempDir,
    cache: PathBuf,
    src: PathBuf,
}

impl Edited {
    fn new(text: &str) -> Edited {
        let dir = tempfile::tempdir().unwrap();
        let cache = dir.path().join("cache");
        let src = dir.path().join("prog.c");
        std::fs::write(&src, text).unwrap();
        Edited {
            _dir: dir,
            cache,
            src,
        }
    }

    /// Runs `relay analyze` (JSON report, stage times removed) with or without the cache;
    /// returns the report and stderr.
    fn analyze(&self, cached: bool, extra: &[&str]) -> (serde_json::Value, String) {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay"));
        cmd.args(["analyze", "--format", "json", "-j2"]);
        if cached {
            cmd.arg("--cache").arg(&self.cache);
        } else {
            cmd.arg("--no-cache");
        }
        let out = cmd.arg(&self.src).args(extra).output().expect("relay runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let mut report: serde_json::Value =
            serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {err}"));
        report["stats"]["times"] = serde_json::Value::Null;
        (report, err)
    }

    /// Replaces `from` (which must occur once) by `to` in the program.
    fn edit(&self, from: &str, to: &str) {
        let text = std::fs::read_to_string(&self.src).unwrap();
        assert_eq!(text.matches(from).count(), 1, "{from:?} occurs once");
        std::fs::write(&self.src, text.replace(from, to)).unwrap();
    }

    /// Re-runs with the cache after an edit: the report must be a cold run's. Returns whether
    /// the findings were reused.
    fn rerun_matches_cold(&self, extra: &[&str]) -> bool {
        let (cached, err) = self.analyze(true, extra);
        let (cold, _) = self.analyze(false, extra);
        assert_eq!(
            cached, cold,
            "the cached re-run differs from a cold run: {err}"
        );
        err.contains(REUSED)
    }
}

/// `main` stores another address into `cb`: the points-to classes do not change (a, b and c
/// are one class either way), nor does any summary (`main` writes `cb` either way), but the
/// objects of the race stage's inclusion-based analysis do: worker_b's `pick()->n` may now
/// touch `a`, which worker_a writes.
#[test]
fn a_new_pointer_flow_is_seen_by_the_distinct_objects_analysis() {
    let text = fixture("distinct_objects.c").replace(
        "long s = peek(0) + peek(1);",
        "long s = peek(0) + peek(1);\n    cb = &b;",
    );
    let p = Edited::new(&text);
    let (first, _) = p.analyze(true, &[]);
    p.edit("cb = &b;", "cb = &a;");
    assert!(!p.rerun_matches_cold(&[]), "pointer flow changed");
    let (now, _) = p.analyze(false, &[]);
    assert_ne!(
        warned_lines(&first),
        warned_lines(&now),
        "worker_a's `ca->n` now races with worker_b"
    );
    // Without the inclusion-based analysis the same edit changes nothing the race stage reads.
    let q = Edited::new(&text);
    q.analyze(true, &["--no-inclusion"]);
    q.edit("cb = &b;", "cb = &a;");
    assert!(q.rerun_matches_cold(&["--no-inclusion"]));
}

/// An edit inside a body that moves no pointer keeps the findings.
#[test]
fn an_edit_that_moves_no_pointer_reuses_the_findings() {
    let p = Edited::new(&fixture("distinct_objects.c"));
    p.analyze(true, &[]);
    p.edit("n->v = 0;", "n->v = 0; int unused = 1; (void)unused;");
    assert!(p.rerun_matches_cold(&[]), "the findings are reused");
}

/// `relay report` on the run's cache (JSON, stage times removed).
fn saved_report(p: &Edited) -> serde_json::Value {
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["report", "--format", "json", "--cache"])
        .arg(&p.cache)
        .output()
        .expect("relay runs");
    let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("a report");
    report["stats"]["times"] = serde_json::Value::Null;
    report
}

/// A line added inside a function moves every later line of the file and changes no summary:
/// the findings are reused, rewritten to the new lines; the report is a cold run's, and so is
/// `relay report`'s. Taking the edit back finds the first run's findings again.
#[test]
fn a_new_line_reuses_the_findings_at_their_new_lines() {
    let text = fixture("distinct_objects.c");
    let p = Edited::new(&text);
    let (first, _) = p.analyze(true, &[]);
    p.edit(
        "static void *worker_b(void *arg)\n{",
        "static void *worker_b(void *arg)\n{\n",
    );
    let (cached, err) = p.analyze(true, &[]);
    let (cold, _) = p.analyze(false, &[]);
    assert_eq!(cached, cold, "the re-run is a cold run's: {err}");
    assert!(err.contains("only lines moved"), "{err}");
    assert_ne!(warned_lines(&first), warned_lines(&cold), "lines moved");
    assert_eq!(saved_report(&p), cold, "`relay report` names the new lines");
    std::fs::write(&p.src, &text).unwrap();
    let (back, err) = p.analyze(true, &[]);
    assert_eq!(back, first, "{err}");
    assert_eq!(saved_report(&p), first);
}

/// Lines added at the top of a fixture and in its middle: each re-run reports what a cold run
/// does, on every race fixture, with one warning per pair of sites and per access.
#[test]
fn moved_lines_in_every_fixture_report_what_a_cold_run_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/race");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".c"))
        .collect();
    names.sort();
    let mut moved = 0;
    for name in &names {
        let text = fixture(name);
        let mid = text.len() / 2;
        let cut = text[mid..].find('\n').map_or(text.len(), |i| mid + i + 1);
        for extra in [&[][..], &["--per-access"][..]] {
            let p = Edited::new(&text);
            p.analyze(true, extra);
            std::fs::write(&p.src, format!("\n{text}")).unwrap();
            moved += p.rerun_matches_cold(extra) as usize;
            std::fs::write(&p.src, format!("\n{}\n\n{}", &text[..cut], &text[cut..])).unwrap();
            moved += p.rerun_matches_cold(extra) as usize;
        }
    }
    // Most edits move lines only (a fixture whose summaries name `__LINE__`-like constants
    // would not).
    assert!(
        moved > names.len() * 3,
        "{moved} of {} re-runs reused",
        names.len() * 4
    );
}

/// The inclusion-based points-to runs beside the summaries for the constructors the previous
/// run found: when an edit makes `make` a constructor or stops it being one (each call of a
/// constructor is an allocation site of its own, so the two threads' objects are apart or
/// not), the re-run computes it again for this run's and reports what a cold run does.
#[test]
fn a_function_that_stops_or_starts_returning_a_fresh_object_is_seen() {
    let text = r#"
#include <pthread.h>
#include <stdlib.h>
struct node { long v; };
static struct node shared;
static struct node *make(void)
{
    struct node *n = malloc(sizeof *n);
    RETURN
}
static void *one(void *arg)
{
    struct node *n = make();
    n->v = 1;
    return arg;
}
static void *two(void *arg)
{
    struct node *n = make();
    n->v = 2;
    return arg;
}
int main(void)
{
    pthread_t t, u;
    pthread_create(&t, 0, one, 0);
    pthread_create(&u, 0, two, 0);
    return 0;
}
"#;
    let fresh = "return n;";
    let global = "(void)n; return &shared;";
    let p = Edited::new(&text.replace("RETURN", fresh));
    let (constructor, _) = p.analyze(true, &[]);
    // An edit that keeps the constructors: computed ahead, the same findings.
    p.edit(
        "pthread_t t, u;",
        "pthread_t t, u; int unused = 1; (void)unused;",
    );
    assert!(p.rerun_matches_cold(&[]));
    p.edit(fresh, global);
    assert!(!p.rerun_matches_cold(&[]), "make no longer allocates");
    let (not_constructor, _) = p.analyze(false, &[]);
    assert_ne!(
        warned_lines(&constructor),
        warned_lines(&not_constructor),
        "`n->v` races once both threads get `shared`"
    );
    p.edit(global, fresh);
    assert!(!p.rerun_matches_cold(&[]), "make allocates again");
}
