#!/usr/bin/env python3
# A logging compiler wrapper (scripts/bench-recall.sh, scripts/bench-false-alarms.sh): appends
# {directory, arguments, file, output} of every invocation with `-o` (compilations and links)
# to $CC_LOG (JSON lines) when it is set, then runs gcc with the same arguments.
import fcntl, json, os, sys
args = sys.argv[1:]
logf = os.environ.get("CC_LOG")
if logf and "-o" in args[:-1] and "-E" not in args and "-M" not in args and "-MM" not in args:
    out = os.path.abspath(args[args.index("-o") + 1])
    srcs = [a for a in args if a.endswith(".c") and not a.startswith("-")] if "-c" in args else [None]
    with open(logf, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        for s in srcs:
            e = {"directory": os.getcwd(), "arguments": ["gcc"] + args, "output": out}
            if s: e["file"] = os.path.abspath(s)
            f.write(json.dumps(e) + "\n")
os.execvp("gcc", ["gcc"] + args)
