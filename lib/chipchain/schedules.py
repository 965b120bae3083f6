"""Pipeline schedules: the one list of their names and the one home of their bubble formulas.

Times are in units of one micro-batch's work on one stage: F the forward chunk, B the full backward chunk (input
gradients and weight gradients), W the weight-gradient part of B (so W ≤ B). The usual ratio is F : B : W = 1 : 2 : 1.
The ideal (bubble-free) step is m·(F + B) for m micro-batches. The bubbles (time each stage idles per step):

* ``"GPipe"``: (p − 1)(F + B) — all forwards, then all backwards (Huang et al. 2019; "AFAB");
* ``"1F1B"``: (p − 1)(F + B), the same bubble with at most p micro-batches in flight (Narayanan et al. 2021,
  Sec. 2.2.1; PipeDream-Flush);
* ``"interleaved"``: (p − 1)(F + B)/v with v model chunks per GPU (Narayanan et al. 2021, Sec. 2.2.2), so the bubble
  over the ideal time is (p − 1)/(v·m) (:func:`bubble_fraction`);
* ``"ZB-H1"``: (p − 1)(F + B − 2W) — the weight-gradient passes fill the bubble's tail at the memory of 1F1B
  (Qi et al. 2024, Sec. 3; DeepSeek-AI 2024, Table 2, which calls it ZB1P); a third of 1F1B's at 1 : 2 : 1;
* ``"ZB-H2"``: max(0, (p − 1)(F + B − 3W)) — zero at 1 : 2 : 1, with up to 2p − 1 micro-batches' activations in
  flight instead of p (Qi et al. 2024, Sec. 3; their automatic ZB-2p schedule reaches nearly zero in practice);
* ``"DualPipe"``: (p/2 − 1)(F&B + B − 3W), with F&B the time of a forward and a backward chunk run overlapped
  (DeepSeek-AI 2024, Sec. 3.2.1 and Table 2; two copies of the parameters, p + 1 micro-batches in flight).

Each schedule has one name here (:data:`SCHEDULES`); other names in the literature are accepted and mapped
(:data:`ALIASES`: ``"ZB1P"`` is ``"ZB-H1"``, ``"AFAB"`` is ``"GPipe"``). :func:`chipchain.parallel.schedule_bubble`
and :func:`chipchain.parallel.bubble_fraction` are these formulas; :mod:`chipchain.pipesim` runs the schedules event
by event and measures the same bubbles.

>>> round(idle_share("1F1B", 16, 192), 4), round(idle_share("ZB-H1", 16, 192), 4), idle_share("ZB-H2", 16, 192)
(0.0725, 0.0254, 0.0)
>>> [bubble(s, 16) for s in TABLE2]
[45.0, 15.0, 14.0]
"""
from __future__ import annotations

from . import _check

__all__ = ["SCHEDULES", "TABLE2", "ALIASES", "canonical", "bubble", "bubble_fraction", "idle_share",
           "inflight_microbatches", "activation_microbatches", "parameter_copies"]

#: every pipeline schedule the book draws or compares, one name each, from the oldest
SCHEDULES = ("GPipe", "1F1B", "interleaved", "ZB-H1", "ZB-H2", "DualPipe")
#: the schedules DeepSeek-V3's Table 2 compares, in its order
TABLE2 = ("1F1B", "ZB-H1", "DualPipe")
#: other names of the same schedules (the paper or code that uses them) → the name used here
ALIASES = {
    "ZB1P": "ZB-H1",                     # DeepSeek-AI 2024, Table 2
    "ZB-1P": "ZB-H1",
    "AFAB": "GPipe",                     # "all forward, all backward" (Ultra-Scale Playbook)
    "all-forward-all-backward": "GPipe",
    "PipeDream-Flush": "1F1B",           # Narayanan et al. 2021
    "interleaved-1F1B": "interleaved",
    "ZB-2P": "ZB-H2",
}
#: where each schedule's bubble comes from
SOURCES = {
    "GPipe": "Huang et al. 2019 (GPipe)",
    "1F1B": "Narayanan et al. 2021, Sec. 2.2.1 (PipeDream-Flush / 1F1B)",
    "interleaved": "Narayanan et al. 2021, Sec. 2.2.2 (interleaved 1F1B)",
    "ZB-H1": "Qi et al. 2024, Sec. 3 (Zero Bubble ZB-H1; DeepSeek-V3's ZB1P)",
    "ZB-H2": "Qi et al. 2024, Sec. 3 (Zero Bubble ZB-H2)",
    "DualPipe": "DeepSeek-AI 2024, Sec. 3.2.1 and Table 2",
}


def canonical(schedule) -> str:
    """The one name of ``schedule`` (any name in :data:`SCHEDULES` or :data:`ALIASES`, case-insensitive).

    >>> canonical("zb1p"), canonical("1f1b")
    ('ZB-H1', '1F1B')
    >>> canonical("Chimera")
    Traceback (most recent call last):
    ...
    KeyError: "unknown pipeline schedule 'Chimera'; the schedules are GPipe, 1F1B, interleaved, ZB-H1, ZB-H2, \
DualPipe (also accepted: ZB1P, ZB-1P, AFAB, all-forward-all-backward, PipeDream-Flush, interleaved-1F1B, ZB-2P)"
    """
    if not isinstance(schedule, str):
        raise ValueError(f"schedule must be a schedule name (str), got {schedule!r}")
    k = _check.key(schedule)
    for s in SCHEDULES:
        if _check.key(s) == k:
            return s
    for a, s in ALIASES.items():
        if _check.key(a) == k:
            return s
    raise KeyError(f"unknown pipeline schedule {schedule!r}; the schedules are {', '.join(SCHEDULES)} "
                   f"(also accepted: {', '.join(ALIASES)})")


def _times(f, b, w):
    f, b, w = _check.positive("f", f), _check.positive("b", b), _check.nonnegative("w", w)
    if w > b:
        raise ValueError(f"w ({w:g}) is part of the backward chunk and cannot exceed b ({b:g})")
    return f, b, w


def _even(p, s):
    if p % 2:
        raise ValueError(f"pp must be even for {s} (it pairs stage i with stage PP−1−i), got {p!r}")


def bubble(schedule, pp, virtual_stages=1, f=1.0, b=2.0, w=1.0, fb=None) -> float:
    """Idle time per stage per step of ``schedule`` on ``pp`` stages, in the units of ``f``, ``b``, ``w`` (the
    module's formulas). ``virtual_stages`` v matters only for ``"interleaved"``; ``fb`` (F&B, default F + B:
    overlap hides communication, not compute) only for ``"DualPipe"``, which needs an even ``pp``.

    >>> [bubble(s, 16, 2) for s in SCHEDULES]
    [45.0, 45.0, 22.5, 15.0, 0.0, 14.0]
    """
    s = canonical(schedule)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    f, b, w = _times(f, b, w)
    if s == "DualPipe":
        _even(p, s)
        fb = f + b if fb is None else _check.positive("fb", fb)
        return (p // 2 - 1) * (fb + b - 3 * w)
    if s in ("GPipe", "1F1B"):
        return (p - 1) * (f + b)
    if s == "interleaved":
        return (p - 1) * (f + b) / v
    if s == "ZB-H1":
        return (p - 1) * (f + b - 2 * w)
    return max(0.0, (p - 1) * (f + b - 3 * w))


def bubble_fraction(pp, microbatches, virtual_stages=1):
    """Pipeline bubble time relative to the ideal (bubble-free) time of GPipe, 1F1B and the interleaved schedule:
    ``(p − 1)/(v·m)`` (Narayanan et al. 2021, §2.2.1 for 1F1B, §2.2.2 for the interleaved schedule with v chunks
    per GPU; v = 1 otherwise).

    ``pp`` p stages, ``microbatches`` m per step, ``virtual_stages`` v; element-wise over arrays. Dimensionless.

    >>> bubble_fraction(16, 64), bubble_fraction(16, 64, virtual_stages=2)
    (0.234375, 0.1171875)
    >>> import numpy as np
    >>> bubble_fraction(16, np.array([16, 192])).round(3).tolist()
    [0.938, 0.078]
    """
    p = _check.values("pp", pp, _check.integer)
    m = _check.values("microbatches", microbatches, _check.integer)
    v = _check.values("virtual_stages", virtual_stages, _check.integer)
    return _check.result((p - 1) / (v * m))


def idle_share(schedule, pp, microbatches, virtual_stages=1, f=1.0, b=2.0, w=1.0, fb=None):
    """Share of the step each stage idles: bubble / (m(F + B) + bubble), for m = ``microbatches``.

    For GPipe and 1F1B this is (p − 1)/(m + p − 1), for the interleaved schedule (p − 1)/(v·m + p − 1), whatever F
    and B (element-wise over arrays of ``pp``, ``microbatches``, ``virtual_stages``); the others use
    :func:`bubble` (element-wise over ``microbatches``).

    >>> round(idle_share("interleaved", 16, 64, 2), 4), round(idle_share("DualPipe", 16, 64), 4)
    (0.1049, 0.068)
    """
    s = canonical(schedule)
    m = _check.values("microbatches", microbatches, _check.integer)
    if s in ("GPipe", "1F1B", "interleaved"):
        _times(f, b, w)
        p = _check.values("pp", pp, _check.integer)
        v = _check.values("virtual_stages", virtual_stages, _check.integer) if s == "interleaved" else 1
        return _check.result((p - 1) / (v * m + p - 1))
    bub = bubble(s, pp, virtual_stages, f, b, w, fb)
    f, b, w = _times(f, b, w)
    return _check.result(bub / (m * (f + b) + bub))


def inflight_microbatches(schedule, pp, virtual_stages=1) -> float:
    """Micro-batches whose activations the first stage holds at its peak: m for GPipe (all of them; returned as
    ``inf`` here, since it grows with m), p for 1F1B and ZB-H1, p(1 + (p − 1)/(p·v)) for the interleaved schedule
    (Korthikanti et al. 2022, Sec. 4.2.3), 2p − 1 for ZB-H2 (Qi et al. 2024, Sec. 3), p + 1 for DualPipe
    (DeepSeek-AI 2024, Table 2).

    >>> [inflight_microbatches(s, 16, 2) for s in SCHEDULES[1:]]
    [16, 23.5, 16, 31, 17]
    """
    s = canonical(schedule)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    if s == "GPipe":
        return float("inf")
    if s == "interleaved":
        return p * (1 + (p - 1) / (p * v))
    if s == "DualPipe":
        _even(p, s)
        return p + 1
    return 2 * p - 1 if s == "ZB-H2" else p


def activation_microbatches(schedule, pp) -> int:
    """Micro-batches' activations one device holds at the peak, as DeepSeek-V3's Table 2 states them: PP for 1F1B
    and ZB-H1, PP + 1 for DualPipe.

    >>> [activation_microbatches(s, 16) for s in TABLE2]
    [16, 16, 17]
    """
    s = _check.choice("schedule", canonical(schedule), TABLE2)
    p = _check.integer("pp", pp, minimum=2)
    return p + 1 if s == "DualPipe" else p


def parameter_copies(schedule) -> int:
    """Copies of its stage's parameters a device holds: 2 for DualPipe (each device holds a stage of both
    directions), 1 otherwise (DeepSeek-AI 2024, Table 2).

    >>> [parameter_copies(s) for s in TABLE2]
    [1, 1, 2]
    """
    return 2 if canonical(schedule) == "DualPipe" else 1
