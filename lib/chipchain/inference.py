"""Inference arithmetic: the KV cache, weight bytes, FLOPs and bytes of prefill and decode, joules per token.

Serving a language model runs in two phases with opposite characters:

* **Prefill** reads the prompt of ``s`` tokens in one pass. Every weight fetched from memory is used ``s`` times, so
  the arithmetic intensity is about ``2s / b`` FLOP per byte (``b`` bytes per weight): compute-bound once the
  prompt is longer than about ``R·b/2`` tokens for a ridge point ``R`` (a few hundred tokens on current GPUs in
  16-bit; :func:`chipchain.serving.prefill_critical_tokens`), memory-bound below that.
* **Decode** produces one token per sequence per step. Every weight is fetched once per step and used once per
  sequence in the batch, and each sequence also reads its whole KV cache. At batch 1 the intensity is about
  ``2 / b`` FLOP/byte — memory-bound, and the speed limit is ``tokens/s ≤ bandwidth / bytes read per token``.
  Batching ``B`` sequences multiplies the useful work per weight byte by ``B`` and walks decode up the roofline's
  slope toward the compute roof; the KV cache, which grows with batch × context, pulls it back.

Conventions: FLOPs count a multiply–add as 2; bytes are decimal; peak throughput is dense; weights and KV cache are
stored in any format of :data:`chipchain.units.BYTES_PER_ELEMENT` (``bf16`` 2 bytes, ``fp8``/``int8`` 1, ``int4``
0.5). Every function that takes a ``model`` accepts a name or alias of :mod:`chipchain.models`
or a :class:`~chipchain.models.Model`; ``batch`` and ``context`` may be NumPy arrays where the equation is
element-wise.

These equations know nothing about hardware; :mod:`chipchain.serving` places them on an accelerator.

>>> round(kv_bytes_per_token(layers=80, kv_heads=8, head_dim=128))   # Llama 2 70B, BF16
327680
>>> round(decode_tokens_per_second_bound(3.35e12, weight_bytes("Llama-3-8B")))   # one H100, batch 1
209
"""
from __future__ import annotations


from . import _check, assumptions, memory, models, roofline, units

__all__ = [
    "kv_bytes_per_token", "model_kv_bytes_per_token", "kv_cache_bytes", "weight_bytes", "weights_read_per_step",
    "memory_needed", "prefill_flops", "decode_flops", "prefill_bytes", "decode_bytes", "prefill_intensity",
    "decode_intensity", "decode_tokens_per_second_bound", "max_batch", "energy_per_token", "energy_per_query",
    "largest_model_that_fits",
]


def _bytes(name: str, dtype) -> float:
    """Bytes per element of ``dtype`` (the one table, :data:`chipchain.units.BYTES_PER_ELEMENT`); the error
    names the argument."""
    return units.BYTES_PER_ELEMENT[_check.choice(name, dtype, units.BYTES_PER_ELEMENT)]


# --- KV cache and weights -------------------------------------------------------------------------------------------

def kv_bytes_per_token(layers, kv_heads=None, head_dim=None, bytes_per_element=2.0, latent_dim=None) -> float:
    """KV-cache bytes one token adds, over all layers, from the attention shape.

    Multi-head and grouped-query attention cache a key and a value per KV head and layer:
    ``2 · l · n_kv · d_h · b``. Multi-head latent attention (MLA, DeepSeek-AI 2024, DeepSeek-V2 Sec. 2.1.2–2.1.3)
    caches one compressed latent plus a decoupled RoPE key per layer: ``l · (d_c + d_h^R) · b``, with
    ``latent_dim = d_c + d_h^R``. Units: counts in, ``bytes_per_element`` in bytes, result in bytes. For a model of
    the registry use :func:`model_kv_bytes_per_token`.

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


def model_kv_bytes_per_token(model, kv_dtype="bf16") -> float:
    """KV-cache bytes one token adds to ``model`` (a name, alias or :class:`~chipchain.models.Model`) with the
    cache stored as ``kv_dtype``: :func:`kv_bytes_per_token` of its shape (MLA models cache their latent).

    Zhao et al. 2025, Table 1 (BF16): Llama 3.1 405B 516,096 bytes; DeepSeek-V3 70,272 bytes:

    >>> model_kv_bytes_per_token("405B"), model_kv_bytes_per_token("DeepSeek-V3")
    (516096.0, 70272.0)
    """
    m = models.get(model)
    b = _bytes("kv_dtype", kv_dtype)
    if m.attention == "mla":
        return kv_bytes_per_token(m.layers, bytes_per_element=b, latent_dim=m.kv_lora_rank + m.rope_head_dim)
    return kv_bytes_per_token(m.layers, m.kv_heads, m.head_dim, bytes_per_element=b)


def kv_cache_bytes(model, context, batch=1, kv_dtype="bf16"):
    """KV cache of ``batch`` sequences of ``context`` tokens: ``B · c · kv_bytes_per_token`` (bytes; ``context``
    and ``batch`` may be arrays).

    The running example's GPT-3 175B (96 layers, 96 heads of 128) at its 2,048-token context in BF16:

    >>> round(kv_cache_bytes("GPT-3-175B", 2048) / 1e9, 2)
    9.66
    """
    kv = model_kv_bytes_per_token(model, kv_dtype)
    return _check.values("batch", batch, _check.integer) * _check.values("context", context, _check.integer) * kv


def weight_bytes(model, dtype="bf16") -> float:
    """Bytes to hold all weights: ``N · b`` (every expert of an MoE model is resident).

    >>> weight_bytes("Llama-2-70B", "int4") / 1e9
    34.49
    """
    return memory.inference_weight_bytes(models.get(model).params, dtype)     # the one N·b


def weights_read_per_step(model, batch=1, dtype="bf16"):
    """Weight bytes one forward step over ``batch`` tokens reads from memory (``batch`` may be an array).

    Dense: all weights, ``N · b``, whatever the batch. Mixture of experts, assuming each token picks ``k`` of ``E``
    routed experts uniformly and independently (the balance DeepSeek's router aims for): the shared part ``S`` is
    read once, and each routed expert is read if any token chose it,

        W(B) = b · [S + R · (1 − (1 − k/E)^B)],  R = (N − N_act) / (1 − k/E),  S = N − R.

    DeepSeek-V3 (671 B total, 37 B active, 8 of 256 experts) in FP8 at batch 1 and 256:

    >>> [round(weights_read_per_step("DeepSeek-V3", b, "fp8") / 1e9) for b in (1, 256)]
    [37, 671]
    """
    m = models.get(model)
    b = _bytes("dtype", dtype)
    B = _check.values("batch", batch, _check.integer)
    if not m.is_moe:
        return m.params * b + 0 * B
    frac = m.experts_active / m.experts
    routed = (m.params - m.active_params) / (1 - frac)
    shared = m.params - routed
    return b * (shared + routed * (1 - (1 - frac) ** B))


def memory_needed(model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16"):
    """Bytes that must be resident to serve ``batch`` sequences of ``context`` tokens: all weights plus the KV
    cache, ``N · b_w + B · c · kv`` (activations, runtime and fragmentation are left to ``usable_fraction``
    wherever this is compared with a memory size).

    Llama 3 8B with INT4 weights and one 4,096-token conversation in BF16 (the edge-device question):

    >>> round(memory_needed("Llama-3-8B", 4096, 1, "int4") / 1e9, 2)
    4.55
    """
    return weight_bytes(model, weight_dtype) + kv_cache_bytes(model, context, batch, kv_dtype)


# --- FLOPs and bytes of the two phases ------------------------------------------------------------------------------

def prefill_flops(model, prompt_tokens, batch=1):
    """FLOPs to prefill ``batch`` prompts of ``s`` tokens: ``B · (2·N_act·s + 2·l·s²·d_attn)``.

    The first term is the matmuls (2 FLOPs per active parameter per token); the second is causal attention
    (QKᵀ and A·V, 4·l·i·d_attn for the token at position i, summed over i < s). Kaplan et al. 2020, Table 1.

    >>> f"{prefill_flops('Llama-3-8B', 2048):.3g}"
    '3.4e+13'
    """
    m = models.get(model)
    s = _check.values("prompt_tokens", prompt_tokens, _check.integer)
    B = _check.values("batch", batch, _check.integer)
    return B * (2.0 * m.active_params * s + 2.0 * m.layers * s * s * m.d_attn)


def decode_flops(model, context, batch=1):
    """FLOPs of one decode step (one new token for each of ``batch`` sequences that hold ``context`` tokens):
    ``B · (2·N_act + 4·l·c·d_attn)`` (Kaplan et al. 2020, Table 1, at context c).

    For MLA the attention term uses heads × head_dim as for MHA — an approximation; at the contexts shown the
    2·N_act term dominates.

    >>> f"{decode_flops('Llama-3-8B', 1):.4g}"
    '1.606e+10'
    """
    m = models.get(model)
    c = _check.values("context", context, _check.integer)
    B = _check.values("batch", batch, _check.integer)
    return B * (2.0 * m.active_params + 4.0 * m.layers * c * m.d_attn)


def prefill_bytes(model, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16"):
    """Minimum bytes prefill moves: the weights once plus the KV cache it writes,
    ``W(B·s) + B·s·kv`` (activations stay on chip in this idealisation).

    >>> round(prefill_bytes("Llama-3-8B", 2048) / 1e9, 2)
    16.33
    """
    s = _check.values("prompt_tokens", prompt_tokens, _check.integer)
    B = _check.values("batch", batch, _check.integer)
    return weights_read_per_step(model, B * s, weight_dtype) + B * s * model_kv_bytes_per_token(model, kv_dtype)


def decode_bytes(model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16"):
    """Minimum bytes one decode step moves: the weights (:func:`weights_read_per_step`), each sequence's cache of
    ``context`` tokens, and the one new token's keys and values written back: ``W(B) + B·(c + 1)·kv``.
    ``context`` and ``batch`` may be arrays.

    >>> round(decode_bytes("Llama-2-70B", 4096, 1) / 1e9, 2)
    139.3
    >>> (decode_bytes("Llama-3-8B", 1024, [1, 64]) / 1e9).round(1).tolist()
    [16.2, 24.7]
    """
    c = _check.values("context", context, _check.integer)
    B = _check.values("batch", batch, _check.integer)
    return weights_read_per_step(model, B, weight_dtype) + B * (c + 1) * model_kv_bytes_per_token(model, kv_dtype)


def prefill_intensity(model, prompt_tokens, batch=1, weight_dtype="bf16", kv_dtype="bf16"):
    """Arithmetic intensity of prefill, FLOP/byte (:func:`chipchain.roofline.arithmetic_intensity`).

    A 2,048-token prompt to Llama 3 8B in BF16 — roughly 2s/b:

    >>> round(prefill_intensity("Llama-3-8B", 2048))
    2082
    """
    return roofline.arithmetic_intensity(prefill_flops(model, prompt_tokens, batch),
                                         prefill_bytes(model, prompt_tokens, batch, weight_dtype, kv_dtype))


def decode_intensity(model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16"):
    """Arithmetic intensity of one decode step, FLOP/byte. About ``2B/b`` while the weights dominate the bytes
    (Pope et al. 2022, Sec. 2; Chen 2022, "Transformer inference arithmetic"); it saturates at
    ``(2N + 4lcd)/(c·kv)`` once the KV cache does. ``batch`` and ``context`` may be arrays.

    >>> round(decode_intensity("Llama-3-8B", 1, 1), 2), round(decode_intensity("Llama-3-8B", 1, 64), 1)
    (1.0, 63.9)
    """
    return roofline.arithmetic_intensity(decode_flops(model, context, batch),
                                         decode_bytes(model, context, batch, weight_dtype, kv_dtype))


def decode_tokens_per_second_bound(bandwidth, weight_bytes, kv_bytes=0.0):
    """Upper bound on one sequence's decode speed when memory-bound:

        tokens/s ≤ memory bandwidth / bytes read per token = BW / (W + KV)

    ``bandwidth`` bytes/s; ``weight_bytes`` and ``kv_bytes`` bytes read per generated token (any may be an
    array). Llama 3 8B in BF16 (16.06 GB) on an H100 (3.35 TB/s):

    >>> round(decode_tokens_per_second_bound(3.35e12, 16.06e9))
    209
    """
    bw = _check.values("bandwidth", bandwidth, _check.positive)
    return bw / (_check.values("weight_bytes", weight_bytes, _check.positive) + _check.values("kv_bytes", kv_bytes))

def max_batch(memory_bytes, model, context, weight_dtype="bf16", kv_dtype="bf16", usable_fraction=None) -> int:
    """Most sequences of ``context`` tokens whose KV cache fits beside the weights:
    ``floor((f·M − W) / (c·kv))`` (0 if the weights alone do not fit). ``f`` leaves room for activations, the
    runtime and fragmentation (default: the assumption ``usable_memory_fraction`` of :mod:`chipchain.assumptions`,
    0.9).

    Llama 3 70B with FP8 weights and a BF16 cache at 4,096 tokens, on one "80 GB" and one "180 GB" card (memory
    sold in binary units: 80 GiB = 85.9 GB, 180 GiB = 193.3 GB):

    >>> max_batch(80 * 2**30, "Llama-3-70B", 4096, "fp8"), max_batch(180 * 2**30, "Llama-3-70B", 4096, "fp8")
    (5, 77)
    """
    mem = _check.positive("memory_bytes", memory_bytes)
    c = _check.integer("context", context)
    f = _check.fraction("usable_fraction", assumptions.value("usable_memory_fraction") if usable_fraction is None
                        else usable_fraction)
    room = f * mem - weight_bytes(model, weight_dtype)
    if room <= 0:
        return 0
    return int(room // (c * model_kv_bytes_per_token(model, kv_dtype)))


def largest_model_that_fits(memory_bytes, dtype="int4", usable_fraction=None) -> float:
    """Largest parameter count whose weights fit in ``usable_fraction`` of ``memory_bytes``:
    ``N_max = f·M / b``. On edge devices memory is shared with the operating system and apps, so the default
    (the assumption ``edge_usable_memory_fraction`` of :mod:`chipchain.assumptions`, 0.75) leaves a quarter free;
    the KV cache must also fit in what remains.

    8 GB at 4 bits per weight:

    >>> largest_model_that_fits(8e9, "int4") / 1e9
    12.0
    """
    f = assumptions.value("edge_usable_memory_fraction") if usable_fraction is None else usable_fraction
    return _check.positive("memory_bytes", memory_bytes) * _check.fraction("usable_fraction", f) / _bytes("dtype", dtype)


# --- energy ---------------------------------------------------------------------------------------------------------

def energy_per_token(power, tokens_per_second):
    """Joules per generated token: ``E = P / throughput`` (``power`` W of the devices serving, ``tokens_per_second``
    summed over all sequences they serve; either may be an array).

    Taking ``power`` as the GPUs' rated maximum (TDP) makes this an estimate at TDP, not a bound: memory-bound
    decode seldom draws the full rating (so the estimate runs high for the GPUs), while the host, network and
    cooling are left out and a roofline throughput is a best case (both of which would raise it).

    One H100 at its 700 W limit producing 207 tokens/s for one user, and 8,695 tokens/s for 64:

    >>> round(energy_per_token(700, 207), 2), round(energy_per_token(700, 8695), 3)
    (3.38, 0.081)
    """
    return _check.values("power", power) / _check.values("tokens_per_second", tokens_per_second, _check.positive)


def energy_per_query(power, tokens_per_second, tokens):
    """Joules for one answer of ``tokens`` generated tokens: ``tokens · P / throughput``.

    >>> round(energy_per_query(700, 206, 500) / 3600, 2)   # watt-hours
    0.47
    """
    return _check.values("tokens", tokens) * energy_per_token(power, tokens_per_second)
