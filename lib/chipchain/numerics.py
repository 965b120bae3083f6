"""Number formats: what each precision can represent, and casting to it in NumPy.

A binary floating-point format with ``e`` exponent bits and ``m`` mantissa bits (IEEE 754 layout) has

    largest finite  = (2 − 2^−m) · 2^(2^(e−1) − 1)
    smallest normal = 2^(2 − 2^(e−1))
    smallest subnormal = 2^(2 − 2^(e−1) − m)
    machine epsilon = 2^−m

(FP8 E4M3 departs from IEEE at the top: it has no infinities and reuses that exponent, so its largest value is 448.)

NumPy has float16 but no bfloat16; :func:`to_bf16` emulates it by rounding float32 to its top 16 bits (round to
nearest, ties to even), which is exactly what hardware BF16 conversion does for finite values.

>>> fmt = FORMATS["bf16"]
>>> fmt.exponent_bits, fmt.mantissa_bits
(8, 7)
>>> f"{smallest_normal('fp16'):.3g}"
'6.1e-05'
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check

__all__ = ["Format", "FORMATS", "largest", "smallest_normal", "smallest_subnormal", "epsilon", "to_bf16",
           "to_fp16", "underflow_fraction", "to_fp8_e4m3", "SCALINGS", "scaled_fp8_error"]


@dataclass(frozen=True)
class Format:
    """A floating-point format: sign + exponent + mantissa bits."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    ieee_top: bool = True      #: False for FP8 E4M3 (no infinities; the top exponent holds finite values)

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits


FORMATS = {
    "fp32": Format("FP32", 8, 23),
    "tf32": Format("TF32", 8, 10),
    "bf16": Format("BF16", 8, 7),
    "fp16": Format("FP16", 5, 10),
    "fp8_e4m3": Format("FP8 E4M3", 4, 3, ieee_top=False),
    "fp8_e5m2": Format("FP8 E5M2", 5, 2),
}


def _fmt(dtype) -> Format:
    return FORMATS[_check.choice("dtype", dtype, FORMATS)]


def largest(dtype) -> float:
    """Largest finite value: (2 − 2^−m)·2^bias for IEEE formats; 448 for FP8 E4M3 (Micikevicius et al. 2022).

    >>> largest("fp16"), largest("fp8_e4m3")
    (65504.0, 448.0)
    """
    f = _fmt(dtype)
    bias = 2 ** (f.exponent_bits - 1) - 1
    if not f.ieee_top:   # E4M3: exponent 1111 is usable, only mantissa 111 there is NaN
        return (2 - 2 ** -(f.mantissa_bits - 1)) * 2.0 ** (bias + 1)
    return (2 - 2.0 ** -f.mantissa_bits) * 2.0 ** bias


def smallest_normal(dtype) -> float:
    """Smallest positive normal value, 2^(1 − bias).

    >>> smallest_normal("bf16") == smallest_normal("fp32")
    True
    """
    f = _fmt(dtype)
    return 2.0 ** (2 - 2 ** (f.exponent_bits - 1))


def smallest_subnormal(dtype) -> float:
    """Smallest positive subnormal value, 2^(1 − bias − m); anything below half of it rounds to zero.

    >>> smallest_subnormal("fp16")
    5.960464477539063e-08
    """
    f = _fmt(dtype)
    return 2.0 ** (2 - 2 ** (f.exponent_bits - 1) - f.mantissa_bits)


def epsilon(dtype) -> float:
    """Machine epsilon, 2^−m: the gap between 1 and the next representable number.

    >>> epsilon("bf16")
    0.0078125
    """
    return 2.0 ** -_fmt(dtype).mantissa_bits


def to_fp16(x):
    """Round to IEEE half precision (NumPy float16) and back to float32 — values below 2^−25 become 0."""
    import numpy as np

    with np.errstate(over="ignore", under="ignore"):
        return np.asarray(x, dtype=np.float32).astype(np.float16).astype(np.float32)


def to_bf16(x):
    """Round float32 values to bfloat16 (round to nearest, ties to even) and return them as float32.

    >>> import numpy as np
    >>> float(to_bf16(np.float32(1.0) + np.float32(2**-9)))  # below half an ulp of 2^-7: rounds back to 1
    1.0
    """
    import numpy as np

    a = np.asarray(x, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    rounding = 0x7FFF + ((bits >> 16) & 1)
    out = ((bits + rounding) >> 16 << 16).astype(np.uint32).view(np.float32)
    return np.where(np.isfinite(a), out, a).astype(np.float32)


def underflow_fraction(values, dtype) -> float:
    """Fraction of non-zero ``values`` that become exactly zero when cast to ``dtype`` ("fp16" or "bf16").

    Gradients of order 1e-8 vanish in FP16 but survive in BF16 (same exponent range as FP32):

    >>> underflow_fraction([1e-8, 2e-8, 1e-3], "fp16"), underflow_fraction([1e-8, 2e-8, 1e-3], "bf16")
    (0.6666666666666666, 0.0)
    """
    import numpy as np

    key = _check.choice("dtype", dtype, ("fp16", "bf16"))
    v = np.asarray(values, dtype=np.float32).ravel()
    if v.size == 0:
        raise ValueError("values must not be empty")
    if not np.all(np.isfinite(v)):
        raise ValueError("values must be finite")
    nz = v[v != 0]
    if nz.size == 0:
        raise ValueError("values must contain at least one non-zero value")
    cast = to_fp16(nz) if key == "fp16" else to_bf16(nz)
    return float(np.mean(cast == 0))


def to_fp8_e4m3(x):
    """Round values to FP8 E4M3 (round to nearest, ties to even; saturating at ±448) and return them as float64.

    E4M3 has 3 mantissa bits and exponent bias 7: normal values 2^−6 … 448, subnormal steps of 2^−9; anything below
    2^−10 rounds to zero (Micikevicius et al. 2022, "FP8 formats for deep learning", Table 1).

    >>> to_fp8_e4m3([1.0, 1.0625, 1.1, 500.0, 2**-11]).tolist()
    [1.0, 1.0, 1.125, 448.0, 0.0]
    """
    import numpy as np

    a = np.asarray(_check.values("x", x, lambda name, v: _check.number(name, v, allow_negative=True)), dtype=float)
    mag = np.abs(a)
    exponent = np.floor(np.log2(np.maximum(mag, 2.0 ** -6)))          # subnormals share the step of 2^−6
    step = 2.0 ** (exponent - 3)
    return np.sign(a) * np.minimum(np.round(mag / step) * step, 448.0)


SCALINGS = {           # name: (block rows, block columns, power-of-two scale); None = the whole dimension
    "per-tensor": (None, None, False),     # Transformer Engine's delayed scaling: one scale per tensor
    "1x128 tiles": (1, 128, False),        # DeepSeek-V3, activations: per token per 128 channels
    "128x128 blocks": (128, 128, False),   # DeepSeek-V3, weights
    "MXFP8 (1x32)": (1, 32, True),         # OCP Microscaling: 32 elements share an 8-bit power-of-two scale
}


def scaled_fp8_error(x, scaling="per-tensor"):
    """Quantise a matrix to FP8 E4M3 with one scale per block and return the fraction of its non-zero values
    that become zero (underflow), the quantity fine-grained scaling exists to reduce.

    Each block's scale maps its largest magnitude onto E4M3's 448 (``scale = amax / 448``; MXFP8 rounds the scale
    up to a power of two). ``x``: a 2-D array (rows = tokens, columns = channels) whose dimensions the chosen
    blocks divide; ``scaling``: a name in :data:`SCALINGS`. Sources: NVIDIA Transformer Engine (per-tensor
    delayed scaling); DeepSeek-AI (2024), DeepSeek-V3 §3.3.2 (1×128 activation tiles, 128×128 weight blocks);
    OCP (2023), Microscaling Formats (MX) v1.0 (32-element blocks, E8M0 scale).

    >>> import numpy as np
    >>> x = np.ones((128, 256)); x[0, 0] = 1e6                        # one outlier
    >>> [round(scaled_fp8_error(x, s), 4) for s in ("per-tensor", "1x128 tiles")]   # all but one value; one tile
    [1.0, 0.0039]
    """
    import numpy as np

    rows, cols, pow2 = SCALINGS[_check.choice("scaling", scaling, SCALINGS)]
    a = np.asarray(x, dtype=float)
    if a.ndim != 2 or a.size == 0 or not np.all(np.isfinite(a)):
        raise ValueError(f"x must be a non-empty 2-D array of finite numbers, got shape {a.shape}")
    r, c = rows or a.shape[0], cols or a.shape[1]
    if a.shape[0] % r or a.shape[1] % c:
        raise ValueError(f"x's shape {a.shape} must be divisible by the {scaling} block ({r}×{c})")
    blocks = a.reshape(a.shape[0] // r, r, a.shape[1] // c, c)
    amax = np.abs(blocks).max(axis=(1, 3), keepdims=True)
    scale = np.where(amax > 0, amax / 448.0, 1.0)
    if pow2:
        scale = 2.0 ** np.ceil(np.log2(scale))
    q = to_fp8_e4m3(blocks / scale)
    nonzero = blocks != 0
    if not nonzero.any():
        raise ValueError("x must contain at least one non-zero value")
    return float(np.mean((q == 0)[nonzero]))
