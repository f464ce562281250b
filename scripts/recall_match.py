#!/usr/bin/env python3
"""Helper of scripts/bench-recall.sh: relay's recall against ThreadSanitizer ground truth.

  recall_match.py ccj RAW.jsonl BINARY SRCROOT OUT.json
      From the compiler wrapper's JSON-lines log, the compile commands of the units linked
      into BINARY (the `-c` entries whose output is an object of the link that writes BINARY),
      with -fsanitize=* removed; one entry per object.
  recall_match.py tsan LOGDIR SRCROOT BINARY OUT.json
      Parses the `WARNING: ThreadSanitizer: data race` reports of LOGDIR/log.* into distinct
      unordered pairs of source lines (paths relative to SRCROOT) and writes them.
  recall_match.py match PAIRS.json RELAY.json SRCROOT COMPILEDIR NAME MISSES.txt SUMMARY.json [CG.json]
      Matches the pairs against the warnings relay reports; prints the figures, writes the
      misses (one line per missed pair, grouped by a guessed cause; CG.json, the output of
      `relay callgraph --format json`, tells which functions relay reaches from its thread
      entries) and a JSON summary.

Access site of a TSan report side: frame #0 when it is the program's code (module BINARY and
a file under SRCROOT).  When frame #0 is a TSan interceptor (memcpy, memset, strlen, ... in
libtsan), the access is put at the first frame that is the program's code (the interceptor's
call site) and the pair is marked `via` that interceptor; relay sees such an access at the
call, so these pairs are kept, and counted apart ("strict" figures leave them out).  A side
with no frame in the program's sources (an access inside libevent's callbacks into libc, or a
stack without symbols) drops the pair.
"""
import glob
import json
import os
import re
import sys


def die(msg):
    print(f"recall_match: error: {msg}", file=sys.stderr)
    sys.exit(1)


# ---- ccj ---------------------------------------------------------------------------------------
def cmd_ccj(raw, binary, srcroot, out):
    entries = [json.loads(l) for l in open(raw) if l.strip()]
    links = [e for e in entries if "-c" not in e["arguments"] and e.get("output")
             and os.path.basename(e["output"]) == binary]
    if not links:
        die(f"{raw}: no link command writing {binary}")
    link = links[-1]
    objs = {os.path.normpath(os.path.join(link["directory"], a))
            for a in link["arguments"][1:] if a.endswith(".o") and not a.startswith("-")}
    by_out = {}
    for e in entries:
        if "-c" in e["arguments"] and e.get("output") and e.get("file"):
            by_out[os.path.normpath(e["output"])] = e  # the last compilation of each object
    keep, missing = [], []
    for o in sorted(objs):
        e = by_out.get(o)
        if e is None:
            missing.append(o)
            continue
        args = [a for a in e["arguments"] if not a.startswith("-fsanitize")]
        keep.append({"directory": e["directory"], "file": e["file"], "arguments": args,
                     "output": e["output"]})
    if missing:
        # objects not compiled by this build's wrapper (e.g. a prebuilt archive member)
        print(f"recall_match: note: {len(missing)} linked object(s) without a recorded "
              f"compilation: {' '.join(os.path.basename(m) for m in missing)}", file=sys.stderr)
    files = [os.path.normpath(e["file"]) for e in keep]
    dups = sorted({f for f in files if files.count(f) > 1})
    if dups:
        die(f"files compiled into more than one object of {binary}: {' '.join(dups)}")
    json.dump(keep, open(out, "w"), indent=2)
    print(f"recall_match: {out}: {len(keep)} units of {binary} "
          f"({len(objs)} objects linked)", file=sys.stderr)


# ---- tsan --------------------------------------------------------------------------------------
ACCESS_RE = re.compile(r"^\s+(Previous )?(atomic )?(read|write) of size \d+ at \S+ by ", re.I)
FRAME_RE = re.compile(r"^\s+#(\d+)\s+(\S+)\s+(.*?)\s+\(([^()]*?)\+0x[0-9a-fA-F]+\)\s*$")
LOC_RE = re.compile(r"^(.*?):(\d+)(?::(\d+))?$")


def parse_frames(lines, i):
    frames = []
    while i < len(lines):
        m = FRAME_RE.match(lines[i])
        if not m:
            break
        fn, loc, module = m.group(2), m.group(3), m.group(4)
        lm = LOC_RE.match(loc)
        path, line = (lm.group(1), int(lm.group(2))) if lm else (None, None)
        frames.append({"func": fn, "path": path, "line": line, "module": os.path.basename(module)})
        i += 1
    return frames, i


def own_path(f, srcroot, binary):
    """The frame's file relative to SRCROOT when it is the program's own code, else None."""
    if f["module"] != binary or not f["path"] or not f["line"]:
        return None
    p = os.path.normpath(f["path"])
    if not os.path.isabs(p):
        p = os.path.normpath(os.path.join(srcroot, p))
    if not p.startswith(srcroot + os.sep):
        return None
    return os.path.relpath(p, srcroot)


def stack_of(frames, srcroot, binary):
    """The stack as short strings: `func file:line` for the program's frames, `[module]` for
    a run of frames of one library (libevent calling back, libtsan delivering a signal)."""
    out = []
    for f in frames:
        rel = own_path(f, srcroot, binary)
        s = f"{f['func']} {rel}:{f['line']}" if rel else f"[{f['module']}]"
        if not (rel is None and out and out[-1] == s):
            out.append(s)
    return out[:16]


def entered_by(stack):
    """How the access's function was entered, from the dynamic stack: `signal handler` when
    TSan's runtime delivers a signal to it (a libtsan frame between the program's frames),
    `callback from [lib]` when a library that TSan does not instrument (libevent's
    event_base_loop, libc) calls into the program (the stack, which only has instrumented
    frames, ends in or passes through that library), else None (a thread's start routine or
    main down to the access)."""
    own = [i for i, s in enumerate(stack) if not s.startswith("[")]
    if not own:
        return None
    for s in stack[own[0]:]:
        if s.startswith("[libtsan") and s is not stack[-1]:
            return "signal handler"
    for s in stack[own[0]:]:
        if s.startswith("[") and not s.startswith("[libtsan"):
            return f"callback from {s}"
    return None


def site_of(frames, srcroot, binary):
    """(relpath, line, func, via) of the access, or (None, reason)."""
    def own(f):
        return own_path(f, srcroot, binary)
    if not frames:
        return None, "a stack TSan could not restore (history_size)"
    f0 = frames[0]
    rel = own(f0)
    if rel:
        return (rel, f0["line"], f0["func"], None), None
    if f0["module"].startswith("libtsan"):
        for f in frames[1:]:
            rel = own(f)
            if rel:
                return (rel, f["line"], f["func"], f0["func"]), None
            if f["module"] != f0["module"]:
                break  # called from libc/libevent: not the program's own access
        return None, f"interceptor {f0['func']} not called from the program's sources"
    return None, f"frame #0 outside the program's sources ({f0['module']})"


def cmd_tsan(logdir, srcroot, binary, out):
    srcroot = os.path.realpath(srcroot)
    logs = sorted(glob.glob(os.path.join(logdir, "log*")))
    pairs, dropped, reports, other = {}, {}, 0, {}
    for log in logs:
        lines = open(log, errors="replace").read().splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            m = re.match(r"^WARNING: ThreadSanitizer: (.*?)(?: \(pid=\d+\))?$", line)
            if not m:
                i += 1
                continue
            if m.group(1) != "data race":
                other[m.group(1)] = other.get(m.group(1), 0) + 1
                i += 1
                continue
            reports += 1
            i += 1
            sides = []
            while i < len(lines) and not lines[i].startswith(("SUMMARY:", "WARNING:", "=====")):
                am = ACCESS_RE.match(lines[i])
                if am:
                    kind = ("atomic " if am.group(2) else "") + am.group(3).lower()
                    frames, i = parse_frames(lines, i + 1)
                    sides.append((kind, frames))
                    continue
                i += 1
            if len(sides) != 2:
                dropped["unparsed report"] = dropped.get("unparsed report", 0) + 1
                continue
            s = []
            why = None
            for kind, frames in sides:
                site, reason = site_of(frames, srcroot, binary)
                if site is None:
                    why = reason
                    break
                st = stack_of(frames, srcroot, binary)
                s.append((site, kind, st))
            if why:
                key = re.sub(r"\(.*\)", "", why).strip() if "frame #0" in why else why
                dropped[key] = dropped.get(key, 0) + 1
                continue
            (a, ka, sa), (b, kb, sb) = sorted(s, key=lambda x: (x[0][0], x[0][1]))
            key = (a[0], a[1], b[0], b[1])
            p = pairs.get(key)
            if p is None:
                pairs[key] = p = {"a": {"file": a[0], "line": a[1], "func": a[2], "kind": ka,
                                        "stack": sa, "entered_by": entered_by(sa)},
                                  "b": {"file": b[0], "line": b[1], "func": b[2], "kind": kb,
                                        "stack": sb, "entered_by": entered_by(sb)},
                                  "via": sorted({v for v in (a[3], b[3]) if v}),
                                  "reports": 0}
            p["reports"] += 1
    result = {"binary": binary, "srcroot": srcroot, "logs": len(logs), "race_reports": reports,
              "other_reports": other, "dropped_reports": dropped,
              "pairs": [pairs[k] for k in sorted(pairs)]}
    json.dump(result, open(out, "w"), indent=1)
    strict = sum(1 for p in result["pairs"] if not p["via"])
    print(f"recall_match: {out}: {len(logs)} TSan logs, {reports} data-race reports, "
          f"{len(pairs)} distinct pairs ({strict} with frame #0 in the program on both sides); "
          f"dropped reports: {dropped or 'none'}; other reports: {other or 'none'}",
          file=sys.stderr)


# ---- match -------------------------------------------------------------------------------------
def cmd_match(pairs_path, relay_path, srcroot, compiledir, name, misses_path, summary_path,
              callgraph_path=None):
    srcroot = os.path.realpath(srcroot)
    tsan = json.load(open(pairs_path))
    rep = json.load(open(relay_path))
    outside = {}

    def norm(path):
        p = os.path.normpath(path if os.path.isabs(path) else os.path.join(compiledir, path))
        rp = os.path.realpath(p)
        if rp.startswith(srcroot + os.sep):
            return os.path.relpath(rp, srcroot)
        outside[path] = outside.get(path, 0) + 1
        return None

    warnings = [w for w in rep["warnings"] if not w.get("filtered_by")]
    rpairs, rlines = {}, {}
    for idx, w in enumerate(warnings):
        # Each side is every site of its access: the shown location and `also_at` (schema 2).
        sides = []
        for a in w["accesses"]:
            site = set()
            for loc in [a["location"]] + a.get("also_at", []):
                f = norm(loc["file"])
                if f:
                    site.add((f, loc["line"]))
                    rlines.setdefault((f, loc["line"]), []).append(idx)
            sides.append(site)
        if len(sides) == 2:
            for x in sides[0]:
                for y in sides[1]:
                    rpairs.setdefault(frozenset((x, y)), []).append(idx)
    # functions of each warning (for "warned on the same call paths, at other lines")
    fpairs = set()
    for w in warnings:
        f1, f2 = (strip(a["function"]) for a in w["accesses"])
        fpairs.add((f1, f2))
        fpairs.add((f2, f1))

    def path_funcs(side):
        fs = [x.split(" ")[0] for x in side.get("stack") or [] if not x.startswith("[")]
        return fs or [side["func"]]
    reach = reachable(callgraph_path, warnings) if callgraph_path else None

    def cause(p, ina, inb):
        fa, fb = p["a"]["func"], p["b"]["func"]
        if p["via"]:
            return "interceptor"
        cb = [x.get("entered_by") for x in (p["a"], p["b"]) if x.get("entered_by")]
        if cb:
            return "signal handler" if "signal handler" in cb else "library callback"
        if reach is not None:
            if any(f not in reach for f in (fa, fb)):
                return "unreached"
        if any((x, y) in fpairs for x in path_funcs(p["a"]) for y in path_funcs(p["b"])):
            return "warned on the same call paths, at other lines"
        return "reached, not warned"

    pairs = tsan["pairs"]
    matched, one_side, misses = [], 0, []
    for p in pairs:
        a, b = (p["a"]["file"], p["a"]["line"]), (p["b"]["file"], p["b"]["line"])
        hit = rpairs.get(frozenset((a, b)))
        if hit:
            w = warnings[hit[0]]
            matched.append((p, w))
            one_side += 1
            continue
        ina, inb = a in rlines, b in rlines
        if ina or inb:
            one_side += 1
        misses.append((p, ina, inb, cause(p, ina, inb)))

    n = len(pairs)
    strict = [p for p in pairs if not p["via"]]
    strict_matched = sum(1 for p, _ in matched if not p["via"])
    pct = lambda x, y: 100.0 * x / y if y else 0.0
    stats = rep.get("stats", {})
    with open(misses_path, "w") as f:
        f.write(f"# {name}: TSan pairs relay does not report ({len(misses)} of {n}).\n"
                f"# file:line (function, access) -- file:line (function, access)"
                f"  [relay: which lines occur in some reported warning]  [via interceptor]"
                f"  reports=N\n")
        by_cause = {}
        for m in misses:
            k = m[3]
            by_cause[k] = by_cause.get(k, 0) + 1
        f.write("# causes (heuristic: first that applies): " +
                ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items(), key=lambda kv: -kv[1])) +
                "\n#   interceptor: TSan's frame #0 is memcpy/memset/calloc/...; the line is its call site\n"
                "#   unreached: the TSan function is not reachable in relay's call graph from any thread\n"
                "#     entry relay found (e.g. libevent callbacks: event_base_loop has no model)\n"
                "#   warned on the same call paths, at other lines: some relay warning pairs a function of\n"
                "#     one side's TSan stack with a function of the other's (relay merges the accesses to\n"
                "#     one lvalue under one lockset and reports one witness line, often another line or\n"
                "#     the caller's)\n"
                "#   reached, not warned: none of the above\n")
        cur = None
        for p, ina, inb, why in sorted(misses, key=lambda m: (m[3], m[0]["a"]["file"], m[0]["a"]["line"],
                                                              m[0]["b"]["file"], m[0]["b"]["line"])):
            if why != cur:
                f.write(f"\n## {why}\n")
                cur = why
            a, b = p["a"], p["b"]
            seen = {(True, True): "both lines in other warnings", (True, False): "first line only",
                    (False, True): "second line only", (False, False): "neither line"}[(ina, inb)]
            via = f"  [via {','.join(p['via'])}]" if p["via"] else ""
            cbs = {}
            for x in (a, b):
                if x.get("entered_by"):
                    cbs.setdefault(x["entered_by"].replace("[", "").replace("]", ""), set()).add(x["func"])
            for k, fs in sorted(cbs.items()):
                via += f"  [{k}: {','.join(sorted(fs))}]"
            if reach is not None:
                un = [x["func"] for x in (a, b) if x["func"] not in reach]
                if un:
                    via += f"  [not reached by relay: {','.join(sorted(set(un)))}]"
            f.write(f"{a['file']}:{a['line']} ({a['func']}, {a['kind']}) -- "
                    f"{b['file']}:{b['line']} ({b['func']}, {b['kind']})  [relay: {seen}]"
                    f"{via}  reports={p['reports']}\n")
        f.write(f"\n# matched ({len(matched)}):\n")
        for p, w in matched:
            a, b = p["a"], p["b"]
            f.write(f"# {a['file']}:{a['line']} ({a['func']}) -- {b['file']}:{b['line']} "
                    f"({b['func']})  relay lvalue `{w['lvalue']}`\n")
    summary = {"program": name, "tsan_pairs": n, "matched": len(matched),
               "recall_percent": round(pct(len(matched), n), 1),
               "at_least_one_side": one_side, "strict_pairs": len(strict),
               "strict_matched": strict_matched, "relay_warnings": len(warnings),
               "relay_warnings_unrelated_paths": sum(outside.values()),
               "relay_functions": stats.get("functions"),
               "relay_thread_entries": stats.get("thread_entries"),
               "miss_causes": by_cause,
               "tsan_race_reports": tsan.get("race_reports"),
               "tsan_dropped_reports": tsan.get("dropped_reports")}
    json.dump(summary, open(summary_path, "w"), indent=1)
    print(f"{name}: TSan pairs {n}, relay matched {len(matched)} ({pct(len(matched), n):.1f}%); "
          f"at least one side in a relay warning {one_side} ({pct(one_side, n):.1f}%)")
    print(f"{name}: without interceptor (memcpy/memset/...) pairs: matched {strict_matched} of "
          f"{len(strict)} ({pct(strict_matched, len(strict)):.1f}%)")
    print(f"{name}: relay warnings reported {len(warnings)} "
          f"(functions {stats.get('functions')}, thread entries {stats.get('thread_entries')})")
    print(f"{name}: misses by cause: " +
          ", ".join(f"{k} {v}" for k, v in sorted(by_cause.items(), key=lambda kv: -kv[1])))
    if outside:
        top = sorted(outside.items(), key=lambda kv: -kv[1])[:3]
        print(f"{name}: note: {sum(outside.values())} relay access sides outside the source tree "
              f"(e.g. {', '.join(f'{k} x{v}' for k, v in top)})")


def strip(fn):
    """relay names a static function that is not unique `name@N`."""
    return re.sub(r"@\d+$", "", fn)


def reachable(callgraph_path, warnings):
    """Names of the functions reachable in relay's call graph from the thread entries that
    occur in its warnings (main and the start routines)."""
    cg = json.load(open(callgraph_path))
    succ = {}
    for e in cg["edges"]:
        succ.setdefault(e["caller"], []).append(e["callee"])
    entries = {a["entry"] for w in warnings for a in w["accesses"]}
    seen, todo = set(), [n for n in succ if strip(n) in {strip(x) for x in entries}]
    todo += [x for x in entries if x not in succ]
    while todo:
        n = todo.pop()
        if n in seen:
            continue
        seen.add(n)
        todo.extend(succ.get(n, []))
    return {strip(n) for n in seen}


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    cmd, args = argv[1], argv[2:]
    table = {"ccj": (cmd_ccj, 4, 4), "tsan": (cmd_tsan, 4, 4), "match": (cmd_match, 7, 8)}
    if cmd not in table or not table[cmd][1] <= len(args) <= table[cmd][2]:
        print(__doc__, file=sys.stderr)
        return 2
    table[cmd][0](*args)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
