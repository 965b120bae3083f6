"""One figure style for the whole book: matplotlib for static figures, light SVG charts for explorables.

Plot helpers elsewhere in chipchain take ``ax=None`` and return the Axes; they call :func:`axes` to get one in
this style. Colours come from a colour-blind-safe palette (Okabe and Ito 2008) in a fixed order; static figures and
explorable charts share it, and the typeface (DejaVu Sans, matplotlib's, named first in the charts' font list).

>>> color(0)
'#0072B2'

**The explorable chart style** (:func:`svg_chart`, :func:`svg_hbars`, :func:`svg_bars`, :func:`svg_stacked`).
An explorable must answer in < 50 ms and the static site precomputes every view, so these write small inline SVG
directly (≈ 1 ms; matplotlib takes ≈ 300 ms). The rules every chart follows:

* **Fills the column.** Each chart is a ``<figure class="cc-chart">`` whose SVG is 600 units wide (``viewBox``) and
  drawn at 100 % of the column.
* **Legible at any width.** The text size is chosen by the chart's own rendered width (a CSS container query,
  :data:`CHART_CSS`): 11.5 units from 630 px up (≥ 12 px on the desktop column of ≈ 690 px), 15.5 units from 470 px,
  19.5 units below (≥ 11 px on a phone's ≈ 350 px column). Every position is laid out for the largest text, so no
  size collides. Legends and titles are HTML, in the page's own text size.
* **Axes say what and in which unit**: ``xlabel``/``ylabel`` carry the unit, "all-reduce time (s)"; the y title
  sits above the axis, horizontal.
* **Nice ticks, one format per axis**: 1-2-2.5-5 steps on linear axes with the same decimals on every tick; log axes
  at decades labelled 0.01, 0.1, 1, 10, 100, 1k, 10k, 1M, 1G (SI prefixes, ``"si"``), or 10⁻⁶ … 10³ (``"pow10"``)
  when the axis reaches below 0.001; a log axis spanning less than two decades gets 1-2-5 or linear ticks. At least
  three ticks on every axis (two if the caller passes two); tick labels never overlap, at the phone's text size.
  ``xformat``/``yformat`` override (``"si"``, ``"pow10"``, ``"plain"``, ``"percent"`` or a callable);
  ``xticks``/``yticks`` pass explicit values or ``(value, label)`` pairs.
* **Named categories**: :func:`svg_hbars` writes each category's name above its bar; bars share one zero baseline
  and their lengths are proportional to their values (on a log axis they share the axis minimum as baseline).
* **Legends outside the data** (an HTML key above the plot that wraps on a phone) or **direct labels** (vertical,
  horizontal reference lines and points carry their own labels, placed so they do not overlap each other).
* **Palette**: :data:`PALETTE`, in order; a series may pass its own ``color``.

>>> html = svg_chart(lines=[{"x": [1, 10, 100], "y": [1, 10, 100], "label": "y = x"}], xlog=True, ylog=True,
...                  xlabel="size (bytes)", ylabel="time (s)", alt="a line")
>>> html.startswith('<figure class="cc-chart"') and 'aria-label="a line"' in html
True
>>> [t for t in _axis((1, 1000), True, None, None, 500)[1]]
['1', '10', '100', '1k']
"""
from __future__ import annotations

import html as _html
import math

from . import _check, tables

__all__ = ["PALETTE", "color", "style", "axes", "figure", "svg_chart", "svg_hbars", "svg_bars", "svg_stacked",
           "CHART_CSS", "FONT_UNITS", "VIEW_WIDTH"]

#: Okabe–Ito palette, reordered so that the first two colours differ for readers with any colour-vision type
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: the typeface of static figures (matplotlib's default) and of explorable charts
FONT_FAMILY = "'DejaVu Sans', Verdana, 'Bitstream Vera Sans', sans-serif"

_RC = {
    "figure.figsize": (6.4, 3.6),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "savefig.bbox": "tight",
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Verdana", "Bitstream Vera Sans"],
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

#: width of every chart's viewBox, in SVG units
VIEW_WIDTH = 600
#: text size in SVG units for charts drawn ≥ 630 px, 470–629 px and < 470 px wide
FONT_UNITS = (11.5, 15.5, 19.5)
_F = FONT_UNITS[-1]          # every layout is computed for the largest text
_CW = 0.64                   # advance of a DejaVu Sans digit, in em (the widest common glyphs)
_INK = "#333"
_GRID = "#e3e3e3"

#: the charts' style: font size by the chart's rendered width (container query), HTML legend and title
CHART_CSS = (
    ".cc-chart{container-type:inline-size;margin:.6em 0 1em;padding:0;max-width:100%}"
    f".cc-chart>svg{{display:block;width:100%;height:auto;font-size:{FONT_UNITS[0]}px}}"
    f"@container (max-width:629px){{.cc-chart>svg{{font-size:{FONT_UNITS[1]}px}}}}"
    f"@container (max-width:469px){{.cc-chart>svg{{font-size:{FONT_UNITS[2]}px}}}}"
    ".cc-chart>figcaption{font-weight:600;margin:0 0 .3em;line-height:1.35;text-align:left;color:inherit;"
    "font-size:1em;padding:0}"
    ".cc-legend{display:flex;flex-wrap:wrap;gap:.1em 1.2em;list-style:none;margin:0 0 .3em;padding:0;"
    "font-size:max(.875rem,12px);line-height:1.45}"
    ".cc-legend>li{display:inline-flex;align-items:center;gap:.45em;margin:0;padding:0}"
    ".cc-sw{display:inline-block;flex:none;width:1.7em;height:0;border-top:3px solid}"
    ".cc-sw.dash{border-top-style:dashed}"
    ".cc-sw.box{width:.85em;height:.85em;border:0}"
    ".cc-sw.dot{width:.7em;height:.7em;border:0;border-radius:50%}"
)


def _esc(text) -> str:
    return _html.escape(str(text), quote=True)


def _width(text, size: float = _F) -> float:
    """Estimated advance of ``text`` at ``size`` units (generous: digits are the widest common glyphs)."""
    return len(str(text)) * _CW * size


# --- ticks -------------------------------------------------------------------------------------------------------
_SUP = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_PREFIXES = tuple((10.0**e, p) for e, p in ((15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k")))


def _decimals(v: float) -> int:
    """Fewest decimals that write ``v`` exactly (to 9 significant digits)."""
    for d in range(0, 12):
        if abs(round(v, d) - v) <= 1e-9 * max(abs(v), 1e-300):
            return d
    return 12


def _step_decimals(ticks) -> int:
    """Decimals that write the step between ticks exactly (so every tick of an axis has the same)."""
    if len(ticks) < 2:
        return max((_decimals(v) for v in ticks), default=0)
    step = min(b - a for a, b in zip(ticks, ticks[1:]))
    for d in range(0, 12):
        if abs(round(step, d) - step) <= 1e-6 * step:
            return d
    return 12


def _trim(text: str) -> str:
    return text.rstrip("0").rstrip(".") if "." in text else text


def _si(v: float) -> str:
    a = abs(v)
    for factor, prefix in _PREFIXES:
        if a >= factor * (1 - 1e-9):
            return _trim(f"{v / factor:.2f}") + prefix
    return _trim(f"{v:.{min(_decimals(v), 6)}f}") if v else "0"


def _mantissa_exponent(v: float, digits: int = 7) -> tuple[float, int]:
    """``v`` as m × 10^e with 1 ≤ |m| < 10, through Python's own e-format: exact for every float, subnormals
    included, where ``v / 10**e`` divides by zero (10**-324 underflows)."""
    m, e = f"{v:.{digits - 1}e}".split("e")
    return float(m), int(e)


def _pow10(v: float) -> str:
    if v == 0:
        return "0"
    m, e = _mantissa_exponent(v, 3)          # the head shows at most three digits: 9.999e-5 is 10⁻⁴, not 10×10⁻⁵
    head = "" if abs(m - 1) < 1e-9 else ("−" if abs(m + 1) < 1e-9 else _trim(f"{m:.2f}") + "×")
    return f"{head}10{str(e).translate(_SUP)}"


def _labels(ticks, fmt, log: bool) -> list[str]:
    """One format for every tick of an axis."""
    if callable(fmt):
        return [str(fmt(v)) for v in ticks]
    nz = [abs(v) for v in ticks if v]
    if fmt is None:
        if log:
            fmt = "pow10" if nz and (min(nz) < 1e-3 or max(nz) >= 1e18) else "si"
        elif nz and (max(nz) >= 1e5 and min(nz) >= 1e3):
            fmt = "si"
        elif nz and max(nz) < 1e-3:
            fmt = "pow10"
        else:
            fmt = "plain"
    uniform = not log or not all(_trim(f"{_mantissa_exponent(v)[0]:.6f}") in ("1", "2", "5") for v in nz)
    if fmt == "si" and not (uniform and nz and max(nz) < 1e3):
        labels = [_si(v) for v in ticks]
        if len(set(labels)) == len(labels):
            return labels
        fmt, log = "plain", False                       # a narrow range far from zero: 99,970 … 100,000
    if fmt == "si":
        fmt, log = "plain", False
    if fmt == "pow10":
        return [_pow10(v) for v in ticks]
    if fmt == "percent":
        d = _step_decimals([v * 100 for v in ticks])
        return [f"{v * 100:,.{min(d, 3)}f}%" for v in ticks]
    if fmt == "plain":
        if log and not uniform:
            return [f"{v:,.{min(_decimals(v), 9)}f}" for v in ticks]
        d = min(_step_decimals(ticks), 9)
        return [f"{v:,.{d}f}" for v in ticks]
    raise ValueError(f"format must be 'si', 'pow10', 'plain', 'percent' or a callable, got {fmt!r}")


def _linear_ticks(lo: float, hi: float, max_n: int) -> list[float]:
    span = hi - lo
    if span <= 0:
        return [lo]
    mag = 10 ** math.floor(math.log10(span / max(max_n, 2)) - 1)
    for _ in range(40):
        for m in (1, 2, 2.5, 5):
            step = m * mag
            first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
            if last - first + 1 <= max_n:
                ticks = [round(k * step, 12) + 0.0 for k in range(first, last + 1)]
                tol = 1e-9 * span           # k × step can land an ulp outside a range only a few ulps wide: clamp
                return [v if lo - tol <= v <= hi + tol else min(max(v, lo), hi) for v in ticks]
        mag *= 10
    return [lo, hi]


def _log_ticks(lo: float, hi: float, max_n: int) -> list[float]:
    e0, e1 = math.ceil(math.log10(lo) - 1e-9), math.floor(math.log10(hi) + 1e-9)
    decades = list(range(e0, e1 + 1))
    if len(decades) >= 3:
        step = math.ceil(len(decades) / max_n)
        return [10.0**e for e in decades if e % step == 0] if step > 1 else [10.0**e for e in decades]
    for mults in ((1, 2, 5), (1, 1.5, 2, 3, 5, 7)):
        cands = sorted({round(m * 10.0**e, 12) for e in range(e0 - 1, e1 + 1) for m in mults
                        if lo * (1 - 1e-9) <= m * 10.0**e <= hi * (1 + 1e-9)})
        if 3 <= len(cands) <= max_n:
            return cands
        if len(cands) > max_n:
            return [10.0**e for e in decades] if len(decades) >= 2 else cands[:: math.ceil(len(cands) / max_n)]
    return [t for t in _linear_ticks(lo, hi, max_n) if t > 0]


def _axis(lim, log: bool, fmt, ticks, length: float, vertical: bool = False):
    """(tick values, tick labels) for an axis ``length`` units long, spaced so labels never overlap."""
    if ticks is not None:
        pairs = [(float(t[0]), str(t[1])) if isinstance(t, (tuple, list)) else (float(t), None) for t in ticks]
        tol = 1e-9 * (lim[1] - lim[0])
        pairs = [(v, l) for v, l in pairs if lim[0] - tol <= v <= lim[1] + tol and (not log or v > 0)]
        values = [v for v, _ in pairs]
        auto = _labels(values, fmt, log) if values else []
        return values, [l if l is not None else a for (_, l), a in zip(pairs, auto)]
    max_n = 7
    while True:
        values = _log_ticks(*lim, max_n) if log else _linear_ticks(*lim, max_n)
        labels = _labels(values, fmt, log)
        if max_n <= 3 or len(values) < 2:
            return values, labels
        gap = length / max(len(values) - 1, 1)
        need = 1.7 * _F if vertical else max(_width(l) for l in labels) + 0.9 * _F
        if gap >= need:
            return values, labels
        max_n -= 1


# --- placing direct labels ---------------------------------------------------------------------------------------
class _Boxes:
    """Text boxes already placed, so a new label can take the first candidate position that overlaps none."""

    def __init__(self, bounds):
        self.bounds = bounds          # x0, y0, x1, y1 the labels must stay inside
        self.placed = []

    @staticmethod
    def box(x, y, text, anchor):
        w = _width(text)
        x0 = x - w if anchor == "end" else (x - w / 2 if anchor == "middle" else x)
        return (x0, y - 0.8 * _F, x0 + w, y + 0.25 * _F)

    def place(self, candidates, text):
        """The first (x, y, anchor) in ``candidates`` whose box is inside the bounds and overlaps no placed box."""
        bx0, by0, bx1, by1 = self.bounds
        best, best_score = None, None
        for x, y, anchor in candidates:
            b = self.box(x, y, text, anchor)
            shift = max(0.0, bx0 - b[0]) - max(0.0, b[2] - bx1)
            b = (b[0] + shift, b[1], b[2] + shift, b[3])
            x = x + shift
            inside = b[1] >= by0 - 1 and b[3] <= by1 + 1
            overlap = sum(max(0, min(b[2], p[2]) - max(b[0], p[0])) * max(0, min(b[3], p[3]) - max(b[1], p[1]))
                          for p in self.placed)
            score = overlap + (0 if inside else 1e6)
            if best is None or score < best_score:
                best, best_score = (x, y, anchor, b), score
            if score == 0:
                break
        x, y, anchor, b = best
        self.placed.append(b)
        return x, y, anchor


def _label(x, y, text, fill=_INK, anchor="start", weight=None) -> str:
    w = f' font-weight="{weight}"' if weight else ""
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" fill="{fill}" stroke="#fff" stroke-width="4" '
            f'stroke-linejoin="round" paint-order="stroke"{w}>{_esc(text)}</text>')


# --- clipping lines to the plot ----------------------------------------------------------------------------------
def _clip(p, q, r):
    """Segment p–q clipped to rectangle r = (x0, y0, x1, y1) (Liang–Barsky), or None."""
    (x0, y0), (x1, y1) = p, q
    dx, dy = x1 - x0, y1 - y0
    t0, t1 = 0.0, 1.0
    for pk, qk in ((-dx, x0 - r[0]), (dx, r[2] - x0), (-dy, y0 - r[1]), (dy, r[3] - y0)):
        if pk == 0:
            if qk < 0:
                return None
            continue
        t = qk / pk
        if pk < 0:
            t0 = max(t0, t)
        else:
            t1 = min(t1, t)
        if t0 > t1:
            return None
    return (x0 + t0 * dx, y0 + t0 * dy), (x0 + t1 * dx, y0 + t1 * dy)


def _polylines(pts, rect):
    """Runs of points (None breaks a run) clipped to ``rect``, as lists of (x, y)."""
    runs, cur = [], []
    x0, y0, x1, y1 = rect
    for a, b in zip(pts, pts[1:]):
        if a is None or b is None:
            seg = None
        elif x0 <= a[0] <= x1 and y0 <= a[1] <= y1 and x0 <= b[0] <= x1 and y0 <= b[1] <= y1:
            seg = (a, b)                                # both ends inside: nothing to clip
        else:
            seg = _clip(a, b, rect)
        if seg is None:
            if cur:
                runs.append(cur)
            cur = []
            continue
        if not cur or abs(cur[-1][0] - seg[0][0]) > 1e-6 or abs(cur[-1][1] - seg[0][1]) > 1e-6:
            if cur:
                runs.append(cur)
            cur = [seg[0]]
        cur.append(seg[1])
        if seg[1] != b:
            runs.append(cur)
            cur = []
    if cur:
        runs.append(cur)
    if not runs and len(pts) == 1 and pts[0] is not None:
        x, y = pts[0]
        if rect[0] <= x <= rect[2] and rect[1] <= y <= rect[3]:
            runs.append([pts[0]])
    return runs


# --- the figure wrapper ------------------------------------------------------------------------------------------
def _legend(entries) -> str:
    """An HTML key: (label, colour, kind) with kind "line", "dash", "box" or "dot"."""
    if not entries:
        return ""
    items = []
    for label, c, kind in entries:
        cls = {"line": "cc-sw", "dash": "cc-sw dash", "box": "cc-sw box", "dot": "cc-sw dot"}[kind]
        prop = "border-color" if kind in ("line", "dash") else "background"
        items.append(f'<li><span class="{cls}" style="{prop}:{c}"></span>{_esc(label)}</li>')
    return f'<ul class="cc-legend">{"".join(items)}</ul>'


def _figure(svg_body: str, height: float, alt: str, title: str = "", legend=()) -> str:
    cap = f"<figcaption>{_esc(title)}</figcaption>" if title else ""
    return (f'<figure class="cc-chart" style="margin:.6em 0 1em">{cap}{_legend(legend)}'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {VIEW_WIDTH} {height:.0f}" role="img" '
            f'aria-label="{_esc(alt)}" font-size="{FONT_UNITS[0]}" font-family="{_esc(FONT_FAMILY)}" '
            f'style="width:100%;height:auto"><title>{_esc(alt)}</title>{svg_body}</svg></figure>')


def _need_alt(alt):
    if not alt or not str(alt).strip():
        raise ValueError("alt must describe the chart for readers who cannot see it")


def _finite(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _limits(name, lim, log):
    a, b = (float(lim[0]), float(lim[1]))
    if not (math.isfinite(a) and math.isfinite(b)) or a >= b or (log and a <= 0):
        raise ValueError(f"{name} must be finite, increasing{' and positive' if log else ''}, got {(a, b)!r}")
    return a, b


def _auto(values, log, zero):
    vals = [v for v in values if v is not None and (not log or v > 0)]
    if not vals:
        return (1.0, 10.0) if log else (0.0, 1.0)
    lo, hi = min(vals), max(vals)
    if log:
        if lo == hi:
            return lo / 2, hi * 2
        return lo, hi
    if zero:
        lo, hi = min(0.0, lo), max(0.0, hi)
    if lo == hi:
        return (lo - 1, hi + 1) if lo else (0.0, 1.0)
    return lo, hi


def _scale(lim, log, a, b):
    lo, hi = lim
    if log:
        llo, lhi = math.log10(lo), math.log10(hi)
        return lambda v: a + (math.log10(v) - llo) / (lhi - llo) * (b - a)
    return lambda v: a + (v - lo) / (hi - lo) * (b - a)


def svg_chart(*, lines=(), points=(), vlines=(), hlines=(), xlog=False, ylog=False, xlim=None, ylim=None,
              xlabel="", ylabel="", alt: str, title: str = "", width: int = 560, height: int = 300,
              xticks=None, yticks=None, xformat=None, yformat=None, legend: str = "top") -> str:
    """A line/point chart as an HTML figure with inline SVG (the style in the module docstring).

    ``lines``: dicts with ``x``, ``y`` (sequences), optional ``label``, ``color``, ``dash`` (bool).
    ``points``: dicts with ``x``, ``y``, optional ``label`` (drawn beside the point), ``color``.
    ``vlines``/``hlines``: dicts with ``x``/``y``, optional ``label`` (drawn on the line), ``color``.
    ``xlabel``/``ylabel``: axis titles with their unit. ``alt`` (required): the text a screen reader reads.
    ``xticks``/``yticks``: explicit tick values or ``(value, label)`` pairs; ``xformat``/``yformat``: ``"si"``,
    ``"pow10"``, ``"plain"``, ``"percent"`` or a callable. ``legend``: ``"top"`` (an HTML key of the labelled lines
    above the plot) or ``"none"``. ``width`` is accepted for compatibility (every chart is 600 units wide);
    ``height`` sets the plot's proportions (as if the chart were ``width`` wide).

    >>> svg = svg_chart(lines=[{"x": [1, 10], "y": [1, 10], "label": "y = x"}], xlog=True, ylog=True, alt="a line")
    >>> 'aria-label="a line"' in svg and "<li>" in svg
    True
    """
    _need_alt(alt)
    if legend not in ("top", "none"):
        raise ValueError(f"legend must be 'top' or 'none', got {legend!r}")
    xs = [_finite(v) for d in lines for v in d["x"]] + [_finite(d["x"]) for d in points]
    xs += [_finite(d["x"]) for d in vlines]
    ys = [_finite(v) for d in lines for v in d["y"]] + [_finite(d["y"]) for d in points]
    ys += [_finite(d["y"]) for d in hlines]
    auto_y = ylim is None
    xlim = _limits("xlim", xlim if xlim is not None else _auto(xs, xlog, False), xlog)
    if ylim is None and ylog:
        lo, hi = _auto(ys, True, False)
        pad = (hi / lo) ** 0.04
        ylim = (lo / pad, hi * pad)
    ylim = _limits("ylim", ylim if ylim is not None else _auto(ys, ylog, True), ylog)
    W = VIEW_WIDTH
    H = max(320.0, float(_check.positive("height", height)) * W / float(_check.positive("width", width)))
    mt = 2.0 * _F                                       # the y title's line
    mb = 2.7 * _F                                       # x tick labels and the x title
    ph = H - mt - mb
    yv, yl = _axis(ylim, ylog, yformat, yticks, ph, vertical=True)
    if auto_y and not ylog and yticks is None and yv and yv[-1] < ylim[1]:
        step = yv[-1] - yv[-2] if len(yv) > 1 else 0
        if step and yv[-1] + step <= ylim[1] * 1.2 + 1e-12:   # round the top up to the next tick
            ylim = (ylim[0], yv[-1] + step)
            yv, yl = _axis(ylim, ylog, yformat, yticks, ph, vertical=True)
    ml = max(1.2 * _F, max((_width(l) for l in yl), default=0) + 0.6 * _F)
    pw0 = W - ml - 0.8 * _F
    xv, xl = _axis(xlim, xlog, xformat, xticks, pw0)
    mr = max(0.8 * _F, (_width(xl[-1]) / 2 + 0.3 * _F) if xl else 0)
    pw = W - ml - mr
    tx, ty = _scale(xlim, xlog, ml, ml + pw), _scale(ylim, ylog, mt + ph, mt)
    rect = (ml, mt, ml + pw, mt + ph)
    out = []
    for v, l in zip(yv, yl):
        y = ty(v)
        out.append(f'<line x1="{ml:.1f}" y1="{y:.1f}" x2="{ml + pw:.1f}" y2="{y:.1f}" stroke="{_GRID}"/>'
                   f'<text x="{ml - 0.35 * _F:.1f}" y="{y + 0.35 * _F:.1f}" text-anchor="end" fill="{_INK}">'
                   f'{_esc(l)}</text>')
    out.extend(_x_grid(xv, xl, tx, mt, mt + ph))
    out.append(f'<path d="M{ml:.1f} {mt:.1f}V{mt + ph:.1f}H{ml + pw:.1f}" fill="none" stroke="#888"/>')
    if ylabel:
        out.append(f'<text x="0" y="{0.95 * _F:.1f}" fill="{_INK}">{_esc(ylabel)}</text>')
    if xlabel:
        out.append(_x_title(xlabel, ml + pw / 2, H))

    def at(x, y):
        x, y = _finite(x), _finite(y)
        if x is None or y is None or (xlog and x <= 0) or (ylog and y <= 0):
            return None
        return (tx(x), ty(y))

    keys = []
    for i, d in enumerate(lines):
        c = d.get("color") or color(i)
        dash = ' stroke-dasharray="7,5"' if d.get("dash") else ""
        for run in _polylines([at(x, y) for x, y in zip(d["x"], d["y"])], rect):
            pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in run)
            out.append(f'<polyline points="{pts}" fill="none" stroke="{c}" stroke-width="2.5"'
                       f' stroke-linejoin="round"{dash}/>')
        if d.get("label"):
            keys.append((d["label"], c, "dash" if d.get("dash") else "line"))
    boxes = _Boxes((ml, mt, ml + pw, mt + ph))
    labels = []
    for d in vlines:
        x = _finite(d["x"])
        if x is None or not xlim[0] <= x <= xlim[1] or (xlog and x <= 0):
            continue
        c, px = d.get("color", "#555"), tx(x)
        out.append(f'<line x1="{px:.1f}" y1="{mt:.1f}" x2="{px:.1f}" y2="{mt + ph:.1f}" stroke="{c}" '
                   f'stroke-width="1.5" stroke-dasharray="3,3"/>')
        if d.get("label"):
            cands = [(px + s * 0.3 * _F, mt + (0.95 + 1.1 * k) * _F, a) for k in range(4)
                     for s, a in ((1, "start"), (-1, "end"))]
            labels.append((cands, d["label"], c))
    for d in hlines:
        y = _finite(d["y"])
        if y is None or not ylim[0] <= y <= ylim[1] or (ylog and y <= 0):
            continue
        c, py = d.get("color", "#555"), ty(y)
        out.append(f'<line x1="{ml:.1f}" y1="{py:.1f}" x2="{ml + pw:.1f}" y2="{py:.1f}" stroke="{c}" '
                   f'stroke-width="1.5" stroke-dasharray="3,3"/>')
        if d.get("label"):
            cands = [(ml + pw - 0.3 * _F, py - 0.3 * _F, "end"), (ml + pw - 0.3 * _F, py + 1.0 * _F, "end"),
                     (ml + 0.3 * _F, py - 0.3 * _F, "start"), (ml + 0.3 * _F, py + 1.0 * _F, "start"),
                     (ml + pw / 2, py - 0.3 * _F, "middle")]
            labels.append((cands, d["label"], c))
    for d in points:
        p = at(d["x"], d["y"])
        if p is None or not (rect[0] - 1 <= p[0] <= rect[2] + 1 and rect[1] - 1 <= p[1] <= rect[3] + 1):
            continue
        c = d.get("color", "#000")
        out.append(f'<circle cx="{p[0]:.1f}" cy="{p[1]:.1f}" r="5" fill="{c}" stroke="#fff" stroke-width="1.5"/>')
        if d.get("label"):
            boxes.placed.append((p[0] - 6, p[1] - 6, p[0] + 6, p[1] + 6))
            r = 0.45 * _F
            cands = [(p[0] + r, p[1] - r, "start"), (p[0] - r, p[1] - r, "end"), (p[0] + r, p[1] + 1.2 * _F, "start"),
                     (p[0] - r, p[1] + 1.2 * _F, "end"), (p[0], p[1] - 1.6 * _F, "middle"),
                     (p[0], p[1] + 2.1 * _F, "middle")]
            labels.append((cands, d["label"], "#000"))
    for cands, text, c in labels:
        x, y, anchor = boxes.place(cands, text)
        out.append(_label(x, y, text, fill=c if c not in ("#fff", "white") else _INK, anchor=anchor))
    return _figure("".join(out), H, alt, title, keys if legend == "top" else ())


def _x_grid(values, labels, tx, top: float, axis_y: float) -> list[str]:
    """Vertical grid lines from ``top`` to the axis at ``axis_y``, each with its tick label under the axis."""
    return [f'<line x1="{tx(v):.1f}" y1="{top:.1f}" x2="{tx(v):.1f}" y2="{axis_y:.1f}" stroke="{_GRID}"/>'
            f'<text x="{tx(v):.1f}" y="{axis_y + 1.05 * _F:.1f}" text-anchor="middle" fill="{_INK}">'
            f'{_esc(l)}</text>' for v, l in zip(values, labels)]


def _x_title(xlabel: str, centre: float, height: float) -> str:
    """The x axis's title, centred under the plot at the bottom of a chart ``height`` units tall."""
    return (f'<text x="{centre:.1f}" y="{height - 0.35 * _F:.1f}" text-anchor="middle" fill="{_INK}">'
            f'{_esc(xlabel)}</text>')


def _rows(rows):
    out = []
    for r in rows:
        if isinstance(r, dict):
            label, value, c = r.get("label"), r.get("value"), r.get("color")
        else:
            r = tuple(r)
            if len(r) not in (2, 3):
                raise ValueError(f"a row must be (label, value) or (label, value, colour), got {r!r}")
            label, value, c = r[0], r[1], (r[2] if len(r) == 3 else None)
        out.append((str(label), _finite(value) if value is not None else None, c))
    if not out:
        raise ValueError("rows must hold at least one bar")
    return out


def _ink_on(fill: str) -> str:
    """Black or white text, whichever reads on ``fill`` (#rrggbb)."""
    try:
        r, g, b = (int(fill.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
    except (ValueError, AttributeError):
        return "#000"
    lum = 0.2126 * r + 0.7152 * g + 0.0722 * b
    return "#000" if lum > 0.45 else "#fff"


def _value_text(v, unit_format) -> str:
    if v is None:
        return "—"
    if unit_format is not None:
        return str(unit_format(v))
    return tables.fmt_value(v)


def svg_hbars(rows, *, xlabel: str = "", unit_format=None, alt: str, markers=(), title: str = "", legend=(),
              log: bool = False, xlim=None, xformat=None, xticks=None) -> str:
    """Named horizontal bars on one baseline, as an HTML figure with inline SVG.

    ``rows``: ``(label, value)`` or ``(label, value, colour)`` tuples, or dicts with those keys; a value of ``None``
    shows "—" (no figure). Each category's name is written above its bar; bars start at zero (on a log axis, at the
    axis minimum) and are proportional to their values; each bar's value is written at its end with
    ``unit_format`` (a callable; default: the table renderer's number format). ``markers``: dicts with ``x``,
    optional ``label`` and ``color`` — vertical reference lines across every bar. ``legend``: ``(label, colour)``
    pairs for a key above the chart (when colours encode a group). ``xlabel``: the value axis's title, with unit.

    >>> html = svg_hbars([("FP8", 1979), ("BF16", 989.4), ("TF32", 494.7)], xlabel="dense TFLOP/s", alt="H100 peaks")
    >>> html.count("<rect") == 3 and ">FP8<" in html and "1,979" in html
    True
    """
    _need_alt(alt)
    data = _rows(rows)
    vals = [v for _, v, _ in data if v is not None]
    mk = [(_finite(m["x"]), m.get("label"), m.get("color", "#555")) for m in markers]
    mk = [m for m in mk if m[0] is not None]
    if log:
        if any(v <= 0 for v in vals):
            raise ValueError("a log axis needs every value > 0")
        if xlim is None:
            allv = vals + [m[0] for m in mk if m[0] > 0] or [1.0, 10.0]
            lo, hi = min(allv), max(allv)
            xlim = (10.0 ** math.floor(math.log10(lo) + 1e-9), 10.0 ** math.ceil(math.log10(hi) - 1e-9))
            if xlim[0] == xlim[1]:
                xlim = (xlim[0], xlim[1] * 10)
    elif xlim is None:
        allv = vals + [m[0] for m in mk]
        xlim = (min([0.0] + allv), max([0.0] + allv))
        if xlim[0] == xlim[1]:
            xlim = (0.0, 1.0)
    xlim = _limits("xlim", xlim, log)
    W, ml = VIEW_WIDTH, 2.0
    top = (1.35 * _F) * (1 if any(m[1] for m in mk) else 0) + 0.2 * _F
    row_h = 2.6 * _F
    names_wrapped = [_wrap(n, W) for n, _, _ in data]
    heights = [row_h + 1.1 * _F * (len(w) - 1) for w in names_wrapped]
    plot_h = sum(heights)
    xv, xl = _axis(xlim, log, xformat, xticks, W - 2 * _F)
    if not log and xticks is None and xv and xv[-1] < xlim[1]:
        step = xv[-1] - xv[-2] if len(xv) > 1 else 0
        if step:
            xlim = (xlim[0], xv[-1] + step)
            xv, xl = _axis(xlim, log, xformat, xticks, W - 2 * _F)
    ml = max(ml, (_width(xl[0]) / 2 + 2) if xl else 0)
    mr = max(0.6 * _F, (_width(xl[-1]) / 2 + 0.3 * _F) if xl else 0)
    pw = W - ml - mr
    tx = _scale(xlim, log, ml, ml + pw)
    base = tx(xlim[0]) if log else tx(0.0)
    H = top + plot_h + (2.7 if xlabel else 1.6) * _F
    out = []
    axis_y = top + plot_h
    out.extend(_x_grid(xv, xl, tx, top, axis_y))
    if xlabel:
        out.append(_x_title(xlabel, ml + pw / 2, H))
    y = top
    for i, ((name, v, c), wrapped, h) in enumerate(zip(data, names_wrapped, heights)):
        c = c or color(0)
        for k, part in enumerate(wrapped):
            out.append(f'<text x="{base + 0.3 * _F:.1f}" y="{y + (0.95 + 1.1 * k) * _F:.1f}" fill="#000">'
                       f'{_esc(part)}</text>')
        by = y + (1.25 + 1.1 * (len(wrapped) - 1)) * _F
        bh = 1.0 * _F
        text = _value_text(v, unit_format)
        if v is None:
            out.append(_label(base + 0.3 * _F, by + 0.78 * _F, text, fill="#555"))
        else:
            end = tx(min(max(v, xlim[0]), xlim[1]))
            x0, x1 = min(base, end), max(base, end)
            out.append(f'<rect x="{x0:.1f}" y="{by:.1f}" width="{max(x1 - x0, 0.5):.1f}" height="{bh:.1f}" '
                       f'fill="{c}"><title>{_esc(name)}: {_esc(text)}</title></rect>')
            w = _width(text)
            if x1 - x0 >= w + 0.8 * _F:
                anchor_x = x1 - 0.3 * _F if v >= 0 or log else x0 + 0.3 * _F
                out.append(f'<text x="{anchor_x:.1f}" y="{by + 0.8 * _F:.1f}" '
                           f'text-anchor="{"end" if v >= 0 or log else "start"}" fill="{_ink_on(c)}">'
                           f'{_esc(text)}</text>')
            elif v >= 0 or log:
                tx_ = min(x1 + 0.3 * _F, W - w)
                out.append(_label(tx_, by + 0.8 * _F, text, fill="#000"))
            else:
                out.append(_label(max(x0 - 0.3 * _F, w), by + 0.8 * _F, text, fill="#000", anchor="end"))
        y += h
    out.append(f'<line x1="{base:.1f}" y1="{top:.1f}" x2="{base:.1f}" y2="{axis_y:.1f}" stroke="#555" '
               f'stroke-width="1.5"/>')
    boxes = _Boxes((0, 0, W, top))
    for x, label, c in mk:
        if not xlim[0] <= x <= xlim[1]:
            continue
        px = tx(x)
        out.append(f'<line x1="{px:.1f}" y1="{top:.1f}" x2="{px:.1f}" y2="{axis_y:.1f}" stroke="{c}" '
                   f'stroke-width="1.5" stroke-dasharray="4,3"/>')
        if label:
            lx, ly, anchor = boxes.place([(px, 0.95 * _F, "middle"), (px + 2, 0.95 * _F, "start"),
                                          (px - 2, 0.95 * _F, "end")], label)
            out.append(_label(lx, ly, label, fill=c, anchor=anchor))
    keys = [(str(l), c, "box") for l, c in legend]
    return _figure("".join(out), H, alt, title, keys)


def _wrap(text: str, width: float) -> list[str]:
    """Split a category name into lines that fit ``width`` units at the largest text size (never truncated)."""
    limit = max(8, int(width / (_CW * _F)))
    words, lines, cur = str(text).split(), [], ""
    for w in words:
        if cur and len(cur) + 1 + len(w) > limit:
            lines.append(cur)
            cur = w
        else:
            cur = f"{cur} {w}" if cur else w
    return lines + [cur] if cur else (lines or [""])


def svg_stacked(rows, *, capacity=None, capacity_label: str = "capacity", unit_format=str, alt: str,
                xlabel: str = "", title: str = "", xformat=None) -> str:
    """Stacked horizontal bars on one scale (e.g. memory ledgers of several configurations), as an HTML figure.

    ``rows``: ``(row label, [(segment label, value ≥ 0), ...])``; a segment keeps its colour in every row. A
    ``capacity`` draws a marker across every bar, labelled ``capacity_label`` and its value. ``unit_format`` turns a
    value into text for the key and tooltips (and for the ticks when ``xlabel`` is empty).

    >>> html = svg_stacked([("ZeRO-0", [("weights", 2), ("optimizer", 6)]), ("ZeRO-1", [("weights", 2),
    ...                     ("optimizer", 1)])], capacity=10, unit_format=lambda v: f"{v} GB", alt="memory")
    >>> html.count("<rect") == 4 and "ZeRO-1" in html
    True
    """
    _need_alt(alt)
    rows = [(str(name), [(str(k), _check.nonnegative(f"segment {k!r}", v)) for k, v in segs]) for name, segs in rows]
    if not rows:
        raise ValueError("rows must hold at least one bar")
    cap = _check.positive("capacity", capacity) if capacity is not None else None
    order = []
    for _, segs in rows:
        order += [k for k, _ in segs if k not in order]
    colours = {k: color(i) for i, k in enumerate(order)}
    hi = max([sum(v for _, v in segs) for _, segs in rows] + [cap or 0]) or 1.0
    W, ml = VIEW_WIDTH, 2.0
    fmt = xformat if (xlabel or xformat) else (lambda v: unit_format(v))
    xv, xl = _axis((0.0, hi), False, fmt, None, W - 2 * _F)
    if xv and xv[-1] < hi:
        step = xv[-1] - xv[-2] if len(xv) > 1 else hi
        xv, xl = _axis((0.0, xv[-1] + step), False, fmt, None, W - 2 * _F)
    lim_hi = max(xv[-1], hi) if xv else hi
    ml = max(ml, (_width(xl[0]) / 2 + 2) if xl else 0)
    mr = max(0.6 * _F, (_width(xl[-1]) / 2 + 0.3 * _F) if xl else 0)
    pw = W - ml - mr
    tx = _scale((0.0, lim_hi), False, ml, ml + pw)
    named = len(rows) > 1 or rows[0][0]
    top = (1.35 * _F if cap is not None else 0.3 * _F)
    row_h = (2.9 if named else 1.9) * _F
    axis_y = top + row_h * len(rows)
    H = axis_y + (2.7 if xlabel else 1.6) * _F
    out = []
    out.extend(_x_grid(xv, xl, tx, top, axis_y))
    if xlabel:
        out.append(_x_title(xlabel, ml + pw / 2, H))
    for i, (name, segs) in enumerate(rows):
        y = top + i * row_h
        if named:
            out.append(f'<text x="{ml + 0.3 * _F:.1f}" y="{y + 0.95 * _F:.1f}" fill="#000">{_esc(name)}</text>')
            y += 1.2 * _F
        x = tx(0.0)
        for k, v in segs:
            w = tx(v) - tx(0.0)
            out.append(f'<rect x="{x:.1f}" y="{y + 0.2 * _F:.1f}" width="{w:.1f}" height="{1.4 * _F:.1f}" '
                       f'fill="{colours[k]}"><title>{_esc(k)}: {_esc(unit_format(v))}</title></rect>')
            x += w
    out.append(f'<line x1="{tx(0.0):.1f}" y1="{top:.1f}" x2="{tx(0.0):.1f}" y2="{axis_y:.1f}" stroke="#555" '
               f'stroke-width="1.5"/>')
    if cap is not None:
        cx = tx(cap)
        text = f"{capacity_label} {unit_format(cap)}"
        out.append(f'<line x1="{cx:.1f}" y1="{top - 0.2 * _F:.1f}" x2="{cx:.1f}" y2="{axis_y:.1f}" stroke="#000" '
                   f'stroke-width="2.5"/>')
        anchor = "end" if cx + _width(text) / 2 > W else ("start" if cx - _width(text) / 2 < 0 else "middle")
        out.append(_label(cx, 0.95 * _F, text, fill="#000", anchor=anchor))
    if len(rows) == 1:
        keys = [(f"{k}: {unit_format(v)}", colours[k], "box") for k, v in rows[0][1]]
    else:
        keys = [(k, colours[k], "box") for k in order]
    return _figure("".join(out), H, alt, title, keys)


def svg_bars(segments, *, capacity=None, capacity_label="capacity", unit_format=str, alt: str,
             width: int = 560, height: int = 70, xlabel: str = "", title: str = "") -> str:
    """One stacked bar across the column (e.g. a memory ledger) with an optional capacity marker, an axis and a
    key that names every segment with its value (``unit_format``). ``width``/``height`` are accepted for
    compatibility. See :func:`svg_stacked` for several bars on one scale.

    >>> "aria-label" in svg_bars([("weights", 2), ("optimizer", 6)], capacity=10, alt="memory")
    True
    """
    return svg_stacked([("", list(segments))], capacity=capacity, capacity_label=capacity_label,
                       unit_format=unit_format, alt=alt, xlabel=xlabel, title=title)
