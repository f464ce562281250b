//! The pair stage's memo (`relay::race::memo`): a run that replays the buckets a previous run
//! found must find what a run that checks every bucket finds — the same races, the same counts —
//! whether it replays all of them (nothing changed) or some (an edit changed a few buckets).

mod common;

use std::path::Path;

use common::{c_fixtures, program_of};
use relay::cache::Store;
use relay::link::Program;
use relay::models::Models;
use relay::pipeline::{self, Analysis};
use relay::race::memo::{MemoInput, PairMemo};
use relay::race::{pairs_with_facts, PairStats, RaceInput};

fn analysis_of(program: &mut Program, name: &str) -> Analysis {
    analysis_with(program, name, None)
}

/// [`analysis_of`] with the summaries cache in `store`: the analysis then names its ids by
/// what they stand for (`Analysis::stable_ids`).
fn analysis_with(program: &mut Program, name: &str, store: Option<&Store>) -> Analysis {
    // As `relay analyze` builds it: calls to the models' trampolines are calls through a member.
    relay::link::trampolines::rewrite(program, Models::builtin_ref().trampolines());
    pipeline::analyze_cached(
        program,
        Models::builtin_ref(),
        &pipeline::Options::default(),
        store,
    )
    .unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

/// The racing pairs (printed) and counts of the pair stage given `memo` (with the
/// inclusion-based objects of the analysis when `objects` is set), and the memo it returns.
fn pair_stage(
    program: &Program,
    analysis: &Analysis,
    per_access: bool,
    objects: bool,
    memo: Option<&PairMemo>,
) -> (String, PairStats, Option<PairMemo>) {
    let input = RaceInput {
        program,
        pta: &analysis.pta,
        cg: &analysis.cg,
        summaries: &analysis.summaries,
        entries: &analysis.entries,
        type_alias: true,
        per_access,
        objects: analysis.objects.as_ref().filter(|_| objects),
        progress: false,
        memo: memo.map(|previous| MemoInput {
            previous,
            ids: &analysis.stable_ids,
        }),
    };
    let (pairs, stats, next) = pairs_with_facts(&input);
    (format!("{pairs:#?}"), stats, next)
}

/// The pair stage given `memo` (with the inclusion-based objects when `objects`), which must
/// find what the stage without a memo finds (`at` names the run): its pairs (printed), its
/// counts, and the memo it returns.
fn pair_stage_as_without_memo(
    program: &Program,
    analysis: &Analysis,
    (per_access, objects): (bool, bool),
    memo: &PairMemo,
    at: &str,
) -> (String, PairStats, PairMemo) {
    let (plain, stats, _) = pair_stage(program, analysis, per_access, objects, None);
    let (edited, edited_stats, next) =
        pair_stage(program, analysis, per_access, objects, Some(memo));
    assert_eq!(edited, plain, "{at}");
    assert_eq!(edited_stats, stats, "{at}");
    (plain, stats, next.expect("a memo"))
}

/// Every race fixture, in both reporting modes, without and with the inclusion-based objects
/// (named by the summaries cache): the first run with a memo checks every bucket and pairs every
/// whole-object access, the second replays every one of them (whole-object accesses only
/// without `--per-access`, where their tasks read nothing else); both find what a run without a
/// memo finds.
#[test]
fn replaying_every_bucket_finds_what_checking_them_finds() {
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    let (mut with_objects, mut wholes) = (0, 0);
    for path in c_fixtures("race") {
        let name = path.display().to_string();
        for objects in [false, true] {
            let mut program = program_of(&path);
            let analysis = analysis_with(&mut program, &name, objects.then_some(&store));
            let named = analysis.stable_ids.objects.is_some();
            assert!(
                analysis.objects.is_some(),
                "{name}: inclusion is on by default"
            );
            for per_access in [false, true] {
                let at = format!("{name} (per access: {per_access}, objects: {objects})");
                let stage = |memo| pair_stage(&program, &analysis, per_access, objects, memo);
                let (plain, stats, none) = stage(None);
                assert!(none.is_none(), "{at}: no memo asked for, none made");
                let empty = PairMemo::default();
                let (first, first_stats, memo) = stage(Some(&empty));
                let Some(memo) = memo else {
                    assert!(objects && !named, "{at}: a memo unless objects are unnamed");
                    continue;
                };
                with_objects += objects as usize;
                assert_eq!(
                    (memo.replayed(), memo.checked()),
                    (0, stats.buckets),
                    "{at}"
                );
                let whole_tasks = memo.wholes().1;
                assert!(!per_access || whole_tasks == 0, "{at}: {whole_tasks}");
                wholes += whole_tasks;
                let (second, second_stats, again) = stage(Some(&memo));
                let again = again.expect("a memo");
                assert_eq!(
                    (again.replayed(), again.checked(), again.wholes()),
                    (stats.buckets, 0, (whole_tasks, 0)),
                    "{at}"
                );
                assert_eq!(first, plain, "{at}: checked with a memo");
                assert_eq!(second, plain, "{at}: replayed");
                assert_eq!(first_stats, stats, "{at}");
                assert_eq!(second_stats, stats, "{at}");
            }
        }
    }
    assert!(with_objects > 20, "objects named in {with_objects} runs");
    assert!(wholes > 0, "no whole-object access met");
}

/// Two threads on four globals; `EDIT` (and `ABOVE`) are replaced to make the versions of the
/// program.
const PROGRAM: &str = r#"
#include <pthread.h>
ABOVE
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int a, b, c, d;
extern int *shared_counter(void);
static void *one(void *arg)
{
    *shared_counter() += 1;
    pthread_mutex_lock(&m);
    a++;
    b++;
    pthread_mutex_unlock(&m);
    c++;
    EDIT
    return arg;
}
static void *two(void *arg)
{
    pthread_mutex_lock(&m);
    a = 1;
    pthread_mutex_unlock(&m);
    b = 2;
    c = 3;
    d = 4;
    return arg;
}
int main(void)
{
    pthread_t t, u;
    pthread_create(&t, 0, one, 0);
    pthread_create(&u, 0, two, 0);
    pthread_join(t, 0);
    pthread_join(u, 0);
    return d;
}
"#;

fn version(dir: &Path, edit: &str) -> Program {
    version_with(dir, "", edit)
}

/// One file for every version: a `static` is named by its unit's path too.
fn version_with(dir: &Path, above: &str, edit: &str) -> Program {
    let path = dir.join("program.c");
    let text = PROGRAM.replace("ABOVE", above).replace("EDIT", edit);
    std::fs::write(&path, text).unwrap();
    program_of(&path)
}

/// A sequence of edits, each run given the memo of the run before: `d` accessed by both
/// threads (one bucket gains a group and a race), then under the lock in one thread (a group's
/// lockset changes: the bucket is checked again, though it still races), then unlocked again. Each run checks only the buckets the edit changed and replays the others; each finds
/// what checking every bucket of its program finds.
#[test]
fn an_edit_checks_only_the_buckets_it_changes() {
    let dir = tempfile::tempdir().unwrap();
    let edits = [
        "",
        "d--;",
        "pthread_mutex_lock(&m); d--; pthread_mutex_unlock(&m);",
        "d--;",
    ];
    for per_access in [false, true] {
        let mut memo = PairMemo::default();
        for (i, edit) in edits.iter().enumerate() {
            let at = format!("edit {i} (per access: {per_access})");
            let mut program = version(dir.path(), edit);
            let analysis = analysis_of(&mut program, edit);
            let (plain, stats, next) =
                pair_stage_as_without_memo(&program, &analysis, (per_access, false), &memo, &at);
            if i == 0 {
                assert_eq!(next.checked(), stats.buckets, "{at}: nothing to replay");
            } else {
                assert_eq!(next.checked(), 1, "{at}: only d's bucket");
                assert_eq!(next.replayed(), stats.buckets - 1, "{at}");
            }
            assert_eq!(
                plain.matches("Pair {").count(),
                [2, 3, 3, 3][i],
                "{at}: {plain}"
            );
            memo = next;
        }
    }
}

/// A global and a function defined above the others shift every later id (globals, functions,
/// names, points-to classes — `one` writes through a pointer of unknown origin, an access
/// whose path is rooted at its points-to class): with the summaries cache's names for them, a
/// run replays every bucket the new code does not reach — all of them while nothing calls it,
/// all but the new global's once `one` calls it — and finds what checking every bucket finds.
/// Without those names (no cache) the renumbered entries change the context: nothing is
/// replayed.
#[test]
fn ids_shifted_by_new_definitions_keep_the_buckets() {
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    let added = "int added_global; static void added(void) { added_global = 1; }";
    // (above, edit, with the cache, buckets checked: None = all of them)
    let versions = [
        ("", "", true, None),
        (added, "", true, Some(0)),
        (added, "added();", true, Some(1)),
        ("", "", false, None),
        (added, "", false, None),
    ];
    checks_only(&versions, &store);
}

/// Runs each version `(above, edit, with the cache, buckets checked: None = all of them)`
/// in turn, in both reporting modes, each given the memo of the one before: each finds what
/// checking every bucket finds, and checks the buckets it says.
fn checks_only(versions: &[(&str, &str, bool, Option<usize>)], store: &Store) {
    let dir = tempfile::tempdir().unwrap();
    for per_access in [false, true] {
        let mut memo = PairMemo::default();
        for (i, &(above, edit, cached, checked)) in versions.iter().enumerate() {
            let at = format!("version {i} (per access: {per_access})");
            let mut program = version_with(dir.path(), above, edit);
            let analysis = analysis_with(&mut program, &at, cached.then_some(store));
            let (_, stats, next) =
                pair_stage_as_without_memo(&program, &analysis, (per_access, false), &memo, &at);
            let checked = checked.unwrap_or(stats.buckets);
            assert_eq!(
                (next.checked(), next.replayed()),
                (checked, stats.buckets - checked),
                "{at}"
            );
            memo = next;
        }
    }
}

/// A struct edited: the bucket of the accesses whose type facts read the record (a member
/// added to `struct s`, which `sv` is) is checked, the others are replayed; a record no
/// access reads, added or changed, leaves every bucket to be replayed. (Until the type-aware
/// aliasing tables were hashed per group, any struct edit changed the run's context and
/// every bucket was checked.)
#[test]
fn a_changed_struct_checks_only_the_buckets_that_read_it() {
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    let (s, sg) = (
        "struct s { int f; }; static struct s sv;",
        "struct s { int f; long g; }; static struct s sv;",
    );
    let unused_int = format!("{sg} struct unused {{ int u; }};");
    let unused_long = format!("{sg} struct unused {{ long u; }};");
    let edit = "sv.f++;";
    let versions = [
        (s, edit, true, None),
        (sg, edit, true, Some(1)),
        (unused_int.as_str(), edit, true, Some(0)),
        (unused_long.as_str(), edit, true, Some(0)),
    ];
    checks_only(&versions, &store);
}

/// Run `i` of a whole-object test: `text` written to `path` and its pair stage given `memo`
/// (one warning per pair of sites, no inclusion-based objects), which must find what the
/// stage without a memo finds; its pairs (printed) and the memo it returns.
fn whole_object_version(path: &Path, text: &str, memo: &PairMemo, i: usize) -> (String, PairMemo) {
    std::fs::write(path, text).unwrap();
    let mut program = program_of(path);
    let at = format!("run {i}");
    let analysis = analysis_of(&mut program, &at);
    let (plain, _, next) =
        pair_stage_as_without_memo(&program, &analysis, (false, false), memo, &at);
    (plain, next)
}

/// A whole-object access racing with several members of its object: its one warning names the
/// first as the other side and the others' sites there. Replayed (its task's digest the
/// same), it names the very same sites, and a member access added later makes it paired again.
#[test]
fn a_replayed_whole_object_access_names_every_member_it_races_with() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("program.c");
    // An untyped pool (as in fixtures/race/untyped_whole.c): its record's members are
    // classes of their own, and the memset through `void *` is paired with each.
    let text = r#"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
struct record { long count; long bytes; long errors; };
static char *pool;
static struct record *get(char *base, int i)
{
    return (struct record *)(base + i * sizeof(struct record));
}
static void clear(void *p, unsigned long n)
{
    memset(p, 0, n);
}
static void *clearer(void *arg)
{
    clear(pool, 4096);
    return arg;
}
static void *reader(void *arg)
{
    long r = get(pool, 3)->count;
    r += get(pool, 4)->bytes;
    EDIT
    return (void *)r;
}
int main(void)
{
    pthread_t t, u;
    pool = malloc(4096);
    pthread_create(&t, 0, clearer, 0);
    pthread_create(&u, 0, reader, 0);
    return 0;
}
"#;
    let mut memo = PairMemo::default();
    let mut tasks = 0;
    for (i, edit) in ["", "", "r += get(pool, 5)->errors;"]
        .into_iter()
        .enumerate()
    {
        let (plain, next) = whole_object_version(&path, &text.replace("EDIT", edit), &memo, i);
        let (replayed, paired) = next.wholes();
        match i {
            0 => assert!(replayed == 0 && paired > 0, "run 0: {replayed} {paired}"),
            1 => assert_eq!((replayed, paired), (tasks, 0), "run 1: nothing changed"),
            _ => assert!(
                paired > 0 && replayed + paired >= tasks,
                "run 2: {replayed} {paired}"
            ),
        }
        tasks = replayed + paired;
        let also = plain.split("also: [").skip(1);
        let named = also.filter(|rest| !rest.starts_with(']')).count();
        assert!(
            named > 0,
            "run {i}: the other members' sites named: {plain}"
        );
        memo = next;
    }
}

/// The inclusion-based objects are part of what a bucket's digest names: two pools that the
/// points-to classes merge but no pointer shares are distinct objects, until an edit makes one
/// pointer hold both — the paths, locksets and entries of the bucket stay as they were, its
/// objects change, and it is checked again (and races).
#[test]
fn a_bucket_whose_objects_change_is_checked_again() {
    let dir = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    let path = dir.path().join("program.c");
    let text = r#"
#include <pthread.h>
#include <stdlib.h>
struct cell { int x; };
static struct cell *p1, *p2;
static void *one(void *arg)
{
    p1->x = 1;
    return arg;
}
static void *two(void *arg)
{
    p2->x = 2;
    return arg;
}
int main(int argc, char **argv)
{
    pthread_t t, u;
    struct cell *either;
    (void)argv;
    p1 = malloc(sizeof *p1);
    p2 = malloc(sizeof *p2);
    either = argc ? p1 : p2;
    either->x = 0;
    EDIT
    pthread_create(&t, 0, one, 0);
    pthread_create(&u, 0, two, 0);
    return 0;
}
"#;
    let (mut memo, mut first_pairs) = (PairMemo::default(), 0);
    for (i, edit) in ["", "", "p2 = p1;"].into_iter().enumerate() {
        std::fs::write(&path, text.replace("EDIT", edit)).unwrap();
        let mut program = program_of(&path);
        let analysis = analysis_with(&mut program, edit, Some(&store));
        assert!(
            analysis.stable_ids.objects.is_some(),
            "run {i}: objects named"
        );
        let at = format!("run {i}");
        let (plain, stats, next) =
            pair_stage_as_without_memo(&program, &analysis, (false, true), &memo, &at);
        let pairs = plain.matches("Pair {").count();
        match i {
            0 => assert!(stats.distinct_objects > 0, "run 0: p1->x and p2->x apart"),
            1 => assert_eq!(next.checked(), 0, "run 1: nothing changed"),
            _ => {
                assert!(next.checked() > 0, "run 2: the objects changed");
                assert_eq!(stats.distinct_objects, 0, "run 2: one pool");
                assert!(pairs > first_pairs, "run 2: p1->x and p2->x race: {plain}");
            }
        }
        if i == 0 {
            first_pairs = pairs;
        }
        memo = next;
    }
}

/// A collapsed SCC's accesses are performed by every entry reaching it (one shared list of
/// performers): a replayed bucket makes their races again from the performances recorded, and
/// finds what checking finds.
#[test]
fn races_through_a_collapsed_scc_are_replayed_as_checked() {
    let path = common::c_fixture("race", "collapsed_scc.c");
    let cache = tempfile::tempdir().unwrap();
    let store = Store::open(cache.path()).unwrap();
    let mut program = program_of(&path);
    relay::link::trampolines::rewrite(&mut program, Models::builtin_ref().trampolines());
    let options = pipeline::Options {
        collapse_at: 2,
        ..pipeline::Options::default()
    };
    let analysis =
        pipeline::analyze_cached(&program, Models::builtin_ref(), &options, Some(&store)).unwrap();
    assert_eq!(analysis.summaries.stats.collapsed_sccs, 1);
    for per_access in [false, true] {
        let at = format!("collapsed_scc.c (per access: {per_access})");
        let empty = PairMemo::default();
        let (_, stats, first) = pair_stage(&program, &analysis, per_access, false, Some(&empty));
        let first = first.expect("a memo");
        let (plain, _, again) =
            pair_stage_as_without_memo(&program, &analysis, (per_access, false), &first, &at);
        assert_eq!(
            again.replayed(),
            stats.buckets,
            "{at}: every bucket replayed"
        );
        assert!(
            plain.contains("collapsed: Some("),
            "{at}: a race through the shared set"
        );
    }
}

/// A whole-object access to an object with many members: its task is kept by runs of members,
/// so a member access added re-checks the run it lands in, not the task (on SQLite objects
/// have thousands of members and hundreds of whole accesses). The run after the edit finds
/// what checking every member finds, and so does the one after it, which replays every run.
#[test]
fn a_member_added_rechecks_only_its_run_of_the_whole_object_task() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("program.c");
    let n = 300;
    let fields: String = (0..=n).map(|i| format!("long f{i}; ")).collect();
    let reads: String = (0..n).map(|i| format!("r += big->f{i}; ")).collect();
    let text = format!(
        r#"
#include <pthread.h>
#include <string.h>
struct big {{ {fields} }};
static struct big *big;
static void *clearer(void *arg)
{{
    memset(big, 0, sizeof *big);
    return arg;
}}
static void *reader(void *arg)
{{
    long r = 0;
    {reads}
    EDIT
    return (void *)r;
}}
int main(void)
{{
    static struct big b;
    pthread_t t, u;
    big = &b;
    pthread_create(&t, 0, clearer, 0);
    pthread_create(&u, 0, reader, 0);
    return 0;
}}
"#
    );
    let mut memo = PairMemo::default();
    let mut members = 0;
    for (i, edit) in ["", &format!("r += big->f{n};"), ""]
        .into_iter()
        .enumerate()
    {
        let (plain, next) = whole_object_version(&path, &text.replace("EDIT", edit), &memo, i);
        let at = format!("run {i}");
        assert!(plain.contains("Pair {"), "{at}: the memset races: {plain}");
        let counts = next.whole_members();
        match i {
            0 => {
                assert_eq!(counts.replayed, 0, "{at}");
                assert!(counts.checked >= n, "{at}: {counts:?}");
                members = counts.checked;
            }
            // One member more; fewer than a tenth of them checked again.
            1 => {
                assert_eq!(counts.replayed + counts.checked, members + 1, "{at}");
                assert!(
                    counts.checked > 0 && counts.checked * 10 < members,
                    "{at}: {counts:?}"
                );
                assert!(
                    next.wholes().1 > 0,
                    "{at}: the memset's task checked in part"
                );
            }
            // Back to the first version: the runs the edit did not touch are still recorded.
            _ => assert!(counts.checked * 10 < members, "{at}: {counts:?}"),
        }
        memo = next;
    }
}
