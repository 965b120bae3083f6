"""Laying a model across many GPUs: a parallel plan, its validation and placement, bubbles and traffic (the step
time they add up to is :mod:`chipchain.steptime`).

A plan cuts the work four ways (Narayanan et al. 2021; Shoeybi et al. 2019; Huang et al. 2019; Rajbhandari et al.
2020): **tensor** parallelism (TP) splits each layer's matrices, **pipeline** parallelism (PP) gives each GPU a run
of layers, **data** parallelism (DP) gives each replica different sequences, and **expert** parallelism (EP) places a
mixture-of-experts model's experts on different GPUs. The degrees multiply to the GPU count. ZeRO shards the model
states over the data-parallel ranks.

Ranks are laid out TP innermost, then CP, then PP, then DP outermost (the order Llama 3 uses, and seed 000's
"8 × 16 × 8"): a group of ``size`` ranks ``stride`` apart stays inside one node when ``stride × size`` fits in the
node's GPU count. A model is any name or alias of :mod:`chipchain.models`; a cluster any node or accelerator name,
:class:`~chipchain.systems.Node` or :class:`~chipchain.systems.Cluster` (``"A100"`` is the DGX A100). This module
uses the pipeline-bubble formulas of :mod:`chipchain.schedules` (:func:`bubble_fraction`, :func:`idle_share`,
:func:`schedule_bubble` are its entry points here); the plan search is :mod:`chipchain.plans`, views
:mod:`chipchain.views.parallel`.

>>> p = Plan(tp=8, pp=16, dp=8, microbatches=64)
>>> p.n_gpus, round(bubble_fraction(16, 64), 4)
(1024, 0.2344)
>>> placement(p, "A100").tp.scope, placement(p, "A100").pp.link.name
('intra-node', 'IB-HDR')
"""
from __future__ import annotations

import math
from dataclasses import dataclass


from . import _check, activations, comms, links, memory, models, schedules, systems
from .units import fmt_percent

__all__ = ["Plan", "validate", "Group", "Placement", "placement", "bubble_fraction", "idle_share",
           "PIPELINE_SCHEDULES", "schedule_bubble", "CommRow", "communication", "zero_traffic_factor", "Analysis",
           "CP_VARIANTS", "stage_layers"]

#: how context-parallel ranks exchange keys and values: "all-gather" (Llama 3: gather K and V before attention,
#: reduce-scatter their gradients; Dubey et al. 2024 §3.3.2) or "ring" (ring attention: pass K/V blocks rank to rank,
#: overlapped with the attention of the block in hand; Liu et al. 2023)
CP_VARIANTS = ("all-gather", "ring")


@dataclass(frozen=True)
class Plan:
    """A parallel plan: degrees ``tp``, ``cp`` (context parallelism: the sequence split over ranks, exchanging keys
    and values by ``cp_variant`` "all-gather" — Llama 3's — or "ring"), ``pp``, ``dp``, ``ep``; ZeRO stage (3 is
    FSDP's full sharding); ``microbatches`` per step per replica, ``microbatch`` sequences each;
    ``virtual_stages`` (interleaved 1F1B chunks per GPU); sequence parallelism and the recomputation choice
    ("none", "selective", "full")."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    ep: int = 1
    cp: int = 1
    cp_variant: str = "all-gather"
    zero: int = 0
    microbatches: int = 1
    microbatch: int = 1
    virtual_stages: int = 1
    sequence_parallel: bool = False
    recompute: str = "none"

    def __post_init__(self):
        for f in ("tp", "pp", "dp", "ep", "cp", "microbatches", "microbatch", "virtual_stages"):
            object.__setattr__(self, f, _check.integer(f, getattr(self, f)))
        z = _check.integer("zero", self.zero, minimum=0)
        if z > 3:
            raise ValueError(f"zero must be a ZeRO stage 0, 1, 2 or 3, got {self.zero!r}")
        _check.flag("sequence_parallel", self.sequence_parallel)
        _check.choice("cp_variant", self.cp_variant, CP_VARIANTS)
        object.__setattr__(self, "recompute", _check.choice("recompute", self.recompute, activations.RECOMPUTE))

    @property
    def n_gpus(self) -> int:
        """tp × cp × pp × dp (expert parallelism reuses the data-parallel ranks)."""
        return self.tp * self.cp * self.pp * self.dp

    @property
    def batch(self) -> int:
        """Sequences per training step (the global batch): microbatch × microbatches × dp."""
        return self.microbatch * self.microbatches * self.dp

    def __str__(self) -> str:
        return (f"TP {self.tp}" + (f" × CP {self.cp}" if self.cp > 1 else "") + f" × PP {self.pp} × DP {self.dp}"
                + (f" × EP {self.ep}" if self.ep > 1 else "")
                + f", ZeRO-{self.zero}, {self.microbatches} micro-batches of {self.microbatch}")


def _cluster(cluster, n_gpus, plan) -> systems.Cluster:
    """``cluster`` as a Cluster of ``n_gpus`` (default: the plan's GPU count) unless it is one already."""
    if isinstance(cluster, systems.Cluster):
        return systems.cluster(cluster, n_gpus)
    return systems.cluster(cluster, plan.n_gpus if n_gpus is None else n_gpus)


def validate(plan: Plan, model, cluster="A100", *, n_gpus=None) -> tuple:
    """Check a plan against a model and a cluster; raise ``ValueError`` with the reason, or return warnings.

    ``cluster``: a :class:`~chipchain.systems.Cluster`, or a node or accelerator name with ``n_gpus`` (without it,
    the GPU count is not checked). Errors: tp × pp × dp ≠ the GPU count; TP not dividing the attention heads; PP ×
    virtual stages not dividing the layers; interleaving without pipelining or with micro-batches not a multiple of
    PP (Megatron-LM's requirement); EP > 1 on a dense model, EP not dividing the experts or the data-parallel degree
    (expert-parallel groups are carved out of the data-parallel ranks). Warnings: TP crossing nodes; fewer
    micro-batches than stages; ZeRO-2/3 combined with PP (DeepSpeed does not support it); ZeRO with DP = 1;
    sequence parallelism without TP.

    >>> validate(Plan(tp=8, pp=16, dp=8, microbatches=64), "GPT-3-175B", "A100", n_gpus=1024)
    ()
    >>> validate(Plan(tp=16, pp=8, dp=8, microbatches=64), "175B")[0]
    'TP = 16 spans 2 nodes of 8 GPUs: its all-reduces, four per layer per micro-batch, leave NVLink'
    >>> validate(Plan(tp=8, pp=16, dp=4), "175B", systems.cluster("A100", 1024))
    Traceback (most recent call last):
    ...
    ValueError: tp × pp × dp = 8 × 16 × 4 = 512, but the cluster has 1024 GPUs
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    m = models.get(model)
    c = _cluster(cluster, n_gpus, plan)
    g = c.gpus_per_node
    if plan.n_gpus != c.n_gpus:
        cp = f" × cp {plan.cp}" if plan.cp > 1 else ""
        raise ValueError(f"tp{' × cp' if cp else ''} × pp × dp = {plan.tp}{cp.replace(' cp', '')} × {plan.pp} × "
                         f"{plan.dp} = {plan.n_gpus}, but the cluster has {c.n_gpus} GPUs")
    activations.check_split(plan.tp, m.heads, m.hidden, m.name)  # the one tp-split rule (and its message)
    if plan.pp * plan.virtual_stages > m.layers:
        raise ValueError(f"pp × virtual_stages = {plan.pp} × {plan.virtual_stages} exceeds the {m.layers} "
                         f"layers of {m.name}: every stage needs at least one layer")
    if m.seq % (2 * plan.cp) and plan.cp > 1:
        raise ValueError(f"cp = {plan.cp}: 2 × cp must divide the sequence length {m.seq} (each rank takes two "
                         "chunks, one early and one late, to balance the causal mask)")
    if plan.virtual_stages > 1 and plan.pp == 1:
        raise ValueError("virtual_stages > 1 (interleaving) needs pipeline parallelism (pp > 1)")
    if plan.virtual_stages > 1 and plan.microbatches % plan.pp:
        raise ValueError(f"with interleaving, microbatches ({plan.microbatches}) must be a multiple of pp "
                         f"({plan.pp})")
    if plan.ep > 1:
        if not m.experts:
            raise ValueError(f"ep = {plan.ep} needs a mixture-of-experts model; {m.name} is dense")
        if m.experts % plan.ep:
            raise ValueError(f"ep = {plan.ep} must divide the {m.experts} experts of {m.name}")
        if (plan.dp * plan.cp * plan.tp) % plan.ep or (plan.ep > plan.dp and plan.ep % plan.dp):
            raise ValueError(f"ep = {plan.ep} must divide dp = {plan.dp} (or be dp × a divisor of tp × cp): "
                             f"experts are spread over the data-parallel ranks")
    warnings = []
    if m.layers % (plan.pp * plan.virtual_stages):
        k = stage_layers(m.layers, plan.pp * plan.virtual_stages)
        warnings.append(f"{m.layers} layers do not divide into {plan.pp * plan.virtual_stages} stages: they hold "
                        f"{min(k)} to {max(k)} layers, and the fullest sets the pipeline's pace")
    if plan.tp > g:
        warnings.append(f"TP = {plan.tp} spans {math.ceil(plan.tp / g)} nodes of {g} GPUs: its all-reduces, four "
                        f"per layer per micro-batch, leave NVLink")
    if plan.pp > 1 and plan.microbatches < plan.pp:
        warnings.append(f"{plan.microbatches} micro-batches for {plan.pp} stages: the pipeline never fills "
                        f"(bubble {fmt_percent(bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages), decimals=0)} of ideal)")
    if plan.zero >= 2 and plan.pp > 1:
        warnings.append(f"ZeRO-{plan.zero} with pipeline parallelism: DeepSpeed supports only ZeRO-1 with PP")
    if plan.zero > 0 and plan.dp == 1:
        warnings.append(f"ZeRO-{plan.zero} with dp = 1 shards nothing")
    if plan.sequence_parallel and plan.tp == 1:
        warnings.append("sequence parallelism without tensor parallelism changes nothing")
    return tuple(warnings)


# --- placement ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Group:
    """One parallel dimension's communication group: ``size`` ranks ``stride`` apart; ``scope`` says whether it
    stays inside a node ("intra-node"), leaves it ("inter-node"), or is trivial ("none", size 1); ``link`` is the
    link its traffic crosses (the node's intra- or inter-node link). ``bandwidth`` (per direction, per rank) of
    its ring collectives: a ring that leaves the node with k of its ranks in each node crosses it on k NICs at once
    (NCCL's channels, one per rail) and runs at min(NVLink, k × NIC) — chapter 3's bus bandwidth."""

    size: int
    stride: int
    scope: str
    link: links.Link
    bandwidth: float = 0.0


@dataclass(frozen=True)
class Placement:
    """Where each parallel dimension's group sits (:func:`placement`); ``ep`` is ``None`` without expert
    parallelism. ``items()`` lists the groups in use by name."""

    tp: Group
    pp: Group
    dp: Group
    ep: Group | None = None
    cp: Group | None = None

    def items(self) -> list:
        """``[(name, Group), ...]`` for tp, cp (when used), pp, dp (and ep when used)."""
        return [(k, g) for k in ("tp", "cp", "pp", "dp", "ep") if (g := getattr(self, k)) is not None]


def _group(size: int, stride: int, node: systems.Node, total: int) -> Group:
    g, span = node.gpus_per_node, size * stride
    if size == 1:
        return Group(size, stride, "none", node.intra)
    inside = span <= g and (g % span == 0 or total <= g)     # an NVL72 rack holds one 64-GPU group
    if inside:
        return Group(size, stride, "intra-node", node.intra, node.intra.bandwidth_per_direction)
    k = max(1, min(size, g // stride))                         # the group's ranks in one node
    bw = min(node.intra.bandwidth_per_direction, k * node.inter.bandwidth_per_direction)
    return Group(size, stride, "inter-node", node.inter, bw if k > 1 else node.inter.bandwidth_per_direction)


def placement(plan: Plan, cluster="A100") -> Placement:
    """Where each group sits on ``cluster``'s nodes, ranks laid out TP innermost, then PP, then DP; the
    expert-parallel group is the first ``ep`` ranks of each data-parallel group.

    >>> [(k, g.stride, g.scope) for k, g in placement(Plan(tp=2, pp=4, dp=16), "H100").items()]
    [('tp', 1, 'intra-node'), ('pp', 2, 'intra-node'), ('dp', 8, 'inter-node')]
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    node = _node(cluster)
    t, c = plan.tp, plan.cp
    inner = t * c * plan.pp
    n = plan.n_gpus
    return Placement(_group(t, 1, node, n), _group(plan.pp, t * c, node, n), _group(plan.dp, inner, node, n),
                     _group(plan.ep, inner if plan.ep <= plan.dp else 1, node, n) if plan.ep > 1 else None,
                     _group(c, t, node, n) if c > 1 else None)


def stage_layers(layers, stages) -> tuple:
    """Layers per pipeline stage when ``stages`` do not divide ``layers`` evenly: the first ``layers mod stages``
    stages take one more (Megatron-LM's default split), so the fullest holds ⌈L/s⌉.

    >>> stage_layers(126, 16)[:3], max(stage_layers(126, 16)), sum(stage_layers(126, 16))
    ((8, 8, 8), 8, 126)
    """
    l, k = _check.integer("layers", layers), _check.integer("stages", stages)
    if k > l:
        raise ValueError(f"stages ({k}) exceeds layers ({l}): every stage needs at least one layer")
    return tuple(l // k + (1 if i < l % k else 0) for i in range(k))


# --- the pipeline bubble -------------------------------------------------------------------------------------------
# The formulas live in chipchain.schedules (one home, one list of schedule names); these are the entry points the
# plan analysis uses, kept with their signatures.

#: (p − 1)/(v·m), :func:`chipchain.schedules.bubble_fraction` (GPipe, 1F1B and the interleaved schedule)
bubble_fraction = schedules.bubble_fraction


def idle_share(pp, microbatches, virtual_stages=1):
    """Share of the whole step each GPU sits idle in the bubble of 1F1B (interleaved with ``virtual_stages`` > 1):
    ``(p − 1)/(v·m + p − 1)`` = b/(1 + b) for b = :func:`bubble_fraction`; element-wise
    (:func:`chipchain.schedules.idle_share`).

    >>> round(idle_share(16, 64), 3)
    0.19
    """
    return schedules.idle_share("interleaved", pp, microbatches, virtual_stages)


#: the pipeline schedules DeepSeek-V3's Table 2 compares (:data:`chipchain.schedules.TABLE2`): 1F1B (Narayanan et
#: al. 2021, PipeDream-Flush), ZB-H1 (Qi et al. 2024; the report's "ZB1P") and DualPipe (DeepSeek-AI 2024, Sec. 3.2.1)
PIPELINE_SCHEDULES = schedules.TABLE2


def schedule_bubble(schedule, pp, f=1.0, b=2.0, w=1.0, fb=None) -> float:
    """Pipeline bubble of one iteration of a schedule of DeepSeek-V3's Table 2, in the units of the chunk times
    (:func:`chipchain.schedules.bubble`):

    * 1F1B:      (PP − 1)(F + B)
    * ZB-H1 (the report's ZB1P, accepted as a name):  (PP − 1)(F + B − 2W)
    * DualPipe:  (PP/2 − 1)(F&B + B − 3W)

    F = time of a forward chunk, B = time of a full backward chunk (input and weight gradients), W = time of its
    "backward for weights" part (so W ≤ B), F&B = ``fb``, the time of a forward and a backward chunk run overlapped
    (default F + B: overlap hides communication, not compute). The bubble does not depend on the number of
    micro-batches m; over the ideal time m(F + B), the 1F1B bubble is :func:`bubble_fraction` (p − 1)/m. DualPipe
    needs an even PP. With the usual F : B : W = 1 : 2 : 1 and PP = 16:

    >>> [schedule_bubble(s, 16) for s in PIPELINE_SCHEDULES]
    [45.0, 15.0, 14.0]
    """
    try:
        name = schedules.canonical(schedule)
    except KeyError:
        name = schedule
    s = _check.choice("schedule", name, PIPELINE_SCHEDULES)
    p = _check.integer("pp", pp, minimum=2)
    return schedules.bubble(s, p, 1, f, b, w, fb)


# --- communication per step --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class CommRow:
    """One kind of traffic in a training step, per GPU: ``count`` operations of ``message_bytes`` each over ``link``
    (a link name), ``sent_bytes`` sent by the GPU in total, ``seconds`` of transfer time (α–β model)."""

    kind: str
    when: str
    link: str
    count: int
    message_bytes: float
    sent_bytes: float
    seconds: float


def _node(cluster) -> systems.Node:
    """The node of ``cluster`` (a :class:`~chipchain.systems.Cluster`, node or accelerator name)."""
    return cluster.node if isinstance(cluster, systems.Cluster) else systems.node(cluster)


def communication(plan: Plan, model, cluster="A100", recipe="mixed-adam") -> tuple:
    """Traffic of one training step per GPU, by kind, with times from :mod:`chipchain.comms` over the link the
    placement on ``cluster`` dictates (its intra-node link inside a node, its inter-node link across nodes;
    per-direction bandwidth). b = micro-batch, s = sequence, h = hidden; with context parallelism each rank holds
    s/cp of the sequence; counts are for the fullest pipeline stage (:func:`stage_layers`).

    * **TP**: 4 all-reduces per layer per micro-batch (2 forward, 2 backward; 6 with full recomputation), each of
      b·(s/cp)·h 16-bit elements (Shoeybi et al. 2019, §3; with sequence parallelism an all-gather plus a
      reduce-scatter of the same total, Korthikanti et al. 2022 §4.2.2).
    * **CP**: the keys and values of the rank's chunk, b·(s/cp)·2·n_kv·d_h 16-bit elements per layer: "all-gather"
      gathers them before attention and reduce-scatters their gradients (2 collectives per layer per micro-batch,
      Dubey et al. 2024 §3.3.2); "ring" passes them rank to rank, cp − 1 hops forward and cp − 1 hops of keys,
      values and their gradients backward (Liu et al. 2023).
    * **PP**: per micro-batch and virtual stage one activation forward and one gradient backward, b·(s/cp)·h
      elements, split over the TP ranks (the scatter/gather optimisation, Narayanan et al. 2021 §4.1).
    * **EP** (mixture-of-experts models): 4 all-to-alls per MoE layer per micro-batch (dispatch and combine, forward
      and backward; 6 with full recomputation), each of b·(s/cp)·h·k 16-bit elements for k experts per token.
    * **DP**: the gradients of the GPU's parameters — Ψ/(t·p) shared, plus its experts' share — (``recipe``'s
      gradient bytes each), over the dp × cp ranks that hold the same weights (experts over dp·cp/ep): a ring
      all-reduce (2Ψ bytes per GPU in the limit); ZeRO-1/2 a reduce-scatter plus an all-gather (the same); ZeRO-3
      (FSDP) a reduce-scatter of gradients and two all-gathers of the weights per micro-batch, forward and
      backward (3Ψ for one micro-batch; Rajbhandari et al. 2020, §7).

    >>> rows = communication(Plan(tp=8, pp=16, dp=8, microbatches=64), "175B", "A100")
    >>> [(r.kind, r.link, round(r.sent_bytes / 1e9, 1)) for r in rows]
    [('TP all-reduce', 'NVLink3', 135.3), ('PP send/recv', 'IB-HDR', 0.8), ('DP gradient all-reduce', 'IB-HDR', 4.8)]
    """
    m = models.get(model)
    where = placement(plan, cluster)
    rec = memory.recipe(recipe)
    tokens = plan.microbatch * m.seq / plan.cp                 # tokens per rank per micro-batch
    act = 2.0 * tokens * m.hidden
    per_gpu = max(stage_layers(m.layers, plan.pp * plan.virtual_stages)) * plan.virtual_stages
    layers = min(per_gpu, m.layers)
    moe = min(layers, math.ceil(m.moe_layers / plan.pp)) if m.is_moe else 0
    extra = 2 if plan.recompute == "full" else 0
    rows = []
    if plan.tp > 1:
        count = (4 + extra) * layers * plan.microbatches
        ln = where.tp.link
        t1 = comms.ring_allreduce_time(act, plan.tp, where.tp.bandwidth, ln.latency)
        rows.append(CommRow("TP all-reduce", "every layer, forward and backward", ln.name, count, act,
                            count * comms.allreduce_bytes_per_rank(act, plan.tp), count * t1))
    if plan.cp > 1:
        ln, c = where.cp.link, plan.cp
        chunk = 2.0 * tokens * 2 * m.kv_heads * m.head_dim          # this rank's K and V, 16-bit
        bw, lat = where.cp.bandwidth, ln.latency
        if plan.cp_variant == "all-gather":
            count = (2 + extra // 2) * layers * plan.microbatches
            t1 = comms.allgather_time(c * chunk, c, bw, lat)
            rows.append(CommRow("CP all-gather K, V", "every layer: gather forward, reduce-scatter backward",
                                ln.name, count, c * chunk, count * (c - 1) * chunk, count * t1))
        else:
            hops = (3 + extra // 2) * (c - 1) * layers * plan.microbatches   # K, V forward; K, V, dK, dV backward
            rows.append(CommRow("CP ring K, V", "every layer, block by block", ln.name, hops, chunk, hops * chunk,
                                hops * comms.p2p_time(chunk, bw, lat)))
    if plan.pp > 1:
        count = 2 * plan.microbatches * plan.virtual_stages
        msg, ln = act / plan.tp, where.pp.link
        rows.append(CommRow("PP send/recv", "every micro-batch, between stages", ln.name, count, msg, count * msg,
                            count * comms.p2p_time(msg, ln.bandwidth_per_direction, ln.latency)))
    if plan.ep > 1 and moe:
        count = (4 + extra) * moe * plan.microbatches
        msg, ln, e, g = act * m.experts_active, where.ep.link, plan.ep, _node(cluster).gpus_per_node
        local = min(g // where.ep.stride or 1, e) if where.ep.scope == "inter-node" else e   # peers in the node
        t1 = comms.alltoall_time(msg * local / e, local, _node(cluster).intra.bandwidth_per_direction)
        if local < e:                            # the off-node share crosses the scale-out link at the same time
            t1 = max(t1, (e - local) / e * msg / ln.bandwidth_per_direction + (e - local) * ln.latency)
        rows.append(CommRow("EP all-to-all", "every MoE layer, forward and backward", ln.name, count, msg,
                            count * (e - 1) / e * msg, count * t1))
    d = plan.dp * plan.cp
    if d > 1:
        shared = m.params - m.expert_params
        psi = (shared + m.expert_params / plan.ep) / (plan.tp * plan.pp)
        grads = rec.gradients * psi
        grp = where.dp if plan.dp > 1 else where.cp
        ln, bw, lat = grp.link, grp.bandwidth, grp.link.latency
        if plan.zero == 3:             # weights gathered for every micro-batch, forward and backward
            weights, k = rec.weights * psi, 2 * plan.microbatches
            t = comms.reduce_scatter_time(grads, d, bw, lat) + k * comms.allgather_time(weights, d, bw, lat)
            rows.append(CommRow("DP ZeRO-3 gather + reduce-scatter", "every layer of every micro-batch (gather), "
                                "end of step", ln.name, k + 1, grads, (d - 1) / d * (grads + k * weights), t))
        else:
            kind = "DP gradient all-reduce" if plan.zero == 0 else f"DP ZeRO-{plan.zero} reduce-scatter + gather"
            rows.append(CommRow(kind, "end of step", ln.name, 1, grads, comms.allreduce_bytes_per_rank(grads, d),
                                comms.ring_allreduce_time(grads, d, bw, lat)))
    return tuple(rows)


def zero_traffic_factor(zero) -> float:
    """Data-parallel traffic per GPU per step, in units of the gradient buffer Ψ (16-bit), in the limit of many
    ranks: 2 for plain DP and ZeRO-1/2 (all-reduce = reduce-scatter + all-gather), 3 for ZeRO-3/FSDP (a reduce-scatter
    of gradients plus an all-gather of weights in the forward and again in the backward pass). Rajbhandari et al.
    2020, §7.

    >>> [zero_traffic_factor(z) for z in range(4)]
    [2.0, 2.0, 2.0, 3.0]
    """
    s = _check.integer("zero", zero, minimum=0)
    if s > 3:
        raise ValueError(f"zero must be 0, 1, 2 or 3, got {zero!r}")
    return 3.0 if s == 3 else 2.0
