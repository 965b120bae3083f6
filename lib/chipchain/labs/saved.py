"""Lab: activations on a real engine — every tensor one transformer layer saves for its backward pass, caught with
``torch.autograd.graph.saved_tensors_hooks`` and set term by term beside Korthikanti et al.'s ledger,
sbh(34 + 5as/h) bytes (:func:`chipchain.activations.activation_bytes_per_layer`).

The layer is GPT's (pre-LayerNorm, multi-head attention, a 4h MLP with GeLU, dropout after the softmax, after the
attention block and after the MLP), written op by op so each saved tensor can be labelled with the step of the
ledger that saves it. Parameters are not activations and are left out; per-token statistics (LayerNorm's mean and
1/σ, attention's log-sum-exp) are counted in a row of their own, which the ledger leaves out as small. A tensor
saved twice, or as two views of the same bytes, counts once.

Variants (:data:`VARIANTS`): ``"explicit"`` — the ledger's own layer; ``"causal"`` — the same with a causal mask
applied by ``masked_fill``; ``"fused"`` — attention by ``scaled_dot_product_attention`` without dropout.
Runs in one process, no process group.

>>> sum(korthikanti_terms(2048, 1, 12288, 96).values()) == activations.activation_bytes_per_layer(2048, 1, 12288, 96)
True
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import _check, activations, units
from . import runner

__all__ = ["VARIANTS", "STATISTICS", "korthikanti_terms", "SavedActivations", "saved_bytes", "describe"]

#: layer variants measured
VARIANTS = ("explicit", "causal", "fused")
#: the row for per-token statistics (not in the ledger)
STATISTICS = "per-token statistics (LayerNorm μ, 1/σ; log-sum-exp)"


def korthikanti_terms(seq, batch, hidden, heads) -> dict:
    """Korthikanti et al. (2022, §4.1) ledger of one layer, term by term, in bytes: 16-bit activations, 1-byte
    dropout masks, s = ``seq``, b = ``batch``, h = ``hidden``, a = ``heads``. The terms sum to sbh(34 + 5as/h).

    >>> {k: v / (128 * 2 * 256) for k, v in korthikanti_terms(128, 2, 256, 4).items()}["GeLU input"]
    8.0
    """
    s = _check.integer("seq", seq)
    b = _check.integer("batch", batch)
    h = _check.integer("hidden", hidden)
    a = _check.integer("heads", heads)
    sbh, as2b = float(s * b * h), float(a * s * s * b)
    return {"LayerNorm 1 input": 2 * sbh, "QKV projection input": 2 * sbh, "Q, K (inputs of QKᵀ)": 4 * sbh,
            "softmax output": 2 * as2b, "softmax dropout mask": as2b,
            "attention over V (dropout output, V)": 2 * as2b + 2 * sbh, "output projection input": 2 * sbh,
            "attention dropout mask": sbh, "LayerNorm 2 input": 2 * sbh, "MLP up-projection input": 2 * sbh,
            "GeLU input": 8 * sbh, "MLP down-projection input": 8 * sbh, "MLP dropout mask": sbh}


@dataclass(frozen=True)
class SavedActivations:
    """What :func:`saved_bytes` returns: the layer's shape, the variant, ``measured`` {term: bytes} (terms in the
    order first saved) and ``predicted`` {term: bytes} from :func:`korthikanti_terms`."""

    variant: str
    seq: int
    batch: int
    hidden: int
    heads: int
    dtype: str
    measured: dict
    predicted: dict

    @property
    def total(self) -> float:
        """Bytes saved, measured."""
        return sum(self.measured.values())

    @property
    def predicted_total(self) -> float:
        """sbh(34 + 5as/h) bytes: :func:`chipchain.activations.activation_bytes_per_layer`."""
        return activations.activation_bytes_per_layer(self.seq, self.batch, self.hidden, self.heads)

    def terms(self) -> list:
        """(term, predicted bytes, measured bytes) for every term either side has, the ledger's order first."""
        names = list(self.predicted) + [k for k in self.measured if k not in self.predicted]
        return [(k, self.predicted.get(k, 0.0), self.measured.get(k, 0.0)) for k in names]


def _layer(h, dtype, seed):
    import torch
    g = torch.Generator().manual_seed(seed)

    def w(*shape):
        return (torch.randn(*shape, generator=g) * shape[-1] ** -0.5).to(dtype).requires_grad_()
    return {"ln1": (torch.ones(h, dtype=dtype, requires_grad=True), torch.zeros(h, dtype=dtype, requires_grad=True)),
            "ln2": (torch.ones(h, dtype=dtype, requires_grad=True), torch.zeros(h, dtype=dtype, requires_grad=True)),
            "qkv": w(3 * h, h), "out": w(h, h), "up": w(4 * h, h), "down": w(h, 4 * h)}


@runner.single_threaded
def saved_bytes(variant="explicit", seq=128, batch=2, hidden=256, heads=4, dropout=0.1, dtype="bf16",
                seed=0) -> SavedActivations:
    """Run one GPT layer forward on CPU and count, term by term, the bytes autograd saves for backward.

    Args: ``variant`` one of :data:`VARIANTS`; ``seq`` s, ``batch`` b, ``hidden`` h, ``heads`` a (a divides h);
    ``dropout`` probability in [0, 1) (the fused variant's attention has none); ``dtype`` ``"bf16"`` or
    ``"fp32"``; ``seed`` for weights, inputs and dropout. Returns a :class:`SavedActivations`.
    """
    import torch
    import torch.nn.functional as F
    v = _check.choice("variant", variant, VARIANTS)
    s, b = _check.integer("seq", seq), _check.integer("batch", batch)
    h, a = _check.integer("hidden", hidden), _check.integer("heads", heads)
    if h % a or h <= a:
        raise ValueError(f"heads ({a}) must divide hidden ({h}) and be smaller than it")
    p = _check.nonnegative("dropout", dropout)
    if p >= 1:
        raise ValueError(f"dropout must be below 1, got {dropout!r}")
    dt = {"bf16": torch.bfloat16, "fp32": torch.float32}[_check.choice("dtype", dtype, ("bf16", "fp32"))]
    prm = _layer(h, dt, seed)
    param_ptrs = {t.untyped_storage().data_ptr() for x in prm.values() for t in (x if isinstance(x, tuple) else (x,))}
    torch.manual_seed(seed)
    x = torch.randn(b, s, h, dtype=dt, requires_grad=True)
    saved, label = {}, [""]

    def pack(t):
        if t.untyped_storage().data_ptr() not in param_ptrs:
            key = (t.untyped_storage().data_ptr(), t.storage_offset(), tuple(t.shape), tuple(t.stride()))
            term = STATISTICS if t.numel() <= b * s * a else label[0]
            saved.setdefault(key, (term, t.numel() * t.element_size()))
        return t

    def tag(name, fn, *args, **kw):
        label[0] = name
        return fn(*args, **kw)

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = tag("LayerNorm 1 input", F.layer_norm, x, (h,), *prm["ln1"])
        qkv = tag("QKV projection input", F.linear, y, prm["qkv"]).view(b, s, 3, a, h // a).permute(2, 0, 3, 1, 4)
        q, k, val = qkv[0], qkv[1], qkv[2]
        if v == "fused":
            o = tag("fused attention (Q, K, V, output)", F.scaled_dot_product_attention, q, k, val, dropout_p=0.0)
        else:
            scores = tag("Q, K (inputs of QKᵀ)", torch.matmul, q, k.transpose(-2, -1)) * (h // a) ** -0.5
            if v == "causal":
                mask = torch.ones(s, s, dtype=torch.bool).triu(1)
                scores = tag("causal mask (masked_fill)", scores.masked_fill, mask, float("-inf"))
            probs = tag("softmax output", F.softmax, scores, -1)
            probs = tag("softmax dropout mask", F.dropout, probs, p)
            o = tag("attention over V (dropout output, V)", torch.matmul, probs, val)
        o = tag("output projection input", F.linear, o.transpose(1, 2).reshape(b, s, h), prm["out"])
        x2 = x + tag("attention dropout mask", F.dropout, o, p)
        y2 = tag("LayerNorm 2 input", F.layer_norm, x2, (h,), *prm["ln2"])
        u = tag("GeLU input", F.gelu, tag("MLP up-projection input", F.linear, y2, prm["up"]))
        d = tag("MLP down-projection input", F.linear, u, prm["down"])
        _ = x2 + tag("MLP dropout mask", F.dropout, d, p)
    measured = {}
    for term, nbytes in saved.values():
        measured[term] = measured.get(term, 0.0) + float(nbytes)
    return SavedActivations(v, s, b, h, a, dtype, measured, korthikanti_terms(s, b, h, a))


def describe(result: SavedActivations) -> str:
    """One line: measured against predicted bytes for a :class:`SavedActivations`."""
    return (f"{result.variant}: {units.fmt_bytes(result.total)} saved, ledger "
            f"{units.fmt_bytes(result.predicted_total)} ({result.total / result.predicted_total - 1:+.1%})")
