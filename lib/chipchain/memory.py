"""The memory ledger: what a GPU must hold to train a model, and whether it fits.

Four things take the memory of a training GPU: the **weights**, the **gradients**, the **optimizer states** (for Adam,
two moments per parameter, plus an FP32 master copy of the weights under mixed precision) and the **activations**
saved in the forward pass for the backward pass. The first three grow with the parameter count Ψ and are sharded
by ZeRO (Rajbhandari et al. 2020); the activations grow with micro-batch × sequence × hidden size × layers and are
cut by tensor/sequence parallelism and recomputation (Korthikanti et al. 2022).

Conventions: bytes and counts in, bytes out; decimal prefixes (1 GB = 1e9 bytes). Activation formulas assume 16-bit
activations and 1-byte dropout masks, as in Korthikanti et al.

>>> recipe("mixed-adam").total
16.0
>>> state_bytes(175e9, "mixed-adam") / 1e12
2.8
>>> round(zero_bytes_per_gpu(7.5e9, 64, 3) / 1e9, 2)   # ZeRO paper, Figure 1: 120 GB → 1.9 GB
1.88
"""
from __future__ import annotations

import difflib
import math
from dataclasses import dataclass

from . import _check

__all__ = [
    "Recipe", "RECIPES", "recipe", "recipe_names", "state_breakdown", "state_bytes", "rule_of_thumb_ledger",
    "zero_bytes_per_gpu", "sharded_state_breakdown", "activation_bytes_per_layer", "activation_bytes_per_stage",
    "checkpointed_activation_bytes", "Model", "MODELS", "model", "Ledger", "Fit", "ledger", "min_gpus",
    "inference_weight_bytes", "sizing_table", "RECOMPUTE", "memory_explorer", "plot_ledgers", "recipe_table", "activation_table",
]

RECOMPUTE = ("none", "selective", "full")


# --- bytes per parameter: named precision recipes ------------------------------------------------------------------

@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter of each model-state component for one precision recipe (plus what the source counts).

    ``weights``: the copy used in forward/backward; ``gradients``; ``master``: an FP32 copy of the weights kept by
    the optimizer (mixed precision only); ``moments``: Adam's first and second moments. ``activation_element`` is the
    size of one activation element (2 for 16-bit, 4 for FP32); ``rule_of_thumb_activations`` is the seed's crude
    allowance for activations in bytes per parameter (not a model of activations: see :func:`ledger`).
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

    def __post_init__(self):
        for f in ("weights", "gradients", "master", "moments", "activation_element", "rule_of_thumb_activations"):
            object.__setattr__(self, f, _check.nonnegative(f, getattr(self, f)))

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


RECIPES = {
    "fp32-adam": Recipe("fp32-adam", 4, 4, 0, 8, 4, 4,
                        "FP32 weights 4 + FP32 gradients 4 + Adam m and v in FP32 4 + 4 = 16",
                        "Rajbhandari et al. 2020 §3.1; seed 002 (which adds 4P of activations: 20P, 7B → 140 GB)"),
    "mixed-adam": Recipe("mixed-adam", 2, 2, 4, 8, 2, 2,
                         "FP16/BF16 weights 2 + FP16/BF16 gradients 2 + FP32 master 4 + FP32 m and v 4 + 4 = 16 "
                         "(K = 12)",
                         "Rajbhandari et al. 2020 §3.1 (2Ψ + 2Ψ + KΨ, K = 12); seed 002 adds 2P of activations: "
                         "18P, 7B → 126 GB"),
    "mixed-adam-fp32-grads": Recipe("mixed-adam-fp32-grads", 2, 4, 4, 8, 2, 2,
                                    "16-bit weights 2 + FP32 gradients 4 + FP32 master 4 + FP32 m and v 8 = 18",
                                    "Hugging Face Transformers, 'Model training anatomy' (6 bytes of weights = FP32 "
                                    "+ 16-bit copies, 4 bytes of FP32 gradients, 8 bytes of AdamW states)"),
    "bf16-adam": Recipe("bf16-adam", 2, 2, 0, 4, 2, 2,
                        "pure BF16: weights 2 + gradients 2 + m and v in BF16 2 + 2 = 8 (no master copy)",
                        "a lower bound some frameworks allow; numerically riskier (no FP32 master weights)"),
}


def recipe_names() -> list[str]:
    """Names of the precision recipes, in a fixed order.

    >>> recipe_names()
    ['fp32-adam', 'mixed-adam', 'mixed-adam-fp32-grads', 'bf16-adam']
    """
    return list(RECIPES)


def recipe(name) -> Recipe:
    """Look up a precision recipe by name (a :class:`Recipe` passes through); unknown names raise ``KeyError``
    listing the nearest names.

    >>> recipe("mixed-adam").breakdown()
    {'weights': 2.0, 'gradients': 2.0, 'master weights': 4.0, 'optimizer moments': 8.0}
    >>> recipe("mixed")
    Traceback (most recent call last):
    ...
    KeyError: "unknown recipe 'mixed'; nearest known names: mixed-adam, ..."
    """
    if isinstance(name, Recipe):
        return name
    if not isinstance(name, str):
        raise ValueError(f"recipe must be a recipe name (str), got {name!r}")
    key = name.strip().lower().replace("_", "-").replace(" ", "-")
    if key in RECIPES:
        return RECIPES[key]
    near = difflib.get_close_matches(key, list(RECIPES), n=3, cutoff=0.3) or list(RECIPES)
    raise KeyError(f"unknown recipe {name!r}; nearest known names: {', '.join(near)}")


def recipe_table():
    """Every recipe's bytes per parameter by component, with its total, what it counts and its source (a pandas
    DataFrame indexed by recipe name).

    >>> recipe_table().loc["mixed-adam-fp32-grads", "total"]
    np.float64(18.0)
    """
    import pandas as pd

    rows = {n: {**r.breakdown(), "total": r.total, "counts": r.counts, "source": r.source}
            for n, r in RECIPES.items()}
    return pd.DataFrame(rows).T.astype({k: float for k in ("weights", "gradients", "master weights",
                                                            "optimizer moments", "total")})


def state_breakdown(params, recipe_name="mixed-adam") -> dict:
    """Bytes of each model-state component: component = bytes per parameter × Ψ.

    ``params`` Ψ (count). Returns {component: bytes}. Source: Rajbhandari et al. 2020 §3.1.

    >>> {k: v / 1e9 for k, v in state_breakdown(7e9, "fp32-adam").items()}
    {'weights': 28.0, 'gradients': 28.0, 'master weights': 0.0, 'optimizer moments': 56.0}
    """
    p = _check.positive("params", params)
    return {k: v * p for k, v in recipe(recipe_name).breakdown().items()}


def state_bytes(params, recipe_name="mixed-adam") -> float:
    """Model states = (weights + gradients + master + moments) bytes per parameter × Ψ, unsharded.

    The running example: 16 B × 175e9 = 2.8e12 bytes = 35 A100-80GB cards' worth (seed 000, step ①).

    >>> state_bytes(175e9) / 80e9
    35.0
    """
    return sum(state_breakdown(params, recipe_name).values())


def rule_of_thumb_ledger(params, recipe_name="mixed-adam") -> dict:
    """Seed 002's whole-model ledger: model states plus an activation allowance of one weight-sized copy at the
    compute precision (4P for FP32, 2P for mixed precision).

    This is the seed's rule of thumb, not a model of activations (which depend on batch, sequence, layers and
    recomputation: see :func:`activation_bytes_per_layer`). For 7B: FP32 16P + 4P = 140 GB; mixed 16P + 2P =
    126 GB — a 10 % saving, not half, because the FP32 master copy grows the optimizer from 8P to 12P.

    >>> round(sum(rule_of_thumb_ledger(7e9, "fp32-adam").values()) / 1e9)
    140
    >>> round(sum(rule_of_thumb_ledger(7e9, "mixed-adam").values()) / 1e9)
    126
    """
    r = recipe(recipe_name)
    out = state_breakdown(params, r)
    out["activations (rule of thumb)"] = r.rule_of_thumb_activations * _check.positive("params", params)
    return out


# --- ZeRO -------------------------------------------------------------------------------------------------------

def _stage(stage) -> int:
    if isinstance(stage, str) and stage.strip().lower() == "fsdp":
        return 3
    s = _check.integer("stage", stage, minimum=0)
    if s > 3:
        raise ValueError(f"stage must be 0, 1, 2, 3 or 'fsdp', got {stage!r}")
    return s


def sharded_state_breakdown(params, dp, stage, recipe_name="mixed-adam") -> dict:
    """Model-state bytes per GPU by component under ZeRO stage 0–3 over ``dp`` data-parallel ranks.

    Stage 1 shards the optimizer (master + moments), stage 2 also the gradients, stage 3 (= FSDP full sharding) also
    the weights; each sharded component is divided by N_d. Source: Rajbhandari et al. 2020, §5 and Figure 1.

    >>> {k: round(v / 1e9, 3) for k, v in sharded_state_breakdown(7.5e9, 64, 2).items()}
    {'weights': 15.0, 'gradients': 0.234, 'master weights': 0.469, 'optimizer moments': 0.938}
    """
    s = _stage(stage)
    n = _check.integer("dp", dp)
    full = state_breakdown(params, recipe_name)
    shard = {"weights": s >= 3, "gradients": s >= 2, "master weights": s >= 1, "optimizer moments": s >= 1}
    return {k: v / n if shard[k] else v for k, v in full.items()}


def zero_bytes_per_gpu(params, dp, stage, k=12) -> float:
    """Model-state bytes per GPU under ZeRO (Rajbhandari et al. 2020, Figure 1 and §5):

    stage 0: (2 + 2 + K)Ψ; stage 1: 2Ψ + 2Ψ + KΨ/N_d; stage 2: 2Ψ + (2 + K)Ψ/N_d; stage 3 (and FSDP full sharding):
    (2 + 2 + K)Ψ/N_d. ``params`` Ψ (count), ``dp`` N_d (count), ``stage`` 0–3 or ``"fsdp"``, ``k`` K bytes per
    parameter of optimizer state (12 for mixed-precision Adam). Result in bytes.

    The paper's Figure 1 example, Ψ = 7.5B, N_d = 64, K = 12: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.

    >>> [round(zero_bytes_per_gpu(7.5e9, 64, s) / 1e9, 1) for s in range(4)]
    [120.0, 31.4, 16.6, 1.9]
    """
    p = _check.positive("params", params)
    n = _check.integer("dp", dp)
    s = _stage(stage)
    kk = _check.nonnegative("k", k)
    if s == 0:
        return (2 + 2 + kk) * p
    if s == 1:
        return 2 * p + 2 * p + kk * p / n
    if s == 2:
        return 2 * p + (2 + kk) * p / n
    return (2 + 2 + kk) * p / n


# --- activations (Korthikanti et al. 2022) --------------------------------------------------------------------

def activation_bytes_per_layer(seq, batch, hidden, heads, tp=1, sequence_parallel=False, recompute="none") -> float:
    """Activation bytes one transformer layer keeps for the backward pass (Korthikanti et al. 2022, Table 2).

    With s = ``seq``, b = ``batch`` (micro-batch, sequences), h = ``hidden``, a = ``heads``, t = ``tp``:

    * no parallelism: sbh(34 + 5as/h)
    * tensor parallel: sbh(10 + 24/t + 5as/(ht)) — the 10 (layer norms, dropouts, inputs of the blocks) is replicated
    * tensor + sequence parallel: sbh(34/t + 5as/(ht))
    * ``recompute="selective"`` drops the 5as/h attention-score term: sbh(10 + 24/t), or 34sbh/t with sequence
      parallelism
    * ``recompute="full"`` keeps only each layer's input, 2sbh (Table 2); with sequence parallelism that input is
      itself split along the sequence, 2sbh/t (as Megatron-LM stores it) — without that split, full recomputation
      would keep *more* than selective for t > 17.

    16-bit activations, 1-byte dropout masks. Result in bytes. GPT-3 175B (s = 2048, h = 12288, a = 96, b = 1):
    5as/h = 80, so one layer holds 114·sbh ≈ 2.87 GB without parallelism:

    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96) / 1e9, 2)
    2.87
    >>> round(activation_bytes_per_layer(2048, 1, 12288, 96, tp=8, sequence_parallel=True) / 1e6)
    359
    """
    s = _check.integer("seq", seq)
    b = _check.integer("batch", batch)
    h = _check.integer("hidden", hidden)
    a = _check.integer("heads", heads)
    t = _check.integer("tp", tp)
    _check.flag("sequence_parallel", sequence_parallel)
    rc = _check.choice("recompute", recompute, RECOMPUTE)
    sbh = float(s) * b * h
    if rc == "full":
        return 2 * sbh / (t if sequence_parallel else 1)
    linear = 34.0 / t if sequence_parallel else 10.0 + 24.0 / t
    scores = 0.0 if rc == "selective" else 5.0 * a * s / (h * t)
    return sbh * (linear + scores)


def activation_bytes_per_stage(seq, batch, hidden, heads, layers, pp=1, tp=1, sequence_parallel=False,
                               recompute="none", microbatches=None, virtual_stages=1) -> float:
    """Activation bytes on the busiest pipeline stage (the first) under the 1F1B schedule.

    The first stage holds L/p layers for min(p, m) micro-batches in flight, i.e. about L layers' worth when
    m ≥ p; the interleaved schedule with v virtual stages multiplies this by (1 + (p − 1)/(p·v)) (Korthikanti et al.
    2022, §4.2.3). ``microbatches`` m defaults to p. Embedding and output-layer activations are left out (the paper
    finds them small). Result in bytes.

    GPT-3 175B on TP 8 × PP 8 with sequence parallelism and selective recomputation (the paper's Table 3 setting),
    micro-batch 1: 96 × 34·sbh/8 ≈ 10.3 GB:

    >>> round(activation_bytes_per_stage(2048, 1, 12288, 96, 96, pp=8, tp=8, sequence_parallel=True,
    ...                                  recompute="selective", microbatches=64) / 1e9, 1)
    10.3
    """
    l = _check.integer("layers", layers)
    p = _check.integer("pp", pp)
    v = _check.integer("virtual_stages", virtual_stages)
    if l % p:
        raise ValueError(f"layers ({l}) must be divisible by pp ({p})")
    m = p if microbatches is None else _check.integer("microbatches", microbatches)
    per_layer = activation_bytes_per_layer(seq, batch, hidden, heads, tp, sequence_parallel, recompute)
    factor = 1.0 + (p - 1) / (p * v) if v > 1 else 1.0
    return per_layer * (l / p) * min(p, m) * factor


def activation_table(model_name="175B", microbatch=1, tp=8):
    """Korthikanti et al. 2022's Table 2 evaluated for one model: activation bytes per layer (and for all layers)
    under each combination of tensor parallelism, sequence parallelism and recomputation (a pandas DataFrame, GB).

    >>> float(round(activation_table().loc["TP + SP + selective", "per layer (GB)"], 3))
    0.107
    """
    import pandas as pd

    m = model(model_name)
    cases = {"no parallelism": (1, False, "none"), "TP": (tp, False, "none"), "TP + SP": (tp, True, "none"),
             "TP + selective": (tp, False, "selective"), "TP + SP + selective": (tp, True, "selective"),
             "full recompute": (tp, False, "full"), "TP + SP + full": (tp, True, "full")}
    rows = {}
    for name, (t, sp, rc) in cases.items():
        b = activation_bytes_per_layer(m.seq, microbatch, m.hidden, m.heads, t, sp, rc)
        rows[name] = {"tp": t, "per layer (GB)": b / 1e9, f"{m.layers} layers (GB)": b * m.layers / 1e9}
    return pd.DataFrame(rows).T.astype({"tp": int})


def checkpointed_activation_bytes(layers, every, layer_bytes, boundary_bytes) -> float:
    """Activations with checkpoints every ``every`` layers (Chen et al. 2016): keep the input of every ``every``-th
    layer, ⌈L/k⌉ · boundary, plus one segment's full activations while it is recomputed, k · layer.

    ``layer_bytes``: one layer's full activations; ``boundary_bytes``: one layer's input (2sbh). The price is one
    extra forward pass: forward 1 + backward 2 + recompute 1, i.e. about +33 % compute. Result in bytes.

    GPT-3 175B, b = 1, keep every 4th layer: from 96 × 114·sbh to 24 × 2·sbh + 4 × 114·sbh, 95 % saved:

    >>> sbh = 2048 * 12288
    >>> round(1 - checkpointed_activation_bytes(96, 4, 114 * sbh, 2 * sbh) / (96 * 114 * sbh), 2)
    0.95
    """
    l = _check.integer("layers", layers)
    k = _check.integer("every", every)
    if k > l:
        raise ValueError(f"every ({k}) must not exceed layers ({l})")
    lb = _check.nonnegative("layer_bytes", layer_bytes)
    bb = _check.nonnegative("boundary_bytes", boundary_bytes)
    return math.ceil(l / k) * bb + k * lb


# --- models -------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Model:
    """A GPT-style model: parameters Ψ (nominal count), layers, hidden size, attention heads, sequence length,
    vocabulary, its source; for a mixture-of-experts model, experts per layer and experts per token (the memory
    functions treat every parameter as dense; expert parallelism is validated and its traffic counted in
    :mod:`chipchain.parallel`)."""

    name: str
    params: float
    layers: int
    hidden: int
    heads: int
    seq: int
    vocab: int = 0
    source: str = ""
    experts: int = 0            #: experts per MoE layer (0: a dense model)
    top_k: int = 0              #: experts each token is routed to

    def __post_init__(self):
        _check.positive("params", self.params)
        for f in ("layers", "hidden", "heads", "seq"):
            _check.integer(f, getattr(self, f))
        _check.integer("vocab", self.vocab, minimum=0)
        _check.integer("experts", self.experts, minimum=0)
        _check.integer("top_k", self.top_k, minimum=0)
        if self.experts and not 1 <= self.top_k <= self.experts:
            raise ValueError(f"top_k must be between 1 and experts ({self.experts}), got {self.top_k!r}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden ({self.hidden}) must be divisible by heads ({self.heads})")


MODELS = {
    "7B": Model("7B", 7e9, 32, 4096, 32, 4096, 32000, "Llama 2 7B shape (Touvron et al. 2023, Table 1); nominal 7e9"),
    "13B": Model("13B", 13e9, 40, 5120, 40, 4096, 32000, "Llama 2 13B shape (Touvron et al. 2023); nominal 13e9"),
    "70B": Model("70B", 70e9, 80, 8192, 64, 4096, 32000,
                 "Llama 2 70B shape (Touvron et al. 2023); nominal 70e9; its grouped-query attention is ignored"),
    "22B": Model("22B", 22e9, 48, 6144, 64, 2048, 51200, "Korthikanti et al. 2022, Table 3"),
    "175B": Model("175B", 175e9, 96, 12288, 96, 2048, 51200, "GPT-3 (Brown et al. 2020); Korthikanti et al. Table 3"),
    "530B": Model("530B", 530e9, 105, 20480, 128, 2048, 51200, "MT-NLG; Korthikanti et al. 2022, Table 3"),
    "1T": Model("1T", 1e12, 128, 25600, 160, 2048, 51200, "Korthikanti et al. 2022, Table 3"),
}


def model(name) -> Model:
    """A model preset by name ("7B", "13B", "70B", "22B", "175B", "530B", "1T"); a :class:`Model` passes through.

    >>> model("175B").layers
    96
    """
    if isinstance(name, Model):
        return name
    if not isinstance(name, str):
        raise ValueError(f"model must be a model name (str) or a Model, got {name!r}")
    key = name.strip().upper()
    if key in MODELS:
        return MODELS[key]
    near = difflib.get_close_matches(key, list(MODELS), n=3, cutoff=0.3) or list(MODELS)
    raise KeyError(f"unknown model {name!r}; nearest known names: {', '.join(near)}")


# --- the ledger per GPU ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fit:
    """Whether a ledger fits a card: ``margin`` = capacity − total bytes (negative means out of memory)."""

    fits: bool
    margin: float
    capacity: float
    accelerator: str

    @property
    def message(self) -> str:
        from .units import fmt_bytes

        if self.fits:
            return f"fits on {self.accelerator} with {fmt_bytes(self.margin)} to spare"
        return f"OOM on {self.accelerator} by {fmt_bytes(-self.margin)}"


@dataclass(frozen=True)
class Ledger:
    """Memory per GPU by component (bytes), for one model, plan and recipe."""

    components: dict

    @property
    def total(self) -> float:
        return sum(self.components.values())

    @property
    def states(self) -> float:
        return sum(v for k, v in self.components.items() if k != "activations")

    def fits(self, accelerator, reserve=0.0) -> Fit:
        """Compare the total with the card's memory less ``reserve`` bytes (CUDA context, fragmentation).

        >>> ledger("7B", microbatch=1, recompute="full").fits("H100").message
        'OOM on H100-SXM by 33 GB'
        """
        from . import hardware

        acc = hardware.get(accelerator)
        cap = acc.require("memory_bytes") - _check.nonnegative("reserve", reserve)
        margin = cap - self.total
        return Fit(margin >= 0, margin, cap, acc.name)


def ledger(model_name, recipe_name="mixed-adam", *, microbatch=1, seq=None, tp=1, pp=1, dp=1, zero=0,
           sequence_parallel=False, recompute="none", microbatches=None, virtual_stages=1) -> Ledger:
    """Memory per GPU: model states of Ψ/(t·p) parameters sharded by ZeRO over ``dp``, plus the first pipeline
    stage's activations (:func:`activation_bytes_per_stage`).

    Activations are scaled by the recipe's activation element size over 2 (FP32 training keeps twice the bytes;
    approximate, since dropout masks stay 1 byte). Embedding tables are spread evenly (an approximation: in practice
    the first and last stage hold more). Result: a :class:`Ledger`.

    175B on 1,024 A100 as TP 8 × PP 16 × DP 8 with ZeRO-1, sequence parallelism and selective recomputation:

    >>> L = ledger("175B", tp=8, pp=16, dp=8, zero=1, sequence_parallel=True, recompute="selective",
    ...            microbatches=16)
    >>> round(L.states / 1e9, 2), round(L.components["activations"] / 1e9, 2)
    (7.52, 10.27)
    """
    m = model(model_name)
    r = recipe(recipe_name)
    t = _check.integer("tp", tp)
    p = _check.integer("pp", pp)
    s = m.seq if seq is None else _check.integer("seq", seq)
    if m.heads % t:
        raise ValueError(f"tp ({t}) must divide the number of heads ({m.heads})")
    comps = sharded_state_breakdown(m.params / (t * p), dp, zero, r)
    acts = activation_bytes_per_stage(s, microbatch, m.hidden, m.heads, m.layers, p, t, sequence_parallel,
                                      recompute, microbatches, virtual_stages)
    comps["activations"] = acts * r.activation_element / 2
    return Ledger(comps)


def min_gpus(total_bytes, capacity, usable_fraction=1.0) -> int:
    """Fewest cards whose memory holds ``total_bytes`` when everything is fully sharded: ⌈M / (f·C)⌉.

    A lower bound: it assumes perfect sharding and ignores activations unless they are in ``total_bytes``.

    >>> min_gpus(112e9, 24e9), min_gpus(112e9, 80e9)
    (5, 2)
    """
    m = _check.nonnegative("total_bytes", total_bytes)
    c = _check.positive("capacity", capacity)
    f = _check.fraction("usable_fraction", usable_fraction)
    return max(1, math.ceil(m / (c * f) - 1e-12))


def inference_weight_bytes(params, dtype="bf16") -> float:
    """Weights for inference: Ψ × bytes per element of ``dtype`` ("fp16", "bf16", "int8", "int4", …); the KV cache
    and runtime buffers come on top.

    >>> inference_weight_bytes(70e9, "int4") / 1e9
    35.0
    """
    from .units import bytes_per_element

    return _check.positive("params", params) * bytes_per_element(dtype)


def sizing_table(params=(7e9, 13e9, 70e9), recipe_name="mixed-adam", cards=(24e9, 80e9)):
    """Seed 004's sizing table, recomputed: training states, the fewest cards to hold them fully sharded, and the
    inference weights after INT8/INT4 quantization with the fewest cards for those. A pandas DataFrame in GB and
    cards (lower bounds: activations, KV cache and framework overhead excluded).

    >>> sizing_table().loc["70B", "train states (GB)"]
    np.float64(1120.0)
    """
    import pandas as pd

    rows = {}
    for p in params:
        states = state_bytes(p, recipe_name)
        row = {"train states (GB)": states / 1e9}
        for c in cards:
            row[f"min {c / 1e9:g} GB cards (train)"] = min_gpus(states, c)
        for dt in ("bf16", "int8", "int4"):
            w = inference_weight_bytes(p, dt)
            row[f"{dt} weights (GB)"] = w / 1e9
        for dt in ("int8", "int4"):
            row[f"min {cards[0] / 1e9:g} GB cards ({dt} infer)"] = min_gpus(inference_weight_bytes(p, dt), cards[0])
        rows[f"{p / 1e9:g}B"] = row
    df = pd.DataFrame(rows).T
    return df.astype({c: int for c in df.columns if c.startswith("min")})


def plot_ledgers(ledgers, capacity=None, capacity_label="card", ax=None):
    """Horizontal stacked bars, one per ledger: ``ledgers`` maps a label to {component: bytes}; an optional
    ``capacity`` (bytes) is drawn as a vertical line. Values are shown in GB. Returns the Axes."""
    from . import plotting

    ax = plotting.axes(ax)
    labels = list(ledgers)
    comps = list(dict.fromkeys(k for d in ledgers.values() for k in d))
    left = [0.0] * len(labels)
    for i, comp in enumerate(comps):
        vals = [ledgers[l].get(comp, 0.0) / 1e9 for l in labels]
        ax.barh(labels, vals, left=left, color=plotting.color(i), label=comp)
        left = [a + b for a, b in zip(left, vals)]
    for y, total in enumerate(left):
        ax.text(total, y, f" {total:,.0f} GB", va="center", fontsize=9)
    if capacity is not None:
        ax.axvline(_check.positive("capacity", capacity) / 1e9, color="black", linestyle="--", label=capacity_label)
    ax.set_xlabel("memory (GB, decimal)")
    ax.set_xlim(0, max(left + [capacity / 1e9 if capacity else 0]) * 1.18)
    ax.invert_yaxis()
    ax.legend(loc="lower right", fontsize=8)
    return ax


# --- explorable ------------------------------------------------------------------------------------------------

def _memory_view(model_name, shape, recipe_name, recompute, zero, gpu, dp=8) -> str:
    from . import plotting
    from .units import fmt_bytes

    b, s = shape
    L = ledger(model_name, recipe_name, microbatch=b, seq=s, dp=dp, zero=zero, recompute=recompute)
    fit = L.fits(gpu)
    segs = [(k, v) for k, v in L.components.items() if v > 0]
    alt = (f"Memory per GPU for the {model_name} model: {fmt_bytes(L.total)} against {fmt_bytes(fit.capacity)} "
           f"on {fit.accelerator}; {fit.message}")
    bar = plotting.svg_bars([(k, v / 1e9) for k, v in segs], capacity=fit.capacity / 1e9,
                            capacity_label=fit.accelerator, unit_format=lambda v: f"{v:,.1f} GB", alt=alt)
    verdict = (f'<p style="color:{"#009E73" if fit.fits else "#D55E00"}"><strong>{"Fits" if fit.fits else "OOM"}'
               f'</strong>: {fit.message}.</p>')
    rows = "".join(f"<tr><td>{k}</td><td>{fmt_bytes(v, 3)}</td></tr>" for k, v in segs)
    table = (f'<table class="cc-table"><caption>Per GPU, {dp}-way data parallel, ZeRO-{zero}</caption>{rows}'
             f"<tr><td><strong>total</strong></td><td><strong>{fmt_bytes(L.total, 3)}</strong></td></tr></table>")
    return bar + verdict + table


from . import widgets as _widgets  # noqa: E402  (light: imports ipywidgets only when a widget is built)


@_widgets.explorer
def memory_explorer():
    """Ch. 6 explorer: model size, micro-batch × sequence, recipe, recomputation, ZeRO stage (8-way data parallel)
    and card → the stacked memory bar against the card's capacity, with "fits" or "OOM by X GB"."""
    W = _widgets
    controls = [
        W.Choice("model_name", "Model", {"7B": "7B", "13B": "13B", "70B": "70B"}),
        W.Choice("shape", "Micro-batch × sequence", {"1 × 2,048": (1, 2048), "4 × 4,096": (4, 4096)}),
        W.Choice("recipe_name", "Precision recipe", {"FP32 + Adam (16 B)": "fp32-adam",
                                                     "mixed + Adam (16 B)": "mixed-adam"}, value="mixed-adam"),
        W.Choice("recompute", "Recomputation", {"none": "none", "selective": "selective", "full": "full"},
                 value="selective"),
        W.Slider("zero", "ZeRO stage (8 GPUs)", [0, 1, 2, 3], value=3),
        W.Choice("gpu", "Card", {"RTX 4090 (24 GB)": "RTX-4090", "A100/H100 (80 GB)": "H100-SXM"},
                 value="H100-SXM"),
    ]
    return W.explore(_memory_view, controls, title="The memory ledger of one GPU")
