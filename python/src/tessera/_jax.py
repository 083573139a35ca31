"""JAX arrays being traced (inside jax.jit, jax.vmap...): tessera's functions enter the traced
program as host callbacks (jax.pure_callback), which hand the arrays to tessera as numpy arrays
when the program runs. A batched callback (vmap) gets the stack whole, which tessera factors as
one. GPU arrays pass through host memory this way: outside a trace they stay on their GPU."""
import numpy as np


def is_traced(*arrays):
    """Whether any of the arrays is a JAX tracer (without importing JAX where it is not loaded)."""
    for x in arrays:
        if type(x).__module__.partition(".")[0] in ("jax", "jaxlib") and "Tracer" in type(x).__name__:
            return True
    return False


def _callback(function, result_shapes, *arrays):
    import jax

    def on_host(*values):
        return function(*(np.asarray(v) for v in values))

    return jax.pure_callback(on_host, result_shapes, *arrays, vmap_method="broadcast_all")


def call(function, a, shape, dtype):
    """function(numpy array) of a traced array, whose result has `shape` and `dtype`."""
    import jax

    return _callback(lambda x: np.asarray(function(x), dtype=dtype), jax.ShapeDtypeStruct(shape, dtype), a)


def call_ex(function, a, shape, dtype):
    """function(numpy array) -> (factor, info) of a traced array: the factor of `shape` and
    `dtype`, info int32 of shape[:-2]."""
    import jax

    shapes = (jax.ShapeDtypeStruct(shape, dtype), jax.ShapeDtypeStruct(shape[:-2], np.int32))
    return _callback(lambda x: tuple(np.asarray(r, dtype=t) for r, t in zip(function(x), (dtype, np.int32))),
                     shapes, a)


def call2(function, c, b, shape, dtype):
    """function(numpy c, numpy b) of traced arrays, whose result has `shape` and `dtype`."""
    import jax

    return _callback(lambda f, y: np.asarray(function(f, y), dtype=dtype), jax.ShapeDtypeStruct(shape, dtype), c, b)
