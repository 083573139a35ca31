#!/usr/bin/env python3
"""A StarPU performance-model directory for a simulated node of G NVIDIA H100 GPUs.

  h100_node.py OUTDIR [--host h100x4] [--gpus 4] [--cpus 16] [--pcie 51] [--nvlink 300]
               [--streams 4] [--from DIR --from-host H]

Writes OUTDIR/bus/HOST.{platform.xml,platform.v4.xml,config,bandwidth,latency,affinity} and
OUTDIR/codelets/45/tessera_d{potrf,trsm,syrk,gemm,copy_in,copy_out}.HOST: history-based models
of Tessera's double-precision tile codelets (StarPU's footprints of nb = 1024 and nb = 2048 tiles)
with the same entry for every CUDA device (cuda0..cuda(G-1), implementation 0: cuBLAS/cuSOLVER)
and for the CPU workers (the copies of the end-to-end path).

With --from DIR --from-host H (a STARPU_PERF_MODEL_DIR calibrated on a real GPU with
STARPU_HOSTNAME H, e.g. the H100's), every footprint that calibration measured is taken from it
(partial edge tiles included), choosing per footprint between the cuda0 means of the two CUDA
implementations (impl0 cuBLAS/cuSOLVER, impl1 Tessera's kernels) as StarPU's dmdas does in the
real runs (TESSERA_GPU_KERNELS=any; see read_calibration); it is written as implementation 0, and
the simulation runs with TESSERA_GPU_KERNELS=vendor so that only that one exists. The CPU copies
(copy_in/copy_out) come from the calibration's cpu0 entries. Footprints the calibration lacks fall
back to the rates below (an idle H100 SXM in FP64, from docs/kernels-tile.md and the H100's
measurements in docs/gpu-performance.md). The choice is printed.

A real calibration's means are taken with TESSERA_WORKERS_PER_CUDA (default 4) workers sharing
each GPU: they are the time of a task beside three others. StarPU for SimGrid runs one task at a
time per CUDA worker and one worker per device (its drivers are blocking, STARPU_NWORKER_PER_CUDA
is forced to 1), so --streams K simulates each GPU as K CUDA devices that share its PCIe link and
its memory (1/K each), joined by a link at HBM copy speed: K tasks at once per GPU, as K workers
run them on the real one. With the calibration's 4-way sharing (--sharing 4) and K < 4 the GPU
times are scaled by K/4 (same throughput, shorter tasks). StarPU allows 8 CUDA devices at most:
one GPU as 4, or four GPUs as 2 each. --streams 1 --sharing 1 is right for idle-GPU times.
"""
import argparse
import math
import os
import re

# StarPU's footprints of Tessera's codelets on full tiles (data sizes only), by nb.
FOOTPRINTS = {
    1024: {"gemm": "0b0dbeb1", "potrf": "aa6d4ef7", "syrk": "9a2d19a7", "trsm": "9a2d19a7",
           "copy_in": "aa6d4ef7", "copy_out": "aa6d4ef7"},
    2048: {"gemm": "86ec636c", "potrf": "f46823c7", "syrk": "5b2a1103", "trsm": "5b2a1103",
           "copy_in": "f46823c7", "copy_out": "f46823c7"},
}
# Bytes of the task's data (StarPU's 'size' column): tiles touched.
TILES = {"gemm": 3, "potrf": 1, "syrk": 2, "trsm": 2, "copy_in": 1, "copy_out": 1}
OPS = ("gemm", "potrf", "syrk", "trsm", "copy_in", "copy_out")
CALIBRATED = 10  # STARPU_CALIBRATE_MINIMUM's default: samples before StarPU trusts a history entry

# Idle-H100 FP64 rates (TFLOP/s) per op and nb; potrf in ms.
GPU_TFLOPS = {
    1024: {"gemm": 40.0, "syrk": 30.0, "trsm": 25.0},
    2048: {"gemm": 50.0, "syrk": 40.0, "trsm": 35.0},
}
POTRF_MS = {1024: 0.42, 2048: 1.0}
# Host copies between the column-major matrix and a tile (CPU worker), GB/s of tile bytes.
COPY_GBPS = 8.0


def flops(op, nb):
    return {"gemm": 2.0 * nb ** 3, "syrk": 1.0 * nb ** 3, "trsm": 1.0 * nb ** 3, "potrf": nb ** 3 / 3.0}[op]


def gpu_us(op, nb):
    if op == "potrf":
        return POTRF_MS[nb] * 1e3
    return flops(op, nb) / (GPU_TFLOPS[nb][op] * 1e12) * 1e6


def cpu_us(op, nb):
    return nb * nb * 8 / (COPY_GBPS * 1e9) * 1e6


def read_calibration(directory, host):
    """{(op, arch, hash): (size, mean_us, samples, how)} of a real calibration, arch "cuda" (cuda0)
    or "cpu" (cpu0_impl0). Per footprint, as StarPU's dmdas chooses on calibrated models: among the
    implementations with at least CALIBRATED samples, the faster; else the one with most samples.
    A partial (edge) tile measured once (a first run's outlier, e.g. a 10 ms potrf) is replaced by
    the full nb 2048 tile's time of the same op scaled by data size."""
    candidates = {}
    models = os.path.join(directory, "codelets", "45")
    for op in OPS:
        path = os.path.join(models, f"tessera_d{op}.{host}")
        if not os.path.exists(path):
            continue
        section = None
        for line in open(path):
            m = re.match(r"# Model for (\S+)", line)
            if m:
                section = m.group(1)
                continue
            f = line.split()
            if len(f) != 8 or not re.fullmatch(r"[0-9a-f]{8}", f[0]) or int(f[7]) == 0:
                continue
            arch = {"cuda0_impl0": "cuda", "cuda0_impl1": "cuda", "cpu0_impl0": "cpu"}.get(section)
            if arch is not None:
                candidates.setdefault((op, arch, f[0]), []).append((int(f[1]), float(f[3]), int(f[7])))
    found = {}
    for key, entries in candidates.items():
        calibrated = [e for e in entries if e[2] >= CALIBRATED]
        size, mean, n = min(calibrated, key=lambda e: e[1]) if calibrated else max(entries, key=lambda e: e[2])
        found[key] = (size, mean, n, "measured")
    for (op, arch, h), (size, mean, n, _) in list(found.items()):
        full = found.get((op, arch, FOOTPRINTS[2048][op]))
        if n == 1 and full and full[2] > 1 and h not in {FOOTPRINTS[nb][op] for nb in FOOTPRINTS}:
            found[(op, arch, h)] = (size, full[1] * size / full[0], n, f"scaled from nb 2048 (measured once: {mean:.0f} us)")
    return found


def entry(hash_, size, mean, n=50):
    dev = 0.02 * mean
    return (f"{hash_}\t{size:<15d}\t{0.0:e}   \t{mean:e}   \t{dev:e}   \t{mean * n:e}   \t"
            f"{(dev * dev + mean * mean) * n:e}   \t{n}\n")


def comb(index, dev_type, dev_id, cores, label, entries):
    text = ("####################\n# COMB_%d\n# number of types devices\n1\n####################\n# DEV_0\n"
            "# device type (CPU - 0, CUDA - 1, OPENCL - 2, MIC - 3, MPI_MS - 5)\n%d\n####################\n# DEV_0\n"
            "# device id \n%d\n####################\n# DEV_0\n# number of cores \n%d\n##########\n"
            "# number of implementations\n1\n#####\n# Model for %s_impl0 (Comb%d)\n# number of entries\n%d\n"
            "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
            "0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan            \t0\t0              \t0              \n"
            "# a\t\tb\t\tc\nnan            \tnan            \tnan            \n# not multiple-regression-base\n0\n"
            "# hash\t\tsize\t\tflops\t\tmean (us)\tdev (us)\tsum\t\tsum2\t\tn\n") % (
                index, dev_type, dev_id, cores, label, index, len(entries))
    return text + "".join(entries) + "\n"


def write_models(out, host, devices, calibrated, scale):
    models = os.path.join(out, "codelets", "45")
    os.makedirs(models, exist_ok=True)
    for op in OPS:
        arch = "cpu" if op.startswith("copy") else "cuda"
        means = {}  # hash -> (size, mean)
        for nb, hashes in FOOTPRINTS.items():
            means[hashes[op]] = (TILES[op] * nb * nb * 8, cpu_us(op, nb) if arch == "cpu" else gpu_us(op, nb) * scale)
        for (o, a, h), (size, mean, _, _) in calibrated.items():
            if o == op and a == arch:
                means[h] = (size, mean * (scale if arch == "cuda" else 1.0))
        entries = [entry(h, size, mean) for h, (size, mean) in sorted(means.items(), key=lambda e: e[1][0])]
        gpu_entries, cpu_entries = (entries, []) if arch == "cuda" else ([], entries)
        combs = []
        if cpu_entries:
            combs.append((0, 0, 1, "cpu0", cpu_entries))
        for d in range(devices if gpu_entries else 0):
            combs.append((1, d, 1, f"cuda{d}", gpu_entries))
        text = "##################\n# Performance Model Version\n45\n\n####################\n# COMBs\n"
        text += f"# number of combinations\n{len(combs)}\n"
        for i, c in enumerate(combs):
            text += comb(i, *c)
        with open(os.path.join(models, f"tessera_d{op}.{host}"), "w") as f:
            f.write(text)


def write_bus(out, host, gpus, cpus, pcie, pcie_lat, nvlink, nvlink_lat, memory_gib, streams, hbm):
    """A node of `gpus` GPUs, each simulated as `streams` CUDA devices (StarPU's CUDA workers)
    that share its PCIe link and its memory (memory_gib / streams each), joined by an on-GPU link
    at HBM copy speed (`hbm` GB/s)."""
    bus = os.path.join(out, "bus")
    os.makedirs(bus, exist_ok=True)
    devices = gpus * streams
    gpu_of = [d // streams for d in range(devices)]
    with open(os.path.join(bus, host + ".config"), "w") as f:
        f.write(f"# Current configuration\n{cpus} # Number of CPUs\n1 # Number of NUMA nodes\n{devices} # Number of CUDA devices\n"
                "0 # Number of OpenCL devices\n0 # Number of MIC devices\n0 # Number of MPI devices\n")
    with open(os.path.join(bus, host + ".affinity"), "w") as f:
        f.write("# GPU\t" + "".join(f"CPU{c}\t" for c in range(cpus)) + "\n")
        for d in range(devices):
            f.write(f"{d}\t" + "".join(f"{c}\t" for c in range(cpus)) + "\n")
    # memory nodes: 0 = RAM, 1..devices = CUDA0..; MB/s and us
    size = max(16, devices + 1)
    for kind in ("bandwidth", "latency"):
        with open(os.path.join(bus, f"{host}.{kind}"), "w") as f:
            f.write("# " + "".join(f"to {j}\t\t" for j in range(size)) + "\n")
            for i in range(size):
                row = []
                for j in range(size):
                    if i > devices or j > devices:
                        row.append("nan")
                    elif i == j:
                        row.append("0.000000e+00")
                    elif i == 0 or j == 0:
                        row.append(f"{pcie * 1e3:e}" if kind == "bandwidth" else f"{pcie_lat:e}")
                    elif gpu_of[i - 1] == gpu_of[j - 1]:
                        row.append(f"{hbm * 1e3:e}" if kind == "bandwidth" else f"{0.0:e}")
                    else:
                        row.append(f"{nvlink * 1e3:e}" if kind == "bandwidth" else f"{nvlink_lat:e}")
                f.write("\t".join(row) + "\t\n")
    hosts = ['   <host id="MAIN" speed="1f"/>']
    hosts += [f'   <host id="CPU{c}" speed="2000000000f"/>' for c in range(cpus)]
    for d in range(devices):
        hosts.append(f'   <host id="CUDA{d}" speed="2000000000f">\n'
                     f'     <prop id="memsize" value="{(memory_gib << 30) // streams}"/>\n'
                     '     <prop id="memcpy_peer" value="1"/>\n   </host>')
    hosts.append('   <host id="RAM" speed="1f"/>')
    links = [f'   <link id="Host" bandwidth="{pcie * gpus * 1e9:f}Bps" latency="0.000000s"/>']
    for g in range(gpus):
        links.append(f'   <link id="PCIe{g}-down" bandwidth="{pcie * 1e9:f}Bps" latency="{pcie_lat * 1e-6:f}s"/>')
        links.append(f'   <link id="PCIe{g}-up" bandwidth="{pcie * 1e9:f}Bps" latency="{pcie_lat * 1e-6:f}s"/>')
        links.append(f'   <link id="HBM{g}" bandwidth="{hbm * 1e9:f}Bps" latency="0.000000s"/>')
    routes = []
    for d in range(devices):
        g = gpu_of[d]
        routes.append(f'   <route src="RAM" dst="CUDA{d}" symmetrical="NO"><link_ctn id="PCIe{g}-down"/><link_ctn id="Host"/></route>')
        routes.append(f'   <route src="CUDA{d}" dst="RAM" symmetrical="NO"><link_ctn id="PCIe{g}-up"/><link_ctn id="Host"/></route>')
        for e in range(devices):
            if e == d:
                continue
            if gpu_of[e] == g:
                routes.append(f'   <route src="CUDA{d}" dst="CUDA{e}" symmetrical="NO"><link_ctn id="HBM{g}"/></route>')
            else:
                if f'"NV{g}-{gpu_of[e]}"' not in "".join(links):
                    links.append(f'   <link id="NV{g}-{gpu_of[e]}" bandwidth="{nvlink * 1e9:f}Bps" latency="{nvlink_lat * 1e-6:f}s"/>')
                routes.append(f'   <route src="CUDA{d}" dst="CUDA{e}" symmetrical="NO"><link_ctn id="NV{g}-{gpu_of[e]}"/></route>')
    config = (' <config id="General">\n   <prop id="network/TCP-gamma" value="-1"></prop>\n'
              '   <prop id="network/latency-factor" value="1"></prop>\n'
              '   <prop id="network/bandwidth-factor" value="1"></prop>\n'
              '   <prop id="network/crosstraffic" value="0"></prop>\n'
              '   <prop id="network/weight-S" value="0.0"></prop>\n </config>\n')
    body = (' <AS  id="AS0"  routing="Full">\n' + "\n".join(hosts) + "\n\n" + "\n".join(links) + "\n\n" +
            "\n".join(routes) + "\n </AS>\n </platform>\n")
    for suffix, version in ((".platform.xml", "3"), (".platform.v4.xml", "4")):
        dtd = "http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd" if version == "4" else "http://simgrid.gforge.inria.fr/simgrid.dtd"
        with open(os.path.join(bus, host + suffix), "w") as f:
            f.write(f"<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM '{dtd}'>\n <platform version=\"{version}\">\n")
            f.write(config + body)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out")
    p.add_argument("--host", default="h100x4")
    p.add_argument("--gpus", type=int, default=4)
    p.add_argument("--cpus", type=int, default=16)
    p.add_argument("--pcie", type=float, default=51.0,
                   help="GB/s each way between host memory and one GPU (51: StarPU's bus calibration on the H100)")
    p.add_argument("--pcie-lat", type=float, default=9.0, help="us")
    p.add_argument("--nvlink", type=float, default=300.0, help="GB/s between two GPUs of a node")
    p.add_argument("--nvlink-lat", type=float, default=3.0, help="us")
    p.add_argument("--memory-gib", type=int, default=79, help="GiB per GPU StarPU may use (79: the H100's)")
    p.add_argument("--streams", type=int, default=1,
                   help="simulated CUDA devices (StarPU workers, one task at a time each) per GPU")
    p.add_argument("--sharing", type=float, default=None,
                   help="tasks that shared a GPU when the GPU times were measured (default: --streams); "
                        "GPU times are multiplied by streams / sharing")
    p.add_argument("--hbm", type=float, default=1500.0, help="GB/s between two simulated devices of one GPU")
    p.add_argument("--from", dest="from_dir")
    p.add_argument("--from-host", default="h100")
    a = p.parse_args()
    calibrated = read_calibration(a.from_dir, a.from_host) if a.from_dir else {}
    scale = a.streams / (a.sharing or a.streams)
    write_models(a.out, a.host, a.gpus * a.streams, calibrated, scale)
    write_bus(a.out, a.host, a.gpus, a.cpus, a.pcie, a.pcie_lat, a.nvlink, a.nvlink_lat, a.memory_gib, a.streams, a.hbm)
    print(f"{a.out}: host {a.host}, {a.gpus} GPUs x {a.streams} simulated devices, GPU times x {scale:g}, "
          f"{len(calibrated)} calibrated entries")
    for (op, arch, h), (size, mean, n, how) in sorted(calibrated.items()):
        print(f"  {op:8s} {arch:4s} {h} {size:>10d} B  {mean:10.1f} us  ({n} samples, {how})")


if __name__ == "__main__":
    main()
