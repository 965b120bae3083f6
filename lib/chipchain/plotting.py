"""One figure style for the whole book.

Plot helpers elsewhere in chipchain take ``ax=None`` and return the Axes; they call :func:`axes` to get one in
this style. Colours come from a colour-blind-safe palette (Okabe and Ito 2008) in a fixed order.

>>> color(0)
'#0072B2'
"""
from __future__ import annotations

from . import _check

__all__ = ["PALETTE", "color", "style", "axes", "figure"]

#: Okabe–Ito palette, reordered so that the first two colours differ for readers with any colour-vision type
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

_RC = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "savefig.bbox": "tight",
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "svg.hashsalt": "chipchain",   # deterministic SVG ids
    "svg.fonttype": "none",
    "path.simplify": True,
}


def color(i: int) -> str:
    """The i-th colour of the book's palette (cycling)."""
    return PALETTE[_check.integer("i", i, minimum=0) % len(PALETTE)]


def style() -> None:
    """Apply the book's matplotlib style (idempotent; uses the non-interactive Agg backend outside Jupyter)."""
    import matplotlib

    matplotlib.rcParams.update(_RC)
    matplotlib.rcParams["axes.prop_cycle"] = matplotlib.cycler(color=list(PALETTE))


def axes(ax=None):
    """Return ``ax`` or a fresh Axes in the book's style."""
    if ax is not None:
        return ax
    return figure()[1]


def figure(nrows: int = 1, ncols: int = 1, figsize=None):
    """A new (fig, axes) pair in the book's style."""
    style()
    import matplotlib.pyplot as plt

    kwargs = {"figsize": figsize} if figsize is not None else {}
    return plt.subplots(_check.integer("nrows", nrows), _check.integer("ncols", ncols), **kwargs)


# --- light SVG charts for explorables ----------------------------------------------------------------------------
# matplotlib takes ~300 ms per figure on the book's 2-core machine; an explorable must answer in < 50 ms and its
# static pages precompute every view. These helpers write small, accessible inline SVG (a few kB) directly.

def _nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    import math

    span = hi - lo
    if span <= 0:
        return [lo]
    raw = span / n
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw), default=10 * mag)
    first = math.ceil(lo / step - 1e-9) * step
    ticks, t = [], first
    while t <= hi + step * 1e-9:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _tick_label(v: float) -> str:
    if v == 0:
        return "0"
    a = abs(v)
    if a >= 1e5 or a < 1e-3:
        import math

        e = math.floor(math.log10(a))
        m = v / 10**e
        return f"1e{e}" if abs(m - 1) < 1e-9 else f"{m:g}e{e}"
    return f"{v:,.10g}"


def _esc(text) -> str:
    import html

    return html.escape(str(text), quote=True)


def svg_chart(*, lines=(), points=(), vlines=(), hlines=(), xlog=False, ylog=False, xlim=None, ylim=None,
              xlabel="", ylabel="", alt: str, title: str = "", width: int = 560, height: int = 300) -> str:
    """A line/point chart as inline SVG.

    ``lines``: dicts with ``x``, ``y`` (sequences), optional ``label``, ``color``, ``dash`` (bool).
    ``points``: dicts with ``x``, ``y``, optional ``label``, ``color``. ``vlines``/``hlines``: dicts with ``x``/``y``,
    optional ``label``, ``color``. ``alt`` (required) is the text alternative read by screen readers.

    >>> svg = svg_chart(lines=[{"x": [1, 10], "y": [1, 10], "label": "y = x"}], xlog=True, ylog=True, alt="a line")
    >>> svg.startswith("<svg") and 'aria-label="a line"' in svg
    True
    """
    import math

    if not alt or not str(alt).strip():
        raise ValueError("alt must describe the chart for readers who cannot see it")
    xs = [float(v) for d in lines for v in d["x"]] + [float(d["x"]) for d in points] + [float(d["x"]) for d in vlines]
    ys = [float(v) for d in lines for v in d["y"]] + [float(d["y"]) for d in points] + [float(d["y"]) for d in hlines]
    if xlim is None:
        xlim = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if ylim is None:
        ylim = (min(ys), max(ys)) if ys else (0.0, 1.0)
        if not ylog:
            ylim = (min(0.0, ylim[0]), ylim[1] * 1.05 if ylim[1] > 0 else 1.0)
    for name, (a, b), log in (("xlim", xlim, xlog), ("ylim", ylim, ylog)):
        if not (math.isfinite(a) and math.isfinite(b)) or a >= b or (log and a <= 0):
            raise ValueError(f"{name} must be finite, increasing{' and positive' if log else ''}, got {(a, b)!r}")
    ml, mr, mt, mb = 62, 22, 26 if title else 10, 44
    pw, ph = width - ml - mr, height - mt - mb

    def tx(v):
        a, b = xlim
        f = (math.log10(v) - math.log10(a)) / (math.log10(b) - math.log10(a)) if xlog else (v - a) / (b - a)
        return ml + f * pw

    def ty(v):
        a, b = ylim
        f = (math.log10(v) - math.log10(a)) / (math.log10(b) - math.log10(a)) if ylog else (v - a) / (b - a)
        return mt + ph - f * ph

    def ok(x, y):
        return (not xlog or x > 0) and (not ylog or y > 0) and math.isfinite(x) and math.isfinite(y)

    def ticks(lim, log):
        if log:
            lo, hi = math.floor(math.log10(lim[0]) - 1e-9), math.ceil(math.log10(lim[1]) + 1e-9)
            step = max(1, (hi - lo) // 6)
            return [10.0**e for e in range(lo, hi + 1, step) if lim[0] <= 10.0**e <= lim[1] * (1 + 1e-9)]
        return _nice_ticks(*lim)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="{_esc(alt)}" style="width:100%;max-width:{width}px;height:auto;font:11px sans-serif">',
           f"<title>{_esc(alt)}</title>"]
    if title:
        out.append(f'<text x="{ml}" y="16" font-weight="bold" font-size="12">{_esc(title)}</text>')
    out.append(f'<rect x="{ml}" y="{mt}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    for v in ticks(xlim, xlog):
        x = tx(v)
        out.append(f'<line x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}" stroke="#ddd"/>'
                   f'<text x="{x:.1f}" y="{mt + ph + 14}" text-anchor="middle">{_tick_label(v)}</text>')
    for v in ticks(ylim, ylog):
        y = ty(v)
        out.append(f'<line x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="#ddd"/>'
                   f'<text x="{ml - 4}" y="{y + 4:.1f}" text-anchor="end">{_tick_label(v)}</text>')
    out.append(f'<text x="{ml + pw / 2}" y="{height - 6}" text-anchor="middle">{_esc(xlabel)}</text>')
    out.append(f'<text transform="translate(12,{mt + ph / 2}) rotate(-90)" text-anchor="middle">{_esc(ylabel)}</text>')
    out.append(f'<clipPath id="cc-clip-{width}-{height}"><rect x="{ml}" y="{mt}" width="{pw}" height="{ph}"/></clipPath>')
    clip = f'clip-path="url(#cc-clip-{width}-{height})"'
    legend = []
    for i, d in enumerate(lines):
        c = d.get("color") or color(i)
        pts = " ".join(f"{tx(float(x)):.1f},{ty(float(y)):.1f}" for x, y in zip(d["x"], d["y"])
                       if ok(float(x), float(y)))
        dash = ' stroke-dasharray="5,4"' if d.get("dash") else ""
        out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2"{dash} {clip}/>')
        if d.get("label"):
            legend.append((c, d["label"], bool(d.get("dash"))))
    for d in vlines:
        c, x = d.get("color", "#555"), tx(float(d["x"]))
        out.append(f'<line x1="{x:.1f}" y1="{mt}" x2="{x:.1f}" y2="{mt + ph}" stroke="{c}" stroke-dasharray="2,3"/>')
        if d.get("label"):
            out.append(f'<text x="{x + 3:.1f}" y="{mt + 12}" fill="{c}">{_esc(d["label"])}</text>')
    for d in hlines:
        c, y = d.get("color", "#555"), ty(float(d["y"]))
        out.append(f'<line x1="{ml}" y1="{y:.1f}" x2="{ml + pw}" y2="{y:.1f}" stroke="{c}" stroke-dasharray="2,3"/>')
        if d.get("label"):
            out.append(f'<text x="{ml + pw - 3}" y="{y - 4:.1f}" text-anchor="end" fill="{c}">{_esc(d["label"])}</text>')
    for d in points:
        x, y = float(d["x"]), float(d["y"])
        if not ok(x, y):
            continue
        c = d.get("color", "#000")
        out.append(f'<circle cx="{tx(x):.1f}" cy="{ty(y):.1f}" r="4.5" fill="{c}" stroke="white"/>')
        if d.get("label"):
            out.append(f'<text x="{tx(x) + 7:.1f}" y="{ty(y) - 6:.1f}">{_esc(d["label"])}</text>')
    for j, (c, label, dash) in enumerate(legend):
        y = mt + 12 + 15 * j
        dash_attr = ' stroke-dasharray="5,4"' if dash else ""
        out.append(f'<line x1="{ml + 8}" y1="{y - 4}" x2="{ml + 28}" y2="{y - 4}" stroke="{c}" stroke-width="2"'
                   f'{dash_attr}/><text x="{ml + 32}" y="{y}">{_esc(label)}</text>')
    out.append("</svg>")
    return "".join(out)


def svg_bars(segments, *, capacity=None, capacity_label="capacity", unit_format=str, alt: str,
             width: int = 560, height: int = 70) -> str:
    """One horizontal stacked bar (e.g. a memory ledger) with an optional capacity marker, as inline SVG.

    ``segments``: (label, value) pairs, values ≥ 0; ``unit_format`` turns a value into text for the labels.

    >>> "aria-label" in svg_bars([("weights", 2), ("optimizer", 6)], capacity=10, alt="memory")
    True
    """
    if not alt or not str(alt).strip():
        raise ValueError("alt must describe the chart for readers who cannot see it")
    segs = [(str(k), _check.nonnegative(f"segment {k!r}", v)) for k, v in segments]
    total = sum(v for _, v in segs)
    cap = _check.positive("capacity", capacity) if capacity is not None else None
    scale_max = max(total, cap or 0) * 1.05 or 1.0
    ml, pw = 8, width - 16
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
           f'aria-label="{_esc(alt)}" style="width:100%;max-width:{width}px;height:auto;font:11px sans-serif">',
           f"<title>{_esc(alt)}</title>"]
    x = ml
    for i, (label, v) in enumerate(segs):
        w = pw * v / scale_max
        out.append(f'<rect x="{x:.1f}" y="8" width="{w:.1f}" height="26" fill="{color(i)}">'
                   f'<title>{_esc(label)}: {_esc(unit_format(v))}</title></rect>')
        x += w
    if cap is not None:
        cx = ml + pw * cap / scale_max
        out.append(f'<line x1="{cx:.1f}" y1="2" x2="{cx:.1f}" y2="40" stroke="black" stroke-width="2"/>'
                   f'<text x="{min(cx, width - 4):.1f}" y="52" text-anchor="end">{_esc(capacity_label)} '
                   f'{_esc(unit_format(cap))}</text>')
    lx = ml
    for i, (label, v) in enumerate(segs):
        out.append(f'<rect x="{lx}" y="{height - 12}" width="9" height="9" fill="{color(i)}"/>'
                   f'<text x="{lx + 12}" y="{height - 4}">{_esc(label)}</text>')
        lx += 22 + 6.2 * len(label)
    out.append("</svg>")
    return "".join(out)
