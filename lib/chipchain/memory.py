"""The memory ledger: what a GPU must hold to train a model, and whether it fits.

Four things take the memory of a training GPU: the **weights**, the **gradients**, the **optimizer states** (for Adam,
two moments per parameter, plus an FP32 master copy of the weights under mixed precision) and the **activations**
saved in the forward pass for the backward pass. The first three grow with the parameter count Ψ and are sharded
by ZeRO (Rajbhandari et al. 2020); their bytes per parameter are the precision recipes of ``data/recipes.csv``
(:data:`RECIPES`). The activations (:mod:`chipchain.activations`) grow with micro-batch × sequence × hidden size ×
layers and are cut by tensor/sequence parallelism and recomputation (Korthikanti et al. 2022).

Conventions: bytes and counts in, bytes out; decimal prefixes (1 GB = 1e9 bytes). A model is any name or alias of
:mod:`chipchain.models` or a :class:`~chipchain.models.Model`; a recipe any name or alias in :data:`RECIPES`.

>>> recipe("mixed-adam").total
16.0
>>> state_bytes(175e9, "mixed-adam") / 1e12
2.8
>>> round(zero_bytes_per_gpu(7.5e9, 64, 3) / 1e9, 2)   # ZeRO paper, Figure 1: 120 GB → 1.9 GB
1.88
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data, activations, hardware, models, units
from ._i18n import gettext as _

__all__ = ["layer_activation_bytes", 
    "Recipe", "RECIPES", "recipe", "recipe_names", "state_breakdown", "state_bytes", "rule_of_thumb_ledger",
    "zero_bytes_per_gpu", "sharded_state_breakdown", "Ledger", "Fit", "usable_capacity", "ledger", "min_gpus", "inference_weight_bytes",
]


# --- bytes per parameter: named precision recipes ------------------------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter of each model-state component for one precision recipe (a row of ``data/recipes.csv``).

    ``weights``: the copy used in forward/backward; ``gradients``; ``master``: an FP32 copy of the weights kept by
    the optimizer (mixed precision only); ``moments``: Adam's first and second moments. ``activation_element`` is the
    size of one activation element (2 for 16-bit, 4 for FP32); ``rule_of_thumb_activations`` is the seed's crude
    allowance for activations in bytes per parameter (not a model of activations: see :func:`ledger`). ``counts``
    says in words what the recipe counts; ``source`` and ``checked`` are the row's provenance.
    """

    name: str
    weights: float
    gradients: float
    master: float
    moments: float
    activation_element: float
    rule_of_thumb_activations: float
    counts: str
    source: str
    checked: str = "U"
    aliases: tuple = ()

    def __post_init__(self):
        for f in ("weights", "gradients", "master", "moments", "rule_of_thumb_activations"):
            object.__setattr__(self, f, _check.nonnegative(f, getattr(self, f)))
        object.__setattr__(self, "activation_element", _check.positive("activation_element",
                                                                       self.activation_element))
        _check.choice("checked", self.checked, _data.CHECK_LEVELS)

    @property
    def optimizer(self) -> float:
        """K in the ZeRO paper: optimizer-held bytes per parameter (master copy + moments)."""
        return self.master + self.moments

    @property
    def total(self) -> float:
        """Bytes per parameter of all model states: weights + gradients + master + moments."""
        return self.weights + self.gradients + self.master + self.moments

    def breakdown(self) -> dict:
        """Bytes per parameter by component, in a fixed order."""
        return {"weights": self.weights, "gradients": self.gradients, "master weights": self.master,
                "optimizer moments": self.moments}


def _build():
    for row in _data.rows("recipes.csv"):
        nums = {c: _data.scaled(row[c]) for c in ("weights", "gradients", "master", "moments", "activation_element",
                                                   "rule_of_thumb_activations")}
        yield Recipe(name=row["name"], counts=row["counts"], source=row["source"], checked=row["checked"],
                     aliases=_data.split_aliases(row["aliases"]), **nums)


#: the precision recipes of ``data/recipes.csv``, looked up by name or alias (``RECIPES.get``, ``RECIPES.names()``)
RECIPES = _data.Registry("recipe", Recipe, _build, argument="recipe")


def recipe_names() -> list[str]:
    """Names of the precision recipes, in file order.

    >>> recipe_names()
    ['fp32-adam', 'mixed-adam', 'mixed-adam-fp32-grads', 'bf16-adam', 'deepseek-v3-fp8']
    """
    return RECIPES.names()


def recipe(recipe) -> Recipe:
    """Look up a precision recipe by name or alias (a :class:`Recipe` passes through); unknown names raise
    ``KeyError`` listing the nearest names.

    >>> recipe("bf16-mixed") is recipe("mixed-adam")
    True
    >>> recipe("mixed-adam").breakdown()
    {'weights': 2.0, 'gradients': 2.0, 'master weights': 4.0, 'optimizer moments': 8.0}
    >>> recipe("deepseek-v3-fp8").total          # FP32 master 4 + FP32 gradients 4 + BF16 m, v 2 + 2
    12.0
    >>> recipe("mixd-adam")
    Traceback (most recent call last):
    ...
    KeyError: "unknown recipe 'mixd-adam'; nearest known names: mixed-adam, ..."
    """
    return RECIPES.get(recipe)


def state_breakdown(params, recipe="mixed-adam") -> dict:
    """Bytes of each model-state component: component = bytes per parameter × Ψ.

    ``params`` Ψ (count). Returns {component: bytes}. Source: Rajbhandari et al. 2020 §3.1.

    >>> {k: v / 1e9 for k, v in state_breakdown(7e9, "fp32-adam").items()}
    {'weights': 28.0, 'gradients': 28.0, 'master weights': 0.0, 'optimizer moments': 56.0}
    """
    p = _check.positive("params", params)
    return {k: v * p for k, v in RECIPES.get(recipe).breakdown().items()}


def state_bytes(params, recipe="mixed-adam") -> float:
    """Model states = (weights + gradients + master + moments) bytes per parameter × Ψ, unsharded.

    The running example: 16 B × 175e9 = 2.8e12 bytes, 32.6 cards' worth of an A100's 80 GiB (seed 000, step ①,
    divides by 80e9 and gets 35); DeepSeek-V3's FP8 recipe keeps 12 B per parameter, 8.05 TB for its 671e9
    parameters.

    >>> round(state_bytes(175e9) / 2**30 / 80, 1)
    32.6
    >>> state_bytes(671e9, "deepseek-v3-fp8") / 1e12
    8.052
    """
    return sum(state_breakdown(params, recipe).values())


def rule_of_thumb_ledger(params, recipe="mixed-adam") -> dict:
    """Seed 002's whole-model ledger: model states plus an activation allowance of one weight-sized copy at the
    compute precision (4P for FP32, 2P for mixed precision).

    This is the seed's rule of thumb, not a model of activations (which depend on batch, sequence, layers and
    recomputation: see :func:`chipchain.activations.activation_bytes_per_layer`). For a nominal 7B (7e9): FP32
    16P + 4P = 140 GB; mixed 16P + 2P = 126 GB — a 10 % saving, not half, because the FP32 master copy grows the
    optimizer from 8P to 12P.

    >>> round(sum(rule_of_thumb_ledger(7e9, "fp32-adam").values()) / 1e9)
    140
    >>> round(sum(rule_of_thumb_ledger(7e9, "mixed-adam").values()) / 1e9)
    126
    """
    r = RECIPES.get(recipe)
    out = state_breakdown(params, r)
    out["activations (rule of thumb)"] = r.rule_of_thumb_activations * _check.positive("params", params)
    return out


# --- ZeRO -------------------------------------------------------------------------------------------------------

def _zero(zero) -> int:
    if isinstance(zero, str) and zero.strip().lower() == "fsdp":
        return 3
    s = _check.integer("zero", zero, minimum=0)
    if s > 3:
        raise ValueError(f"zero must be 0, 1, 2, 3 or 'fsdp', got {zero!r}")
    return s


def sharded_state_breakdown(params, dp, zero, recipe="mixed-adam") -> dict:
    """Model-state bytes per GPU by component under ZeRO stage 0–3 over ``dp`` data-parallel ranks.

    Stage 1 shards the optimizer (master + moments), stage 2 also the gradients, stage 3 (= FSDP full sharding) also
    the weights; each sharded component is divided by N_d. Source: Rajbhandari et al. 2020, §5 and Figure 1.

    >>> {k: round(v / 1e9, 3) for k, v in sharded_state_breakdown(7.5e9, 64, 2).items()}
    {'weights': 15.0, 'gradients': 0.234, 'master weights': 0.469, 'optimizer moments': 0.938}
    """
    s = _zero(zero)
    n = _check.integer("dp", dp)
    full = state_breakdown(params, recipe)
    shard = {"weights": s >= 3, "gradients": s >= 2, "master weights": s >= 1, "optimizer moments": s >= 1}
    return {k: v / n if shard[k] else v for k, v in full.items()}


def zero_bytes_per_gpu(params, dp, zero, recipe="mixed-adam") -> float:
    """Model-state bytes per GPU under ZeRO (Rajbhandari et al. 2020, Figure 1 and §5): the sum of
    :func:`sharded_state_breakdown`, so every recipe's own weight, gradient and optimizer bytes are used.

    For the paper's mixed-precision Adam (2 + 2 bytes of weights and gradients, K = 12 of optimizer):
    stage 0: (2 + 2 + K)Ψ; stage 1: 2Ψ + 2Ψ + KΨ/N_d; stage 2: 2Ψ + (2 + K)Ψ/N_d; stage 3 (and FSDP full sharding):
    (2 + 2 + K)Ψ/N_d. ``params`` Ψ (count), ``dp`` N_d (count), ``zero`` (the ZeRO stage) 0–3 or ``"fsdp"``, ``recipe`` a name in
    :data:`RECIPES`. Result in bytes.

    The paper's Figure 1 example, Ψ = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB; with FP32 Adam
    (4 + 4 + 8 bytes) ZeRO-1 keeps 60.9 GB, not 31.4:

    >>> [round(zero_bytes_per_gpu(7.5e9, 64, s) / 1e9, 1) for s in range(4)]
    [120.0, 31.4, 16.6, 1.9]
    >>> round(zero_bytes_per_gpu(7.5e9, 64, 1, "fp32-adam") / 1e9, 1)
    60.9
    """
    return sum(sharded_state_breakdown(params, dp, zero, recipe).values())


# --- the ledger per GPU ----------------------------------------------------------------------------------------

def usable_capacity(accelerator, reserve=0.0) -> float:
    """Bytes of a card's memory left for the model: capacity − ``reserve`` (CUDA context, fragmentation; bytes).

    A reserve as large as the card leaves nothing and is refused by name (a fraction or GB given as bytes is the
    usual slip):

    >>> usable_capacity("A100", 2e9) / 1e9
    83.89934592
    >>> usable_capacity("H100", 90e9)
    Traceback (most recent call last):
    ...
    ValueError: reserve (90 GB) is not less than the memory of one H100-SXM (80 GiB = 85.9 GB): nothing would be left for the model; reserve is in bytes
    """
    acc = hardware.get(accelerator)
    cap = acc.require("memory_bytes")
    r = _check.nonnegative("reserve", reserve)
    if r >= cap:
        raise ValueError(f"reserve ({units.fmt_bytes(r)}) is not less than the memory of one {acc.name} "
                         f"({units.fmt_capacity(cap)}): nothing would be left for the model; reserve is in bytes")
    return cap - r


@dataclass(frozen=True)
class Fit:
    """Whether a ledger fits a card: ``margin`` = capacity − total bytes (negative means out of memory)."""

    fits: bool
    margin: float
    capacity: float
    accelerator: str

    @property
    def message(self) -> str:
        if self.fits:
            return _("fits on {accelerator} with {margin} to spare").format(accelerator=self.accelerator,
                                                                          margin=units.fmt_bytes(self.margin))
        return _("OOM on {accelerator} by {deficit}").format(accelerator=self.accelerator,
                                                             deficit=units.fmt_bytes(-self.margin))


@dataclass(frozen=True)
class Ledger:
    """Memory per GPU by component (bytes), for one model, plan and recipe; ``offloaded_per_microbatch`` the bytes
    one micro-batch's offloaded layers send to host memory (and fetch back for the backward pass), 0 without
    offloading."""

    components: dict
    offloaded_per_microbatch: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.components.values())

    @property
    def states(self) -> float:
        return sum(v for k, v in self.components.items() if k != "activations")

    def fits(self, accelerator, reserve=0.0) -> Fit:
        """Compare the total with the card's memory less ``reserve`` bytes (CUDA context, fragmentation).

        >>> ledger("7B", microbatch=1, recompute="full").fits("H100").message
        'OOM on H100-SXM by 23 GB'
        """
        acc = hardware.get(accelerator)
        cap = usable_capacity(acc, reserve)
        margin = cap - self.total
        return Fit(margin >= 0, margin, cap, acc.name)


def layer_activation_bytes(model, *, seq=None, microbatch=1, tp=1, sequence_parallel=False, recompute="none",
                           flash=False, fp8=False, recompute_modules=()) -> float:
    """Activation bytes one layer of ``model`` keeps for the backward pass, averaged over its layers (a mixture of
    experts' dense and expert layers differ), counted from the model's own shape: grouped-query attention, a gated
    MLP, its experts, dropout masks only for the GELU models of the Megatron papers, FP8's one-byte matrix inputs
    (:func:`chipchain.activations.activation_bytes_per_layer`); the ledger's per-layer figure. 16-bit activations.

    >>> round(layer_activation_bytes("175B") / 1e9, 2), round(layer_activation_bytes("Llama-3-70B", flash=True) / 1e9, 2)
    (2.87, 2.25)
    """
    m = models.get(model)
    s = m.seq if seq is None else _check.integer("seq", seq)
    shape = _shape(m, fp8, recompute_modules)

    def one(**extra):
        return activations.activation_bytes_per_layer(s, microbatch, m.hidden, m.heads, tp, sequence_parallel,
                                                      recompute, flash, **shape, **extra)
    dense = one()
    if not m.is_moe:
        return dense
    return (dense * m.dense_layers + one(**_expert_shape(m)) * m.moe_layers) / m.layers


def _shape(m, fp8=False, recompute_modules=()) -> dict:
    """The activation-counting shape of a model (the keywords of
    :func:`chipchain.activations.activation_bytes_per_layer`)."""
    return dict(kv_heads=m.kv_heads, head_dim=m.head_dim, ffn=m.ffn, mlp_matrices=m.mlp_matrices,
                dropout=m.mlp_matrices == 2, fp8=_check.flag("fp8", fp8), modules=tuple(recompute_modules),
                latent=(2 * (m.kv_lora_rank + (m.rope_head_dim or 0)) if m.kv_lora_rank else None))


def _expert_shape(m) -> dict:
    """An expert layer's extra keywords: k active experts of the width the expert parameters imply."""
    return dict(experts_active=m.experts_active,
                expert_ffn=m.expert_params / (m.moe_layers * m.experts * m.mlp_matrices * m.hidden))


def ledger(model, recipe="mixed-adam", *, microbatch=1, seq=None, tp=1, pp=1, dp=1, zero=0,
           sequence_parallel=False, recompute="none", microbatches=None, virtual_stages=1, cp=1, ep=1,
           flash=False, fp8=False, offload_layers=0, recompute_modules=()) -> Ledger:
    """Memory per GPU: model states of Ψ/(t·p) parameters sharded by ZeRO over ``dp``, plus the first pipeline
    stage's activations (:func:`chipchain.activations.activation_bytes_per_stage`).

    ``model``: a name or alias in :mod:`chipchain.models` (``"7B"`` is Llama 2 7B, 6.74e9 parameters) or a
    :class:`~chipchain.models.Model`; a mixture-of-experts model holds all its parameters (``params``), and its
    attention is treated as multi-head (grouped-query attention keeps the same activations per layer in this
    model); ``seq`` defaults to the model's training sequence length.

    Context parallelism (``cp``) splits the sequence, so activations fall by cp and the states shard over dp × cp;
    expert parallelism (``ep``) spreads a mixture-of-experts model's routed experts over ep ranks;
    ``flash`` (FlashAttention) keeps no attention scores (:func:`chipchain.activations.activation_bytes_per_layer`),
    which also counts the model's own shape (grouped-query attention, gated MLP, experts; dropout masks only for the
    GELU models of the Megatron papers) and ``fp8`` training's one-byte matrix inputs; ``offload_layers`` of the
    busiest stage keep their activations in host memory; ``recompute_modules`` name what "selective" recomputes
    (:data:`chipchain.activations.RECOMPUTE_MODULES`).
    Activations are scaled by the recipe's activation element size over 2 (FP32 training keeps twice the bytes;
    approximate, since dropout masks stay 1 byte). Embedding tables are spread evenly (an approximation: in practice
    the first and last stage hold more). Result: a :class:`Ledger`.

    175B on 1,024 A100 as TP 8 × PP 16 × DP 8 with ZeRO-1, sequence parallelism and selective recomputation:

    >>> L = ledger("175B", tp=8, pp=16, dp=8, zero=1, sequence_parallel=True, recompute="selective",
    ...            microbatches=16)
    >>> round(L.states / 1e9, 2), round(L.components["activations"] / 1e9, 2)
    (7.52, 10.27)
    """
    m = models.get(model)
    r = RECIPES.get(recipe)
    t = _check.integer("tp", tp)
    p = _check.integer("pp", pp)
    c, e = _check.integer("cp", cp), _check.integer("ep", ep)
    s = m.seq if seq is None else _check.integer("seq", seq)
    if s % c:
        raise ValueError(f"cp ({c}) must divide the sequence length ({s})")
    activations.check_split(t, m.heads, m.hidden, m.name)      # the one tp-split rule, before any arithmetic
    d = _check.integer("dp", dp) * c
    if m.expert_params and (d * t) % e:
        raise ValueError(f"ep ({e}) must divide dp × cp × tp ({d * t}): expert groups are carved out of those ranks")
    comps = sharded_state_breakdown((m.params - m.expert_params) / (t * p), d, zero, r)
    if m.expert_params:        # each rank holds 1/ep of the experts (not split by TP once EP spans it)
        split, reps = (t * p * e, d // e) if e <= d else (p * e, d * t // e)
        for k, v in sharded_state_breakdown(m.expert_params / split, max(reps, 1), zero, r).items():
            comps[k] += v
    shape = _shape(m, fp8, recompute_modules)

    def stage(**extra):
        return activations.activation_bytes_per_stage(s // c, microbatch, m.hidden, m.heads, m.layers, p, t,
                                                      sequence_parallel, recompute, microbatches, virtual_stages,
                                                      flash, offload_layers=offload_layers, **shape, **extra)
    acts = stage()
    if m.is_moe:                # the expert layers keep k dispatched copies and their experts' intermediates
        acts = (acts * m.dense_layers + stage(**_expert_shape(m)) * m.moe_layers) / m.layers
    comps["activations"] = acts * r.activation_element / 2
    k = _check.integer("offload_layers", offload_layers, minimum=0)
    offloaded = k * layer_activation_bytes(m, seq=s // c, microbatch=microbatch, tp=t,
                                           sequence_parallel=sequence_parallel, recompute=recompute, flash=flash,
                                           fp8=fp8, recompute_modules=recompute_modules) if k else 0.0
    return Ledger(comps, offloaded * r.activation_element / 2)


def min_gpus(total_bytes, capacity, usable_fraction=1.0) -> int:
    """Fewest cards whose memory holds ``total_bytes`` when everything is fully sharded: ⌈M / (f·C)⌉, at least 1,
    rounded up by the one rule for a count of parts (:func:`chipchain.units.count_up`).

    A lower bound: it assumes perfect sharding and ignores activations unless they are in ``total_bytes``;
    ``usable_fraction`` f of the card (1 by default: the states alone, no runtime headroom).

    >>> min_gpus(112e9, 24e9), min_gpus(112e9, 80e9)
    (5, 2)
    """
    m = _check.nonnegative("total_bytes", total_bytes)
    c = _check.positive("capacity", capacity)
    f = _check.fraction("usable_fraction", usable_fraction)
    return max(1, units.count_up(m / (c * f)))


def inference_weight_bytes(params, dtype="bf16") -> float:
    """Weights for inference: Ψ × bytes per element of ``dtype`` ("fp16", "bf16", "int8", "int4", …); the KV cache
    and runtime buffers come on top. The one home of N·b (:func:`chipchain.inference.weight_bytes` takes a model).

    >>> inference_weight_bytes(70e9, "int4") / 1e9
    35.0
    """
    return _check.positive("params", params) * units.bytes_per_element(dtype)
