"""One GPU matrix of order 48-128 through cuSOLVER's potrf (V), timed alone, beside PyTorch, and
beside the batched kernels (K), in that order, with route_one.py's helpers."""
import torch

import tessera
from route_one import routed, spd, timed

print("NVIDIA", torch.cuda.get_device_name(), "torch", torch.__version__)
for dtype in (torch.float64,):
    for n in (48, 64, 96, 128):
        a = spd(n, dtype)
        exK = routed(True, lambda: tessera.cholesky_ex(a)); exV = routed(False, lambda: tessera.cholesky_ex(a))
        syK = routed(True, lambda: tessera.cholesky(a)); syV = routed(False, lambda: tessera.cholesky(a))
        ext = lambda: torch.linalg.cholesky_ex(a); syt = lambda: torch.linalg.cholesky(a)
        for name, calls in (("V alone", {"exV": exV}), ("syncV alone", {"syncV": syV}),
                            ("V and torch", {"exV": exV, "ext": ext, "syncV": syV, "synct": syt}),
                            ("K, V and torch", {"exK": exK, "exV": exV, "ext": ext, "syncK": syK, "syncV": syV, "synct": syt}),
                            ("V alone again", {"exV": exV, "syncV": syV})):
            m = timed(calls)
            print(f"  n={n:4d} {name:16s} " + "  ".join(f"{k} {v:6.1f}" for k, v in m.items()), flush=True)
