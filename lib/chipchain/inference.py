"""Inference: prefill and decode on the roofline, the KV cache, tokens per second, joules per token.

Serving a language model runs in two phases with opposite characters:

* **Prefill** reads the prompt of ``s`` tokens in one pass. Every weight fetched from memory is used ``s`` times, so
  the arithmetic intensity is about ``2s / b`` FLOP per byte (``b`` bytes per weight): far above any GPU's ridge
  point — compute-bound.
* **Decode** produces one token per sequence per step. Every weight is fetched once per step and used once per
  sequence in the batch, and each sequence also reads its whole KV cache. At batch 1 the intensity is about
  ``2 / b`` FLOP/byte — memory-bound, and the speed limit is ``tokens/s ≤ bandwidth / bytes read per token``.
  Batching ``B`` sequences multiplies the useful work per weight byte by ``B`` and walks decode up the roofline's
  slope toward the compute roof; the KV cache, which grows with batch × context, pulls it back.

Conventions: FLOPs count a multiply–add as 2; bytes are decimal; peak throughput is dense; weights and KV cache can
be stored in ``bf16``/``fp16`` (2 bytes), ``fp8``/``int8`` (1 byte) or ``int4`` (0.5 byte). Times are roofline
lower bounds (``max(F/peak, Q/bandwidth)``); real kernels run slower, so every tokens/s figure is an upper bound.

The model shapes live in ``data/models.csv`` (each row with its source and check level); edge devices and
inference ASICs in ``data/serving_devices.csv``; foundry process dates in ``data/process_nodes.csv``.

>>> round(kv_bytes_per_token(layers=80, kv_heads=8, head_dim=128))   # Llama 2 70B, BF16
327680
>>> round(decode("H100", "Llama-3-8B", context=1, batch=1).tokens_per_second)
209
"""
from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, roofline, widgets
from .hardware import get as _get_accelerator

__all__ = [
    "ModelConfig", "ServingDevice", "PhaseEstimate", "STORAGE_DTYPES", "model", "models", "model_table",
    "model_from_walkthrough", "dense_params", "kv_bytes_per_token", "kv_cache_bytes", "weight_bytes",
    "weights_read_per_step", "prefill_flops", "decode_flops", "prefill_bytes", "decode_bytes", "prefill_intensity",
    "decode_intensity", "compute_dtype", "decode_tokens_per_second_bound", "prefill", "decode", "critical_batch",
    "max_batch", "gpus_to_hold", "batch_table", "serving_table", "quantization_table", "energy_per_token",
    "energy_per_query", "device", "devices", "device_table",
    "largest_model_that_fits", "edge_fit_table", "doubling_projection", "process_nodes", "node_intervals",
    "plot_moore_projection", "decode_roofline_points", "explore_serving",
]

#: bytes per element of the storage formats the serving functions accept
STORAGE_DTYPES = {"bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def _bytes(name: str, dtype) -> float:
    return STORAGE_DTYPES[_check.choice(name, dtype, STORAGE_DTYPES)]


# --- model shapes ---------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only transformer, as inference sees it. Counts are plain numbers (parameters, not
    billions). ``attention`` is ``"mha"``, ``"gqa"`` or ``"mla"``; MLA models cache ``kv_lora_rank + rope_head_dim``
    elements per layer instead of keys and values per head."""

    name: str
    params: float                 #: total parameters (resident in memory)
    active_params: float          #: parameters used per token (= params for a dense model)
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    attention: str = "mha"
    kv_lora_rank: int | None = None
    rope_head_dim: int | None = None
    experts: int | None = None    #: routed experts per MoE layer
    experts_active: int | None = None
    ffn: int | None = None
    mlp_matrices: int = 3
    vocab: int = 0
    tied_embeddings: bool = False
    max_context: int | None = None
    family: str = ""
    year: int | None = None
    checked: str = "U"
    source: str = ""
    notes: str = ""

    def __post_init__(self):
        _check.positive("params", self.params)
        _check.positive("active_params", self.active_params)
        if self.active_params > self.params:
            raise ValueError(f"active_params ({self.active_params:g}) cannot exceed params ({self.params:g})")
        for n in ("layers", "hidden", "heads", "kv_heads", "head_dim"):
            _check.integer(n, getattr(self, n))
        if self.kv_heads > self.heads:
            raise ValueError(f"kv_heads ({self.kv_heads}) cannot exceed heads ({self.heads})")
        _check.choice("attention", self.attention, ("mha", "gqa", "mla"))
        if self.attention == "mla":
            _check.integer("kv_lora_rank", self.kv_lora_rank)
            _check.integer("rope_head_dim", self.rope_head_dim, minimum=0)
        if (self.experts is None) != (self.experts_active is None):
            raise ValueError("experts and experts_active must be given together")
        if self.experts is not None:
            _check.integer("experts", self.experts)
            _check.integer("experts_active", self.experts_active)
            if self.experts_active > self.experts:
                raise ValueError(f"experts_active ({self.experts_active}) cannot exceed experts ({self.experts})")

    @property
    def is_moe(self) -> bool:
        return self.experts is not None and self.active_params < self.params

    @property
    def d_attn(self) -> int:
        """Query width heads × head_dim (the ``d_attn`` of Kaplan et al. 2020, Table 1)."""
        return self.heads * self.head_dim

    def kv_bytes_per_token(self, kv_dtype="bf16") -> float:
        """KV-cache bytes one token adds across all layers (see :func:`kv_bytes_per_token`)."""
        b = _bytes("kv_dtype", kv_dtype)
        if self.attention == "mla":
            return kv_bytes_per_token(self.layers, bytes_per_element=b,
                                      latent_dim=self.kv_lora_rank + self.rope_head_dim)
        return kv_bytes_per_token(self.layers, self.kv_heads, self.head_dim, bytes_per_element=b)


def _opt_int(text):
    text = text.strip()
    return int(float(text)) if text else None


def _row_to_model(row: dict) -> ModelConfig:
    return ModelConfig(
        name=row["name"], params=float(row["params_billion"]) * 1e9,
        active_params=float(row["active_params_billion"]) * 1e9, layers=int(row["layers"]),
        hidden=int(row["hidden"]), heads=int(row["heads"]), kv_heads=int(row["kv_heads"]),
        head_dim=int(row["head_dim"]), attention=row["attention"], kv_lora_rank=_opt_int(row["kv_lora_rank"]),
        rope_head_dim=_opt_int(row["rope_head_dim"]), experts=_opt_int(row["experts"]),
        experts_active=_opt_int(row["experts_active"]), ffn=_opt_int(row["ffn"]),
        mlp_matrices=int(row["mlp_matrices"]), vocab=int(row["vocab"]), tied_embeddings=row["tied_embeddings"] == "1",
        max_context=_opt_int(row["max_context"]), family=row["family"], year=int(row["year"]),
        checked=row["checked"], source=row["source"], notes=row["notes"],
    )


def _read_csv(filename: str) -> tuple:
    with resources.files("chipchain").joinpath(f"data/{filename}").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


@lru_cache(maxsize=1)
def _models() -> dict:
    index = {}
    for row in _read_csv("models.csv"):
        m = _row_to_model(row)
        for k in (m.name, *[a for a in row["aliases"].split(";") if a]):
            index[_check.key(k)] = m
    return index


def models() -> list[str]:
    """Names of the models in ``data/models.csv``, in file order.

    >>> models()[:2]
    ['GPT-3-175B', 'Llama-2-7B']
    """
    return list(dict.fromkeys(m.name for m in _models().values()))


def model(name) -> ModelConfig:
    """Look up a model shape by name or alias (case, spaces and underscores ignored); a :class:`ModelConfig`
    passes through. Unknown names raise ``KeyError`` listing the nearest names.

    >>> m = model("llama 2 70b")
    >>> m.layers, m.heads, m.kv_heads, m.head_dim
    (80, 64, 8, 128)
    >>> model("Llama-4-70B")
    Traceback (most recent call last):
    ...
    KeyError: "unknown model 'Llama-4-70B'; nearest known names: Llama-3-70B, Llama-2-70B, Llama-2-7B, Llama-3.1-405B"
    """
    if isinstance(name, ModelConfig):
        return name
    return _check.lookup(_models(), name, "model", argument="model")


def model_table():
    """The model catalog as a pandas DataFrame (one row per model; parameters in billions; KV bytes per token in
    BF16 computed by :func:`kv_bytes_per_token`).

    >>> model_table().loc["Llama-3.1-405B", "kv_KB_per_token_bf16"]
    np.float64(516.096)
    """
    import pandas as pd

    rows = []
    for n in models():
        m = model(n)
        rows.append({"model": m.name, "params_B": m.params / 1e9, "active_B": m.active_params / 1e9,
                     "layers": m.layers, "hidden": m.hidden, "heads": m.heads, "kv_heads": m.kv_heads,
                     "head_dim": m.head_dim, "attention": m.attention.upper(),
                     "kv_KB_per_token_bf16": m.kv_bytes_per_token("bf16") / 1e3, "checked": m.checked,
                     "source": m.source})
    return pd.DataFrame(rows).set_index("model")


def model_from_walkthrough(w=None) -> ModelConfig:
    """The running example's model (a dense GPT-3-shaped 175 B with multi-head attention) built from a
    :class:`~chipchain.walkthrough.Walkthrough`, so overriding the walkthrough's shape changes this model too.

    >>> m = model_from_walkthrough()
    >>> m.params, m.layers, m.kv_heads, m.head_dim
    (175000000000.0, 96, 96, 128)
    """
    from .walkthrough import Walkthrough

    w = Walkthrough() if w is None else w
    if w.hidden % w.heads:
        raise ValueError(f"hidden ({w.hidden}) must be divisible by heads ({w.heads})")
    return ModelConfig(name=f"{w.params / 1e9:g}B (walkthrough)", params=w.params, active_params=w.params,
                       layers=w.layers, hidden=w.hidden, heads=w.heads, kv_heads=w.heads,
                       head_dim=w.hidden // w.heads, attention="mha", mlp_matrices=2, ffn=4 * w.hidden,
                       vocab=w.vocab, tied_embeddings=True, max_context=w.seq, checked="V2",
                       source="Brown et al. 2020 Table 2.1 (via chipchain.walkthrough)")


def dense_params(layers, hidden, heads, kv_heads, head_dim, ffn, vocab, mlp_matrices=3, tied_embeddings=False):
    """Parameters of a dense decoder from its shape (biases and norms ignored):

    N = l·(2·h·n_h·d_h + 2·h·n_kv·d_h + m·h·f) + V·h·(1 if tied else 2)

    (query and output projections, key and value projections shared by ``n_kv`` heads, an MLP of ``m`` matrices
    of h × f — 3 for SwiGLU, 2 for GELU — and the embedding, untied from the output layer unless stated).
    Llama 2 70B (80 layers, h = 8,192, 64 heads, 8 KV heads, f = 28,672, V = 32,000; Touvron et al. 2023):

    >>> round(dense_params(80, 8192, 64, 8, 128, 28672, 32000) / 1e9, 2)
    68.98
    """
    l, h = _check.integer("layers", layers), _check.integer("hidden", hidden)
    nh, nkv = _check.integer("heads", heads), _check.integer("kv_heads", kv_heads)
    dh, f = _check.integer("head_dim", head_dim), _check.integer("ffn", ffn)
    v, m = _check.integer("vocab", vocab, minimum=0), _check.integer("mlp_matrices", mlp_matrices)
    _check.flag("tied_embeddings", tied_embeddings)
    return float(l * (2 * h * nh * dh + 2 * h * nkv * dh + m * h * f) + v * h * (1 if tied_embeddings else 2))


# --- KV cache and weights -------------------------------------------------------------------------------------------

def kv_bytes_per_token(layers, kv_heads=None, head_dim=None, bytes_per_element=2.0, latent_dim=None) -> float:
    """KV-cache bytes one token adds, over all layers.

    Multi-head and grouped-query attention cache a key and a value per KV head and layer:
    ``2 · l · n_kv · d_h · b``. Multi-head latent attention (MLA, DeepSeek-AI 2024, DeepSeek-V2 Sec. 2.1.2–2.1.3)
    caches one compressed latent plus a decoupled RoPE key per layer: ``l · (d_c + d_h^R) · b``, with
    ``latent_dim = d_c + d_h^R``. Units: counts in, ``bytes_per_element`` in bytes, result in bytes.

    Pinned to Zhao et al. 2025 (Insights into DeepSeek-V3), Table 1, BF16: Llama 3.1 405B 516.096 KB;
    DeepSeek-V3 70.272 KB per token:

    >>> kv_bytes_per_token(126, 8, 128), kv_bytes_per_token(61, latent_dim=512 + 64)
    (516096.0, 70272.0)
    """
    l = _check.integer("layers", layers)
    b = _check.positive("bytes_per_element", bytes_per_element)
    if latent_dim is not None:
        if kv_heads is not None or head_dim is not None:
            raise ValueError("give either latent_dim (MLA) or kv_heads and head_dim (MHA/GQA), not both")
        return float(l * _check.integer("latent_dim", latent_dim) * b)
    if kv_heads is None or head_dim is None:
        raise ValueError("kv_heads and head_dim are required unless latent_dim is given")
    return float(2 * l * _check.integer("kv_heads", kv_heads) * _check.integer("head_dim", head_dim) * b)


def kv_cache_bytes(model_, context, batch=1, kv_dtype="bf16") -> float:
    """KV cache of ``batch`` sequences of ``context`` tokens: ``B · c · kv_bytes_per_token`` (bytes).

    The running example's 175 B model (96 layers, 96 heads of 128) at its 2,048-token context in BF16:

    >>> round(kv_cache_bytes(model_from_walkthrough(), 2048) / 1e9, 2)
    9.66
    """
    m = model(model_)
    return _check.integer("batch", batch) * _check.integer("context", context) * m.kv_bytes_per_token(kv_dtype)


def weight_bytes(model_, dtype="bf16") -> float:
    """Bytes to hold all weights: ``N · b`` (every expert of an MoE model is resident).

    >>> weight_bytes("Llama-2-70B", "int4") / 1e9
    34.49
    """
    return model(model_).params * _bytes("dtype", dtype)


def weights_read_per_step(model_, batch=1, dtype="bf16") -> float:
    """Weight bytes one forward step over ``batch`` tokens reads from memory.

    Dense: all weights, ``N · b``, whatever the batch. Mixture of experts, assuming each token picks ``k`` of ``E``
    routed experts uniformly and independently (the balance DeepSeek's router aims for): the shared part ``S`` is
    read once, and each routed expert is read if any token chose it,

        W(B) = b · [S + R · (1 − (1 − k/E)^B)],  R = (N − N_act) / (1 − k/E),  S = N − R.

    DeepSeek-V3 (671 B total, 37 B active, 8 of 256 experts) in FP8 at batch 1 and 256:

    >>> [round(weights_read_per_step("DeepSeek-V3", b, "fp8") / 1e9) for b in (1, 256)]
    [37, 671]
    """
    m = model(model_)
    b = _bytes("dtype", dtype)
    B = _check.integer("batch", batch)
    if not m.is_moe:
        return m.params * b
    frac = m.experts_active / m.experts
    routed = (m.params - m.active_params) / (1 - frac)
    shared = m.params - routed
    return b * (shared + routed * (1 - (1 - frac) ** B))


# --- FLOPs and bytes of the two phases ------------------------------------------------------------------------------

def prefill_flops(model_, prompt_tokens, batch=1) -> float:
    """FLOPs to prefill ``batch`` prompts of ``s`` tokens: ``B · (2·N_act·s + 2·l·s²·d_attn)``.

    The first term is the matmuls (2 FLOPs per active parameter per token); the second is causal attention
    (QKᵀ and A·V, 4·l·i·d_attn for the token at position i, summed over i < s). Kaplan et al. 2020, Table 1.

    >>> f"{prefill_flops('Llama-3-8B', 2048):.3g}"
    '3.4e+13'
    """
    m = model(model_)
    s = _check.integer("prompt_tokens", prompt_tokens)
    B = _check.integer("batch", batch)
    return B * (2.0 * m.active_params * s + 2.0 * m.layers * s * s * m.d_attn)


def decode_flops(model_, context, batch=1) -> float:
    """FLOPs of one decode step (one new token for each of ``batch`` sequences that hold ``context`` tokens):
    ``B · (2·N_act + 4·l·c·d_attn)`` (Kaplan et al. 2020, Table 1, at context c).

    For MLA the attention term uses heads × head_dim as for MHA — an approximation; at the contexts shown the
    2·N_act term dominates.

    >>> f"{decode_flops('Llama-3-8B', 1):.4g}"
    '1.606e+10'
    """
    m = model(model_)
    c = _check.integer("context", context)
    B = _check.integer("batch", batch)
    return B * (2.0 * m.active_params + 4.0 * m.layers * c * m.d_attn)


def prefill_bytes(model_, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16") -> float:
    """Minimum bytes prefill moves: the weights once plus the KV cache it writes,
    ``W(B·s) + B·s·kv`` (activations stay on chip in this idealisation).

    >>> round(prefill_bytes("Llama-3-8B", 2048) / 1e9, 2)
    16.33
    """
    m = model(model_)
    s = _check.integer("prompt_tokens", prompt_tokens)
    B = _check.integer("batch", batch)
    return weights_read_per_step(m, B * s, weight_dtype) + B * s * m.kv_bytes_per_token(kv_dtype)


def decode_bytes(model_, context, batch=1, weight_dtype="bf16", kv_dtype="bf16") -> float:
    """Minimum bytes one decode step moves: the weights (:func:`weights_read_per_step`), each sequence's cache of
    ``context`` tokens, and the one new token's keys and values written back: ``W(B) + B·(c + 1)·kv``.

    >>> round(decode_bytes("Llama-2-70B", 4096, 1) / 1e9, 2)
    139.3
    """
    m = model(model_)
    c = _check.integer("context", context)
    B = _check.integer("batch", batch)
    return weights_read_per_step(m, B, weight_dtype) + B * (c + 1) * m.kv_bytes_per_token(kv_dtype)


def prefill_intensity(model_, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16") -> float:
    """Arithmetic intensity of prefill, FLOP/byte (:func:`chipchain.roofline.arithmetic_intensity`).

    A 2,048-token prompt to Llama 3 8B in BF16 — roughly 2s/b:

    >>> round(prefill_intensity("Llama-3-8B", 2048))
    2082
    """
    return roofline.arithmetic_intensity(prefill_flops(model_, prompt_tokens, batch),
                                         prefill_bytes(model_, prompt_tokens, batch, weight_dtype, kv_dtype))


def decode_intensity(model_, context, batch=1, weight_dtype="bf16", kv_dtype="bf16") -> float:
    """Arithmetic intensity of one decode step, FLOP/byte. About ``2B/b`` while the weights dominate the bytes;
    it saturates at ``(2N + 4lcd)/(c·kv)`` once the KV cache does.

    >>> round(decode_intensity("Llama-3-8B", 1, 1), 2), round(decode_intensity("Llama-3-8B", 1, 64), 1)
    (1.0, 63.9)
    """
    return roofline.arithmetic_intensity(decode_flops(model_, context, batch),
                                         decode_bytes(model_, context, batch, weight_dtype, kv_dtype))


def compute_dtype(accelerator, weight_dtype="bf16") -> str:
    """The precision the matmuls run in, given how the weights are stored.

    ``fp8`` and ``int8`` weights use the accelerator's FP8 / INT8 tensor cores when it has them; otherwise (and
    always for ``int4``, whose kernels dequantise to 16 bits, as GPTQ/AWQ-style weight-only schemes do) the math
    runs in BF16 (FP16 on parts with no BF16 figure).

    >>> compute_dtype("H100", "fp8"), compute_dtype("A100", "fp8"), compute_dtype("H100", "int4")
    ('fp8', 'bf16', 'bf16')
    """
    acc = _get_accelerator(accelerator)
    w = _check.choice("weight_dtype", weight_dtype, STORAGE_DTYPES)
    have = acc.precisions()
    if w in ("fp8", "int8") and w in have:
        return w
    for d in ("bf16", "fp16"):
        if d in have:
            return d
    raise ValueError(f"{acc.name} has no BF16 or FP16 peak in the catalog (it has: {', '.join(have) or 'none'})")


def decode_tokens_per_second_bound(bandwidth, weight_bytes_, kv_bytes=0.0) -> float:
    """Upper bound on one sequence's decode speed when memory-bound:

        tokens/s ≤ memory bandwidth / bytes read per token = BW / (W + KV)

    ``bandwidth`` bytes/s; ``weight_bytes_`` and ``kv_bytes`` bytes read per generated token. Llama 3 8B in BF16
    (16.06 GB) on an H100 (3.35 TB/s):

    >>> round(decode_tokens_per_second_bound(3.35e12, 16.06e9))
    209
    """
    bw = _check.positive("bandwidth", bandwidth)
    return bw / (_check.positive("weight_bytes", weight_bytes_) + _check.nonnegative("kv_bytes", kv_bytes))


@dataclass(frozen=True)
class PhaseEstimate:
    """Roofline estimate of one prefill or one decode step on ``n_gpus`` ideal tensor-parallel GPUs."""

    phase: str                 #: "prefill" or "decode"
    accelerator: str
    model: str
    n_gpus: int
    batch: int
    tokens: int                #: prompt length (prefill) or context held (decode)
    flops: float               #: FLOPs of the step
    nbytes: float              #: bytes moved by the step
    intensity: float           #: FLOP/byte
    ridge: float               #: FLOP/byte of the accelerator at ``dtype``
    dtype: str                 #: compute precision
    bound: str                 #: "memory-bound" or "compute-bound"
    seconds: float             #: lower bound on the step's time
    tokens_per_second: float   #: tokens produced (decode) or consumed (prefill) per second, all sequences
    per_sequence_tokens_per_second: float
    utilisation: float         #: attainable FLOP/s ÷ peak FLOP/s
    memory_needed: float       #: bytes: weights + KV cache
    memory_available: float    #: bytes: n_gpus × memory per GPU

    @property
    def fits(self) -> bool:
        return self.memory_needed <= self.memory_available


def _phase(phase, accelerator, model_, tokens, batch, weight_dtype, kv_dtype, n_gpus, flops, nbytes, produced):
    acc = _get_accelerator(accelerator)
    m = model(model_)
    n = _check.integer("n_gpus", n_gpus)
    dtype = compute_dtype(acc, weight_dtype)
    intensity = roofline.arithmetic_intensity(flops, nbytes)
    per_gpu = roofline.attainable_flops(acc, intensity, dtype)          # FLOP/s on one GPU at this intensity
    seconds = flops / (n * per_gpu)                                     # = max(F/peak, Q/BW) over n GPUs
    need = weight_bytes(m, weight_dtype) + kv_cache_bytes(m, tokens, batch, kv_dtype)
    return PhaseEstimate(
        phase=phase, accelerator=acc.name, model=m.name, n_gpus=n, batch=batch, tokens=tokens, flops=flops,
        nbytes=nbytes, intensity=intensity, ridge=roofline.ridge_point(acc, dtype), dtype=dtype,
        bound=roofline.bound(acc, intensity, dtype), seconds=seconds, tokens_per_second=produced / seconds,
        per_sequence_tokens_per_second=produced / batch / seconds, utilisation=roofline.fraction_of_peak(
            acc, intensity, dtype), memory_needed=need, memory_available=n * acc.require("memory_bytes"))


def prefill(accelerator, model_, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16", n_gpus=1):
    """Roofline estimate of prefilling ``batch`` prompts of ``prompt_tokens`` tokens (a :class:`PhaseEstimate`).

    Time ≥ max(F/peak, Q/BW) (:mod:`chipchain.roofline`); ``n_gpus`` share the work as ideal tensor parallelism
    (peak, bandwidth and memory add up; communication ignored). Prefill of 2,048 tokens is compute-bound:

    >>> p = prefill("H100", "Llama-3-8B", 2048)
    >>> p.bound, round(p.seconds * 1e3, 1)
    ('compute-bound', 34.4)
    """
    s = _check.integer("prompt_tokens", prompt_tokens)
    B = _check.integer("batch", batch)
    return _phase("prefill", accelerator, model_, s, B, weight_dtype, kv_dtype, n_gpus,
                  prefill_flops(model_, s, B), prefill_bytes(model_, s, B, weight_dtype, kv_dtype), B * s)


def decode(accelerator, model_, context, batch=1, weight_dtype="bf16", kv_dtype="bf16", n_gpus=1):
    """Roofline estimate of one decode step for ``batch`` sequences holding ``context`` tokens each.

    ``tokens_per_second`` = B / step time (all sequences); at batch 1 and short context this is
    :func:`decode_tokens_per_second_bound`. Llama 3 8B on one H100 in BF16, batch 1 and batch 64:

    >>> d1, d64 = decode("H100", "Llama-3-8B", 1024, 1), decode("H100", "Llama-3-8B", 1024, 64)
    >>> d1.bound, round(d1.tokens_per_second), d64.bound, round(d64.tokens_per_second)
    ('memory-bound', 207, 'memory-bound', 8695)
    """
    c = _check.integer("context", context)
    B = _check.integer("batch", batch)
    return _phase("decode", accelerator, model_, c, B, weight_dtype, kv_dtype, n_gpus,
                  decode_flops(model_, c, B), decode_bytes(model_, c, B, weight_dtype, kv_dtype), B)


def critical_batch(accelerator, model_, context, weight_dtype="bf16", kv_dtype="bf16", max_batch_=1 << 20):
    """Smallest batch at which a decode step becomes compute-bound (its intensity reaches the ridge point), or
    ``math.inf`` if no batch up to ``max_batch_`` gets there — as happens at long context, where the KV cache each
    sequence reads caps the intensity at about ``(2N + 4lcd)/(c·kv)``.

    >>> critical_batch("H100", "Llama-3-8B", 128), critical_batch("H100", "Llama-3-8B", 1024)
    (427, inf)
    """
    acc = _get_accelerator(accelerator)
    m = model(model_)
    c = _check.integer("context", context)
    cap = _check.integer("max_batch_", max_batch_)
    ridge = roofline.ridge_point(acc, compute_dtype(acc, weight_dtype))

    def ok(b):
        return decode_intensity(m, c, b, weight_dtype, kv_dtype) >= ridge

    if not ok(cap):
        return math.inf
    lo, hi = 1, 1
    while not ok(hi):
        lo, hi = hi, min(hi * 2, cap)
    if ok(lo):
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def max_batch(memory_bytes, model_, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=0.9) -> int:
    """Most sequences of ``context`` tokens whose KV cache fits beside the weights:
    ``floor((f·M − W) / (c·kv))`` (0 if the weights alone do not fit). ``f`` leaves room for activations, the
    runtime and fragmentation (0.9 by default — an assumption).

    Llama 3 70B with FP8 weights and a BF16 cache at 4,096 tokens, on one 80 GB and one 180 GB card:

    >>> max_batch(80e9, "Llama-3-70B", 4096, "fp8"), max_batch(180e9, "Llama-3-70B", 4096, "fp8")
    (1, 68)
    """
    mem = _check.positive("memory_bytes", memory_bytes)
    m = model(model_)
    c = _check.integer("context", context)
    f = _check.fraction("usable_fraction", usable_fraction)
    room = f * mem - weight_bytes(m, weight_dtype)
    if room <= 0:
        return 0
    return int(room // (c * m.kv_bytes_per_token(kv_dtype)))


def gpus_to_hold(accelerator, model_, context, batch=1, weight_dtype="bf16", kv_dtype="bf16",
                 usable_fraction=0.9, choices=(1, 2, 4, 8, 16, 32, 64)) -> int:
    """Fewest GPUs among ``choices`` whose memory (× ``usable_fraction``) holds the weights and the KV cache of
    ``batch`` sequences of ``context`` tokens. ``ValueError`` if even the largest choice is too small.

    The running example in BF16 at 2,048 tokens: 350 GB of weights need 8 A100-80GB (4 hold only 288 GB usable):

    >>> gpus_to_hold("A100", model_from_walkthrough(), 2048)
    8
    """
    acc = _get_accelerator(accelerator)
    m = model(model_)
    f = _check.fraction("usable_fraction", usable_fraction)
    need = weight_bytes(m, weight_dtype) + kv_cache_bytes(m, context, batch, kv_dtype)
    per = acc.require("memory_bytes") * f
    opts = sorted(_check.integer("choices", c) for c in choices)
    if not opts:
        raise ValueError("choices must hold at least one GPU count")
    for n in opts:
        if n * per >= need:
            return n
    from .units import fmt_bytes

    raise ValueError(f"{m.name} needs {fmt_bytes(need)} (weights + KV cache); {opts[-1]} × {acc.name} hold "
                     f"{fmt_bytes(opts[-1] * per)} usable")


def batch_table(accelerator, model_, context, batches=(1, 8, 64, 256, 1024), weight_dtype="bf16",
                kv_dtype="bf16", n_gpus=1):
    """Decode at several batch sizes as a pandas DataFrame: intensity, bound, tokens/s (all sequences and per
    sequence), share of peak FLOP/s, and whether weights + KV cache fit in the GPUs' memory.

    >>> batch_table("H100", "Llama-3-8B", 1024, (1, 64)).loc[64, "bound"]
    'memory-bound'
    """
    import pandas as pd

    rows = []
    for b in batches:
        d = decode(accelerator, model_, context, b, weight_dtype, kv_dtype, n_gpus)
        rows.append({"batch": d.batch, "FLOP/byte": round(d.intensity, 1), "bound": d.bound,
                     "tokens/s (all)": round(d.tokens_per_second), "tokens/s (each)": round(
                         d.per_sequence_tokens_per_second, 1), "share of peak": f"{d.utilisation:.1%}",
                     "fits": "yes" if d.fits else "no"})
    return pd.DataFrame(rows).set_index("batch")


def serving_table(accelerators, model_, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=0.9):
    """One model served on each accelerator at the largest batch its memory holds (:func:`max_batch`): memory,
    bandwidth, batch, and the decode tokens/s bounds. A pandas DataFrame.

    >>> int(serving_table(["H100", "B200"], "Llama-3-70B", 4096, "fp8").loc["B200", "max batch"])
    68
    """
    import pandas as pd

    rows = []
    for a in accelerators:
        acc = _get_accelerator(a)
        b = max_batch(acc.require("memory_bytes"), model_, context, weight_dtype, kv_dtype, usable_fraction)
        row = {"accelerator": acc.name, "memory GB": acc.memory_bytes / 1e9,
               "bandwidth TB/s": acc.memory_bandwidth / 1e12, "max batch": b}
        if b:
            d = decode(acc, model_, context, b, weight_dtype, kv_dtype)
            row.update({"tokens/s (all)": round(d.tokens_per_second), "tokens/s (each)": round(
                d.per_sequence_tokens_per_second), "bound": d.bound})
        else:
            row.update({"tokens/s (all)": 0, "tokens/s (each)": 0, "bound": "weights do not fit"})
        rows.append(row)
    return pd.DataFrame(rows).set_index("accelerator")


def quantization_table(accelerator, model_, context, batch=1, dtypes=("bf16", "fp8", "int8", "int4"),
                       kv_dtype="bf16"):
    """Weights stored at each precision: their size, the compute precision used, and the decode tokens/s bound
    relative to BF16 (KV cache kept at ``kv_dtype``). A pandas DataFrame.

    >>> quantization_table("A100", "Llama-2-7B", 1024).loc["int4", "compute"]
    'bf16'
    """
    import pandas as pd

    base = decode(accelerator, model_, context, batch, "bf16", kv_dtype).tokens_per_second
    rows = []
    for d in dtypes:
        e = decode(accelerator, model_, context, batch, d, kv_dtype)
        rows.append({"weights": d, "GB": round(weight_bytes(model_, d) / 1e9, 2), "compute": e.dtype,
                     "tokens/s": round(e.tokens_per_second), "speed-up vs BF16": round(e.tokens_per_second / base, 2),
                     "bound": e.bound})
    return pd.DataFrame(rows).set_index("weights")


# --- energy ---------------------------------------------------------------------------------------------------------

def energy_per_token(power, tokens_per_second) -> float:
    """Joules per generated token: ``E = P / throughput`` (``power`` W of the devices serving, ``tokens_per_second``
    summed over all sequences they serve).

    One H100 at its 700 W limit producing 207 tokens/s for one user, and 8,695 tokens/s for 64:

    >>> round(energy_per_token(700, 207), 2), round(energy_per_token(700, 8695), 3)
    (3.38, 0.081)
    """
    return _check.nonnegative("power", power) / _check.positive("tokens_per_second", tokens_per_second)


def energy_per_query(power, tokens_per_second, tokens) -> float:
    """Joules for one answer of ``tokens`` generated tokens: ``tokens · P / throughput``.

    >>> round(energy_per_query(700, 206, 500) / 3600, 2)   # watt-hours
    0.47
    """
    return _check.nonnegative("tokens", tokens) * energy_per_token(power, tokens_per_second)


# --- serving devices: edge boards and inference ASICs ---------------------------------------------------------------

@dataclass(frozen=True)
class ServingDevice:
    """An edge device or inference ASIC (SI units; missing figures are ``None``)."""

    name: str
    kind: str                       #: "edge" or "inference-asic"
    vendor: str
    year: int
    process: str
    memory_bytes: float
    memory_type: str
    memory_bandwidth: float         #: bytes/s
    power: float | None             #: watts
    bf16_flops: float | None
    int8_ops: float | None
    checked: str
    source: str
    notes: str

    @property
    def is_estimate(self) -> bool:
        return self.checked == "U"


@lru_cache(maxsize=1)
def _devices() -> dict:
    index = {}
    for r in _read_csv("serving_devices.csv"):
        def f(col, scale=1.0):
            t = r[col].strip()
            return float(t) * scale if t else None
        d = ServingDevice(name=r["name"], kind=r["kind"], vendor=r["vendor"], year=int(r["year"]),
                          process=r["process"], memory_bytes=f("memory_GB", 1e9), memory_type=r["memory_type"],
                          memory_bandwidth=f("memory_bandwidth_GBps", 1e9), power=f("power_W"),
                          bf16_flops=f("bf16_TFLOPS", 1e12), int8_ops=f("int8_TOPS", 1e12), checked=r["checked"],
                          source=r["source"], notes=r["notes"])
        for k in (d.name, *[a for a in r["aliases"].split(";") if a]):
            index[_check.key(k)] = d
    return index


def devices() -> list[str]:
    """Names in ``data/serving_devices.csv``.

    >>> devices()[0]
    'Jetson-Orin-Nano-8GB'
    """
    return list(dict.fromkeys(d.name for d in _devices().values()))


def device(name) -> ServingDevice:
    """An edge device or inference ASIC by name or alias (``KeyError`` with the nearest names if unknown).

    >>> device("groq").memory_bytes / 1e6
    230.0
    """
    if isinstance(name, ServingDevice):
        return name
    return _check.lookup(_devices(), name, "device")


def device_table():
    """Serving devices as a pandas DataFrame in human units (GB, GB/s, W)."""
    import pandas as pd

    rows = [{"device": d.name, "kind": d.kind, "memory_GB": d.memory_bytes / 1e9,
             "bandwidth_GBps": d.memory_bandwidth / 1e9, "power_W": d.power, "checked": d.checked,
             "source": d.source} for d in map(device, devices())]
    return pd.DataFrame(rows).set_index("device")


def largest_model_that_fits(memory_bytes, dtype="int4", usable_fraction=0.75) -> float:
    """Largest parameter count whose weights fit in ``usable_fraction`` of ``memory_bytes``:
    ``N_max = f·M / b``. On edge devices memory is shared with the operating system and apps, so the default
    leaves a quarter free (an assumption; the KV cache must also fit in what remains).

    8 GB at 4 bits per weight:

    >>> largest_model_that_fits(8e9, "int4") / 1e9
    12.0
    """
    return (_check.positive("memory_bytes", memory_bytes) * _check.fraction("usable_fraction", usable_fraction)
            / _bytes("dtype", dtype))


def edge_fit_table(memory_bytes=(8e9, 16e9), names=("Llama-2-7B", "Llama-3-8B", "Llama-2-13B", "Llama-2-70B"),
                   dtypes=("bf16", "int8", "int4"), context=4096, usable_fraction=0.75):
    """Which models fit on an edge device: weights plus the KV cache of one ``context``-token conversation
    (16-bit cache) against ``usable_fraction`` of each memory size. A pandas DataFrame of GB needed with a
    ✓ / ✗ per memory size.

    >>> t = edge_fit_table()
    >>> t.loc[("Llama-3-8B", "int4"), "8 GB"], t.loc[("Llama-3-8B", "bf16"), "16 GB"]
    ('✓', '✗')
    """
    import pandas as pd

    mems = [_check.positive("memory_bytes", m) for m in memory_bytes]
    f = _check.fraction("usable_fraction", usable_fraction)
    rows = []
    for n in names:
        m = model(n)
        for d in dtypes:
            need = weight_bytes(m, d) + kv_cache_bytes(m, context, 1, "bf16")
            row = {"model": m.name, "weights": d, "GB needed": round(need / 1e9, 1)}
            for mem in mems:
                row[f"{mem / 1e9:g} GB"] = "✓" if need <= f * mem else "✗"
            rows.append(row)
    return pd.DataFrame(rows).set_index(["model", "weights"])


# --- the end of easy scaling ----------------------------------------------------------------------------------------

def doubling_projection(year, doubling_time=2.0, base_year=2015.0, base=1.0) -> float:
    """Exponential growth with a fixed doubling time: ``x(t) = x₀ · 2^((t − t₀)/T)``.

    Moore's law in its 1975 form is T ≈ 2 years; the book's projection figure compares 2, 3 and 4. Ten years
    at a three-year doubling time give about 10×, against 32× at two years:

    >>> round(doubling_projection(2025, 3), 1), doubling_projection(2025, 2)
    (10.1, 32.0)
    """
    y = _check.number("year", year, allow_negative=True)
    t0 = _check.number("base_year", base_year, allow_negative=True)
    return _check.positive("base", base) * 2.0 ** ((y - t0) / _check.positive("doubling_time", doubling_time))


def process_nodes():
    """TSMC's leading-edge nodes with the year each entered volume production (``data/process_nodes.csv``), as a
    pandas DataFrame with the gap since the previous node in years.

    >>> process_nodes()["gap_years"].round(1).tolist()[1:]
    [2.0, 2.6, 2.9]
    """
    import pandas as pd

    df = pd.DataFrame(_read_csv("process_nodes.csv"))
    df["volume_year"] = df["volume_year"].astype(float)
    df["gap_years"] = df["volume_year"].diff()
    return df.set_index("node")


def node_intervals() -> dict:
    """Years between successive TSMC nodes' volume production, e.g. ``{"N7→N5": 2.0, ...}``.

    >>> {k: round(v, 1) for k, v in node_intervals().items()}
    {'N7→N5': 2.0, 'N5→N3': 2.6, 'N3→N2': 2.9}
    """
    rows = _read_csv("process_nodes.csv")
    return {f"{a['node']}→{b['node']}": float(b["volume_year"]) - float(a["volume_year"])
            for a, b in zip(rows, rows[1:])}


def plot_moore_projection(doubling_times=(2.0, 3.0, 4.0), base_year=2015.0, years=(2005.0, 2035.0), ax=None):
    """Relative transistor budget per chip (2015 = 1) under several doubling times, with TSMC's node dates
    marked. A projection with a stated assumption (growth follows the 2-year doubling up to ``base_year`` and each
    line's doubling time after it), not a fit to data. Returns the matplotlib Axes.
    """
    import numpy as np

    from . import plotting

    lo, hi = (_check.number("years[0]", years[0], allow_negative=True),
              _check.number("years[1]", years[1], allow_negative=True))
    if lo >= hi:
        raise ValueError(f"years must be increasing, got {years!r}")
    t0 = _check.number("base_year", base_year, allow_negative=True)
    ax = plotting.axes(ax)
    t = np.linspace(lo, hi, 200)
    before = t <= t0
    ax.semilogy(t[before], 2.0 ** ((t[before] - t0) / 2.0), color="black", lw=2,
                label="2-year doubling until the base year (assumed)")
    for i, T in enumerate(doubling_times):
        T = _check.positive("doubling_times", T)
        after = t >= t0
        ax.semilogy(t[after], 2.0 ** ((t[after] - t0) / T), color=plotting.color(i), lw=2,
                    ls="-" if T == 2.0 else "--", label=f"doubling every {T:g} years after {t0:g}")
    for node, row in process_nodes().iterrows():
        ax.axvline(row["volume_year"], color="#777", ls=":", lw=1)
        ax.annotate(f"TSMC {node}", (row["volume_year"], 0.05), rotation=90, fontsize=8, color="#555",
                    xytext=(2, 0), textcoords="offset points", va="bottom")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("year")
    ax.set_ylabel(f"transistors per chip, relative to {t0:g} (log)")
    ax.legend(loc="upper left", fontsize=8)
    return ax


# --- the explorable -------------------------------------------------------------------------------------------------

def decode_roofline_points(accelerator, model_, context, batches=(1, 8, 64, 512), weight_dtype="bf16",
                           kv_dtype="bf16") -> dict:
    """Labels → decode intensity (FLOP/byte) for several batch sizes, plus prefill of ``context`` tokens: the
    ``operators`` argument of :func:`chipchain.roofline.plot_roofline`.

    >>> {k: round(v) for k, v in decode_roofline_points("H100", "Llama-3-8B", 2048, (1, 64)).items()}
    {'decode, batch 1': 1, 'decode, batch 64': 33, 'prefill 2048 tokens': 2082}
    """
    pts = {f"decode, batch {b}": decode_intensity(model_, context, b, weight_dtype, kv_dtype) for b in batches}
    pts[f"prefill {context} tokens"] = prefill_intensity(model_, context, 1, weight_dtype, kv_dtype)
    return pts


_EXPLORER_MODELS = {"Llama 3 8B": "Llama-3-8B", "Llama 2 70B": "Llama-2-70B", "DeepSeek-V3 (MoE, MLA)": "DeepSeek-V3"}
_EXPLORER_ACCS = {"A100 80GB": "A100-SXM-80GB", "H100 SXM": "H100-SXM", "B200 (estimate)": "B200"}
_CURVE_BATCHES = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def _serving_view(model_name, batch, context, precision, accelerator) -> str:
    from . import plotting, units

    m, acc = model(model_name), _get_accelerator(accelerator)
    kv_dtype = "bf16" if precision == "bf16" else "fp8"
    n = gpus_to_hold(acc, m, context, batch, precision, kv_dtype)
    d = decode(acc, m, context, batch, precision, kv_dtype, n)
    p = prefill(acc, m, context, 1, precision, kv_dtype, n)
    peak, bw = acc.peak_flops(d.dtype), acc.require("memory_bandwidth")
    xs = [10 ** (k / 4) for k in range(-4, 17)]
    curve = [{"x": xs, "y": [min(peak, bw * x) / 1e12 for x in xs], "label": f"{acc.name} roof ({d.dtype.upper()})"}]
    pts = [{"x": d.intensity, "y": d.utilisation * peak / 1e12, "label": f"decode ×{batch}", "color": "#D55E00"},
           {"x": p.intensity, "y": p.utilisation * peak / 1e12, "label": "prefill", "color": "#0072B2"}]
    chart = plotting.svg_chart(
        lines=curve, points=pts, vlines=[{"x": d.ridge, "label": f"ridge {d.ridge:.0f}"}], xlog=True, ylog=True,
        xlim=(0.1, 1e4), ylim=(peak / 1e12 / 2e3, peak / 1e12 * 2), xlabel="arithmetic intensity (FLOP/byte)",
        ylabel="attainable TFLOP/s per GPU", height=260,
        alt=f"Roofline of the {acc.name}: decode at batch {batch} sits at {d.intensity:.1f} FLOP/byte "
            f"({d.bound}); prefill of {context} tokens at {p.intensity:.0f} FLOP/byte ({p.bound}).")
    fit = [e for e in (decode(acc, m, context, b, precision, kv_dtype, n) for b in _CURVE_BATCHES) if e.fits]
    tps = [e.tokens_per_second for e in fit]
    batch_chart = plotting.svg_chart(
        lines=[{"x": [e.batch for e in fit], "y": tps, "label": f"decode tokens/s on {n} GPU(s), batches that fit"}],
        points=[{"x": batch, "y": d.tokens_per_second, "label": f"batch {batch}", "color": "#D55E00"}],
        xlog=True, ylog=True, xlim=(1, 1024), ylim=(min(tps) / 2, max(tps) * 2),
        xlabel="batch (sequences decoded together)", ylabel="tokens/s, all sequences",
        height=220, alt=f"Aggregate decode throughput rises with batch from {tps[0]:,.0f} to {tps[-1]:,.0f} tokens/s; "
                        f"at batch {batch} it is {d.tokens_per_second:,.0f}.")
    rows = [("GPUs needed to hold weights + KV cache", f"{n} × {acc.name}"),
            ("weights / KV cache", f"{units.fmt_bytes(weight_bytes(m, precision))} / "
                                   f"{units.fmt_bytes(kv_cache_bytes(m, context, batch, kv_dtype))}"),
            ("decode: intensity vs ridge", f"{d.intensity:,.1f} vs {d.ridge:,.0f} FLOP/byte → {d.bound}"),
            ("decode: tokens/s per sequence (upper bound)", f"{d.per_sequence_tokens_per_second:,.0f}"),
            ("decode: tokens/s, all sequences", f"{d.tokens_per_second:,.0f}"),
            ("decode: share of peak FLOP/s", str(units.fmt_percent(d.utilisation))),
            (f"prefill of {context:,} tokens: time, bound", f"{units.fmt_duration(p.seconds)}, {p.bound}")]
    table = "".join(f"<tr><td>{k}</td><td>{v}</td></tr>" for k, v in rows)
    return (f'<table class="cc-table" aria-label="serving estimate"><caption>{m.name}, {precision.upper()} weights, '
            f'{kv_dtype.upper()} KV cache — roofline bounds</caption>{table}</table>{chart}{batch_chart}')


@widgets.explorer
def explore_serving():
    """Prefill and decode on the roofline: model × batch × context × precision × accelerator → the tokens/s bound,
    which roof binds, and how many GPUs the weights and KV cache need (3 × 4 × 2 × 3 × 3 = 216 views)."""
    return widgets.explore(_serving_view, [
        widgets.Choice("model_name", "Model", _EXPLORER_MODELS, value="Llama-3-8B"),
        widgets.Slider("batch", "Batch", [1, 16, 128, 1024], value=1),
        widgets.Slider("context", "Context (tokens)", [2048, 32768], value=2048, fmt=lambda v: f"{v:,}"),
        widgets.Choice("precision", "Weights", {"BF16": "bf16", "FP8": "fp8", "INT4 (weight-only)": "int4"},
                       value="bf16"),
        widgets.Choice("accelerator", "Accelerator", _EXPLORER_ACCS, value="H100-SXM"),
    ], title="Serving on the roofline: which roof binds?")
