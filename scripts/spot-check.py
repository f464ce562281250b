#!/usr/bin/env python3
"""Samples warnings from a `relay analyze --format json` report for manual review.

Usage: scripts/spot-check.py REPORT.json [N=10] [SEED=7] [--root DIR] [--context K]

Prints, for each sampled warning, the lvalue, both accesses (entry, function, kind, locks, call
path) and K lines of source around each access (files resolved against --root, then the current
directory). Reviewers then classify each as real / false positive in the issue note.
"""
import json
import os
import random
import sys


def source_lines(path, line, k, roots):
    for root in roots:
        p = path if os.path.isabs(path) else os.path.join(root, path)
        try:
            with open(p, errors="replace") as f:
                lines = f.read().split("\n")
        except OSError:
            continue
        lo, hi = max(1, line - k), min(len(lines), line + k)
        return [f"{'>' if n == line else ' '}{n:6} | {lines[n - 1]}" for n in range(lo, hi + 1)]
    return ["        (source not readable)"]


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("report")
    ap.add_argument("n", nargs="?", type=int, default=10)
    ap.add_argument("seed", nargs="?", type=int, default=7)
    ap.add_argument("--root", default=".")
    ap.add_argument("--context", type=int, default=2)
    o = ap.parse_args(argv[1:])
    report = json.load(open(o.report))
    n, seed, k, roots = o.n, o.seed, o.context, [o.root, "."]
    warnings = [w for w in report["warnings"] if not w["filtered_by"]]
    random.seed(seed)
    sample = random.sample(warnings, min(n, len(warnings)))
    print(f"{len(sample)} of {len(warnings)} reported warnings (seed {seed})\n")
    for i, w in enumerate(sample, 1):
        print(f"[{i}] {w['lvalue']}   group: {w['group']}")
        for a in w["accesses"]:
            loc = a["location"]
            path = " -> ".join([a["entry"]] + [c["callee"] for c in a["call_path"]])
            print(f"  {a['kind']}{' (atomic)' if a['atomic'] else ''} in {a['function']} "
                  f"at {loc['file']}:{loc['line']}:{loc['col']}  thread {a['entry']}"
                  f"{' (x2)' if a['entry_multiple'] else ''}")
            print(f"    locks: {', '.join(a['locks']) or 'none'}   path: {path}")
            for l in source_lines(loc["file"], loc["line"], k, roots):
                print("    " + l)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
