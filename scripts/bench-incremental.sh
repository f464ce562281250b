#!/usr/bin/env bash
# Usage: scripts/bench-incremental.sh [sqlite] [linux] [defconfig]   (default: sqlite)
#
# Incremental reanalysis with the on-disk cache, side by side in one run, per corpus:
#   (a)  cold:            empty cache
#   (b)  no change:       the same inputs again
#   (c1) leaf edit:       one leaf function's body edited on its own line (no line moves)
#   (c2) leaf edit+line:  the same edit on a new line (every later location in the file moves)
#   (d)  lock edit:       a function now returns holding a lock, so its callers' summaries change
#   (f)  pointer flow:    the leaf stores its argument into a global pointer (a new points-to
#                         flow between objects)
#   (h)  classes merged:  the leaf points a local at a global and then at another (SQLite:
#                         sqlite3Config, sqlite3Stat; kernel: file_caps_enabled, reset_devices):
#                         their points-to classes merge; the leaf's accesses stay the same
#   (g)  new function:    a new global and a new function writing it, defined above the leaf,
#                         which calls it (ids of everything defined later shift)
#   (i)  record edit:     a member added to a struct a few functions use (SQLite: SumCtx, the
#                         sum()/avg() aggregates' state; kernel: kthread_create_info, in
#                         kernel/kthread.i), on the struct's first line
#   (e)  relay report with another filter setting (no reanalysis)
# Analyses run with RELAY's filters (--filter all=on); (e) switches bootup-thread off.
# (b)'s report must be identical to (a)'s apart from stage times (checked, printed); with
# CHECK=1 each edit's report is compared with a cold run of the edited program too.
# Each row: wall seconds, percent of (a), units parsed/reused, SCCs analysed/reused and
# summaries loaded from the cache (from relay's stderr), and below it the run's stage times
# and what the pair stage replayed (`pairs:`, when it ran); then the cache's size on disk. Dirty
# pages are flushed (`sync`) before each timed run: by the time someone has edited a file, the
# previous run's writes (gigabytes of cache on the kernel) are on disk, and writing them back
# must not be timed as part of the next run.
# SQLite: a copy of /work/corpus/sqlite/sqlite3.c (scripts/corpus-sqlite.sh) is edited and
# analysed as a .c file (relay preprocesses it each run, so a new line moves the line markers
# of everything below, as in real use). Linux: the preprocessed subset
# (scripts/corpus-linux.sh) has no sources, so kernel/groups.i is edited in place (and always
# restored); a new line there moves locations only up to the next line marker. The Linux
# subset (kernel mm drivers/net/ethernet/intel/e1000, --max-rounds 4) needs about an hour for
# the cold run on 2 cores and ~18 GB of memory. defconfig: the whole preprocessed defconfig with
# bench-kernel.sh's flags (closed world, --per-access, --no-inclusion), same edits in
# kernel/groups.i; about 5 minutes per run.
# Env: RELAY (default target/release/relay), JOBS (default 2), CORPUS (default /work/corpus),
#      KEEP=1 keeps the work directory.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
RELAY=${RELAY:-$ROOT/target/release/relay}
JOBS=${JOBS:-2}
CORPUS=${CORPUS:-/work/corpus}
die() { printf 'bench-incremental: error: %s\n' "$*" >&2; exit 1; }
[[ -x $RELAY ]] || (cd "$ROOT" && cargo build --release >&2)
WORK=$(mktemp -d /tmp/bench-incremental.XXXXXX)

# edit FILE MODE FUNCTION-HEADER: inserts a statement after the header (which ends with the
# body's `{`): a dead local on the same line (same-line) or on a new line (new-line), or the
# statement TEXT on the same line (insert:TEXT).
edit() {
    python3 - "$@" <<'EOF'
import sys
path, mode, header = sys.argv[1:4]
text = open(path, encoding="latin-1").read()
n = text.count(header)
if n != 1:
    sys.exit(f"bench-incremental: {header!r} occurs {n} times in {path}, expected once")
if mode == "same-line":
    stmt = " volatile int relay_bench_edit = 1; (void)relay_bench_edit;"
elif mode == "new-line":
    stmt = "\n volatile int relay_bench_edit = 1; (void)relay_bench_edit;"
elif mode.startswith("insert:"):
    stmt = " " + mode[len("insert:"):]
elif mode == "new-function":
    defs = ("int relay_bench_global;\n"
            "static void relay_bench_added(void) { relay_bench_global = 1; }\n")
    open(path, "w", encoding="latin-1").write(
        text.replace(header, defs + header + " relay_bench_added();"))
    sys.exit(0)
else:
    sys.exit(f"bench-incremental: unknown edit {mode}")
open(path, "w", encoding="latin-1").write(text.replace(header, header + stmt))
EOF
}

A_SECS=
# run LABEL CMD...: times one relay run, prints a row.
run() {
    local label=$1; shift
    local err=$WORK/$label.err
    local t0 t1 status=0
    sync
    t0=$(date +%s.%N)
    "$@" >"$WORK/$label.out" 2>"$err" || status=$?
    t1=$(date +%s.%N)
    [[ $status -le 1 ]] || { cat "$err" >&2; die "$label: relay exited with $status"; }
    local secs pct units sccs
    secs=$(echo "$t1 - $t0" | bc)
    [[ -n $A_SECS ]] || A_SECS=$secs
    pct=$(echo "scale=1; 100 * $secs / $A_SECS" | bc)
    units=$(sed -n 's/^front end: \([0-9]*\) unit(s) parsed, \([0-9]*\) reused.*/\1\/\2/p' "$err")
    sccs=$(sed -n 's/^summaries: \([0-9]*\) SCC(s) analysed, \([0-9]*\) reused.*/\1\/\2/p' "$err")
    loaded=$(sed -n 's/^summaries: .* (\([0-9]*\) summaries loaded)$/\1/p' "$err")
    printf '%-10s %-22s %9.2f %7s%% %14s %18s %8s\n' "$CORPUS_NAME" "$label" "$secs" "$pct" \
        "${units:--}" "${sccs:--}" "${loaded:--}"
    # `relay report` prints the saved run's table: not this run's stages.
    [[ $label == e-* ]] || stages "$err"
}

# stages ERR: the stage times of relay's run table (its `time` block) on one indented line,
# and what the pair stage replayed.
stages() {
    python3 - "$1" <<'EOF'
import re, sys
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().splitlines()
times, on = [], False
for l in lines:
    if l.strip() == "time":
        on = True
        continue
    m = re.match(r"^\s{4}(\S.*?)\s+([0-9.]+)s$", l) if on else None
    if m:
        times.append(f"{m.group(1)} {float(m.group(2)):.1f}")
    elif on:
        on = False
pairs = [l[len("pairs: "):] for l in lines if l.startswith("pairs: ")]
if times or pairs:
    print(f"{'':10} " + ", ".join(times + pairs))
EOF
}

# check LABEL: with CHECK=1, analyses the edited program again without the cache and compares
# the reports (stage times aside): an incremental run must report what a cold one does.
check() {
    [[ ${CHECK:-0} == 1 ]] || return 0
    local label=$1 status=0
    local cold=("$RELAY" analyze -j"$JOBS" --no-cache --format json --filter all=on
        "${inputs[@]}" "${extra[@]}")
    "${cold[@]}" >"$WORK/$label.cold.out" 2>"$WORK/$label.cold.err" || status=$?
    [[ $status -le 1 ]] || { cat "$WORK/$label.cold.err" >&2; die "$label: cold check failed"; }
    python3 - "$WORK/$label.out" "$WORK/$label.cold.out" "$label" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for r in (a, b):
    r["stats"]["times"] = None
same = "identical to" if a == b else "DIFFERS from"
print(f"{'':10} ({sys.argv[3]}) report {same} a cold run of the edited program, times aside")
EOF
}

RESTORE=()
restore() {
    if [[ ${#RESTORE[@]} -eq 2 ]]; then cp "${RESTORE[1]}" "${RESTORE[0]}"; fi
    [[ ${KEEP:-0} == 1 ]] || rm -rf "$WORK"
}
trap restore EXIT

# bench NAME INPUT-ARGS... -- EDIT-FILE LEAF-HEADER LOCK-HEADER LOCK-STATEMENT FLOW-STATEMENT
#       MERGE-STATEMENT RECORD-FILE RECORD-HEADER RECORD-MEMBER ANALYZE-ARGS...
bench() {
    CORPUS_NAME=$1; shift
    local inputs=()
    while [[ $1 != -- ]]; do inputs+=("$1"); shift; done
    shift
    local file=$1 leaf=$2 lockfn=$3 lockstmt=$4 flowstmt=$5 mergestmt=$6
    local recfile=$7 recheader=$8 recmember=$9; shift 9
    extra=("$@")
    local cache=$WORK/$CORPUS_NAME.cache orig=$WORK/$CORPUS_NAME.orig
    cp "$file" "$orig"
    RESTORE=("$file" "$orig")
    A_SECS=
    local analyze=("$RELAY" analyze -j"$JOBS" --cache "$cache" --format json --filter all=on
        "${inputs[@]}" "$@")
    run "a-cold" "${analyze[@]}"
    run "b-no-change" "${analyze[@]}"
    python3 - "$WORK/a-cold.out" "$WORK/b-no-change.out" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for r in (a, b):
    r["stats"]["times"] = None
print(f"{'':10} (b) report {'identical to' if a == b else 'DIFFERS from'} (a)'s except times;"
      f" {len(a['warnings'])} warnings reported, {a['stats']['warnings_before_filters']} before filters")
EOF
    edit "$file" same-line "$leaf"
    run "c1-leaf-same-line" "${analyze[@]}"
    check "c1-leaf-same-line"
    cp "$orig" "$file"; edit "$file" new-line "$leaf"
    run "c2-leaf-new-line" "${analyze[@]}"
    check "c2-leaf-new-line"
    cp "$orig" "$file"; edit "$file" "insert:$lockstmt" "$lockfn"
    run "d-lock-edit" "${analyze[@]}"
    check "d-lock-edit"
    cp "$orig" "$file"; edit "$file" "insert:$flowstmt" "$leaf"
    run "f-pointer-flow" "${analyze[@]}"
    check "f-pointer-flow"
    cp "$orig" "$file"; edit "$file" new-function "$leaf"
    run "g-new-function" "${analyze[@]}"
    check "g-new-function"
    cp "$orig" "$file"; edit "$file" "insert:$mergestmt" "$leaf"
    run "h-classes-merged" "${analyze[@]}"
    check "h-classes-merged"
    cp "$orig" "$file"
    local recorig=$WORK/$CORPUS_NAME.record.orig
    cp "$recfile" "$recorig"
    RESTORE=("$recfile" "$recorig")
    edit "$recfile" "insert:$recmember" "$recheader"
    run "i-record-edit" "${analyze[@]}"
    check "i-record-edit"
    cp "$recorig" "$recfile"
    RESTORE=()
    printf '%-10s cache on disk: %s\n' "$CORPUS_NAME" "$(du -sh "$cache" | cut -f1)"
    # By kind (the largest first), as `relay cache stats` counts them.
    "$RELAY" cache stats --cache "$cache" --format json 2>/dev/null | python3 -c '
import json, sys
kinds = sorted(json.load(sys.stdin)["kinds"], key=lambda k: -k["bytes"])
print(" " * 11 + ", ".join("%s %.1f MB" % (k["kind"], k["bytes"] / 1e6) for k in kinds[:6]))
' || true
    if "$RELAY" report --help >/dev/null 2>&1; then
        run "e-report-filters" "$RELAY" report --cache "$cache" --filter all=on \
            --filter bootup-thread=off --format json
    else
        printf '%-10s %-22s %9s\n' "$CORPUS_NAME" "e-report-filters" "n/a (no relay report)"
    fi
}

printf '%-10s %-22s %9s %8s %14s %18s %8s\n' corpus scenario wall_s "% of a" "units p/r" \
    "SCCs an/reused" loaded
for corpus in "${@:-sqlite}"; do
    case $corpus in
    sqlite)
        src=$CORPUS/sqlite/sqlite3.c
        [[ -f $src ]] || die "no $src (run scripts/corpus-sqlite.sh)"
        cp "$src" "$WORK/sqlite3.c"
        bench sqlite "$WORK/sqlite3.c" -- "$WORK/sqlite3.c" \
            "int sqlite3Strlen30(const char *z){" \
            "static void invalidateAllOverflowCache(BtShared *pBt){" \
            "sqlite3_mutex_enter(pBt->mutex);" \
            "sqlite3_temp_directory = (char *)z;" \
            "{ void *volatile relay_p = (void *)&sqlite3Config; relay_p = (void *)&sqlite3Stat; (void)relay_p; }" \
            "$WORK/sqlite3.c" "struct SumCtx {" "int relay_bench_member;" \
            --entry-roots
        ;;
    linux)
        dir=$CORPUS/linux/linux-i
        [[ -f $dir/kernel/groups.i ]] || die "no $dir/kernel/groups.i (run scripts/corpus-linux.sh)"
        header=$'int groups_search(const struct group_info *group_info, kgid_t grp)\n{'
        bench linux "$dir/kernel" "$dir/mm" "$dir/drivers/net/ethernet/intel/e1000" -- \
            "$dir/kernel/groups.i" "$header" "$header" "rcu_read_lock();" \
            "init_task.group_leader = (void *)group_info;" \
            "{ void *volatile relay_p = (void *)&file_caps_enabled; relay_p = (void *)&reset_devices; (void)relay_p; }" \
            "$dir/kernel/kthread.i" $'struct kthread_create_info\n{' "int relay_bench_member;" \
            --max-rounds 4
        ;;
    defconfig)
        # The whole x86_64 defconfig (scripts/corpus-linux.sh OUT all), as bench-kernel.sh
        # runs it.
        dir=$CORPUS/linux/linux-i
        [[ -f $dir/kernel/groups.i ]] || die "no $dir/kernel/groups.i (run scripts/corpus-linux.sh)"
        header=$'int groups_search(const struct group_info *group_info, kgid_t grp)\n{'
        bench defconfig "$dir" -- \
            "$dir/kernel/groups.i" "$header" "$header" "rcu_read_lock();" \
            "init_task.group_leader = (void *)group_info;" \
            "{ void *volatile relay_p = (void *)&file_caps_enabled; relay_p = (void *)&reset_devices; (void)relay_p; }" \
            "$dir/kernel/kthread.i" $'struct kthread_create_info\n{' "int relay_bench_member;" \
            --max-rounds 4 --per-access --no-inclusion --closed-world
        ;;
    *) die "unknown corpus $corpus (sqlite, linux, defconfig)" ;;
    esac
done
