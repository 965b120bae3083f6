"""Small HTML building blocks shared by the explorables' render functions: headline figures, key–value tables
(through :func:`chipchain.tables.show`) and a verdict line. They carry class names, not inline styles: the style
is :data:`chipchain.widgets.VIEW_CSS`, which every explorable's header carries (and ``book/site.css``), so a view
looks the same on the site, in JupyterLab and in a notebook, and each of an explorable's precomputed views does
not repeat it.

>>> "152 days</div>" in headline([("run length", "152 days", "at 50 % MFU")])
True
>>> "Quantity" in kv([("GPUs", "1,024")])
True
"""
from __future__ import annotations

import html as _html

from .. import tables
from .._i18n import gettext as _t

__all__ = ["headline", "kv", "verdict", "para", "GOOD", "BAD"]

GOOD, BAD = "#007A5A", "#B34700"          # darker than the palette's green/vermilion: ≥ 4.5:1 on white


#: a colour given to a headline value or a verdict, as the class that sets it (any other colour stays inline)
_COLOUR_CLASS = {GOOD: "cc-good", BAD: "cc-bad"}


def _colour(colour) -> str:
    if not colour:
        return ""
    if colour in _COLOUR_CLASS:
        return f' class="{_COLOUR_CLASS[colour]}"'
    return f' style="color:{_html.escape(colour)}"'


def headline(items, *, columns: str | None = None) -> str:
    """Headline figures as a grid of cards: ``items`` are (label, value[, note[, colour]]); the value is set large,
    the label above it, the note (e.g. the running example's value) under it. Plain text; escaped here.
    ``columns``: a CSS ``grid-template-columns`` other than the default ``repeat(auto-fit, minmax(8.6em, 1fr))``."""
    def e(text):
        return _html.escape(_t(text), quote=False)

    cards = []
    for item in items:
        label, value, note, colour = (list(item) + [None, None])[:4]
        cards.append(f"<div><div>{e(str(label))}</div><div{_colour(colour)}>{e(str(value))}</div>"
                     + (f"<div>{e(str(note))}</div>" if note else "") + "</div>")
    grid = f' style="grid-template-columns:{_html.escape(columns)}"' if columns else ""
    return f'<div class="cc-headline"{grid}>{"".join(cards)}</div>'


def kv(rows, *, caption=None, headers=("Quantity", "Value"), notes=()) -> str:
    """Two-column (or wider) table of already formatted text through :func:`chipchain.tables.show`."""
    import pandas as pd

    df = pd.DataFrame([list(r) for r in rows], columns=list(headers))
    return tables.show(df, columns={h: h for h in headers}, caption=caption, notes=notes).html


def verdict(text: str, ok: bool | None = True, lead: str | None = None) -> str:
    """One line stating the result, green when ``ok``, vermilion when not, neutral when None."""
    tone = " cc-ink" if ok is None else " cc-good" if ok else " cc-bad"
    head = f"<strong>{_html.escape(_t(lead))}</strong> " if lead else ""
    return f'<p class="cc-verdict{tone}">{head}{_html.escape(_t(text))}</p>'


def para(text: str, small: bool = False) -> str:
    """A paragraph of plain text (escaped)."""
    return f'<p class="cc-para{" cc-small" if small else ""}">{_html.escape(_t(text))}</p>'

