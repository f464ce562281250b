#!/usr/bin/env bash
# Usage: scripts/bench-callgraph.sh NAME=PATHS [NAME=PATHS ...]
#   e.g. scripts/bench-callgraph.sh sqlite=/work/corpus/sqlite/sqlite3.i \
#          linux-subset="/work/corpus/linux/linux-i/kernel /work/corpus/linux/linux-i/mm /work/corpus/linux/linux-i/drivers/net/ethernet/intel/e1000"
#
# For each corpus and each points-to field mode (MODES, default "field-based insensitive"), runs
#   relay callgraph -j$JOBS --fields MODE --format json --bench-schedule PATHS
# under /usr/bin/time and prints one row: front end, points-to, call graph + SCC seconds, peak RSS,
# call-graph shape (edges, SCCs, largest SCC, unresolved indirect calls), the largest points-to
# class, and the toy bottom-up analysis with 1 thread vs $JOBS threads (the scheduler's speedup).
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RELAY=${RELAY:-$ROOT/target/release/relay}
JOBS=${JOBS:-2}
MODES=${MODES:-field-based insensitive}
# SCHEDULE=0 skips the scheduler benchmark (on the whole kernel the toy analysis iterates huge SCCs).
SCHEDULE=${SCHEDULE:-1}
schedule_flag=--bench-schedule
[[ $SCHEDULE == 1 ]] || schedule_flag=
[[ -x /usr/bin/time ]] || apt-get install -y --no-install-recommends time >/dev/null
[[ -x $RELAY ]] || (cd "$ROOT" && cargo build --release >&2)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

printf '%-14s %-12s %8s %6s %6s %8s %9s %9s %7s %7s %9s %8s %8s %7s\n' corpus fields front_s pta_s cg_s rss_MiB \
    edges_dir edges_ind sccs max_scc unresolved max_class toy_1_s toy_N_s
for spec in "$@"; do
    name=${spec%%=*}
    paths=${spec#*=}
    for mode in $MODES; do
        # shellcheck disable=SC2086
        /usr/bin/time -v -o "$TMP/time" "$RELAY" callgraph -j"$JOBS" --fields "$mode" --format json $schedule_flag \
            $paths >"$TMP/out.json" 2>"$TMP/err" || true
        rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$TMP/time")
        python3 - "$TMP/out.json" "$name" "$mode" "$rss" <<'PY'
import json, sys
path, name, mode, rss = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception as e:
    print(f"{name:<14} {mode:<12} failed: {e}"); sys.exit(0)
s, t, p = d["stats"], d["timings"], d["points_to"]
toy = t.get("schedule_toy") or {}
print(f"{name:<14} {mode:<12} {t['frontend_seconds']:8.2f} {t['points_to_seconds']:6.2f} {t['callgraph_seconds']:6.2f} "
      f"{rss:>8} {s['edges_direct']:9} {s['edges_indirect']:9} {s['sccs']:7} {s['largest_scc']:7} "
      f"{s['unresolved_indirect']:9} {p['largest_class']:8} {toy.get('seconds_1', 0):8.3f} {toy.get('seconds_n', 0):7.3f}")
fe = d.get("frontend", {})
print(f"{'':<14} front end: {fe.get('units')} units ({fe.get('clean_units')} clean, {fe.get('skipped_decls')} skipped decls), "
      f"{fe.get('function_definitions')} function definitions, {fe.get('functions_lowered')} lowered "
      f"({fe.get('duplicates_removed')} duplicates merged), {fe.get('lowering_failures')} lowering failures")
PY
    done
done
echo "(JOBS=$JOBS; rss = peak RSS of the whole run, front end included; toy = scheduler on the toy analysis, 1 vs $JOBS threads)"
