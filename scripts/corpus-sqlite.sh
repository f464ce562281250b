#!/usr/bin/env bash
# Usage: scripts/corpus-sqlite.sh OUT
#
# Fetches the SQLite amalgamation bundled in the `libsqlite3-sys` crate (crates.io,
# through plain cargo: a throwaway project depending on it with feature "bundled",
# `cargo fetch`, then `cargo metadata` to find the unpacked crate), copies
# sqlite3.c/sqlite3.h to OUT/ and preprocesses it, keeping line markers:
#   gcc -E -DSQLITE_THREADSAFE=1 sqlite3.c -o OUT/sqlite3.i
# Idempotent: does nothing if OUT/sqlite3.i already exists (delete it to redo).
# Nothing fetched here belongs in the repository; put OUT outside it (e.g. /work/corpus/sqlite).
set -euo pipefail

if [[ $# -ne 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,10s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
OUT=$1
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)

if [[ -s $OUT/sqlite3.i ]]; then
    echo "corpus-sqlite: $OUT/sqlite3.i already exists ($(stat -c %s "$OUT/sqlite3.i") bytes); nothing to do"
    exit 0
fi

# Tools. gcc for -E; cargo is the project's own toolchain and must already be there.
missing=()
command -v gcc >/dev/null || missing+=(gcc)
command -v python3 >/dev/null || missing+=(python3)
if ((${#missing[@]})); then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y --no-install-recommends "${missing[@]}" ||
        { apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; }
fi
command -v cargo >/dev/null || { echo "corpus-sqlite: cargo not found (install the Rust toolchain)" >&2; exit 1; }

if [[ ! -s $OUT/sqlite3.c ]]; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/src"
    cat >"$tmp/Cargo.toml" <<'EOF'
[package]
name = "relay-sqlite-corpus"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
libsqlite3-sys = { version = "*", features = ["bundled"] }

[workspace]
EOF
    echo 'fn main() {}' >"$tmp/src/main.rs"
    echo "corpus-sqlite: cargo fetch libsqlite3-sys (bundled)"
    (cd "$tmp" && cargo fetch --quiet)
    manifest=$(cd "$tmp" && cargo metadata --format-version 1 --offline |
        python3 -c 'import json,sys; print(next(p["manifest_path"] for p in json.load(sys.stdin)["packages"] if p["name"]=="libsqlite3-sys"))')
    crate_dir=$(dirname "$manifest")
    [[ -s $crate_dir/sqlite3/sqlite3.c ]] || { echo "corpus-sqlite: no sqlite3/sqlite3.c in $crate_dir" >&2; exit 1; }
    echo "corpus-sqlite: using $crate_dir/sqlite3/sqlite3.c"
    cp "$crate_dir/sqlite3/sqlite3.h" "$OUT/sqlite3.h"
    [[ ! -f $crate_dir/sqlite3/sqlite3ext.h ]] || cp "$crate_dir/sqlite3/sqlite3ext.h" "$OUT/"
    cp "$crate_dir/sqlite3/sqlite3.c" "$OUT/sqlite3.c.part"
    mv "$OUT/sqlite3.c.part" "$OUT/sqlite3.c"
    basename "$crate_dir" >"$OUT/SOURCE"
fi

echo "corpus-sqlite: gcc -E -DSQLITE_THREADSAFE=1 sqlite3.c"
(cd "$OUT" && gcc -E -DSQLITE_THREADSAFE=1 sqlite3.c -o sqlite3.i.part)
mv "$OUT/sqlite3.i.part" "$OUT/sqlite3.i"
echo "corpus-sqlite: $OUT/sqlite3.i: $(stat -c %s "$OUT/sqlite3.i") bytes, $(wc -l <"$OUT/sqlite3.i") lines (from $(cat "$OUT/SOURCE"))"
