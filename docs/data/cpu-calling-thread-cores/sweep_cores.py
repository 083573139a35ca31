# One core count (the process pinned by taskset, no GPU visible): NumPy, SciPy, tessera.cholesky
# (mode cpu), the task graph (a hybrid runtime with no GPU) and the bundled OpenBLAS's dpotrf_.
import ctypes, glob, os, statistics, sys, time
import numpy as np
import scipy.linalg as sl
import tessera
cores = len(os.sched_getaffinity(0))
libdir = os.path.join(os.path.dirname(tessera.__file__), "..", "tessera_cholesky.libs")
cands = glob.glob(os.path.join(libdir, "libopenblas*.so*")) or glob.glob(os.path.join(os.path.dirname(tessera.__file__), "**", "libopenblas*"), recursive=True)
ob = ctypes.CDLL(cands[0])
ob.openblas_set_num_threads.argtypes = [ctypes.c_int]
potrf = ob.dpotrf_
I = ctypes.c_int
rng = np.random.default_rng(0)
def spd(n):
    g = rng.standard_normal((n, n)); return g @ g.T + n * np.eye(n)
def med(f, reps):
    f(); ts = []
    for _ in range(reps):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3
sizes = [int(s) for s in sys.argv[1].split(",")]
print(f"cores {cores}; ms, median; openblas {os.path.basename(cands[0])}")
import warnings; warnings.simplefilter("ignore")
with tessera.Runtime(mode="hybrid") as rt:
    workers = rt.cpu_workers
print(f"cpu workers of a default runtime here: {workers}")
print(f"{'n':>5} | {'numpy':>8} {'scipy':>8} {'tessera':>8} {'DAG':>8} {'lapack':>8} | T/np  T/sp  D/sp  L/sp  D/L")
for n in sizes:
    A = spd(n); reps = 7 if n >= 2000 else 15
    t_np = med(lambda: np.linalg.cholesky(A), reps)
    t_sp = med(lambda: sl.cholesky(A, lower=True), reps)
    t_ts = med(lambda: tessera.cholesky(A, mode="cpu"), reps)
    with tessera.Runtime(mode="hybrid"):  # no GPU visible: the task graph on the CPU workers
        t_dag = med(lambda: tessera.cholesky(A), reps)
    F = np.asfortranarray(A)
    def lap():
        B = F.copy(order="F"); ob.openblas_set_num_threads(cores)
        nn, info = I(n), I(0)
        potrf(ctypes.c_char_p(b"L"), ctypes.byref(nn), ctypes.c_void_p(B.ctypes.data), ctypes.byref(nn), ctypes.byref(info))
        assert info.value == 0
    t_lp = med(lap, reps)
    print(f"{n:5d} | {t_np:8.2f} {t_sp:8.2f} {t_ts:8.2f} {t_dag:8.2f} {t_lp:8.2f} | {t_np/t_ts:4.2f}  {t_sp/t_ts:4.2f}  {t_sp/t_dag:4.2f}  {t_sp/t_lp:4.2f}  {t_lp/t_dag:4.2f}", flush=True)
