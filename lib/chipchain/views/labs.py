"""Views for the labs (``labs/L1``–``L4``): the chapters' table renderer and chart system applied to what a lab
measured on the reader's machine.

Nothing here imports :mod:`chipchain.labs` (the measurement layer is imported by nothing): a lab hands plain numbers
— message sizes, seconds, a fitted α and β — and gets back a :class:`~chipchain.views._figure.Figure` or a
:class:`~chipchain.tables.Table`. The model line is :func:`chipchain.comms.ring_allreduce_time`, the same equation
chapter 3 prices with.
"""
from __future__ import annotations

from .. import _check, comms, plotting, units
from .._i18n import gettext as _
from ._figure import Figure, key

__all__ = ["alpha_beta_figure", "binary_size", "mark"]


def binary_size(nbytes) -> str:
    """A message size as the labs name theirs, in binary units: ``4 KiB``, ``16 MiB`` (the lab's sizes are powers of
    two); other sizes to three significant figures.

    >>> binary_size(4096), binary_size(16 << 20), binary_size(1536), binary_size(100)
    ('4 KiB', '16 MiB', '1.5 KiB', '100 B')
    """
    n = _check.nonnegative("nbytes", nbytes)
    for size, name in ((units.GiB, "GiB"), (units.MiB, "MiB"), (units.KiB, "KiB")):
        if n >= size:
            return f"{units.fmt_number(n / size, 3)} {name}"
    return f"{n:,.0f} B"


def mark(ok) -> str:
    """A yes/no as the chapters' tables print it: ``✓`` or ``✗``.

    >>> mark(True), mark(False)
    ('✓', '✗')
    """
    return "✓" if bool(ok) else "✗"


def alpha_beta_figure(runs: dict, alpha: float, beta: float, n_ranks: int, fit_from: float = 0.0) -> Figure:
    """Lab 1's figure: measured all-reduce time against message size, log–log, one set of dots per rank count
    (``runs``: label → (message sizes in bytes, seconds)), and the α–β ring model
    (:func:`chipchain.comms.ring_allreduce_time`) with the fitted ``alpha`` (s) and ``beta`` (B/s per direction) on
    ``n_ranks`` ranks, drawn solid over the sizes it was fitted on (``fit_from`` bytes and up) and dashed below.

    >>> f = alpha_beta_figure({"4 ranks": ([4096, 1 << 20], [0.01, 0.02])}, 1e-3, 1e9, 4, fit_from=1 << 20)
    >>> [(label, m, round(t * 1e3, 3)) for label, m, t in f.data["points"]]
    [('4 ranks', 4096, 10.0), ('4 ranks', 1048576, 20.0)]
    >>> round(f.data["model"][-1][1] * 1e3, 3)       # 6 α + 1.5 M/β at 1 MiB
    7.573
    """
    if not runs:
        raise ValueError("runs must hold at least one labelled (sizes, seconds) pair")
    _check.positive("alpha", alpha)
    _check.positive("beta", beta)
    points, data, lo, hi = [], [], None, None
    for i, (label, (sizes, seconds)) in enumerate(runs.items()):
        if len(sizes) != len(seconds) or not len(sizes):
            raise ValueError(f"runs[{label!r}] must pair as many sizes as seconds, at least one")
        c = plotting.color(i)
        for m, t in zip(sizes, seconds):
            points.append({"x": float(m), "y": float(t) * 1e3, "color": c})
            data.append((label, m, float(t)))
        lo = min(sizes) if lo is None else min(lo, min(sizes))
        hi = max(sizes) if hi is None else max(hi, max(sizes))
    steps = 40
    grid = [lo * (hi / lo) ** (k / steps) for k in range(steps + 1)]
    model = [(m, comms.ring_allreduce_time(m, n_ranks, beta, alpha)) for m in grid]
    fitted = [(m, t) for m, t in model if m >= fit_from]
    below = [(m, t) for m, t in model if m <= (fitted[0][0] if fitted else hi)]
    model_colour = plotting.color(len(runs))
    lines = []
    if len(below) > 1 and fit_from > lo:
        lines.append({"x": [m for m, _ in below], "y": [t * 1e3 for _, t in below], "color": model_colour,
                      "dash": True})
    if len(fitted) > 1:
        lines.append({"x": [m for m, _ in fitted], "y": [t * 1e3 for _, t in fitted], "color": model_colour})
    # the x axis in bytes with binary prefixes, as the lab names its sizes (4 KiB … 16 MiB)
    ticks, m = [], 1
    while m <= hi * 1.0001:
        if m >= lo / 1.0001:
            ticks.append((m, binary_size(m)))
        m *= 4
    legend = key([(label, plotting.color(i), "dot") for i, label in enumerate(runs)]
                 + [(_("α–β model, {n} ranks, fitted to sizes ≥ {size}").format(n=n_ranks,
                                                                                size=binary_size(fit_from))
                     if fit_from else _("α–β model, {n} ranks").format(n=n_ranks), model_colour, "line")])
    text = (f"Measured all-reduce time against message size ({', '.join(runs)}), with the α–β model on {n_ranks} "
            f"ranks: α = {units.fmt_duration(alpha)}, β = {units.fmt_bandwidth(beta)} per direction.")
    alt = _("Log–log chart. Measured all-reduce time against message size ({runs}), with the α–β model on {n} "
            "ranks: α = {alpha}, β = {beta} per direction.").format(
        runs=_(", ").join(_(r) for r in runs), n=n_ranks, alpha=units.fmt_duration(alpha),
        beta=units.fmt_bandwidth(beta))
    html = plotting.svg_chart(lines=lines, points=points, xlog=True, ylog=True, xticks=ticks,
                              xlabel="message size M (bytes)", ylabel="all-reduce time (ms)", legend="none",
                              alt=alt, height=320)
    return Figure(legend + html, text, {"points": data, "model": model})
