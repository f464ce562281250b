#!/usr/bin/env bash
# Usage: scripts/bench-frontend.sh CORPUS_DIR_OR_FILES...
#   e.g. scripts/bench-frontend.sh /work/corpus/sqlite/sqlite3.i
#        scripts/bench-frontend.sh /work/corpus/linux/linux-i/kernel /work/corpus/linux/linux-i/mm
#
# Benchmarks relay's C front end against gcc on the same preprocessed (.i) files, in one run,
# one thread each side:
#   relay: target/release/relay parse -j1 [--syntax-only] --format json FILES... (one process,
#          all files; once parsing only, once parsing + lowering to the IR + linking)
#   gcc:   gcc -fsyntax-only -x cpp-output FILE                     (one process per file, in turn)
# Directories are scanned recursively for *.i. Prints per side: wall seconds, MB/s (1 MB =
# 1e6 bytes of .i input), peak RSS (from /usr/bin/time -v; for gcc the max over files), and
# gcc_time / relay_time; then, for the NLARGEST (env, default 5) largest files, `relay parse -j1`
# on each alone: size, peak RSS, RSS/size, next to relay's RSS on an empty .i file (baseline).
# gcc's diagnostics are silenced and counted (kernel .i files are not all gcc-clean without
# their compile flags); such files are still timed. relay's exit code 1 means "some declaration
# was skipped" and is not a failure. Builds relay with `cargo build --release` if the binary is
# missing; RELAY=path overrides the binary. Files go to relay as explicit paths (same set as gcc).
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,20s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RELAY=${RELAY:-$ROOT/target/release/relay}
NLARGEST=${NLARGEST:-5}

if [[ ! -x /usr/bin/time ]]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends time || { apt-get update && apt-get install -y --no-install-recommends time; }
fi
command -v gcc >/dev/null || { echo "bench-frontend: gcc not found" >&2; exit 1; }
command -v python3 >/dev/null || { echo "bench-frontend: python3 not found" >&2; exit 1; }
if [[ ! -x $RELAY ]]; then
    echo "bench-frontend: building relay (cargo build --release)" >&2
    (cd "$ROOT" && cargo build --release >&2)
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ---- the file set ----------------------------------------------------------------------------
for a in "$@"; do
    if [[ -d $a ]]; then
        find "$a" -type f -name '*.i' -print
    elif [[ -f $a ]]; then
        printf '%s\n' "$a"
    else
        echo "bench-frontend: no such file or directory: $a" >&2
        exit 1
    fi
done | sort -u >"$TMP/files"
mapfile -t FILES <"$TMP/files"
NFILES=${#FILES[@]}
((NFILES)) || { echo "bench-frontend: no .i files in $*" >&2; exit 1; }
xargs -d '\n' stat -c $'%s\t%n' <"$TMP/files" | sort -t $'\t' -k1,1nr >"$TMP/sizes"
BYTES=$(awk -F'\t' '{ s += $1 } END { printf "%d", s }' "$TMP/sizes")

now() { date +%s.%N; }
rss_kb() { awk -F': ' '/Maximum resident set size/ {print $2}' "$1"; }
fdiv() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
mb() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; } # KiB -> MiB

echo "bench-frontend: $NFILES files, $BYTES bytes ($(fdiv "$BYTES" 1000000) MB)"
cat "${FILES[@]}" >/dev/null # warm the page cache so neither side pays for the disk

# ---- relay -------------------------------------------------------------------------------------
# Twice: parsing only (--syntax-only), then the whole front end (parse + lower to IR + link).
run_relay() { # $1 = tag, rest = extra flags
    local tag=$1
    shift
    local t0 t1
    t0=$(now)
    set +e
    /usr/bin/time -v -o "$TMP/relay-$tag.time" "$RELAY" parse -j1 --format json "$@" "${FILES[@]}" \
        >"$TMP/relay-$tag.json" 2>"$TMP/relay-$tag.err"
    echo $? >"$TMP/relay-$tag.rc"
    set -e
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }' >"$TMP/relay-$tag.s"
}
run_relay parse --syntax-only
run_relay full --no-cache
relay_s=$(cat "$TMP/relay-parse.s")
relay_rss=$(rss_kb "$TMP/relay-parse.time")
relay_rc=$(cat "$TMP/relay-parse.rc")
full_s=$(cat "$TMP/relay-full.s")
full_rss=$(rss_kb "$TMP/relay-full.time")
full_rc=$(cat "$TMP/relay-full.rc")
relay_note=""
if ((relay_rc > 1 || full_rc > 1)); then
    relay_note="FAILED (exit $relay_rc/$full_rc): $(tail -n 3 "$TMP/relay-full.err" | tr '\n' ' ')"
fi

# ---- gcc ---------------------------------------------------------------------------------------
gcc_err=0 gcc_warn=0 gcc_rss=0
: >"$TMP/gcc.rss"
t0=$(now)
for f in "${FILES[@]}"; do
    if /usr/bin/time -v -o "$TMP/gcc.time" gcc -fsyntax-only -x cpp-output "$f" >/dev/null 2>"$TMP/gcc.err"; then
        [[ ! -s $TMP/gcc.err ]] || gcc_warn=$((gcc_warn + 1))
    else
        gcc_err=$((gcc_err + 1))
    fi
    r=$(rss_kb "$TMP/gcc.time")
    printf '%s\t%s\n' "$r" "$f" >>"$TMP/gcc.rss"
    ((r <= gcc_rss)) || gcc_rss=$r
done
t1=$(now)
gcc_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')

# ---- table -------------------------------------------------------------------------------------
echo
printf '%-6s %10s %8s %14s  %s\n' side wall_s MB/s peak_RSS_MiB notes
printf '%-6s %10s %8s %14s  %s\n' relay "$relay_s" "$(fdiv "$BYTES" "$(awk -v s="$relay_s" 'BEGIN{print s*1e6}')")" \
    "$(mb "$relay_rss")" "parse only (--syntax-only); exit $relay_rc ${relay_note}"
printf '%-6s %10s %8s %14s  %s\n' relay+ "$full_s" "$(fdiv "$BYTES" "$(awk -v s="$full_s" 'BEGIN{print s*1e6}')")" \
    "$(mb "$full_rss")" "parse + lower + link; exit $full_rc"
printf '%-6s %10s %8s %14s  %s\n' gcc "$gcc_s" "$(fdiv "$BYTES" "$(awk -v s="$gcc_s" 'BEGIN{print s*1e6}')")" \
    "$(mb "$gcc_rss")" "max over files; $gcc_err files with errors, $gcc_warn more with warnings only"
echo "gcc_time / relay_time = $(fdiv "$gcc_s" "$relay_s") (parse only), $(fdiv "$gcc_s" "$full_s") (parse + lower + link)"
if ((relay_rc <= 1)); then
    python3 - "$TMP/relay-full.json" <<'EOF' || echo "relay: (could not read its JSON output)"
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"relay: JSON output unreadable: {e}"); sys.exit(0)
errs = d.get("errors")
nerr = len(errs) if isinstance(errs, list) else errs
print("relay: files={} clean_files={} functions={} skipped_decls={} bytes={} seconds={} errors={}".format(
    *(d.get(k) for k in ("files", "clean_files", "functions", "skipped_decls", "bytes", "seconds")), nerr))
print("relay ir: {}".format(d.get("ir")))
EOF
fi

# ---- per-TU memory -----------------------------------------------------------------------------
echo
echo "per-TU memory: relay parse -j1 --syntax-only FILE, alone"
: >"$TMP/empty.i"
set +e
/usr/bin/time -v -o "$TMP/one.time" "$RELAY" parse -j1 --syntax-only "$TMP/empty.i" >/dev/null 2>&1
rc=$?
set -e
base=$(rss_kb "$TMP/one.time")
printf '%10s %14s %9s %12s %6s  %s\n' size_MB relay_RSS_MiB RSS/size gcc_RSS_MiB exit file
printf '%10s %14s %9s %12s %6s  %s\n' 0 "$(mb "$base")" - - "$rc" "(empty .i: baseline)"
head -n "$NLARGEST" "$TMP/sizes" | while IFS=$'\t' read -r sz f; do
    set +e
    /usr/bin/time -v -o "$TMP/one.time" "$RELAY" parse -j1 --syntax-only "$f" >/dev/null 2>&1
    rc=$?
    set -e
    r=$(rss_kb "$TMP/one.time")
    g=$(awk -F'\t' -v f="$f" '$2 == f { print $1; exit }' "$TMP/gcc.rss")
    printf '%10s %14s %9s %12s %6s  %s\n' "$(fdiv "$sz" 1000000)" "$(mb "$r")" "$(fdiv "$((r * 1024))" "$sz")" \
        "$(mb "${g:-0}")" "$rc" "$f"
done
echo "(RSS/size = relay peak RSS bytes / .i bytes, baseline included; MiB = 2^20 bytes)"
[[ -z $relay_note ]] || exit 1
