#!/usr/bin/env python3
"""Fails when the modules of the library crate (src/) depend on each other in a cycle, or
break a rule of docs/ARCHITECTURE.md that can be checked from the code:

- the layers of "Dependency direction" (its table): a module uses only modules of the layers
  below its own;
- the rules of "Rules the build checks": "`A` does not use `B`, `C`" and "`B` is used only
  by `A`, `C`", each module named by its path (`executor::spawn`), covering its submodules;
- the `unsafe` inventory there: the files of src/ that hold `unsafe` in production code, and
  how many times, must be those the table lists; and every `unsafe` in src/, tests included,
  has a `SAFETY:` comment on its line or in the comment right above it.

A module the document names that the crate does not have fails too, so a rename cannot turn a
rule into one that checks nothing. Run by scripts/test.sh (the full run and `quick`); alone:
`python3 scripts/module-cycles.py [--graph]`.

What counts as a module: every file module the crate declares, found by following the `mod`
declarations from src/lib.rs (so main.rs and cli.rs, the binary's own files, are not part of
the graph). A module is named by its path: `engine`, `config::source`, `api::catalog`.

What counts as a dependency: every path in the production code that starts with `crate::`
(in a `use`, with its braces expanded, or written inline), and `super::`/`self::` paths,
resolved to the deepest module they name. An item a `mod.rs` re-exports from one of its
files (`pub use source::Source;`) counts as that file. Code behind `#[cfg(test)]` does not
count: tests may reach across layers.

The graphs checked, each of which must be acyclic:

- the top-level graph: every module folded into its first segment (`config::source` is
  `config`), with the crate root (lib.rs) as `lib`. This is the layering that
  docs/ARCHITECTURE.md describes.
- one graph per directory module: its files (`config::source`, `config::tree`, ...) and
  their dependencies on each other. The directory's own `mod.rs` is not a node of it: a
  parent may call its files and its files may use what it defines, so only dependencies
  between sibling files can make a cycle there.

For every cycle found it prints the modules of the knot, one shortest cycle through each of
them, and for every edge of those cycles the first place (file:line) that makes it. A broken
rule is printed with the first place that breaks it.
"""

import os
import re
import sys
from collections import defaultdict, deque

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
ARCHITECTURE = os.path.join(ROOT, "..", "docs", "ARCHITECTURE.md")


def strip(text):
    """The text with comments, string literals and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 20]) and not (i and (text[i - 1].isalnum() or text[i - 1] == "_")):
            hashes = re.match(r"r(#*)\"", text[i:]).group(1)
            end = text.find('"' + hashes, i + 2 + len(hashes))
            end = n if end < 0 else end + 1 + len(hashes)
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        elif c == "'" and (re.match(r"'(\\.|[^\\'])'", text[i:i + 4]) or re.match(r"'\\[ux]", text[i:i + 3])):
            j = text.find("'", i + 2) + 1
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def without_tests(text):
    """The text with every item behind `#[cfg(test)]` blanked (newlines kept), and the names
    of file modules declared behind it."""
    test_mods = set()
    while True:
        m = re.search(r"#\[cfg\(test\)\]", text)
        if not m:
            return text, test_mods
        j = m.end()
        decl = re.match(r"\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text[j:])
        if decl:
            test_mods.add(decl.group(1))
            end = j + decl.end()
        else:
            brace, semi = text.find("{", j), text.find(";", j)
            if semi >= 0 and (brace < 0 or semi < brace):
                end = semi + 1
            else:
                depth, end = 0, brace
                while True:
                    if text[end] == "{":
                        depth += 1
                    elif text[end] == "}":
                        depth -= 1
                        if depth == 0:
                            end += 1
                            break
                    end += 1
        text = text[:m.start()] + re.sub(r"[^\n]", " ", text[m.start():end]) + text[end:]


def use_paths(tree):
    """The leaves of a `use` tree as (path, name bound): `a::{b, c::{self, D as E}}` gives
    (a::b, b), (a::c, c), (a::c::D, E)."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+", "@", tree))

    def expand(prefix, s):
        leaves = []
        depth, start, parts = 0, 0, []
        for k, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:k])
                start = k + 1
        parts.append(s[start:])
        for p in parts:
            if not p:
                continue
            if "{" in p:
                head, rest = p.split("{", 1)
                leaves += expand(prefix + head, rest[:-1])
                continue
            p, _, alias = p.partition("@")
            path = prefix.rstrip(":") if p == "self" else prefix + p
            leaves.append((path, alias or path.split("::")[-1]))
        return leaves

    return expand("", tree)


class Crate:
    def __init__(self, root):
        self.root = root
        self.files = {}  # module path (tuple) → file name
        self.dirs = set()  # module paths that are directories (their file is mod.rs)
        self.reexports = defaultdict(dict)  # parent path → {name: child module path}
        self.walk((), os.path.join(root, "lib.rs"))

    def walk(self, path, file):
        self.files[path] = file
        text, test_mods = without_tests(strip(open(file, encoding="utf-8").read()))
        here = os.path.dirname(file)
        base = os.path.splitext(os.path.basename(file))[0]
        sub = here if base in ("lib", "mod", "main") else os.path.join(here, base)
        for m in re.finditer(r"(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text):
            name = m.group(1)
            if name in test_mods:
                continue
            child = path + (name,)
            flat, nested = os.path.join(sub, name + ".rs"), os.path.join(sub, name, "mod.rs")
            if os.path.exists(flat):
                self.walk(child, flat)
            elif os.path.exists(nested):
                self.dirs.add(child)
                self.walk(child, nested)
            else:
                sys.exit(f"module-cycles: cannot find the file of module {'::'.join(child)}")
        for m in re.finditer(r"(?m)^\s*pub(?:\([^)]*\))?\s+use\s+([^;]+);", text):
            for p, bound in use_paths(m.group(1)):
                segs = [s for s in re.sub(r"^(self|crate)::", "", p).split("::") if s]
                if segs and path + (segs[0],) in self.files and len(segs) > 1:
                    self.reexports[path][bound] = path + (segs[0],)

    def resolve(self, segs):
        """The deepest module a path (absolute segments) names, re-exports followed."""
        best = ()
        for k in range(1, len(segs) + 1):
            if tuple(segs[:k]) in self.files:
                best = tuple(segs[:k])
            else:
                break
        rest = segs[len(best):]
        if rest and rest[0] in self.reexports.get(best, {}):
            return self.reexports[best][rest[0]]
        return best

    def references(self, path):
        """(target module, line, text) for every dependency of the module at `path`."""
        file = self.files[path]
        text, _ = without_tests(strip(open(file, encoding="utf-8").read()))
        is_dir = path in self.dirs or path == ()
        found = []

        def add(raw, pos):
            raw = re.sub(r"\s+", "", raw)
            segs = raw.split("::")
            if segs[0] == "crate":
                absolute = segs[1:]
            elif segs[0] == "super":
                base = list(path[:-1])
                while segs and segs[0] == "super":
                    segs = segs[1:]
                    if segs and segs[0] == "super":
                        base = base[:-1]
                absolute = base + segs
            elif segs[0] == "self" and is_dir:
                absolute = list(path) + segs[1:]
            else:
                return
            line = text.count("\n", 0, pos) + 1
            found.append((self.resolve([s for s in absolute if s]), line, raw))

        uses = list(re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", text))
        for m in uses:
            for p, _ in use_paths(m.group(1)):
                add(p, m.start())
        masked = text
        for m in uses:
            masked = masked[:m.start()] + " " * (m.end() - m.start()) + masked[m.end():]
        for m in re.finditer(r"(?<![\w:])(?:crate|super)(?:\s*::\s*\w+)+", masked):
            add(m.group(0), m.start())
        return found


def cycles(graph):
    """Strongly connected components with more than one node (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def shortest_cycle(graph, start, members):
    prev = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w not in members:
                continue
            if w == start:
                path = [v]
                while prev[path[-1]] is not None:
                    path.append(prev[path[-1]])
                return list(reversed(path)) + [start]
            if w not in prev:
                prev[w] = v
                queue.append(w)
    return None


def name(path):
    return "::".join(path) if path else "lib"


def main():
    crate = Crate(ROOT)
    # graphs[parent] = {child: {child: (file, line, text)}}; parent () is the top level.
    graphs = defaultdict(lambda: defaultdict(dict))
    edges = {}  # (module, module it uses) → first (file, line, text), at full depth
    for path in crate.files:
        for target, line, raw in crate.references(path):
            # The crate root is the node `lib` of the top-level graph.
            path_, target = path or ("lib",), target or ("lib",)
            if path_ != target:
                edges.setdefault((path_, target), (os.path.relpath(crate.files[path], os.path.join(ROOT, "..")), line, raw))
            common = 0
            while common < min(len(path_), len(target)) and path_[common] == target[common]:
                common += 1
            if common >= len(path_) or common >= len(target):
                continue  # within one module, or between a module and its own parent
            parent = path_[:common]
            src, dst = path_[:common + 1], target[:common + 1]
            where = (os.path.relpath(crate.files[path], os.path.join(ROOT, "..")), line, raw)
            graphs[parent][src].setdefault(dst, where)
            graphs[parent][dst]  # every node is a key
    if "--graph" in sys.argv:
        for parent in sorted(graphs):
            print(f"graph of {name(parent) if parent else 'the crate'}:")
            for v in sorted(graphs[parent]):
                print(f"  {name(v)} -> {', '.join(name(w) for w in sorted(graphs[parent][v])) or '-'}")
    knots = 0
    for parent in sorted(graphs):
        graph = graphs[parent]
        for comp in cycles(graph):
            knots += 1
            members = set(comp)
            where = f"the modules of {name(parent)}" if parent else "the top-level modules"
            print(f"cycle among {where}: {', '.join(name(c) for c in comp)}")
            seen = set()
            for v in comp:
                cyc = shortest_cycle(graph, v, members)
                key = frozenset(zip(cyc, cyc[1:]))
                if key in seen:
                    continue
                seen.add(key)
                print("  " + " -> ".join(name(c) for c in cyc))
                for a, b in zip(cyc, cyc[1:]):
                    file, line, raw = graph[a][b]
                    print(f"      {name(a)} -> {name(b)}: {file}:{line} ({raw})")
    if knots:
        print(f"module-cycles: {knots} cycle(s) between modules; see scripts/module-cycles.py for what counts")
    else:
        print(f"module-cycles: no cycle between the {len(crate.files)} modules of src/")
    broken = check_rules(crate, edges) + check_unsafe(crate)
    return 1 if knots or broken else 0


def sections(text):
    """{heading: its text} for the `##` and `###` sections of a Markdown text."""
    out, name, lines = {}, None, []
    for line in text.split("\n"):
        m = re.match(r"#{2,3} (.*)", line)
        if m:
            if name:
                out[name] = "\n".join(lines)
            name, lines = m.group(1).strip(), []
        else:
            lines.append(line)
    if name:
        out[name] = "\n".join(lines)
    return out


def modules_in(cell):
    return [tuple(m.split("::")) for m in re.findall(r"`([a-z_][a-z_0-9:]*)`", cell)]


def within(path, module):
    return path[:len(module)] == module


def check_rules(crate, edges):
    """The layers and the rules of docs/ARCHITECTURE.md against the edges. Returns how many
    failed."""
    doc = sections(open(ARCHITECTURE, encoding="utf-8").read())
    failed = []
    known = set(crate.files) | {("lib",)}

    def exists(module, where):
        if module not in known:
            failed.append(f"{where} names `{name(module)}`, which is no module of src/")
            return False
        return True

    # The layers: rows `| 1 | `server` | … |` of the table under "Dependency direction".
    layer = {}
    for row in re.findall(r"(?m)^\| *(\d+) *\|([^|]*)\|", doc.get("Dependency direction", "")):
        for module in modules_in(row[1]):
            if exists(module, f"layer {row[0]}"):
                if module in layer:
                    failed.append(f"`{name(module)}` is in layers {layer[module]} and {row[0]}")
                layer[module] = int(row[0])
    tops = {p[:1] for p in crate.files if p}
    if not layer:
        failed.append("docs/ARCHITECTURE.md has no table of layers under \"Dependency direction\"")
    for top in sorted(tops - set(layer)):
        failed.append(f"`{name(top)}` is in no layer of docs/ARCHITECTURE.md")
    downward = 0
    for (src, dst), (file, line, raw) in sorted(edges.items()):
        a, b = src[:1], dst[:1]
        if a == b or a == ("lib",) or a not in layer or b not in layer:
            continue
        if layer[a] < layer[b]:
            downward += 1
        else:
            failed.append(f"`{name(a)}` (layer {layer[a]}) uses `{name(b)}` (layer {layer[b]}): {file}:{line} ({raw})")

    # The rules: bullets of "Rules the build checks".
    rules = 0
    for line in doc.get("Rules the build checks", "").split("\n"):
        m = re.match(r"- ((?:`[^`]+`(?:, )?)+) (does not use|is used only by) ((?:`[^`]+`(?:, )?)+)(?::|$)", line)
        if not m:
            continue
        rules += 1
        left, kind, right = modules_in(m.group(1)), m.group(2), modules_in(m.group(3))
        if not all(exists(x, f"the rule \"{line[2:].split(':')[0]}\"") for x in left + right):
            continue
        for (src, dst), (file, line_no, raw) in sorted(edges.items()):
            if kind == "does not use":
                hit = any(within(src, a) for a in left) and any(within(dst, b) for b in right) \
                    and not any(within(src, b) for b in right)
            else:
                hit = any(within(dst, b) for b in left) and not any(within(src, b) for b in left) \
                    and not any(within(src, a) for a in right)
            if hit:
                what = "does not use" if kind == "does not use" else "is used only by"
                failed.append(f"the rule \"{', '.join(f'`{name(x)}`' for x in left)} {what} "
                              f"{', '.join(f'`{name(x)}`' for x in right)}\" is broken: `{name(src)}` uses "
                              f"`{name(dst)}` at {file}:{line_no} ({raw})")
    if rules == 0:
        failed.append("docs/ARCHITECTURE.md has no rules under \"Rules the build checks\"")
    for f in failed:
        print(f"module rules: {f}")
    if not failed:
        print(f"module rules: {len(tops)} top-level modules in {len(set(layer.values()))} layers, "
              f"{downward} uses between them, each into a lower layer; {rules} rules of "
              f"docs/ARCHITECTURE.md hold")
    return len(failed)


def production_files(crate):
    """Every file of src/ that is built outside tests: the library's and the binary's."""
    files = set(crate.files.values())
    binary = Crate.__new__(Crate)
    binary.root, binary.files, binary.dirs, binary.reexports = crate.root, {}, set(), defaultdict(dict)
    binary.walk(("main",), os.path.join(crate.root, "main.rs"))
    return files | set(binary.files.values())


def check_unsafe(crate):
    """The files with `unsafe` in production code, and how many, against the inventory of
    docs/ARCHITECTURE.md; and a SAFETY comment on every `unsafe` of src/. Returns how many
    failed."""
    src = os.path.join(ROOT, "..")
    production = production_files(crate)
    found, failed = {}, []
    for here, _, names in os.walk(ROOT):
        for n in sorted(names):
            if not n.endswith(".rs"):
                continue
            file = os.path.join(here, n)
            raw = open(file, encoding="utf-8").read()
            code = strip(raw)
            rel = os.path.relpath(file, src)
            lines = raw.split("\n")
            for m in re.finditer(r"\bunsafe\b", code):
                # The comment that says why: on the line, or the comment lines (and
                # attributes) right above it.
                no = code.count("\n", 0, m.start())
                above, k = [lines[no]], no - 1
                while k >= 0 and lines[k].strip().startswith(("//", "#[")):
                    above.append(lines[k])
                    k -= 1
                if not any("SAFETY" in line for line in above):
                    failed.append(f"{rel}:{no + 1}: `unsafe` without a SAFETY comment on it or right above it")
            if file in production:
                count = len(re.findall(r"\bunsafe\b", without_tests(code)[0]))
                if count:
                    found[rel] = count
    listed = {}
    table = sections(open(ARCHITECTURE, encoding="utf-8").read()).get("The `unsafe` inventory", "")
    for file, count in re.findall(r"(?m)^\| *`(src/[^`]+)` *\| *(\d+) *\|", table):
        listed[file] = int(count)
    if not listed:
        failed.append("docs/ARCHITECTURE.md has no table under \"The `unsafe` inventory\"")
    for file in sorted(set(found) | set(listed)):
        if found.get(file, 0) != listed.get(file, 0):
            failed.append(f"{file} holds `unsafe` {found.get(file, 0)} time(s) in production code; "
                          f"docs/ARCHITECTURE.md's inventory says {listed.get(file, 0)}")
    for f in failed:
        print(f"unsafe: {f}")
    if not failed:
        print("unsafe: " + ", ".join(f"{f} {c}" for f, c in sorted(found.items()))
              + ", as docs/ARCHITECTURE.md's inventory lists them, each with its SAFETY comment")
    return len(failed)


if __name__ == "__main__":
    sys.exit(main())
