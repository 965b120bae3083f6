"""SVG primitives of the explorable charts: sizes and CSS, text width, direct labels that do not collide, lines
clipped to the plot, and the ``<figure>`` wrapper with its legend and alt text."""
from __future__ import annotations

import html as _html
import unicodedata

from .._i18n import gettext as _t
from ._style import FONT_FAMILY


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
    """Text a chart draws, in the reader's language (:mod:`chipchain._i18n`), escaped for SVG and HTML."""
    return _html.escape(_t(text), quote=True)


def _advance(ch: str) -> float:
    """Advance of one character in em: a CJK (wide) character a full em, any other a digit's."""
    return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F") else _CW


def _width(text, size: float = _F) -> float:
    """Estimated advance of ``text`` (as the reader sees it) at ``size`` units (generous: digits are the widest
    common Latin glyphs; a Chinese character is a full em)."""
    return sum(_advance(ch) for ch in _t(text)) * size


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
    alt = _t(alt, strict=False)      # a screen reader's sentence: translated where the catalog has it
    cap = f"<figcaption>{_esc(title)}</figcaption>" if title else ""
    return (f'<figure class="cc-chart" style="margin:.6em 0 1em">{cap}{_legend(legend)}'
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {VIEW_WIDTH} {height:.0f}" role="img" '
            f'aria-label="{_html.escape(alt, quote=True)}" font-size="{FONT_UNITS[0]}" font-family="{_html.escape(FONT_FAMILY, quote=True)}" '
            f'style="width:100%;height:auto"><title>{_html.escape(alt)}</title>{svg_body}</svg></figure>')


def _need_alt(alt):
    if not alt or not str(alt).strip():
        raise ValueError("alt must describe the chart for readers who cannot see it")
