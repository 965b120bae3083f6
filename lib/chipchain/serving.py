"""Serving on an accelerator: one prefill or decode step on the roofline, the batch where decode turns
compute-bound, and how many GPUs hold a model.

The per-token equations (KV cache, weight bytes, FLOPs and bytes of each phase) live in :mod:`chipchain.inference`
and know nothing about hardware; this module places them on an accelerator of :mod:`chipchain.hardware` through
the roofline (:mod:`chipchain.roofline`): time ≥ max(F/peak, Q/bandwidth), so every tokens/s figure is an upper
bound. ``accelerator`` and ``model`` are registry names, aliases or records.

A configuration whose weights and KV cache need more memory than the GPUs hold gets no throughput at all: its
``fits`` is ``False`` and its ``seconds``/``tokens_per_second`` are a :class:`DoesNotFit` marker that prints "does
not fit" and raises a ``ValueError`` (naming the bytes needed and held) on any arithmetic or number formatting.

>>> d = decode("H100", "Llama-3-8B", context=1, batch=1)
>>> d.bound, round(d.tokens_per_second)
('memory-bound', 209)
>>> big = decode("H100", "Llama-3-8B", context=8192, batch=256)
>>> big.fits, str(big.tokens_per_second)
(False, 'does not fit')
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import _check, assumptions, hardware, models, roofline, units
from .inference import (decode_bytes, decode_flops, decode_intensity, memory_needed, prefill_bytes, prefill_flops,
                        prefill_intensity)

__all__ = ["PhaseEstimate", "DoesNotFit", "compute_dtype", "prefill", "decode", "critical_batch",
           "prefill_critical_tokens", "gpus_to_hold"]


class DoesNotFit(_check.Missing):
    """Stands in for a throughput or step time that does not exist because the weights and KV cache do not fit in
    the GPUs' memory. Falsy; prints "does not fit"; any arithmetic, comparison or number formatting raises a
    ``ValueError`` that says how many bytes were needed and held.

    >>> x = DoesNotFit("Llama-3-8B on 1 × H100-SXM", 150e9, 80e9)
    >>> str(x), bool(x)
    ('does not fit', False)
    >>> x * 2
    Traceback (most recent call last):
    ...
    ValueError: Llama-3-8B on 1 × H100-SXM does not fit: needs 150 GB (weights + KV cache), holds 80 GB — no throughput
    """

    __slots__ = ("needed", "available")

    def __init__(self, what: str, needed: float, available: float):
        super().__init__(what, "throughput")
        self.needed, self.available = needed, available

    def error(self) -> ValueError:
        return ValueError(f"{self.part} does not fit: needs {units.fmt_bytes(self.needed)} (weights + KV cache), "
                          f"holds {units.fmt_bytes(self.available)} — no throughput")

    def __str__(self) -> str:
        return "does not fit"

    __repr__ = __str__


def compute_dtype(accelerator, weight_dtype="bf16") -> str:
    """The precision the matmuls run in, given how the weights are stored.

    Weights stored in a format the accelerator has a peak for (``fp8`` and ``int8`` on parts with FP8 / INT8
    tensor cores) compute in it; otherwise (and always for ``int4``, whose kernels dequantise to 16 bits, as
    GPTQ/AWQ-style weight-only schemes do) the math runs in BF16 (FP16 on parts with no BF16 figure).

    >>> compute_dtype("H100", "fp8"), compute_dtype("A100", "fp8"), compute_dtype("H100", "int4")
    ('fp8', 'bf16', 'bf16')
    """
    acc = hardware.get(accelerator)
    w = _check.choice("weight_dtype", weight_dtype, units.BYTES_PER_ELEMENT)
    have = acc.precisions()
    if w != "int4" and w in have:
        return w
    for d in ("bf16", "fp16"):
        if d in have:
            return d
    raise ValueError(f"{acc.name} has no BF16 or FP16 peak in the catalog (it has: {', '.join(have) or 'none'})")


@dataclass(frozen=True)
class PhaseEstimate:
    """Roofline estimate of one prefill or one decode step on ``n_gpus`` ideal tensor-parallel GPUs. When the
    weights and KV cache do not fit (``fits`` is False), ``seconds``, ``tokens_per_second`` and
    ``per_sequence_tokens_per_second`` are :class:`DoesNotFit` — never a number."""

    phase: str                 #: "prefill" or "decode"
    accelerator: str
    model: str
    n_gpus: int
    batch: int
    tokens: int                #: prompt length (prefill) or context held (decode)
    flops: float               #: FLOPs of the step
    nbytes: float              #: bytes moved by the step
    intensity: float           #: FLOP/byte
    ridge: float               #: FLOP/byte of the accelerator at ``dtype``
    dtype: str                 #: compute precision
    bound: str                 #: "memory-bound" or "compute-bound"
    seconds: float             #: lower bound on the step's time (DoesNotFit if it does not fit)
    tokens_per_second: float   #: tokens produced (decode) or consumed (prefill) per second, all sequences
    per_sequence_tokens_per_second: float   #: (both DoesNotFit if the configuration does not fit)
    utilisation: float         #: attainable FLOP/s ÷ peak FLOP/s
    memory_needed: float       #: bytes: weights + KV cache (:func:`memory_needed`)
    memory_available: float    #: bytes: n_gpus × memory per GPU

    @property
    def fits(self) -> bool:
        """True when the weights and KV cache fit in the GPUs' memory (all of it: the physical limit; the
        ``usable_fraction`` of :func:`~chipchain.inference.max_batch` and :func:`gpus_to_hold` leaves headroom)."""
        return self.memory_needed <= self.memory_available


def _phase(phase, accelerator, model, tokens, batch, weight_dtype, kv_dtype, n_gpus, flops, nbytes, produced):
    acc = hardware.get(accelerator)
    m = models.get(model)
    n = _check.integer("n_gpus", n_gpus)
    dtype = compute_dtype(acc, weight_dtype)
    intensity = roofline.arithmetic_intensity(flops, nbytes)
    per_gpu = roofline.attainable_flops(acc, intensity, dtype)          # FLOP/s on one GPU at this intensity
    seconds = flops / (n * per_gpu)                                     # = max(F/peak, Q/BW) over n GPUs
    need = memory_needed(m, tokens, batch, weight_dtype, kv_dtype)
    have = n * acc.require("memory_bytes")
    if need <= have:
        tps, each = produced / seconds, produced / batch / seconds
    else:                                       # no throughput for a configuration the memory cannot hold
        seconds = tps = each = DoesNotFit(f"{m.name} at batch {batch:,} × {tokens:,} tokens on {n} × {acc.name}",
                                          need, have)
    return PhaseEstimate(
        phase=phase, accelerator=acc.name, model=m.name, n_gpus=n, batch=batch, tokens=tokens, flops=flops,
        nbytes=nbytes, intensity=intensity, ridge=roofline.ridge_point(acc, dtype), dtype=dtype,
        bound=roofline.bound(acc, intensity, dtype), seconds=seconds, tokens_per_second=tps,
        per_sequence_tokens_per_second=each, utilisation=roofline.fraction_of_peak(acc, intensity, dtype),
        memory_needed=need, memory_available=have)


def prefill(accelerator, model, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16",
            n_gpus=1) -> PhaseEstimate:
    """Roofline estimate of prefilling ``batch`` prompts of ``prompt_tokens`` tokens (a :class:`PhaseEstimate`).

    Time ≥ max(F/peak, Q/BW) (:mod:`chipchain.roofline`); ``n_gpus`` share the work as ideal tensor parallelism
    (peak, bandwidth and memory add up; communication ignored). Prefill of 2,048 tokens is compute-bound:

    >>> p = prefill("H100", "Llama-3-8B", 2048)
    >>> p.bound, round(p.seconds * 1e3, 1)
    ('compute-bound', 34.4)
    """
    s = _check.integer("prompt_tokens", prompt_tokens)
    B = _check.integer("batch", batch)
    return _phase("prefill", accelerator, model, s, B, weight_dtype, kv_dtype, n_gpus,
                  prefill_flops(model, s, B), prefill_bytes(model, s, B, weight_dtype, kv_dtype), B * s)


def decode(accelerator, model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16", n_gpus=1) -> PhaseEstimate:
    """Roofline estimate of one decode step for ``batch`` sequences holding ``context`` tokens each.

    ``tokens_per_second`` = B / step time (all sequences); at batch 1 and short context this is
    :func:`decode_tokens_per_second_bound`. Llama 3 8B on one H100 in BF16, batch 1 and batch 64:

    >>> d1, d64 = decode("H100", "Llama-3-8B", 1024, 1), decode("H100", "Llama-3-8B", 1024, 64)
    >>> d1.bound, round(d1.tokens_per_second), d64.bound, round(d64.tokens_per_second)
    ('memory-bound', 207, 'memory-bound', 8695)

    Batch 1,024 at the same context needs 16 GB of weights and 137 GB of KV cache — more than the card holds —
    so it gets no throughput:

    >>> d = decode("H100", "Llama-3-8B", 1024, 1024)
    >>> d.fits, d.tokens_per_second
    (False, does not fit)
    """
    c = _check.integer("context", context)
    B = _check.integer("batch", batch)
    return _phase("decode", accelerator, model, c, B, weight_dtype, kv_dtype, n_gpus,
                  decode_flops(model, c, B), decode_bytes(model, c, B, weight_dtype, kv_dtype), B)


def _first_true(ok, cap: int):
    """The smallest integer n in [1, cap] with ``ok(n)``, for a predicate that stays true once true (doubling, then
    bisection: at most ~2·log2(cap) calls), or ``math.inf`` if ``ok(cap)`` is false."""
    if not ok(cap):
        return math.inf
    lo, hi = 1, 1
    while not ok(hi):
        lo, hi = hi, min(hi * 2, cap)
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def critical_batch(accelerator, model, context, weight_dtype="bf16", kv_dtype="bf16", batch_limit=1 << 20):
    """Smallest batch at which a decode step becomes compute-bound (its intensity reaches the ridge point), or
    ``math.inf`` if no batch up to ``batch_limit`` gets there — as happens at long context, where the KV cache each
    sequence reads caps the intensity at about ``(2N + 4lcd)/(c·kv)``. A bisection of at most ~40 steps.

    >>> critical_batch("H100", "Llama-3-8B", 128), critical_batch("H100", "Llama-3-8B", 1024)
    (427, inf)
    """
    acc = hardware.get(accelerator)
    m = models.get(model)
    c = _check.integer("context", context)
    cap = _check.integer("batch_limit", batch_limit)
    ridge = roofline.ridge_point(acc, compute_dtype(acc, weight_dtype))

    def ok(b):
        return decode_intensity(m, c, b, weight_dtype, kv_dtype) >= ridge

    return _first_true(ok, cap)


def prefill_critical_tokens(accelerator, model, batch=1, weight_dtype="bf16", kv_dtype="bf16",
                            tokens_limit=1 << 24):
    """Shortest prompt whose prefill is compute-bound: the smallest ``s`` with prefill intensity
    ``F(s)/Q(s) ≥ R`` (the accelerator's ridge point at the compute precision), or ``math.inf`` if no prompt up to
    ``tokens_limit`` gets there. For a dense model ``F/Q ≈ 2s/b``, so ``s* ≈ R·b/2``; a mixture of experts needs
    longer prompts, because a short prompt touches only some experts while their weights are read anyway. Shorter
    prompts prefill on the bandwidth slope, like decode. A bisection of at most ~50 steps.

    Llama 3 8B in BF16 on an H100 (ridge 295 FLOP/byte) and on an A100 (153):

    >>> prefill_critical_tokens("H100", "Llama-3-8B"), prefill_critical_tokens("A100", "Llama-3-8B")
    (295, 153)
    """
    acc = hardware.get(accelerator)
    m = models.get(model)
    B = _check.integer("batch", batch)
    cap = _check.integer("tokens_limit", tokens_limit)
    ridge = roofline.ridge_point(acc, compute_dtype(acc, weight_dtype))

    def ok(s):
        return prefill_intensity(m, s, B, weight_dtype, kv_dtype) >= ridge

    return _first_true(ok, cap)


def gpus_to_hold(accelerator, model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16",
                 usable_fraction=None, choices=(1, 2, 4, 8, 16, 32, 64)) -> int:
    """Fewest GPUs among ``choices`` whose memory (× ``usable_fraction``) holds the weights and the KV cache of
    ``batch`` sequences of ``context`` tokens (:func:`memory_needed`); ``usable_fraction`` defaults to the
    assumption ``usable_memory_fraction`` (:mod:`chipchain.assumptions`, 0.9). ``ValueError`` if even the largest
    choice is too small.

    The running example in BF16 at 2,048 tokens: 350 GB of weights need 8 A100-80GB (4 hold only 309 GB usable):

    >>> gpus_to_hold("A100", "GPT-3-175B", 2048)
    8
    """
    acc = hardware.get(accelerator)
    m = models.get(model)
    f = _check.fraction("usable_fraction", assumptions.value("usable_memory_fraction") if usable_fraction is None
                        else usable_fraction)
    need = memory_needed(m, _check.integer("context", context), _check.integer("batch", batch), weight_dtype,
                         kv_dtype)
    per = acc.require("memory_bytes") * f
    opts = sorted(_check.integer("choices", c) for c in choices)
    if not opts:
        raise ValueError("choices must hold at least one GPU count")
    for n in opts:
        if n * per >= need:
            return n
    raise ValueError(f"{m.name} needs {units.fmt_bytes(need)} (weights + KV cache); {opts[-1]} × {acc.name} hold "
                     f"{units.fmt_bytes(opts[-1] * per)} usable")
