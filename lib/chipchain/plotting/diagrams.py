"""Schematic diagrams (a rank × chunk grid, a node's topology) in the charts' SVG style: the same 600-unit
``viewBox``, the same text sizes chosen by the rendered width (:data:`chipchain.plotting.CHART_CSS`), the same
``<figure>`` wrapper with an HTML key and alt text. The caller lays out shapes for the largest text size,
:data:`TEXT` units, so nothing collides at any width.

>>> html = svg_diagram(text(10, 30, "rank 0"), 60, alt="a grid")
>>> html.startswith('<figure class="cc-chart"') and 'aria-label="a grid"' in html
True
"""
from __future__ import annotations

from ._svg import _F, _esc, _figure, _need_alt, _width

__all__ = ["svg_diagram", "rect", "text", "line", "text_width", "TEXT"]

#: the largest text size, in SVG units, that every diagram is laid out for
TEXT = _F


def text_width(s) -> float:
    """Estimated width of ``s`` at the largest text size (generous)."""
    return _width(s)


def rect(x, y, w, h, fill="#fff", stroke="#888", width=1.0, dash=False, title=None, rx=3) -> str:
    # SVG's defaults (rx 0, stroke-width 1) are left out: explorables repeat these shapes in every precomputed view
    d = ' stroke-dasharray="6,4"' if dash else ""
    r = f' rx="{rx:g}"' if rx else ""
    sw = f' stroke-width="{width:g}"' if width != 1 else ""
    head = f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}"{r} fill="{fill}" stroke="{stroke}"{sw}{d}'
    return f"{head}><title>{_esc(title)}</title></rect>" if title else f"{head}/>"


def text(x, y, s, fill="#333", anchor="start", weight=None) -> str:
    w = f' font-weight="{weight}"' if weight else ""
    a = f' text-anchor="{anchor}"' if anchor != "start" else ""        # start is SVG's default
    return f'<text x="{x:.1f}" y="{y:.1f}"{a} fill="{fill}"{w}>{_esc(s)}</text>'


def line(x1, y1, x2, y2, stroke="#888", width=1.5, dash=False) -> str:
    d = ' stroke-dasharray="6,4"' if dash else ""
    return (f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{stroke}" '
            f'stroke-width="{width:g}"{d}/>')


def svg_diagram(body: str, height: float, *, alt: str, title: str = "", legend=()) -> str:
    """Shapes (``body``, SVG elements in a 600-unit-wide frame) as a figure in the charts' style; ``legend``:
    (label, colour, kind) entries, kind "line", "dash", "box" or "dot"."""
    _need_alt(alt)
    return _figure(body, float(height), alt, title, list(legend))
