"""Views for chapter 10 (export controls): the placements table, the timeline, the superpods table, the rule plane
figure and the design-a-chip explorer.

Every number comes from :mod:`chipchain.policy`; the shaded regions and threshold lines are read from the rules'
data (``data/export_rules.json``), not written here.
"""
from __future__ import annotations

import html as _html
import math
import re

from .. import plotting, policy, tables, units, widgets
from ..plotting._svg import FONT_UNITS, _F, _Boxes, _label, _width
from . import _layout
from ._figure import Figure, key
from .._i18n import gettext as _

__all__ = ["placements", "io_audit", "timeline", "superpods", "rule_plane_figure",
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
    [180.0, 180.0]
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


#: the rule plane's axes: TPP (log) from 200 to 60,000; performance density up to 22, and below zero a strip for the
#: parts whose die area the catalog lacks (their density is unknown)
_PLANE_X, _PLANE_Y = (200.0, 60_000.0), 22.0
_STRIP = 10.0                        # depth of the strip below zero, in density units
_PLANE_RECT = re.compile(r'<path d="M([\d.]+) ([\d.]+)V([\d.]+)H([\d.]+)" fill="none" stroke="#888"/>')


def _tint(colour, share=0.28):
    """``colour`` (#rrggbb) mixed with white: the fill of a region, pale enough for points drawn on it."""
    r, g, b = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return "#" + "".join(f"{round(255 - share * (255 - v)):02x}" for v in (r, g, b))


def _branches_text(branches):
    """A category's branches in words, in the reader's language: "(A and B) or (C and D)"; one branch without
    parentheses."""
    parts = [_branch_text(b) for b in branches]
    text = parts[0] if len(parts) == 1 else f"({parts[0]})"
    for t in parts[1:]:
        text = _("{a} or {b}").format(a=text, b=f"({t})")
    return text


def _branch_text(branch):
    words = {"tpp": "TPP", "pd": "PD", "io_GBps": "I/O (GB/s)"}
    out = []
    for metric, lo, hi in branch:
        if lo is not None and hi is not None:
            out.append(f"{lo:,g} ≤ {words[metric]} < {hi:,g}")
        elif lo is not None:
            out.append(f"{words[metric]} ≥ {lo:,g}")
        else:
            out.append(f"{words[metric]} < {hi:,g}")
    text = out[0]
    for t in out[1:]:
        text = _("{a} and {b}").format(a=text, b=t)
    return text


def _rule_plane_chart(rule, df):
    """One rule's plane as chart-system SVG and the values it draws (see :func:`rule_plane_figure`)."""
    (x0, x1), y1, y0 = _PLANE_X, _PLANE_Y, -_STRIP
    regions = _regions(rule, x1, y1)
    lines, drawn = [], []
    for rank, (name, boxes) in reversed(list(enumerate(regions))):       # the strictest category drawn last, on top
        fill = _tint(plotting.color(_CAT_COLOURS.get(name, 1)))
        for branch, (bx0, bx1, by0, by1, io) in zip(rule.categories[rank][1], boxes):
            if not any(metric == "pd" for metric, _lo, _hi in branch):
                by0 = y0        # no density threshold: it covers the parts of unknown density too, down the strip
            lines.append({"x": [bx0, bx1], "y": [by1, by1], "base": [by0, by0], "color": fill})
            drawn.append((name, bx0, bx1, by0, by1, io))
    alt_parts = []
    unplaced = [n for n, row in df.iterrows() if row["tpp"] is None or row["tpp"] != row["tpp"]]
    placed = df.drop(index=unplaced)
    html = plotting.svg_chart(
        lines=lines, xlog=True, xlim=(x0, x1), ylim=(y0, y1), yticks=[(v, f"{v:g}") for v in (0, 5, 10, 15, 20)],
        hlines=[{"y": 0.0, "color": "#999"}], xlabel="TPP (dense, best precision; log scale)",
        ylabel="performance density PD (TPP per mm²)", legend="none", height=640, alt="-",
        title=f"{_(rule.name)} ({rule.citation})")
    m = _PLANE_RECT.search(html)
    ml, mt, bottom, right = (float(v) for v in m.groups())
    tx = lambda v: ml + (math.log10(v) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) * (right - ml)  # noqa
    ty = lambda v: bottom - (v - y0) / (y1 - y0) * (bottom - mt)                                              # noqa
    zero = ty(0.0)
    boxes = _Boxes((ml, mt, right, bottom))
    out = []
    # region names, inside each region's first box where they fit (the key below names them in full)
    for rank, (name, rboxes) in enumerate(regions):
        bx0, bx1, by0, by1, io = min(rboxes, key=lambda b: (b[0], -b[3]))
        text = _(name) if io is None else _("{name} if I/O ≥ {io} GB/s").format(name=_(name), io=f"{io:g}")
        c = plotting.color(_CAT_COLOURS.get(name, 1))
        cands = [(tx(bx0) + 0.3 * _F, ty(min(by1, y1)) + 1.0 * _F, "start"),
                 (tx(min(bx1, x1)) - 0.3 * _F, ty(by0) - 0.35 * _F, "end"),
                 (tx(bx0) + 0.3 * _F, ty(by0) - 0.35 * _F, "start")]
        x, y, a = boxes.place(cands, text)
        out.append(_label(x, y, text, fill=c, anchor=a, weight="600"))
    # the points: parts with a density on the plane, the others on one row of the strip
    strip_y = zero + 1.0 * _F
    groups: dict = {}
    for name, row in placed.sort_values("tpp").iterrows():
        known = row["pd"] == row["pd"] and row["pd"] is not None
        key_ = (float(row["tpp"]), float(row["pd"]) if known else None)
        groups.setdefault(key_, []).append((name, row[rule.id], row["market"]))
    items, points = [], []
    for (tpp, pd_), members in groups.items():
        cats = list(dict.fromkeys((cat, market) for _n, cat, market in members))
        for k, (cat, market) in enumerate(cats):
            px = tx(tpp) + k * 12.0                       # a second category at the same place: beside the first
            py = ty(pd_) if pd_ is not None else strip_y
            names = [n for n, ct, mk in members if (ct, mk) == (cat, market)]
            c = _colour(cat)
            if market == "consumer":
                out.append(f'<rect x="{px - 5:.1f}" y="{py - 5:.1f}" width="10" height="10" fill="{c}" '
                           f'stroke="#000" stroke-width="1"/>')
            else:
                out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="5" fill="{c}" stroke="#000" '
                           f'stroke-width="1"/>')
            boxes.placed.append((px - 6, py - 6, px + 6, py + 6))
            items.append((px, py, names, pd_ is None))
            points.append({"names": names, "tpp": tpp, "pd": pd_, "category": cat, "market": market,
                           "x": px, "y": py})
            alt_parts.append((_("{names}: TPP {tpp}, density {pd}, {category}") if pd_ is not None else
                              _("{names}: TPP {tpp}, density unknown, {category}")).format(
                names=", ".join(names), tpp=f"{tpp:,.0f}", pd=f"{pd_:.2f}" if pd_ is not None else "",
                category=_(cat)))
    strip_text = "below zero: die area not in the catalog"
    x, y, a = boxes.place([(ml + 0.3 * _F, bottom - 0.4 * _F, "start"), (right - 0.3 * _F, bottom - 0.4 * _F, "end")],
                          strip_text)
    out.append(_label(x, y, strip_text, fill="#555", anchor=a))
    # labels: the nearest free spot; failing that, a farther one joined to its point by a leader line
    order = sorted(range(len(items)), key=lambda i: (items[i][3], items[i][0] if items[i][3] else items[i][1]))
    leaders = []
    for i in order:
        px, py, names, in_strip = items[i]
        text = ", ".join(names)
        lo, hi = (zero + 0.2 * _F, bottom) if in_strip else (mt, zero - 0.1 * _F)
        r = 0.5 * _F
        near = [(px + r, py + 0.35 * _F, "start"), (px, py - 0.75 * _F, "middle"), (px - r, py + 0.35 * _F, "end"),
                (px, py + 1.45 * _F, "middle")]
        w = _width(text)
        if in_strip:           # the strip: rows straight below the point first, so leaders run down and never cross
            near = [(px, py + 1.45 * _F, "middle")]
            rows = [(px, py + (k + 0.6) * 1.15 * _F, "middle") for k in range(1, 8)]
            near += [c for c in rows if c[1] <= hi]
        far = [(px + dx, py + dy, "middle") for k in range(1, 8) for dy in ((k + 0.6) * 1.15 * _F, -(k - 0.4) * 1.15 * _F)
               for dx in (0.0, w * 0.6, -w * 0.6, w * 1.1, -w * 1.1) if lo + 0.8 * _F <= py + dy <= hi]
        if in_strip:
            far, near = near[1:] + far, near[:1]
        best = None
        for j, (x, y, a) in enumerate(near + far):
            b = boxes.box(x, y, text, a)
            shift = max(0.0, ml - b[0]) - max(0.0, b[2] - right)
            b = (b[0] + shift, b[1], b[2] + shift, b[3])
            cost = sum(max(0, min(b[2], q[2]) - max(b[0], q[0])) * max(0, min(b[3], q[3]) - max(b[1], q[1]))
                       for q in boxes.placed)
            cost += 0 if lo - 1 <= b[1] and b[3] <= hi + 1 else 1e6
            if best is None or cost < best[0]:
                best = (cost, x + shift, y, a, b, j >= len(near))
            if cost == 0:
                break
        _cost, x, y, a, b, is_far = best
        boxes.placed.append(b)
        if is_far:     # a leader from the point to the label's centre, which it meets at the desktop's text size
            ex, ey = x, (y - 0.8 * FONT_UNITS[0] if y > py else y + 0.2 * FONT_UNITS[0])
            leaders.append(f'<line x1="{px:.1f}" y1="{py:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" stroke="#777" '
                           f'stroke-width="1"/>')
        out.append(_label(x, y, text, fill="#000", anchor=a))
    alt = (_("Scatter of catalog accelerators by TPP (log scale, {lo} to {hi}) and performance density under the "
             "{rule} ({citation}); shaded regions: {regions}. Parts: {parts}. No peak in the catalog: {unplaced}.")
           if unplaced else
           _("Scatter of catalog accelerators by TPP (log scale, {lo} to {hi}) and performance density under the "
             "{rule} ({citation}); shaded regions: {regions}. Parts: {parts}.")).format(
        lo=f"{x0:,.0f}", hi=f"{x1:,.0f}", rule=_(rule.name), citation=rule.citation,
        regions=_("; ").join(f"{_(name)}: " + _branches_text(branches) for name, branches in rule.categories),
        parts=_("; ").join(alt_parts), unplaced=", ".join(unplaced))
    html = html.replace('aria-label="-"', f'aria-label="{_html.escape(alt, quote=True)}"', 1)
    html = html.replace("<title>-</title>", f"<title>{_html.escape(alt)}</title>", 1)
    html = html.replace("</svg>", "".join(leaders) + "".join(out) + "</svg>", 1)
    return html, {"regions": drawn, "points": points, "unplaced": unplaced,
                  "rect": (ml, mt, right, bottom), "xlim": (x0, x1), "ylim": (y0, y1)}


def rule_plane_figure(rule_ids=("2022-10", "2023-10")):
    """Every catalog part on the plane of TPP (log scale) and performance density, one chart per rule in
    ``rule_ids``, one above the other: the rule's regions shaded from its thresholds (``data/export_rules.json``,
    :func:`chipchain.policy.rule`; a branch with no density threshold reaches down into the strip), each part a dot
    (a square for a consumer part) in the colour of its category under the rule, named beside it. Parts whose die
    area the catalog lacks sit on a strip below zero. A chart-system figure
    (:class:`~chipchain.views._figure.Figure`); ``data[rule_id]`` holds the regions and points drawn.

    >>> f = rule_plane_figure()
    >>> sorted({p["category"] for p in f.data["2023-10"]["points"]})[:2]
    ['3A090.a', 'not controlled']
    """
    if isinstance(rule_ids, str):
        rule_ids = [rule_ids]
    ids = [policy.rule(r).id for r in rule_ids]
    if not ids:
        raise ValueError("rule_ids must name at least one rule")
    df = placements(ids)
    charts, data, texts = [], {}, []
    for rid in ids:
        r = policy.rule(rid)
        svg, d = _rule_plane_chart(r, df)
        cats = list(dict.fromkeys(df[rid]))
        entries = [((_("{name} region: {condition} (where no stricter category applies)") if k else
                     _("{name} region: {condition}")).format(name=_(name), condition=_branches_text(branches)),
                    _tint(plotting.color(_CAT_COLOURS.get(name, 1))), "box") for k, (name, branches) in enumerate(r.categories)]
        entries += [(cat, _colour(cat), "dot") for cat in cats] + [("square: a consumer part", "#555", "box")]
        svg = svg.replace("<svg", key(entries) + "<svg", 1)
        note = (_layout.para(_("No peak in the catalog, so not drawn: {parts}.").format(parts=", ".join(d["unplaced"])),
                             small=True)
                if d["unplaced"] else "")
        charts.append(svg + note)
        data[rid] = d
        counts = {c: int((df[rid] == c).sum()) for c in cats}
        texts.append(f"{r.name}: " + ", ".join(f"{n} {c}" for c, n in counts.items()))
    return Figure("".join(charts), "; ".join(texts), data)


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
            title=_("Your chip against the {rule}'s thresholds").format(rule=_(latest.name)),
            alt=_("Your chip at TPP {tpp} and performance density {pd}, against the {year} thresholds").format(
                tpp=units.fmt_number(t), pd=f"{pd_:.4g}", year=latest.date[:4]), height=240)
        cards = _layout.headline([
            ("TPP", str(units.fmt_number(t)), f"{tflops:g} TFLOPS × {bits} bits"),
            ("performance density", f"{pd_:.4g}", f"{units.fmt_number(t)} / {die:g} mm²"),
            ("aggregate I/O", f"{io:g} GB/s", _("both directions; {market}").format(market=_(market)))])
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
