"""Serving as it is run (chapter 12): latency per request, tensor-parallel communication in decode, speculative
decoding, prefill/decode disaggregation and mixture-of-experts weights — on top of :mod:`chipchain.serving`'s
roofline estimates.

* **Time to first token** (TTFT) is the prefill of the prompt; **time per output token** (TPOT) is one decode step.
  Growing the batch raises the server's tokens per second and, once the step stops being dominated by reading
  the weights, every user's TPOT too: :func:`latency_throughput`.
* **Tensor parallelism in decode** splits every layer over ``tp`` GPUs and pays two all-reduces per layer (after
  attention and after the MLP), each of the step's activations, ``B · d · b`` bytes for ``B`` sequences, hidden
  size ``d`` and ``b`` bytes per element: :func:`tp_decode_comm_seconds`.
* **Speculative decoding** (Leviathan et al. 2023): a draft model proposes γ tokens, the target checks them in one
  pass; with acceptance rate α the expected tokens per target pass are ``(1 − α^(γ+1)) / (1 − α)``
  (:func:`expected_accepted_tokens`) and the wall-clock speed-up is that divided by ``γ·c + 1`` when one draft step
  costs ``c`` target steps (:func:`speculative_speedup`).
* **Disaggregation** (DistServe, Splitwise): on a shared GPU a newly admitted prompt's prefill stalls every running
  decode; on separate pools it costs one KV-cache transfer instead (:func:`disaggregation`).

>>> round(expected_accepted_tokens(0.8, 4), 4), round(speculative_speedup(0.8, 4, 0.05), 3)
(3.3616, 2.801)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, comms, hardware, inference, links, models, serving, units
from ._lazy import np

__all__ = ["LatencyPoint", "latency_throughput", "ttft", "tpot", "tp_decode_comm_bytes", "tp_decode_comm_seconds",
           "expected_accepted_tokens", "speculative_speedup", "Disaggregation", "disaggregation",
           "MoETraffic", "moe_weight_traffic"]


def ttft(accelerator, model, prompt_tokens, weight_dtype="bf16", kv_dtype="bf16", n_gpus=1) -> float:
    """Time to first token (s), roofline lower bound: the prefill of one prompt of ``prompt_tokens`` tokens.

    >>> round(ttft("H100", "Llama-3-8B", 2048) * 1e3, 1)
    34.4
    """
    return float(serving.prefill(accelerator, model, prompt_tokens, 1, weight_dtype, kv_dtype, n_gpus).seconds)


def tp_decode_comm_bytes(model, batch=1, dtype="bf16") -> float:
    """Bytes each of the two per-layer all-reduces of a tensor-parallel decode step reduces: ``B · d · b``.

    >>> tp_decode_comm_bytes("GPT-3-175B", 1)
    24576.0
    """
    m = models.get(model)
    return float(_check.integer("batch", batch) * m.hidden * units.bytes_per_element(dtype))


def tp_decode_comm_seconds(model, batch, tp, link, dtype="bf16") -> float:
    """Seconds of tensor-parallel communication in one decode step: ``2 · l`` ring all-reduces of ``B · d · b``
    bytes over ``tp`` GPUs on ``link`` (its per-direction bandwidth and per-step latency α). At batch 1 the
    latency term dominates: GPT-3 175B on eight A100s pays 2 × 96 all-reduces × 14 steps × 3 µs.

    >>> round(tp_decode_comm_seconds("GPT-3-175B", 1, 8, "NVLink3") * 1e3, 2)
    8.09
    >>> tp_decode_comm_seconds("GPT-3-175B", 1, 1, "NVLink3")
    0.0
    """
    m = models.get(model)
    lk = links.get(link)
    n = _check.integer("tp", tp)
    each = comms.ring_allreduce_time(tp_decode_comm_bytes(m, batch, dtype), n, lk.bandwidth_per_direction,
                                     lk.latency)
    return float(2 * m.layers * each)


def tpot(accelerator, model, context, batch=1, weight_dtype="bf16", kv_dtype="bf16", n_gpus=1, link=None) -> float:
    """Time per output token (s): one decode step's roofline time, plus tensor-parallel communication over
    ``link`` when ``n_gpus`` > 1 and a link is given. Raises ``ValueError`` when the batch does not fit.

    >>> round(tpot("H100", "Llama-3-8B", 1024) * 1e3, 2)
    4.83
    """
    d = serving.decode(accelerator, model, context, batch, weight_dtype, kv_dtype, n_gpus)
    if not d.fits:
        raise d.seconds.error()
    comm = 0.0 if link is None or d.n_gpus == 1 else tp_decode_comm_seconds(model, batch, d.n_gpus, link,
                                                                            kv_dtype)
    return float(d.seconds + comm)


@dataclass(frozen=True)
class LatencyPoint:
    """One batch size on the latency–throughput curve: TPOT (s), every sequence's and the server's tokens per
    second, and the decode step's bound."""

    batch: int
    tpot: float
    tokens_per_second: float
    per_sequence_tokens_per_second: float
    bound: str


def latency_throughput(accelerator, model, context, batches=(1, 2, 4, 8, 16, 32, 64, 128, 256), weight_dtype="bf16",
                       kv_dtype="bf16", n_gpus=1, link=None) -> list:
    """The latency–throughput curve: a :class:`LatencyPoint` for each batch in ``batches`` that fits in memory.

    >>> pts = latency_throughput("H100", "Llama-3-8B", 1024, (1, 64))
    >>> [(p.batch, round(p.tpot * 1e3, 2), round(p.tokens_per_second)) for p in pts]
    [(1, 4.83, 207), (64, 7.36, 8695)]
    """
    out = []
    for b in batches:
        d = serving.decode(accelerator, model, context, _check.integer("batches", b), weight_dtype, kv_dtype,
                           n_gpus)
        if not d.fits:
            continue
        t = tpot(accelerator, model, context, b, weight_dtype, kv_dtype, n_gpus, link)
        out.append(LatencyPoint(int(b), t, b / t, 1 / t, d.bound))
    if not out:
        raise ValueError(f"no batch in {tuple(batches)} fits {models.get(model).name} on {n_gpus} × "
                         f"{hardware.get(accelerator).name}")
    return out


def expected_accepted_tokens(alpha, gamma):
    """Expected tokens one target-model pass produces with speculative decoding: ``(1 − α^(γ+1)) / (1 − α)``
    for per-token acceptance rate α and γ drafted tokens (Leviathan et al. 2023, Eq. 1) — the accepted prefix plus
    the one token the target always adds; γ + 1 when α = 1. ``alpha`` may be an array.

    >>> expected_accepted_tokens(0.0, 4), expected_accepted_tokens(1.0, 4), round(expected_accepted_tokens(0.6, 3), 3)
    (1.0, 5.0, 2.176)
    """
    a = _check.values("alpha", alpha, _check.probability)
    g = _check.integer("gamma", gamma, minimum=0)
    aa = np.asarray(a, dtype=float)
    safe = np.where(aa < 1, aa, 0.0)
    out = np.where(aa < 1, (1 - safe ** (g + 1)) / (1 - safe), g + 1.0)
    return _check.result(out)


def speculative_speedup(alpha, gamma, cost_ratio):
    """Expected wall-clock speed-up of speculative decoding over plain decoding:
    ``(1 − α^(γ+1)) / ((1 − α)(γ·c + 1))`` with ``c`` = ``cost_ratio``, the time of one draft step over one target
    step (Leviathan et al. 2023, Theorem 3.8). Below 1, speculation costs more than it saves.

    >>> round(speculative_speedup(0.0, 4, 0.05), 3), round(speculative_speedup(0.9, 8, 0.02), 2)
    (0.833, 5.28)
    """
    c = _check.values("cost_ratio", cost_ratio)
    g = _check.integer("gamma", gamma, minimum=0)
    return _check.result(expected_accepted_tokens(alpha, g) / (g * c + 1))


@dataclass(frozen=True)
class Disaggregation:
    """One request's view of colocated and disaggregated serving (s): the decode step, the prefill that stalls it
    when both share a GPU, and the KV-cache transfer that replaces the stall when they do not."""

    tpot: float                  #: decode step alone
    prefill_seconds: float       #: one prompt's prefill (the stall a colocated decode batch sees)
    kv_bytes: float              #: the prompt's KV cache
    kv_transfer_seconds: float   #: moved once to the decode pool over the link

    @property
    def stalled_tpot(self) -> float:
        """A colocated decode step that waits for one newly admitted prompt's prefill."""
        return self.tpot + self.prefill_seconds

    @property
    def stall_factor(self) -> float:
        return self.stalled_tpot / self.tpot


def disaggregation(accelerator, model, prompt_tokens, context, batch, link, weight_dtype="bf16", kv_dtype="bf16",
                   n_gpus=1) -> Disaggregation:
    """What a decode batch of ``batch`` sequences at ``context`` tokens sees when a ``prompt_tokens`` prompt is
    admitted: colocated, one step stretched by the prompt's prefill; disaggregated, no stall, and the prompt's KV
    cache sent once over ``link`` (per-direction bandwidth) to the decode GPUs.

    >>> d = disaggregation("H100", "Llama-3-8B", 2048, 1024, 64, "NDR")
    >>> round(d.stall_factor, 1), round(d.kv_transfer_seconds * 1e3, 1)
    (5.7, 5.4)
    """
    t = tpot(accelerator, model, context, batch, weight_dtype, kv_dtype, n_gpus)
    pre = ttft(accelerator, model, prompt_tokens, weight_dtype, kv_dtype, n_gpus)
    kv = float(inference.kv_cache_bytes(model, _check.integer("prompt_tokens", prompt_tokens), 1, kv_dtype))
    lk = links.get(link)
    return Disaggregation(t, pre, kv, float(comms.p2p_time(kv, lk.bandwidth_per_direction, lk.latency)))


@dataclass(frozen=True)
class MoETraffic:
    """Weights of a mixture-of-experts model at one decode batch: resident (all experts), read by the step (the
    experts some token chose) and read per generated token, bytes."""

    batch: int
    resident: float
    read: float

    @property
    def read_per_token(self) -> float:
        return self.read / self.batch


def moe_weight_traffic(model, batches=(1, 8, 64, 256), dtype="fp8") -> list:
    """:class:`MoETraffic` for each batch: memory must hold every expert, but a decode step reads only the experts
    its tokens chose (:func:`chipchain.inference.weights_read_per_step`), so at batch 1 a MoE model reads like a
    dense model of its *active* size and at large batch like one of its *total* size.

    >>> [round(t.read / 1e9) for t in moe_weight_traffic("DeepSeek-V3", (1, 256))]
    [37, 671]
    """
    m = models.get(model)
    res = inference.weight_bytes(m, dtype)
    return [MoETraffic(int(b), float(res), float(inference.weights_read_per_step(m, _check.integer("batches", b),
                                                                                  dtype)))
            for b in batches]
