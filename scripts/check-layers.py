#!/usr/bin/env python3
"""Checks that the includes between Tessera's layers run one way (docs/architecture.md).

Every source file belongs to one layer (LAYERS, first matching pattern); each #include "..." that
resolves to another layer's file must be an edge of ALLOWED, and the layer graph must have no
cycle. Exits 1 and names each offending include otherwise.
  check-layers.py [SOURCE_DIR]
"""
import fnmatch
import pathlib
import re
import sys

# (layer, patterns relative to the source tree); the first match wins. Each layer is a folder
# and a CMake object library (CMakeLists.txt) that sees only the folders of the layers it may use.
LAYERS = [
    ("kernels", ["codelets/kernels/*"]),
    ("public-api", ["include/tessera/*"]),
    # What libtessera exports for its own tools only (the CLI, the drop-in): not installed.
    ("tool-api", ["src/tool_api/*"]),
    ("algorithms", ["src/algorithms/*"]),
    # Decide once, then run: a request's plan from a machine snapshot and one table of thresholds.
    ("plan", ["src/plan/*"]),
    ("task-tags", ["codelets/tags/*"]),
    ("policies", ["scheduler_policies/*"]),
    # The names of the public options' values (parse_mode, to_string...), for every layer above.
    ("names", ["src/names/*"]),
    # tessera::Trace and its renderings; the runtime layer records StarPU's tasks into it.
    ("trace", ["src/trace/*"]),
    # The SPD test matrices and backward errors that the CLI, the tests and the benchmarks share.
    ("testkit", ["src/testkit/*"]),
    ("lapack-drop-in", ["src/lapack/*"]),
    ("cli", ["src/cli/*"]),
    # The StarPU runtime layer: codelets, runtime control, submissions, traces, resources.
    ("runtime", ["src/runtime/*", "codelets/starpu/*"]),
    # The public API's implementation: requests built from the algorithms on the runtime.
    ("api", ["src/api/*"]),
    # Distributed matrices on StarPU-MPI: the algorithms inserted through the runtime layer's
    # DistributedInserter, and the public distributed API.
    ("distributed", ["src/distributed/*"]),
    # The lazy forwarders of cuBLAS, cuSOLVER and cuSPARSE that libtessera links: C, below every
    # layer, including none.
    ("lazy-cuda", ["src/lazy_cuda/*"]),
]

# Layers whose files never include StarPU: the algorithms work through the task interface, the
# API's implementation through the runtime layer's StarPU-free headers, and the public headers
# leave StarPU to the one opt-in interop header.
STARPU_FREE = {"kernels", "public-api", "tool-api", "algorithms", "plan", "names", "trace", "testkit", "api",
               "lapack-drop-in", "cli", "lazy-cuda"}
STARPU_INTEROP_HEADER = "include/tessera/starpu_interop.hpp"
STARPU_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"]starpu[^>"]*[>"]', re.M)

# Layers that never see CUDA either: the tile loops and the plans, which tests run on machines
# without a GPU against fake machines and a recording backend, the options' names and the traces'
# renderings, the test kit.
CUDA_FREE = {"algorithms", "plan", "names", "trace", "testkit"}
CUDA_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](cuda|cublas|cusolver|cusparse|nvml)[^>"]*[>"]', re.M)

# MPI belongs to the distributed layer, its public header and the CLI (which starts MPI under
# mpirun): the algorithms and the single-node runtime never see it.
MPI_USERS = {"distributed", "cli"}
MPI_PUBLIC_HEADER = "include/tessera/distributed.hpp"
# The drop-in's ScaLAPACK backend (built only with StarPU-MPI): it turns a BLACS grid's Fortran
# communicator handle into an MPI_Comm for the distributed API. The drop-in's front library never
# sees MPI.
MPI_DROP_IN_BACKEND = "src/lapack/scalapack_backend.cpp"
MPI_INCLUDE = re.compile(r'^\s*#\s*include\s+[<"](mpi\.h|starpu_mpi[^>"]*)[>"]', re.M)

# The process environment has one owner per library: every read and write of libtessera goes
# through environment.cpp; libtessera_lapack, which reaches libtessera only through a backend it
# may fail to load, reads what it must say about that failure in drop_in_environment.cpp.
# The lazy CUDA forwarders read LD_LIBRARY_PATH where the dynamic loader would, in
# lazy_library.c.
ENVIRONMENT_OWNERS = {"src/runtime/host/environment.cpp", "src/lapack/drop_in_environment.cpp",
                      "src/lazy_cuda/lazy_library.c"}
ENVIRONMENT_ACCESS = re.compile(r'\b(getenv|secure_getenv|setenv|putenv|unsetenv)\s*\(')

# layer -> the layers it may include. Lower layers never include higher ones.
ALLOWED = {
    "kernels": {"public-api"},
    "public-api": set(),
    "tool-api": {"public-api"},
    "algorithms": {"public-api"},
    "plan": {"algorithms", "public-api"},
    "task-tags": {"public-api"},
    "policies": {"task-tags", "public-api"},
    "names": {"public-api"},
    "trace": {"public-api"},
    "runtime": {"plan", "algorithms", "task-tags", "policies", "kernels", "public-api", "tool-api"},
    "api": {"runtime", "plan", "algorithms", "public-api", "tool-api", "kernels"},
    "lapack-drop-in": {"public-api", "tool-api"},
    "testkit": set(),
    "cli": {"public-api", "tool-api", "kernels", "testkit"},
    "distributed": {"runtime", "plan", "algorithms", "task-tags", "policies", "kernels", "public-api"},
    "lazy-cuda": set(),
}

# Search path of the library's targets (CMakeLists.txt), after the including file's folder.
SEARCH = ["src/algorithms", "src/plan", "src/runtime/starpu", "src/runtime/cuda", "src/runtime/host", "src/api", "src/distributed", "codelets/starpu", "codelets/tags", "codelets/kernels",
          "scheduler_policies", "src/tool_api", "codelets", "include", "src"]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    for layer, patterns in LAYERS:
        if any(fnmatch.fnmatch(path, p) or fnmatch.fnmatch(path, p + "/*") for p in patterns):
            return layer
    return None


def resolve(root, source, name):
    for folder in [source.parent] + [root / s for s in SEARCH]:
        candidate = (folder / name).resolve()
        if candidate.is_file() and root in candidate.parents:
            return candidate.relative_to(root).as_posix()
    return None  # a generated header or another project's


def cycle(edges):
    state = {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                return path + [node, nxt]
            if nxt not in state:
                found = visit(nxt, path + [node])
                if found:
                    return found
        state[node] = "done"
        return None

    for node in sorted(edges):
        if node not in state:
            found = visit(node, [])
            if found:
                return found
    return None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    files = [p for d in ["src", "codelets", "scheduler_policies", "include"] for p in sorted((root / d).rglob("*"))
             if p.suffix in {".c", ".cpp", ".hpp", ".h", ".cu", ".cuh", ".in"}]
    problems, edges = [], {}
    for source in files:
        rel = source.relative_to(root).as_posix()
        from_layer = layer_of(rel)
        if from_layer is None:
            problems.append(f"{rel}: in no layer (add it to LAYERS in {pathlib.Path(__file__).name})")
            continue
        text = source.read_text(errors="replace")
        if rel not in ENVIRONMENT_OWNERS and ENVIRONMENT_ACCESS.search(text):
            problems.append(f"{rel}: reads or writes the environment, which only "
                            f"{' and '.join(sorted(ENVIRONMENT_OWNERS))} do")
        if from_layer in STARPU_FREE and rel != STARPU_INTEROP_HEADER and STARPU_INCLUDE.search(text):
            problems.append(f"{rel}: includes StarPU, which the {from_layer} layer never does")
        if from_layer in CUDA_FREE and CUDA_INCLUDE.search(text):
            problems.append(f"{rel}: includes CUDA, which the {from_layer} layer never does")
        if (from_layer not in MPI_USERS and rel not in (MPI_PUBLIC_HEADER, MPI_DROP_IN_BACKEND)
                and MPI_INCLUDE.search(text)):
            problems.append(f"{rel}: includes MPI or StarPU-MPI, which the {from_layer} layer never does")
        for name in INCLUDE.findall(text):
            target = resolve(root, source, name)
            to_layer = layer_of(target) if target else None
            if to_layer is None or to_layer == from_layer:
                continue
            edges.setdefault(from_layer, set()).add(to_layer)
            if to_layer not in ALLOWED[from_layer]:
                problems.append(f"{rel}: includes {target}: {from_layer} may not depend on {to_layer}")
    found = cycle(edges)
    if found:
        problems.append("layers include each other in a cycle: " + " -> ".join(found))
    for p in problems:
        print(p)
    print(f"{len(files)} files, {sum(len(v) for v in edges.values())} layer dependencies, "
          f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
