"""Laying a model across many GPUs: a parallel plan, its validation and placement, bubbles and traffic (the step
time they add up to is :mod:`chipchain.steptime`).

A plan cuts the work four ways (Narayanan et al. 2021; Shoeybi et al. 2019; Huang et al. 2019; Rajbhandari et al.
2020): **tensor** parallelism (TP) splits each layer's matrices, **pipeline** parallelism (PP) gives each GPU a run
of layers, **data** parallelism (DP) gives each replica different sequences, and **expert** parallelism (EP) places a
mixture-of-experts model's experts on different GPUs. The degrees multiply to the GPU count. ZeRO shards the model
states over the data-parallel ranks.

Ranks are numbered TP innermost, then CP, then DP, PP outermost (Megatron-Core's "tp-cp-ep-dp-pp", torchtitan's
device mesh), or with DP outermost as Llama 3's framework does ([TP, CP, PP, DP], Dubey et al. 2024 §3.3.2): a
group of ``size`` ranks ``stride`` apart stays inside one node when ``stride × size`` fits in the node's GPU count.
The traffic of a plan is :mod:`chipchain.traffic`. A model is any name or alias of :mod:`chipchain.models`; a cluster any node or accelerator name,
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
from ._i18n import gettext as _
from .units import fmt_percent

__all__ = ["Plan", "validate", "Group", "Placement", "placement", "bubble_fraction", "idle_share",
           "PIPELINE_SCHEDULES", "schedule_bubble", "CP_VARIANTS", "RANK_ORDERS", "stage_layers"]

#: rank orders, innermost first: the pipeline outermost (Megatron-Core, torchtitan, DeepSpeed) or data parallelism
#: outermost (Meta's Llama 3 framework)
RANK_ORDERS = ("tp-cp-dp-pp", "tp-cp-pp-dp")

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
    ("none", "selective", "full"); ``offload_layers``, how many of each GPU's layers keep their activations in host
    memory (Megatron's activation CPU offloading, which GB200 recipes use over NVLink-C2C); ``recompute_modules``, what
    "selective" recomputes (Megatron-Core's names, :data:`chipchain.activations.RECOMPUTE_MODULES`; default the
    attention core)."""

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
    offload_layers: int = 0
    recompute_modules: tuple = ()

    def __post_init__(self):
        for f in ("tp", "pp", "dp", "ep", "cp", "microbatches", "microbatch", "virtual_stages"):
            object.__setattr__(self, f, _check.integer(f, getattr(self, f)))
        object.__setattr__(self, "offload_layers", _check.integer("offload_layers", self.offload_layers, minimum=0))
        z = _check.integer("zero", self.zero, minimum=0)
        if z > 3:
            raise ValueError(f"zero must be a ZeRO stage 0, 1, 2 or 3, got {self.zero!r}")
        _check.flag("sequence_parallel", self.sequence_parallel)
        _check.choice("cp_variant", self.cp_variant, CP_VARIANTS)
        object.__setattr__(self, "recompute", _check.choice("recompute", self.recompute, activations.RECOMPUTE))
        object.__setattr__(self, "recompute_modules",
                           tuple(self.recompute_modules) if self.recompute_modules else ())
        activations.recompute_modules(self.recompute, self.recompute_modules)      # names and combination

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
                + _(", ZeRO-{zero}, {m} micro-batches of {size}").format(zero=self.zero, m=self.microbatches,
                                                                          size=self.microbatch)
                + (_(", {n} layers' activations offloaded").format(n=self.offload_layers) if self.offload_layers
                   else ""))


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
    if plan.offload_layers:
        if c.node.host is None:
            raise ValueError(f"offload_layers = {plan.offload_layers}: the {c.node.name} node has no host link in the "
                             "catalog to offload activations over")
        if plan.offload_layers > -(-m.layers // plan.pp):
            raise ValueError(f"offload_layers = {plan.offload_layers} exceeds the {-(-m.layers // plan.pp)} layers "
                             f"each pipeline stage of {m.name} holds")
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
        warnings.append(_("{layers} layers do not divide into {stages} stages: they hold {least} to {most} layers, "
                          "and the fullest sets the pipeline's pace").format(
            layers=m.layers, stages=plan.pp * plan.virtual_stages, least=min(k), most=max(k)))
    if plan.tp > g:
        warnings.append(_("TP = {tp} spans {nodes} nodes of {g} GPUs: its all-reduces, four per layer per "
                          "micro-batch, leave NVLink").format(tp=plan.tp, nodes=math.ceil(plan.tp / g), g=g))
    if plan.pp > 1 and plan.microbatches < plan.pp:
        warnings.append(_("{m} micro-batches for {pp} stages: the pipeline never fills (bubble {bubble} of "
                          "ideal)").format(m=plan.microbatches, pp=plan.pp, bubble=fmt_percent(
                              bubble_fraction(plan.pp, plan.microbatches, plan.virtual_stages), decimals=0)))
    if plan.zero >= 2 and plan.pp > 1:
        warnings.append(_("ZeRO-{zero} with pipeline parallelism: DeepSpeed supports only ZeRO-1 with PP").format(
            zero=plan.zero))
    if plan.zero > 0 and plan.dp == 1:
        warnings.append(_("ZeRO-{zero} with dp = 1 shards nothing").format(zero=plan.zero))
    if plan.sequence_parallel and plan.tp == 1:
        warnings.append(_("sequence parallelism without tensor parallelism changes nothing"))
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


def _node(cluster) -> systems.Node:
    """The node of ``cluster`` (a :class:`~chipchain.systems.Cluster`, node or accelerator name)."""
    return cluster.node if isinstance(cluster, systems.Cluster) else systems.node(cluster)


def _ranks_per_node(node: systems.Node, total: int) -> int:
    """GPUs a job uses in each NVLink domain: all of them, or — for a rack whose GPU count is not a power of two
    (GB200 NVL72) — the largest power of two it holds (64 of 72, as training jobs place their power-of-two groups;
    the rest are spares), unless the whole job fits in the one domain."""
    g = node.gpus_per_node
    if total <= g or g & (g - 1) == 0:
        return g
    return 1 << (g.bit_length() - 1)


def _group(size: int, stride: int, node: systems.Node, total: int) -> Group:
    g, span = _ranks_per_node(node, total), size * stride
    if size == 1:
        return Group(size, stride, "none", node.intra)
    inside = span <= g and (g % span == 0 or total <= g)
    if inside:
        return Group(size, stride, "intra-node", node.intra, node.intra.bandwidth_per_direction)
    k = max(1, min(size, g // stride))                         # the group's ranks in one node
    bw = min(node.intra.bandwidth_per_direction, k * node.inter.bandwidth_per_direction)
    return Group(size, stride, "inter-node", node.inter, bw if k > 1 else node.inter.bandwidth_per_direction)


def placement(plan: Plan, cluster="A100", order="tp-cp-dp-pp") -> Placement:
    """Where each group sits on ``cluster``'s nodes, ranks numbered in ``order`` (:data:`RANK_ORDERS`): TP
    innermost, then CP, then DP with the pipeline outermost (Megatron-Core's "tp-cp-ep-dp-pp", torchtitan's mesh
    ["pp", "dp_replicate", "dp_shard", "cp", "tp"]), or "tp-cp-pp-dp" (Llama 3's framework). The expert-parallel
    group is the first ``ep`` ranks of each data-parallel group, or spans the TP ranks too when ``ep`` exceeds ``dp``.

    >>> [(k, g.stride, g.scope) for k, g in placement(Plan(tp=2, pp=4, dp=16), "H100").items()]
    [('tp', 1, 'intra-node'), ('pp', 32, 'inter-node'), ('dp', 2, 'inter-node')]
    >>> [(k, g.stride, g.scope) for k, g in placement(Plan(tp=2, pp=4, dp=16), "H100", "tp-cp-pp-dp").items()]
    [('tp', 1, 'intra-node'), ('pp', 2, 'intra-node'), ('dp', 8, 'inter-node')]
    """
    if not isinstance(plan, Plan):
        raise ValueError(f"plan must be a Plan, got {plan!r}")
    node = _node(cluster)
    t, c = plan.tp, plan.cp
    n = plan.n_gpus
    if _check.choice("order", order, RANK_ORDERS) == "tp-cp-dp-pp":
        pp_stride, dp_stride = t * c * plan.dp, t * c
    else:
        pp_stride, dp_stride = t * c, t * c * plan.pp
    return Placement(_group(t, 1, node, n), _group(plan.pp, pp_stride, node, n), _group(plan.dp, dp_stride, node, n),
                     _group(plan.ep, dp_stride if plan.ep <= plan.dp else 1, node, n) if plan.ep > 1 else None,
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
