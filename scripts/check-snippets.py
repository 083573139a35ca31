#!/usr/bin/env python3
"""Runs the commands and programs of the README and the docs against a build, as a reader would.

Reads the fenced code blocks of README.md, python/README.md and docs/*.md, each file's blocks in
order in one working folder of its own (where `build` is the build folder, `tessera` on the PATH
is the build's CLI and HOME is a fresh folder), and:
  - sh, bash, shell: runs the block with bash (-e: every command must succeed);
  - c, cpp: compiles it against the source tree's headers and the build's libtessera, and runs
    it when it has a main() (a block without one is compiled as declarations: it must agree with
    the headers it includes, and a C block with tessera/tessera.h);
  - python: left to CTest's python.pytest (python/tests/test_readme.py runs them);
  - any other language, or none (CMake, JSON, diagrams): not a command.
A block that cannot run here says so in an HTML comment on the line before its fence:
  <!-- snippet: needs-gpu -->       runs on a GPU                 (reported as skipped)
  <!-- snippet: needs-mpi -->       runs under mpirun             (reported as skipped)
  <!-- snippet: needs-numpy -->     runs where python3 imports numpy, else skipped
  <!-- snippet: needs-install -->   runs with the build installed into $HOME/tessera
  <!-- snippet: needs PATH -->      runs where PATH exists in the working folder (build/bench: a
                                    build with the benchmarks), else skipped
  <!-- snippet: file NAME -->       written to NAME in the working folder first (then as above)
  <!-- snippet: output -->          a sample of output, not a command
  <!-- snippet: fragment -->        a piece of a program (names declared elsewhere), not run
  <!-- snippet: skip REASON -->     not run, for the reason given
Several directives are separated by ';'. Exits 1 when a block fails, 0 otherwise.
  check-snippets.py --source DIR --build DIR --cli PATH --library-dir DIR [--cc CC] [--cxx CXX]
                    [--cmake CMAKE] [--install-prefix DIR] [FILE.md ...]
"""
import argparse
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCE = re.compile(r"^( *)(```+)\s*([\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*snippet:\s*(.*?)\s*-->\s*$")
SHELL = {"sh", "bash", "shell"}
C_LANGS = {"c": "c", "cpp": "c++", "c++": "c++", "cxx": "c++"}
TIMEOUT_S = 180


def blocks(path):
    """(line, language, directives, code) for each fenced block of a Markdown file."""
    lines = path.read_text().splitlines()
    found = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and not re.match(r"^ *" + fence + r"\s*$", lines[i]):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        i += 1
        before = start - 1
        while before >= 0 and not lines[before].strip():
            before -= 1
        directives = []
        if before >= 0 and MARKER.match(lines[before]):
            directives = [d.strip() for d in MARKER.match(lines[before]).group(1).split(";") if d.strip()]
        found.append((start + 1, lang, directives, "\n".join(body) + "\n"))
    return found


class Folder:
    """The working folder of one Markdown file."""

    def __init__(self, args, root):
        self.args = args
        self.path = pathlib.Path(tempfile.mkdtemp(prefix="snippets-", dir=root))
        (self.path / "home").mkdir()
        (self.path / "bin").mkdir()
        (self.path / "build").symlink_to(args.build)
        (self.path / "bin" / "tessera").symlink_to(args.cli)
        self.env = dict(os.environ, HOME=str(self.path / "home"),
                        PATH=f"{self.path / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}")
        self.env.setdefault("STARPU_SILENT", "1")
        self.installed = False

    def install(self):
        if self.installed:
            return
        prefix = self.path / "home" / "tessera"
        if self.args.install_prefix:
            prefix.symlink_to(self.args.install_prefix)
        else:
            subprocess.run([self.args.cmake, "--install", str(self.args.build), "--prefix", str(prefix)],
                           check=True, capture_output=True, timeout=TIMEOUT_S)
        self.installed = True

    def run(self, command, **kwargs):
        return subprocess.run(command, cwd=self.path, env=self.env, capture_output=True, text=True,
                              timeout=TIMEOUT_S, **kwargs)


def compile_and_run(folder, lang, code, name):
    compiler = folder.args.cc if lang == "c" else folder.args.cxx
    source = folder.path / (name or f"snippet.{'c' if lang == 'c' else 'cpp'}")
    has_main = re.search(r"\bint\s+main\s*\(", code) is not None
    if not name:
        # Declarations of the C API are checked against its header.
        source.write_text(("#include <tessera/tessera.h>\n" if lang == "c" and not has_main else "") + code)
    flags = ["-std=c11" if lang == "c" else "-std=c++17", f"-I{folder.args.source / 'include'}",
             f"-I{folder.args.build / 'generated' / 'include'}"]
    if not has_main:
        done = folder.run([compiler, *flags, "-fsyntax-only", str(source)])
        return done, "compiled (declarations)"
    program = folder.path / "snippet"
    done = folder.run([compiler, *flags, str(source), "-o", str(program), f"-L{folder.args.library_dir}",
                       "-ltessera", f"-Wl,-rpath,{folder.args.library_dir}"])
    if done.returncode != 0:
        return done, "compile"
    return folder.run([str(program)]), "compiled and ran"


def numpy_here(folder):
    return folder.run(["python3", "-c", "import numpy"]).returncode == 0


def check_block(folder, lang, directives, code):
    """('ran' | 'skipped' | 'FAILED', what)."""
    file_name = None
    needs_install = False
    for d in directives:
        word, _, rest = d.partition(" ")
        if word == "output":
            return "skipped", "output sample"
        if word == "fragment":
            return "skipped", "a fragment of a program"
        if word == "skip":
            return "skipped", rest or "marked skip"
        if word == "needs-gpu":
            return "skipped", "needs a GPU"
        if word == "needs-mpi":
            return "skipped", "needs mpirun and several ranks"
        if word == "needs-numpy" and not numpy_here(folder):
            return "skipped", "needs numpy in python3"
        if word == "needs" and not (folder.path / rest.strip()).exists():
            return "skipped", f"needs {rest.strip()}"
        if word == "needs-install":
            needs_install = True
        if word == "file":
            file_name = rest.strip()
            (folder.path / file_name).write_text(code)
    if needs_install:
        folder.install()
    if lang in SHELL:
        done, what = folder.run(["bash", "-euo", "pipefail", "-c", code]), "ran"
    elif lang in C_LANGS:
        done, what = compile_and_run(folder, lang, code, file_name)
    elif lang == "python":
        return "skipped", "run by python.pytest (python/tests/test_readme.py)"
    elif file_name:
        return "ran", f"written to {file_name}"
    else:
        return "skipped", f"not a command ({lang or 'no language'})"
    if done.returncode != 0:
        tail = (done.stdout + done.stderr)[-3000:]
        return "FAILED", f"{what}: exit {done.returncode}\n{tail}"
    return "ran", what


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=pathlib.Path, default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--build", type=pathlib.Path, required=True)
    parser.add_argument("--cli", type=pathlib.Path, required=True)
    parser.add_argument("--library-dir", type=pathlib.Path, required=True)
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"))
    parser.add_argument("--cxx", default=os.environ.get("CXX", "c++"))
    parser.add_argument("--cmake", default="cmake", help="the cmake that installs the build for needs-install blocks")
    parser.add_argument("--install-prefix", type=pathlib.Path,
                        help="an installed Tessera to use for needs-install blocks (default: install the build)")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    args.source, args.build = args.source.resolve(), args.build.resolve()
    args.cli, args.library_dir = args.cli.resolve(), args.library_dir.resolve()
    files = args.files or ([args.source / "README.md", args.source / "python" / "README.md"]
                           + sorted((args.source / "docs").glob("*.md")))
    counts = {"ran": 0, "skipped": 0, "FAILED": 0}
    root = tempfile.mkdtemp(prefix="tessera-snippets-")
    try:
        for path in files:
            folder = None
            for line, lang, directives, code in blocks(path):
                folder = folder or Folder(args, root)
                start = time.monotonic()
                try:
                    status, what = check_block(folder, lang, directives, code)
                except subprocess.TimeoutExpired:
                    status, what = "FAILED", f"timed out after {TIMEOUT_S} s"
                except subprocess.CalledProcessError as e:
                    status, what = "FAILED", f"{' '.join(e.cmd)}: exit {e.returncode}\n{e.stderr}"
                counts[status] += 1
                name = path.relative_to(args.source) if path.is_relative_to(args.source) else path
                print(f"{name}:{line}: [{lang or '-'}] {status}: {what} ({time.monotonic() - start:.1f} s)")
                if status == "FAILED":
                    print("  " + code.replace("\n", "\n  "))
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"check-snippets: {counts['ran']} ran, {counts['skipped']} skipped, {counts['FAILED']} failed")
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
