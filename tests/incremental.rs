//! The summaries cache (src/cache/summaries.rs): reused summaries equal freshly computed ones,
//! an edit re-analyses exactly the edited function and the callers its summary change reaches
//! (early cut-off stops the rest), corrupt entries are recomputed, and concurrent runs sharing a
//! cache directory both succeed.

mod common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use relay::cache::summaries::SummaryCacheStats;
use relay::cache::Store;
use relay::frontend::lower::lower_unit;
use relay::ir::names::Names;
use relay::ir::FuncId;
use relay::link::{Linker, Program};
use relay::models::Models;
use relay::pipeline::{self, KeepSummaries, Options};
use relay::summary::Summaries;

/// Lowers and links a file, with `shift` unrelated names interned first: name ids then differ
/// from another run's, as they do between runs that intern units in parallel.
fn program(path: &Path, shift: u32) -> Program {
    let text = common::preprocess(path);
    let names = Names::new();
    for i in 0..shift {
        names.intern(&format!("__shift_{i}"));
    }
    let lowered = lower_unit(path.display().to_string(), &text, &names);
    assert!(
        lowered.parse_errors.is_empty(),
        "{:?}",
        lowered.parse_errors
    );
    let mut linker = Linker::new(Arc::new(names));
    linker.add(0, lowered.unit);
    linker.finish()
}

fn summaries(p: &Program, store: Option<&Store>) -> Summaries {
    summaries_and_cache(p, store).0
}

/// The summaries and what the summaries cache did.
fn summaries_and_cache(
    p: &Program,
    store: Option<&Store>,
) -> (Summaries, Option<SummaryCacheStats>) {
    let options = Options {
        schedule: relay::schedule::Options {
            jobs: 2,
            ..Options::default().schedule
        },
        ..Options::default()
    };
    let s = pipeline::summarize_cached(p, &Models::builtin(), &options, store);
    (s.summaries, s.cache)
}

fn analysed(s: &Summaries) -> usize {
    s.schedule.stats.sccs_analyzed - s.schedule.stats.sccs_reused
}

fn assert_same(p: &Program, a: &Summaries, b: &Summaries, what: &str) {
    for i in 0..p.functions.len() {
        let f = FuncId(i as u32);
        assert_eq!(a.get(f), b.get(f), "{what}: {}", p.function_name(f));
    }
}

#[test]
fn reused_summaries_equal_computed_ones_on_every_fixture() {
    for path in common::c_fixtures("race") {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let (cold, cache) = summaries_and_cache(&program(&path, 0), Some(&store));
        assert_eq!(analysed(&cold), cold.schedule.stats.sccs_analyzed);
        let cache = cache.unwrap();
        // Every summary has a portable form (no fixture reaches a collapsed SCC by default).
        assert_eq!(cache.unportable, 0, "{}", path.display());
        let stored = cache.stored;
        let p = program(&path, 37);
        let warm = summaries(&p, Some(&store));
        let fresh = summaries(&p, None);
        assert_eq!(
            warm.schedule.stats.sccs_reused,
            stored,
            "{}: every stored SCC is reused",
            path.display()
        );
        assert_eq!(
            analysed(&warm),
            cache.unportable,
            "{}: only unportable SCCs are re-analysed",
            path.display()
        );
        assert_same(&p, &warm, &fresh, &path.display().to_string());
    }
}

const PROGRAM: &str = r#"#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int x, y, z;
void leaf(void) { x = 1; }
void mid(void) { leaf(); }
void top(void) { mid(); }
void other(void) { pthread_mutex_lock(&m); y = 1; pthread_mutex_unlock(&m); }
void unrelated(void) { z = 1; }
void *thr(void *a) { top(); other(); unrelated(); return a; }
int main(void) {
    pthread_t t1, t2;
    pthread_create(&t1, 0, thr, 0);
    pthread_create(&t2, 0, thr, 0);
    return 0;
}
"#;

/// `leaf` and every function that (transitively) calls it.
fn leaf_and_callers(p: &Program) -> BTreeSet<String> {
    ["leaf", "mid", "top", "thr"]
        .iter()
        .map(|s| {
            assert!(
                (0..p.functions.len()).any(|i| p.function_name(FuncId(i as u32)) == *s),
                "{s} exists"
            );
            s.to_string()
        })
        .collect()
}

/// A directory for the program and an empty cache (keep the directories alive).
fn fresh() -> (tempfile::TempDir, tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    (dir, cache, store)
}

/// Writes `text`, analyses it with `store`, checks the summaries are those of a run without
/// the cache, and that the run did not have to repeat after finding a summary it could not
/// use (what keys miss, loading finds: the run is then right but costs twice).
fn run_edit(dir: &Path, store: &Store, text: &str) -> (Program, Summaries) {
    let (p, s, cache) = run_edit_with_stats(dir, store, text);
    assert_eq!(cache.lost_before, 0, "a summary could not be used");
    (p, s)
}

fn run_edit_with_stats(
    dir: &Path,
    store: &Store,
    text: &str,
) -> (Program, Summaries, SummaryCacheStats) {
    let file = dir.join("prog.c");
    std::fs::write(&file, text).unwrap();
    let p = program(&file, 0);
    let (s, cache) = summaries_and_cache(&p, Some(store));
    let fresh = summaries(&p, None);
    assert_same(&p, &s, &fresh, "after the edit");
    (p, s, cache.expect("the summaries cache is used"))
}

#[test]
fn an_edit_reanalyses_the_function_and_only_the_callers_it_changes() {
    let (dir, _cache, store) = fresh();
    let (p, cold) = run_edit(dir.path(), &store, PROGRAM);
    let all = cold.schedule.stats.sccs_analyzed;
    assert_eq!(analysed(&cold), all);

    // Same facts, same line: leaf is re-analysed, its summary is unchanged, nothing else is.
    let same = PROGRAM.replace("x = 1;", "x = 2;");
    let (_, s) = run_edit(dir.path(), &store, &same);
    assert_eq!(analysed(&s), 1, "only leaf");

    // Leaf now locks: its summary changes, so do its callers' (mid, top, thr); other,
    // unrelated and main are reused.
    let locked = PROGRAM.replace(
        "x = 1;",
        "pthread_mutex_lock(&m); x = 1; pthread_mutex_unlock(&m);",
    );
    let (_, s) = run_edit(dir.path(), &store, &locked);
    let expected = leaf_and_callers(&p).len();
    assert_eq!(analysed(&s), expected, "leaf, mid, top, thr");
    assert_eq!(s.schedule.stats.sccs_reused, all - expected);

    // New lines move every function below them: their bodies and summaries are stored
    // relative to their own location, so nothing but the edited function is re-analysed (and
    // the loaded summaries carry the new locations: `run_edit` compares with a fresh run).
    let moved = PROGRAM.replace("int x, y, z;", "int x, y, z;\n\n");
    let (_, s) = run_edit(dir.path(), &store, &moved);
    assert_eq!(analysed(&s), 0, "a shift alone re-analyses nothing");
    let grown = PROGRAM.replace("x = 1; }", "x = 1;\n}");
    let (_, s) = run_edit(dir.path(), &store, &grown);
    assert_eq!(analysed(&s), 1, "only leaf, whose own text changed");
    // A line added inside leaf before its access moves the access, which its callers'
    // summaries name: they store it by its rank among leaf's own locations, so they are
    // reused (and `run_edit` checks they name the new line).
    let inside = PROGRAM.replace("void leaf(void) { x = 1; }", "void leaf(void) {\n x = 1; }");
    let (_, s) = run_edit(dir.path(), &store, &inside);
    assert_eq!(analysed(&s), 1, "only leaf, whose access moved");
    // Back to the original text: everything comes from the cache.
    let (_, s) = run_edit(dir.path(), &store, PROGRAM);
    assert_eq!(analysed(&s), 0);
}

/// `PROGRAM` with `definition` (of function `name`, called after `unrelated()`) three lines
/// below `unrelated`, analysed cold into a new cache; then a line added above it must
/// re-analyse nothing. Returns the program's text, and its directory, cache and store for
/// further edits.
fn a_new_line_reanalyses_nothing(
    definition: &str,
    name: &str,
) -> (String, tempfile::TempDir, tempfile::TempDir, Store) {
    let program = PROGRAM.replace(
        "void unrelated(void) { z = 1; }",
        &format!("void unrelated(void) {{ z = 1; }}\n\n\n{definition}"),
    );
    let program = program.replace(
        "unrelated(); return a;",
        &format!("unrelated(); {name}(); return a;"),
    );
    let (dir, cache, store) = fresh();
    let (p, cold) = run_edit(dir.path(), &store, &program);
    assert!((0..p.functions.len()).any(|i| p.function_name(FuncId(i as u32)) == name));
    assert_eq!(analysed(&cold), cold.schedule.stats.sccs_analyzed);
    let moved = program.replace("int x, y, z;", "int x, y, z;\n\n");
    let (_, s) = run_edit(dir.path(), &store, &moved);
    assert_eq!(analysed(&s), 0, "`{name}`'s constant moved with its line");
    (program, dir, cache, store)
}

#[test]
fn line_numbers_in_asm_inputs_do_not_change_a_body() {
    // The kernel's `WARN_ON` passes `__LINE__` to an `asm` as an `"i"` input: a line added
    // above `warns` changes that constant, which no analysis reads. (`warns` sits on line 11,
    // then 13: a `__LINE__` that gains a digit moves the columns after it.)
    let (program, dir, _cache, store) = a_new_line_reanalyses_nothing(
        "void warns(void) { asm volatile(\"# %c0\" : : \"i\" (__LINE__)); z = 2; }",
        "warns",
    );
    // Any other constant is read: `z = 3` re-analyses `warns`.
    let (_, s) = run_edit(dir.path(), &store, &program.replace("z = 2;", "z = 3;"));
    assert_eq!(analysed(&s), 1, "warns");
}

#[test]
fn line_numbers_in_call_arguments_do_not_change_a_body() {
    // SQLite's `SQLITE_CORRUPT_BKPT` is `sqlite3CorruptError(__LINE__)`: a line added above
    // `corrupt` changes that argument, of which the analyses read only that it is not zero.
    let (program, dir, _cache, store) = a_new_line_reanalyses_nothing(
        "int report(int line) { return line; }\n\
         int corrupt(void) { z = 2; return report(__LINE__); }",
        "corrupt",
    );
    // Zero is not any other constant: `report(0)` re-analyses `corrupt`, and its caller, since
    // `corrupt` now returns zero.
    let zero = program.replace("report(__LINE__)", "report(0)");
    let (_, s) = run_edit(dir.path(), &store, &zero);
    assert_eq!(analysed(&s), 2, "corrupt and its caller");
}

#[test]
fn a_function_moved_past_another_reanalyses_what_names_both() {
    // `both` names the write of x at two sites, ordered by location: reusing its summary
    // after `a` and `b` swap places would keep the old order. Its callees, sorted by id (the
    // order of the definitions), are in its key in that order, so it is analysed again; `a`
    // and `b` are not. `top` names both sites through `via_a` and `via_b`, whose order did
    // not change: its stored summary names `a` and `b` in their old order, which loading it
    // finds (the run then repeats without it).
    let text = "int x;\nvoid a(void);\nvoid b(void);\nvoid a(void) { x = 1; }\n\
                void b(void) { x = 2; }\nvoid both(void) { a(); b(); }\n\
                void via_a(void) { a(); }\nvoid via_b(void) { b(); }\n\
                void top(void) { via_a(); via_b(); }\n";
    let swapped = text.replace(
        "void a(void) { x = 1; }\nvoid b(void) { x = 2; }",
        "void b(void) { x = 2; }\nvoid a(void) { x = 1; }",
    );
    let (dir, _cache, store) = fresh();
    run_edit(dir.path(), &store, text);
    let (_, s, cache) = run_edit_with_stats(dir.path(), &store, &swapped);
    assert_eq!(cache.lost_before, 1, "top, found out of order");
    // The repeated attempt's figures: `top` only (`both` was stored by the first).
    assert_eq!(analysed(&s), 1, "{:?}", s.schedule.stats);
    assert!(
        s.schedule.stats.sccs_reused >= 2,
        "a and b: {:?}",
        s.schedule.stats
    );
}

#[test]
fn a_new_function_or_global_reanalyses_only_what_names_it() {
    // Adding a function and a global shifts the ids of everything defined after them;
    // summaries store ids by label, so only the edited function's SCC and its callers are
    // analysed again.
    let text = PROGRAM.replace(
        "void leaf(void) { x = 1; }",
        "void leaf(void) { x = 1; }\nint added_global;\nvoid added(void) { added_global = 1; }",
    );
    let (dir, _cache, store) = fresh();
    run_edit(dir.path(), &store, PROGRAM);
    let (_, s) = run_edit(dir.path(), &store, &text);
    assert_eq!(analysed(&s), 1, "added: {:?}", s.schedule.stats);
    let calls = text.replace(
        "void top(void) { mid(); }",
        "void top(void) { mid(); added(); }",
    );
    let (_, s) = run_edit(dir.path(), &store, &calls);
    assert_eq!(analysed(&s), 2, "top and thr: {:?}", s.schedule.stats);
    // Its address taken, the new global's points-to class is no longer trivial: the classes
    // change, but only `added` (its text) and its callers (their summaries) read them.
    let pointed = calls.replace(
        "void added(void) { added_global = 1; }",
        "int *added_pointer = &added_global;\nvoid added(void) { *added_pointer = 1; }",
    );
    let (_, s) = run_edit(dir.path(), &store, &pointed);
    assert_eq!(analysed(&s), 3, "added, top, thr: {:?}", s.schedule.stats);
}

/// A program of `definitions`, an empty `edited` (which edits replace), and a thread `thr`,
/// run by `main` too, that calls `calls` and then `edited`.
fn threaded(definitions: &str, calls: &str) -> String {
    format!(
        "#include <pthread.h>\n{definitions}void edited(void) {{ }}\n\
         void *thr(void *x) {{ {calls} edited(); return x; }}\n\
         int main(void) {{\n    pthread_t t;\n    pthread_create(&t, 0, thr, 0);\n    \
         thr(0);\n    return 0;\n}}\n"
    )
}

/// Three globals pointing to three objects; each `use_*` writes through one of them, and
/// `walk_*` does too, recursively: a recursive call rebinds a formal's target to its class's
/// representative, so a walker's summary names the class of the object it writes.
fn pointers() -> String {
    threaded(
        "int a, b, c;\nint *p = &a, *q = &b, *r = &c;\nvoid use_p(void) { *p = 1; }\n\
         void use_q(void) { *q = 1; }\nvoid use_r(void) { *r = 1; }\n\
         void walk_a(int *x, int n) { *x = 1; if (n) walk_a(x, n - 1); }\n\
         void walk_b(int *x, int n) { *x = 1; if (n) walk_b(x, n - 1); }\n",
        "use_p(); use_q(); use_r(); walk_a(&a, 2); walk_b(&b, 2);",
    )
}

#[test]
fn a_new_pointer_flow_reanalyses_what_reads_the_classes_it_merges() {
    let (dir, _cache, store) = fresh();
    let (_, cold) = run_edit(dir.path(), &store, &pointers());
    assert_eq!(analysed(&cold), 8, "{:?}", cold.schedule.stats);
    // `p = q` merges the classes of `a` and `b`, which takes the name of one of them (the
    // smallest hash of its members' names). `use_p` and `use_q` only write through `p` and
    // `q`: the class of `*p` follows from the path, and a stored summary does not hold it but
    // derives it again (`run_edit` checks the summaries are a cold run's), so they are
    // reused. The walker of the object whose class has another name now names that class
    // (its recursive call's representative) and is analysed again; the other is reused.
    // `edited` changed; `thr` calls all of them, as `main`. `edited` gets `body`.
    let merging = |body: &str, analysed_ones: &str, reused: &str| {
        let text = pointers().replace("void edited(void) { }", body);
        let (_, s) = run_edit(dir.path(), &store, &text);
        assert_eq!(analysed(&s), 4, "{analysed_ones}: {:?}", s.schedule.stats);
        assert_eq!(s.schedule.stats.sccs_reused, 4, "{reused}");
    };
    merging(
        "void edited(void) { p = q; }",
        "walk_a or walk_b, edited, thr, main",
        "use_p, use_q, use_r, walk_b or walk_a",
    );
    // Back: the classes split again. The walker analysed under the merged classes has one
    // entry (its key names no class), written then: it is analysed again, comes out as in the
    // cold run, and the rest is reused.
    let (_, s) = run_edit(dir.path(), &store, &pointers());
    assert_eq!(analysed(&s), 1, "walk_a or walk_b: {:?}", s.schedule.stats);
    // `r = &a` merges the classes of `c` and `a`: `a`'s walker is analysed again if the
    // merged class has `c`'s name, else nothing reads a renamed class.
    let text = pointers().replace("void edited(void) { }", "void edited(void) { r = &a; }");
    let (_, s) = run_edit(dir.path(), &store, &text);
    let n = analysed(&s);
    assert!(
        n == 3 || n == 4,
        "edited, thr, main, maybe walk_a: {:?}",
        s.schedule.stats
    );
}

#[test]
fn a_changed_declaration_reanalyses_what_names_it() {
    // `x` becomes atomic: `leaf`, whose body names it, is analysed again, and so is every
    // caller whose summary carries the write (a summary stores each global it names with a
    // hash of its declaration). `run_edit` checks the summaries equal a run without the cache.
    let (dir, _cache, store) = fresh();
    let (p, cold) = run_edit(dir.path(), &store, PROGRAM);
    let all = cold.schedule.stats.sccs_analyzed;
    let atomic = PROGRAM.replace("int x, y, z;", "_Atomic int x; int y, z;");
    let (_, s) = run_edit(dir.path(), &store, &atomic);
    assert!(
        analysed(&s) >= leaf_and_callers(&p).len(),
        "leaf, mid, top, thr: {:?}",
        s.schedule.stats
    );
    assert!(analysed(&s) < all, "not other or unrelated");
    // A struct's member changes type: `unrelated`, whose body names the record (the member it
    // writes), is analysed again, and `thr`, whose summary carries the write to `sv.a`, now of
    // a `long`; nothing else reads the record.
    let with_struct = PROGRAM
        .replace("int x, y, z;", "struct s { int a; } sv;\nint x, y, z;")
        .replace("z = 1; }", "z = 1; sv.a = 1; }");
    run_edit(dir.path(), &store, &with_struct);
    let changed = with_struct.replace("struct s { int a; }", "struct s { long a; }");
    let (_, s) = run_edit(dir.path(), &store, &changed);
    assert_eq!(analysed(&s), 2, "unrelated, thr: {:?}", s.schedule.stats);
    // A member added: `unrelated` is analysed again, but its summary — the write to `sv.a`,
    // which names the record by its tag — is the same, so `thr` is reused (early cut-off).
    let grown = changed.replace("struct s { long a; }", "struct s { long a; int b; }");
    let (_, s) = run_edit(dir.path(), &store, &grown);
    assert_eq!(analysed(&s), 1, "unrelated: {:?}", s.schedule.stats);
}

#[test]
fn a_changed_record_reanalyses_what_reads_its_definition() {
    // `copy` names `struct out` only (through the globals' declarations), but copying the
    // whole object reads the definitions of `out` and of the `struct in` it holds: a member
    // added to `in` changes neither `out`'s label nor `copy`'s body, yet `copy` (and `thr`,
    // whose summary carries its accesses) is analysed again, since its entry records that its
    // analysis read `in`. `run_edit` checks the summaries equal a run without the cache (the
    // new member's write included).
    let with_records = PROGRAM
        .replace(
            "int x, y, z;",
            "struct in { int p; int q; };\nstruct out { struct in i; int r; } g1, g2;\nint x, y, z;",
        )
        .replace("void unrelated(void) { z = 1; }", "void unrelated(void) { z = 1; }\nvoid copy(void) { g1 = g2; }")
        .replace("unrelated(); return a;", "unrelated(); copy(); return a;");
    let (dir, _cache, store) = fresh();
    run_edit(dir.path(), &store, &with_records);
    let grown = with_records.replace("int p; int q; }", "int p; int q; int w; }");
    let (_, s) = run_edit(dir.path(), &store, &grown);
    assert_eq!(analysed(&s), 2, "copy, thr: {:?}", s.schedule.stats);
    // A record no analysis reads changes nothing stored.
    let unused = with_records.replace("int x, y, z;", "struct unused { int u; };\nint x, y, z;");
    run_edit(dir.path(), &store, &unused);
    let changed = unused.replace("struct unused { int u; }", "struct unused { long u; }");
    let (_, s) = run_edit(dir.path(), &store, &changed);
    assert_eq!(analysed(&s), 0, "{:?}", s.schedule.stats);
}

#[test]
fn corrupt_summary_entries_are_recomputed() {
    let (dir, cache, store) = fresh();
    std::fs::write(dir.path().join("prog.c"), PROGRAM).unwrap();
    let p = program(&dir.path().join("prog.c"), 0);
    let stored = summaries_and_cache(&p, Some(&store)).1.unwrap().stored;
    // Summaries are stored by content: identical ones once.
    let blobs = walk(&cache.path().join("summary"));
    assert!(!blobs.is_empty() && blobs.len() <= stored);
    for e in &blobs {
        let mut bytes = std::fs::read(e).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(e, bytes).unwrap();
    }
    // The SCCs are found stored, their summaries cannot be loaded: the run repeats without
    // their entries, and what it returns is what a fresh run computes (`run_edit`).
    let store = Store::open(cache.path()).unwrap();
    let (_, s, cache_stats) = run_edit_with_stats(dir.path(), &store, PROGRAM);
    assert!(cache_stats.lost_before > 0);
    assert_eq!(s.schedule.stats.sccs_reused, 0);
    assert_eq!(store.corrupt_entries(), blobs.len());
    // Recomputed and stored again: the next run reuses everything.
    let (_, s) = run_edit(dir.path(), &store, PROGRAM);
    assert_eq!(analysed(&s), 0);
    // The SCCs' entries (the index of the summaries) are read from the run's pack of them,
    // or, without it, one by one; without both the cache has nothing to reuse.
    let meta = cache.path().join("summary-meta");
    let pack = cache.path().join("summary-meta-pack");
    let n = walk(&meta).len();
    assert_eq!(n, stored);
    assert_eq!(walk(&pack).len(), 1);
    std::fs::remove_dir_all(&meta).unwrap();
    let (_, s) = run_edit(dir.path(), &store, PROGRAM);
    assert_eq!(analysed(&s), 0, "from the pack");
    std::fs::remove_dir_all(&pack).unwrap();
    let (_, s) = run_edit(dir.path(), &store, PROGRAM);
    assert_eq!(analysed(&s), s.schedule.stats.sccs_analyzed);
    assert_eq!(walk(&meta).len(), n);
    std::fs::remove_dir_all(&pack).unwrap();
    let (_, s) = run_edit(dir.path(), &store, PROGRAM);
    assert_eq!(analysed(&s), 0, "from the entries");
    assert_eq!(walk(&pack).len(), 1, "and packed again");
}

#[test]
fn a_rerun_loads_only_the_summaries_it_reads() {
    let (dir, _cache, store) = fresh();
    let file = dir.path().join("prog.c");
    let run = |text: &str, keep: KeepSummaries| {
        std::fs::write(&file, text).unwrap();
        let p = program(&file, 0);
        let options = Options {
            keep,
            ..Options::default()
        };
        let s = pipeline::summarize_cached(&p, &Models::builtin(), &options, Some(&store));
        (p, s.summaries, s.cache.unwrap())
    };
    let (p, cold, _) = run(PROGRAM, KeepSummaries::All);
    let with_summary = (0..p.functions.len())
        .filter(|&i| cold.get(FuncId(i as u32)).is_some())
        .count();
    // Nothing kept, `mid` edited: it is analysed again and reads `leaf`'s summary; every other
    // SCC is reused without loading anything.
    let edited = PROGRAM.replace("leaf(); }", "leaf(); (void)0; }");
    let (_, s, c) = run(&edited, KeepSummaries::Functions(Vec::new()));
    assert_eq!(analysed(&s), 1);
    assert_eq!(c.loaded, 1, "leaf's summary only");
    // Everything kept: every stored summary is loaded at the end, and equals a fresh one.
    let (p, s, c) = run(&edited, KeepSummaries::All);
    assert_eq!(analysed(&s), 0);
    assert_eq!(c.loaded, with_summary);
    assert_same(&p, &s, &summaries(&p, None), "all loaded");
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn concurrent_analyze_runs_share_a_cache() {
    let cache = tempfile::tempdir().unwrap();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/race/thread_pool.c");
    let run = || {
        let cache = cache.path().to_path_buf();
        let fixture = fixture.clone();
        std::thread::spawn(move || {
            std::process::Command::new(env!("CARGO_BIN_EXE_relay"))
                .args(["analyze", "--format", "json", "-q", "--cache"])
                .arg(&cache)
                .arg(&fixture)
                .output()
                .unwrap()
        })
    };
    let (a, b) = (run(), run());
    let (a, b) = (a.join().unwrap(), b.join().unwrap());
    let strip = |o: &std::process::Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["stats"]["times"] = serde_json::Value::Null;
        v
    };
    assert_eq!(
        a.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&a.stderr)
    );
    assert_eq!(
        b.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&b.stderr)
    );
    assert_eq!(strip(&a), strip(&b));
    // A third run reuses and reports the same.
    let c = run().join().unwrap();
    assert_eq!(strip(&c), strip(&a));
}

/// The pipeline's options with recursive SCCs of two or more functions collapsed.
fn collapsing_at_two() -> Options {
    Options {
        collapse_at: 2,
        schedule: relay::schedule::Options {
            jobs: 2,
            ..Options::default().schedule
        },
        ..Options::default()
    }
}

/// The summaries of `p` with recursive SCCs of two or more functions collapsed, and what the
/// summaries cache in `store` did.
fn summarize_collapsing_at_two(
    p: &Program,
    store: Option<&Store>,
) -> (Summaries, Option<SummaryCacheStats>) {
    let s = pipeline::summarize_cached(p, &Models::builtin(), &collapsing_at_two(), store);
    (s.summaries, s.cache)
}

#[test]
fn summaries_reaching_a_collapsed_scc_are_cached_by_reference() {
    let path = common::c_fixture("race", "collapsed_scc.c");
    let run = summarize_collapsing_at_two;
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let (cold, cache) = run(&program(&path, 0), Some(&store));
    let cache = cache.unwrap();
    assert_eq!(cold.stats.collapsed_sccs, 1);
    // The SCC {walk_a, walk_b} and walker, which reaches its shared set, are stored: their
    // summaries name the set by its SCC.
    assert_eq!(cache.unportable, 0);
    let p = program(&path, 37);
    let warm = run(&p, Some(&store)).0;
    let fresh = run(&p, None).0;
    assert_eq!(
        analysed(&warm),
        0,
        "the shared set is rebuilt, nothing analysed"
    );
    assert_eq!(warm.stats.collapsed_sccs, 1);
    assert_eq!(warm.stats.shared_accesses, fresh.stats.shared_accesses);
    assert_same(&p, &warm, &fresh, "collapsed_scc.c");
    let walker = (0..p.functions.len() as u32)
        .map(FuncId)
        .find(|&f| p.function_name(f) == "walker")
        .unwrap();
    let shared = |s: &Summaries| {
        let sets = &s.get(walker).unwrap().shared;
        assert_eq!(sets.len(), 1);
        assert_eq!(sets[0].functions, 2);
        let views: Vec<String> = sets[0].accesses().map(|a| format!("{a:?}")).collect();
        assert!(!views.is_empty());
        views
    };
    assert_eq!(
        shared(&warm),
        shared(&fresh),
        "the rebuilt set is the computed one"
    );
}

#[test]
fn a_reused_collapsed_scc_whose_members_are_lost_is_analysed_again() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let p = program(&common::c_fixture("race", "collapsed_scc.c"), 0);
    let run = |store: Option<&Store>| summarize_collapsing_at_two(&p, store);
    run(Some(&store));
    // Every SCC is found stored and the collapsed one's set named; only building the set,
    // once the schedule is done, reads its members' summaries — which are corrupt.
    for e in walk(&dir.path().join("summary")) {
        let mut bytes = std::fs::read(&e).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff;
        std::fs::write(e, bytes).unwrap();
    }
    let (warm, cache) = run(Some(&store));
    let fresh = run(None).0;
    let cache = cache.unwrap();
    assert!(cache.lost_before > 0, "the set could not be built");
    assert_eq!(warm.stats.collapsed_sccs, 1);
    assert_eq!(warm.stats.shared_accesses, fresh.stats.shared_accesses);
    assert_same(&p, &warm, &fresh, "collapsed_scc.c");
}

/// A ring of five functions, collapsed at `--collapse-scc 2`, called by a thread and `main`
/// (which takes the lock the edits below take: the program's functions and points-to classes,
/// part of every key, stay the same).
const RING: &str = r#"
#include <pthread.h>
pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int a, b, c, d, e;
void w0(int n); void w1(int n); void w2(int n); void w3(int n); void w4(int n);
void w0(int n) { a = n; if (n) w1(n - 1); }
void w1(int n) { b = n; if (n) w2(n - 1); }
void w2(int n) { w3(n - 1); c = n; }
void w3(int n) { d = n; if (n) w4(n - 1); }
void w4(int n) { e = n; if (n) w0(n - 1); }
void *thr(void *p) { w0(3); return p; }
int main(void) {
    pthread_t t;
    pthread_create(&t, 0, thr, 0);
    pthread_mutex_lock(&m);
    w2(5);
    pthread_mutex_unlock(&m);
    pthread_join(t, 0);
    return 0;
}
"#;

#[test]
fn an_edit_in_a_collapsed_scc_replays_the_steps_it_does_not_reach() {
    let options = collapsing_at_two();
    let (dir, cache, store) = fresh();
    // Analyses `text` with the cache, checks the summaries against a run without it, and gives
    // the steps of the collapsed SCC's fixpoint that were analysed and replayed (`kept`: the
    // members stored without being encoded again).
    let kept = std::cell::Cell::new(0);
    let run = |text: &str| {
        let file = dir.path().join("ring.c");
        std::fs::write(&file, text).unwrap();
        let p = program(&file, 0);
        let s = pipeline::summarize_cached(&p, &Models::builtin(), &options, Some(&store));
        let fresh = pipeline::summarize_cached(&p, &Models::builtin(), &options, None);
        assert_same(&p, &s.summaries, &fresh.summaries, text);
        assert_eq!(s.summaries.stats.collapsed_sccs, 1);
        let st = s.summaries.schedule.stats;
        kept.set(s.cache.map_or(0, |c| c.kept));
        (st.analyze_calls, st.replayed_steps)
    };
    let (cold, replayed) = run(RING);
    assert_eq!(replayed, 0);
    assert!(cold >= 5, "five members: {cold}");
    // w3's access is now under a lock it releases: only w3's summary changes (a call inside a
    // collapsed SCC brings in the callee's lockset, not its accesses), so only w3's steps run
    // (and thr and main, whose callees' summaries are unchanged, are reused).
    let guarded_text = RING.replace(
        "void w3(int n) { d = n;",
        "void w3(int n) { pthread_mutex_lock(&m); d = n; pthread_mutex_unlock(&m);",
    );
    // An edit of w3 that leaves its summary as it was runs w3's own steps (they read its body).
    let (w3_steps, _) = run(&RING.replace(
        "void w3(int n) { d = n;",
        "void w3(int n) { d = n; (void)0;",
    ));
    let (guarded, replayed) = run(&guarded_text);
    assert!(
        replayed > 0 && guarded < cold,
        "{guarded} analysed, {replayed} replayed"
    );
    // What w3's callers in the SCC read of its summary did not change (only an access did), so
    // their steps are replayed: only w3's run.
    assert_eq!(guarded, w3_steps);
    // The members whose summaries did not change kept their stored form; a run of the same
    // text loads them from it (and `run` compares them with computed ones).
    assert!((1..5).contains(&kept.get()), "{} kept", kept.get());
    assert_eq!(run(&guarded_text), (0, 0));
    // w3 now returns holding the lock: w2's access after the call is guarded by it too, so
    // w2's steps that read w3's new summary run as well.
    let held = RING.replace(
        "void w3(int n) { d = n;",
        "void w3(int n) { pthread_mutex_lock(&m); d = n;",
    );
    let (analysed, replayed) = run(&held);
    assert!(
        replayed > 0 && analysed > guarded,
        "{analysed} analysed, {replayed} replayed"
    );
    // w2's summary changed, its locations did not: only its step digest tells it must be
    // encoded again. w0, w1 and w4 kept theirs (a run of the same text loads what was
    // stored, checked by `run`).
    assert_eq!(kept.get(), 3);
    assert_eq!(run(&held), (0, 0));
    // Each run that made summaries wrote them to a pack of its own; packs less than half
    // referred to were compacted away.
    let packs = || walk(&cache.path().join("summary-step-pack"));
    let written = packs();
    assert!(
        !written.is_empty() && written.len() <= 3,
        "{} packs",
        written.len()
    );
    // Back to the first text: the SCC's own entry is stored.
    assert_eq!(run(RING), (0, 0));
    // Packs lost: the steps that need them cannot be replayed, so the fixpoint runs again
    // (the same summaries, checked by `run`), and its summaries are packed again.
    for p in packs() {
        std::fs::remove_file(p).unwrap();
    }
    let w1_guarded = RING.replace(
        "void w1(int n) { b = n;",
        "void w1(int n) { pthread_mutex_lock(&m); b = n; pthread_mutex_unlock(&m);",
    );
    let (again, replayed) = run(&w1_guarded);
    assert!(
        again >= 5 && replayed == 0,
        "the whole fixpoint: {again} analysed, {replayed} replayed"
    );
    assert!(!packs().is_empty());
    let (analysed, replayed) = run(&RING.replace("{ e = n;", "{ e = n + 1;"));
    assert!(
        replayed > 0 && analysed < cold,
        "the steps are stored again: {analysed} analysed, {replayed} replayed"
    );
}

#[test]
fn a_new_pointer_flow_replays_the_steps_of_the_members_that_do_not_read_it() {
    let options = collapsing_at_two();
    let (dir, _cache, store) = fresh();
    // Analyses `text` with the cache, checks the summaries against a run without it, and gives
    // the steps analysed and replayed, and how many SCCs were found whose reads changed.
    let run = |text: &str| {
        let file = dir.path().join("ring.c");
        std::fs::write(&file, text).unwrap();
        let p = program(&file, 0);
        let s = pipeline::summarize_cached(&p, &Models::builtin(), &options, Some(&store));
        let fresh = pipeline::summarize_cached(&p, &Models::builtin(), &options, None);
        assert_same(&p, &s.summaries, &fresh.summaries, text);
        let st = s.summaries.schedule.stats;
        let repartitioned = s.cache.map_or(0, |c| c.repartitioned);
        (st.analyze_calls, st.replayed_steps, repartitioned)
    };
    // `a` (w0's) and `b` (w1's) have their addresses taken, in two classes named after them
    // (so that the merge below renames one class: an object with no pointer to it is in a
    // class of its own, named apart). `w4` hands `w0` the address of `a`, `w0` hands `w1`
    // that of `b`: a call to a member of a collapsed SCC records what its arguments point to,
    // so `w4` reads `a`'s class and `w0` reads `b`'s. (A member that only writes `a` reads
    // nothing of its class: an access's class follows from its path, and a stored summary
    // does not hold it but derives it again.)
    let ring = RING
        .replace("void w0(int n);", "void w0(int *p, int n);")
        .replace("void w1(int n);", "void w1(int *p, int n);")
        .replace(
            "void w0(int n) { a = n; if (n) w1(n - 1); }",
            "void w0(int *p, int n) { *p = n; if (n) w1(&b, n - 1); }",
        )
        .replace(
            "void w1(int n) { b = n;",
            "void w1(int *p, int n) { *p = n;",
        )
        .replace("w0(n - 1); }", "w0(&a, n - 1); }")
        .replace("w0(3);", "w0(&a, 3);");
    assert!([
        "w1(&b, n - 1)",
        "w0(&a, n - 1)",
        "w0(&a, 3)",
        "int *p, int n) { *p = n;"
    ]
    .iter()
    .all(|edit| ring.contains(edit)));
    let taken = "int *volatile pa = &a, *volatile pb = &b; (void)pa; (void)pb;";
    let in_main = |stmt: &str| {
        let stmt = format!("    {taken} {stmt}\n    pthread_mutex_lock(&m);\n");
        ring.replace("    pthread_mutex_lock(&m);\n", &stmt)
    };
    let (cold, _, _) = run(&in_main(""));
    // `a` and `b` now in one class, named as one of them was: the ring's entry read their
    // classes, so the fixpoint runs, and only the steps of the member whose global's class
    // changed name are analysed again — the other members' reads still read the same.
    let (analysed, replayed, repartitioned) = run(&in_main("pa = &b;"));
    assert_eq!(repartitioned, 1, "the ring's entry");
    // (Each of the four others' steps replayed at least once.)
    assert!(
        replayed >= 4 && analysed < cold,
        "{analysed} analysed, {replayed} replayed (cold {cold})"
    );
    // Two new globals in one class that no member reads: the ring's entry holds; only `main`
    // is analysed.
    let unread = "pa = &b; { static int x, y; int *volatile p = &x; p = &y; (void)p; }";
    assert_eq!(run(&in_main(unread)), (1, 0, 0));
}

/// `deref` writes through two pointers nothing names: the objects are the solver's own nodes,
/// one of them not its class's representative (`pp = qq` merged two such classes).
fn solver_nodes() -> String {
    threaded(
        "int **pp, **qq;\nvoid deref(void) { **pp = 1; }\nvoid join(void) { pp = qq; }\n",
        "deref(); join();",
    )
}

#[test]
fn what_the_solver_made_is_read_by_its_class() {
    let (dir, _cache, store) = fresh();
    let (_, cold) = run_edit(dir.path(), &store, &solver_nodes());
    assert_eq!(analysed(&cold), 5, "{:?}", cold.schedule.stats);
    // A new class elsewhere changes the partition's fingerprint: `deref`'s answers (the
    // classes of `pp` and of what it points to, named after `pp`) are the same, so it and
    // `join` are reused; only `edited` is analysed (its summary comes out as before).
    let text = solver_nodes().replace(
        "void edited(void) { }",
        "void edited(void) { static int s1, s2; int *volatile p = &s1; p = &s2; (void)p; }",
    );
    let (_, s) = run_edit(dir.path(), &store, &text);
    assert_eq!(analysed(&s), 1, "edited: {:?}", s.schedule.stats);
}

/// The files are named in stored summaries by name, not by number: a header included above
/// every other shifts their numbers and re-analyses only the function it defines. `leaf` takes
/// its statement from a header included in its body, so its own locations are in another file
/// than its start.
#[test]
fn a_new_file_reanalyses_only_what_it_defines() {
    let (dir, _cache, store) = fresh();
    std::fs::write(dir.path().join("stmt.h"), "x = 3;\n").unwrap();
    std::fs::write(
        dir.path().join("new.h"),
        "int relay_new(void) { return 0; }\n",
    )
    .unwrap();
    let program = PROGRAM.replace(
        "void leaf(void) { x = 1; }",
        "void leaf(void) {\n#include \"stmt.h\"\n}",
    );
    let (p, cold) = run_edit(dir.path(), &store, &program);
    assert_eq!(analysed(&cold), cold.schedule.stats.sccs_analyzed);
    let file = |p: &Program, name: &str| p.files.iter().position(|f| f.ends_with(name));
    assert!(file(&p, "stmt.h").is_some());
    let (q, s) = run_edit(
        dir.path(),
        &store,
        &format!("#include \"new.h\"\n{program}"),
    );
    assert!(file(&q, "new.h") < file(&q, "stmt.h"));
    assert_ne!(
        file(&p, "stmt.h"),
        file(&q, "stmt.h"),
        "the numbers shifted: {:?} {:?}",
        p.files,
        q.files
    );
    assert_eq!(analysed(&s), 1, "only the new function");
}
