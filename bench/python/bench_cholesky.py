#!/usr/bin/env python3
"""Times tessera's Cholesky factorization against its Python peers on the same arrays, in one run.

Suites (--suites, default all three):
  batched  device-resident stacks: tessera.cholesky_ex vs torch.linalg.cholesky_ex vs
           cupy.linalg.cholesky, GFLOP/s (n^3/3 per matrix, 4 n^3/3 for complex Hermitian ones);
  dense    device-resident matrices: tessera.cholesky_ex vs torch.linalg.cholesky_ex vs
           cupy.linalg.cholesky, TFLOP/s;
  host     numpy arrays: tessera.cholesky (--mode, default auto) vs numpy.linalg.cholesky vs
           scipy.linalg.cholesky, single matrices and a stack, GFLOP/s.
The device arrays are torch tensors on the current CUDA device; cupy and tessera take them through
DLPack (no copy). Each cell is one library on one array: a first call (its fresh-call cost, reported
apart: the first cell of a library in the process also pays that library's start-up), then --reps
timed calls whose median gives the rate. Cells alternate the libraries, so that every library's
calls meet the same clocks and host load: after every library's first call, each round makes one
block of timed calls of each library, the round's first library rotating. A device block is one
call (--min-seconds adds rounds). A host cell has --host-rounds rounds (3), each block a third of
the --reps calls or more where they take less than a third of --min-seconds (0.5 s, so that one
preemption of a shared machine cannot cover most of a cell), after a pause of half a second, so
that no library's idle BLAS threads still spin in the next library's block. A call is timed from a
synchronised device to the device's synchronisation after it, so whatever stream a library uses is
counted. Every result is checked:
||A x - L (L^T x)|| / (||A||_F ||x||) for a random x, at most n * eps. A library that is missing,
fails or runs out of memory gets 'n/a' in its cell and the run goes on; memory is handed back to
the device (torch and cupy caches emptied) between cells.

    python3 bench/python/bench_cholesky.py --json results.json             # everything
    python3 bench/python/bench_cholesky.py --quick                         # a short run
    python3 bench/python/bench_cholesky.py --suites dense --precisions d --max-n 16384
    python3 bench/python/bench_cholesky.py --suites batched --batched 10000x32,1000x512 --reps 20

Ratios are rate ratios: tessera/torch > 1 means Tessera is faster. bench/python/plot_cholesky.sh
plots the batched rows of the JSON.

Energy (--energy-seconds S, 0 for none): after its timed calls each library's call is repeated back
to back for S seconds between two readings of the GPU's energy counter (NVML's total energy) and of
the host's RAPL package counters where they can be read, as bench/energy/energy_meter.hpp does for
the C++ benchmarks: joules per call and GFLOP/s per watt (GPU and host together where both are
read) in the JSON, and a GFLOP/s-per-watt column per library in the tables.
"""
import argparse
import ctypes
import gc
import glob
import importlib
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

DEVICE = "cuda"  # the torch device of the device suites: the current CUDA device
PRECISIONS = {"d": "float64", "s": "float32", "z": "complex128", "c": "complex64"}
PRECISION_NAMES = {"d": "double", "s": "single", "z": "complex double", "c": "complex single"}
DEFAULTS = {
    "batched": "10000x8,10000x16,10000x32,10000x64,10000x128,10000x256,1000x256,1000x512",
    "dense": "4096,8192,16384,30000",
    "host": "1000,4000,8000",
    "host_batched": "10000x32",
    "reps": {"batched": 20, "dense": 5, "host": 3},
    "min_seconds": {"batched": 0.0, "dense": 0.0, "host": 0.5},
}
QUICK = {
    "batched": "10000x32,1000x256",
    "dense": "4096",
    "host": "1000",
    "host_batched": "1000x32",
    "reps": {"batched": 3, "dense": 2, "host": 2},
    "min_seconds": {"batched": 0.0, "dense": 0.0, "host": 0.2},
}
SUITE_PEERS = {"batched": ("tessera", "torch", "cupy"), "dense": ("tessera", "torch", "cupy"),
               "host": ("tessera", "numpy", "scipy")}
UNITS = {"batched": ("GFLOP/s", 1e9, ".1f"), "dense": ("TFLOP/s", 1e12, ".2f"), "host": ("GFLOP/s", 1e9, ".1f")}

MODULES = {}  # import name -> module, or the error that kept it out
QUIET_SECONDS = 0.5


def module(name):
    """The module, or None when it cannot be imported (the reason stays in MODULES)."""
    if name not in MODULES:
        try:
            MODULES[name] = importlib.import_module(name)
        except Exception as error:  # a peer that cannot even load is that peer's 'n/a'
            MODULES[name] = error
    found = MODULES[name]
    return None if isinstance(found, Exception) else found


def short(error):
    """One line for an exception."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0] if text else ''}"[:200]


# ---- arrays -----------------------------------------------------------------------------------------


def host_synchronize():
    """Host calls return with their result."""


def free_memory():
    """Drops unreferenced arrays and hands the torch and cupy caches back to the device."""
    gc.collect()
    time.sleep(QUIET_SECONDS)
    torch = module("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    cupy = module("cupy")
    if cupy is not None:
        cupy.get_default_memory_pool().free_all_blocks()
        cupy.get_default_pinned_memory_pool().free_all_blocks()


def spd_device(batch, n, precision, seed):
    """A torch stack of shape (batch, n, n) (no batch axis for batch None) on the current CUDA device:
    symmetric (Hermitian), off-diagonal entries (their parts) uniform in [-1, 1], diagonal n
    (diagonally dominant, so positive definite)."""
    torch = module("torch")
    shape = (n, n) if batch is None else (batch, n, n)
    generator = torch.Generator(device=DEVICE).manual_seed(seed)
    A = torch.rand(shape, dtype=getattr(torch, PRECISIONS[precision]), device=DEVICE, generator=generator)
    A.mul_(2).sub_(1 + 1j if A.is_complex() else 1)
    A = A + A.mH
    A.mul_(0.5)
    A.diagonal(dim1=-2, dim2=-1).fill_(n)
    return A


def spd_host(batch, n, precision, seed):
    """The numpy counterpart of spd_device, C-ordered as numpy makes arrays."""
    rng = np.random.default_rng(seed)
    shape = (n, n) if batch is None else (batch, n, n)
    A = rng.uniform(-1.0, 1.0, size=shape).astype(PRECISIONS[precision])
    if A.dtype.kind == "c":
        A += 1j * rng.uniform(-1.0, 1.0, size=shape)
    A = A + np.conj(np.swapaxes(A, -1, -2))
    A *= 0.5
    diagonal = np.arange(n)
    A[..., diagonal, diagonal] = n
    return np.ascontiguousarray(A)


def device_residual(A, L):
    """max over the stack of ||A x - L (L^T x)|| / (||A||_F ||x||), computed by torch."""
    torch = module("torch")
    L = L if isinstance(L, torch.Tensor) else torch.from_dlpack(L)
    x = torch.randn(A.shape[:-1] + (1,), dtype=A.dtype, device=A.device)
    r = A @ x - L @ (L.mH @ x)
    ratio = torch.linalg.norm(r, dim=(-2, -1)) / (
        torch.linalg.norm(A, dim=(-2, -1)) * torch.linalg.norm(x, dim=(-2, -1)))
    return float(torch.nan_to_num(ratio, nan=float("inf")).max())


def host_residual(A, L):
    """The numpy counterpart of device_residual."""
    x = np.random.default_rng(1).standard_normal(A.shape[:-1] + (1,)).astype(A.dtype)
    r = A @ x - L @ (np.conj(np.swapaxes(L, -1, -2)) @ x)
    ratio = np.linalg.norm(r, axis=(-2, -1)) / (np.linalg.norm(A, axis=(-2, -1)) * np.linalg.norm(x, axis=(-2, -1)))
    return float(np.nan_to_num(ratio, nan=np.inf).max())


# ---- the libraries: name -> (module name, prepare(A) untimed, factor(prepared) timed) -------------
# A library whose module did not import is never called: its cells are 'n/a'.


def same(A):
    return A


def device_peers():
    tessera, torch, cupy = module("tessera"), module("torch"), module("cupy")

    # The forms that leave the info on the device, as CuPy's cholesky does by default: none of
    # the three waits for the GPU to check it.
    return {
        "tessera": ("tessera", same, lambda A: tessera.cholesky_ex(A)[0]),
        "torch": ("torch", same, lambda A: torch.linalg.cholesky_ex(A)[0]),
        "cupy": ("cupy", lambda A: cupy.from_dlpack(A), lambda A: cupy.linalg.cholesky(A)),
    }


def host_peers(mode):
    tessera, linalg = module("tessera"), module("scipy.linalg")
    return {
        "tessera": ("tessera", same, lambda A: tessera.cholesky(A, mode=mode)),
        "numpy": ("numpy", same, np.linalg.cholesky),
        "scipy": ("scipy.linalg", same, lambda A: linalg.cholesky(A, lower=True)),
    }


# ---- energy -----------------------------------------------------------------------------------------


class EnergyMeter:
    """The GPU's NVML total-energy counter and the host's RAPL package counters. The NVML counter
    advances in steps (every 100 ms on an H200): begin() starts on a step, end() waits for the step
    after the work and takes off the time since the work ended at the idle power."""

    def __init__(self, pci_bus_id=None, powercap="/sys/class/powercap"):
        self.gpu = self.host_zones = None
        self.idle_watts = 0.0
        self.why_not = []
        try:
            nvml = ctypes.CDLL("libnvidia-ml.so.1")
            if nvml.nvmlInit_v2() != 0:
                raise RuntimeError("nvmlInit failed")
            handle = ctypes.c_void_p()
            found = (nvml.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(handle)) if pci_bus_id
                     else nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(handle)))
            if found != 0:
                raise RuntimeError(f"no NVML device for {pci_bus_id or 'index 0'}")
            self.gpu = (nvml, handle)
            self.gpu_millijoules()
        except (OSError, RuntimeError) as error:
            self.gpu = None
            self.why_not.append(f"GPU: {error}")
        zones = sorted(z for z in glob.glob(os.path.join(powercap, "intel-rapl:*")) if z.count(":") == 1)
        try:
            self.host_zones = [(z, int(open(os.path.join(z, "max_energy_range_uj")).read())) for z in zones]
            self.host_last = [int(open(os.path.join(z, "energy_uj")).read()) for z, _ in self.host_zones]
            self.host_total = 0.0
            if not zones:
                raise OSError(f"no RAPL package zone under {powercap}")
        except OSError as error:
            self.host_zones = None
            self.why_not.append(f"host: {error}")

    def description(self):
        parts = ["GPU energy: " + ("NVML total energy" if self.gpu else "none"),
                 "host energy: " + (f"RAPL, {len(self.host_zones)} package zone(s)" if self.host_zones else "none")]
        return "; ".join(parts) + (f" ({'; '.join(self.why_not)})" if self.why_not else "")

    def gpu_millijoules(self):
        nvml, handle = self.gpu
        value = ctypes.c_ulonglong()
        if nvml.nvmlDeviceGetTotalEnergyConsumption(handle, ctypes.byref(value)) != 0:
            raise RuntimeError("NVML total energy unsupported")
        return value.value

    def host_joules(self):
        for i, (zone, wrap) in enumerate(self.host_zones or []):
            now = int(open(os.path.join(zone, "energy_uj")).read())
            last = self.host_last[i]
            self.host_total += ((now - last) if now >= last else now + wrap - last) * 1e-6
            self.host_last[i] = now
        return self.host_total

    def next_step(self):
        start, give_up = self.gpu_millijoules(), time.perf_counter() + 1.0
        while True:
            value, now = self.gpu_millijoules(), time.perf_counter()
            if value != start or now > give_up:
                return value, now
            time.sleep(0.0002)

    def begin(self):
        self.start_cpu = time.process_time()
        self.start = time.perf_counter()
        if self.gpu:
            self.start_mj, self.start = self.next_step()
        self.start_host = self.host_joules() if self.host_zones else None

    def end(self):
        """(seconds, GPU joules, host joules, process CPU seconds) since begin(); None for a counter
        not read."""
        work_end = time.perf_counter()
        cpu = time.process_time() - self.start_cpu
        host = self.host_joules() - self.start_host if self.host_zones else None
        gpu = None
        if self.gpu:
            mj, step = self.next_step()
            gpu = (mj - self.start_mj) * 1e-3 - self.idle_watts * (step - work_end)
        return work_end - self.start, gpu, host, cpu

    def measure_idle(self, seconds=1.0):
        if self.gpu:
            start_mj, start = self.next_step()
            time.sleep(seconds)
            end_mj, end = self.next_step()
            self.idle_watts = (end_mj - start_mj) * 1e-3 / (end - start)

    def per_call(self, call, synchronize, seconds):
        """Seconds, joules (GPU, host) and process CPU seconds per call, the calls back to back for
        `seconds`."""
        result = call()
        synchronize()
        calls = 0
        self.begin()
        start = time.perf_counter()
        while calls < 2 or time.perf_counter() - start < seconds:
            result = None
            result = call()
            calls += 1
        synchronize()
        elapsed, gpu, host, cpu = self.end()
        return (elapsed / calls, None if gpu is None else gpu / calls, None if host is None else host / calls,
                cpu / calls)


def energy_meter(device):
    """The meter of the current CUDA device (found by its PCI address) or of the host alone."""
    pci_bus_id = None
    cupy = module("cupy")
    if device and cupy is not None:
        try:
            pci_bus_id = cupy.cuda.Device().pci_bus_id
        except Exception:
            pci_bus_id = None
    meter = EnergyMeter(pci_bus_id)
    meter.measure_idle()
    return meter


# ---- timing -----------------------------------------------------------------------------------------


def timed_call(call, synchronize):
    """One call from a synchronised device to the device's synchronisation after it: (seconds, result)."""
    synchronize()
    start = time.perf_counter()
    result = call()
    synchronize()
    return time.perf_counter() - start, result


def cell_of(first, seconds, check, tolerance, flops, unit_scale, energy):
    """A library's cell from its first call, its timed calls, its check and its energy reading."""
    median = statistics.median(seconds)
    cell = {"first_s": first, "median_s": median, "times_s": seconds, "rate": flops / median / unit_scale,
            "residual": check, "residual_ok": check <= tolerance}
    if energy is not None:
        call_seconds, gpu, host, cpu = energy
        joules = sum(j for j in (gpu, host) if j is not None)
        cell.update({"energy_call_s": call_seconds, "gpu_joules": gpu, "host_joules": host, "process_cpu_s": cpu,
                     "gflops_per_watt": flops / joules * 1e-9 if joules > 0 else None})
    return cell


def measure_alternated(peers, A, synchronize, residual, tolerance, reps, flops, unit_scale, meter=None,
                       energy_seconds=0, min_seconds=0.0, block=None):
    """The cells of one array: every library's first call, then rounds of one block of timed calls
    of each library, the round's first library rotating; then each library's check (on one more
    call) and energy reading. A device block is one call (reps rounds, more while a library's calls
    fill less than min_seconds); a host block (block = (rounds, quiet seconds before it)) is a
    rounds-th part of the cell's calls and time, after a quiet pause, as is each first call. A
    library that fails gets its error and leaves the rounds."""
    block_rounds, quiet = block if block is not None else (None, 0.0)
    cells, ready = {}, {}
    for name, (module_name, prepare, factor) in peers.items():
        if module(module_name) is None:
            cells[name] = {"error": short(MODULES[module_name])}
            continue
        time.sleep(quiet)  # a first call meets no other library's spinning BLAS workers either
        try:
            prepared = prepare(A)
            call = lambda factor=factor, prepared=prepared: factor(prepared)  # noqa: E731
            ready[name] = {"call": call, "first": timed_call(call, synchronize)[0], "seconds": []}
        except Exception as error:  # out of memory, unsupported shape, wrong dtype...: this cell only
            cells[name] = {"error": short(error)}
    calls_per_block = -(-reps // block_rounds) if block_rounds else 1
    block_seconds = min_seconds / block_rounds if block_rounds else 0.0

    def more_rounds(rounds):
        if block_rounds:
            return rounds < block_rounds
        return rounds < reps or (rounds <= 10000 and min(sum(entry["seconds"]) for entry in ready.values())
                                 < min_seconds)

    rounds = 0
    while ready and more_rounds(rounds):
        names = list(ready)
        for i in range(len(names)):
            name = names[(rounds + i) % len(names)]
            time.sleep(quiet)
            try:
                ready[name]["seconds"] += time_block(ready[name]["call"], synchronize, calls_per_block,
                                                     block_seconds)
            except Exception as error:
                cells[name] = {"error": short(error)}
                del ready[name]
        rounds += 1
    for name, entry in ready.items():
        try:
            check = residual(A, timed_call(entry["call"], synchronize)[1])
            energy = meter.per_call(entry["call"], synchronize, energy_seconds) if meter is not None else None
        except Exception as error:
            cells[name] = {"error": short(error)}
            continue
        cells[name] = cell_of(entry["first"], entry["seconds"], check, tolerance, flops, unit_scale, energy)
    return {name: cells[name] for name in peers}  # run_case hands the memory back


def time_block(call, synchronize, calls, seconds):
    """At least `calls` timed calls and as many more as fill `seconds` (at most 10000): their seconds."""
    times = []
    while len(times) < calls or (sum(times) < seconds and len(times) < 10000):
        times.append(timed_call(call, synchronize)[0])
    return times


def run_case(suite, precision, batch, n, args, peers, meter=None):
    """Factors one array (a stack when batch is given) with each library; the row for the JSON."""
    device = suite != "host"
    matrices = 1 if batch is None else batch
    flops = matrices * n ** 3 / 3 * (4 if PRECISIONS[precision].startswith("complex") else 1)
    row = {"suite": suite, "precision": precision, "n": n, "batch": batch, "flops": flops, "peers": {}, "ratios": {}}
    try:
        A = (spd_device if device else spd_host)(batch, n, precision, args.seed)
    except Exception as error:
        row["peers"] = {name: {"error": "matrix generation: " + short(error)} for name in peers}
        free_memory()
        return row
    synchronize = module("torch").cuda.synchronize if device else host_synchronize
    residual = device_residual if device else host_residual
    tolerance = n * float(np.finfo(PRECISIONS[precision]).eps)
    settings = (synchronize, residual, tolerance, repetitions(suite, args), flops, UNITS[suite][1], meter,
                args.energy_seconds, minimum_seconds(suite, args))
    block = None if device else (args.host_rounds, QUIET_SECONDS)
    row["peers"] = measure_alternated(peers, A, *settings, block=block)
    A = None
    free_memory()
    rates = {name: cell.get("rate") for name, cell in row["peers"].items()}
    row["ratios"] = {f"tessera/{name}": rates["tessera"] / rate for name, rate in rates.items()
                     if name != "tessera" and rate and rates.get("tessera")}
    efficiency = {name: cell.get("gflops_per_watt") for name, cell in row["peers"].items()}
    if efficiency.get("tessera"):
        row["energy_ratios"] = {f"tessera/{name}": efficiency["tessera"] / value for name, value in efficiency.items()
                                if name != "tessera" and value}
    return row


# ---- output -----------------------------------------------------------------------------------------


def table_header(suite, precision, peers, reps, energy):
    unit = UNITS[suite][0]
    title = {"batched": "batched, device-resident", "dense": "dense, device-resident",
             "host": "host (numpy arrays)"}[suite]
    print(f"\n{title}, {PRECISION_NAMES[precision]}: {unit} from the median of {reps} calls after a first one "
          f"(T/x: Tessera's rate over x's); first: that first call, seconds; '*': residual check failed"
          + ("; W:x: x's GFLOP/s per watt, eT/x: Tessera's over x's" if energy else ""))
    others = [p for p in peers if p != "tessera"]
    columns = [f"{'batch':>6} {'n':>6}", " ".join(f"{p:>9}" for p in peers),
               " ".join(f"{'T/' + p:>8}" for p in others), " ".join(f"{'first ' + p:>13}" for p in peers)]
    if energy:
        columns += [" ".join(f"{'W:' + p:>9}" for p in peers), " ".join(f"{'eT/' + p:>8}" for p in others)]
    print(" | ".join(columns))


def table_row(row, peers):
    def rate(cell):
        if "error" in cell:
            return f"{'n/a':>9}"
        return f"{cell['rate']:>8{UNITS[row['suite']][2]}}{' ' if cell['residual_ok'] else '*'}"

    def first(cell):
        return f"{'n/a':>13}" if "error" in cell else f"{cell['first_s']:>13.4g}"

    ratios = [row["ratios"].get(f"tessera/{p}") for p in peers if p != "tessera"]
    columns = [f"{row['batch'] or '':>6} {row['n']:>6}", " ".join(rate(row["peers"][p]) for p in peers),
               " ".join(f"{'n/a':>8}" if r is None else f"{r:>8.3f}" for r in ratios),
               " ".join(first(row["peers"][p]) for p in peers)]
    if "energy_ratios" in row:
        efficiency = [row["peers"][p].get("gflops_per_watt") for p in peers]
        energy_ratios = [row["energy_ratios"].get(f"tessera/{p}") for p in peers if p != "tessera"]
        columns += [" ".join(f"{'n/a':>9}" if e is None else f"{e:>9.2f}" for e in efficiency),
                    " ".join(f"{'n/a':>8}" if r is None else f"{r:>8.3f}" for r in energy_ratios)]
    print(" | ".join(columns), flush=True)
    for p in peers:
        if "error" in row["peers"][p]:
            print(f"    {p}: {row['peers'][p]['error']}")


def machine():
    """The GPU, the CPU count and the libraries' versions."""
    info = {"python": platform.python_version(), "platform": platform.platform(), "cpus": os.cpu_count(),
            "versions": {}}
    for name in ("tessera", "numpy", "scipy", "torch", "cupy"):
        found = module(name)
        info["versions"][name] = getattr(found, "__version__", "?") if found else "n/a (" + short(MODULES[name]) + ")"
    torch, cupy = module("torch"), module("cupy")
    if torch is not None and torch.cuda.is_available():
        info["gpu"] = torch.cuda.get_device_name()
        info["versions"]["torch CUDA"] = torch.version.cuda
    if cupy is not None:
        try:
            info["versions"]["cupy CUDA runtime"] = cupy.cuda.runtime.runtimeGetVersion()
        except Exception as error:
            info["versions"]["cupy CUDA runtime"] = short(error)
    return info


# ---- command line -----------------------------------------------------------------------------------


def batch_list(text):
    """'10000x32,1000x256' -> [(10000, 32), (1000, 256)]; '' -> []."""
    pairs = []
    for item in filter(None, text.split(",")):
        count, n = item.lower().split("x")
        pairs.append((int(count), int(n)))
    return pairs


def size_list(text):
    return [int(n) for n in filter(None, text.split(","))]


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--suites", default="batched,dense,host", help="comma-separated: batched, dense, host")
    parser.add_argument("--precisions", default="d,s",
                        help="comma-separated: d (float64), s (float32), z (complex128), c (complex64)")
    parser.add_argument("--peers", help="comma-separated subset of tessera,torch,cupy,numpy,scipy")
    parser.add_argument("--batched", help=f"device stacks COUNTxN (default {DEFAULTS['batched']})")
    parser.add_argument("--dense", help=f"device matrix sizes (default {DEFAULTS['dense']})")
    parser.add_argument("--max-n", type=int, help="leave out dense sizes above this n")
    parser.add_argument("--host", help=f"host matrix sizes (default {DEFAULTS['host']})")
    parser.add_argument("--host-batched", help=f"host stacks COUNTxN (default {DEFAULTS['host_batched']})")
    parser.add_argument("--mode", default="auto", help="tessera's mode for the host calls")
    parser.add_argument("--reps", type=int, help="timed calls per cell (default: batched 20, dense 5, host 3)")
    parser.add_argument("--min-seconds", type=float,
                        help="more timed calls in a cell until they fill this time (default: host 0.5, device 0)")
    parser.add_argument("--host-rounds", type=int, default=3,
                        help="host cells: rounds of one block of calls per library (default 3)")
    parser.add_argument("--quick", action="store_true", help="few sizes and calls, for a check that all runs")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--json", help="write the machine and every row here (rewritten after each row)")
    parser.add_argument("--energy-seconds", type=float, default=1.0,
                        help="seconds of back-to-back calls per energy reading (0: no energy readings)")
    args = parser.parse_args()
    args.defaults = QUICK if args.quick else DEFAULTS
    for key in ("batched", "dense", "host", "host_batched"):
        if getattr(args, key) is None:
            setattr(args, key, args.defaults[key])
    args.suites = [s for s in args.suites.split(",") if s]
    args.precisions = [p for p in args.precisions.split(",") if p]
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be at least 1")
    if args.host_rounds < 1:
        parser.error("--host-rounds must be at least 1")
    unknown = set(args.suites) - set(SUITE_PEERS) | set(args.precisions) - set(PRECISIONS)
    if unknown:
        parser.error(f"unknown suite or precision: {', '.join(sorted(unknown))}")
    return args


def repetitions(suite, args):
    """Timed calls per cell."""
    return args.reps or args.defaults["reps"][suite]


def minimum_seconds(suite, args):
    """The least time a cell's timed calls fill."""
    return args.min_seconds if args.min_seconds is not None else args.defaults["min_seconds"][suite]


def cases(suite, args):
    """The (batch, n) pairs of a suite; batch None for one matrix."""
    if suite == "batched":
        return batch_list(args.batched)
    if suite == "dense":
        return [(None, n) for n in size_list(args.dense) if args.max_n is None or n <= args.max_n]
    return [(None, n) for n in size_list(args.host)] + batch_list(args.host_batched)


def warm_up_gpu(torch, seconds=1.0):
    """Busy GPU for a moment before the first cell, so that it runs at its working clocks (the
    first cell measured otherwise pays for the ramp-up)."""
    a = torch.randn(4096, 4096, device="cuda")
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        a @ a
        torch.cuda.synchronize()


def main():
    args = parse_arguments()
    report = {"machine": machine(), "settings": {k: v for k, v in vars(args).items() if k != "defaults"},
              "rows": []}
    info = report["machine"]
    print(f"GPU: {info.get('gpu', 'none')}; {info['cpus']} CPUs; python {info['python']}")
    print("versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()))
    torch = module("torch")
    has_gpu = torch is not None and torch.cuda.is_available()
    if has_gpu:
        warm_up_gpu(torch)
    for suite in args.suites:
        if suite != "host" and not has_gpu:
            print(f"\n{suite}: skipped, the device arrays need torch with a CUDA device")
            continue
        all_peers = device_peers() if suite != "host" else host_peers(args.mode)
        names = [p for p in SUITE_PEERS[suite] if not args.peers or p in args.peers.split(",")]
        if "tessera" not in names:
            names.insert(0, "tessera")
        peers = {name: all_peers[name] for name in names}
        meter = None
        if args.energy_seconds > 0:
            meter = energy_meter(suite != "host")
            print(f"\n{suite}: {meter.description()}; idle GPU {meter.idle_watts:.0f} W")
            report.setdefault("energy", {})[suite] = {"counters": meter.description(), "idle_gpu_watts": meter.idle_watts}
            if meter.gpu is None and meter.host_zones is None:
                meter = None
            elif suite == "host" and meter.host_zones is None:
                meter = None  # the GPU idles through the host suite: its counter says nothing of the work
        for precision in args.precisions:
            table_header(suite, precision, peers, repetitions(suite, args), meter is not None)
            for batch, n in cases(suite, args):
                row = run_case(suite, precision, batch, n, args, peers, meter)
                report["rows"].append(row)
                table_row(row, peers)
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(report, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
