//! `relay analyze` end to end: exit codes, the three formats, filters, baselines, and
//! deterministic output for any `-j`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/race")
        .join(name)
}

fn relay(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg("analyze")
        .arg("-q")
        .arg("--no-cache")
        .args(args)
        .output()
        .expect("relay runs")
}

fn json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["--format", "json"];
    all.extend_from_slice(args);
    let out = relay(&all);
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

#[test]
fn exit_codes_follow_the_warnings() {
    let racy = fixture("main_after_join.c");
    let out = relay(&[racy.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning[data-race]: `during`"), "{text}");
    assert!(text.contains("main_after_join.c:16:5"), "{text}");
    assert!(
        !text.contains("`result`"),
        "read after the join is ordered: {text}"
    );

    let out = relay(&[racy.to_str().unwrap(), "--entry", "no_such_function"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no_such_function"));

    let out = relay(&[racy.to_str().unwrap(), "--filter", "bogus=on"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A run never says "clean" about code it did not read: nothing readable is a usage error (2),
/// a partly read run without warnings is not clean (1).
#[test]
fn exit_codes_count_the_input_not_analysed() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    std::fs::write(
        path("binary.i"),
        [0x7f, b'E', b'L', b'F', 0, 1, 2, 0xff, b'\n'],
    )
    .unwrap();
    std::fs::write(
        path("missing.c"),
        "#include <no_such_header_here.h>\nint x;\n",
    )
    .unwrap();
    std::fs::write(path("clean.i"), "int y;\nint main(void) { return y; }\n").unwrap();
    std::fs::write(path("broken.i"), "int z;\nint f(void) { return @; }\n").unwrap();

    let out = relay(&[&path("binary.i"), &path("missing.c")]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("nothing to analyse"), "{err}");
    assert!(err.contains("missing.c"), "{err}");

    assert_eq!(relay(&[&path("clean.i")]).status.code(), Some(0));

    for partial in ["missing.c", "broken.i"] {
        let out = relay(&["--format", "json", &path("clean.i"), &path(partial)]);
        assert_eq!(out.status.code(), Some(1), "{partial}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["stats"]["warnings_reported"], 0);
        let unread = &report["stats"]["unread"];
        let counted = if partial == "missing.c" {
            "units"
        } else {
            "declarations"
        };
        assert_eq!(unread[counted], 1, "{partial}: {unread}");
    }
}

/// `-o` and `--write-baseline` are checked before the analysis: an unwritable output fails
/// first (here before the input is found unreadable), and names its path.
#[test]
fn output_paths_are_checked_first() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = dir.path().join("garbage.i");
    std::fs::write(&garbage, "@@@\n").unwrap();
    let garbage = garbage.to_str().unwrap();
    let missing = dir.path().join("no/such/dir/report.json");
    for flag in ["-o", "--write-baseline"] {
        let out = relay(&[garbage, flag, missing.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("no/such/dir/report.json"), "{flag}: {err}");
        assert!(!err.contains("nothing to analyse"), "{flag}: {err}");
    }
    let out = relay(&[garbage, "-o", dir.path().to_str().unwrap()]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("is a directory"));
}

/// A directory holding `x.c` and its preprocessed `x.i` is one unit, said on stderr.
#[test]
fn a_source_beside_its_preprocessed_form_is_analysed_once() {
    let dir = tempfile::tempdir().unwrap();
    let racy = "int x;\nvoid *t(void *a) { x++; return 0; }\n\
                int pthread_create(void *, void *, void *(*)(void *), void *);\n\
                int main(void) { long a; pthread_create(&a, 0, t, 0); x++; return 0; }\n";
    std::fs::write(dir.path().join("x.c"), racy).unwrap();
    std::fs::write(dir.path().join("x.i"), racy).unwrap();
    let d = dir.path().to_str().unwrap();
    let twins = json(&[d]);
    let alone = json(&[dir.path().join("x.i").to_str().unwrap()]);
    assert_eq!(twins["warnings"], alone["warnings"]);
    assert!(!twins["warnings"].as_array().unwrap().is_empty());
    let err = String::from_utf8_lossy(&relay(&[d]).stderr).to_string();
    assert!(err.contains("x.c not analysed"), "{err}");
}

#[test]
fn json_and_sarif_describe_the_same_warnings() {
    let f = fixture("relay_figure13.c");
    let report = json(&[f.to_str().unwrap()]);
    assert_eq!(report["schema_version"], 2);
    let warnings = report["warnings"].as_array().unwrap();
    assert!(!warnings.is_empty());
    assert_eq!(
        report["stats"]["warnings_reported"].as_u64(),
        Some(warnings.len() as u64)
    );
    for w in warnings {
        assert_eq!(w["accesses"].as_array().unwrap().len(), 2);
    }

    let out = relay(&["--format", "sarif", f.to_str().unwrap()]);
    let sarif: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), warnings.len());
    for r in results {
        assert!(r["ruleId"].as_str().unwrap().contains("race"));
        assert!(r["locations"][0]["physicalLocation"]["region"]["startLine"].is_u64());
        assert_eq!(r["relatedLocations"].as_array().unwrap().len(), 1);
        assert_eq!(
            r["codeFlows"][0]["threadFlows"].as_array().unwrap().len(),
            2
        );
    }
}

#[test]
fn filters_are_counted_and_shown_on_request() {
    let f = fixture("unlikely_aliasing_large_repr.c");
    let f = f.to_str().unwrap();
    let plain = json(&[f]);
    let filtered = json(&[f, "--filter", "large-repr=on"]);
    let shown = json(&[f, "--filter", "large-repr=on", "--show-filtered"]);
    let reported = |r: &serde_json::Value| r["stats"]["warnings_reported"].as_u64().unwrap();
    assert!(reported(&filtered) < reported(&plain));
    let removed = filtered["stats"]["filters"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["name"] == "large-repr")
        .unwrap()["removed"]
        .as_u64()
        .unwrap();
    assert_eq!(reported(&filtered) + removed, reported(&plain));
    let marked = shown["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| w["filtered_by"][0] == "large-repr")
        .count() as u64;
    assert_eq!(marked, removed);
}

#[test]
fn baseline_hides_known_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("baseline.json");
    let f = fixture("thread_pool.c");
    let f = f.to_str().unwrap();
    let out = relay(&[f, "--write-baseline", base.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let out = relay(&[f, "--baseline", base.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let out = relay(&[
        f,
        "--baseline",
        dir.path().join("missing").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn output_is_identical_for_any_job_count() {
    let f = fixture("entry_multiplicity.c");
    let f = f.to_str().unwrap();
    let one = relay(&["-j1", "--format", "sarif", f]);
    let two = relay(&["-j2", "--format", "sarif", f]);
    let strip_times = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["runs"][0]["properties"]["stats"]["times"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip_times(&one), strip_times(&two));
}

/// `--no-signature-filter` brings back the calls a pointer's parameter types rule out: in
/// callback_signatures.c the struct-a call then reaches `on_b` without the lock.
#[test]
fn signature_filter_can_be_turned_off() {
    let f = fixture("callback_signatures.c");
    let text = |args: &[&str]| {
        let out = relay(args);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let filtered = text(&[f.to_str().unwrap()]);
    assert!(filtered.contains("`a_count`"), "{filtered}");
    assert!(!filtered.contains("`b_count`"), "{filtered}");
    let unfiltered = text(&[f.to_str().unwrap(), "--no-signature-filter"]);
    assert!(unfiltered.contains("`b_count`"), "{unfiltered}");
}

/// `--no-inclusion` pairs the accesses the inclusion-based points-to proves apart again, and
/// the run counts the pairs it removed.
#[test]
fn distinct_objects_can_be_turned_off() {
    let f = fixture("distinct_objects.c");
    let lines = |args: &[&str]| -> (Vec<u64>, u64) {
        let report = json(args);
        let lines = common::warned_lines(&report);
        let removed = report["stats"]["pairs_distinct_objects"]
            .as_u64()
            .expect("count");
        (lines, removed)
    };
    // `ca->n += 1` in worker_a touches `a` only.
    let worker_a = std::fs::read_to_string(&f)
        .expect("fixture")
        .lines()
        .position(|l| l.contains("ca->n += 1;"))
        .expect("the line") as u64
        + 1;
    let (on, removed) = lines(&[f.to_str().unwrap()]);
    assert!(!on.contains(&worker_a), "{on:?}");
    assert!(removed > 0);
    let (off, removed) = lines(&[f.to_str().unwrap(), "--no-inclusion"]);
    assert!(off.contains(&worker_a), "{off:?}");
    assert_eq!(removed, 0);
}

/// A call through a member of an object of unknown type (a lowering diagnostic) has no static
/// type: the signature filter leaves it alone instead of indexing a record that does not exist.
#[test]
fn calls_through_unknown_members_do_not_panic() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path().join("unknown_member.c");
    std::fs::write(
        &src,
        "void h(int y) { __typeof__(nosuch) v; v.cb(y); v.a->cb(y); (*v.fp)(y); }\n",
    )
    .expect("write the source");
    let out = relay(&[src.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    // The statements using `v` cannot be lowered: they are named, and the run is not clean.
    assert!(stderr.contains("unknown_member.c:1:"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

/// One struct with an anonymous member, defined in two units (the second unit defines another
/// anonymous struct first): the units' definitions are one record, so the member both units
/// write is one location and the writes race (a per-unit name of the anonymous member made
/// them two records, and the race was missed).
#[test]
fn a_struct_with_anonymous_members_is_one_record_across_units() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let header = "struct stat { union { int a; long b; }; int count; };\n\
                  extern struct stat shared;\n";
    std::fs::write(
        dir.path().join("a.c"),
        format!(
            "#include <pthread.h>\n{header}struct stat shared;\n\
             void *bump(void *p) {{ shared.count++; return p; }}\n\
             int main(void) {{ pthread_t t; extern void *reset(void *);\n\
             pthread_create(&t, 0, bump, 0); pthread_create(&t, 0, reset, 0); return 0; }}\n"
        ),
    )
    .expect("write a.c");
    std::fs::write(
        dir.path().join("b.c"),
        format!(
            "struct other {{ struct {{ int x; }}; int y; }} o;\n{header}\
             void *reset(void *p) {{ shared.count = 0; return p; }}\n"
        ),
    )
    .expect("write b.c");
    let report = json(&[dir.path().to_str().unwrap()]);
    let warnings = report["warnings"].as_array().expect("warnings");
    assert!(
        warnings
            .iter()
            .any(|w| w["lvalue"].as_str().is_some_and(|l| l.ends_with("count"))),
        "{report:#}"
    );
}

/// Memory no program name names (an unknown function's result, reached through a recursive
/// walk, so its path is the class's) is named after what points to it, never after the
/// analysis's numbering: the report and its keys stay the same when a local is added.
#[test]
fn warnings_name_unnamed_memory_after_its_pointer_and_keep_their_keys_across_edits() {
    let text = "#include <pthread.h>\n\
                int **get_pp(void);\n\
                void walk(int **pp, int n);\n\
                void step(int **pp, int n) { **pp = n; if (n) walk(pp, n - 1); }\n\
                void walk(int **pp, int n) { step(pp, n); }\n\
                void *thr(void *a) { walk(a, 3); return a; }\n\
                int main(void) {\n\
                    pthread_t t1, t2;\n\
                    int **pp = get_pp();\n\
                    pthread_create(&t1, 0, thr, pp);\n\
                    pthread_create(&t2, 0, thr, pp);\n\
                    return 0;\n\
                }\n";
    let dir = tempfile::tempdir().expect("a temporary directory");
    let report = |text: &str| {
        let src = dir.path().join("walk.c");
        std::fs::write(&src, text).expect("write the source");
        let mut r = json(&[src.to_str().unwrap()]);
        r["stats"]["times"] = serde_json::Value::Null;
        r
    };
    let before = report(text);
    let lvalues: Vec<&str> = before["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w["lvalue"].as_str().expect("an lvalue"))
        .collect();
    assert_eq!(lvalues, ["*main:pp"]);
    let with_local = text.replace("pthread_t t1, t2;", "pthread_t t1, t2; int unused = 0;");
    assert_eq!(report(&with_local), before);
}

/// `--per-access` reports every racing access once, with its first conflicting access: the
/// same source lines as the pairwise report, in fewer warnings, the same for any `-j`.
#[test]
fn one_warning_per_access_names_every_racing_line() {
    let f = fixture("relay_figure9.c");
    let f = f.to_str().unwrap();
    let lines = |report: &serde_json::Value| {
        let mut lines = std::collections::BTreeSet::new();
        for w in report["warnings"].as_array().unwrap() {
            for a in w["accesses"].as_array().unwrap() {
                lines.insert(a["location"]["line"].as_u64().unwrap());
                for at in a["also_at"].as_array().into_iter().flatten() {
                    lines.insert(at["line"].as_u64().unwrap());
                }
            }
        }
        lines
    };
    let count = |r: &serde_json::Value| r["warnings"].as_array().unwrap().len();
    let pairwise = json(&[f]);
    let per_access = json(&["--per-access", f]);
    assert_eq!(lines(&pairwise), lines(&per_access));
    assert!(
        count(&per_access) < count(&pairwise),
        "{}",
        count(&per_access)
    );
    let mut one = json(&["--per-access", "-j1", f]);
    let mut two = json(&["--per-access", "-j2", f]);
    for r in [&mut one, &mut two] {
        r["stats"]["times"] = serde_json::Value::Null;
    }
    assert_eq!(one, two);
}

/// A run over inputs unchanged since a saved run (every unit's preprocessed text, the
/// arguments) reports that run's findings as they are, the front end's messages printed again;
/// a changed unit or argument runs the analysis.
#[test]
fn unchanged_inputs_reuse_the_saved_run() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let src = dir.path().join("prog.c");
    let body = std::fs::read_to_string(fixture("main_after_join.c")).unwrap();
    // A declaration the front end skips, with a message.
    std::fs::write(&src, format!("{body}\nint broken(;\n")).unwrap();
    let run = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_relay"))
            .arg("analyze")
            .arg("--cache")
            .arg(&cache)
            .arg(&src)
            .args(extra)
            .output()
            .expect("relay runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), out.stdout, err)
    };
    let reused = "inputs: unchanged since a saved run";
    let (code, first, err) = run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(!err.contains(reused), "{err}");
    assert!(err.contains("declaration skipped"), "{err}");
    let (code, second, err) = run(&[]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains(reused), "{err}");
    assert!(
        err.contains("declaration skipped"),
        "the message again: {err}"
    );
    assert_eq!(first, second, "the same report");
    let (_, _, err) = run(&["--per-access"]);
    assert!(!err.contains(reused), "another argument: {err}");
    std::fs::write(&src, format!("\n{body}\nint broken(;\n")).unwrap();
    let (_, moved, err) = run(&[]);
    assert!(!err.contains(reused), "a changed unit: {err}");
    assert_ne!(first, moved, "the warnings' lines moved");
}

/// A re-run whose saved findings still hold loads no summary of a reused collapsed SCC (its
/// shared set is rebuilt only for a reader); one that pairs again rebuilds it and reports what
/// a cold run does.
#[test]
fn a_reused_collapsed_scc_is_rebuilt_only_when_read() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let src = dir.path().join("prog.c");
    let body = std::fs::read_to_string(fixture("collapsed_scc.c")).unwrap();
    // `tally` reaches no collapsed SCC; editing its constant changes no summary.
    let with = |k: u32| {
        let tally = format!("static int tally(int x) {{ return x + {k}; }}\n\n");
        let main = format!("{tally}int main(void)\n{{\n    tally(1);\n");
        std::fs::write(&src, body.replace("int main(void)\n{\n", &main)).unwrap();
    };
    let run = |cache_args: &[&str], extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_relay"))
            .args(["analyze", "--collapse-scc", "2", "--format", "json"])
            .args(cache_args)
            .arg(&src)
            .args(extra)
            .output()
            .expect("relay runs");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.stdout, err)
    };
    let cached = ["--cache", cache.to_str().unwrap()];
    with(1);
    let (_, err) = run(&cached, &[]);
    assert!(err.contains("0 reused from the cache"), "cold: {err}");
    with(2);
    let (_, err) = run(&cached, &[]);
    assert!(err.contains("warnings: reused from the cache"), "{err}");
    assert!(
        err.contains("(0 summaries loaded)"),
        "no summary read: {err}"
    );
    // Pairing again (another alias option) reads the set: rebuilt, as a cold run has it.
    let (warm, err) = run(&cached, &["--no-type-alias"]);
    assert!(!err.contains("warnings: reused"), "{err}");
    let (cold, _) = run(&["--no-cache"], &["--no-type-alias"]);
    let strip = |out: &[u8]| {
        let mut v: serde_json::Value = serde_json::from_slice(out).unwrap();
        v["stats"]["times"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&warm), strip(&cold));
    // `walker`, which calls into the SCC, edited: analysed again, it loads the summaries of
    // `walk_a` and `walk_b`, which refer to the set, rebuilt first.
    let edited = std::fs::read_to_string(&src)
        .unwrap()
        .replace("walk_a(8);", "walk_a(8); walk_b(3);");
    std::fs::write(&src, edited).unwrap();
    let (warm, err) = run(&cached, &[]);
    assert!(!err.contains("summaries: 0 SCC(s) analysed"), "{err}");
    let (cold, _) = run(&["--no-cache"], &[]);
    assert_eq!(strip(&warm), strip(&cold));
}

/// Three collapsed SCCs, each calling the one below: a re-analysed caller of the top one
/// rebuilds all three sets, each before the sets that refer to it (no entry found corrupt),
/// and reports what a cold run does.
#[test]
fn stacked_collapsed_sccs_are_rebuilt_callees_first() {
    const PROGRAM: &str = "#include <pthread.h>
static int xa, xb, xc;
static void a2(int n);
static void a1(int n) { xa++; if (n) a2(n - 1); }
static void a2(int n) { xa--; if (n) a1(n - 1); }
static void b2(int n);
static void b1(int n) { xb++; a1(n); if (n) b2(n - 1); }
static void b2(int n) { xb--; if (n) b1(n - 1); }
static void c2(int n);
static void c1(int n) { xc++; b1(n); if (n) c2(n - 1); }
static void c2(int n) { xc--; if (n) c1(n - 1); }
static void *walker(void *arg) { (void)arg; c1(3); return 0; }
int main(void)
{
    pthread_t t1, t2;
    pthread_create(&t1, 0, walker, 0);
    pthread_create(&t2, 0, walker, 0);
    return 0;
}
";
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("cache");
    let src = dir.path().join("prog.c");
    let run = |cached: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_relay"));
        cmd.args(["analyze", "--collapse-scc", "2", "--format", "json"]);
        match cached {
            true => cmd.arg("--cache").arg(&cache),
            false => cmd.arg("--no-cache"),
        };
        let out = cmd.arg(&src).output().expect("relay runs");
        let mut report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["stats"]["times"] = serde_json::Value::Null;
        (report, String::from_utf8_lossy(&out.stderr).into_owned())
    };
    std::fs::write(&src, PROGRAM).unwrap();
    let (_, err) = run(true);
    assert!(err.contains("0 reused from the cache"), "cold: {err}");
    std::fs::write(
        &src,
        PROGRAM.replace("c1(3); return", "c1(3); c2(1); return"),
    )
    .unwrap();
    let (warm, err) = run(true);
    assert!(!err.contains("summaries: 0 SCC(s) analysed"), "{err}");
    assert!(!err.contains("corrupt"), "{err}");
    assert_eq!(warm, run(false).0);
}
