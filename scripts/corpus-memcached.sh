#!/usr/bin/env bash
# Usage: scripts/corpus-memcached.sh [DEST]        (DEST defaults to /work/corpus/memcached)
#
# A compile_commands.json corpus: Debian's memcached source package, configured and built.
#   1. apt-get install dpkg-dev gcc make libevent-dev python3 (those missing), and bear
#      if the mirror has it (otherwise a small logging compiler wrapper is used, step 5)
#   2. if apt has no deb-src entry, add one (DEST-independent file
#      /etc/apt/sources.list.d/relay-deb-src.sources) mirroring the first configured
#      `deb` entry of Debian's main archive, then apt-get update
#   3. apt-get source memcached into DEST/src (unpacked, Debian patches applied)   (once)
#   4. ./configure in the unpacked tree                                              (once, stamped)
#   5. make clean; make -j$JOBS memcached under `bear` (or with CC=the wrapper), recording
#      every compiler invocation; only the daemon is built (not memcached-debug, whose
#      entries would duplicate each .c, nor the test programs)                     (once)
#   6. writes DEST/compile_commands.json (entries {directory, file, arguments, output})
#      and checks it: one entry per memcached-*.o object of the daemon, no file twice,
#      memcached.c items.c slabs.c thread.c assoc.c among them
# Idempotent: each step is skipped when its result exists (delete DEST/compile_commands.json
# to rebuild and re-record; delete DEST to start over). JOBS (env) defaults to 1;
# RECORDER=wrapper (env) uses the wrapper even where bear is installed.
# Nothing fetched here belongs in the repository; keep DEST outside it.
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help || $# -gt 1 ]]; then
    sed -n '2,21s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
DEST=${1:-/work/corpus/memcached}
JOBS=${JOBS:-1}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
CCJ=$DEST/compile_commands.json
log() { printf '[corpus-memcached %s] %s\n' "$(date +%T)" "$*"; }
die() { printf 'corpus-memcached: error: %s\n' "$*" >&2; exit 1; }
T0=$SECONDS
export DEBIAN_FRONTEND=noninteractive

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
apt_install() {
    apt-get install -y --no-install-recommends "$@" ||
        { apt-get update && apt-get install -y --no-install-recommends "$@"; }
}

# ---- 1. packages ---------------------------------------------------------------------------
need=()
for p in dpkg-dev gcc make libevent-dev pkg-config; do installed "$p" || need+=("$p"); done
command -v python3 >/dev/null || need+=(python3)
if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    apt_install "${need[@]}" >/dev/null
fi
HAVE_BEAR=0
if [[ ${RECORDER:-} == wrapper ]]; then
    :
elif command -v bear >/dev/null; then
    HAVE_BEAR=1
elif [[ ! -s $CCJ ]]; then
    log "apt-get install bear"
    if apt_install bear >/dev/null 2>&1 && command -v bear >/dev/null; then
        HAVE_BEAR=1
    else
        log "bear is not installable here; recording with a compiler wrapper instead"
    fi
fi

# ---- 2. deb-src ----------------------------------------------------------------------------
# shellcheck source=lib/deb-src.sh
. "$(dirname "$0")/lib/deb-src.sh"
src_dir() { [[ -d $DEST/src ]] || return 0; find "$DEST/src" -mindepth 2 -maxdepth 2 -name memcached.c -printf '%h\n' -quit; }
SRC=$(src_dir)
[[ -n $SRC ]] || ensure_deb_src

# ---- 3. source -----------------------------------------------------------------------------
if [[ -z $SRC ]]; then
    mkdir -p "$DEST/src"
    log "apt-get source memcached (into $DEST/src)"
    # As root, apt warns that its _apt user cannot write here; the download still works.
    (cd "$DEST/src" && apt-get source memcached 2>&1 | grep -v 'as root as file' | tail -n 3)
    SRC=$(src_dir)
    [[ -n $SRC ]] || die "apt-get source memcached left no memcached.c under $DEST/src"
fi
log "source: $SRC"
cd "$SRC"

# ---- 4. configure --------------------------------------------------------------------------
if [[ ! -e $DEST/.stamp-configured || ! -e $SRC/Makefile ]]; then
    log "./configure (log: $DEST/configure.log)"
    ./configure >"$DEST/configure.log" 2>&1 || { tail -n 20 "$DEST/configure.log" >&2; die "configure failed"; }
    touch "$DEST/.stamp-configured"
fi

# ---- 5. build, recording -------------------------------------------------------------------
if [[ ! -s $CCJ ]]; then
    log "make clean"
    make clean >/dev/null 2>&1 || true
    RAW=$DEST/compile_commands.raw.json
    rm -f "$RAW"
    if ((HAVE_BEAR)); then
        log "bear -- make -j$JOBS memcached (log: $DEST/build.log)"
        bear --output "$RAW" -- make -j"$JOBS" memcached >"$DEST/build.log" 2>&1 ||
            { tail -n 20 "$DEST/build.log" >&2; die "build failed"; }
    else
        # A wrapper that appends {directory, file, arguments, output} for each `-c X.c`
        # invocation to a JSON-lines log, then runs gcc with the same arguments.
        WRAP=$DEST/bin/cc-log
        mkdir -p "$DEST/bin"
        cat >"$WRAP" <<'PY'
#!/usr/bin/env python3
import fcntl, json, os, sys
args = sys.argv[1:]
if "-c" in args:
    srcs = [a for a in args if a.endswith(".c") and not a.startswith("-")]
    out = next((args[i + 1] for i, a in enumerate(args[:-1]) if a == "-o"), None)
    with open(os.environ["CC_LOG"], "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        for s in srcs:
            e = {"directory": os.getcwd(), "file": os.path.abspath(s),
                 "arguments": ["gcc"] + args}
            if out: e["output"] = os.path.abspath(out)
            f.write(json.dumps(e) + "\n")
os.execvp("gcc", ["gcc"] + args)
PY
        chmod +x "$WRAP"
        rm -f "$DEST/cc-log.jsonl"
        log "make -j$JOBS memcached CC=$WRAP (log: $DEST/build.log)"
        CC_LOG=$DEST/cc-log.jsonl make -j"$JOBS" memcached CC="$WRAP" >"$DEST/build.log" 2>&1 ||
            { tail -n 20 "$DEST/build.log" >&2; die "build failed"; }
        python3 -c 'import json,sys; json.dump([json.loads(l) for l in open(sys.argv[1])], open(sys.argv[2],"w"), indent=2)' \
            "$DEST/cc-log.jsonl" "$RAW"
    fi
    [[ -x $SRC/memcached ]] || die "make finished but $SRC/memcached was not built"
    # Keep the daemon's compilations only (make memcached also runs none else today, but a
    # configure-time or generated-source compilation would not be one of its TUs).
    python3 - "$RAW" "$CCJ.part" <<'PY'
import json, os, sys
raw, out = sys.argv[1:]
keep = []
for e in json.load(open(raw)):
    args = e.get("arguments") or []
    if "-c" not in args or not e["file"].endswith(".c"):
        continue
    keep.append(e)
json.dump(keep, open(out, "w"), indent=2)
PY
    mv "$CCJ.part" "$CCJ"
    rm -f "$RAW"
fi

# ---- 6. check ------------------------------------------------------------------------------
python3 - "$CCJ" "$SRC" <<'PY'
import glob, json, os, sys
ccj, src = sys.argv[1:]
entries = json.load(open(ccj))
files = [os.path.normpath(os.path.join(e["directory"], e["file"])) for e in entries]
names = sorted(os.path.basename(f) for f in files)
dups = sorted({n for n in names if names.count(n) > 1})
# automake names the daemon's objects memcached-<stem>.o
objs = sorted(os.path.basename(o)[len("memcached-"):-2] + ".c"
              for o in glob.glob(os.path.join(src, "memcached-*.o")))
missing = sorted(set(objs) - set(names))
extra = sorted(set(names) - set(objs))
core = ["memcached.c", "items.c", "slabs.c", "thread.c", "assoc.c"]
lost = [c for c in core if c not in names]
print(f"corpus-memcached: {ccj}: {len(entries)} entries, {len(set(names))} distinct .c files; "
      f"{len(objs)} memcached-*.o objects built")
print("corpus-memcached: files: " + " ".join(names))
bad = False
if dups: print(f"corpus-memcached: error: files recorded more than once: {' '.join(dups)}"); bad = True
if missing: print(f"corpus-memcached: error: objects without an entry: {' '.join(missing)}"); bad = True
if extra: print(f"corpus-memcached: note: entries without a memcached-*.o: {' '.join(extra)}")
if lost: print(f"corpus-memcached: error: core daemon files missing: {' '.join(lost)}"); bad = True
for e in entries:
    if not os.path.isfile(os.path.join(e["directory"], e["file"])):
        print(f"corpus-memcached: error: no such file: {e['file']}"); bad = True
sys.exit(1 if bad else 0)
PY
log "done in $((SECONDS - T0)) s: relay parse --compile-commands $CCJ"
