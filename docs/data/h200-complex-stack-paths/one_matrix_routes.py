"""One complex GPU matrix: tessera.cholesky_ex / cholesky against PyTorch's on the same tensor, and the
route the plan takes (kernels below the complex one-matrix bounds, cuSOLVER's potrf from them)."""
import sys
import numpy as np
import torch
import tessera
sys.path.insert(0, "docs/data/h200-batched-solves-staged")  # run from the repository root
from python_call_costs import hpd, stream, synced

print(torch.cuda.get_device_name(), torch.__version__)
print("dtype        n  route   torch_ex synced/stream  tessera_ex synced/stream  torch/tessera synced/stream")
for dtype, npt, orders in ((torch.complex128, np.complex128, (48, 56, 64, 80, 96)), (torch.complex64, np.complex64, (80, 96, 112, 128, 160))):
    for n in orders:
        x = hpd(n, 0, dtype, n)
        route = "kernels" if tessera._takes_batched_kernels(n, 1, npt) else "vendor"
        ts, tt = synced(lambda: torch.linalg.cholesky_ex(x)), stream(lambda: torch.linalg.cholesky_ex(x))
        ms, mt = synced(lambda: tessera.cholesky_ex(x)), stream(lambda: tessera.cholesky_ex(x))
        err = (tessera.cholesky(x) @ tessera.cholesky(x).mH - x).abs().max().item() / x.abs().max().item()
        assert err < 1e-4, err
        print(f"{str(dtype)[6:]:10s} {n:4d}  {route:7s} {ts:8.1f} {tt:8.1f}     {ms:8.1f} {mt:8.1f}        {ts / ms:5.2f} {tt / mt:5.2f}", flush=True)
