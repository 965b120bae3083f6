"""Small HTML building blocks shared by the explorables' render functions: headline figures, key–value tables
(through :func:`chipchain.tables.show`) and a verdict line. Inline styles only, so a view looks the same on the
site, in JupyterLab and in a notebook without the site's CSS.

>>> "152 days</div>" in headline([("run length", "152 days", "at 50 % MFU")])
True
>>> "Quantity" in kv([("GPUs", "1,024")])
True
"""
from __future__ import annotations

import html as _html

from .. import tables

__all__ = ["headline", "kv", "verdict", "para", "GOOD", "BAD"]

GOOD, BAD = "#007A5A", "#B34700"          # darker than the palette's green/vermilion: ≥ 4.5:1 on white


def headline(items, *, columns: str = "repeat(auto-fit, minmax(8.6em, 1fr))") -> str:
    """Headline figures as a grid of cards: ``items`` are (label, value[, note[, colour]]); the value is set large,
    the label above it, the note (e.g. the running example's value) under it. Plain text; escaped here."""
    def e(text):
        return _html.escape(text, quote=False)

    cards = []
    for item in items:
        label, value, note, colour = (list(item) + [None, None])[:4]
        style = f"color:{colour};" if colour else ""
        cards.append(
            '<div style="border:1px solid #ddd;border-radius:4px;padding:.35em .55em;min-width:0">'
            f'<div style="font-size:max(12px,.85em);color:#444;line-height:1.25">{e(str(label))}</div>'
            f'<div style="font-weight:700;font-size:max(16px,1.2em);line-height:1.3;{style}">{e(str(value))}</div>'
            + (f'<div style="font-size:max(12px,.85em);color:#555;line-height:1.25">{e(str(note))}</div>' if note else "")
            + "</div>")
    return (f'<div class="cc-headline" style="display:grid;grid-template-columns:{columns};gap:.45em;'
            f'margin:.3em 0 .6em">{"".join(cards)}</div>')


def kv(rows, *, caption=None, headers=("Quantity", "Value"), notes=()) -> str:
    """Two-column (or wider) table of already formatted text through :func:`chipchain.tables.show`."""
    import pandas as pd

    df = pd.DataFrame([list(r) for r in rows], columns=list(headers))
    return tables.show(df, columns={h: h for h in headers}, caption=caption, notes=notes).html


def verdict(text: str, ok: bool | None = True, lead: str | None = None) -> str:
    """One line stating the result, green when ``ok``, vermilion when not, neutral when None."""
    colour = "#222" if ok is None else GOOD if ok else BAD
    head = f"<strong>{_html.escape(lead)}</strong> " if lead else ""
    return f'<p style="margin:.3em 0;color:{colour}">{head}{_html.escape(text)}</p>'


def para(text: str, small: bool = False) -> str:
    """A paragraph of plain text (escaped)."""
    size = "font-size:max(12px,.9em);color:#333;" if small else ""
    return f'<p style="margin:.3em 0;{size}">{_html.escape(text)}</p>'

