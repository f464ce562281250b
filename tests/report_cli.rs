//! `relay report` end to end: the report of a saved run equals the report `relay analyze`
//! makes with the same options, byte for byte; errors when there is no usable saved run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> String {
    let p: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/race")
        .join(name);
    p.to_str().unwrap().to_string()
}

/// `relay COMMAND -q --cache CACHE ARGS…`.
fn relay(command: &str, cache: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .arg(command)
        .arg("-q")
        .arg("--cache")
        .arg(cache)
        .args(args)
        .output()
        .expect("relay runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Runs `relay analyze FIXTURE` with filters off into a fresh cache, then checks that
/// `relay report OPTS` and `relay analyze FIXTURE OPTS` (into another cache) agree on the
/// output and the exit code for each option set.
fn report_equals_analyze(fixture_name: &str, option_sets: &[&[&str]]) {
    let f = fixture(fixture_name);
    let saved = tempfile::tempdir().unwrap();
    let out = relay("analyze", saved.path(), &[&f]);
    assert!(out.status.code() == Some(0) || out.status.code() == Some(1));
    for opts in option_sets {
        let fresh = tempfile::tempdir().unwrap();
        let mut args = vec![f.as_str()];
        args.extend_from_slice(opts);
        let direct = relay("analyze", fresh.path(), &args);
        let again = relay("report", saved.path(), opts);
        assert_eq!(
            again.status.code(),
            direct.status.code(),
            "{opts:?}: {}",
            String::from_utf8_lossy(&again.stderr)
        );
        let (a, b) = (stdout(&direct), stdout(&again));
        if opts.contains(&"json") || opts.contains(&"sarif") {
            // The saved run keeps the analysing run's stage times, and the two analyses are
            // two processes: only the times may differ.
            let strip = |s: &str| {
                let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
                let stats = match v.get_mut("runs") {
                    Some(runs) => &mut runs[0]["properties"]["stats"],
                    None => &mut v["stats"],
                };
                stats["times"] = serde_json::Value::Null;
                v
            };
            assert_eq!(strip(&a), strip(&b), "{opts:?}");
        } else {
            assert_eq!(a, b, "{opts:?}");
        }
    }
}

#[test]
fn report_of_a_saved_run_equals_a_new_analysis() {
    report_equals_analyze(
        "unlikely_aliasing_large_repr.c",
        &[
            &[],
            &["--filter", "all=on"],
            &["--filter", "all=on", "--format", "json"],
            &[
                "--filter",
                "large-repr=on",
                "--show-filtered",
                "--format",
                "json",
            ],
            &["--group", "object", "--format", "json"],
            &[
                "--filter",
                "large-repr=on",
                "--filter-k",
                "3",
                "--format",
                "sarif",
            ],
        ],
    );
    report_equals_analyze(
        "thread_pool.c",
        &[
            &["--filter", "bootup-thread=on", "--show-filtered"],
            &[
                "--bootup",
                "worker",
                "--filter",
                "bootup-thread=on",
                "--format",
                "json",
            ],
            &[
                "--group",
                "object",
                "--filter",
                "same-entry=on",
                "--show-filtered",
            ],
        ],
    );
}

#[test]
fn analyze_and_report_of_one_run_are_byte_identical() {
    let f = fixture("relay_figure13.c");
    let cache = tempfile::tempdir().unwrap();
    for format in ["text", "json", "sarif"] {
        let opts = ["--filter", "all=on", "--show-filtered", "--format", format];
        let mut args = vec![f.as_str()];
        args.extend_from_slice(&opts);
        let direct = relay("analyze", cache.path(), &args);
        let again = relay("report", cache.path(), &opts);
        assert_eq!(again.status.code(), direct.status.code(), "{format}");
        assert_eq!(stdout(&again), stdout(&direct), "{format}");
    }
}

#[test]
fn baseline_round_trip_through_report() {
    let f = fixture("thread_pool.c");
    let cache = tempfile::tempdir().unwrap();
    let base = cache.path().join("baseline.json");
    let base = base.to_str().unwrap();
    let out = relay("analyze", cache.path(), &[&f]);
    assert_eq!(out.status.code(), Some(1));
    let out = relay("report", cache.path(), &["--write-baseline", base]);
    assert_eq!(out.status.code(), Some(1));
    let out = relay(
        "report",
        cache.path(),
        &["--baseline", base, "--format", "json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let rep: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rep["stats"]["warnings_reported"], 0);
    assert!(rep["stats"]["baseline_suppressed"].as_u64().unwrap() > 0);
    // The baseline applies to a new analysis the same way.
    let out = relay("analyze", cache.path(), &[&f, "--baseline", base]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn no_saved_run_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing-here");
    let out = relay("report", &missing, &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no saved analysis in") && err.contains("run `relay analyze` first"),
        "{err}"
    );
    assert!(!missing.exists(), "report must not create the cache");

    // A cache with parsed units but no saved run (`relay parse` fills it).
    let cache = dir.path().join("cache");
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["parse", "--cache"])
        .arg(&cache)
        .arg(fixture("thread_pool.c"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let out = relay("report", &cache, &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no saved analysis in"));

    // Bad options fail before the cache is read.
    let out = relay("report", &cache, &["--filter", "bogus=on"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bogus"));
}

#[test]
fn a_corrupt_saved_run_is_an_error_not_a_panic() {
    let cache = tempfile::tempdir().unwrap();
    let out = relay("analyze", cache.path(), &[&fixture("thread_pool.c")]);
    assert_eq!(out.status.code(), Some(1));
    let entry = saved_entry(cache.path());

    // A flipped payload byte: the store's checksum catches it.
    let mut bytes = std::fs::read(&entry).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(&entry, &bytes).unwrap();
    let out = relay("report", cache.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is corrupt") && err.contains("relay analyze"),
        "{err}"
    );
    assert!(!err.contains("panicked"), "{err}");

    // Truncated to the header.
    std::fs::write(&entry, &bytes[..40]).unwrap();
    let out = relay("report", cache.path(), &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is corrupt"));
}

/// The one saved-run entry in a cache directory.
fn saved_entry(cache: &Path) -> PathBuf {
    let mut files = Vec::new();
    for sub in std::fs::read_dir(cache.join("run")).unwrap() {
        for f in std::fs::read_dir(sub.unwrap().path()).unwrap() {
            files.push(f.unwrap().path());
        }
    }
    assert_eq!(files.len(), 1, "{files:?}");
    files.pop().unwrap()
}

#[test]
fn the_run_is_described_on_stderr() {
    let cache = tempfile::tempdir().unwrap();
    let f = fixture("thread_pool.c");
    relay("analyze", cache.path(), &[&f, "--entry-roots"]);
    let out = Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(["report", "--cache"])
        .arg(cache.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("report of the analysis of 1 unit(s) run at ")
            && err.contains("thread_pool.c --entry-roots"),
        "{err}"
    );
    assert!(err.contains("run table"), "{err}");
}
