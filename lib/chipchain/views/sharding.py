"""Chapter 6's sharding pictures: what each rank holds under data parallelism, tensor parallelism with sequence
parallelism, ZeRO-1/2/3 and FSDP — a grid of ranks × {weights, gradients, optimizer states, activations}, each cell
the rank's shard, its bytes from :func:`chipchain.memory.ledger` for the same model and degrees.

>>> p = holdings("zero1", 4)
>>> [p.fractions[k] for k in ("weights", "gradients", "optimizer states", "activations")]
['all', 'all', '1/4', 'own batch']
>>> round(p.per_rank["optimizer states"] / 1e9, 2)
20.22
"""
from __future__ import annotations

from dataclasses import dataclass

from .. import memory, models, plotting, units, widgets
from .._i18n import gettext as _
from ..plotting._svg import _F, _esc, _figure, _width
from . import _layout

__all__ = ["SCHEMES", "PARTS", "Holdings", "holdings", "sharding_figure", "sharding_explorer"]

#: the schemes the picture shows: key → (label, tensor-parallel?, ZeRO stage over the data-parallel ranks)
SCHEMES = {"dp": ("DP (no sharding)", False, 0), "tp": ("TP with sequence parallelism", True, 0),
           "zero1": ("ZeRO-1", False, 1), "zero2": ("ZeRO-2", False, 2), "zero3": ("ZeRO-3", False, 3),
           "fsdp": ("FSDP (full sharding)", False, "fsdp")}
#: the four columns of the picture, and the ledger components each one sums
PARTS = {"weights": ("weights",), "gradients": ("gradients",),
         "optimizer states": ("master weights", "optimizer moments"), "activations": ("activations",)}
#: what each picture is drawn for: the chapter's model, one sequence per rank, selective recomputation
MODEL, RECOMPUTE = "Llama-2-7B", "selective"

#: where lab L2's measured bytes part from the picture, and why (PyTorch's rules; the lab derives each)
_LAB = {
    "dp": "Lab L2 measures 20 bytes per parameter, not 16, under PyTorch's default DDP: its gradient buckets are a "
          "second copy of the gradients. With gradient_as_bucket_view=True the copy is gone and it measures the "
          "ledger's 16.",
    "tp": "Lab L2 does not measure tensor parallelism. Without sequence parallelism the layer norms' and dropouts' "
          "activations (10 of the 34 copies of the layer's input) would stay whole on every rank.",
    "zero1": "Lab L2's ZeroRedundancyOptimizer hands out whole parameters, largest first, so in its small model one "
             "rank holds about three times the average share of the optimizer states. The shares still add up "
             "exactly, but the largest share is what has to fit, and it is not 1/N. A transformer's many "
             "similar-sized layers split within a few per cent.",
    "zero2": "Lab L2 does not measure stage 2. Gradients are reduce-scattered as the backward pass produces them, "
             "so each rank keeps only its shard.",
    "zero3": "Lab L2 measures full sharding with FSDP2, and it is 1/N plus padding: each parameter is split along "
             "its first dimension into shards of ⌈rows/N⌉, each padded to that size. Every rank also gathers one "
             "layer's full weights at a time to compute, a transient the ledger leaves out.",
    "fsdp": "The same bytes as ZeRO-3. Lab L2's FSDP2 measures 1/N plus padding: each parameter is split along its "
            "first dimension into ⌈rows/N⌉ rows per rank, every shard padded to that size, so 16Ψ/N is exact only "
            "when the rows divide by N. The full weights of one FSDP unit are gathered while it computes, on top.",
}


@dataclass(frozen=True)
class Holdings:
    """What every rank holds under one scheme: ``per_rank`` bytes of each of :data:`PARTS` (the ledger's),
    ``fractions`` of the unsharded model's ("all", "1/N", or "own batch" for activations of a rank's own data),
    and ``ledger`` (the :class:`~chipchain.memory.Ledger` it came from)."""

    scheme: str
    n_ranks: int
    model: str
    per_rank: dict
    fractions: dict
    ledger: memory.Ledger

    @property
    def total(self) -> float:
        return self.ledger.total


def holdings(scheme, n_ranks, model=MODEL, recompute=RECOMPUTE) -> Holdings:
    """Bytes each rank holds under ``scheme`` (a key of :data:`SCHEMES`) over ``n_ranks`` ranks, for ``model`` with
    one sequence of its training length per rank: :func:`chipchain.memory.ledger` with ``tp=n_ranks`` and sequence
    parallelism for "tp", else ``dp=n_ranks`` and the scheme's ZeRO stage."""
    if scheme not in SCHEMES:
        raise KeyError(f"scheme {scheme!r} is not one of {', '.join(SCHEMES)}")
    tp, zero = SCHEMES[scheme][1:]
    m = models.get(model)
    if tp:
        L = memory.ledger(m, tp=n_ranks, sequence_parallel=True, recompute=recompute)
    else:
        L = memory.ledger(m, dp=n_ranks, zero=zero, recompute=recompute)
    per = {k: sum(L.components[c] for c in comps) for k, comps in PARTS.items()}
    stage = 0 if tp else (3 if zero == "fsdp" else zero)          # FSDP's full sharding is stage 3
    split = f"1/{n_ranks:,}" if n_ranks > 1 else "all"
    fr = {"weights": split if tp or stage >= 3 else "all", "gradients": split if tp or stage >= 2 else "all",
          "optimizer states": split if tp or stage >= 1 else "all",
          "activations": split if tp else "own batch"}
    return Holdings(scheme, n_ranks, m.name, per, fr, L)


def _cell(x, y, w, h, n, mine, colour) -> str:
    """A bar of ``n`` equal segments with segment ``mine`` filled (``mine`` None: the whole bar filled)."""
    if mine is None:
        return f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{colour}"/>'
    seg = w / n
    out = [f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="#f2f2f2" stroke="#bbb"/>']
    out.append(f'<rect x="{x + mine * seg:.1f}" y="{y:.1f}" width="{seg:.1f}" height="{h:.1f}" fill="{colour}"/>')
    out += [f'<line x1="{x + k * seg:.1f}" y1="{y:.1f}" x2="{x + k * seg:.1f}" y2="{y + h:.1f}" stroke="#bbb"/>'
            for k in range(1, n)]
    return "".join(out)


def sharding_figure(scheme, n_ranks, model=MODEL, recompute=RECOMPUTE) -> str:
    """The picture of :func:`holdings`: one row per rank, one column per part, each cell the rank's shard (a filled
    segment of ``n_ranks``) or the whole (filled) bar, with its bytes; the bottom row names the share. HTML with
    inline SVG in the chart system's type and palette."""
    p = holdings(scheme, n_ranks, model, recompute)
    W = plotting.VIEW_WIDTH
    c0 = _width("GPU") + 0.6 * _F
    cw = (W - c0) / len(PARTS)
    head_h, row_h = 2.6 * _F, 2.45 * _F
    out = [f'<text x="0" y="{2.05 * _F:.1f}" fill="#333">{_esc("GPU")}</text>']
    for j, part in enumerate(PARTS):
        part = _(part)                          # split as the reader reads it (a Chinese head has no space)
        words = part.split(" ") if _width(part) > cw - 0.3 * _F else [part]     # "optimizer states" on two lines
        for k, w in enumerate(words):
            out.append(f'<text x="{c0 + (j + 0.5) * cw:.1f}" y="{(2.05 - 1.1 * (len(words) - 1 - k)) * _F:.1f}" '
                       f'text-anchor="middle" fill="#000">{_esc(w)}</text>')
    for r in range(n_ranks):
        y = head_h + r * row_h
        out.append(f'<text x="{0.2 * _F:.1f}" y="{y + 1.3 * _F:.1f}" fill="#333">{r}</text>')
        for j, part in enumerate(PARTS):
            x = c0 + j * cw + 0.25 * _F
            sharded = p.fractions[part].startswith("1/")
            out.append(_cell(x, y + 0.2 * _F, cw - 0.5 * _F, 0.9 * _F, n_ranks, r if sharded else None,
                             plotting.color(j)))
            out.append(f'<text x="{c0 + (j + 0.5) * cw:.1f}" y="{y + 2.0 * _F:.1f}" text-anchor="middle" '
                       f'fill="#333">{_esc(units.fmt_bytes(p.per_rank[part], 3))}</text>')
    y = head_h + n_ranks * row_h + 0.2 * _F
    out.append(f'<line x1="0" y1="{y:.1f}" x2="{W}" y2="{y:.1f}" stroke="#888"/>')
    out.append(f'<text x="0" y="{y + 1.1 * _F:.1f}" fill="#333">{_esc("each")}</text>')
    for j, part in enumerate(PARTS):
        out.append(f'<text x="{c0 + (j + 0.5) * cw:.1f}" y="{y + 1.1 * _F:.1f}" text-anchor="middle" fill="#000" '
                   f'font-weight="600">{_esc(p.fractions[part])}</text>')
    H = y + 1.5 * _F
    label = SCHEMES[scheme][0]
    alt = _("What each of {n} GPUs holds under {scheme} for {model}: {parts}; {total} per GPU.").format(
        n=n_ranks, scheme=_(label), model=p.model, total=units.fmt_bytes(p.total, 3),
        parts=_("; ").join(_("{part} {share}, {bytes}").format(part=_(k), share=_(p.fractions[k]),
                                                              bytes=units.fmt_bytes(v, 3))
                            for k, v in p.per_rank.items()))
    return _figure("".join(out), H, alt)


def _view(scheme, n_ranks) -> str:
    p = holdings(scheme, n_ranks)
    label = SCHEMES[scheme][0]
    m = models.get(p.model)
    head = _layout.verdict(_("{scheme} over {n} GPUs: each holds {total} of {model} (one {seq}-token sequence per "
                             "GPU, selective recomputation).").format(scheme=_(label), n=n_ranks,
                                                                      total=units.fmt_bytes(p.total, 3),
                                                                      model=m.name, seq=f"{m.seq:,}"), None)
    return head + sharding_figure(scheme, n_ranks) + _layout.para(_LAB[scheme], small=True)


@widgets.explorer
def sharding_explorer():
    """Ch. 6 explorer: a scheme (DP, TP with sequence parallelism, ZeRO-1/2/3, FSDP) and a number of GPUs → what
    each GPU holds, shard by shard, with the ledger's bytes, and where lab L2's measurement parts from it."""
    W = widgets
    controls = [W.Choice("scheme", "Scheme", {v[0]: k for k, v in SCHEMES.items()}, value="zero1"),
                W.Slider("n_ranks", "GPUs", [2, 4, 8], value=4)]
    return W.explore(_view, controls, title="Who holds what: sharding, rank by rank")
