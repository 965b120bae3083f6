"""A static figure drawn by the chart system (:mod:`chipchain.plotting`'s SVG charts), shown in a chapter.

:class:`Figure` wraps the HTML of one or more charts: Jupyter and the site show it as HTML (the chart style carried
with it, as tables carry theirs), nbval compares its plain text — the numbers it draws, rounded — and tests read
``.html`` and ``.data`` (the values plotted, from the library).

>>> f = Figure('<figure class="cc-chart"></figure>', "a chart", {"ridge": 295.0})
>>> str(f)
'a chart'
"""
from __future__ import annotations

from .. import plotting

#: side by side from a wide column, stacked on a phone (each panel keeps the chart style's container queries)
PANELS_CSS = (".cc-panels{display:flex;flex-wrap:wrap;gap:0 1.5em;align-items:flex-start}"
              ".cc-panels>.cc-panel{flex:1 1 320px;min-width:0}")


class Figure:
    """One static figure: ``html`` (charts), ``text`` (what it shows, in words and rounded numbers), ``data``."""

    def __init__(self, html: str, text: str, data=None):
        self.html = str(html)
        self.text = str(text)
        self.data = dict(data or {})

    def _repr_html_(self) -> str:
        return f"<style>{plotting.CHART_CSS}{PANELS_CSS}</style>{self.html}"

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__


def panels(*charts: str) -> str:
    """Charts side by side on a wide column, one above the other on a phone."""
    return '<div class="cc-panels">' + "".join(f'<div class="cc-panel">{c}</div>' for c in charts) + "</div>"
