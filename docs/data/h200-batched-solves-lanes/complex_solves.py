"""cho_solve on complex GPU stacks: the batched solve kernels (K) against the vendor's batched
solves (V), each forced through the package's route query, and torch.cholesky_solve, by
right-hand sides (solve_nrhs.py's compare). Run from the repository root."""
import sys
sys.path.insert(0, "docs/data/h200-inverse-stack-routes")
import torch
from solve_nrhs import compare, HEADER

if __name__ == "__main__":
    print(torch.cuda.get_device_name(), f"torch {torch.__version__}")
    print(HEADER)
    for dtype in (torch.complex128, torch.complex64):
        for n, batches in ((16, (8, 512, 4096)), (48, (8, 512, 4096)), (64, (8, 512, 4096)), (128, (8, 512)),
                           (256, (8, 512))):
            for batch in batches:
                compare(dtype, n, batch, [k for k in (1, 2, 4, 8, 16, 64) if batch * n * k <= 1 << 25])
