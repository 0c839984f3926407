#!/usr/bin/env python3
"""Instructions per execution by phase, from one callgrind dump of actiond.

    scripts/profile-phases.py DUMP... EXECUTIONS [--top N]

It reads the dump itself (no callgrind_annotate), sums each function's inclusive cost
(its own instructions and those of everything it calls), and charges each phase with the
inclusive cost of the functions that make it, minus the functions of other phases they
call (so no instruction is counted twice). What no phase claims is "the rest" (the
runtime's own loop, timers, the reactor). `--top N` lists the N most costly functions
by inclusive cost instead, to find new phases."""
import re
import sys
from collections import defaultdict

# Each phase: the functions that start it (a regular expression on the symbol). A phase
# nested in another (spawn inside the start path) is taken out of the outer one.
PHASES = [
    ("accept, read and parse, write (hyper)", r"^<?(hyper|hyper_util|http|httparse|http_body_util)::|^actiond::server::(serve|accept|connection)"),
    ("routing, identity, body, decode (server, api)", r"^actiond::server::call::\{\{closure\}\}"),
    ("permission, arguments, admission (engine::begin)", r"^actiond::engine::(start::<impl actiond::engine::Engine>|Engine)::begin$"),
    ("templating (executor::plan, when not inlined into begin)", r"^actiond::(executor::plan|template::)"),
    ("spawn (cgroup, argv and environment, posix_spawn)", r"^actiond::executor::(start|spawn::|cgroup::|(launch|run)::\{\{closure\}\}::\{\{closure\}\}$)"),
    ("supervision and output capture", r"^actiond::executor::(run|supervised|supervise)::\{\{closure\}\}$"),
    ("record finish (Execution::finish)", r"^actiond::execution::Execution::finish$"),
    ("record start (Execution::new)", r"^actiond::execution::Execution::new$"),
    ("history, journal, metrics, events (engine lifecycle)", r"^<actiond::engine::(lifecycle::)?Watch as actiond::executor::Observer>::(done|output)$|^actiond::engine::lifecycle::|^tokio::runtime::task::raw::poll::<actiond::engine::lifecycle::life"),
    ("event fan-out (events, and the MQTT task it wakes)", r"^actiond::(events|mqtt)::"),
    ("journal and store", r"^actiond::(journal|store|engine::recorder)::"),
    ("log lines (tracing)", r"^tracing_core::event::Event::dispatch$"),
    ("answer encode (LogEntry JSON)", r"^actiond::api::entry_reply$|^actiond::api::dto::"),
    ("reaper (SIGCHLD, waitpid)", r"^actiond::executor::reaper::"),
    ("time stamps (clock)", r"^actiond::clock::"),
]


def legacy(f):
    """A symbol demangled in the v0 style (what Debian's rustc emits, which builds the shipped
    binary: `<actiond::engine::Engine>::begin`, `life::<X>::{closure#0}`) written as the
    legacy style writes it (`actiond::engine::Engine::begin`, `life::{{closure}}`), which the
    phases above are written against. Only for matching: the call graph keeps every symbol."""
    f = re.sub(r"\{closure#\d+\}", "{{closure}}", f)
    # Drop the generic arguments of paths (`::<...>`), brackets balanced.
    out, i = [], 0
    while i < len(f):
        if f.startswith("::<", i):
            depth, j = 0, i + 2
            while j < len(f):
                depth += {"<": 1, ">": -1}.get(f[j], 0)
                j += 1
                if depth == 0:
                    break
            i = j
        else:
            out.append(f[i])
            i += 1
    f = "".join(out)
    # An inherent method: `<Type>::name` is `Type::name`.
    m = re.match(r"^<([^<>]+)>::(.*)$", f)
    if m and " as " not in m.group(1):
        f = f"{m.group(1)}::{m.group(2)}"
    return f


def parse(path):
    names = {}  # (kind, id) -> name, for callgrind's name compression
    selfc = defaultdict(int)
    calls = defaultdict(lambda: defaultdict(int))  # caller -> callee -> inclusive
    fn = None
    pending_call = None
    total = 0

    def name(kind, spec):
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2) is not None:
            names[(kind, m.group(1))] = m.group(2)
        return names.get((kind, m.group(1)), spec)

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call is not None:
                    if pending_call != fn:
                        calls[fn][pending_call] += cost
                    pending_call = None
                else:
                    selfc[fn] += cost
                    total += cost
            elif line.startswith("fn="):
                fn = name("fn", line[3:])
            elif line.startswith("cfn="):
                callee = name("fn", line[4:])
            elif line.startswith("calls="):
                pending_call = callee
            elif line.startswith(("cfi=", "cfl=")):
                name("fl", line[4:])
            elif line.startswith(("fl=", "fi=", "fe=")):
                name("fl", line[3:])
            elif line.startswith("ob=") or line.startswith("cob="):
                name("ob", line.split("=", 1)[1])
    return selfc, calls, total


def main():
    args = sys.argv[1:]
    top = None
    if "--top" in args:
        i = args.index("--top")
        top = int(args[i + 1])
        del args[i : i + 2]
    *paths, n = args
    n = int(n)
    # One dump per thread (`--separate-threads=yes`): the service's own thread is split by
    # phase; a thread of the blocking pool does nothing but spawn, so its whole cost is the
    # spawn's. Splitting one dump of all threads would smear the runtime's shared functions
    # (a task's poll) across threads.
    pool = 0
    selfc = calls = None
    for path in paths:
        s_, c_, t_ = parse(path)
        if "actiond::main" in s_:
            selfc, calls, total = s_, c_, t_
        else:
            pool += t_
    if selfc is None:
        sys.exit("no dump of the main thread")
    funcs = set(selfc) | set(calls)
    incl = {f: selfc[f] + sum(calls[f].values()) for f in funcs}
    if top is not None:
        for f in sorted(funcs, key=lambda f: -incl[f])[:top]:
            print(f"{incl[f] / n:>10.0f} {selfc[f] / n:>8.0f}  {f[:200]}")
        return
    phase_of = {}
    for f in funcs:
        g = legacy(f)
        for i, (_, rx) in enumerate(PHASES):
            if re.search(rx, f) or re.search(rx, g):
                phase_of[f] = i
                break
    # Charge each call edge that enters a phase function from outside that phase to it; the
    # callee's cost that belongs to a nested phase is charged there when that edge is seen.
    # Exclusive cost of a phase = inclusive cost entering it - inclusive cost of the
    # nested-phase calls made from anywhere inside it. Computed by a walk that carries the
    # current phase down the call graph with the callee's share of each edge.
    charged = defaultdict(float)
    sys.setrecursionlimit(100000)
    memo = {}

    def split(f, depth=0):
        """Instructions of f (inclusive) by phase, where f itself belongs to its own phase
        or, if it has none, to 'inherit' (-1)."""
        if f in memo:
            return memo[f]
        # A call back into a function whose walk is under way (a cycle in the graph, like
        # the runtime polling a task that polls) adds nothing: callgrind's inclusive cost of
        # such a call is already inside the outer call's.
        memo[f] = {}
        own = phase_of.get(f, -1)
        out = defaultdict(float)
        out[own] += selfc[f]
        for callee, cost in calls[f].items():
            sub = split(callee, depth + 1)
            subtotal = sum(sub.values()) or 1
            for ph, c in sub.items():
                out[own if ph == -1 else ph] += cost * c / subtotal
        memo[f] = out
        return out

    roots = [f for f in funcs if not any(f in calls[g] for g in funcs if g != f)]
    for r in roots:
        for ph, c in split(r).items():
            charged[ph] += c
    lost = total - sum(charged.values())
    print(f"instructions per execution: {(total + pool) / n:,.0f} (callgrind, {n} executions)")
    if abs(lost) > total / 1000:
        print(f"(not placed in any phase: {lost / n:,.0f} per execution)")
    print()
    print("| phase | instructions per execution | share |")
    print("|---|---:|---:|")
    for i, (label, _) in enumerate(PHASES):
        c = charged.get(i, 0.0)
        print(f"| {label} | {c / n:,.0f} | {100 * c / (total + pool):.1f} % |")
    print(f"| spawn on the blocking pool (its threads, whole) | {pool / n:,.0f} | {100 * pool / (total + pool):.1f} % |")
    c = charged.get(-1, 0.0)
    print(f"| the rest: the runtime's loop, reactor, timers, allocator outside phases | {c / n:,.0f} | {100 * c / (total + pool):.1f} % |")


if __name__ == "__main__":
    main()
