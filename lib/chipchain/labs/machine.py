"""The reader's own machine, measured: the two numbers of a CPU roofline (chapter 1's "your laptop" cell).

A measurement, not an equation: the result depends on the machine and the moment, so it lives in the measurement
layer that nothing in the library imports (the roofline it feeds is :mod:`chipchain.roofline`). NumPy is imported
inside each function.

>>> measure_matmul(64, repeats=1) > 0 and measure_triad(10_000, repeats=1) > 0
True
"""
from __future__ import annotations

from .. import _check

__all__ = ["measure_matmul", "measure_triad"]


def measure_matmul(n=512, repeats=3) -> float:
    """Best-of-``repeats`` FLOP/s of a float64 n×n NumPy matmul on this machine (2n³ FLOPs per product)."""
    import time

    import numpy as np

    n = _check.integer("n", n, minimum=16)
    repeats = _check.integer("repeats", repeats)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    a @ b
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - t0)
    return 2.0 * n**3 / best


def measure_triad(n=10_000_000, repeats=3) -> float:
    """Best-of-``repeats`` memory bandwidth (bytes/s) of a STREAM-like triad a = b + s·c in float64.

    NumPy does it in two passes (``a = s·c``, then ``a += b``): five arrays of 8-byte elements cross memory per
    element (read c, write a; read a, read b, write a), so 40·n bytes are counted — not STREAM's 24·n.
    """
    import time

    import numpy as np

    n = _check.integer("n", n, minimum=1000)
    repeats = _check.integer("repeats", repeats)
    b, c, a = np.ones(n), np.full(n, 2.0), np.empty(n)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        np.multiply(c, 3.0, out=a)
        np.add(a, b, out=a)
        best = min(best, time.perf_counter() - t0)
    return 40.0 * n / best
