#!/usr/bin/env bash
# Usage: scripts/corpus-linux.sh OUT [DIRS...]
#   e.g. scripts/corpus-linux.sh /work/corpus/linux kernel/ mm/ drivers/net/ethernet/intel/e1000/
#        scripts/corpus-linux.sh /work/corpus/linux            # every TU of x86_64 defconfig
#
# Preprocessed Linux kernel TUs from Debian's linux-source-6.1 (x86_64 defconfig):
#   1. apt-get install linux-source-6.1 and the build deps of `make prepare`
#   2. unpack /usr/src/linux-source-6.1.tar.xz to OUT/linux-source-6.1            (once)
#   3. make defconfig; make prepare                                               (once each, stamped)
#   4. list the TUs the config compiles in DIRS (default: the whole `all` target) from
#      `make -n -k DIRS`: every target compiler command (has -nostdinc, so host tools
#      under scripts/ are left out) of the form `-c -o OBJ.o SRC.c`. The list, with each
#      TU's exact compile command, is cached in OUT/lists/<dirs>.tsv. (`make -n` lists only
#      objects not built yet, so target .o files are deleted before listing.)
#   5. preprocess each listed TU to OUT/linux-i/OBJ.i (mirrors the tree; OBJ not SRC, since
#      e.g. libstub's lib-cmdline.o is lib/cmdline.c with other flags):
#      a. `make -k -jJOBS OBJ.i ...` (Kbuild's .i rule uses the real compile flags), in batches;
#      b. for the failures, `make -k OBJ.o ...` first (about 25 units need generated headers
#         that only the .o's prerequisites produce), delete those .o, and `make OBJ.i` again;
#      c. for what still fails (no Kbuild .i rule: libstub's lib-*.o; arch/x86/realmode/rm/*,
#         whose flags the .i rule gets wrong), run the recorded compile command itself with
#         `-c` replaced by `-E` and the -Wp,-MMD dependency output dropped.
#   Prints how many TUs were listed, preprocessed (by which step) and failed (and which).
# Idempotent: TUs whose OUT/linux-i/OBJ.i exists are skipped. JOBS (env, default 2) bounds
# the parallelism of every make. Keep OUT outside the repository (e.g. /work/corpus/linux).
set -euo pipefail

if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,25s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
OUT=$1
shift
# Kbuild builds a directory only when it is named with a trailing slash (`make -n kernel`
# lists nothing): add it.
DIRS=()
for d in "$@"; do
    DIRS+=("${d%/}/")
done
JOBS=${JOBS:-2}
BATCH=${BATCH:-150}
VER=6.1
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
SRC=$OUT/linux-source-$VER
IOUT=$OUT/linux-i
log() { printf '[corpus-linux %s] %s\n' "$(date +%T)" "$*"; }
T0=$SECONDS

# ---- 1. packages ---------------------------------------------------------------------------
pkgs=("linux-source-$VER" make gcc flex bison bc libelf-dev libssl-dev xz-utils cpio perl python3)
need=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || need+=("$p")
done
if ((${#need[@]})); then
    log "apt-get install ${need[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${need[@]}" ||
        { apt-get update && apt-get install -y --no-install-recommends "${need[@]}"; }
fi

# ---- 2. unpack -----------------------------------------------------------------------------
if [[ ! -e $OUT/.stamp-unpacked ]]; then
    log "unpacking /usr/src/linux-source-$VER.tar.xz"
    rm -rf "$SRC"
    tar -xJf /usr/src/linux-source-$VER.tar.xz -C "$OUT"
    touch "$OUT/.stamp-unpacked"
fi
cd "$SRC"

# ---- 3. configure --------------------------------------------------------------------------
if [[ ! -e $OUT/.stamp-defconfig ]]; then
    log "make defconfig"
    make -s defconfig
    touch "$OUT/.stamp-defconfig"
fi
if [[ ! -e $OUT/.stamp-prepare ]]; then
    log "make prepare"
    nice make -s -j"$JOBS" prepare
    touch "$OUT/.stamp-prepare"
fi

# ---- 4. list the TUs -----------------------------------------------------------------------
if ((${#DIRS[@]})); then
    key=$(printf '%s\n' "${DIRS[@]}" | sed 's:/*$::' | tr '/\n' '_+' | sed 's/+$//')
    ((${#key} <= 100)) || key=$(printf '%s' "$key" | md5sum | cut -c1-16)
else
    key=ALL
fi
LIST=$OUT/lists/$key.tsv # OBJ.o <TAB> SRC.c <TAB> compile command
mkdir -p "$OUT/lists" "$IOUT"
if [[ ! -s $LIST ]]; then
    # `make -n` prints the command only of objects not built yet, and step 5b's `make X.o`
    # also builds some prerequisite objects (e.g. the vDSO's): delete every target object
    # (host tools under scripts/ and tools/ are kept) so that the listing is complete.
    find . -name '*.o' -not -path './scripts/*' -not -path './tools/*' -delete
    log "listing: make -n -k ${DIRS[*]:-(all)}"
    make -n -k "${DIRS[@]}" >"$OUT/lists/$key.make-n.log" 2>"$OUT/lists/$key.make-n.err" || true
    python3 - "$OUT/lists/$key.make-n.log" "${DIRS[@]}" >"$LIST.part" <<'EOF'
import re, sys
log, dirs = sys.argv[1], [d.rstrip('/') + '/' for d in sys.argv[2:]]
pat = re.compile(r'\s-c\s+-o\s+(\S+\.o)\s+(\S+\.c)(?=\s|$)')
seen = {}
for line in open(log, errors='replace'):
    if ' -c ' not in line or '-nostdinc' not in line:
        continue
    for seg in line.split(';'):
        seg = seg.strip()
        # skip fixdep's quoted copy of the command and echo/trap wrappers
        if not seg or seg.startswith(('scripts/basic/fixdep', 'echo', 'trap', 'printf')) or "'" in seg.split()[0]:
            continue
        if '-nostdinc' not in seg:
            continue
        m = pat.search(seg)
        if not m:
            continue
        obj, src = m.group(1), m.group(2)
        if dirs and not any(obj.startswith(d) for d in dirs):
            continue
        seen.setdefault(obj, (src, seg))
for obj in sorted(seen):
    src, cmd = seen[obj]
    print(f'{obj}\t{src}\t{cmd}')
EOF
    mv "$LIST.part" "$LIST"
fi
listed=$(wc -l <"$LIST")
log "$listed TUs listed ($LIST)"

# ---- 5. preprocess -------------------------------------------------------------------------
# Results per TU go to OUT/lists/$key.status: OBJ <TAB> how (have|make-i|after-o|cmd-E|FAILED)
STATUS=$OUT/lists/$key.status
: >"$STATUS"
todo=()
while IFS=$'\t' read -r obj _ _; do
    if [[ -s $IOUT/${obj%.o}.i ]]; then
        printf '%s\thave\n' "$obj" >>"$STATUS"
    else
        todo+=("$obj")
    fi
done <"$LIST"
log "${#todo[@]} to preprocess ($((listed - ${#todo[@]})) already in $IOUT)"

# Move the .i of each given OBJ out of the tree; print the OBJs that have none.
collect() {
    local how=$1 obj i
    shift
    for obj in "$@"; do
        i=${obj%.o}.i
        if [[ -s $i ]]; then
            mkdir -p "$IOUT/$(dirname "$i")"
            mv -f "$i" "$IOUT/$i"
            printf '%s\t%s\n' "$obj" "$how" >>"$STATUS"
        else
            rm -f "$i"
            echo "$obj"
        fi
    done
}

# make TARGET_SUFFIX OBJ... in batches of $BATCH, errors tolerated (-k); prints failed OBJs
make_batches() {
    local how=$1 suffix=$2 n=0 total
    shift 2
    local objs=("$@")
    total=${#objs[@]}
    while ((n < total)); do
        local batch=("${objs[@]:n:BATCH}") targets=() o
        for o in "${batch[@]}"; do targets+=("${o%.o}$suffix"); done
        nice make -k -j"$JOBS" "${targets[@]}" >>"$OUT/lists/$key.make.log" 2>&1 || true
        n=$((n + ${#batch[@]}))
        [[ $suffix != .i ]] || collect "$how" "${batch[@]}"
        printf '[corpus-linux %s] %s: %d/%d\n' "$(date +%T)" "make *$suffix" "$n" "$total" >&2
    done
}

failed=()
if ((${#todo[@]})); then
    : >"$OUT/lists/$key.make.log"
    # 5a
    mapfile -t failed < <(make_batches make-i .i "${todo[@]}")
    # 5b
    if ((${#failed[@]})); then
        log "${#failed[@]} failed 'make X.i'; building their .o for generated headers, then retrying"
        make_batches - .o "${failed[@]}"
        for o in "${failed[@]}"; do rm -f "$o"; done # keep `make -n` listing them
        mapfile -t failed < <(make_batches after-o .i "${failed[@]}")
    fi
    # 5c
    if ((${#failed[@]})); then
        log "${#failed[@]} still failing; running their recorded compile command with -E"
        declare -A CMD
        while IFS=$'\t' read -r obj _ cmd; do CMD[$obj]=$cmd; done <"$LIST"
        still=()
        for obj in "${failed[@]}"; do
            i=${obj%.o}.i
            cmd=${CMD[$obj]}
            cmd=$(printf '%s' "$cmd" | sed -E "s# -Wp,-MMD,[^ ]+# #; s# -c -o [^ ]+\\.o # -E -o $i #")
            if nice sh -c "$cmd" >>"$OUT/lists/$key.make.log" 2>&1; then
                r=$(collect cmd-E "$obj")
                [[ -z $r ]] || still+=("$obj")
            else
                rm -f "$i"
                still+=("$obj")
            fi
        done
        failed=("${still[@]}")
    fi
    for o in "${failed[@]}"; do printf '%s\tFAILED\n' "$o" >>"$STATUS"; done
fi

# ---- report --------------------------------------------------------------------------------
bytes=0
while IFS=$'\t' read -r obj how; do
    [[ $how == FAILED ]] || bytes=$((bytes + $(stat -c %s "$IOUT/${obj%.o}.i")))
done <"$STATUS"
echo
echo "corpus-linux: dirs: ${DIRS[*]:-(whole defconfig)}"
echo "corpus-linux: listed:        $listed"
echo "corpus-linux: preprocessed:  $(grep -vc $'\tFAILED$' "$STATUS" || true)  ($(cut -f2 "$STATUS" | grep -v FAILED | sort | uniq -c | awk '{printf "%s%s %s", (NR>1?", ":""), $2, $1}'))"
echo "corpus-linux: failed:        ${#failed[@]}"
for o in "${failed[@]}"; do echo "  FAILED $o"; done
echo "corpus-linux: bytes of .i:   $bytes ($(awk -v b="$bytes" 'BEGIN{printf "%.2f GiB", b/2^30}'))"
echo "corpus-linux: .i files in:   $IOUT  (status per TU: $STATUS)"
echo "corpus-linux: took $((SECONDS - T0)) s"
