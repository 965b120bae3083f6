"""The book's figure style: the palette, matplotlib's settings, and Axes and figures in that style."""
from __future__ import annotations

from .. import _check


#: Okabe–Ito palette, reordered so that the first two colours differ for readers with any colour-vision type
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#F0E442", "#000000")

#: the typeface of static figures (matplotlib's default) and of explorable charts; Chinese characters (the zh-CN
#: edition's labels) come from the site's own subset, "Steel CJK" (book/site.css, tools/build_cjk_font.py), whose
#: unicode-range covers only CJK, so Latin text keeps DejaVu Sans
FONT_FAMILY = "'DejaVu Sans', 'Steel CJK', Verdana, 'Bitstream Vera Sans', sans-serif"

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
