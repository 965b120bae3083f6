"""Searching every parallel plan: which TP × PP × DP cut, micro-batch size, ZeRO stage and recomputation choice is
fastest for a model on a cluster, among those that fit in memory.

The search enumerates every valid plan (:func:`chipchain.parallel.validate`'s rules) and prices all of them at once
with NumPy arrays: it re-derives the formulas of :func:`chipchain.memory.ledger` and
:func:`chipchain.parallel.analyze` element-wise, sharing their tables (``memory.RECIPES``), peak, FLOP convention
and exposed communication (:func:`chipchain.comms.exposed_seconds`); the tests check that the plans it returns
agree with the scalar model for every recipe.

>>> best = search("175B", "A100", 1024)[0]
>>> str(best.plan), best.plan.recompute
('TP 8 × PP 16 × DP 8, ZeRO-1, 192 micro-batches of 1', 'selective')
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ._lazy import np

from . import _check, activations, comms, memory, models, parallel, systems, units
from . import compute as compute_mod

__all__ = ["Candidate", "search"]


@dataclass(frozen=True)
class Candidate:
    """One plan found by :func:`search`, with its memory per GPU (bytes) and estimated step time (s)."""

    plan: parallel.Plan
    memory_bytes: float
    step_seconds: float


def _divisors(n: int) -> list:
    """Divisors of n in increasing order, in O(√n) (so a 10⁶-GPU search answers within a second)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def search(model, cluster="A100", n_gpus=None, batch=1536, *, recipe="mixed-adam", mfu=0.5, dp_overlap=0.0,
           reserve=0.0, microbatch_sizes=(1, 2, 4, 8), top=10, distinct_shapes=False, dtype="bf16",
           peak_flops=None) -> list:
    """Every valid plan for ``model`` on ``cluster`` (a :class:`~chipchain.systems.Cluster`, or a node or accelerator
    name with ``n_gpus``) at ``batch`` sequences per step, minus those that do not fit in memory, ranked by the
    estimated step time of :func:`chipchain.parallel.analyze` at the same ``dtype`` / ``peak_flops`` (fastest
    first); ``top`` are returned as
    :class:`Candidate` records.

    Enumerated: TP dividing the heads and the GPU count; PP dividing the layers and the rest; DP the remainder,
    dividing the batch; micro-batch size; ZeRO 0–3 (0–1 with PP, as DeepSpeed allows); recomputation
    none/selective/full; sequence parallelism on or off (with TP). No interleaving, no EP. Ties in step time are
    broken by lower memory; with ``distinct_shapes=True`` only the best plan of each (TP, PP, DP, micro-batch size)
    shape is kept. When no plan qualifies it raises ``ValueError`` saying why: no split divides the model and
    batch, or none of the valid plans fits (with the smallest one's memory).

    >>> [str(c.plan) for c in search("70B", "H100", 64, top=2)]
    ['TP 2 × PP 8 × DP 4, ZeRO-1, 384 micro-batches of 1', 'TP 2 × PP 16 × DP 2, ZeRO-1, 768 micro-batches of 1']
    >>> search("175B", "A100", 8)                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no plan for GPT-3-175B on 8 × A100-SXM-80GB: none of the 552 valid plans fits in 80 GiB (85.9 GB) per GPU; the smallest needs ... (TP 8 × PP 1 × DP 1, ZeRO-0, full recomputation)
    """
    m = models.get(model)
    c = systems.cluster(cluster, n_gpus)
    n, g = c.n_gpus, c.gpus_per_node
    B = _check.integer("batch", batch)
    k_top = _check.integer("top", top)
    acc = c.accelerator
    r = memory.recipe(recipe)
    mfu = _check.fraction("mfu", mfu)
    ov = _check.probability("dp_overlap", dp_overlap)
    cap = memory.usable_capacity(acc, reserve)
    intra, inter = c.intra, c.inter
    peak = acc.peak_flops(dtype) if peak_flops is None else _check.positive("peak_flops", peak_flops)
    bs = sorted({_check.integer("microbatch_sizes", b) for b in microbatch_sizes})

    rows = []
    for tp in _divisors(n):
        if m.heads % tp:
            continue
        for pp in _divisors(n // tp):
            if m.layers % pp:
                continue
            dp = n // (tp * pp)
            if B % dp:
                continue
            for b in bs:
                if (B // dp) % b:
                    continue
                for zero in (range(2) if pp > 1 else range(4)):
                    for rc in range(3):
                        for sp in ((0, 1) if tp > 1 else (0,)):
                            rows.append((tp, pp, dp, b, zero, rc, sp))
    if not rows:
        raise ValueError(f"no plan for {m.name} on {n:,} × {acc.name}: no TP × PP × DP split of {n:,} GPUs has TP "
                         f"dividing its {m.heads} heads, PP its {m.layers} layers and DP the {B:,}-sequence batch "
                         f"(micro-batch sizes {', '.join(map(str, bs))})")
    a = np.array(rows, dtype=np.int64)
    tp, pp, dp, b, zero, rc, sp = (a[:, i].astype(float) for i in range(7))
    mb = (B / dp) / b                                   # micro-batches per replica
    # memory: states of Ψ/(t·p) sharded by ZeRO, plus first-stage activations (memory.ledger)
    psi = m.params / (tp * pp)
    states = (r.weights * psi / np.where(zero >= 3, dp, 1) + r.gradients * psi / np.where(zero >= 2, dp, 1)
              + (r.master + r.moments) * psi / np.where(zero >= 1, dp, 1))
    sbh = float(m.seq) * b * m.hidden
    linear = np.where(sp == 1, 34.0 / tp, 10.0 + 24.0 / tp)
    scores = np.where(rc == 0, 5.0 * m.heads * m.seq / (m.hidden * tp), 0.0)
    per_layer = np.where(rc == 2, 2.0 * sbh / np.where(sp == 1, tp, 1.0), sbh * (linear + scores))
    acts = per_layer * (m.layers / pp) * np.minimum(pp, mb) * r.activation_element / 2
    total = states + acts
    ok = total <= cap
    # time: compute with the bubble, plus TP, PP and DP traffic (communication())
    k = compute_mod.FLOPS_PER_PARAM_TOKEN + np.where(rc == 2, 2.0, 0.0)       # full recompute: one more forward
    compute = compute_mod.training_flops(m.params, B * m.seq, 1.0) * k / (n * peak * mfu)
    bubble = parallel.bubble_fraction(pp, mb)

    def link_of(size, stride):
        span = size * stride
        inside = (span <= g) & (g % span == 0)
        return (np.where(inside, intra.bandwidth_per_direction, inter.bandwidth_per_direction),
                np.where(inside, intra.latency, inter.latency))

    act = 2.0 * b * m.seq * m.hidden
    bw, lat = link_of(tp, 1.0)
    tp_t = np.where(tp > 1, np.where(rc == 2, 6, 4) * (m.layers / pp) * mb
                    * (2 * (tp - 1) / tp * act / bw + 2 * (tp - 1) * lat), 0.0)
    bw, lat = link_of(pp, tp)
    pp_t = np.where(pp > 1, 2 * mb * (lat + act / tp / bw), 0.0)
    bw, lat = link_of(dp, tp * pp)
    grads = r.gradients * psi
    one = (dp - 1) / dp * grads / bw + (dp - 1) * lat
    dp_t = np.where(dp > 1, np.where(zero == 3, 3 * one, 2 * one), 0.0)
    step = compute * (1 + bubble) + tp_t + pp_t + comms.exposed_seconds(dp_t, ov, compute)
    idx = np.flatnonzero(ok)
    if not idx.size:
        i = int(np.argmin(total))
        raise ValueError(f"no plan for {m.name} on {n:,} × {acc.name}: none of the {len(rows):,} valid plans fits "
                         f"in {units.fmt_capacity(cap)} per GPU; the smallest needs {units.fmt_capacity(total[i])} "
                         f"(TP {int(a[i, 0])} × PP {int(a[i, 1])} × DP {int(a[i, 2])}, ZeRO-{int(a[i, 4])}, "
                         f"{activations.RECOMPUTE[int(a[i, 5])]} recomputation)")
    order = idx[np.lexsort((total[idx], step[idx]))]
    if distinct_shapes:
        seen, keep = set(), []
        for i in order:
            key = (a[i, 0], a[i, 1], a[i, 3])
            if key not in seen:
                seen.add(key)
                keep.append(i)
        order = keep
    order = order[:k_top]
    names = activations.RECOMPUTE
    return [Candidate(parallel.Plan(tp=int(a[i, 0]), pp=int(a[i, 1]), dp=int(a[i, 2]), zero=int(a[i, 4]),
                           microbatches=int(mb[i]), microbatch=int(a[i, 3]),
                           sequence_parallel=bool(a[i, 6]), recompute=names[int(a[i, 5])]),
                      float(total[i]), float(step[i])) for i in order]


