#!/usr/bin/env bash
# Usage: scripts/bench-incremental.sh [sqlite]   (default: sqlite)
#
# Incremental reanalysis with the on-disk cache, side by side in one run, per corpus:
#   (a)  cold:            empty cache
#   (b)  no change:       the same inputs again
#   (c1) leaf edit:       one leaf function's body edited on its own line (no line moves)
#   (c2) leaf edit+line:  the same edit on a new line (every later location in the file moves)
#   (d)  lock edit:       a function now returns holding a lock, so its callers' summaries change
#   (e)  relay report --filter all=on   (filters changed, no reanalysis)
# Each row: wall seconds, percent of (a), units parsed/reused, SCCs analysed/reused (from
# relay's stderr). Edits are made to copies of the preprocessed text (a .i file), never to the
# corpus. Input: /work/corpus/sqlite/sqlite3.c (scripts/corpus-sqlite.sh), preprocessed once.
# Not yet: the Linux subset (a cold run alone takes about an hour on 2 cores and ~18 GB).
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
[[ ${KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

# edit FILE MODE FUNCTION-HEADER: inserts a statement after the header's `{`, on the same line
# (same-line), on a new line (new-line), or a lock acquisition (lock:EXPR) on the same line.
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
elif mode.startswith("lock:"):
    stmt = f" sqlite3_mutex_enter({mode[5:]});"
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
    printf '%-10s %-22s %9.2f %7s%% %14s %18s\n' "$CORPUS_NAME" "$label" "$secs" "$pct" \
        "${units:--}" "${sccs:--}"
}

# bench NAME INPUT-ARGS... -- EDIT-FILE LEAF-HEADER LOCK-HEADER LOCK-EXPR ANALYZE-ARGS...
bench() {
    CORPUS_NAME=$1; shift
    local inputs=()
    while [[ $1 != -- ]]; do inputs+=("$1"); shift; done
    shift
    local file=$1 leaf=$2 lockfn=$3 lockexpr=$4; shift 4
    local cache=$WORK/$CORPUS_NAME.cache orig=$WORK/$CORPUS_NAME.orig
    cp "$file" "$orig"
    A_SECS=
    local analyze=("$RELAY" analyze -j"$JOBS" --cache "$cache" --format json "${inputs[@]}" "$@")
    run "a-cold" "${analyze[@]}"
    run "b-no-change" "${analyze[@]}"
    edit "$file" same-line "$leaf"
    run "c1-leaf-same-line" "${analyze[@]}"
    cp "$orig" "$file"; edit "$file" new-line "$leaf"
    run "c2-leaf-new-line" "${analyze[@]}"
    cp "$orig" "$file"; edit "$file" "lock:$lockexpr" "$lockfn"
    run "d-lock-edit" "${analyze[@]}"
    cp "$orig" "$file"
    if "$RELAY" report --help >/dev/null 2>&1; then
        run "e-report-filters" "$RELAY" report --cache "$cache" --filter all=on --format json
    else
        printf '%-10s %-22s %9s\n' "$CORPUS_NAME" "e-report-filters" "n/a (no relay report)"
    fi
}

printf '%-10s %-22s %9s %8s %14s %18s\n' corpus scenario wall_s "% of a" "units p/r" "SCCs an/reused"
for corpus in "${@:-sqlite}"; do
    case $corpus in
    sqlite)
        src=$CORPUS/sqlite/sqlite3.c
        [[ -f $src ]] || die "no $src (run scripts/corpus-sqlite.sh)"
        gcc -E -w "$src" -o "$WORK/sqlite3.i"
        bench sqlite "$WORK/sqlite3.i" -- "$WORK/sqlite3.i" \
            "int sqlite3Strlen30(const char *z){" \
            "static void invalidateAllOverflowCache(BtShared *pBt){" "pBt->mutex" \
            --entry-roots
        ;;
    *) die "unknown corpus $corpus (sqlite)" ;;
    esac
done
