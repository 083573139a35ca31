"""PyTorch autograd for tessera's functions on tensors that require a gradient: the factorization
and the solve computed by tessera, their backward passes by the known formulas in torch (Murray,
"Differentiation of the Cholesky decomposition", 2016; the solve's as torch.cholesky_solve's),
on the tensors' own device. Only the triangle each function reads gets a gradient."""
import torch


def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    return x.tril() - 0.5 * torch.diag_embed(torch.diagonal(x, dim1=-2, dim2=-1))


def _lower(factor, lower):
    return factor if lower else factor.mT


class _Cholesky(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, lower, factor):
        result = factor(a.detach())
        ctx.save_for_backward(result)
        ctx.lower = lower
        return result

    @staticmethod
    def backward(ctx, grad):
        (result,) = ctx.saved_tensors
        L = _lower(result, ctx.lower)
        gL = _lower(grad, ctx.lower).tril()
        # gA = L^-T phi(L^T gL) L^-1, symmetrised: A's triangle holds both halves of each pair.
        inner = torch.linalg.solve_triangular(L.mT, _phi(L.mT @ gL), upper=True)
        ga = torch.linalg.solve_triangular(L, inner, upper=False, left=False)
        ga = 0.5 * (ga + ga.mT)
        # Only the triangle `lower` of a is read: it takes the off-diagonal pairs whole.
        off = ga.tril(-1) + ga.triu(1).mT
        read = torch.diag_embed(torch.diagonal(ga, dim1=-2, dim2=-1)) + off
        return (read if ctx.lower else read.mT), None, None


def _sum_to(t, shape):
    """t summed over the dimensions that broadcasting added to `shape`."""
    while t.dim() > len(shape):
        t = t.sum(0)
    for d, size in enumerate(shape):
        if size == 1 and t.shape[d] != 1:
            t = t.sum(d, keepdim=True)
    return t


class _ChoSolve(torch.autograd.Function):
    @staticmethod
    def forward(ctx, c, b, lower, solve):
        x = solve(c.detach(), b.detach())
        ctx.save_for_backward(c, x)
        ctx.lower = lower
        ctx.solve = solve
        ctx.b_shape = b.shape
        return x

    @staticmethod
    def backward(ctx, grad):
        c, x = ctx.saved_tensors
        gb = ctx.solve(c.detach(), grad)
        vector = x.dim() == c.dim() - 1  # right-hand sides that are vectors
        xs, gbs = (x.unsqueeze(-1), gb.unsqueeze(-1)) if vector else (x, gb)
        L = _lower(c, ctx.lower).tril()
        # d(A^-1 b) = -A^-1 dA x: gA = -gb x^T, A = L L^T gives gL = -(gA + gA^T) L.
        common = gbs @ xs.mT
        gL = _sum_to(-((common + common.mT) @ L), c.shape).tril()
        return (gL if ctx.lower else gL.mT), _sum_to(gb, ctx.b_shape), None, None


def cholesky(a, lower, factor):
    """tessera's cholesky of tensor a (factor(a) computes it) with its backward pass."""
    return _Cholesky.apply(a, lower, factor)


def cho_solve(c, b, lower, solve):
    """tessera's cho_solve of tensors c and b (solve(c, b) computes it) with its backward pass."""
    return _ChoSolve.apply(c, b, lower, solve)
