#!/usr/bin/env bash
# Usage: scripts/bench-false-alarms.sh [zstd] [redis] [lbzip2] [pixz] [sqlite]   (default: all)
#
# relay's false alarms: default warnings on threaded programs where ThreadSanitizer saw no race.
# Per program, under DEST/<prog>/ (DEST defaults to /work/corpus/false-alarms, outside the repo):
#   1. apt-get install what is missing (dpkg-dev gcc make time python3 pkg-config autoconf
#      automake, liblzma-dev libarchive-dev for pixz)
#   2. apt-get source <package> into DEST/<prog>/src (deb-src entry added if apt has none, as
#      corpus-memcached.sh). When the mirror lacks the .debian.tar.xz (404) but has the
#      .orig tarball, that is unpacked without Debian's patches (logged, "debian_patches":
#      false in the summary)                                                              (once)
#   3. configure and build under a logging compiler wrapper; DEST/<prog>/compile_commands.json
#      holds the units linked into the one threaded binary ({directory, file, arguments,
#      output}, flags as built, no file twice), checked against the expected count  (stamped)
#        zstd    libzstd 1.5.4: make -C programs zstd (ZSTD_MULTITHREAD; HAVE_ZLIB/LZMA/LZ4=0 so
#                the corpus does not depend on what is installed; MOREFLAGS=-pthread, since the
#                Makefile passes -pthread to the link only): 42 units
#        redis   7.0.15: make MALLOC=libc USE_SYSTEMD=no redis-server (bundled deps built, not
#                recorded): the 89 src/*.c units of redis-server
#        lbzip2  2.5: ./configure && make (lib/fseterr.c given gnulib's glibc-2.28 fix when
#                it still has the old test: the bundled gnulib predates it): 10 units
#        pixz    1.0.7: autoreconf -fi (the orig tarball has no configure), ./configure
#                --without-manpage && make: 7 units
#        sqlite  the amalgamation of scripts/corpus-sqlite.sh DEST/sqlite, one entry:
#                gcc -DSQLITE_THREADSAFE=1 -c sqlite3.c (the flags its sqlite3.i has);
#                analysed with --entry-roots (a library)
#   4. every run: relay analyze --compile-commands DEST/<prog>/compile_commands.json
#      --format json --no-cache -j2 [--entry-roots] $RELAY_FLAGS -o DEST/<prog>/relay.json
#      under /usr/bin/time -v (relay.time.txt, relay.stderr); warnings = entries of the
#      top-level "warnings" array. With BASE set, BASE runs first (base.json, base.time.txt)
# Prints one table (program, version, units, warnings base -> relay, wall time, peak RSS) and
# writes DEST/summary.json (this run's programs) and DEST/<prog>/result.json.
# A program whose build or analysis fails is reported and skipped; the exit status is then 1.
# Steps 2-3 are skipped when their results exist; delete DEST/<prog> to start that one over.
# Env: RELAY (default target/release/relay of this repo), BASE (a second relay binary to
#      compare with), DEST, JOBS (make -j, default 2), RELAY_JOBS (relay -j, default 2),
#      RELAY_FLAGS (extra relay analyze flags for every program and both binaries).
set -euo pipefail

usage() { sed -n '2,41s/^# \{0,1\}//p' "$0" >&2; exit 2; }
ALL=(zstd redis lbzip2 pixz sqlite)
PROGS=()
for a in "$@"; do
    case $a in
        -h | --help) usage ;;
        zstd | redis | lbzip2 | pixz | sqlite) [[ " ${PROGS[*]} " == *" $a "* ]] || PROGS+=("$a") ;;
        *) usage ;;
    esac
done
((${#PROGS[@]})) || PROGS=("${ALL[@]}")

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
DEST=${DEST:-/work/corpus/false-alarms}
JOBS=${JOBS:-2}
RELAY_JOBS=${RELAY_JOBS:-2}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
case $DEST/ in "$REPO"/*) echo "bench-false-alarms: error: DEST must be outside the repository" >&2; exit 2 ;; esac
log() { printf '[bench-false-alarms %s] %s\n' "$(date +%T)" "$*"; }
die() { printf 'bench-false-alarms: error: %s\n' "$*" >&2; exit 1; }
exec 9>"$DEST/.lock"
flock -n 9 || die "another bench-false-alarms.sh is running on $DEST"
T0=$SECONDS
export DEBIAN_FRONTEND=noninteractive

RELAY=${RELAY:-$REPO/target/release/relay}
[[ -x $RELAY ]] || die "RELAY=$RELAY is not executable (cargo build --release, or set RELAY)"
RELAY=$(readlink -f "$RELAY")
BASE=${BASE:-}
if [[ -n $BASE ]]; then
    [[ -x $BASE ]] || die "BASE=$BASE is not executable"
    BASE=$(readlink -f "$BASE")
fi
read -r -a USER_FLAGS <<<"${RELAY_FLAGS:-}"

# ---- 1. packages ---------------------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
apt_install() {
    apt-get install -y --no-install-recommends "$@" ||
        { apt-get update && apt-get install -y --no-install-recommends "$@"; }
}
want=(dpkg-dev gcc make time python3)
for prog in "${PROGS[@]}"; do
    case $prog in
        pixz) want+=(pkg-config autoconf automake liblzma-dev libarchive-dev) ;;
    esac
done
need=()
for p in "${want[@]}"; do
    [[ " ${need[*]} " == *" $p "* ]] || installed "$p" || need+=("$p")
done
if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    apt_install "${need[@]}" >/dev/null
fi

# ---- 2. deb-src ----------------------------------------------------------------------------
# shellcheck source=lib/deb-src.sh
. "$HERE/lib/deb-src.sh"

# The logging compiler wrapper (scripts/lib/cc-log.py), installed outside the repository.
WRAP=$DEST/bin/cc-log
mkdir -p "$DEST/bin"
install -m 755 "$HERE/lib/cc-log.py" "$WRAP"

# fetch PROG PACKAGE MARKER -> sets SRC (the unpacked tree, holding MARKER, a relative path)
fetch() {
    local prog=$1 pkg=$2 marker=$3 d=$DEST/$1/src t
    find_src() {
        [[ -d $d ]] || return 0
        for t in "$d"/*/; do [[ -e $t$marker ]] && { echo "${t%/}"; return 0; }; done
        return 0
    }
    SRC=$(find_src)
    if [[ -z $SRC ]]; then
        ensure_deb_src
        mkdir -p "$d"
        log "$prog: apt-get source $pkg (into $d)"
        # As root, apt warns that its _apt user cannot write here; the download still works.
        (cd "$d" && apt-get source "$pkg" 2>&1 | grep -v 'as root as file' | tail -n 3) || true
        SRC=$(find_src)
        if [[ -z $SRC ]]; then
            # The mirror may serve the .dsc and the .orig tarball but not the .debian.tar.xz.
            local orig
            orig=$(find "$d" -maxdepth 1 -name "${pkg}_*.orig.tar.*" ! -name '*.asc' -print -quit)
            [[ -n $orig ]] || die "$prog: apt-get source $pkg left neither a tree holding $marker nor an .orig tarball in $d"
            log "$prog: WARNING: no Debian tree (the .debian.tar.* did not download); unpacking $(basename "$orig") without Debian's patches"
            tar -xf "$orig" -C "$d"
            touch "$d/.no-debian-patches"
            SRC=$(find_src)
            [[ -n $SRC ]] || die "$prog: $(basename "$orig") has no $marker"
        fi
    fi
    SRC=$(cd "$SRC" && pwd -P)
}

# write_meta PROG PACKAGE EXPECTED BINARY: DEST/<prog>/meta.json (versions from the .dsc)
write_meta() {
    local prog=$1 D=$DEST/$1
    python3 - "$D/meta.json" "$prog" "$2" "$3" "$4" "$SRC" "$D/src" <<'PY'
import glob, json, os, re, sys
out, prog, pkg, expected, binary, src, d = sys.argv[1:]
dsc = sorted(glob.glob(os.path.join(d, f"{pkg}_*.dsc")))
ver = None
if dsc:
    m = re.search(r"^Version:\s*(\S+)", open(dsc[-1]).read(), re.M)
    ver = m.group(1) if m else None
up = ver.split(":", 1)[-1].rsplit("-", 1)[0] if ver else None
up_plain = re.split(r"[+~]", up)[0] if up else None
json.dump({"program": prog, "source_package": pkg, "debian_version": ver,
           "upstream_version": up_plain, "expected_version": expected,
           "version_as_expected": up_plain == expected,
           "debian_patches": not os.path.exists(os.path.join(d, ".no-debian-patches")),
           "source": src, "binary": binary}, open(out, "w"), indent=1)
PY
}

# make_ccj PROG BINARY-PATH (relative to SRC): DEST/<prog>/compile_commands.json from the
# wrapper's log: the `-c` entries whose object the last link writing BINARY-PATH takes
make_ccj() {
    local prog=$1 bin=$SRC/$2 D=$DEST/$1
    python3 - "$D/cc-log.jsonl" "$bin" "$D/compile_commands.json.part" <<'PY' || die "$prog: no compile_commands.json"
import json, os, sys
raw, binary, out = sys.argv[1:]
entries = [json.loads(l) for l in open(raw) if l.strip()]
links = [e for e in entries if "-c" not in e["arguments"] and e.get("output")
         and os.path.normpath(e["output"]) == os.path.normpath(binary)]
if not links:
    # zstd links into programs/obj/conf_<hash>/zstd and copies it to programs/zstd
    links = [e for e in entries if "-c" not in e["arguments"] and e.get("output")
             and os.path.basename(e["output"]) == os.path.basename(binary)
             and os.path.normpath(e["output"]).startswith(os.path.dirname(binary) + os.sep)]
if not links:
    sys.exit(f"bench-false-alarms: error: {raw}: no link command writing {binary}")
link = links[-1]
objs = [os.path.normpath(os.path.join(link["directory"], a))
        for a in link["arguments"][1:] if a.endswith(".o") and not a.startswith("-")]
by_out = {}
for e in entries:
    if "-c" in e["arguments"] and e.get("output") and e.get("file"):
        by_out[os.path.normpath(e["output"])] = e  # the last compilation of each object
keep, missing, seen = [], [], set()
for o in objs:
    if o in seen:
        continue
    seen.add(o)
    e = by_out.get(o)
    if e is None:
        missing.append(o)
        continue
    keep.append({"directory": e["directory"], "file": e["file"], "arguments": e["arguments"],
                 "output": e["output"]})
if missing:
    # an object not compiled from C (zstd's huf_decompress_amd64.S)
    print(f"bench-false-alarms: note: {len(missing)} linked object(s) without a C compilation: "
          f"{' '.join(os.path.basename(m) for m in missing)}", file=sys.stderr)
files = [os.path.normpath(e["file"]) for e in keep]
dups = sorted({f for f in files if files.count(f) > 1})
if dups:
    sys.exit(f"bench-false-alarms: error: files compiled into more than one object: {' '.join(dups)}")
json.dump(keep, open(out, "w"), indent=2)
PY
}

# check_ccj PROG EXPECTED-UNITS REQUIRED-FLAG,... REQUIRED-FILE...: the count, the flags in
# every entry, the files present; prints the units
check_ccj() {
    local prog=$1 D=$DEST/$1
    shift
    python3 - "$D/compile_commands.json.part" "$prog" "$@" <<'PY' || die "$prog: compile_commands.json fails its check (kept as $D/compile_commands.json.part)"
import json, os, sys
ccj, prog, expected, flags, *required = sys.argv[1:]
entries = json.load(open(ccj))
names = [os.path.basename(e["file"]) for e in entries]
bad = []
if len(entries) != int(expected):
    bad.append(f"{len(entries)} units, expected {expected}")
for f in filter(None, flags.split(",")):
    lacking = [os.path.basename(e["file"]) for e in entries if f not in e["arguments"]]
    if lacking:
        bad.append(f"{f} missing from {len(lacking)} entries ({' '.join(lacking[:5])} ...)")
for r in required:
    if r not in names:
        bad.append(f"no entry for {r}")
for e in entries:
    if not os.path.isfile(os.path.join(e["directory"], e["file"])):
        bad.append(f"no such file: {e['file']}")
print(f"bench-false-alarms: {prog}: {len(entries)} units: {' '.join(sorted(names))}")
for b in bad:
    print(f"bench-false-alarms: {prog}: error: {b}", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
    mv "$D/compile_commands.json.part" "$D/compile_commands.json"
}

# build PROG BINARY MAKE-DIR MAKE-ARGS...: make clean; make under the wrapper (stamped)
build() {
    local prog=$1 bin=$2 dir=$3 D=$DEST/$1
    shift 3
    rm -f "$D/.stamp-built" "$D/cc-log.jsonl" "$D/compile_commands.json"
    (cd "$dir" && make clean >/dev/null 2>&1 || true)
    local rel=${dir#"$SRC"}
    rel=${rel#/}
    log "$prog: make -j$JOBS $* (in ${rel:-.}, CC=cc-log; log: $D/build.log)"
    (cd "$dir" && CC_LOG=$D/cc-log.jsonl make -j"$JOBS" CC="$WRAP" "$@") >"$D/build.log" 2>&1 ||
        { tail -n 30 "$D/build.log" >&2; die "$prog: build failed"; }
    [[ -x $SRC/$bin ]] || die "$prog: make finished but $SRC/$bin was not built"
    make_ccj "$prog" "$bin"
}

# ---- 3. per program: fetch, configure, build, record ---------------------------------------
prepare_zstd() {
    local D=$DEST/zstd
    fetch zstd libzstd programs/zstdcli.c
    write_meta zstd libzstd 1.5.4 programs/zstd
    [[ -e $D/.stamp-built && -s $D/compile_commands.json ]] && return 0
    # programs/Makefile: the zstd target adds -DZSTD_MULTITHREAD to CPPFLAGS when pthread links,
    # but -pthread to LDFLAGS only (the link): MOREFLAGS puts it on the compilations too.
    build zstd programs/zstd "$SRC/programs" zstd HAVE_ZLIB=0 HAVE_LZMA=0 HAVE_LZ4=0 MOREFLAGS=-pthread
    check_ccj zstd 42 -DZSTD_MULTITHREAD,-pthread zstdcli.c fileio.c fileio_asyncio.c \
        pool.c threading.c zstdmt_compress.c zstd_compress.c zstd_decompress.c zdict.c zstd_v07.c
    touch "$D/.stamp-built"
}

prepare_redis() {
    local D=$DEST/redis
    fetch redis redis src/server.c
    write_meta redis redis 7.0.15 src/redis-server
    [[ -e $D/.stamp-built && -s $D/compile_commands.json ]] && return 0
    # `make distclean` too: a new build must not reuse deps built with other settings
    (cd "$SRC" && make distclean >/dev/null 2>&1 || true)
    build redis src/redis-server "$SRC" MALLOC=libc USE_SYSTEMD=no redis-server
    check_ccj redis 89 -DREDIS_STATIC= server.c networking.c bio.c lazyfree.c replication.c \
        module.c evict.c
    touch "$D/.stamp-built"
}

prepare_lbzip2() {
    local D=$DEST/lbzip2
    fetch lbzip2 lbzip2 src/main.c
    write_meta lbzip2 lbzip2 2.5 src/lbzip2
    [[ -e $D/.stamp-built && -s $D/compile_commands.json ]] && return 0
    if [[ ! -e $D/.stamp-configured || ! -e $SRC/Makefile ]]; then
        # The bundled gnulib (2014) stops on glibc >= 2.28 ("Please port gnulib fseterr.c");
        # gnulib's own fix also tests _IO_EOF_SEEN, which glibc still defines. (Debian
        # re-imports gnulib instead; its patches are needed for that.)
        if grep -q '^#if defined _IO_ftrylockfile || __GNU_LIBRARY__ == 1' "$SRC/lib/fseterr.c"; then
            log "lbzip2: lib/fseterr.c: gnulib's glibc-2.28 fix (#if defined _IO_EOF_SEEN || ...)"
            sed -i 's/^#if defined _IO_ftrylockfile || __GNU_LIBRARY__ == 1/#if defined _IO_EOF_SEEN || defined _IO_ftrylockfile || __GNU_LIBRARY__ == 1/' \
                "$SRC/lib/fseterr.c"
        fi
        log "lbzip2: ./configure CC=cc-log (log: $D/configure.log)"
        (cd "$SRC" && ./configure CC="$WRAP") >"$D/configure.log" 2>&1 ||
            { tail -n 20 "$D/configure.log" >&2; die "lbzip2: configure failed"; }
        touch "$D/.stamp-configured"
    fi
    build lbzip2 src/lbzip2 "$SRC"
    check_ccj lbzip2 10 "" main.c process.c compress.c decode.c expand.c signals.c
    touch "$D/.stamp-built"
}

prepare_pixz() {
    local D=$DEST/pixz
    fetch pixz pixz src/pixz.c
    write_meta pixz pixz 1.0.7 src/pixz
    [[ -e $D/.stamp-built && -s $D/compile_commands.json ]] && return 0
    if [[ ! -e $D/.stamp-configured || ! -e $SRC/Makefile ]]; then
        if [[ ! -x $SRC/configure ]]; then
            log "pixz: autoreconf -fi (log: $D/autoreconf.log)"
            (cd "$SRC" && autoreconf -fi) >"$D/autoreconf.log" 2>&1 ||
                { tail -n 20 "$D/autoreconf.log" >&2; die "pixz: autoreconf failed"; }
        fi
        log "pixz: ./configure --without-manpage CC=cc-log (log: $D/configure.log)"
        (cd "$SRC" && ./configure --without-manpage CC="$WRAP") >"$D/configure.log" 2>&1 ||
            { tail -n 20 "$D/configure.log" >&2; die "pixz: configure failed"; }
        touch "$D/.stamp-configured"
    fi
    build pixz src/pixz "$SRC"
    # no -pthread: AX_PTHREAD finds that glibc >= 2.34 needs no flag (PTHREAD_CFLAGS empty)
    check_ccj pixz 7 "" pixz.c common.c read.c write.c list.c cpu.c endian.c
    touch "$D/.stamp-built"
}

prepare_sqlite() {
    local D=$DEST/sqlite
    # corpus-sqlite.sh is idempotent (nothing to do once D/sqlite3.i exists)
    "$HERE/corpus-sqlite.sh" "$D" || die "sqlite: scripts/corpus-sqlite.sh failed"
    SRC=$D
    local ver
    ver=$(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$D/sqlite3.h" | head -n 1)
    python3 - "$D/meta.json" "$ver" "$(cat "$D/SOURCE" 2>/dev/null || echo unknown)" "$D" <<'PY'
import json, sys
out, ver, source, d = sys.argv[1:]
json.dump({"program": "sqlite", "source_package": f"amalgamation from the {source} crate "
           "(scripts/corpus-sqlite.sh)", "debian_version": None, "upstream_version": ver,
           "expected_version": None, "version_as_expected": True, "debian_patches": False,
           "source": d, "binary": None}, open(out, "w"), indent=1)
PY
    [[ -e $D/.stamp-built && -s $D/compile_commands.json ]] && return 0
    # the flags corpus-sqlite.sh preprocesses sqlite3.i with; check that they are in effect
    local flags=(-DSQLITE_THREADSAFE=1) v
    local args=(gcc "${flags[@]}" -c sqlite3.c -o sqlite3.o)
    v=$(cd "$D" && gcc "${flags[@]}" -E -dM sqlite3.c | sed -n 's/^#define SQLITE_THREADSAFE //p')
    [[ $v == 1 ]] || die "sqlite: SQLITE_THREADSAFE is '$v' with ${flags[*]}, not 1"
    python3 - "$D" "$D/compile_commands.json.part" "${args[@]}" <<'PY'
import json, os, sys
d, out, *args = sys.argv[1:]
json.dump([{"directory": d, "file": os.path.join(d, "sqlite3.c"), "arguments": args,
            "output": os.path.join(d, "sqlite3.o")}], open(out, "w"), indent=2)
PY
    check_ccj sqlite 1 -DSQLITE_THREADSAFE=1 sqlite3.c
    log "sqlite: SQLITE_THREADSAFE=$v in effect (gcc -E -dM)"
    touch "$D/.stamp-built"
}

# ---- 4. relay ------------------------------------------------------------------------------
extra_flags() { case $1 in sqlite) echo --entry-roots ;; esac; }

# analyze PROG LABEL BINARY: DEST/<prog>/LABEL.json, LABEL.time.txt, LABEL.stderr and
# LABEL.figures.json ({warnings, wall_s, peak_rss_kb, exit}); returns 1 when relay fails
analyze() {
    local prog=$1 label=$2 bin=$3 D=$DEST/$1 rc=0
    local extra
    read -r -a extra <<<"$(extra_flags "$prog")"
    local cmd=("$bin" analyze --compile-commands "$D/compile_commands.json" --format json --no-cache
        -j"$RELAY_JOBS" "${extra[@]}" "${USER_FLAGS[@]}" -o "$D/$label.json")
    log "$prog: [$label] ${cmd[*]}"
    rm -f "$D/$label.json" "$D/$label.figures.json"
    (cd "$D" && /usr/bin/time -v -o "$D/$label.time.txt" "${cmd[@]}" 2>"$D/$label.stderr") || rc=$?
    if ((rc > 1)) || [[ ! -s $D/$label.json ]]; then
        tail -n 20 "$D/$label.stderr" >&2
        log "$prog: [$label] relay analyze exited $rc (see $D/$label.stderr)"
        return 1
    fi
    local out
    out=$(python3 - "$D/$label.json" "$D/$label.time.txt" "$rc" "$D/$label.figures.json" <<'PY'
import json, re, sys
report, timef, rc, out = sys.argv[1:]
# The reports reach gigabytes (redis: ~1.8 GB): the top-level object is read as a stream, each
# element of "warnings" decoded and dropped in turn, the other members kept.
dec = json.JSONDecoder()
class Stream:
    def __init__(self, f): self.f, self.buf, self.pos, self.eof = f, "", 0, False
    def more(self):
        chunk = "" if self.eof else self.f.read(1 << 24)
        if not chunk:
            self.eof = True
            return False
        self.buf, self.pos = self.buf[self.pos:] + chunk, 0
        return True
    def peek(self):
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < len(self.buf) or not self.more():
                return self.buf[self.pos:self.pos + 1]
    def take(self, chars):
        c = self.peek()
        if not c or c not in chars:
            sys.exit(f"bench-false-alarms: error: {report}: expected one of {chars!r}, got {c!r}")
        self.pos += 1
        return c
    def value(self):
        self.peek()
        while True:
            try:
                v, end = dec.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.eof:  # a number may go on in the next chunk
                    self.pos = end
                    return v
            except json.JSONDecodeError:
                if self.eof:
                    raise
            self.more()
s, top, n = Stream(open(report, encoding="utf-8")), {}, None
s.take("{")
while s.peek() != "}":
    key = s.value()
    s.take(":")
    if key == "warnings":
        s.take("[")
        n = 0
        if s.peek() == "]":
            s.take("]")
        else:
            while True:
                s.value()
                n += 1
                if s.take(",]") == "]":
                    break
    else:
        top[key] = s.value()
    if s.take(",}") == "}":
        break
if n is None:
    sys.exit(f"bench-false-alarms: error: {report}: no top-level \"warnings\" array")
r = {"stats": top.get("stats", {})}
t = open(timef).read()
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
secs = 0.0
for part in wall.split(":"):
    secs = secs * 60 + float(part)
rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1))
stated = r.get("stats", {}).get("warnings_reported")
if stated is not None and stated != n:
    print(f"bench-false-alarms: note: {report}: {n} warnings, stats say {stated}", file=sys.stderr)
json.dump({"warnings": n, "wall": wall, "wall_s": round(secs, 2), "peak_rss_kb": rss,
           "exit": int(rc), "report": report}, open(out, "w"), indent=1)
print(f"{n} warnings, {secs:.1f} s, peak RSS {rss // 1024} MB")
PY
) || return 1
    log "$prog: [$label] $out"
}

FAILED=()
for prog in "${PROGS[@]}"; do
    D=$DEST/$prog
    mkdir -p "$D"
    rm -f "$D/result.json"
    set +e
    (set -e; "prepare_$prog")
    rc=$?
    set -e
    if ((rc)); then
        log "$prog: FAILED to prepare the corpus (see the messages above)"
        FAILED+=("$prog")
        continue
    fi
    log "$prog: $(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print("%s%s (upstream %s%s)%s" % (m["source_package"], " " + m["debian_version"] if m["debian_version"] else "", m["upstream_version"], "" if m["version_as_expected"] else ", NOT the expected " + m["expected_version"], "" if m["debian_patches"] or m["debian_version"] is None else "; WITHOUT Debian patches"))' "$D/meta.json")"
    ok=1
    if [[ -n $BASE ]]; then
        analyze "$prog" base "$BASE" || ok=0
    fi
    if ((ok)); then
        analyze "$prog" relay "$RELAY" || ok=0
    fi
    if ((!ok)); then
        FAILED+=("$prog")
        continue
    fi
    python3 - "$D" "$([[ -n $BASE ]] && echo 1 || echo 0)" "$(extra_flags "$prog")" "${RELAY_FLAGS:-}" <<'PY'
import json, os, sys
d, has_base, extra, user = sys.argv[1:]
m = json.load(open(os.path.join(d, "meta.json")))
m["units"] = len(json.load(open(os.path.join(d, "compile_commands.json"))))
m["compile_commands"] = os.path.join(d, "compile_commands.json")
m["relay_flags"] = extra.split() + user.split()
m["relay"] = json.load(open(os.path.join(d, "relay.figures.json")))
m["base"] = json.load(open(os.path.join(d, "base.figures.json"))) if has_base == "1" else None
json.dump(m, open(os.path.join(d, "result.json"), "w"), indent=1)
PY
done

# ---- summary -------------------------------------------------------------------------------
python3 - "$DEST" "$RELAY" "$BASE" "${PROGS[@]}" <<'PY'
import json, os, sys, time
dest, relay, base, *progs = sys.argv[1:]
rows, results = [], []
def mb(kb): return f"{kb // 1024}"
for p in progs:
    f = os.path.join(dest, p, "result.json")
    if not os.path.exists(f):
        results.append({"program": p, "failed": True})
        rows.append((p, "-", "-", "FAILED", "-", "-"))
        continue
    r = json.load(open(f))
    results.append(r)
    ver = r["debian_version"] or r["upstream_version"] or "?"
    b, n = r["base"], r["relay"]
    if b:
        w = f"{b['warnings']} -> {n['warnings']}"
        t = f"{b['wall_s']:.1f} -> {n['wall_s']:.1f}"
        m = f"{mb(b['peak_rss_kb'])} -> {mb(n['peak_rss_kb'])}"
    else:
        w, t, m = str(n["warnings"]), f"{n['wall_s']:.1f}", mb(n["peak_rss_kb"])
    rows.append((p, ver, str(r["units"]), w, t, m))
head = ("program", "version", "units", "warnings" + (" (base -> relay)" if base else ""),
        "wall s", "peak RSS MB")
widths = [max(len(x[i]) for x in rows + [head]) for i in range(len(head))]
print()
for row in [head] + rows:
    print("  ".join(c.ljust(widths[i]) if i < 2 else c.rjust(widths[i]) for i, c in enumerate(row)))
json.dump({"date": time.strftime("%Y-%m-%dT%H:%M:%S"), "relay": relay, "base": base or None,
           "programs": results}, open(os.path.join(dest, "summary.json"), "w"), indent=1)
print(f"\nsummary: {os.path.join(dest, 'summary.json')}")
PY
log "done in $((SECONDS - T0)) s (relay: $RELAY${BASE:+; base: $BASE})"
if ((${#FAILED[@]})); then
    log "FAILED: ${FAILED[*]}"
    exit 1
fi
