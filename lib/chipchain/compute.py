"""Training compute: how many FLOPs, how long, how many GPU-hours, how much money.

* ``C = 6·N·D`` (Kaplan et al. 2020): about 6 FLOPs per parameter per training token — 2 in the forward pass,
  4 in the backward pass — for a dense transformer, ignoring attention's sequence-length term.
* Narayanan et al. 2021, Eq. 3: FLOPs per iteration of a GPT model *with* full activation recomputation
  ``F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))``.
* Model FLOPs utilisation (MFU, Chowdhery et al. 2022): achieved model FLOP/s divided by peak.

>>> fmt = lambda x: f"{x:.2g}"
>>> fmt(training_flops(175e9, 2e12))
'2.1e+24'
"""
from __future__ import annotations

from . import _check
from .units import HOUR

__all__ = [
    "FLOPS_PER_PARAM_TOKEN", "training_flops", "megatron_flops_per_iteration", "training_time", "gpu_hours",
    "gpu_hours_from_seconds", "seconds_from_gpu_hours", "gpus_needed", "mfu", "implied_mfu", "cost",
    "megatron_training_time",
]

#: the book's FLOP convention for a training token: 6 FLOPs per parameter, 2 forward + 4 backward (Kaplan et al.
#: 2020, Sec. 2.1); attention's sequence-length term and recomputation are other conventions
#: (:data:`chipchain.calibration.CONVENTIONS`)
FLOPS_PER_PARAM_TOKEN = 6.0


def training_flops(params, tokens, flops_per_param_token=FLOPS_PER_PARAM_TOKEN):
    """C = k·N·D with k = :data:`FLOPS_PER_PARAM_TOKEN` (6) by default (Kaplan et al. 2020, Sec. 2.1).

    ``params`` N (count), ``tokens`` D (count); result in FLOPs. Element-wise.

    >>> training_flops(175e9, 2e12)
    2.1e+24
    >>> training_flops(7e9, 2e12)
    8.4e+22
    """
    return _check.result(_check.positive("flops_per_param_token", flops_per_param_token)
                         * _check.values("params", params, _check.positive)
                         * _check.values("tokens", tokens, _check.positive))


def megatron_flops_per_iteration(batch, seq, layers, hidden, vocab, recompute=True) -> float:
    """FLOPs of one training iteration of a GPT model (Narayanan et al. 2021, Eq. 3).

    F = 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h)) with full activation recomputation (an extra forward pass);
    without it the leading factor is 72 instead of 96. Units: counts in, FLOPs out.

    GPT-3 175B, batch 1,536, seq 2,048 (the paper's Table 1 setting):

    >>> f"{megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200):.3e}"
    '4.511e+18'
    """
    b = _check.integer("batch", batch)
    s = _check.integer("seq", seq)
    l = _check.integer("layers", layers)
    h = _check.integer("hidden", hidden)
    v = _check.integer("vocab", vocab)
    _check.flag("recompute", recompute)
    lead = 96.0 if recompute else 72.0
    return lead * b * s * l * h * h * (1 + s / (6 * h) + v / (16 * l * h))


def training_time(flops, n_gpus, peak_flops, mfu) -> float:
    """Wall-clock seconds: T = C / (n · peak · MFU).

    ``flops`` total FLOPs; ``n_gpus`` count; ``peak_flops`` FLOP/s; ``mfu`` a fraction in (0, 1].
    The running example (2.1e24 FLOPs on 1,024 A100 at 3e14 FLOP/s, 50 % utilisation):

    >>> round(training_time(2.1e24, 1024, 3e14, 0.5) / 86400, 1)
    158.2
    """
    c = _check.positive("flops", flops)
    n = _check.integer("n_gpus", n_gpus)
    return c / (n * _check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu))


def gpu_hours(flops, peak_flops, mfu) -> float:
    """GPU-hours = C / (peak · MFU) / 3600 — independent of how many GPUs share the work.

    Seed 002's worked example, 70B × 10T tokens on H100 (989.4 TFLOP/s BF16 dense) at 40 % MFU:

    >>> round(gpu_hours(training_flops(70e9, 10e12), 989.4e12, 0.4) / 1e6, 2)
    2.95
    """
    c = _check.positive("flops", flops)
    return c / (_check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu)) / HOUR


def gpu_hours_from_seconds(seconds, n_gpus):
    """GPU-hours of ``n_gpus`` GPUs busy for ``seconds`` of wall clock: H = n · T / 3600. Element-wise.

    1,024 GPUs for 152 days (the running example at 50 % MFU) bill 3.74 M GPU-hours:

    >>> round(gpu_hours_from_seconds(152 * 86400, 1024) / 1e6, 2)
    3.74
    """
    t = _check.values("seconds", seconds, _check.nonnegative)
    return _check.result(_check.values("n_gpus", n_gpus, _check.integer) * t / HOUR)


def seconds_from_gpu_hours(gpu_hours, n_gpus):
    """Wall-clock seconds ``gpu_hours`` take on ``n_gpus`` GPUs: T = H · 3600 / n. Element-wise.

    DeepSeek-V3's 2.664 M pre-training H800-hours on 2,048 GPUs are 54.2 days (DeepSeek-AI 2024, Table 1):

    >>> round(seconds_from_gpu_hours(2664e3, 2048) / 86400, 1)
    54.2
    """
    h = _check.values("gpu_hours", gpu_hours, _check.nonnegative)
    return _check.result(h * HOUR / _check.values("n_gpus", n_gpus, _check.integer))


def gpus_needed(flops, peak_flops, mfu, seconds) -> float:
    """GPUs needed to finish ``flops`` in ``seconds``: n = C / (peak · MFU · T) (not rounded up).

    Seed 004's 7B model on 2T tokens in 30 days on RTX 3090s (35.6 TFLOP/s) at 40 % MFU:

    >>> round(gpus_needed(training_flops(7e9, 2e12), 35.6e12, 0.4, 30 * 86400))
    2276
    """
    c = _check.positive("flops", flops)
    return c / (_check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu)
                * _check.positive("seconds", seconds))


def mfu(achieved_flops, peak_flops) -> float:
    """Model FLOPs utilisation = achieved model FLOP/s per GPU ÷ peak FLOP/s (Chowdhery et al. 2022).

    Llama 3 405B on 16,384 H100: 400 TFLOP/s per GPU against 989.4 peak (Dubey et al. 2024, Table 4):

    >>> round(mfu(400e12, 989.4e12), 3)
    0.404
    """
    a = _check.nonnegative("achieved_flops", achieved_flops)
    p = _check.positive("peak_flops", peak_flops)
    if a > p:
        raise ValueError(f"achieved_flops ({a:g}) cannot exceed peak_flops ({p:g})")
    return a / p


def implied_mfu(flops, gpu_hours, peak_flops):
    """The utilisation a run's billed GPU-hours imply: MFU = C / (H · 3600 · peak). Element-wise.

    ``flops`` C (FLOP, e.g. :func:`training_flops`), ``gpu_hours`` H (accelerator-hours, downtime included),
    ``peak_flops`` FLOP/s per GPU. A utilisation above 1 is refused: the hours are too few for the work, which is
    nearly always a unit slip (wall-clock hours or days given as GPU-hours, or thousands of GPU-hours given as
    GPU-hours). Llama 2 70B, 2 T tokens in 1,720,320 A100-hours (Touvron et al. 2023, Table 2):

    >>> round(implied_mfu(training_flops(68.98e9, 2e12), 1720320, 312e12), 3)
    0.428
    >>> implied_mfu(training_flops(68.98e9, 2e12), 1720320 / 2048, 312e12)     # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: gpu_hours (840) imply a utilisation of 877 (above 1): ... wall-clock hours ...
    """
    c = _check.values("flops", flops, _check.positive)
    h = _check.values("gpu_hours", gpu_hours, _check.positive)
    u = c / (h * HOUR * _check.values("peak_flops", peak_flops, _check.positive))
    top = float(u.max()) if getattr(u, "ndim", 0) else float(u)
    if top > 1:
        hours = float(h.min()) if getattr(h, "ndim", 0) else float(h)
        raise ValueError(f"gpu_hours ({hours:.4g}) imply a utilisation of {top:.{3 if top >= 1.001 else 9}g} (above 1): the hours are too "
                         f"few for {float(c.max()) if getattr(c, 'ndim', 0) else float(c):.3g} FLOP at the peak; "
                         "likely a unit slip — wall-clock hours (not × n_gpus), days, or thousands of GPU-hours "
                         "given as GPU-hours")
    return _check.result(u)


def cost(gpu_hours, price_per_gpu_hour) -> float:
    """Dollars = GPU-hours × price per GPU-hour.

    DeepSeek-V3's 2.788 M H800 GPU-hours at $2 (DeepSeek-AI 2024, Table 1):

    >>> cost(2.788e6, 2.0)
    5576000.0
    """
    return _check.nonnegative("gpu_hours", gpu_hours) * _check.nonnegative("price_per_gpu_hour",
                                                                            price_per_gpu_hour)


def megatron_training_time(tokens, params, n_gpus, achieved_flops) -> float:
    """End-to-end training time with recomputation, T ≈ 8·T_tok·P / (n·X) seconds (Narayanan et al. 2021, Eq. 4).

    The factor 8 = 6 (forward and backward) + 2 (the recomputed forward pass). The paper's example: GPT-3 175B on
    300 B tokens with 1,024 A100 at 140 TFLOP/s each takes about 34 days:

    >>> round(megatron_training_time(300e9, 175e9, 1024, 140e12) / 86400, 1)
    33.9
    """
    t = _check.positive("tokens", tokens)
    p = _check.positive("params", params)
    n = _check.integer("n_gpus", n_gpus)
    return 8.0 * t * p / (n * _check.positive("achieved_flops", achieved_flops))
