# Sourced by the corpus and benchmark scripts that fetch Debian source packages.
# ensure_deb_src: if apt has no deb-src entry, adds one (/etc/apt/sources.list.d/
# relay-deb-src.sources) mirroring the first `deb` entry of Debian's main archive (deb822 or
# one-line format, not -security/-updates/-backports), then runs apt-get update.
# The caller defines log MESSAGE and die MESSAGE.

have_deb_src() {
    grep -qsE '^[[:space:]]*deb-src[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list ||
        grep -qsE '^[[:space:]]*Types:.*\bdeb-src\b' /etc/apt/sources.list.d/*.sources
}
ensure_deb_src() {
    have_deb_src && return 0
    local entry _fmt uri suite signed f
    entry=$(python3 - <<'PY'
import glob, re
def stanzas(path):
    cur = {}
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if not line.strip():
            if cur: yield cur
            cur = {}
        elif not line.lstrip().startswith("#") and ":" in line and not line[0].isspace():
            k, v = line.split(":", 1)
            cur[k.strip().lower()] = v.strip()
    if cur: yield cur
for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
    for s in stanzas(path):
        if (s.get("enabled", "yes") != "no" and "deb" in s.get("types", "").split()
                and "main" in s.get("components", "").split()
                and not any(x.endswith(("-security", "-updates", "-backports")) for x in s.get("suites", "").split()[:1])):
            print("deb822"); print(s["uris"].split()[0]); print(s["suites"].split()[0])
            print(s.get("signed-by", "")); raise SystemExit
for path in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")):
    try: lines = open(path, errors="replace").read().splitlines()
    except OSError: continue
    for line in lines:
        m = re.match(r"\s*deb\s+(\[[^\]]*\]\s+)?(\S+)\s+(\S+)\s+(.*\bmain\b.*)", line)
        if m and not m.group(3).endswith(("-security", "-updates", "-backports")):
            print("list"); print(m.group(2)); print(m.group(3)); print(""); raise SystemExit
PY
)
    [[ -n $entry ]] || die "no deb-src entry and no Debian 'deb ... main' entry to derive one from"
    { read -r _fmt; read -r uri; read -r suite; read -r signed; } <<<"$entry"
    f=/etc/apt/sources.list.d/relay-deb-src.sources
    log "no deb-src entry in apt's sources: adding $f ($uri $suite main)"
    {
        echo "Types: deb-src"
        echo "URIs: $uri"
        echo "Suites: $suite"
        echo "Components: main"
        [[ -z $signed ]] || echo "Signed-By: $signed"
    } >"$f"
    log "apt-get update"
    apt-get update >/dev/null
}

