"""Pipeline schedules side by side: 1F1B, interleaved 1F1B and the zero-bubble schedules, as an idle share of the step.

Times are in units of one micro-batch's work on one stage: F the forward chunk, B the full backward chunk (input
gradients and weight gradients), W the weight-gradient part of B (so W ≤ B). The usual ratio is F : B : W = 1 : 2 : 1.
The ideal (bubble-free) step is m·(F + B) for m micro-batches. The bubbles (time each stage idles per step):

* ``"1F1B"``: (p − 1)(F + B) (Narayanan et al. 2021, Sec. 2.2.1) — the bubble of :func:`chipchain.parallel.bubble_fraction`;
* ``"interleaved"``: (p − 1)(F + B)/v with v chunks per GPU (Narayanan et al. 2021, Sec. 2.2.2);
* ``"ZB-H1"``: (p − 1)(F + B − 2W) — the weight-gradient passes fill the bubble's tail at the memory of 1F1B
  (Qi et al. 2024, Sec. 3; :func:`chipchain.parallel.schedule_bubble` "ZB1P"); a third of 1F1B's at 1 : 2 : 1;
* ``"ZB-H2"``: max(0, (p − 1)(F + B − 3W)) — zero at 1 : 2 : 1, with up to 2p − 1 micro-batches' activations in
  flight instead of p (Qi et al. 2024, Sec. 3; their automatic ZB-2p schedule reaches nearly zero in practice).

>>> round(idle_share("1F1B", 16, 192), 4), round(idle_share("ZB-H1", 16, 192), 4), idle_share("ZB-H2", 16, 192)
(0.0725, 0.0254, 0.0)
"""
from __future__ import annotations

from . import _check, parallel

__all__ = ["SCHEDULES", "bubble", "idle_share", "inflight_microbatches"]

#: the schedules this module compares, from the oldest
SCHEDULES = ("1F1B", "interleaved", "ZB-H1", "ZB-H2")


def _times(f, b, w):
    f, b, w = _check.positive("f", f), _check.positive("b", b), _check.nonnegative("w", w)
    if w > b:
        raise ValueError(f"w ({w:g}) is part of the backward chunk and cannot exceed b ({b:g})")
    return f, b, w


def bubble(schedule, pp, virtual_stages=1, f=1.0, b=2.0, w=1.0) -> float:
    """Idle time per stage per step of ``schedule`` on ``pp`` stages, in the units of ``f``, ``b``, ``w`` (the
    module's formulas). ``virtual_stages`` matters only for ``"interleaved"``.

    >>> [bubble(s, 16, 2) for s in SCHEDULES]
    [45.0, 22.5, 15.0, 0.0]
    """
    s = _check.choice("schedule", schedule, SCHEDULES)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    f, b, w = _times(f, b, w)
    if p == 1:
        return 0.0
    if s in ("1F1B", "interleaved"):                 # parallel's 1F1B bubble, split over v chunks when interleaved
        return parallel.schedule_bubble("1F1B", p, f, b, w) / (v if s == "interleaved" else 1)
    if s == "ZB-H1":
        return parallel.schedule_bubble("ZB1P", p, f, b, w)
    return max(0.0, (p - 1) * (f + b - 3 * w))


def idle_share(schedule, pp, microbatches, virtual_stages=1, f=1.0, b=2.0, w=1.0) -> float:
    """Share of the step each stage idles: bubble / (m(F + B) + bubble), for m = ``microbatches``.

    For 1F1B this is (p − 1)/(m + p − 1), for the interleaved schedule (p − 1)/(v·m + p − 1) — the same as
    :func:`chipchain.parallel.idle_share`:

    >>> idle_share("interleaved", 16, 64, 2) == float(parallel.idle_share(16, 64, 2))
    True
    """
    m = _check.integer("microbatches", microbatches)
    bub = bubble(schedule, pp, virtual_stages, f, b, w)
    f, b, w = _times(f, b, w)
    return bub / (m * (f + b) + bub)


def inflight_microbatches(schedule, pp, virtual_stages=1) -> float:
    """Micro-batches whose activations the first stage holds at its peak: p for 1F1B and ZB-H1,
    p(1 + (p − 1)/(p·v)) for the interleaved schedule (Korthikanti et al. 2022, Sec. 4.2.3), 2p − 1 for ZB-H2
    (Qi et al. 2024, Sec. 3).

    >>> [inflight_microbatches(s, 16, 2) for s in SCHEDULES]
    [16, 23.5, 16, 31]
    """
    s = _check.choice("schedule", schedule, SCHEDULES)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    if s == "interleaved":
        return p * (1 + (p - 1) / (p * v))
    return 2 * p - 1 if s == "ZB-H2" else p
