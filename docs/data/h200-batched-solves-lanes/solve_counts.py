"""cho_solve on real GPU stacks by right-hand sides (the rows of solve_nrhs.py for orders 16 to 128):
the batched kernels (K) and the vendor's batched solves (V) forced, and torch.cholesky_solve. Run
from the repository root."""
import sys
sys.path.insert(0, "docs/data/h200-inverse-stack-routes")
import torch
from solve_nrhs import compare, HEADER
print(torch.cuda.get_device_name(), f"torch {torch.__version__}")
print(HEADER)
for dtype in (torch.float64, torch.float32):
    for n, batches in ((16, (512, 4096)), (32, (512, 4096)), (48, (512, 4096)), (64, (8, 512, 4096)), (96, (512,)), (128, (512,))):
        for batch in batches:
            compare(dtype, n, batch, [k for k in (1, 4, 8, 16, 32, 64) if batch * n * k <= 1 << 26])
