//! The on-disk cache and the translation-unit cache: cold and warm builds link the same program,
//! edits re-parse exactly the edited units, corrupt or foreign entries are reported and
//! recomputed, and concurrent writers (threads and processes) share one cache directory.

mod common;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use relay::cache::{self, tu, Store, HEADER_LEN};
use relay::driver::{self, Build, BuildOptions};
use relay::frontend::input::Input;
use relay::ir::TypeId;
use relay::link::Program;

/// A unit with a syntax error (one skipped declaration) around good ones.
const BROKEN: &str = "int before;\nint f( { return 1; }\nint after(int x) { return x + before; }\n";
/// The same `static inline` texts in two units: the linker keeps one copy of each. shared_b's
/// copies are skipped on a warm load: `twice` is called, `thrice` declared ahead and its
/// address kept in a table, `unused` named by nothing else of shared_b.
const SHARED_A: &str = "static inline int twice(int v) { return v * 2; }\n\
                        static inline int thrice(int v) { return v * 3; }\n\
                        static inline int unused(int v) { return v + 1; }\n\
                        enum color { RED, GREEN };\n\
                        struct pt { int x, y; };\n\
                        int use_a(struct pt *p) { static int calls; calls++; return twice(p->x) + RED; }\n";
const SHARED_B: &str = "static inline int thrice(int v);\n\
                        static int (*const ops[])(int) = { thrice };\n\
                        static inline int twice(int v) { return v * 2; }\n\
                        static inline int thrice(int v) { return v * 3; }\n\
                        static inline int unused(int v) { return v + 1; }\n\
                        struct pt { int x, y; };\n\
                        int use_b(struct pt *p) { return twice(p->y) + ops[0](p->x); }\n\
                        int main(void) { struct pt p = {1, 2}; return use_a(&p) + use_b(&p); }\n\
                        int use_a(struct pt *p);\n";

/// A directory of `.i` inputs: the parse fixtures and the golden IR sources, preprocessed, and
/// the units above.
fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut sources = Vec::new();
    for sub in ["fixtures/parse", "tests/golden"] {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(sub);
        for e in fs::read_dir(&root).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "c") {
                sources.push(p);
            }
        }
    }
    sources.sort();
    let mut out = Vec::new();
    for (i, src) in sources.iter().enumerate() {
        let stem = src.file_stem().unwrap().to_string_lossy();
        let path = dir.join(format!("{i:03}-{stem}.i"));
        fs::write(&path, common::preprocess(src)).unwrap();
        out.push(path);
    }
    for (name, text) in [
        ("broken", BROKEN),
        ("shared_a", SHARED_A),
        ("shared_b", SHARED_B),
    ] {
        let path = dir.join(format!("{name}.i"));
        fs::write(&path, text).unwrap();
        out.push(path);
    }
    out
}

fn build(paths: &[PathBuf], store: Option<&Store>, list_functions: bool) -> Build {
    let inputs: Vec<Input> = paths.iter().cloned().map(Input::Preprocessed).collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .stack_size(16 << 20)
        .build()
        .unwrap();
    // As `relay analyze` does: units found in the cache are loaded by their key, and skip
    // the definitions an earlier unit holds too.
    let statuses = store.map(|s| cache::file_status::FileStatuses::load(s, true));
    let probed = store
        .zip(statuses.as_ref())
        .map_or_else(Vec::new, |(s, st)| {
            driver::probe(&inputs, &pool, s, st, false)
        });
    let options = BuildOptions {
        list_functions,
        syntax_only: false,
        cache: store,
        progress: false,
        probed: &probed,
        file_status: statuses.as_ref(),
    };
    driver::build(&inputs, &pool, options)
}

/// Everything a build produced, as text: the units' reports, and the linked program (types,
/// records, globals, functions with their bodies, lowering diagnostics, link statistics) printed
/// by name, so that programs whose names were interned in different orders compare equal.
fn describe(b: &Build) -> String {
    let mut s = String::new();
    for u in &b.units {
        writeln!(
            s,
            "unit {} bytes={} decls={} defs={} load={:?}",
            u.tu, u.bytes, u.external_decls, u.function_definitions, u.load_error
        )
        .unwrap();
        for e in &u.parse_errors {
            writeln!(s, "  error {e}").unwrap();
        }
        for f in &u.functions {
            writeln!(s, "  function {} at {}", f.name, f.location).unwrap();
        }
    }
    s + &describe_program(&b.program)
}

fn describe_program(p: &Program) -> String {
    let pr = p.printer();
    let mut s = String::new();
    for i in 0..p.types.len() {
        writeln!(s, "type {i}: {}", pr.ty(TypeId(i as u32))).unwrap();
    }
    for (i, r) in p.types.records().iter().enumerate() {
        let tag = r.tag.map(|t| p.names.get(t)).unwrap_or("-");
        write!(s, "record {i}: {:?} {tag} complete={}", r.kind, r.complete).unwrap();
        for f in &r.fields {
            write!(s, " {}:{}", p.names.get(f.name), pr.ty(f.ty)).unwrap();
        }
        writeln!(s).unwrap();
    }
    for g in &p.globals {
        write!(s, "unit {}: {}", g.unit, pr.global(&g.global)).unwrap();
    }
    for f in &p.functions {
        let name = p.names.get(f.name);
        writeln!(
            s,
            "fn {name} unit={} {:?} {}",
            f.unit,
            f.linkage,
            pr.ty(f.ty)
        )
        .unwrap();
        if let Some(body) = &f.body {
            s += &pr.function(body);
        }
    }
    for u in &p.units {
        for d in &u.diagnostics {
            writeln!(s, "{}: {}: {}", u.name, pr.loc(d.loc), d.message).unwrap();
        }
    }
    writeln!(s, "files {:?}\nstrings {:?}", p.files, p.strings).unwrap();
    writeln!(
        s,
        "stats units={} definitions={} defined={} duplicates={} externals={}",
        p.stats.units,
        p.stats.definitions,
        p.stats.functions_defined,
        p.stats.duplicates_removed,
        p.stats.externals
    )
    .unwrap();
    s
}

fn entries(store: &Store) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for shard in fs::read_dir(store.dir().join(tu::KIND)).unwrap() {
        for e in fs::read_dir(shard.unwrap().path()).unwrap() {
            out.push(e.unwrap().path());
        }
    }
    out.sort();
    out
}

#[test]
fn warm_build_links_the_same_program_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let paths = inputs(dir.path());
    let n = paths.len();
    let store = Store::open(dir.path().join("cache")).unwrap();

    let reference = build(&paths, None, true);
    assert_eq!((reference.units_parsed, reference.units_reused), (n, 0));
    let expected = describe(&reference);
    assert!(
        expected.contains("broken.i:2:"),
        "the broken unit reports its error"
    );
    assert!(reference.program.stats.duplicates_removed >= 1);

    let cold = build(&paths, Some(&store), true);
    assert_eq!((cold.units_parsed, cold.units_reused), (n, 0));
    assert_eq!(
        describe(&cold),
        expected,
        "a cold cached build links the same program"
    );
    assert_eq!(entries(&store).len(), n);

    let warm = build(&paths, Some(&store), true);
    assert_eq!((warm.units_parsed, warm.units_reused), (0, n));
    assert!(warm.units.iter().all(|u| u.from_cache));
    let skipped: Vec<&str> = warm
        .units
        .iter()
        .filter(|u| u.copies_skipped > 0)
        .map(|u| u.tu.as_str())
        .collect();
    assert!(
        skipped.iter().any(|u| u.ends_with("shared_b.i")),
        "shared_b's copy of `twice` is not loaded: shared_a holds it ({skipped:?})"
    );
    let shared_b = warm.units.iter().find(|u| u.tu.ends_with("shared_b.i"));
    assert_eq!(shared_b.map(|u| u.copies_skipped), Some(3));
    assert_eq!(
        describe(&warm),
        expected,
        "a warm build links the same program"
    );

    // Without the function list, the same cached entries serve and the list stays empty.
    let quiet = build(&paths, Some(&store), false);
    assert_eq!(quiet.units_reused, n);
    assert!(quiet.units.iter().all(|u| u.functions.is_empty()));
    assert_eq!(
        describe_program(&quiet.program),
        describe_program(&reference.program)
    );
    assert_eq!(store.corrupt_entries(), 0);
}

#[test]
fn editing_one_unit_reparses_only_that_unit() {
    let dir = tempfile::tempdir().unwrap();
    let paths = inputs(dir.path());
    let n = paths.len();
    let store = Store::open(dir.path().join("cache")).unwrap();
    build(&paths, Some(&store), false);

    let edited = paths.iter().find(|p| p.ends_with("shared_a.i")).unwrap();
    fs::write(edited, SHARED_A.replace("calls++", "calls += 2")).unwrap();
    let after = build(&paths, Some(&store), false);
    assert_eq!((after.units_parsed, after.units_reused), (1, n - 1));
    let reparsed: Vec<&str> = after
        .units
        .iter()
        .filter(|u| !u.from_cache)
        .map(|u| u.tu.as_str())
        .collect();
    assert_eq!(reparsed, [edited.display().to_string()]);
    let fresh = build(&paths, None, false);
    assert_eq!(describe(&after), describe(&fresh));
    assert!(describe(&after).contains("+ 2"));
    assert_eq!(
        entries(&store).len(),
        n + 1,
        "the old entry stays until cleared"
    );
}

#[test]
fn corrupt_and_foreign_entries_are_recomputed() {
    let dir = tempfile::tempdir().unwrap();
    let paths = inputs(dir.path());
    let n = paths.len();
    let store = Store::open(dir.path().join("cache")).unwrap();
    let expected = describe(&build(&paths, Some(&store), false));
    let files = entries(&store);

    // One flipped byte of a unit's head (what every load reads: its length, checksum, then
    // the head), one truncation, one header of another format version.
    let mut bytes = fs::read(&files[0]).unwrap();
    bytes[HEADER_LEN + 24 + 1] ^= 0x40;
    fs::write(&files[0], &bytes).unwrap();
    let bytes = fs::read(&files[1]).unwrap();
    fs::write(&files[1], &bytes[..bytes.len() / 2]).unwrap();
    let mut bytes = fs::read(&files[2]).unwrap();
    bytes[4] = bytes[4].wrapping_add(1);
    fs::write(&files[2], &bytes).unwrap();

    let again = build(&paths, Some(&store), false);
    assert_eq!((again.units_parsed, again.units_reused), (3, n - 3));
    assert_eq!(store.corrupt_entries(), 3);
    assert_eq!(describe(&again), expected);

    // The recomputed entries were written back whole.
    let fresh = Store::open(store.dir()).unwrap();
    let third = build(&paths, Some(&fresh), false);
    assert_eq!(third.units_reused, n);
    assert_eq!(fresh.corrupt_entries(), 0);
    for f in entries(&fresh) {
        assert!(fs::metadata(&f).unwrap().len() > HEADER_LEN as u64);
    }
}

#[test]
fn threads_sharing_a_cache_both_succeed() {
    let dir = tempfile::tempdir().unwrap();
    let paths = inputs(dir.path());
    let expected = describe(&build(&paths, None, false));
    let store = Store::open(dir.path().join("cache")).unwrap();
    let results: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|_| s.spawn(|| describe(&build(&paths, Some(&store), false))))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(results.iter().all(|r| *r == expected));
    assert_eq!(store.corrupt_entries(), 0);
    assert_eq!(build(&paths, Some(&store), false).units_parsed, 0);
    assert_eq!(store.stats().unwrap().temp_files, 0);
}

fn relay(args: &[&str], cwd: &Path) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_relay"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap()
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// `relay parse --format json` without the fields that legitimately differ between runs.
fn parse_json(o: &std::process::Output) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["seconds", "units_parsed", "units_reused"] {
        v.as_object_mut().unwrap().remove(k);
    }
    v
}

#[test]
fn relay_parse_and_relay_cache_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let paths = inputs(dir.path());
    let n = paths.len();
    let mut args = vec!["parse", "-j2", "--list-functions", "--format", "json"];
    let owned: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    args.extend(owned.iter().map(String::as_str));

    let reference = relay(&[&args[..], &["--no-cache"]].concat(), dir.path());
    assert_eq!(
        reference.status.code(),
        Some(1),
        "the broken unit is a finding"
    );
    assert!(
        !dir.path().join(".relay-cache").exists(),
        "--no-cache writes nothing"
    );

    // Two processes fill one (default) cache at the same time.
    let children: Vec<_> = (0..2)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_relay"))
                .args(&args)
                .current_dir(dir.path())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1));
        assert!(!String::from_utf8_lossy(&out.stderr).contains("corrupt"));
        assert_eq!(parse_json(&out), parse_json(&reference));
    }
    let warm = relay(&args, dir.path());
    let json: serde_json::Value = serde_json::from_slice(&warm.stdout).unwrap();
    assert_eq!(json["units_reused"], n);
    assert_eq!(json["units_parsed"], 0);
    assert_eq!(parse_json(&warm), parse_json(&reference));

    let stats = relay(&["cache", "stats"], dir.path());
    assert!(stats.status.success());
    let text = stdout(&stats);
    let row = |kind: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(kind))
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
    };
    assert_eq!(row("tu"), Some(n.to_string()), "{text}");
    assert_eq!(row("tu-copies"), Some(n.to_string()), "{text}");
    assert!(text.lines().any(|l| l.starts_with("total")), "{text}");

    // A damaged entry is reported once, with the reason, and recomputed.
    let store = Store::open(dir.path().join(".relay-cache")).unwrap();
    let victim = entries(&store).remove(0);
    let mut bytes = fs::read(&victim).unwrap();
    // In the unit's head (past its length and checksum), which every load checks.
    bytes[HEADER_LEN + 24 + 1] ^= 1;
    fs::write(&victim, bytes).unwrap();
    let text_args = [
        &["parse", "-j2"][..],
        &owned.iter().map(String::as_str).collect::<Vec<_>>(),
    ]
    .concat();
    let out = relay(&text_args, dir.path());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("is corrupt (checksum mismatch); recomputing")
            .count(),
        1,
        "{err}"
    );
    assert!(stdout(&out).contains(&format!("units reused from cache: {} (1 parsed)", n - 1)));

    let cleared = relay(&["cache", "clear"], dir.path());
    assert!(
        // Each unit is two entries: its IR and its list of `static` definitions; then the
        // list of the runs' units (one: the same units each time) and the collection's state.
        stdout(&cleared).starts_with(&format!("removed {} entries", 2 * n + 2)),
        "{}",
        stdout(&cleared)
    );
    let json = relay(&["cache", "stats", "--format", "json"], dir.path());
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["entries"], 0);

    // An explicit directory that is not a cache is refused, not cleared.
    fs::write(dir.path().join("notes.txt"), "keep me").unwrap();
    let refused = relay(&["cache", "clear", "--cache", "."], dir.path());
    assert_eq!(refused.status.code(), Some(2));
    assert!(dir.path().join("notes.txt").exists());
}

/// A re-run takes the key recorded with an input's unchanged file status instead of hashing
/// the file; an edit that keeps the size and sets the modification time back still changes the
/// file's change time, and the unit is parsed again.
#[test]
fn an_input_edited_behind_its_modification_time_is_parsed_again() {
    let dir = tempfile::tempdir().unwrap();
    let then = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        let f = fs::File::options().write(true).open(&path).unwrap();
        f.set_times(fs::FileTimes::new().set_modified(then))
            .unwrap();
    };
    write(
        "a.i",
        "int shared; void *worker(void *p) { shared = 1; return p; }\n",
    );
    write(
        "b.i",
        "int other; int main(void) { other = 2; return 0; }\n",
    );
    // Statuses are recorded only once the files have settled (their change time is now).
    std::thread::sleep(cache::file_status::SETTLED + std::time::Duration::from_millis(200));
    let analyze = |extra: &[&str]| {
        let out = relay(
            &[&["analyze", "-j2", "a.i", "b.i"][..], extra].concat(),
            dir.path(),
        );
        assert!(out.status.code().unwrap_or(2) <= 1, "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let first = analyze(&[]);
    assert!(
        first.contains("front end: 2 unit(s) parsed, 0 reused"),
        "{first}"
    );
    let store = Store::open(dir.path().join(".relay-cache")).unwrap();
    let recorded = store.dir().join(cache::file_status::KIND);
    assert!(recorded.exists(), "the statuses are recorded");

    std::thread::sleep(std::time::Duration::from_millis(50));
    write(
        "a.i",
        "int shared; void *worker(void *p) { shared = 3; return p; }\n",
    );
    let edited = analyze(&[]);
    assert!(
        edited.contains("front end: 1 unit(s) parsed, 1 reused"),
        "{edited}"
    );
    let rehashed = analyze(&["--rehash-inputs"]);
    assert!(
        !rehashed.contains("unit(s) parsed"),
        "nothing changed: {rehashed}"
    );
}
