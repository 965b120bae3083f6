"""The explorable charts: :func:`svg_chart` (lines, points, reference lines), :func:`svg_hbars` (named
categories), :func:`svg_stacked` and :func:`svg_bars` (stacked ledgers). Their style: :mod:`chipchain.plotting`."""
from __future__ import annotations

import html as _html
import math
import re

from .. import _check, tables
from ._style import color
from .._i18n import gettext as _t, has_cjk as _has_cjk
from ._svg import (VIEW_WIDTH, _Boxes, _CW, _F, _GRID, _INK, _advance, _esc, _figure, _label, _need_alt, _polylines,
                   _width)
from ._ticks import _axis


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

    ``lines``: dicts with ``x``, ``y`` (sequences), optional ``label``, ``color``, ``dash`` (bool), ``base`` (a
    sequence as long as ``y``: the band between ``base`` and ``y`` is filled in the line's colour — stacked areas).
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
        if d.get("base") is not None:                     # a band: filled between ``base`` and ``y`` (stacked areas)
            top_ = [at(x, y) for x, y in zip(d["x"], d["y"])]
            low_ = [at(x, y) for x, y in zip(d["x"], d["base"])]
            ring = [(min(max(px, rect[0]), rect[2]), min(max(py, rect[1]), rect[3]))
                    for px, py in [p for p in top_ if p] + [p for p in reversed(low_) if p]]
            if len(ring) > 2:
                pts = " ".join(f"{x:.1f},{y:.1f}" for x, y in ring)
                out.append(f'<polygon points="{pts}" fill="{c}" fill-opacity="0.8" stroke="none"/>')
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
                       f'{_html.escape(part)}</text>')
        by = y + (1.25 + 1.1 * (len(wrapped) - 1)) * _F
        bh = 1.0 * _F
        text = _value_text(v, unit_format)
        if v is None:
            out.append(_label(base + 0.3 * _F, by + 0.78 * _F, text, fill="#555"))
        else:
            end = tx(min(max(v, xlim[0]), xlim[1]))
            x0, x1 = min(base, end), max(base, end)
            out.append(f'<rect x="{x0:.1f}" y="{by:.1f}" width="{max(x1 - x0, 0.5):.1f}" height="{bh:.1f}" '
                       f'fill="{c}"><title>{_keyed(name, text)}</title></rect>')
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


def _keyed(name, value) -> str:
    """"name: value" for a tooltip, escaped, in the reader's language (a Chinese colon in the zh edition)."""
    return _html.escape(_t("{name}: {value}").format(name=_t(name), value=_t(value)))


def _wrap_cjk(text: str, width: float) -> list[str]:
    """Lines of a Chinese label within ``width`` units: breaks fall between characters (not inside a Latin word or
    a number with its unit), never before closing punctuation."""
    tokens = re.findall(r"[A-Za-z0-9.,%/+×µ²³·'’()\-]+(?: ?[%A-Za-z/]+)?|\s+|.", text)
    lines, cur = [], ""
    for tok in tokens:
        # the text is already the reader's: measured as it stands (a piece of it is no message to look up)
        if cur and sum(map(_advance, cur + tok)) * _F > width and not tok.isspace() and tok not in "，。、；：）」』》％":
            lines.append(cur.rstrip())
            cur = tok.lstrip()
        else:
            cur += tok
    return lines + [cur] if cur.strip() else (lines or [""])


def _wrap(text: str, width: float) -> list[str]:
    """Split a category name into lines that fit ``width`` units at the largest text size (never truncated, and
    never between a number and its "%").

    >>> _wrap("GPU SRAM Memory: printed 4.5 %, counts give 4.5 %", 600)
    ['GPU SRAM Memory: printed 4.5 %, counts give', '4.5 %']
    """
    text = _t(text)
    if _has_cjk(text):                       # Chinese wraps between characters, by advance
        return _wrap_cjk(text, width)
    limit = max(8, int(width / (_CW * _F)))
    words, lines, cur = [], [], ""
    for w in str(text).split():              # "17.2 %" stays on one line: a unit sign never starts a line
        if words and w.startswith("%"):
            words[-1] += " " + w
        else:
            words.append(w)
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
                       f'fill="{colours[k]}"><title>{_keyed(k, unit_format(v))}</title></rect>')
            x += w
    out.append(f'<line x1="{tx(0.0):.1f}" y1="{top:.1f}" x2="{tx(0.0):.1f}" y2="{axis_y:.1f}" stroke="#555" '
               f'stroke-width="1.5"/>')
    if cap is not None:
        cx = tx(cap)
        text = _t("{label} {value}").format(label=_t(capacity_label), value=unit_format(cap))
        out.append(f'<line x1="{cx:.1f}" y1="{top - 0.2 * _F:.1f}" x2="{cx:.1f}" y2="{axis_y:.1f}" stroke="#000" '
                   f'stroke-width="2.5"/>')
        anchor = "end" if cx + _width(text) / 2 > W else ("start" if cx - _width(text) / 2 < 0 else "middle")
        out.append(_label(cx, 0.95 * _F, text, fill="#000", anchor=anchor))
    if len(rows) == 1:
        keys = [(_t("{name}: {value}").format(name=_t(k), value=unit_format(v)), colours[k], "box")
                for k, v in rows[0][1]]
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
