"""A row × time chart (Gantt chart) in the explorable chart style: one row per resource, one block per task, idle
time shaded, optionally revealed only up to a time. Used for pipeline schedules (stage × time).

>>> html = svg_gantt(["1", "2"], [(0, 0, 1, "F", "1"), (1, 1, 2, "F", "1")], {"F": ("forward", "#0072B2")},
...                  xmax=2, row_title="stage", xlabel="time (F)", alt="two blocks")
>>> html.count("<path") >= 2 and 'aria-label="two blocks"' in html
True
"""
from __future__ import annotations

import math

from .. import _check
from ._svg import VIEW_WIDTH, _CW, _F, _GRID, _INK, _esc, _figure, _need_alt, _width

__all__ = ["svg_gantt", "IDLE"]

#: the fill of idle time (the bubble)
IDLE = "#d9d9d9"


def _ink_on(fill: str) -> str:
    r, g, b = (int(fill.lstrip("#")[i:i + 2], 16) / 255 for i in (0, 2, 4))
    return "#000" if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.45 else "#fff"


def _step(span: float, room: float) -> float:
    """A 1-2-5 tick step giving labels that do not collide across ``room`` units."""
    for k in range(-1, 8):
        for base in (1, 2, 5):
            step = base * 10 ** k
            n = span / step
            if n <= 8 and room / max(n, 1) >= _width(f"{span:g}") + 0.8 * _F:
                return step
    return 10 ** math.ceil(math.log10(span))


def svg_gantt(rows, bars, kinds, *, xmax, upto=None, row_title="", xlabel="", alt: str, title: str = "",
              idle_label="idle (bubble)", marker_label=None) -> str:
    """A Gantt chart as an HTML figure with inline SVG.

    ``rows``: row names, top to bottom. ``bars``: (row index, start, end, kind, text) with ``text`` written in the
    block when it fits at the phone's text size. ``kinds``: kind → (legend label, colour). ``xmax``: the time axis'
    end (from 0). ``upto``: draw only what happens before this time (blocks cut there, a line marks it); the idle
    time up to it is shaded :data:`IDLE` and named ``idle_label`` in the key. ``marker_label``: the line's label.
    """
    _need_alt(alt)
    rows = [str(r) for r in rows]
    if not rows:
        raise ValueError("rows must hold at least one row")
    xmax = _check.positive("xmax", xmax)
    upto = xmax if upto is None else min(_check.positive("upto", upto), xmax)
    W = VIEW_WIDTH
    ml = max(_width(r) for r in rows) + 0.7 * _F
    mr = 0.6 * _F + _width(f"{xmax:g}") / 2
    mt = (2.9 if marker_label else 1.9) * _F
    rh = max(1.45 * _F, min(2.2 * _F, 260 / len(rows)))
    ph = rh * len(rows)
    mb = 2.8 * _F
    H = mt + ph + mb
    pw = W - ml - mr

    def tx(t):
        return ml + t / xmax * pw

    out = []
    if row_title:
        out.append(f'<text x="0" y="{0.95 * _F:.1f}" fill="{_INK}">{_esc(row_title)}</text>')
    # the grid as one path, the tick labels and the row names each in one group that sets their anchor and ink
    step = _step(xmax, pw)
    grid, ticks = [], []
    k = 0
    while k * step <= xmax + 1e-9:
        x = tx(k * step)
        grid.append(f"M{x:.1f} {mt:.1f}V{mt + ph:.1f}")
        ticks.append(f'<text x="{x:.1f}" y="{mt + ph + 1.05 * _F:.1f}">{k * step:g}</text>')
        k += 1
    if xlabel:
        ticks.append(f'<text x="{ml + pw / 2:.1f}" y="{H - 0.35 * _F:.1f}">{_esc(xlabel)}</text>')
    out.append(f'<path d="{"".join(grid)}" stroke="{_GRID}"/><g text-anchor="middle" fill="{_INK}">{"".join(ticks)}</g>')
    names = [f'<text x="{ml - 0.35 * _F:.1f}" y="{mt + i * rh + rh / 2 + 0.35 * _F:.1f}">{_esc(r)}</text>'
             for i, r in enumerate(rows)]
    out.append(f'<g text-anchor="end" fill="{_INK}">{"".join(names)}</g>')
    # idle time up to `upto`: the rows' background, under the blocks
    out.append(f'<rect x="{ml:.1f}" y="{mt:.1f}" width="{tx(upto) - ml:.1f}" height="{ph:.1f}" fill="{IDLE}"/>')
    # Each kind's blocks are one path of horizontal strokes, as wide as a block is tall, each segment inset half a
    # unit at both ends and the stroke one unit thinner than the block: the look of a rectangle with a white
    # 1-unit outline (blocks stay apart), in about a third of the bytes; moves are relative to the last segment.
    paths = {k: [] for k in kinds}
    pens = {}                                         # kind -> end of its last segment
    labels = {}                                       # text colour -> [(x, y, text)]
    pad = max(1.0, 0.06 * rh)
    h = round(rh - 2 * pad)
    # a kind's blocks carry their text only if every one of them has room for it (no half-numbered rows)
    room = {}
    for row, start, end, kind, text in bars:
        need = len(str(text)) * _CW * _F + 4 if text else 0
        room[kind] = room.get(kind, True) and (end - start) / xmax * pw >= need + 1
    for row, start, end, kind, text in bars:
        if kind not in kinds:
            raise ValueError(f"bar kind {kind!r} is not in kinds ({', '.join(map(repr, kinds))})")
        if start >= upto:
            continue
        x0, x1 = round(tx(start)), round(tx(min(end, upto)))
        y0 = round(mt + row * rh + pad)
        if x1 <= x0:
            continue
        if x1 - x0 > 1:
            at, y = (x0 + 0.5, y0 + h / 2)
            last = pens.get(kind)
            move = f"M{at:g} {y:g}" if last is None else f"m{at - last[0]:g} {y - last[1]:g}"
            paths[kind].append(f"{move}h{x1 - x0 - 1}")
            pens[kind] = (x1 - 0.5, y)
        if text and room[kind] and x1 - x0 >= len(str(text)) * _CW * _F + 2:
            labels.setdefault(_ink_on(kinds[kind][1]), []).append(
                f'<text x="{(x0 + x1) / 2:g}" y="{y0 + h / 2 + 0.35 * _F:.0f}">{_esc(text)}</text>')
    for kind, d in paths.items():
        if d:
            out.append(f'<path d="{"".join(d)}" fill="none" stroke="{kinds[kind][1]}" stroke-width="{h - 1}"/>')
    for ink, texts in labels.items():
        out.append(f'<g text-anchor="middle" fill="{ink}">{"".join(texts)}</g>')
    out.append(f'<path d="M{ml:.1f} {mt:.1f}V{mt + ph:.1f}H{ml + pw:.1f}" fill="none" stroke="#888"/>')
    if upto < xmax:
        x = tx(upto)
        out.append(f'<line x1="{x:.1f}" y1="{mt - 0.3 * _F:.1f}" x2="{x:.1f}" y2="{mt + ph:.1f}" stroke="#222" '
                   f'stroke-width="2"/>')
        if marker_label:
            anchor = "end" if x > ml + pw / 2 else "start"
            dx = -0.3 * _F if anchor == "end" else 0.3 * _F
            out.append(f'<text x="{x + dx:.1f}" y="{mt - 0.45 * _F:.1f}" text-anchor="{anchor}" fill="{_INK}" '
                       f'stroke="#fff" stroke-width="4" stroke-linejoin="round" paint-order="stroke">'
                       f'{_esc(marker_label)}</text>')
    legend = [(label, c, "box") for label, c in kinds.values()] + [(idle_label, IDLE, "box")]
    return _figure("".join(out), H, alt, title, legend)
