#!/usr/bin/env bash
# Usage: scripts/bench-summaries.sh NAME=PATHS [NAME=PATHS ...]
#   e.g. scripts/bench-summaries.sh sqlite=/work/corpus/sqlite/sqlite3.i \
#          linux-subset="/work/corpus/linux/linux-i/kernel /work/corpus/linux/linux-i/mm /work/corpus/linux/linux-i/drivers/net/ethernet/intel/e1000"
#
# For each corpus runs, in the same run and on the same files,
#   gcc -fsyntax-only (the reference: one compiler pass over the preprocessed units), and
#   relay summary -j$JOBS --max-rounds $ROUNDS --format json PATHS
# under /usr/bin/time, and prints one row: gcc seconds, relay front end / points-to / summaries
# seconds, peak RSS, functions summarised (modelled, coarsened), guarded accesses, the
# accesses-per-function histogram (0, 1-10, 11-100, 101-1000, >1000) and the largest summary.
# With BASE=/path/to/an/older/relay the same row is printed for that binary first (run on the
# same files, right before), so a change is measured side by side on the same machine state.
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,13s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RELAY=${RELAY:-$ROOT/target/release/relay}
JOBS=${JOBS:-2}
ROUNDS=${ROUNDS:-8}
[[ -x /usr/bin/time ]] || apt-get install -y --no-install-recommends time >/dev/null
[[ -x $RELAY ]] || (cd "$ROOT" && cargo build --release >&2)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# One row for binary $1 (label $2) on $paths.
run_relay() {
    local bin=$1 label=$2
    # shellcheck disable=SC2086
    /usr/bin/time -v -o "$TMP/time" "$bin" summary --no-cache -j"$JOBS" --max-rounds "$ROUNDS" --format json \
        $paths >"$TMP/out.json" 2>"$TMP/err" || true
    rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$TMP/time")
    python3 - "$TMP/out.json" "$label" "$rss" "$gcc_s" <<'PY'
import json, sys
path, name, rss, gcc_s = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"{name:<14} failed: {e}"); sys.exit(0)
s, t = d["stats"], d["timings"]
h = "/".join(str(x) for x in s["access_histogram"])
print(f"{name:<14} {float(gcc_s):7.1f} {t['frontend_seconds']:7.1f} {t['points_to_seconds']:6.2f} "
      f"{t['summaries_seconds']:9.1f} {rss:>8} {s['functions']:7} {s['coarsened']:7} {s['accesses']:10}  "
      f"{h:<34} {s['max_accesses']} ({s['max_accesses_function']})")
print(f"{'':<14} recursive SCCs: at most {s['max_scc_rounds']} rounds, {s['nonconverged_sccs']} at the bound, "
      f"{s['failed_sccs']} failed; unknown externals: {s['unknown_externals']} functions, "
      f"{s['unknown_external_calls']} call sites")
PY
}

printf '%-14s %7s %7s %6s %9s %8s %7s %7s %10s  %-34s %s\n' corpus gcc_s front_s pta_s summary_s rss_MiB \
    funcs coarse accesses "histogram" largest
for spec in "$@"; do
    name=${spec%%=*}
    paths=${spec#*=}
    # shellcheck disable=SC2086
    find $paths -name '*.i' -print0 >"$TMP/files"
    start=$(date +%s.%N)
    xargs -0 -n 16 -P "$JOBS" gcc -fsyntax-only -w <"$TMP/files" 2>/dev/null || true
    gcc_s=$(echo "$(date +%s.%N) - $start" | bc)
    if [[ -n ${BASE:-} ]]; then
        run_relay "$BASE" "$name (base)"
    fi
    run_relay "$RELAY" "$name"
done
echo "(JOBS=$JOBS, ROUNDS=$ROUNDS; rss = peak RSS of the whole relay run, front end included)"
