#!/usr/bin/env python3
"""scripts/check-cycles.py BUILD [ROOT] - fail if product files depend on each
other in a cycle.

A file depends on another when its object file uses a symbol the other's
defines (nm). Product files are the compile_commands.json entries outside
tests/. Each folder is meant to be a layer and each file to depend only
downward; a strongly connected component of two or more files is printed
with the edges that close it, and the exit status is 1."""
import collections
import json
import os
import subprocess
import sys


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True,
                         check=True).stdout
    defined, used = set(), set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRC":
            defined.add(parts[2])
        elif len(parts) == 2 and parts[0] == "U":
            used.add(parts[1])
    return defined, used


def object_of(entry):
    if "output" in entry:
        return entry["output"]
    args = entry.get("arguments") or entry["command"].split()
    return args[args.index("-o") + 1]


def components(graph):
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

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
                found.append(sorted(comp))

    sys.setrecursionlimit(100000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: check-cycles.py BUILD_DIR [SOURCE_ROOT]")
    build = sys.argv[1]
    root = (os.path.abspath(sys.argv[2]) if len(sys.argv) == 3 else
            os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    files = {}
    for e in entries:
        src = os.path.relpath(e["file"], root)
        if src.startswith("tests/") or src.startswith(".."):
            continue
        obj = os.path.join(e["directory"], object_of(e))
        if not os.path.exists(obj):
            sys.exit(f"check-cycles: {obj} missing: build {build} first")
        files[src] = symbols(obj)
    owner = {}
    for src, (defined, _) in files.items():
        for s in defined:
            owner[s] = src
    graph = collections.defaultdict(set)
    for src, (_, used) in files.items():
        graph[src]
        for s in used:
            if s in owner and owner[s] != src:
                graph[src].add(owner[s])
    cycles = components(graph)
    for comp in cycles:
        print(f"cycle of {len(comp)} files:")
        members = set(comp)
        for src in comp:
            deps = sorted(graph[src] & members)
            print(f"  {src} -> {', '.join(deps)}")
    if cycles:
        sys.exit(1)
    if not files:
        sys.exit(f"check-cycles: no product files in {build}")
    print(f"no dependency cycles among {len(files)} product files")


main()
