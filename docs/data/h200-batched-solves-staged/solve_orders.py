"""cho_solve on long real GPU stacks of orders 256-512 with 1-4 right-hand sides: the batched solve
kernels (K) against the vendor's batched solves (V), forced through the package's route query,
and torch.cholesky_solve (us per synchronised call, median); run from the repository root."""
import sys
import torch
sys.path.insert(0, "docs/data/h200-inverse-stack-routes")
from solve_nrhs import HEADER, compare

print(torch.cuda.get_device_name(), f"torch {torch.__version__}")
print(HEADER)
for dtype in (torch.float64, torch.float32):
    for n in (256, 288, 320, 352, 384, 448, 512):
        for batch in (384, 1024):
            compare(dtype, n, batch, (1, 2, 4))
