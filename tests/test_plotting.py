"""The explorable chart style (plotting's module docstring): legible at both widths, nice ticks in one format per
axis, named and proportional bars, legends outside the data, one palette with the static figures."""
import math
import re
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

from chipchain import plotting
from chipchain.plotting import CHART_CSS, FONT_UNITS, VIEW_WIDTH, svg_bars, svg_chart, svg_hbars, svg_stacked

#: the book's column measured in the built site (tests/browser): 684 px at 1280 px, 354 px at 390 px
DESKTOP_COLUMN_PX, PHONE_COLUMN_PX = 684, 354


def tiers():
    """(max width in px, font units) from CHART_CSS's container queries, widest first."""
    found = [(float(w), float(u)) for w, u in re.findall(r"@container \(max-width:(\d+)px\)\{\.cc-chart>svg\{font-size:"
                                                         r"([\d.]+)px\}\}", CHART_CSS)]
    base = float(re.search(r"\.cc-chart>svg\{[^}]*font-size:([\d.]+)px", CHART_CSS).group(1))
    return base, sorted(found, reverse=True)


def rendered_px(column_px):
    base, queries = tiers()
    units = base
    for width, u in queries:
        if column_px <= width:
            units = u
    return units * column_px / VIEW_WIDTH


def test_text_is_legible_at_every_column_width_from_phone_to_desktop():
    assert rendered_px(DESKTOP_COLUMN_PX) >= 12 and rendered_px(PHONE_COLUMN_PX) >= 11
    for column in range(340, 1400, 5):                 # every column a reader may have, not just the two measured
        assert rendered_px(column) >= (12 if column >= 630 else 11), column
    assert tiers()[0] == FONT_UNITS[0] and [u for _, u in tiers()[1]] == list(FONT_UNITS[1:])


def test_svg_never_sets_a_text_size_smaller_than_the_style():
    html = svg_chart(lines=[{"x": [1, 2], "y": [1, 2], "label": "a"}], vlines=[{"x": 1.5, "label": "mid"}],
                     alt="x", title="t")
    assert "font-size" not in html.split("<svg", 1)[1].split(">", 1)[1]        # only the root's fallback
    assert "font:11px" not in html


def ticks(svg, axis="x"):
    """Tick labels of an axis: x labels are centred under the plot, y labels right-aligned left of it."""
    anchor = "middle" if axis == "x" else "end"
    return [t for t in re.findall(rf'text-anchor="{anchor}" fill="#333">([^<]*)</text>', svg)]


@pytest.mark.parametrize("lim,expected", [
    ((0.01, 1e4), ["0.01", "0.1", "1", "10", "100", "1k", "10k"]),
    ((1024, 8e9), ["10k", "100k", "1M", "10M", "100M", "1G"]),
    ((1e-5, 0.3), ["10⁻⁵", "10⁻⁴", "10⁻³", "10⁻²", "10⁻¹"]),
])
def test_log_axis_one_format_si_or_powers_of_ten(lim, expected):
    svg = svg_chart(lines=[{"x": list(lim), "y": [1, 2]}], xlog=True, xlim=lim, alt="x", xlabel="size (bytes)")
    assert ticks(svg)[:len(expected)] == expected


def test_mixed_formats_never_share_an_axis():
    """The issue's "10,000" beside "1e5": a log axis from 1,000 to 10⁶ is labelled 1k, 10k, 100k, 1M."""
    svg = svg_chart(lines=[{"x": [1e3, 1e6], "y": [1, 2]}], xlog=True, alt="x")
    labels = ticks(svg)
    assert labels == ["1k", "10k", "100k", "1M"]
    assert not any("e" in l or "," in l for l in labels)


def test_narrow_log_axis_still_has_labelled_ticks():
    """The resume explorer's loss (≈ 2.2 to 4.6 on a log axis) had no y label at all."""
    svg = svg_chart(lines=[{"x": [0, 100], "y": [4.6, 2.2]}], ylog=True, alt="loss", ylabel="loss")
    labels = ticks(svg, "y")
    assert len(labels) >= 3
    assert len({len(l.split(".")[-1]) if "." in l else 0 for l in labels}) == 1     # same decimals on every tick


def test_sparse_axis_gets_at_least_three_ticks():
    """The bubble explorer's x axis showed only "100"."""
    svg = svg_chart(lines=[{"x": [30, 300], "y": [1, 2]}], xlog=True, alt="x")
    assert len(ticks(svg)) >= 3


@example(5e-324, 1e-6, False)                      # found by CI's seed: 10**-324 underflowed in the tick labels
@example(-633929867.6477909, 1e-6, False)          # a range eight ulps wide: k × step landed outside it
@settings(max_examples=150, deadline=None)
@given(st.floats(-1e9, 1e9, allow_nan=False), st.floats(1e-6, 1e9), st.booleans())
def test_ticks_are_nice_inside_and_readable(lo, span, log):
    if log:
        lo = abs(lo) % 1e6 + 1e-3
    hi = lo + span
    vals, labels = plotting._axis((lo, hi), log, None, None, 480)
    assert 2 <= len(vals) <= 7 or (not log and span / max(abs(lo), abs(hi), 1e-300) < 1e-9)
    assert all(lo - 1e-9 * span <= v <= hi + 1e-9 * span for v in vals)
    assert len(set(labels)) == len(labels)                      # every tick reads differently
    assert not any(re.search(r"\de[+-]?\d", l) for l in labels)  # no e-notation
    gap = 480 / max(len(vals) - 1, 1)
    assert len(vals) <= 3 or gap >= max(plotting._width(l) for l in labels)   # no two labels overlap


def test_legend_is_outside_the_plot_and_direct_labels_do_not_collide():
    html = svg_chart(lines=[{"x": [1, 2], "y": [1, 2], "label": "ring"}, {"x": [1, 2], "y": [2, 1], "label": "tree",
                                                                             "dash": True}],
                     vlines=[{"x": 1.5, "label": "threshold A"}, {"x": 1.52, "label": "threshold B"}],
                     alt="two lines")
    legend, svg = html.split("<svg", 1)
    assert "ring" in legend and "tree" in legend and ">ring<" not in svg
    boxes = [plotting._Boxes.box(float(x), float(y), t, a) for x, y, a, t in
             re.findall(r'<text x="([\d.]+)" y="([\d.]+)" text-anchor="(\w+)" fill="#555" stroke[^>]*>([^<]*)<', svg)]
    assert len(boxes) == 2
    (a, b) = boxes
    assert min(a[2], b[2]) <= max(a[0], b[0]) or min(a[3], b[3]) <= max(a[1], b[1])   # disjoint


def test_named_categories_common_baseline_proportional_bars():
    rows = [("FP64", 67.0), ("TF32", 494.7), ("BF16", 989.4), ("FP8", 1979.0)]
    html = svg_hbars(rows, xlabel="dense TFLOP/s", alt="H100 peaks")
    rects = [(float(x), float(w)) for x, w in re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"', html)]
    assert len({x for x, _ in rects}) == 1                       # one baseline
    for (_, w), (_, v) in zip(rects, rows):
        assert w / rects[-1][1] == pytest.approx(v / rows[-1][1], abs=0.002)   # lengths ∝ values
    for name, _ in rows:
        assert f">{name}<" in html                             # names, not numbers 1–4
    assert "1,979" in html and "dense TFLOP/s" in html


def test_missing_bar_is_a_dash_not_nan():
    html = svg_hbars([("A", 1.0), ("B", None), ("C", float("nan"))], alt="x")
    assert "NaN" not in html and "nan" not in html and html.count("—") == 2


def test_stacked_bars_share_a_scale_and_name_every_segment_with_its_value():
    html = svg_bars([("weights", 21.9), ("optimizer", 87.5)], capacity=80, capacity_label="H100",
                    unit_format=lambda v: f"{v:,.1f} GB", alt="ledger", xlabel="memory per GPU (GB)")
    assert "weights: 21.9 GB" in html and "optimizer: 87.5 GB" in html and "H100 80.0 GB" in html
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"', html)]
    assert widths[1] / widths[0] == pytest.approx(87.5 / 21.9, rel=0.01)
    many = svg_stacked([("a", [("w", 1), ("o", 2)]), ("b", [("o", 1), ("w", 1)])], alt="x")
    fills = re.findall(r'<rect [^>]*fill="(#\w+)"><title>(\w)', many)
    assert {c for c, k in fills if k == "w"} == {plotting.color(0)}       # a segment keeps its colour


def test_lines_are_clipped_to_the_plot_not_drawn_outside():
    svg = svg_chart(lines=[{"x": [0, 10], "y": [0, 100]}], xlim=(0, 10), ylim=(0, 50), alt="x")
    pts = [tuple(map(float, p.split(","))) for p in re.search(r'points="([^"]+)"', svg).group(1).split()]
    top = min(float(y) for y in re.findall(r'<line x1="[\d.]+" y1="([\d.]+)" x2="[\d.]+" y2="[\d.]+" stroke="#e3e3e3"',
                                              svg))
    assert min(y for _, y in pts) >= top - 0.1


def test_one_palette_and_typeface_with_static_figures():
    plotting.style()
    import matplotlib

    assert [c.lower() for c in matplotlib.rcParams["axes.prop_cycle"].by_key()["color"]] == \
        [c.lower() for c in plotting.PALETTE]
    assert matplotlib.rcParams["font.sans-serif"][0] == "DejaVu Sans"
    html = svg_chart(lines=[{"x": [1, 2], "y": [1, 2]}], alt="x")
    assert "DejaVu Sans" in html and plotting.PALETTE[0] in html


def test_site_css_carries_the_chart_style():
    css = (Path(__file__).resolve().parents[1] / "book" / "site.css").read_text(encoding="utf-8")
    assert CHART_CSS in css


def test_bad_input():
    with pytest.raises(ValueError, match="alt"):
        svg_chart(lines=[], alt=" ")
    with pytest.raises(ValueError, match="xlim"):
        svg_chart(lines=[{"x": [1, 2], "y": [1, 2]}], xlog=True, xlim=(0, 1), alt="x")
    with pytest.raises(ValueError, match="rows"):
        svg_hbars([], alt="x")
    with pytest.raises(ValueError, match="log"):
        svg_hbars([("a", -1)], log=True, alt="x")
    with pytest.raises(ValueError, match="format"):
        svg_chart(lines=[{"x": [1, 2], "y": [1, 2]}], xformat="fancy", alt="x")


def test_chart_renders_fast():
    import time

    xs = [10 ** (k / 20) for k in range(100)]
    best = float("inf")
    for _ in range(7):                                          # the best of a few: the chart's own cost, not the load
        t0 = time.perf_counter()
        svg_chart(lines=[{"x": xs, "y": xs, "label": "a"}, {"x": xs, "y": [x / 2 for x in xs], "label": "b"}],
                  points=[{"x": 10, "y": 10, "label": "p"}], vlines=[{"x": 100, "label": "v"}], xlog=True,
                  ylog=True, alt="x")
        best = min(best, time.perf_counter() - t0)
    assert best < 0.010                                         # a fifth of the 50 ms callback budget


# --- plotting is a package split by idea (issue 29): the same names, the same bytes ----------------------------

_CHARTS = {
    "chart": lambda: svg_chart(lines=[{"x": [1, 10, 100, 1e4], "y": [2e-6, 3e-3, 0.5, 80], "label": "measured"},
                                      {"x": [1, 1e4], "y": [1e-6, 100], "label": "model", "dash": True}],
                               points=[{"x": 30, "y": 0.2, "label": "ridge"}], vlines=[{"x": 300, "label": "knee"}],
                               hlines=[{"y": 10, "label": "peak"}], xlog=True, ylog=True, xlabel="size (bytes)",
                               ylabel="time (s)", alt="a chart", title="Title"),
    "chart_linear": lambda: svg_chart(lines=[{"x": [0, 0.25, 0.5, 1.0], "y": [0, 12.5, 40, 97.5]}],
                                      xformat="percent", xlabel="overlap", ylabel="days", alt="linear"),
    "hbars": lambda: svg_hbars([("H100 SXM", 989.4), ("A100", 312.0), ("MI300X", 1307.4), ("none", None)],
                               xlabel="dense TFLOP/s", alt="peaks", markers=[{"x": 500, "label": "half"}]),
    "bars": lambda: svg_bars([("weights", 21.9), ("optimizer", 87.5)], capacity=80, capacity_label="H100",
                             unit_format=lambda v: f"{v:,.1f} GB", alt="ledger", xlabel="memory per GPU (GB)"),
    "stacked": lambda: svg_stacked([("a", [("w", 1), ("o", 2)]), ("b", [("o", 1), ("w", 1)])], capacity=3.5,
                                   alt="stacked"),
}

#: sha256 of each chart above as plotting.py wrote it before the split (commit c11cdbb's
#: library); a change of style on purpose updates these, a refactor must not
_BEFORE_SPLIT = {
    "chart": "4f41258e1b437fabcf66e133ef0caf5d0a5a2bf9cae816ec82713c55c1c23497",
    "chart_linear": "8c230698f5b20238843cf6a0fd2fc862b4dfc25f7ac1eedb32f5e49689f29b7f",
    "hbars": "0d569344403f220764c2a416c6107650966204f883151ced01bb53c821096850",
    "bars": "be1084f489091fea32ebc2820825b863bdc174a1d5c93b41bec91341decbd318",
    "stacked": "a93c73f84318025bdb4a7c890dea1f8fd5d9c92ade3fa666b15bca967e60b2bf",
}


#: the one change of style since: the charts' font list names the site's CJK subset after DejaVu Sans (issue 25, for
#: the zh-CN edition's labels); everything else must be byte-identical
_FONTS_THEN = "font-family=\"&#x27;DejaVu Sans&#x27;, Verdana, &#x27;Bitstream Vera Sans&#x27;, sans-serif\""


@pytest.mark.parametrize("name", sorted(_CHARTS))
def test_charts_are_byte_identical_to_the_unsplit_module(name):
    import hashlib
    import html as _html
    from chipchain.plotting import _style

    now = f'font-family="{_html.escape(_style.FONT_FAMILY, quote=True)}"'
    svg = _CHARTS[name]()
    assert svg.count(now) == 1
    assert hashlib.sha256(svg.replace(now, _FONTS_THEN).encode()).hexdigest() == _BEFORE_SPLIT[name]


def test_the_package_keeps_every_public_name_and_splits_by_idea():
    from chipchain.plotting import _style, _svg, _ticks, charts
    for name in plotting.__all__:
        assert hasattr(plotting, name), name
    assert plotting.svg_chart is charts.svg_chart and plotting.color is _style.color
    assert plotting.CHART_CSS is _svg.CHART_CSS and plotting._axis is _ticks._axis
