"""Pipeline schedules run event by event: which stage runs which micro-batch's forward (F), backward (B) or
weight-gradient (W) pass at each moment, and how long each stage sits idle.

:func:`simulate` lays out one training step of a schedule of :mod:`chipchain.schedules` on ``pp`` stages with
``microbatches`` micro-batches. Every pass waits for what it needs — F of micro-batch j on stage s for F of j on stage
s − 1; B of j on stage s for B of j on stage s + 1 and for its own F; W of j for its own B — and for its stage to be
free; communication takes no time. The passes each stage runs, and their order, are the schedule:

* **GPipe**: all m forwards, then all m backwards (Huang et al. 2019).
* **1F1B**: stage s runs min(p − s − 1, m) forwards, then alternates one forward and one backward, then drains
  (Narayanan et al. 2021, Sec. 2.2.1).
* **interleaved**: each stage holds v model chunks (chunk k of the v·p is on stage k mod p), micro-batches go in
  groups of p, with Megatron-LM's warm-up of 2(p − s − 1) + (v − 1)p chunk-forwards; needs m a multiple of p
  (Narayanan et al. 2021, Sec. 2.2.2). A chunk's passes take F/v and B/v.
* **ZB-H1**: B is split into the input-gradient pass (B − W) and W. Each stage picks, whenever it is free, a ready
  input-gradient pass first, else a forward while fewer than p − s micro-batches await their input gradients (1F1B's
  limit), else a pending W: the weight-gradient passes fill what would be bubble (Qi et al. 2024, Sec. 3, draw
  ZB-H1 by hand; this greedy rule reproduces its bubble).
* **DualPipe**: the order of DeepSeek's open-source ``DualPipe.step`` (deepseek-ai/DualPipe, ``dualpipe.py``,
  its eight steps): half the micro-batches enter at stage 0, half at stage p − 1; each stage holds a stage of both
  directions (two parameter copies); a forward of one direction and a full backward of the other run as one
  overlapped F&B block of F + B (overlap hides communication, which is not modelled, not compute); the zero-bubble
  split (B − W, then W later) where the code enables it. Needs an even p and m ≥ 2p, m even.

**Where simulation and closed form agree, and where they differ.** The simulated idle share equals
:func:`chipchain.schedules.idle_share` exactly for GPipe, 1F1B and the interleaved schedule, for any m, F and B (the
closed forms are exact for these dependency graphs when communication is free). ZB-H1's (p − 1)(F + B − 2W) is
Qi et al.'s figure for m ≥ p with W ≤ F: the simulation equals it at F : B : W = 1 : 2 : 1 and never exceeds it
there (with W < B − F it drains a little faster); with m < p, or W > F, the pipeline cannot fill and the
simulation idles more than the expression says. DualPipe's (p/2 − 1)(F&B + B − 3W), F&B = F + B, is what the code's
order gives at 1 : 2 : 1, exactly; at other ratios the fixed order of the code (written for 1 : 2 : 1 blocks) idles
more or less than the expression, which assumes every block fits its slot. Tests check each statement.

>>> t = simulate("1F1B", 4, 8)
>>> t.makespan, round(t.idle_share, 6)
(33.0, 0.272727)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from . import _check, schedules

__all__ = ["DRAWN", "Op", "SimulatedStep", "simulate"]

#: the schedules :func:`simulate` runs (ZB-H2 needs a hand-placed schedule the greedy rule does not find)
DRAWN = ("GPipe", "1F1B", "interleaved", "ZB-H1", "DualPipe")


@dataclass(frozen=True)
class Op:
    """One pass on one pipeline rank (stage ``rank`` + 1 of ``pp``): ``kind`` "F", "B" (full backward), "B-in"
    (input gradients only), "W" (weight gradients) or "F&B" (a forward and a backward run overlapped); ``microbatch`` (for F&B, the forward's);
    ``chunk`` the model chunk (interleaved) or direction (DualPipe: 0 enters at stage 0, 1 at stage p − 1);
    ``start`` and ``end`` in the units of F."""

    rank: int
    kind: str
    microbatch: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class SimulatedStep:
    """One step of a schedule, simulated: every pass (:class:`Op`), the step's length and its idle time."""

    schedule: str
    pp: int
    microbatches: int
    virtual_stages: int
    ops: tuple
    makespan: float             #: time from the first pass's start to the last pass's end (units of F)
    busy: float                 #: compute time per stage, m·(F + B) (units of F)

    @property
    def bubble(self) -> float:
        """Idle time per stage: makespan − m(F + B) (every stage does the same work)."""
        return self.makespan - self.busy

    @property
    def idle_share(self) -> float:
        """Share of the step the stages sit idle: bubble / makespan."""
        return self.bubble / self.makespan

    def idle_until(self, t) -> float:
        """Share of stage-time idle between 0 and ``t`` (units of F), for a chart revealed up to ``t``."""
        t = _check.positive("t", t)
        work = sum(max(0.0, min(o.end, t) - o.start) for o in self.ops)
        return 1 - work / (self.pp * t)


# --- building each stage's order ---------------------------------------------------------------------------------

def _order_1f1b(p, m, s):
    warm = min(p - s - 1, m)
    out = [("F", 0, j, s) for j in range(warm)]
    for j in range(m - warm):
        out += [("F", 0, warm + j, s), ("B", 0, j, s)]
    return out + [("B", 0, j, s) for j in range(m - warm, m)]


def _order_interleaved(p, m, v, s):
    n = m * v

    def unit(kind, k):
        group = k // p
        chunk = group % v if kind == "F" else v - 1 - group % v
        return (kind, 0, (k // (p * v)) * p + k % p, chunk * p + s)

    warm = min((p - s - 1) * 2 + (v - 1) * p, n)
    out = [unit("F", k) for k in range(warm)]
    for k in range(n - warm):
        out += [unit("F", warm + k), unit("B", k)]
    return out + [unit("B", k) for k in range(n - warm, n)]


def _order_dualpipe(p, m, s):
    """DualPipe.step's eight steps for rank ``s`` (deepseek-ai/DualPipe, dualpipe.py), as (kind, units) blocks."""
    half, hr, hm = p // 2, min(s, p - 1 - s), m // 2
    middle = s in (half - 1, half)
    direction = (lambda ph: ph) if s < half else (lambda ph: 1 - ph)
    pos = {0: s, 1: p - 1 - s}                      # the stage's position in each direction's pipeline
    nf, nb, wq, out = [0, 0], [0, 0], [], []

    def f(ph):
        d = direction(ph)
        nf[d] += 1
        return ("F", d, nf[d] - 1, pos[d])

    def b(ph, zb=False):
        d = direction(ph)
        nb[d] += 1
        if zb:
            wq.append(("W", d, nb[d] - 1, pos[d]))
            return ("B-in", d, nb[d] - 1, pos[d])
        return ("B", d, nb[d] - 1, pos[d])

    for _ in range((half - hr - 1) * 2):                                   # step 1: nF0
        out.append([f(0)])
    for _ in range(hr + 1):                                                # step 2: nF0F1
        out += [[f(0)], [f(1)]]
    for _ in range(half - hr - 1):                                         # step 3: nB1W1F1
        out += [[b(1, True)], [wq.pop(0)], [f(1)]]
    for i in range(hm - p + hr + 1):                                       # step 4: nF0B1F1B0
        if i == 0 and middle:
            out += [[f(0)], [b(1)]]
        else:
            out.append([f(0), b(1)])
        out.append([f(1), b(0)])
    for _ in range(half - hr - 1):                                         # step 5: nB1F1B0
        out += [[b(1)], [f(1), b(0)]]
    zb = False
    for i in range(hr + 1):                                                # step 6: nB1B0
        if i == (hr + 1) // 2 and hr % 2 == 1:
            zb = True
        out.append([b(1, zb)])
        if i == (hr + 1) // 2 and hr % 2 == 0:
            zb = True
        out.append([b(0, zb)])
    for _ in range(half - hr - 1):                                         # step 7: nWB0
        out += [[wq.pop(0)], [b(0, True)]]
    for _ in range(hr + 1):                                                # step 8: nW
        out.append([wq.pop(0)])
    return out


# --- running them ------------------------------------------------------------------------------------------------

def _deps(unit, length):
    kind, d, j, c = unit
    if kind == "F":
        return [("F", d, j, c - 1)] if c > 0 else []
    if kind in ("B", "B-in"):
        return ([("B", d, j, c + 1)] if c < length - 1 else []) + [("F", d, j, c)]
    return [("B", d, j, c)]


def _key(unit):
    kind, d, j, c = unit
    return ("B" if kind == "B-in" else kind, d, j, c)


def _run_fixed(orders, length, dur, chunk_of):
    """Run each stage's fixed order: a block starts when its stage is free and its inputs are done."""
    done, ops = {}, []
    free = [0.0] * len(orders)
    ptr = [0] * len(orders)
    while any(ptr[s] < len(o) for s, o in enumerate(orders)):
        moved = False
        for s, order in enumerate(orders):
            while ptr[s] < len(order):
                block = order[ptr[s]]
                deps = [k for u in block for k in _deps(u, length)]
                if any(k not in done for k in deps):
                    break
                start = max([free[s]] + [done[k] for k in deps])
                end = start + sum(dur[u[0]] for u in block)
                for u in block:
                    done[_key(u)] = end
                kind = "F&B" if len(block) > 1 else block[0][0]
                ops.append(Op(s, kind, block[0][2], chunk_of(block[0]), start, end))
                free[s], ptr[s], moved = end, ptr[s] + 1, True
        if not moved:
            raise RuntimeError("pipeline schedule deadlocked (a bug in its order)")
    return ops


def _run_zb_h1(p, m, dur):
    """ZB-H1 by the greedy rule: input-gradient pass first, then a forward within 1F1B's memory, then a W."""
    done, ops = {}, []
    free = [0.0] * p
    nf, nb, nw = [0] * p, [0] * p, [0] * p
    total = 3 * m
    def ready(s, t):
        cands = []
        if nb[s] < nf[s]:
            cands.append(("B-in", 0, nb[s], s))
        if nf[s] < m and nf[s] - nb[s] < p - s:
            cands.append(("F", 0, nf[s], s))
        if nw[s] < nb[s]:
            cands.append(("W", 0, nw[s], s))
        return [u for u in cands if all(k in done and done[k] <= t for k in _deps(u, p))]

    while True:
        left = [x for x in range(p) if nf[x] + nb[x] + nw[x] < total]
        if not left:
            return ops
        t = min(free[x] for x in left)
        now = [x for x in left if free[x] == t]
        pick = next(((x, r[0]) for x in now for r in [ready(x, t)] if r), None)
        if pick is None:                               # every stage free at t waits for the next event
            later = [e for e in done.values() if e > t] + [free[x] for x in left if free[x] > t]
            if not later:
                raise RuntimeError("pipeline schedule deadlocked (a bug in its rule)")
            for x in now:
                free[x] = min(later)
            continue
        s, u = pick
        end = t + dur[u[0]]
        done[_key(u)] = end
        ops.append(Op(s, u[0], u[2], 0, t, end))
        free[s] = end
        if u[0] == "F":
            nf[s] += 1
        elif u[0] == "W":
            nw[s] += 1
        else:
            nb[s] += 1


@functools.lru_cache(maxsize=256)
def _simulate(s, p, m, v, f, b, w):
    if s == "interleaved":
        if m % p:
            raise ValueError(f"microbatches ({m}) must be a multiple of pp ({p}) for the interleaved schedule "
                             "(micro-batches go through the chunks in groups of pp)")
        dur = {"F": f / v, "B": b / v}
        ops = _run_fixed([[[u] for u in _order_interleaved(p, m, v, x)] for x in range(p)], p * v, dur,
                         lambda u: u[3] // p)
    elif s == "ZB-H1":
        ops = _run_zb_h1(p, m, {"F": f, "B-in": b - w, "W": w})
    elif s == "DualPipe":
        if p % 2 or m % 2 or m < 2 * p:
            raise ValueError(f"DualPipe needs an even number of stages and an even number of micro-batches, at least "
                             f"twice the stages (it feeds half from each end); got pp = {p}, microbatches = {m}")
        ops = _run_fixed([_order_dualpipe(p, m, x) for x in range(p)], p, {"F": f, "B": b, "B-in": b - w, "W": w},
                         lambda u: u[1])
    else:
        order = _order_1f1b if s == "1F1B" else (lambda p_, m_, x: [("F", 0, j, x) for j in range(m_)]
                                                 + [("B", 0, j, x) for j in range(m_)])
        ops = _run_fixed([[[u] for u in order(p, m, x)] for x in range(p)], p, {"F": f, "B": b}, lambda u: 0)
    ops = sorted(ops, key=lambda o: (o.rank, o.start))
    makespan = max(o.end for o in ops) - min(o.start for o in ops)
    return SimulatedStep(s, p, m, v, tuple(ops), makespan, m * (f + b))


def simulate(schedule, pp, microbatches, virtual_stages=2, f=1.0, b=2.0, w=1.0) -> SimulatedStep:
    """One step of ``schedule`` (one of :data:`DRAWN`, any name :func:`chipchain.schedules.canonical` accepts) on
    ``pp`` stages with ``microbatches`` micro-batches, pass by pass (the module docstring gives each order and the
    dependencies). ``virtual_stages`` v is used by the interleaved schedule only; F, B, W (``f``, ``b``, ``w``) are
    the times of a stage's forward, full backward and weight-gradient passes. Times in units of F (or of ``f``).

    >>> [round(simulate(s, 4, 8).idle_share, 4) for s in DRAWN]
    [0.2727, 0.2727, 0.1579, 0.1111, 0.0769]
    """
    s = _check.choice("schedule", schedules.canonical(schedule), DRAWN)
    p = _check.integer("pp", pp, minimum=2)
    m = _check.integer("microbatches", microbatches)
    v = _check.integer("virtual_stages", virtual_stages) if s == "interleaved" else 1
    f, b, w = _check.positive("f", f), _check.positive("b", b), _check.nonnegative("w", w)
    if w > b:
        raise ValueError(f"w ({w:g}) is part of the backward chunk and cannot exceed b ({b:g})")
    return _simulate(s, p, m, v, f, b, w)
