#!/usr/bin/env python3
"""Checks that the repository paths named in the documentation and in source comments exist.

Scans the tracked Markdown files and the comments of the sources (C, C++, CUDA, CMake, Python,
shell) under SOURCE_FOLDERS for paths that start with one of the repository's top-level folders
(`src/runtime/host/environment.cpp`, `docs/policies.md`, `scripts/test.sh:12`, with or without
backticks, with an optional `:line` suffix) and names each one that exists neither relative to
the repository's root nor relative to the folder of the file that names it. URLs, paths under a
build folder (`build/...`, `$PWD/build/...`), absolute paths (`/opt/...`) and placeholders
(`...`, `<name>`, `$VAR`, `FILE`) are not paths of the checkout and are left alone.
Exits 1 when a path is missing.
  check-paths.py [SOURCE_DIR]
"""
import glob
import os
import pathlib
import re
import subprocess
import sys

# Folders whose sources' comments are read (Markdown files are read wherever they are).
SOURCE_FOLDERS = ("src", "include", "codelets", "scheduler_policies", "python", "scripts", "tests",
                  "bench", "examples", "cmake", "fuzz", "sim")
C_LIKE = {".c", ".h", ".cpp", ".hpp", ".cc", ".cu", ".cuh"}
HASH_COMMENTS = {".cmake", ".py", ".sh"}
# Top-level folders a repository-relative path may start with.
TOP_FOLDERS = ("src", "include", "codelets", "scheduler_policies", "python", "scripts", "tests",
               "bench", "examples", "cmake", "fuzz", "sim", "docs", ".ci")

PATH = re.compile(
    r"(?<![\w./$~{}@:-])"            # not the tail of a longer path, a URL, $VAR/... or ~/...
    r"(?:\./)?"
    r"((?:" + "|".join(re.escape(t) for t in TOP_FOLDERS) + r")/[\w.+{},*/-]*[\w/*}])")
LINE_SUFFIX = re.compile(r"(:\d+(?:[-,]\d+)*)+$")
FOREIGN = re.compile(r"\b(?:StarPU|SimGrid|OpenBLAS|LAPACK|ScaLAPACK|MAGMA|Chameleon|SLATE|hwloc|CUDA|"
                     r"cuSOLVER|nanobind|numpy|SciPy|PyTorch)(?: [\d.]+)?'s\s")
PLACEHOLDER = re.compile(r"\.\.\.|[A-Z]{3,}(?:_[A-Z]+)*(?=$|[./])|<|>|\$")


def tracked_files(root):
    try:
        out = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], check=True,
                             capture_output=True).stdout.decode()
        return [f for f in out.split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        skip = {".git", "build"}
        files = []
        for folder, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d not in skip and not d.startswith("build")]
            files += [os.path.relpath(os.path.join(folder, n), root) for n in names]
        return files


def c_comments(text):
    """The comments of C-like source (runs of // lines joined), strings and character literals
    left out."""
    out = []
    for m in re.finditer(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', text, re.S):
        if not m.group(0).startswith("/"):
            continue
        line = text.count("\n", 0, m.start()) + 1
        if out and m.group(0).startswith("//") and out[-1][1].startswith("//") \
                and out[-1][0] + out[-1][1].count("\n") == line - 1:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + m.group(0))
        else:
            out.append((line, m.group(0)))
    return out


def hash_comments(text):
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        m = re.search(r'(?:^|\s)#(?![!{#(])(.*)$', line)
        if m and line.count('"', 0, m.start()) % 2 == 0 and line.count("'", 0, m.start()) % 2 == 0:
            out.append((number, m.group(1)))
    return out


def texts_to_scan(root, name):
    path = root / name
    suffix = path.suffix
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    if suffix == ".md":
        return [(1, text)]
    if not name.startswith(tuple(f + "/" for f in SOURCE_FOLDERS)):
        return []
    if suffix in C_LIKE:
        return c_comments(text)
    if suffix in HASH_COMMENTS or path.name == "CMakeLists.txt":
        return hash_comments(text)
    return []


def expand(candidate):
    """`a/{b,c}.hpp` -> [`a/b.hpp`, `a/c.hpp`]."""
    m = re.search(r"\{([^{}]*)\}", candidate)
    if not m:
        return [candidate]
    return [x for alt in m.group(1).split(",")
            for x in expand(candidate[:m.start()] + alt + candidate[m.end():])]


def exists(root, base, candidate):
    for folder in (root, root / base):
        full = folder / candidate
        if "*" in candidate:
            if glob.glob(str(full)):
                return True
        # A program is named after its source: bench/bench_policies is bench/bench_policies.cpp.
        elif full.exists() or glob.glob(glob.escape(str(full)) + ".*"):
            return True
    return False


def foreign(text, start):
    """Whether the path at start is in another project's tree: the parenthesis it sits in (or,
    outside one, its line) names that project first, as in `(StarPU's src/core/topology.c)`."""
    paren = text.rfind("(", max(0, start - 300), start)
    if paren < 0 or ")" in text[paren:start]:
        paren = text.rfind("\n", 0, start) + 1
    return FOREIGN.search(text, paren, start) is not None


def check(root, name, line, text):
    problems = []
    for m in PATH.finditer(text):
        candidate = LINE_SUFFIX.sub("", m.group(1)).rstrip(".,;:)")
        if PLACEHOLDER.search(candidate) or foreign(text, m.start()):
            continue
        base = pathlib.PurePosixPath(name).parent
        if all(exists(root, base, c) or exists(root, base, c.rstrip(".")) for c in expand(candidate)):
            continue
        number = line + text.count("\n", 0, m.start())
        problems.append(f"{name}:{number}: {candidate} does not exist")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    problems = []
    files = 0
    for name in sorted(tracked_files(root)):
        texts = texts_to_scan(root, name)
        if texts:
            files += 1
        for line, text in texts:
            problems += check(root, name, line, text)
    for p in problems:
        print(p)
    print(f"check-paths: {files} files read, {len(problems)} missing path(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
