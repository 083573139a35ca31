"""PyTorch autograd for tessera's functions on tensors that require a gradient: the factorization
and the solve computed by tessera, their backward passes by the known formulas in torch (Murray,
"Differentiation of the Cholesky decomposition", 2016; the solve's as torch.cholesky_solve's),
on the tensors' own device, real and complex (PyTorch's convention for a real loss: the gradient
is d/dRe + i d/dIm, so that A = L L^H gives the same formulas with ^H for ^T). Only the triangle
each function reads gets a gradient, and of a Hermitian matrix's diagonal only the real part,
the one it reads."""
import torch


def _phi(x):
    """The lower triangle of x with its diagonal halved."""
    return x.tril() - 0.5 * torch.diag_embed(torch.diagonal(x, dim1=-2, dim2=-1))


def _lower(factor, lower):
    """The lower factor L (A = L L^H) of a factor in the triangle `lower`: U = L^H for an upper one,
    and the same for a gradient (the gradient of U^H is the adjoint of U's)."""
    return factor if lower else factor.mH


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
        # gA = L^-H phi(L^H gL) L^-1, made Hermitian: A's triangle holds both halves of each pair
        # (and the diagonal's imaginary parts, which the factorization never reads, get none).
        inner = torch.linalg.solve_triangular(L.mH, _phi(L.mH @ gL), upper=True)
        ga = torch.linalg.solve_triangular(L, inner, upper=False, left=False)
        ga = 0.5 * (ga + ga.mH)
        # Only the triangle `lower` of a is read: it takes the off-diagonal pairs whole.
        off = ga.tril(-1) + ga.triu(1).mH
        read = torch.diag_embed(torch.diagonal(ga, dim1=-2, dim2=-1)) + off
        return (read if ctx.lower else read.mH), None, None


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
        # d(A^-1 b) = -A^-1 dA x: gA = -gb x^H, A = L L^H gives gL = -(gA + gA^H) L.
        common = gbs @ xs.mH
        gL = _sum_to(-((common + common.mH) @ L), c.shape).tril()
        return (gL if ctx.lower else gL.mH), _sum_to(gb, ctx.b_shape), None, None


def cholesky(a, lower, factor):
    """tessera's cholesky of tensor a (factor(a) computes it) with its backward pass."""
    return _Cholesky.apply(a, lower, factor)


def cho_solve(c, b, lower, solve):
    """tessera's cho_solve of tensors c and b (solve(c, b) computes it) with its backward pass."""
    return _ChoSolve.apply(c, b, lower, solve)
