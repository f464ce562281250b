#!/usr/bin/env bash
# Usage: scripts/bench-kernel.sh [OUT]        (OUT defaults to /work/corpus/linux-all)
#
# relay on the whole Linux x86_64 defconfig, against gcc's syntax check of the same files:
#   1. scripts/corpus-linux.sh OUT: every TU of the defconfig preprocessed to OUT/linux-i
#      (idempotent: done once, ~7 minutes and 6.5 GiB on 2 cores)
#   2. gcc -fsyntax-only -w -x cpp-output over every OUT/linux-i/**/*.i, JOBS processes at once
#   3. relay analyze OUT/linux-i --no-cache -jJOBS --format json -o /dev/null $RELAY_FLAGS
#      (the report is serialised and thrown away: its size, millions of warnings, is not the
#      point here; the run table on stderr is kept in $LOG_DIR/relay.err)
#   both under /usr/bin/time -v. With BASE set, BASE runs step 3 too, first.
# Prints the wall times, their ratio, relay's peak RSS, the stage times of relay's run table
# and the warnings reported. Goals (issue 18): relay faster than gcc, peak RSS < 8 GiB.
# Env: RELAY (default target/release/relay), BASE (another relay binary, optional), JOBS
#      (default 2), RELAY_FLAGS (extra `relay analyze` flags), LOG_DIR (default
#      /tmp/bench-kernel), SKIP_GCC=1 (reuse the gcc time of the last run in LOG_DIR).
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,20s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-/work/corpus/linux-all}
RELAY=${RELAY:-$ROOT/target/release/relay}
JOBS=${JOBS:-2}
LOG_DIR=${LOG_DIR:-/tmp/bench-kernel}
mkdir -p "$LOG_DIR"
log() { printf '[bench-kernel %s] %s\n' "$(date +%T)" "$*" >&2; }
[[ -x /usr/bin/time ]] || apt-get install -y --no-install-recommends time >/dev/null
[[ -x $RELAY ]] || (cd "$ROOT" && cargo build --release >&2)

"$ROOT/scripts/corpus-linux.sh" "$OUT" >&2
IDIR=$OUT/linux-i
nfiles=$(find "$IDIR" -name '*.i' | wc -l)
log "$nfiles preprocessed units in $IDIR"

wall() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.1f", s}' "$1"; }
rss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"; }

if [[ ${SKIP_GCC:-0} != 1 || ! -s $LOG_DIR/gcc.time ]]; then
    log "gcc -fsyntax-only over $nfiles units, $JOBS at a time"
    find "$IDIR" -name '*.i' -print0 | sort -z |
        /usr/bin/time -v -o "$LOG_DIR/gcc.time" xargs -0 -n 1 -P "$JOBS" \
            gcc -fsyntax-only -w -x cpp-output >/dev/null 2>"$LOG_DIR/gcc.err" || true
fi
gcc_s=$(wall "$LOG_DIR/gcc.time")

run_relay() { # name binary
    local name=$1 bin=$2 rc=0
    log "$name: $bin analyze $IDIR -j$JOBS ${RELAY_FLAGS:-}"
    # shellcheck disable=SC2086
    /usr/bin/time -v -o "$LOG_DIR/$name.time" "$bin" analyze "$IDIR" --no-cache -j"$JOBS" \
        --format json -o /dev/null ${RELAY_FLAGS:-} 2>"$LOG_DIR/$name.err" || rc=$?
    if ((rc > 1)); then
        echo "$name: relay analyze exited $rc; the last lines of $LOG_DIR/$name.err:"
        tail -n 5 "$LOG_DIR/$name.err" | sed 's/^/    /'
        return 0
    fi
    local s
    s=$(wall "$LOG_DIR/$name.time")
    printf '%-6s relay %8s s  gcc %8s s  relay/gcc %5s  peak RSS %6s MiB  reported %s\n' \
        "$name" "$s" "$gcc_s" "$(awk -v a="$s" -v b="$gcc_s" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')" \
        "$(rss_mib "$LOG_DIR/$name.time")" \
        "$(awk '$1 == "reported" { print $2 }' "$LOG_DIR/$name.err" | tail -n 1)"
    # The run table's stage times.
    awk '/^  time$/ { on = 1; next } on && /^    / { printf "         %s\n", $0; next } on { exit }' \
        "$LOG_DIR/$name.err"
}

[[ -z ${BASE:-} ]] || run_relay base "$BASE"
run_relay relay "$RELAY"
echo "(JOBS=$JOBS; gcc: $nfiles units, $JOBS processes; logs in $LOG_DIR)"
