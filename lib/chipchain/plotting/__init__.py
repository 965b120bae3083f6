"""One figure style for the whole book: matplotlib for static figures, light SVG charts for explorables.

Plot helpers elsewhere in chipchain take ``ax=None`` and return the Axes; they call :func:`axes` to get one in
this style. Colours come from a colour-blind-safe palette (Okabe and Ito 2008) in a fixed order; static figures and
explorable charts share it, and the typeface (DejaVu Sans, matplotlib's, named first in the charts' font list).

>>> color(0)
'#0072B2'

**The explorable chart style** (:func:`svg_chart`, :func:`svg_hbars`, :func:`svg_bars`, :func:`svg_stacked`,
:func:`svg_gantt`).
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

from ._style import PALETTE, axes, color, figure, style
from ._svg import CHART_CSS, FONT_UNITS, VIEW_WIDTH, _Boxes, _width
from ._ticks import _axis
from .charts import svg_bars, svg_chart, svg_hbars, svg_stacked
from .gantt import svg_gantt
from . import diagrams
from .diagrams import svg_diagram

__all__ = ["PALETTE", "color", "style", "axes", "figure", "svg_chart", "svg_hbars", "svg_bars", "svg_stacked", "svg_gantt",
           "svg_diagram", "diagrams", "CHART_CSS", "FONT_UNITS", "VIEW_WIDTH"]
