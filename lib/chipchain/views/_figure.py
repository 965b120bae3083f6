"""A static figure drawn by the chart system (:mod:`chipchain.plotting`'s SVG charts), shown in a chapter.

:class:`Figure` wraps the HTML of one or more charts: Jupyter and the site show it as HTML (the chart style carried
with it, as tables carry theirs), nbval compares its plain text — the numbers it draws, rounded — and tests read
``.html`` and ``.data`` (the values plotted, from the library).

>>> f = Figure('<figure class="cc-chart"></figure>', "a chart", {"ridge": 295.0})
>>> str(f)
'a chart'
"""
from __future__ import annotations

import html

from .. import plotting
from .._i18n import gettext as _t


class Figure:
    """One static figure: ``html`` (charts), ``text`` (what it shows, in words and rounded numbers), ``data``."""

    def __init__(self, html: str, text: str, data=None):
        self.html = str(html)
        self.text = str(text)
        self.data = dict(data or {})

    def _repr_html_(self) -> str:
        return f"<style>{plotting.CHART_CSS}</style>{self.html}"

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def key(entries) -> str:
    """An HTML key in the charts' own legend style: (label, colour, kind), kind "line", "dash", "box" or "dot"
    (for points, which :func:`chipchain.plotting.svg_chart` does not list in its key)."""
    items = []
    for label, c, kind in entries:
        cls = {"line": "cc-sw", "dash": "cc-sw dash", "box": "cc-sw box", "dot": "cc-sw dot"}[kind]
        prop = "border-color" if kind in ("line", "dash") else "background"
        items.append(f'<li><span class="{cls}" style="{prop}:{html.escape(c)}"></span>{html.escape(_t(label))}</li>')
    return f'<ul class="cc-legend">{"".join(items)}</ul>' if items else ""
