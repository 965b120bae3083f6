"""Views for chapter 10 (export controls): the placements table, the timeline, the superpods table, the rule plane
figure and the design-a-chip explorer.

Every number comes from :mod:`chipchain.policy`; the shaded regions and threshold lines are read from the rules'
data (``data/export_rules.json``), not written here.
"""
from __future__ import annotations

import html

from .. import plotting, policy, tables, units, widgets
from . import _layout

__all__ = ["placements", "io_audit", "timeline", "superpods", "plot_rule_plane", "plot_rule_planes",
           "design_a_chip_explorer"]

_CAT_COLOURS = {"3A090": 1, "3A090.a": 1, "3A090.b": 4, "not controlled": 2, "not controlled (note)": 3}


def _colour(category):
    return plotting.color(_CAT_COLOURS[category]) if category in _CAT_COLOURS else "#777777"


def _gbps(v):
    return None if v is None else v / units.GBPS


def placements(rule_ids=None):
    """Every catalog part with its TPP, the precision that gives it (``at``), performance density, its aggregate
    bidirectional I/O in GB/s as the 2022 rule counts it (``io_GBps``: chip-to-chip link + host link + other ports;
    ``io_basis`` "aggregate", "lower bound" where our sources give only part, or "unknown"), and its category and
    reason under each rule, as a pandas DataFrame indexed by name.

    >>> df = placements()
    >>> [str(v) for v in df.loc["H20", ["tpp", "2022-10", "2023-10"]]]
    ['2368.0', 'not controlled', 'not controlled']
    >>> [str(v) for v in df.loc["H100-PCIe", ["link_GBps", "other_GBps", "io_GBps", "2022-10"]]]
    ['128.0', '600.0', '728.0', '3A090']
    """
    import pandas as pd

    rows = []
    for p in policy.placements(rule_ids):
        acc, io = p.accelerator, p.io
        row = {"name": acc.name, "vendor": acc.vendor, "market": acc.market, "checked": acc.checked, "tpp": p.tpp,
               "at": p.dtype, "pd": p.pd, "link_GBps": _gbps(io.link), "host_GBps": _gbps(io.host),
               "other_GBps": _gbps(io.other) or None, "io_GBps": _gbps(io.aggregate),
               "io_basis": "aggregate" if io.complete else "unknown" if io.aggregate is None else "lower bound",
               "io_checked": io.checked}
        for c in p.classifications:
            row[c.rule] = c.category
            row[f"{c.rule} reason"] = c.reason
        rows.append(row)
    return pd.DataFrame(rows).set_index("name")


def io_audit():
    """The 2022 rule's I/O test audited part by part: the catalog's chip-to-chip link, the host link, other ports or
    bridges, their aggregate (GB/s, both directions), whether that is the whole of the part's I/O to other chips or a
    lower bound, its check level and source, and the 2022 category on the link figure alone against the category on
    the aggregate (``changed`` marks the parts the audit moves). A pandas DataFrame indexed by name.

    >>> a = io_audit()
    >>> a.loc[a["changed"], ["2022 on link only", "2022 on aggregate"]].to_dict("index")["H100-PCIe"]
    {'2022 on link only': 'not controlled', '2022 on aggregate': '3A090'}
    """
    import pandas as pd

    rows = []
    for p in policy.placements(["2022-10"]):
        io, acc = p.io, p.accelerator
        old = (policy.classify_numbers(p.tpp, p.pd, io.link, acc.market, "2022-10").category
               if p.tpp is not None else p.classifications[0].category)
        new = p.classifications[0].category
        rows.append({"name": acc.name, "tpp": p.tpp, "link_GBps": _gbps(io.link), "host_GBps": _gbps(io.host),
                     "other_GBps": _gbps(io.other) or None, "other": io.other_what, "io_GBps": _gbps(io.aggregate),
                     "io_basis": "aggregate" if io.complete else "unknown" if io.aggregate is None else "lower bound",
                     "checked": io.checked, "source": io.source, "2022 on link only": old,
                     "2022 on aggregate": new, "changed": old != new})
    return pd.DataFrame(rows).set_index("name")


def timeline():
    """The policy timeline (``data/policy_timeline.csv``) as a pandas DataFrame, oldest first.

    >>> timeline()["date"].tolist()[:2]
    ['2022-10-07', '2023-10-17']
    """
    import pandas as pd

    return pd.DataFrame(list(policy.timeline())).sort_values("date").reset_index(drop=True)


def superpods():
    """Rack-scale systems (:func:`chipchain.policy.superpods`) in the units their pages print: PFLOPS (16-bit),
    TB, kW, with per-rack and per-accelerator figures, as a pandas DataFrame indexed by system.

    ``catalog_pflops`` is the accelerator count times the catalog's per-part dense BF16 figure, beside the printed one.

    >>> superpods()[["pflops_16bit", "catalog_pflops"]].round(1).values.tolist()[2]
    [180.0, 162.0]
    """
    import pandas as pd

    rows = [{"system": s.system, "accelerators": s.n_gpus, "racks": s.racks,
             "pflops_16bit": s.peak_flops / units.PFLOPS,
             "catalog_pflops": s.n_gpus * s.accelerator.peak_flops("bf16") / units.PFLOPS,
             "pflops_per_rack": s.peak_flops_per_rack / units.PFLOPS,
             "tflops_per_accelerator": s.gpu_peak_flops / units.TFLOPS, "memory_TB": s.memory_bytes / units.TB,
             "power_kW": None if s.power is None else s.power / 1e3,
             "tflops_per_W": None if s.flops_per_watt is None else s.flops_per_watt / units.TFLOPS,
             "checked": s.checked, "notes": s.notes} for s in policy.superpods()]
    return pd.DataFrame(rows).set_index("system")


def _regions(rule, x1, y1):
    """(category, [(x0, x1, y0, y1, io_min), ...]) for each category's branches, clipped to the plot."""
    out = []
    for name, branches in rule.categories:
        boxes = []
        for branch in branches:
            box = {"tpp": [0.0, x1], "pd": [0.0, y1], "io_GBps": [None, None]}
            for metric, lo, hi in branch:
                if lo is not None:
                    box[metric][0] = lo
                if hi is not None:
                    box[metric][1] = hi
            boxes.append((*box["tpp"], *box["pd"], box["io_GBps"][0]))
        out.append((name, boxes))
    return out


def _shade(ax, rule, x1, y1):
    """Shade each category's region, the first (strictest) category on top, and label it."""
    from matplotlib.patches import Rectangle

    regions = _regions(rule, x1, y1)
    for rank, (name, boxes) in reversed(list(enumerate(regions))):
        c = plotting.color(_CAT_COLOURS.get(name, 1))
        for bx0, bx1, by0, by1, _ in boxes:
            if rank < len(regions) - 1:      # a stricter category hides the laxer one beneath it
                ax.add_patch(Rectangle((bx0, by0), bx1 - bx0, by1 - by0, color="white", lw=0))
            ax.add_patch(Rectangle((bx0, by0), bx1 - bx0, by1 - by0, color=c, alpha=0.12 if rank == 0 else 0.18,
                                   lw=0))
        if rank == 0:
            bx0, _, _, _, io = min(boxes, key=lambda b: b[0])
            words = name if io is None else f"{name} if I/O ≥ {io:g} GB/s"
            ax.text(bx0 * 1.06, y1 - 1.2, words, fontsize=9, color=c)
        else:
            _, bx1, by0, _, _ = min(boxes, key=lambda b: b[2])
            ax.text(bx1 / 1.04, by0 + 0.4, name, fontsize=8, color="#8a5a00", ha="right")


def plot_rule_plane(rule_id="2023-10", ax=None, place_labels=True):
    """Every catalog part on the TPP (log) × performance-density plane, coloured by its category under ``rule_id``,
    with the rule's regions shaded. Parts whose die area the catalog lacks sit in a strip below zero. Returns the Axes.

    >>> ax = plot_rule_plane("2023-10")
    >>> ax.get_xscale(), ax.get_title()
    ('log', 'October 2023 rule (88 FR 73458)')
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    r = policy.rule(rule_id)
    ax = plotting.axes(ax)
    x0, x1, y0, y1, strip = 200, 60_000, -5.5, 22.0, -1.3
    _shade(ax, r, x1, y1)
    ax.axhline(0, color="#999", lw=0.6)
    df = placements([r.id])
    unplaced = [name for name, row in df.iterrows() if row["tpp"] is None or row["tpp"] != row["tpp"]]
    placed = df.drop(index=unplaced)
    known = placed[placed["pd"].notna()]
    unknown = placed[placed["pd"].isna()].sort_values("tpp")
    rows = [strip - 1.3 * (i % 3) for i in range(len(unknown))]
    groups: dict = {}
    for (name, row), y in [*((item, item[1]["pd"]) for item in known.iterrows()),
                           *zip(unknown.iterrows(), rows)]:
        groups.setdefault((round(row["tpp"], 1), round(float(y), 3)), []).append((name, row[r.id], row["market"]))
    items = []
    for (x, y), members in groups.items():
        cats = list(dict.fromkeys((cat, market) for _, cat, market in members))
        for k, (cat, market) in enumerate(cats):
            c = _colour(cat)
            ax.scatter([x * 1.07**k], [y], s=36, color=c, marker="s" if market == "consumer" else "o",
                       edgecolor="black", linewidth=0.5, zorder=3)
            names = ", ".join(n for n, ct, mk in members if (ct, mk) == (cat, market))
            items.append((x * 1.07**k, y, names, c if len(cats) > 1 else "black"))
    for cat in dict.fromkeys(df[r.id]):
        ax.scatter([], [], color=_colour(cat), label=cat, edgecolor="black", linewidth=0.5)
    ax.scatter([], [], color="white", marker="s", label="square: consumer part", edgecolor="black", linewidth=0.5)
    ax.set_xscale("log")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_yticks([0, 5, 10, 15, 20])
    ax.text(x0 * 1.05, y0 + 0.4, "below 0: die area not in catalog", fontsize=8, color="#555")
    if unplaced:
        ax.text(x1 / 1.05, y0 + 0.4, "no peak in catalog: " + ", ".join(unplaced), fontsize=8, color="#555",
                ha="right")
    ax.legend(fontsize=8, loc="upper left")
    if place_labels:
        _place_labels(ax, items)
    else:
        ax._cc_label_items = items         # placed by plot_rule_planes once the figure is laid out
    ax.set_xlabel("TPP (dense, best precision)")
    ax.set_ylabel("performance density (TPP per mm²)")
    ax.set_title(f"{r.name} ({r.citation})")
    return ax


#: candidate label positions around a point, nearest first: (dx, dy) in points, horizontal and vertical alignment
_SPOTS = [(5, 0, "left", "center"), (-5, 0, "right", "center"), (0, 6, "center", "bottom"),
          (0, -6, "center", "top"), (5, 6, "left", "bottom"), (5, -6, "left", "top"), (-5, 6, "right", "bottom"),
          (-5, -6, "right", "top")]
_FAR = [(dx, dy, "left" if dx > 0 else "right" if dx < 0 else "center", "bottom" if dy > 0 else "top")
        for dy in (14, -14, 22, -22) for dx in (10, -10, 0, 24, -24)]


def _place_labels(ax, items, fontsize=8):
    """Label points without collisions: ``items`` are (x, y, text, colour). Each label takes the first candidate
    position (:data:`_SPOTS`, then farther ones with a leader line) whose box stays inside the axes and overlaps no
    marker, no label already placed, no text already on the axes and not the legend; failing that, the position
    with the least overlap. Positions are judged on the figure as laid out when called."""
    from matplotlib.transforms import Bbox

    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    pts = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    r = 5.0 * fig.dpi / 72
    markers = [Bbox.from_extents(px - r, py - r, px + r, py + r) for px, py in pts]
    taken = [t.get_window_extent(renderer) for t in ax.texts]
    legend = ax.get_legend()
    if legend is not None:
        taken.append(legend.get_window_extent(renderer))

    def overlap(a, b):
        w = min(a.x1, b.x1) - max(a.x0, b.x0)
        h = min(a.y1, b.y1) - max(a.y0, b.y0)
        return w * h if w > 0 and h > 0 else 0.0

    def extent(text):
        probe = ax.text(0, 0, text, fontsize=fontsize)
        box = probe.get_window_extent(renderer)
        probe.remove()
        return box.width, box.height

    scale = fig.dpi / 72
    order = sorted(range(len(items)), key=lambda i: (-items[i][1], items[i][0]))    # top to bottom
    for i in order:
        x, y, text, colour = items[i]
        (px, py), (w, h) = pts[i], extent(text)
        best = None
        for dx, dy, ha, va in _SPOTS + _FAR:
            ax0 = px + dx * scale - {"left": 0, "right": w, "center": w / 2}[ha]
            ay0 = py + dy * scale - {"bottom": 0, "top": h, "center": h / 2}[va]
            box = Bbox.from_extents(ax0, ay0, ax0 + w, ay0 + h).padded(1.5)
            cost = sum(overlap(box, m) for j, m in enumerate(markers) if j != i)
            cost += sum(overlap(box, b) for b in taken)
            inside = box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1
            cost += (0 if inside else 1e6) + (0.5 if (dx, dy, ha, va) in _FAR else 0.0)
            if best is None or cost < best[0]:
                best = (cost, (dx, dy, ha, va), box)
            if cost < 1:
                break
        _, (dx, dy, ha, va), box = best
        far = (dx, dy, ha, va) in _FAR
        ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha, va=va, fontsize=fontsize,
                    color=colour, zorder=4, arrowprops={"arrowstyle": "-", "color": "#777", "lw": 0.6, "shrinkA": 0,
                                                        "shrinkB": 4} if far else None)
        taken.append(box)


def plot_rule_planes(rule_ids=("2022-10", "2023-10"), figsize=(7.5, 9)):
    """The rule plane (:func:`plot_rule_plane`) for each rule, stacked in one figure laid out before the point
    labels are placed, so none collides. Returns the Figure.

    >>> fig = plot_rule_planes()
    >>> [ax.get_title()[:12] for ax in fig.axes]
    ['October 2022', 'October 2023']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    ids = list(rule_ids)
    if not ids:
        raise ValueError("rule_ids must name at least one rule")
    fig, axes = plotting.figure(len(ids), 1, figsize=figsize)
    axes = [axes] if len(ids) == 1 else list(axes)
    for rule_id, ax in zip(ids, axes):
        plot_rule_plane(rule_id, ax=ax, place_labels=False)
    fig.tight_layout()
    for ax in axes:
        _place_labels(ax, ax._cc_label_items)
    return fig


@widgets.explorer
def design_a_chip_explorer():
    """Explorable: design a chip (dense TFLOPS at a precision, die area, aggregate I/O to other chips, market) and see its
    category under each rule, with the reason. Equations: :func:`chipchain.policy.tpp_from`,
    :func:`chipchain.policy.performance_density_from`, :func:`chipchain.policy.classify_numbers`.

    >>> ex = design_a_chip_explorer()
    >>> ex.n_views, "caught by 3A090.a: TPP 4,800 ≥ 4,800" in ex.render_current()
    (216, True)
    """
    latest = policy.rules()[-1]

    def render(tflops, bits, die, io, market):
        import pandas as pd

        t = float(policy.tpp_from(tflops * units.TFLOPS, bits))
        pd_ = float(policy.performance_density_from(t, die))
        rows = []
        for r in policy.rules():
            c = policy.classify_numbers(t, pd_, io * units.GBPS, market, r.id)
            rows.append({"rule": r.name, "category": c.category, "reason": c.reason})
        chart = plotting.svg_chart(
            points=[{"x": t, "y": pd_, "label": "your chip", "color": plotting.color(1)}],
            vlines=[{"x": v, "label": f"TPP {v:,}"} for v in policy.thresholds(latest, "tpp")],
            hlines=[{"y": v, "label": f"PD {v:g}"} for v in policy.thresholds(latest, "pd")],
            xlog=True, ylog=True, xlim=(500, 60_000), ylim=(0.5, 200), xlabel="TPP (log scale)",
            ylabel="performance density (TPP per mm², log scale)", legend="none",
            title=f"Your chip against the {latest.name}'s thresholds",
            alt=f"Your chip at TPP {units.fmt_number(t)} and performance density {pd_:.4g}, against the "
                f"{latest.date[:4]} thresholds", height=240)
        cards = _layout.headline([
            ("TPP", str(units.fmt_number(t)), f"{tflops:g} TFLOPS × {bits} bits"),
            ("performance density", f"{pd_:.4g}", f"{units.fmt_number(t)} / {die:g} mm²"),
            ("aggregate I/O", f"{io:g} GB/s", f"both directions; {market}")])
        table = tables.show(pd.DataFrame(rows), columns={"rule": "Rule", "category": "Category",
                                                         "reason": "Why"}).html
        return cards + table + chart

    return widgets.explore(render, [
        widgets.Slider("tflops", "Dense TFLOPS", [100, 150, 300, 600, 1000, 2000], value=300, fmt=lambda v: f"{v:,}"),
        widgets.Choice("bits", "Precision", {"16-bit (FP16/BF16)": 16, "8-bit (FP8/INT8)": 8}, value=16),
        widgets.Slider("die", "Die area (mm²)", [300, 600, 814], value=814),
        widgets.Slider("io", "I/O to other chips (GB/s, both ways)", [0, 400, 900], value=400),
        widgets.Choice("market", "Designed for", {"datacenter": "datacenter", "consumer": "consumer"}),
    ], title="Design a chip")
