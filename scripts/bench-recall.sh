#!/usr/bin/env bash
# Usage: scripts/bench-recall.sh [--rerun-tsan] [memcached] [fio]      (default: both)
#
# relay's recall against ThreadSanitizer ground truth, on Debian's memcached 1.6.18 and fio 3.33.
# Per program, under DEST/<prog>/ (DEST defaults to /work/corpus/recall, outside the repo):
#   1. apt-get install what is missing (dpkg-dev gcc make pkg-config time perl, libevent-dev,
#      libaio-dev, zlib1g-dev); add a deb-src entry if apt has none (as corpus-memcached.sh)
#   2. apt-get source <prog> into DEST/<prog>/src                                     (once)
#   3. configure with CFLAGS -fsanitize=thread -g -O1 (fio: optional engines off)   (stamped)
#   4. build under a logging compiler wrapper (memcached: memcached-debug, testapp, timedrun;
#      fio: fio); DEST/<prog>/compile_commands.json holds the units linked into the one
#      binary (memcached-debug / fio), flags as built minus -fsanitize               (stamped)
#   5. run a threaded workload under TSan, logs in DEST/<prog>/tsan/log.PID (stamped):
#      memcached: ./testapp, then prove on each t/*.t (timeout 120 s each, 15 min in all);
#      fio: 7 runs of --thread job files (psync/sync/mmap/libaio/..., verify, offload, stats
#      threads; not posixaio nor io_uring, which fail here under TSan), FIO_ROUNDS times (3)
#   6. parse the data-race reports into distinct line pairs: DEST/<prog>/tsan-pairs.json
#      (again when scripts/recall_match.py is newer; the logs are kept)
#   7. relay analyze --compile-commands ... --format json --no-cache (default options) under
#      /usr/bin/time -v: DEST/<prog>/relay.json, relay.time.txt, relay.stderr  (every run)
#   8. match (scripts/recall_match.py): a TSan pair is matched when a reported warning has
#      accesses at both lines (same file, either order); prints matched/total, warnings,
#      time and RSS; misses in DEST/<prog>/misses.txt grouped by a guessed cause (with
#      `relay callgraph`: is the function reached from a thread entry?), figures in recall.json
# Steps 2-6 are skipped when their results exist, so a re-run only repeats relay (minutes).
# --rerun-tsan runs the workload (5) and parsing (6) again; delete DEST/<prog> to start over.
# Env: RELAY (relay binary; default target/release/relay of this repo, built if missing),
#      DEST, JOBS (make -j, default 2), TSAN_BUDGET (seconds of workload per program, 900),
#      TSAN_OPTIONS_EXTRA (appended to the TSan options, e.g. history_size=7; --rerun-tsan).
set -euo pipefail

usage() { sed -n '2,31s/^# \{0,1\}//p' "$0" >&2; exit 2; }
RERUN=0
PROGS=()
for a in "$@"; do
    case $a in
        -h | --help) usage ;;
        --rerun-tsan) RERUN=1 ;;
        memcached | fio) PROGS+=("$a") ;;
        *) usage ;;
    esac
done
((${#PROGS[@]})) || PROGS=(memcached fio)

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
DEST=${DEST:-/work/corpus/recall}
JOBS=${JOBS:-2}
TSAN_BUDGET=${TSAN_BUDGET:-900}
mkdir -p "$DEST"
DEST=$(cd "$DEST" && pwd)
case $DEST/ in "$REPO"/*) echo "bench-recall: error: DEST must be outside the repository" >&2; exit 2 ;; esac
log() { printf '[bench-recall %s] %s\n' "$(date +%T)" "$*"; }
die() { printf 'bench-recall: error: %s\n' "$*" >&2; exit 1; }
# one run at a time per DEST (two workloads would mix their TSan logs)
exec 9>"$DEST/.lock"
flock -n 9 || die "another bench-recall.sh is running on $DEST"
T0=$SECONDS
export DEBIAN_FRONTEND=noninteractive
MATCH=$HERE/recall_match.py

RELAY=${RELAY:-$REPO/target/release/relay}
if [[ ! -x $RELAY ]]; then
    [[ $RELAY == "$REPO/target/release/relay" ]] || die "RELAY=$RELAY is not executable"
    log "cargo build --release (no $RELAY)"
    (cd "$REPO" && cargo build --release) || die "cargo build failed"
fi

# ---- 1. packages ---------------------------------------------------------------------------
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
apt_install() {
    apt-get install -y --no-install-recommends "$@" ||
        { apt-get update && apt-get install -y --no-install-recommends "$@"; }
}
need=()
for p in dpkg-dev gcc make pkg-config time perl python3 libevent-dev libaio-dev zlib1g-dev; do
    installed "$p" || need+=("$p")
done
if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    apt_install "${need[@]}" >/dev/null
fi
# libtsan's runtime comes with gcc (libtsan2); check that it links
if [[ ! -e $DEST/.stamp-tsan-ok ]]; then
    t=$(mktemp -d)
    printf 'int main(void){return 0;}\n' >"$t/t.c"
    gcc -fsanitize=thread "$t/t.c" -o "$t/t" && "$t/t" || die "gcc -fsanitize=thread does not work here"
    rm -rf "$t"
    touch "$DEST/.stamp-tsan-ok"
fi

# ---- 2. deb-src ------------------------------------------------------------------------------
# shellcheck source=lib/deb-src.sh
. "$HERE/lib/deb-src.sh"

# The logging compiler wrapper (scripts/lib/cc-log.py), installed outside the repository.
WRAP=$DEST/bin/cc-log
mkdir -p "$DEST/bin"
install -m 755 "$HERE/lib/cc-log.py" "$WRAP"
TSAN_CFLAGS="-fsanitize=thread -g -O1"
TSAN_OPTS="report_signal_unsafe=0 halt_on_error=0 history_size=4 second_deadlock_stack=1 exitcode=0 ${TSAN_OPTIONS_EXTRA:-}"

# ---- 3-4. source, configure, build ---------------------------------------------------------
fetch() { # prog marker-file -> sets SRC
    local prog=$1 marker=$2 d=$DEST/$1/src
    SRC=$( [[ -d $d ]] && find "$d" -mindepth 2 -maxdepth 2 -name "$marker" -printf '%h\n' -quit || true)
    if [[ -z $SRC ]]; then
        ensure_deb_src
        mkdir -p "$d"
        log "$prog: apt-get source $prog (into $d)"
        # As root, apt warns that its _apt user cannot write here; the download still works.
        (cd "$d" && apt-get source "$prog" 2>&1 | grep -v 'as root as file' | tail -n 2)
        SRC=$(find "$d" -mindepth 2 -maxdepth 2 -name "$marker" -printf '%h\n' -quit)
        [[ -n $SRC ]] || die "apt-get source $prog left no $marker under $d"
    fi
    SRC=$(cd "$SRC" && pwd -P)
}

build() { # prog binary make-targets...
    local prog=$1 bin=$2 D=$DEST/$1
    shift 2
    local t have=1
    for t in "$@"; do [[ -x $SRC/$t ]] || have=0; done
    if [[ ! -e $D/.stamp-built || ! -s $D/compile_commands.json ]] || ((!have)); then
        rm -f "$D/.stamp-built" "$D/cc-log.jsonl"
        log "$prog: make clean; make -j$JOBS $* under the wrapper (log: $D/build.log)"
        (cd "$SRC" && make clean >/dev/null 2>&1 || true)
        "configure_$prog" # fio's `make clean` removes its configuration
        (cd "$SRC" && CC_LOG=$D/cc-log.jsonl make -j"$JOBS" "$@") >"$D/build.log" 2>&1 ||
            { tail -n 30 "$D/build.log" >&2; die "$prog: build failed"; }
        [[ -x $SRC/$bin ]] || die "$prog: make finished but $SRC/$bin was not built"
        python3 "$MATCH" ccj "$D/cc-log.jsonl" "$bin" "$SRC" "$D/compile_commands.json"
        touch "$D/.stamp-built"
        rm -f "$D/.stamp-tsan" # a new build needs a new workload run
    fi
}

configure_memcached() {
    local D=$DEST/memcached
    if [[ ! -e $D/.stamp-configured || ! -e $SRC/Makefile ]]; then
        log "memcached: ./configure --disable-coverage CC=cc-log CFLAGS='$TSAN_CFLAGS' (log: $D/configure.log)"
        (cd "$SRC" && ./configure --disable-coverage CC="$WRAP" CFLAGS="$TSAN_CFLAGS" LDFLAGS=-fsanitize=thread) \
            >"$D/configure.log" 2>&1 || { tail -n 20 "$D/configure.log" >&2; die "memcached: configure failed"; }
        touch "$D/.stamp-configured"
        rm -f "$D/.stamp-built"
    fi
}

configure_fio() {
    local D=$DEST/fio
    if [[ ! -e $D/.stamp-configured || ! -e $SRC/config-host.mak ]]; then
        log "fio: ./configure --cc=cc-log --extra-cflags='$TSAN_CFLAGS' (log: $D/configure.log)"
        # Optional engines and libraries off: only what the workload below uses is built.
        (cd "$SRC" && LDFLAGS=-fsanitize=thread ./configure --cc="$WRAP" --extra-cflags="$TSAN_CFLAGS" \
            --disable-optimizations --disable-native --disable-numa --disable-rdma --disable-rados \
            --disable-rbd --disable-http --disable-gfapi --disable-pmem --disable-xnvme \
            --disable-libzbc --disable-tcmalloc --disable-dfs --disable-libnfs) \
            >"$D/configure.log" 2>&1 || { tail -n 20 "$D/configure.log" >&2; die "fio: configure failed"; }
        touch "$D/.stamp-configured"
        rm -f "$D/.stamp-built"
    fi
}

# ---- 5. workloads --------------------------------------------------------------------------
deadline() { echo $((SECONDS + TSAN_BUDGET)); }
left() { local l=$(($1 - SECONDS)); ((l > 0)) && echo "$l" || echo 0; }

workload_memcached() {
    local D=$DEST/memcached end t rc n_ok=0 n_fail=0 n_skip=0 n_cut=0
    end=$(deadline)
    export TSAN_OPTIONS="$TSAN_OPTS log_path=$D/tsan/log"
    cd "$SRC"
    log "memcached: ./testapp (log: $D/workload.log)"
    rc=0; timeout 300 ./testapp >>"$D/workload.log" 2>&1 9>&- || rc=$?
    echo "== testapp: exit $rc" >>"$D/workload.log"
    for t in t/*.t; do
        local l
        l=$(left "$end")
        if ((l < 10)); then
            echo "== $t: not run (workload budget of ${TSAN_BUDGET}s spent)" >>"$D/workload.log"
            n_cut=$((n_cut + 1)); continue
        fi
        ((l > 120)) && l=120
        case $t in
            t/whitespace.t) # needs a git checkout
                echo "== $t: skipped (needs git)" >>"$D/workload.log"; n_skip=$((n_skip + 1)); continue ;;
        esac
        rc=0
        timeout -k 5 "$l" prove "$t" >>"$D/workload.log" 2>&1 9>&- || rc=$?
        if ((rc == 0)); then n_ok=$((n_ok + 1)); echo "== $t: ok" >>"$D/workload.log"
        elif ((rc == 124 || rc == 137)); then n_fail=$((n_fail + 1)); echo "== $t: timed out after ${l}s" >>"$D/workload.log"
        else n_fail=$((n_fail + 1)); echo "== $t: exit $rc" >>"$D/workload.log"; fi
    done
    # servers started by a test that timed out: ours only (this tree's memcached-debug)
    local pids
    pids=$(pgrep -x memcached-debug -d ' ' || true)
    for p in $pids; do
        [[ $(readlink -f "/proc/$p/exe" 2>/dev/null) == "$SRC/memcached-debug" ]] && kill "$p" 2>/dev/null || true
    done
    local skipped
    skipped=$(grep -cE '^t/.*skipped' "$D/workload.log" || true)
    log "memcached: t/*.t: $n_ok passed, $n_fail failed or timed out, $n_skip not run (whitespace.t: needs git), $n_cut cut by the budget; $skipped test files skipped themselves (see $D/workload.log)"
    cd - >/dev/null
}

workload_fio() {
    local D=$DEST/fio end rc jobdir w
    end=$(deadline)
    export TSAN_OPTIONS="$TSAN_OPTS log_path=$D/tsan/log"
    w=$(mktemp -d /tmp/bench-recall-fio.XXXXXX)
    jobdir=$D/jobs
    mkdir -p "$jobdir"
    # engines: the sync ones, libaio (built when libaio-dev is installed), null, cpuio and the
    # file-operation ones. Not posixaio (glibc starts its aio threads behind TSan's back: fio
    # crashes or hangs) nor io_uring (io_uring_enter fails here with ENOTTY).
    cat >"$jobdir/engines.fio" <<EOF
[global]
thread
directory=$w
size=16M
bs=4k
rw=randrw
time_based
runtime=6
numjobs=4
write_bw_log=$w/bw
write_lat_log=$w/lat
write_iops_log=$w/iops
log_avg_msec=500
write_hist_log=$w/hist
log_hist_msec=500

[psync]
ioengine=psync
[sync]
ioengine=sync
fsync=8
[mmap]
ioengine=mmap
[libaio]
ioengine=libaio
iodepth=8
[pvsync2]
ioengine=pvsync2
[vsync]
ioengine=vsync
rw=randwrite
[null]
ioengine=null
size=64M
[cpu]
ioengine=cpuio
cpuload=30
cpuchunks=1000
numjobs=2
[filecreate]
ioengine=filecreate
nrfiles=64
filesize=4k
numjobs=2
runtime=2
EOF
    # verification, with async verify threads
    cat >"$jobdir/verify.fio" <<EOF
[global]
thread
directory=$w
size=8M
bs=4k
numjobs=4

[verify-crc32c]
ioengine=psync
rw=randwrite
verify=crc32c
verify_async=2
do_verify=1
[verify-md5]
ioengine=libaio
iodepth=4
rw=write
verify=md5
[verify-meta]
ioengine=sync
rw=randwrite
verify=meta
verify_backlog=64
verify_dump=0
EOF
    # offloaded submission (the rate-submit workqueue); one job: with more it hangs under TSan
    cat >"$jobdir/offload.fio" <<EOF
[offload-rw]
thread
directory=$w
size=8M
bs=4k
ioengine=psync
rw=randrw
io_submit_mode=offload
iodepth=4
time_based
runtime=4
EOF
    # shared files with locking, rate limits, thinktime, several files per job; steady state
    # (a reporting group of its own)
    cat >"$jobdir/shared.fio" <<EOF
[global]
thread
directory=$w
time_based
runtime=6
bs=4k

[locked-excl]
filename=shared1
size=4M
ioengine=psync
rw=randrw
lockfile=exclusive
numjobs=4
[locked-rw]
filename=shared2
size=4M
ioengine=sync
rw=randrw
lockfile=readwrite
numjobs=4
[rated]
ioengine=psync
rw=randread
size=4M
rate_iops=500
rate_process=poisson
thinktime=200
thinktime_blocks=4
numjobs=2
[files]
ioengine=psync
rw=randrw
nrfiles=8
openfiles=3
filesize=1M
file_service_type=random
numjobs=2
[steady]
stonewall
new_group
ioengine=psync
rw=randread
size=4M
ss=iops:50%
ss_dur=2
ss_ramp=1
numjobs=2
EOF
    cd "$w"
    local n=0
    # Each run is capped (they take 10-30 s): the offload job sometimes hangs under TSan (job
    # thread and workqueue workers all in pthread_cond_wait). What a killed run logged is kept.
    # --idle-prof=percpu with shared.fio (lockfile, steady state) runs no job: used elsewhere.
    # CAP(s) JOBFILE OPTIONS...
    local specs=(
        "120 engines.fio --status-interval=1 --eta=always --eta-newline=1"
        "120 verify.fio --eta=always --output-format=json+,normal"
        "120 shared.fio --status-interval=1 --eta=always"
        "120 engines.fio --eta=never --output-format=terse --group_reporting=1 --idle-prof=percpu"
        "60 offload.fio --status-interval=1 --eta=always"
        "120 shared.fio --eta=always --group_reporting=1 --output-format=json+"
        "120 verify.fio --eta=never --output-format=json"
    )
    # The list runs FIO_ROUNDS times (default 3): which races TSan reports (and which earlier
    # stacks it can still restore) varies from run to run; the union is steadier.
    local spec cap args round
    for round in $(seq "${FIO_ROUNDS:-3}"); do
    for spec in "${specs[@]}"; do
        read -r cap args <<<"$spec"
        local l
        l=$(left "$end")
        ((l >= 10)) || { log "fio: workload budget spent; skipping: $args"; continue; }
        ((l > cap)) && l=$cap
        n=$((n + 1))
        log "fio: run $n (round $round): fio --thread $args (timeout ${l}s)"
        rc=0
        # shellcheck disable=SC2086
        timeout -k 5 "$l" "$SRC/fio" $jobdir/$args >"$D/workload.$n.log" 2>&1 9>&- || rc=$?
        ((rc == 0)) || log "fio: run $n exited $rc (see $D/workload.$n.log)"
        rm -rf "${w:?}"/*
    done
    done
    cd - >/dev/null
    rm -rf "$w"
}

# ---- 6-8. per program ----------------------------------------------------------------------
declare -A SUMMARY
run_prog() {
    local prog=$1 bin D=$DEST/$1
    mkdir -p "$D"
    case $prog in
        memcached) bin=memcached-debug; fetch memcached memcached.c; configure_memcached
                   build memcached memcached-debug memcached-debug testapp timedrun ;;
        fio)       bin=fio; fetch fio fio.c; configure_fio; build fio fio fio ;;
    esac
    log "$prog: source $SRC"
    if ((RERUN)); then rm -f "$D/.stamp-tsan"; fi
    if [[ ! -e $D/.stamp-tsan ]]; then
        rm -rf "$D/tsan" "$D"/workload*.log "$D/tsan-pairs.json"
        mkdir -p "$D/tsan"
        local t1=$SECONDS
        "workload_$prog"
        log "$prog: workload done in $((SECONDS - t1)) s; $(ls "$D/tsan" | wc -l) TSan log files"
        touch "$D/.stamp-tsan"
    fi
    # the logs are kept: parse again only when the parser changed since (seconds)
    if [[ ! -s $D/tsan-pairs.json || $MATCH -nt $D/tsan-pairs.json ]]; then
        python3 "$MATCH" tsan "$D/tsan" "$SRC" "$bin" "$D/tsan-pairs.json"
    else
        log "$prog: TSan pairs cached ($D/tsan-pairs.json; --rerun-tsan to run the workload again)"
    fi
    log "$prog: relay analyze --compile-commands $D/compile_commands.json --format json --no-cache"
    local rc=0
    (cd "$D" && /usr/bin/time -v -o "$D/relay.time.txt" "$RELAY" analyze --compile-commands "$D/compile_commands.json" \
        --format json --no-cache -o "$D/relay.json" 2>"$D/relay.stderr") || rc=$?
    ((rc <= 1)) || { tail -n 20 "$D/relay.stderr" >&2; die "$prog: relay analyze exited $rc (see $D/relay.stderr)"; }
    local wall rss
    wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$D/relay.time.txt")
    rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$D/relay.time.txt")
    local cdir
    cdir=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["directory"])' "$D/compile_commands.json")
    # the call graph (seconds) tells which missed functions relay does not reach at all
    "$RELAY" callgraph --compile-commands "$D/compile_commands.json" --format json \
        >"$D/relay-callgraph.json" 2>"$D/relay-callgraph.stderr" ||
        { rc=$?; ((rc <= 1)) || die "$prog: relay callgraph exited $rc (see $D/relay-callgraph.stderr)"; }
    local out
    out=$(python3 "$MATCH" match "$D/tsan-pairs.json" "$D/relay.json" "$SRC" "$cdir" "$prog" \
        "$D/misses.txt" "$D/recall.json" "$D/relay-callgraph.json")
    printf '%s\n' "$out"
    echo "$prog: relay time $wall, peak RSS $((rss / 1024)) MB; misses: $D/misses.txt"
    python3 - "$D/recall.json" "$wall" "$rss" <<'PY'
import json, sys
p, wall, rss = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(p)); s["relay_wall"] = wall; s["relay_peak_rss_kb"] = rss
json.dump(s, open(p, "w"), indent=1)
PY
    SUMMARY[$prog]=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print("%-10s %6d %8d %7.1f%% %9d %9d %10s %8d" % (s["program"], s["tsan_pairs"], s["matched"], s["recall_percent"], s["at_least_one_side"], s["relay_warnings"], s["relay_wall"], s["relay_peak_rss_kb"]//1024))' "$D/recall.json")
}

for prog in "${PROGS[@]}"; do run_prog "$prog"; done
echo
printf '%-10s %6s %8s %8s %9s %9s %10s %8s\n' program pairs matched recall one-side warnings time RSS_MB
for prog in "${PROGS[@]}"; do echo "${SUMMARY[$prog]}"; done
log "done in $((SECONDS - T0)) s (relay: $RELAY)"
