"""The tile map bench_adaptive's Matérn benchmark gets, and its bound on the adaptive factorization's
speed: the factorization's flops over those the map leaves in FP64 (every potrf, trsm and syrk,
and the updates of FP64 tiles), the speed-up over FP64 if every reduced update took no time.

The same locations as bench/bench_adaptive.cpp (std::mt19937(2024), libstdc++'s
uniform_real_distribution from two 32-bit draws, Morton order), the same covariance, tile norms
and rule as src/algorithms/adaptive_precision.cpp, one tile at a time: no n x n array, so n = 60000
fits a small machine, where bench_adaptive keeps two.

    python3 tile_map_bound.py N NB ACCURACY [ACCURACY ...]
"""
import math
import sys

import numpy as np

# As adaptive_precision.hpp: fp32 is two FP16 pieces, about 2^-22 of each value.
FP16_UNIT_ROUNDOFF, FP32_UNIT_ROUNDOFF = 2.0**-11, 2.0**-22


def morton(x, y):
    code = np.zeros(x.shape, dtype=np.uint64)
    for b in range(16):
        code |= ((x >> np.uint64(b)) & np.uint64(1)) << np.uint64(2 * b)
        code |= ((y >> np.uint64(b)) & np.uint64(1)) << np.uint64(2 * b + 1)
    return code


def locations(n):
    side = math.ceil(math.sqrt(n))
    bits = np.random.MT19937()
    bits._legacy_seeding(2024)  # std::mt19937(2024)'s state
    raw = bits.random_raw(4 * side * side).astype(np.float64)
    jitter = -0.4 + 0.8 * (raw[0::2] + raw[1::2] * 2.0**32) / 2.0**64  # generate_canonical<double, 53>
    i, j = (g.ravel().astype(np.uint64) for g in np.meshgrid(np.arange(side), np.arange(side), indexing="ij"))
    x = (i + 0.5 + jitter[0::2]) / side
    y = (j + 0.5 + jitter[1::2]) / side
    order = np.argsort(morton(i, j), kind="stable")[:n]
    return x[order], y[order]


def tile_norms(n, nb, correlation_range=0.03):
    x, y = locations(n)
    nt = -(-n // nb)
    norms = np.zeros((nt, nt))
    for i in range(nt):
        for j in range(i + 1):
            rows, cols = slice(i * nb, (i + 1) * nb), slice(j * nb, (j + 1) * nb)
            tile = np.exp(-np.hypot(x[rows, None] - x[None, cols], y[rows, None] - y[None, cols]) / correlation_range)
            if i == j:
                tile = np.tril(tile) + 1e-4 * np.eye(tile.shape[0])
                norms[i, j] = math.sqrt(2 * np.sum(tile**2) - np.sum(np.diag(tile) ** 2))
            else:
                norms[i, j] = np.linalg.norm(tile)
    return norms, nt


def tile_map(norms, nt, accuracy):
    total = math.sqrt(sum((1 if i == j else 2) * norms[i, j] ** 2 for i in range(nt) for j in range(i + 1)))
    arithmetic = {}
    for i in range(nt):
        for j in range(i):
            ratio = norms[i, j] * nt / total
            arithmetic[i, j] = 16 if ratio < accuracy / FP16_UNIT_ROUNDOFF else 32 if ratio < accuracy / FP32_UNIT_ROUNDOFF else 64
    return arithmetic


def bound(arithmetic, n, nb, nt):
    rows = [min(nb, n - i * nb) for i in range(nt)]
    everything = fp64 = 0.0
    work = {16: 0.0, 32: 0.0, 64: 0.0}
    for k in range(nt):
        panel = rows[k] ** 3 / 3 + sum(2.0 * rows[i] * rows[k] ** 2 for i in range(k + 1, nt))
        everything += panel
        fp64 += panel
        for i in range(k + 1, nt):
            for j in range(k + 1, i):
                gemm = 2.0 * rows[i] * rows[j] * rows[k]
                everything += gemm
                work[arithmetic[i, j]] += gemm
                if arithmetic[i, j] == 64:
                    fp64 += gemm
    return everything / fp64, {a: w / everything for a, w in work.items()}, fp64 / everything


def main():
    n, nb = int(sys.argv[1]), int(sys.argv[2])
    norms, nt = tile_norms(n, nb)
    for accuracy in map(float, sys.argv[3:]):
        arithmetic = tile_map(norms, nt, accuracy)
        tiles = list(arithmetic.values())
        share = " / ".join(f"{100 * tiles.count(a) / len(tiles):.1f}" for a in (64, 32, 16))
        limit, work, fp64 = bound(arithmetic, n, nb, nt)
        print(f"n {n} nb {nb} accuracy {accuracy:g}: tiles fp64/fp32/fp16 {share} %; flops in FP64 {100 * fp64:.1f} %, "
              f"in fp32 updates {100 * work[32]:.1f} %, in fp16 updates {100 * work[16]:.1f} %; bound {limit:.2f}x")


if __name__ == "__main__":
    main()
