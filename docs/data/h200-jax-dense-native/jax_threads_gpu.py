"""Jitted GPU calls from 6 threads at once (one matrix and stacks through the dense device API on
the published runtime, batched kernels, failures) while another thread enters and leaves
tessera.Runtime blocks, switching the published runtime under them: every result checked."""
import threading, time, traceback
import numpy as np, jax, jax.numpy as jnp
jax.config.update("jax_enable_x64", True)
import tessera

gpu = [d for d in jax.devices() if d.platform == "gpu"][0]
rng = np.random.default_rng(0)
def spd(n, batch=()):
    g = rng.standard_normal(batch + (n, n)); return g @ np.swapaxes(g, -1, -2) / n + np.eye(n)
cases = [spd(300), spd(200, (3,)), spd(40, (50,)), spd(1100)]
bad = spd(300); bad[150, 150] = -1
ex = jax.jit(tessera.cholesky_ex)
chol = jax.jit(tessera.cholesky)
errors, counts, stop = [], [0] * 6, threading.Event()

def worker(k):
    try:
        while not stop.is_set():
            a = cases[(k + counts[k]) % len(cases)]
            f, info = ex(jax.device_put(a, gpu))
            f = np.asarray(f)
            assert np.all(np.asarray(info) == 0)
            assert np.abs(f @ np.swapaxes(f, -1, -2) - a).max() < 1e-9 * a.shape[-1]
            _, info = ex(jax.device_put(bad, gpu))
            assert int(info) == 151, int(info)
            try:
                chol(jax.device_put(bad, gpu)).block_until_ready()
                raise AssertionError("cholesky of a matrix that is not positive definite passed")
            except Exception as e:
                assert "not positive definite" in str(e), e
            counts[k] += 1
    except Exception:
        errors.append(traceback.format_exc()); stop.set()

def switcher():
    switches = 0
    while not stop.is_set():
        with tessera.Runtime(mode="gpu"):
            time.sleep(0.05)
        time.sleep(0.05)
        switches += 1
    print("runtime switches", switches)

threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)] + [threading.Thread(target=switcher)]
for t in threads: t.start()
time.sleep(20); stop.set()
for t in threads: t.join(120)
print("alive threads", sum(t.is_alive() for t in threads), "rounds", counts, "errors", len(errors))
for e in errors[:3]: print(e)
