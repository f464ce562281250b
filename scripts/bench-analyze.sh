#!/usr/bin/env bash
# Usage: scripts/bench-analyze.sh NAME=PATHS [NAME=PATHS ...]
#   e.g. scripts/bench-analyze.sh sqlite=/work/corpus/sqlite/sqlite3.i \
#          memcached=cc:/work/corpus/memcached/compile_commands.json \
#          linux-subset="/work/corpus/linux/linux-i/kernel /work/corpus/linux/linux-i/mm"
#
# PATHS is a space-separated list of .i/.c files and directories (searched for *.i and *.c,
# as relay does), and at most one `cc:FILE`, meaning `--compile-commands FILE`.
# For each corpus runs, in the same run and on the same inputs, under /usr/bin/time -v:
#   gcc -fsyntax-only -w over every input ($JOBS at a time): .i/.c files as they are; each
#     compile_commands entry as its own command, in its directory, with -c, -o X and the
#     dependency-output flags (-M*) dropped and -fsyntax-only -w added; then
#   relay analyze -j$JOBS --format json -o $OUTDIR/NAME.json PATHS
#     (exit 0 = no warnings, 1 = warnings: both count as success; 2 = errors)
# and prints one row per corpus: inputs, gcc wall seconds, relay wall seconds and peak RSS,
# warnings reported and warnings before filters (from the JSON's .stats).
# Env: RELAY (default target/release/relay, built if missing), JOBS (default 2),
#      OUTDIR (default /tmp/bench-analyze: NAME.json, NAME.relay.err, NAME.gcc.err kept there).
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,18s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RELAY=${RELAY:-$ROOT/target/release/relay}
JOBS=${JOBS:-2}
OUTDIR=${OUTDIR:-/tmp/bench-analyze}
die() { printf 'bench-analyze: error: %s\n' "$*" >&2; exit 1; }
[[ -x /usr/bin/time ]] || apt-get install -y --no-install-recommends time >/dev/null
command -v python3 >/dev/null || die "python3 not found"
[[ -x $RELAY ]] || (cd "$ROOT" && cargo build --release >&2)
if ! "$RELAY" analyze --help >/dev/null 2>&1; then
    die "$RELAY has no 'analyze' subcommand ('relay analyze --help' failed); build a relay that has it (cargo build --release) or point RELAY at one"
fi
mkdir -p "$OUTDIR"
OUTDIR=$(cd "$OUTDIR" && pwd)

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# wall seconds from `/usr/bin/time -v` output ("h:mm:ss" or "m:ss.ss")
wall() { awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%.2f", s}' "$1"; }
rss_mib() { awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$1"; }

printf '%-14s %6s %8s %8s %6s %8s %9s %15s\n' corpus files gcc_s relay_s x_gcc rss_MiB warnings before_filters
status=0
for spec in "$@"; do
    [[ $spec == *=* ]] || die "'$spec' is not NAME=PATHS"
    name=${spec%%=*}
    paths=${spec#*=}
    relay_args=()
    cc=
    # shellcheck disable=SC2086
    for p in $paths; do
        if [[ $p == cc:* ]]; then
            [[ -z $cc ]] || die "$name: relay takes one --compile-commands; '$paths' names two"
            cc=${p#cc:}
            [[ -f $cc ]] || die "$name: no such compile_commands file: $cc"
            relay_args+=(--compile-commands "$cc")
        else
            [[ -e $p ]] || die "$name: no such file or directory: $p"
            relay_args+=("$p")
        fi
    done

    # One shell command per input, each one gcc -fsyntax-only; failures are appended to gcc.fail.
    python3 - "$TMP/gcc.cmds" "$TMP/gcc.fail" "${relay_args[@]}" <<'PY'
import json, os, shlex, sys
out, fail, args = sys.argv[1], sys.argv[2], sys.argv[3:]
cmds = []
def add(cmd, where, label):
    q = shlex.quote
    cmds.append(f"cd {q(where)} && {cmd} || echo {q(label)} >>{q(fail)}")
def files(p):
    if os.path.isdir(p):
        for d, subdirs, fs in os.walk(p):
            subdirs.sort()
            for f in sorted(fs):
                if f.endswith((".i", ".c")):
                    yield os.path.join(d, f)
    else:
        yield p
it = iter(args)
for a in it:
    if a == "--compile-commands":
        cc = next(it)
        for e in json.load(open(cc)):
            argv = e.get("arguments") or shlex.split(e["command"])
            keep, skip = [argv[0]], False
            for x in argv[1:]:
                if skip:
                    skip = False
                elif x in ("-o", "-MF", "-MT", "-MQ"):
                    skip = True
                elif x in ("-c", "-S", "-E", "-MD", "-MMD", "-MP", "-M", "-MM") or \
                        x.startswith(("-o", "-MF", "-Wp,-MD", "-Wp,-MMD")):
                    pass
                else:
                    keep.append(x)
            keep += ["-fsyntax-only", "-w"]
            add(shlex.join(keep), e["directory"], os.path.join(e["directory"], e["file"]))
    else:
        for f in files(a):
            add("gcc -fsyntax-only -w " + shlex.quote(os.path.abspath(f)), ".", f)
open(out, "w").write("".join(c + "\n" for c in cmds))
PY
    nfiles=$(wc -l <"$TMP/gcc.cmds")
    : >"$TMP/gcc.fail"
    /usr/bin/time -v -o "$TMP/time.gcc" xargs -d '\n' -n 1 -P "$JOBS" sh -c \
        <"$TMP/gcc.cmds" >/dev/null 2>"$OUTDIR/$name.gcc.err" || true
    gcc_s=$(wall "$TMP/time.gcc")
    gcc_fail=$(wc -l <"$TMP/gcc.fail")

    json=$OUTDIR/$name.json
    rm -f "$json"
    rc=0
    /usr/bin/time -v -o "$TMP/time.relay" "$RELAY" analyze --no-cache -j"$JOBS" --format json -o "$json" \
        "${relay_args[@]}" >/dev/null 2>"$OUTDIR/$name.relay.err" || rc=$?
    # /usr/bin/time exits with the command's status (or 127/126 if it could not run it)
    relay_s=$(wall "$TMP/time.relay")
    rss=$(rss_mib "$TMP/time.relay")
    if ((rc > 1)); then
        status=1
        printf '%-14s %6s %8s %8s %6s %8s  relay analyze exited %d (stderr: %s):\n' \
            "$name" "$nfiles" "$gcc_s" "$relay_s" - "${rss:--}" "$rc" "$OUTDIR/$name.relay.err"
        tail -n 5 "$OUTDIR/$name.relay.err" | sed 's/^/    /'
    else
        python3 - "$json" "$name" "$nfiles" "$gcc_s" "$relay_s" "$rss" "$rc" <<'PY' || status=1
import json, sys
path, name, nfiles, gcc_s, relay_s, rss, rc = sys.argv[1:]
ratio = f"{float(relay_s) / float(gcc_s):.1f}" if float(gcc_s) > 0 else "-"
try:
    s = json.load(open(path))["stats"]
    rep, before = s["warnings_reported"], s["warnings_before_filters"]
except Exception as e:
    print(f"{name:<14} {nfiles:>6} {gcc_s:>8} {relay_s:>8} {ratio:>6} {rss:>8}  cannot read {path}: {e!r}")
    sys.exit(1)
note = "" if (rep > 0) == (rc == "1") else f"  (exit {rc} disagrees with the count)"
print(f"{name:<14} {nfiles:>6} {gcc_s:>8} {relay_s:>8} {ratio:>6} {rss:>8} {rep:>9} {before:>15}{note}")
PY
    fi
    ((gcc_fail == 0)) || echo "    gcc -fsyntax-only failed on $gcc_fail of $nfiles inputs (see $OUTDIR/$name.gcc.err)"
done
echo "(JOBS=$JOBS; times are wall seconds, gcc with $JOBS processes at a time; rss = peak RSS of the"
echo " whole relay run; x_gcc = relay_s / gcc_s; reports and stderr in $OUTDIR)"
exit $status
