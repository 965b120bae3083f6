"""Choosing a parallel plan: one plan analysed (:func:`analyze`: memory, placement, traffic, the predicted step),
and every plan searched (:func:`search`: which TP × PP × DP cut, micro-batch size, ZeRO stage and recomputation
choice is fastest among those that fit in memory).

Both price a plan with the book's one step model at its fitted efficiency (:func:`chipchain.predictor.predict_plan`,
which is :func:`chipchain.steptime.step_time`) and its one memory ledger (:func:`chipchain.memory.ledger`): the
search enumerates, the model prices.

>>> best = search("175B", "A100", 1024, framework="megatron-2022")[0]
>>> str(best.plan), best.plan.recompute
('TP 4 × PP 4 × DP 64, ZeRO-1, 24 micro-batches of 1', 'selective')
"""
from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

from . import _check, activations, frameworks, memory, models, parallel, predictor, steptime, systems, units

__all__ = ["Analysis", "analyze", "Candidate", "search"]


@dataclass(frozen=True)
class Analysis:
    """Everything the book says about one plan on one cluster: memory per GPU (a :class:`~chipchain.memory.Ledger`)
    and whether it fits, placement, traffic, bubble, the predicted step (a :class:`~chipchain.steptime.StepTime`)
    and its parts, and warnings."""

    plan: parallel.Plan
    ledger: object
    fit: object
    placement: parallel.Placement
    comm: tuple
    bubble: float               #: bubble time / ideal time, (p − 1)/(v·m)
    idle: float
    step: steptime.StepTime
    warnings: tuple

    @property
    def step_seconds(self) -> float:
        """Predicted seconds per step (the step model's total)."""
        return self.step.seconds

    @property
    def compute_seconds(self) -> float:
        """Seconds of model computation per step on the busiest GPU (no bubble, no recomputation, no traffic)."""
        return self.step.compute


def analyze(plan, model, cluster="A100", *, n_gpus=None, recipe="mixed-adam", dtype="bf16",
            framework="megatron-core", schedule="1F1B", efficiency=None, reserve=0.0) -> Analysis:
    """Validate ``plan`` on ``cluster`` (:func:`chipchain.parallel.validate`) and give its memory per GPU, traffic
    and predicted step (:func:`chipchain.predictor.predict_plan`; ``efficiency`` None → the fitted η). A plan that does
    not fit is still analysed (``fit.fits`` is False).

    >>> a = analyze(parallel.Plan(tp=8, pp=16, dp=8, zero=1, microbatches=192, sequence_parallel=True,
    ...             recompute="selective"), "175B", "A100", n_gpus=1024)
    >>> round(a.ledger.total / 1e9, 1), a.fit.fits, round(a.bubble, 3), round(a.step_seconds, 1)
    (17.8, True, 0.078, 16.3)
    """
    if not isinstance(plan, parallel.Plan):
        raise ValueError(f"plan must be a chipchain.parallel.Plan, got {plan!r}")
    m = models.get(model)
    c = systems.cluster(cluster, plan.n_gpus if n_gpus is None else n_gpus)
    warnings = parallel.validate(plan, m, c)
    fw = frameworks.get(framework)
    step = predictor.predict_plan(plan, m, c, dtype=dtype, framework=fw.name, schedule=schedule, recipe=recipe,
                             efficiency=efficiency, check_memory=False)
    L = step.ledger                                  # the step's own ledger: one memory count per plan
    return Analysis(plan, L, L.fits(c.accelerator, reserve), parallel.placement(plan, c, fw.rank_order), step.comm,
                    parallel.bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages),
                    parallel.idle_share(plan.pp, plan.microbatches, plan.virtual_stages), step, warnings)


@dataclass(frozen=True)
class Candidate:
    """One plan found by :func:`search`, with its memory per GPU (bytes) and predicted step time (s)."""

    plan: parallel.Plan
    memory_bytes: float
    step_seconds: float


def _divisors(n: int) -> list:
    """Divisors of n in increasing order, in O(√n) (so a 10⁶-GPU search answers within a second)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return small + [n // d for d in reversed(small) if d * d != n]


def search(model, cluster="A100", n_gpus=None, batch=1536, *, recipe="mixed-adam", dtype="bf16",
           framework="megatron-core", efficiency=None, reserve=0.0, microbatch_sizes=(1, 2, 4, 8), top=10,
           distinct_shapes=False) -> list:
    """Every valid plan for ``model`` on ``cluster`` (a :class:`~chipchain.systems.Cluster`, or a node or accelerator
    name with ``n_gpus``) at ``batch`` sequences per step, minus those that do not fit in memory, ranked by the
    predicted step time (:func:`chipchain.predictor.predict_plan` at ``dtype`` in ``framework``; fastest first); ``top``
    are returned as :class:`Candidate` records.

    Enumerated: TP dividing the heads and the GPU count; PP dividing the layers and the rest; DP the remainder,
    dividing the batch; micro-batch size; ZeRO 0–3 (0–1 with PP, as DeepSpeed allows); recomputation
    none/selective/full; sequence parallelism on or off (with TP); for a mixture of experts, expert parallelism
    over every divisor of DP that divides the experts. No interleaving, no CP. ZeRO-0, 1 and 2
    move the same bytes and sequence parallelism the same traffic, so each is priced once and kept at its least
    memory. Ties in step time are broken by lower memory; with ``distinct_shapes=True`` only the best plan of each
    (TP, PP, micro-batch size) shape is kept. When no plan qualifies it raises ``ValueError`` saying why.

    >>> [str(c.plan) for c in search("70B", "H100", 64, top=1)]
    ['TP 2 × PP 1 × DP 32, ZeRO-3, 48 micro-batches of 1']
    >>> search("175B", "A100", 8)                                # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: no plan for GPT-3-175B on 8 × A100-SXM-80GB: none of the 552 valid plans fits in 80 GiB = 85.9 GB per GPU; the smallest needs ... (TP 8 × PP 1 × DP 1, ZeRO-2, full recomputation)
    """
    m = models.get(model)
    c = systems.cluster(cluster, n_gpus)
    key = (m, c.node.name, c.n_gpus, batch, recipe, dtype, framework, efficiency, reserve, tuple(microbatch_sizes),
           top, distinct_shapes)
    try:
        if key in _SEARCHED:        # a frozen answer for frozen inputs: explorers and walkthroughs ask again
            return list(_SEARCHED[key])
    except TypeError:               # an unhashable input (a custom record with a list): no memo
        key = None
    found = _search(m, c, batch, recipe, dtype, framework, efficiency, reserve, microbatch_sizes, top,
                    distinct_shapes)
    if key is not None:
        if len(_SEARCHED) > 512:
            _SEARCHED.clear()
        _SEARCHED[key] = tuple(found)
    return found


_SEARCHED: dict = {}


def _search(m, c, batch, recipe, dtype, framework, efficiency, reserve, microbatch_sizes, top, distinct_shapes):
    n = c.n_gpus
    B = _check.integer("batch", batch)
    k_top = _check.integer("top", top)
    acc = c.accelerator
    memory.recipe(recipe)
    fw = frameworks.get(framework)
    flash = fw.attention == "flash"
    fp8 = dtype.startswith("fp8")
    cap = memory.usable_capacity(acc, reserve)
    bs = sorted({_check.integer("microbatch_sizes", b) for b in microbatch_sizes})
    eta = {}
    valid, candidates = 0, []
    for tp in _divisors(n):
        if m.heads % tp or m.hidden % tp:
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
                sps = (False, True) if tp > 1 else (False,)
                zeros = range(2) if pp > 1 else range(4)
                eps = [e for e in _divisors(dp) if m.experts % e == 0] if m.is_moe else [1]
                for rc, ep in ((r, e) for r in activations.RECOMPUTE for e in eps):
                    valid += len(sps) * len(zeros)
                    # within one traffic shape memory only falls with the ZeRO stage and with sequence
                    # parallelism, so the least-memory variant of each shape stands for it
                    for zero in sorted({max(z for z in zeros if z < 3)} | ({3} if 3 in zeros else set())):
                        candidates.append((tp, pp, dp, b, zero, rc, sps[-1], ep))
    if not valid:
        raise ValueError(f"no plan for {m.name} on {n:,} × {acc.name}: no TP × PP × DP split of {n:,} GPUs has TP "
                         f"dividing its {m.heads} heads, PP its {m.layers} layers and DP the {B:,}-sequence batch "
                         f"(micro-batch sizes {', '.join(map(str, bs))})")
    # price in order of a lower bound (the average GPU's computation with its bubble, which the step model never
    # undercuts), and stop once the bound passes the slowest of the best ``top`` (or ``top`` distinct shapes);
    # memory is judged on the way, and the traffic no computation can hide (steptime.exposed_floor) before a plan is
    # priced, so plans either bound already rules out are never costed
    peak = acc.peak_flops(dtype)
    per_token = {rc: steptime.executed_flops_per_token(m, recompute=rc, framework=fw.name)
                 for rc in activations.RECOMPUTE}
    order = []
    for shape in candidates:
        tp, pp, dp, b, zero, rc, sp, ep = shape
        if tp not in eta:            # the predictor's η: dense GEMMs at their width, routed experts at theirs
            if efficiency is None:
                kw = dict(dtype=dtype, framework=fw.name, moe=predictor.model_kind(m))
                fe = predictor.expert_width(m)
                eta[tp] = (predictor.matmul_efficiency(acc, predictor.dense_width(m, tp, acc, dtype), **kw),
                           None if fe is None else predictor.matmul_efficiency(acc, fe, **kw))
            else:
                eta[tp] = (_check.fraction("efficiency", efficiency), None)
        work = B * m.seq * per_token[rc] / (n * peak * max(e for e in eta[tp] if e is not None))
        order.append((work * (1 + parallel.bubble_fraction(pp, B // (dp * b))), shape))
    order.sort(key=lambda x: x[0])
    priced, shapes, smallest, i = [], {}, None, 0
    while i < len(order):
        bound = order[i][0]
        if distinct_shapes:
            kth = sorted(shapes.values())[k_top - 1] if len(shapes) >= k_top else None
        else:
            kth = priced[k_top - 1][0] if len(priced) >= k_top else None
        if kth is not None and bound > kth:
            break
        j = i
        while j < len(order) and order[j][0] == bound:      # equal bounds: least memory first
            j += 1
        group = []
        for _, (tp, pp, dp, b, zero, rc, sp, ep) in order[i:j]:
            tot = memory.ledger(m, recipe, microbatch=b, tp=tp, pp=pp, dp=dp, zero=zero, ep=ep, sequence_parallel=sp,
                                recompute=rc, microbatches=B // (dp * b), flash=flash, fp8=fp8).total
            if smallest is None or tot < smallest[0]:
                smallest = (tot, (tp, pp, dp, b, zero, rc, sp, ep))
            if tot <= cap:
                group.append((tot, (tp, pp, dp, b, zero, rc, sp, ep)))
        i = j
        for tot, (tp, pp, dp, b, zero, rc, sp, ep) in sorted(group, key=lambda x: x[0]):
            plan = parallel.Plan(tp=tp, pp=pp, dp=dp, zero=zero, microbatches=B // (dp * b), microbatch=b,
                                 sequence_parallel=sp, recompute=rc, ep=ep)
            if kth is not None and bound + steptime.exposed_floor(plan, m, c, recipe=recipe, framework=fw) > kth:
                continue                 # its traffic alone puts it behind the best ``top``: not priced
            s = steptime.step_time(plan, m, c, efficiency=eta[tp][0], expert_efficiency=eta[tp][1], dtype=dtype,
                                   recipe=recipe, framework=fw.name)
            bisect.insort(priced, (s.seconds, tot, len(priced), plan))
            shapes[(tp, pp, b)] = min(shapes.get((tp, pp, b), s.seconds), s.seconds)
    if not priced:
        tot, (tp, pp, dp, b, zero, rc, sp, ep) = smallest
        raise ValueError(f"no plan for {m.name} on {n:,} × {acc.name}: none of the {valid:,} valid plans fits "
                         f"in {units.fmt_capacity(cap)} per GPU; the smallest needs {units.fmt_capacity(tot)} "
                         f"(TP {tp} × PP {pp} × DP {dp}, ZeRO-{zero}, {rc} recomputation)")
    priced = [(secs, tot, plan) for secs, tot, _, plan in priced]
    if distinct_shapes:
        seen, keep = set(), []
        for row in priced:
            key = (row[2].tp, row[2].pp, row[2].microbatch)
            if key not in seen:
                seen.add(key)
                keep.append(row)
        priced = keep
    return [Candidate(plan, float(tot), float(secs)) for secs, tot, plan in priced[:k_top]]
