#!/usr/bin/env python3
"""Cross-check relay's list of file-scope function definitions against gcc's.

Usage: scripts/crosscheck-functions.py [options] FILES_OR_DIRS...

Inputs: `.i` files are used as they are; directories are scanned recursively for `.i` files;
`.c` files named explicitly are first preprocessed (`$CC -E -std=X`, X from a first line
`// relay-std: X`, default gnu11) into a temporary directory.

relay side: one run of `relay parse --format json --list-functions -j2 FILES...`.

gcc side, per file (a pool of --jobs processes):
    gcc -fsyntax-only -w -x cpp-output [-std=X] -aux-info OUT FILE.i
`-aux-info` writes one line per function declaration or definition seen, in the form
    /* FILE:LINE:KS */ DECLARATION; /* K&R parameter list, definitions only */
where FILE and LINE are the original location of the function's *name* (from the line markers,
the same place relay reports), K is N (prototype style), O (old style / K&R) or I (implicit
declaration), and S is C (declaration) or F (definition). We keep the F lines and take the name
from the declaration text (gcc prints it as `name (params)`, wrapped as `(*name (params)) (...)` for
functions returning function or array pointers).

gcc also lists nested functions (GNU C), which relay does not report (it lists file-scope
definitions only) and which aux-info does not mark. They are told apart by brace depth: the name
of a nested definition is inside braces in the .i text (strings, character constants, C23 digit
separators and directive lines are blanked first). They are excluded and counted.

Fallback: gcc 12 -aux-info segfaults (ICE in its type printer) on any prototype with a
pointer-to-VLA parameter, e.g. `int f(int n, char (*p)[n]);`. For such files the definitions are
taken from diagnostics instead: `-Wtraditional` warns at the name of every prototype-style
definition and `-Wold-style-definition` at every K&R or `()` one, each after an
`In function 'NAME':` context line; neither fires for nested functions. Both are suppressed in
system-header text (line-marker flag 3), so definitions there are left out of the comparison on
both sides (and counted). `--method diag` uses this listing for every file (it agrees with aux-info
on sqlite3.i, the Linux files and the fixtures).

The comparison is by multiset of (original file, line, name) per translation unit. A definition
missing on one side but present on the other with the same (file, name) on another line is shown
as a line difference (still a mismatch).

Exit status: 0 if every file agrees, 1 otherwise (mismatch, gcc or relay failure), 2 on usage errors.
"""

import argparse
import bisect
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

AUX_LINE = re.compile(r"^/\* (.*):(\d+):([NOI])([CF]) \*/ (.*)$")
TOKEN = re.compile(r"[A-Za-z_$][\w$]*|\.\.\.|\S")
STD_LINE = re.compile(r"^// relay-std: *([A-Za-z0-9+]+)")
# Blanked before brace counting (same length, so offsets stay valid): directive lines, string
# literals, character constants, pp-numbers with C23 digit separators (1'000).
STRIP = re.compile(
    r"""^[ \t]*\#[^\n]*|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|(?<![\w$.])[0-9][\w.]*(?:'[\w.]+)+""",
    re.M,
)
MARKER = re.compile(r'^[ \t]*#(?:[ \t]*line)?[ \t]*(\d+)[ \t]+"((?:\\.|[^"\\\n])*)"([ \t0-9]*)', re.M)
DIAG = re.compile(r"^(.*?):(\d+)(?::\d+)?: warning: "
                  r"(?:traditional C rejects ISO C style function definitions|old-style function definition) ")
CONTEXT = re.compile(r": In function '(.+)':$")
BRACE = re.compile(r"[{}]")
NEWLINE = re.compile(r"\n")


def aux_name(decl):
    """The function name in a declaration printed by gcc -aux-info, or None."""
    toks = TOKEN.findall(decl)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t in ("__attribute__", "__attribute", "__typeof__", "typeof", "__asm__", "asm"):
            # skip the balanced parenthesised group that follows
            j, depth = i + 1, 0
            while j < len(toks):
                if toks[j] == "(":
                    depth += 1
                elif toks[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                j += 1
            i = j + 1
            continue
        if (
            re.match(r"[A-Za-z_$]", t)
            and i + 1 < len(toks)
            and toks[i + 1] == "("
            and (i + 2 >= len(toks) or toks[i + 2] not in ("*", "^"))
        ):
            return t
        i += 1
    return None


def parse_aux(text):
    """[(file, line, name)] of the definitions (F lines); [bad lines]."""
    defs, bad = [], []
    for line in text.splitlines():
        m = AUX_LINE.match(line)
        if not m:
            if line.startswith("/* ") and not line.startswith("/* compiled from:"):
                bad.append(line)
            continue
        if m.group(4) != "F":
            continue
        name = aux_name(m.group(5))
        if name is None:
            bad.append(line)
        else:
            defs.append((m.group(1), int(m.group(2)), name))
    return defs, bad


def unescape(s):
    return re.sub(r"\\(.)", r"\1", s)


def to_text(b):
    """Bytes-as-latin-1 string (one char per byte: offsets and gcc byte columns agree) -> text."""
    return b.encode("latin-1").decode("utf-8", "replace")


def to_bytes(t):
    return t.encode("utf-8", "replace").decode("latin-1")


class PreprocessedText:
    """A .i file: original (file, line) -> physical lines, brace depths, system-header files."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.text = f.read().decode("latin-1")
        self.stripped = STRIP.sub(lambda m: " " * len(m.group()), self.text)
        self.braces = [m.start() for m in BRACE.finditer(self.stripped)]
        self.depth_after = []
        d = 0
        for pos in self.braces:
            d += 1 if self.stripped[pos] == "{" else -1
            self.depth_after.append(d)
        self.newlines = [m.start() for m in NEWLINE.finditer(self.text)]
        # segments: file -> [(first original line, first physical line, end physical line)]
        self.segments = collections.defaultdict(list)
        # file -> [(first line, last line)] of the segments marked as system header text (flag 3)
        self.system = collections.defaultdict(list)
        marks = []
        for m in MARKER.finditer(self.text):
            f = to_text(unescape(m.group(2)))
            system = "3" in m.group(3).split()
            marks.append((bisect.bisect_left(self.newlines, m.start()), f, int(m.group(1)), system))
        for k, (phys, f, n, system) in enumerate(marks):
            end = marks[k + 1][0] if k + 1 < len(marks) else len(self.newlines) + 1
            self.segments[f].append((n, phys + 1, end))
            if system and end > phys + 1:
                self.system[f].append((n, n + end - phys - 2))

    def lines(self, file, line):
        """(start, end) offsets of the physical lines that carry file:line."""
        for n, first, end in self.segments.get(file, ()):
            phys = first + line - n
            if n <= line and phys < end:
                start = self.newlines[phys - 1] + 1 if phys > 0 else 0
                stop = self.newlines[phys] if phys < len(self.newlines) else len(self.text)
                yield start, stop

    def depths(self, file, line, name):
        """Brace depths of every occurrence of `name` on the lines mapping to file:line."""
        word = re.compile(r"(?<![\w$])" + re.escape(to_bytes(name)) + r"(?![\w$])")
        out = []
        for start, stop in self.lines(file, line):
            for m in word.finditer(self.stripped, start, stop):
                k = bisect.bisect_left(self.braces, m.start())
                out.append(self.depth_after[k - 1] if k > 0 else 0)
        return out


def in_system(system, d):
    """Is definition d = (file, line, name) in system header text (per the line markers)?"""
    return any(lo <= d[1] <= hi for lo, hi in system.get(d[0], ()))


def run_gcc(cmd):
    env = dict(os.environ, LC_ALL="C")  # plain 'quotes' in diagnostics
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return p.returncode, p.stderr.decode("utf-8", "replace")


def gcc_aux_info(ifile, std, cc, aux):
    """gcc -aux-info: (definitions [(file, line, name)], unparsed lines, error or None)."""
    cmd = [cc, "-fsyntax-only", "-w", "-x", "cpp-output"] + (["-std=" + std] if std else [])
    rc, err = run_gcc(cmd + ["-aux-info", aux, ifile])
    defs, bad = [], []
    try:
        with open(aux, "rb") as f:
            defs, bad = parse_aux(f.read().decode("utf-8", "replace"))
        os.unlink(aux)
    except OSError:
        pass
    if rc != 0:
        return defs, bad, "gcc -aux-info failed (exit %d): %s" % (rc, first_error(err))
    return defs, bad, None


def first_error(stderr):
    lines = [l for l in stderr.splitlines() if "error" in l] or stderr.splitlines() or [""]
    return lines[0].strip()


def gcc_diagnostics(ifile, std, cc):
    """Fallback listing: gcc warns at the name of every file-scope definition outside system headers
    (-Wtraditional for prototype-style definitions, -Wold-style-definition for K&R and `()` ones), after
    an `In function 'NAME':` context line. Returns (definitions, error or None)."""
    cmd = [cc, "-fsyntax-only", "-x", "cpp-output"] + (["-std=" + std] if std else [])
    cmd += ["-Wtraditional", "-Wold-style-definition", "-fno-diagnostics-show-caret",
            "-fdiagnostics-color=never", ifile]
    rc, err = run_gcc(cmd)
    defs, context = [], None
    for line in err.splitlines():
        m = CONTEXT.search(line)
        if m:
            context = m.group(1)
            continue
        m = DIAG.match(line)
        if m:
            if context is None:
                return defs, "no function context for: " + line
            defs.append((m.group(1), int(m.group(2)), context))
            context = None
    if rc != 0:
        return defs, "gcc failed (exit %d): %s" % (rc, first_error(err))
    return defs, None


def gcc_side(job):
    """gcc's file-scope definitions of one .i. Returns a dict (see the keys below)."""
    ifile, std, cc, auxdir, index, method = job
    res = {"defs": [], "nested": [], "unlocated": 0, "error": None, "bad": [], "note": None,
           "system": {}}
    pp = PreprocessedText(ifile)
    err = None
    if method == "aux":
        defs, res["bad"], err = gcc_aux_info(ifile, std, cc, os.path.join(auxdir, "%d.aux" % index))
    if method == "diag" or err:
        # gcc 12 -aux-info segfaults on prototypes with pointer-to-VLA parameters (int (*p)[n]).
        defs, err2 = gcc_diagnostics(ifile, std, cc)
        if err2:
            res["error"] = (err + "; fallback: " if method == "aux" else "") + err2
            return res
        res["system"] = dict(pp.system)
        res["bad"] = []
        if method == "aux":
            res["note"] = "%s; compared with the -Wtraditional/-Wold-style-definition listing " \
                          "(definitions in system headers not compared)" % err
    for d in defs:
        if method != "aux" or err:
            # gcc reports file-scope definitions only here (no warning for nested functions)
            if not in_system(pp.system, d):
                res["defs"].append(d)
            continue
        depths = pp.depths(*d)
        if not depths:
            res["unlocated"] += 1
            res["defs"].append(d)
        elif min(depths) > 0:
            res["nested"].append(d)
        else:
            res["defs"].append(d)
    return res


def collect_inputs(paths):
    files, missing = [], []
    for p in paths:
        if os.path.isdir(p):
            found = []
            for root, dirs, names in os.walk(p):
                dirs.sort()
                found += [os.path.join(root, n) for n in names if n.endswith(".i")]
            files += sorted(found)
        elif os.path.isfile(p):
            files.append(p)
        else:
            missing.append(p)
    return files, missing


def source_std(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        m = STD_LINE.match(f.readline())
    return m.group(1) if m else "gnu11"


def fmt(d):
    return "%s:%d\t%s" % d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", metavar="FILES_OR_DIRS")
    ap.add_argument("--relay", default=os.environ.get("RELAY", os.path.join(REPO, "target/release/relay")))
    ap.add_argument("--cc", default=os.environ.get("CC", "gcc"))
    ap.add_argument("--std", help="-std for gcc on .i inputs (default: gcc's default)")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="parallel gcc processes (default 2)")
    ap.add_argument("--method", choices=("aux", "diag"), default="aux",
                    help="gcc listing: -aux-info (default; falls back to diag when gcc crashes) or the "
                         "diagnostics listing only (for validating the fallback)")
    ap.add_argument("-q", "--quiet", action="store_true", help="print only the totals")
    args = ap.parse_args()

    files, missing = collect_inputs(args.paths)
    if missing:
        ap.error("no such file or directory: " + ", ".join(missing))
    if not files:
        ap.error("no input files")
    if not os.access(args.relay, os.X_OK):
        ap.error("relay binary not found: %s (build with cargo build --release, or pass --relay)" % args.relay)

    with tempfile.TemporaryDirectory(prefix="crosscheck-functions.") as tmp:
        # units: (display name, .i path given to both tools, std for gcc)
        units = []
        failed = {}
        for k, f in enumerate(files):
            if f.endswith(".c"):
                std = source_std(f)
                out = os.path.join(tmp, "%d-%s.i" % (k, os.path.basename(f)[:-2]))
                p = subprocess.run([args.cc, "-E", "-std=" + std, f, "-o", out],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if p.returncode != 0:
                    failed[f] = "preprocessing failed: " + p.stderr.strip()[:2000]
                    continue
                units.append((f, out, std))
            else:
                units.append((f, f, args.std))

        # relay: one run over everything
        cmd = [args.relay, "parse", "--format", "json", "--list-functions", "-j2"] + [u[1] for u in units]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
        try:
            report = json.loads(p.stdout)
        except ValueError:
            sys.exit("relay failed (exit %d): %s" % (p.returncode, p.stderr.strip()[:2000]))
        by_tu = {u[1]: u[0] for u in units}
        relay_defs = collections.defaultdict(list)
        relay_errors = collections.defaultdict(list)
        for e in report.get("function_list") or []:
            relay_defs[by_tu.get(e["tu"], e["tu"])].append((e["file"], e["line"], e["name"]))
        for e in report.get("errors") or []:
            relay_errors[by_tu.get(e["tu"], e["tu"])].append(
                "%s:%s:%s: %s" % (e["file"], e["line"], e["col"], e["message"]))

        # gcc: a process pool
        jobs = [(u[1], u[2], args.cc, tmp, k, args.method) for k, u in enumerate(units)]
        with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            gcc_results = list(pool.map(gcc_side, jobs, chunksize=1))

    tot = collections.Counter()
    tot["files"] = len(files)
    bad_files = []
    for f, msg in failed.items():
        bad_files.append(f)
        print("== %s: %s" % (f, msg))
    for (name, _, _), g in zip(units, gcc_results):
        rdefs = relay_defs.get(name, [])
        skipped = [d for d in rdefs if in_system(g["system"], d)]
        tot["not_compared"] += len(skipped)
        gset = collections.Counter(g["defs"])
        rset = collections.Counter(d for d in rdefs if not in_system(g["system"], d))
        agree = sum((gset & rset).values())
        gonly = sorted((gset - rset).elements())
        ronly = sorted((rset - gset).elements())
        tot["gcc"] += sum(gset.values())
        tot["relay"] += sum(rset.values())
        tot["agree"] += agree
        tot["gcc_only"] += len(gonly)
        tot["relay_only"] += len(ronly)
        tot["nested"] += len(g["nested"])
        tot["unlocated"] += g["unlocated"]
        tot["fallback"] += g["note"] is not None
        problems = []
        if g["error"]:
            problems.append("  gcc: " + g["error"])
        for b in g["bad"]:
            problems.append("  unparsed aux-info line: " + b)
        # show a definition missing on one side and present on the other on another line as one item
        rby = collections.defaultdict(list)
        for d in ronly:
            rby[(d[0], d[2])].append(d)
        paired = set()
        for d in gonly:
            alt = rby.get((d[0], d[2]))
            if alt:
                r = alt.pop(0)
                paired.add(r)
                problems.append("  line differs:   %s:%d/%d\t%s (gcc/relay)" % (d[0], d[1], r[1], d[2]))
            else:
                problems.append("  in gcc only:    " + fmt(d))
        for d in ronly:
            if d in paired:
                paired.discard(d)
            else:
                problems.append("  in relay only:  " + fmt(d))
        if problems:
            problems += ["  relay syntax error: " + e for e in relay_errors.get(name, [])]
            bad_files.append(name)
        if not args.quiet and (problems or g["note"]):
            print("== %s: gcc %d, relay %d, agreeing %d, in gcc only %d, in relay only %d"
                  % (name, sum(gset.values()), sum(rset.values()), agree, len(gonly), len(ronly)))
            if g["note"]:
                print("  note: %s; %d relay definitions in system headers not compared" % (g["note"], len(skipped)))
            for line in problems:
                print(line)
    tot["definitions"] = tot["agree"] + tot["gcc_only"] + tot["relay_only"]
    tot["mismatching"] = tot["gcc_only"] + tot["relay_only"]
    print("crosscheck-functions: %d files, %d definitions, %d agreeing, %d mismatching "
          "(%d in gcc only, %d in relay only) in %d files"
          % (tot["files"], tot["definitions"], tot["agree"], tot["mismatching"], tot["gcc_only"],
             tot["relay_only"], len(bad_files)))
    print("  gcc %d, relay %d; nested functions excluded: %d; gcc definitions not located in the .i: %d; "
          "files checked with the diagnostics fallback: %d (relay definitions in system headers not compared: %d); "
          "relay skipped declarations: %d"
          % (tot["gcc"], tot["relay"], tot["nested"], tot["unlocated"], tot["fallback"], tot["not_compared"],
             report.get("skipped_decls", 0)))
    return 0 if not bad_files else 1


if __name__ == "__main__":
    sys.exit(main())
