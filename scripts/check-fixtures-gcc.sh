#!/bin/sh
# Check that every parser fixture (fixtures/parse/*.c) is accepted by `gcc -fsyntax-only`.
# The C standard comes from a first line of the form `// relay-std: gnu2x` (default: gnu11).
# Warnings are allowed; any error fails the check. Usage: scripts/check-fixtures-gcc.sh [files...]
# Environment: CC (default gcc), VERBOSE=1 to also print warnings of passing files.
set -u
cd "$(dirname "$0")/.." || exit 2
CC=${CC:-gcc}
[ $# -eq 0 ] && set -- fixtures/parse/*.c

pass=0
fail=0
for f in "$@"; do
    std=$(sed -n '1s|^// relay-std: *\([A-Za-z0-9+]*\).*|\1|p' "$f")
    std=${std:-gnu11}
    if out=$("$CC" -std="$std" -fsyntax-only "$f" 2>&1); then
        pass=$((pass + 1))
        [ "${VERBOSE:-0}" = 1 ] && [ -n "$out" ] && printf '%s\n' "$out"
    else
        fail=$((fail + 1))
        printf 'FAIL %s (-std=%s)\n%s\n' "$f" "$std" "$out"
    fi
done
echo "check-fixtures-gcc: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
