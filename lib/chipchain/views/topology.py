"""Chapter 3's topology view: a DGX H100 node (8 GPUs, NVSwitch, one NIC per GPU on eight rails) and a GB200 NVL72
rack (72 GPUs in one NVLink domain) drawn from the catalog (:mod:`chipchain.systems`, :mod:`chipchain.links`), with
the link each parallelism's traffic crosses under a default plan, decided by
:func:`chipchain.parallel.placement` (ranks laid out TP innermost, then DP, PP outermost, as Megatron-Core and torchtitan number them; EP inside each DP group).
Nothing here decides intra- or inter-node: the placement does.

>>> "NVSwitch" in topology_view("DGX-H100", "tp") and "IB-NDR" in topology_view("DGX-H100", "dp")
True
"""
from __future__ import annotations

from .. import parallel, plotting, systems, units, widgets
from .._i18n import gettext as _
from . import _layout

__all__ = ["PLANS", "DIMENSIONS", "topology_view", "topology_explorer"]

#: the default plan on each system: chapter 4's 8 × 16 × 8 on 1,024 H100s (eight experts per group for EP), and on
#: NVL72 racks a plan whose TP × PP fills one 72-GPU NVLink domain (8 × 9), 14 racks of data parallelism
PLANS = {"DGX-H100": parallel.Plan(tp=8, pp=16, dp=8, ep=8),
         "GB200-NVL72": parallel.Plan(tp=8, pp=16, dp=8, ep=8)}
#: the parallel dimensions, as the chapter names them
DIMENSIONS = {"tp": "tensor parallelism (TP)", "pp": "pipeline parallelism (PP)", "dp": "data parallelism (DP)",
              "ep": "expert parallelism (EP)"}

_ON, _OFF, _INK = plotting.color(1), "#c8c8c8", "#333"


def _gbps(lk) -> str:
    return f"{lk.bandwidth_per_direction / units.GB:,.4g} GB/s"


def _members(group, g):
    """(node, GPU within node) of the ranks in rank 0's group."""
    return [((k * group.stride) // g, (k * group.stride) % g) for k in range(group.size)]


def _dgx(node, group, inter):
    dg = plotting.diagrams
    T, W, g = dg.TEXT, plotting.VIEW_WIDTH, node.gpus_per_node
    members = _members(group, g)
    other = next((n for n, _gpu in members if n != 0), 1)
    lit0 = {gpu for n, gpu in members if n == 0}
    # inter-node groups with a stride that is a multiple of the node size: GPU k talks to GPU k elsewhere, so the
    # groups that start at the node's eight GPUs use all eight rails at once
    rails = set(range(g)) if inter and group.stride % g == 0 else ({gpu for _node, gpu in members} if inter else set())
    lit_other = rails if inter else set()
    if inter:
        lit0 = rails
    cw = (W - 8) / g
    body, y = [], 0.0

    def gpus(y0, lit, label):
        out = [dg.text(4, y0 + 0.9 * T, label, weight=600)]
        for k in range(g):
            x = 4 + k * cw
            on = k in lit
            out.append(dg.rect(x + 3, y0 + 1.3 * T, cw - 6, 1.7 * T, fill="#fde3d0" if on else "#f4f4f4",
                               stroke=_ON if on else "#999", width=3 if on else 1,
                               title=_("{node}, GPU {k}").format(node=label, k=k)))
            out.append(dg.text(x + cw / 2, y0 + 2.45 * T, f"GPU{k}", anchor="middle", fill="#000"))
        return out

    def switch(y0, on):
        s = f"NVSwitch · {node.intra.name} · {_gbps(node.intra)}"
        return [dg.rect(4, y0, W - 8, 1.5 * T, fill="#fde3d0" if on else "#f4f4f4", stroke=_ON if on else "#999",
                        width=3 if on else 1),
                dg.text(W / 2, y0 + 1.05 * T, s, anchor="middle", fill="#000")]

    def nics(y0, lit):
        out = []
        for k in range(g):
            x = 4 + k * cw + cw / 2
            on = k in lit
            out.append(dg.rect(x - 0.95 * T, y0, 1.9 * T, 1.3 * T, fill="#fde3d0" if on else "#fff",
                               stroke=_ON if on else "#999", width=3 if on else 1, rx=2, title=f"NIC {k}"))
            out.append(dg.text(x, y0 + 0.95 * T, "NIC", anchor="middle", fill="#000"))
        return out

    # node 0: GPUs, NVSwitch, NICs
    body += gpus(y, lit0, _("node {n}").format(n=0))
    y += 3.3 * T
    for k in range(g):                                      # GPU ↔ NVSwitch
        x = 4 + k * cw + cw / 2
        body.append(dg.line(x, y - 0.3 * T, x, y + 0.3 * T, stroke=_ON if (not inter and k in lit0) else _OFF,
                            width=3 if (not inter and k in lit0) else 1.5))
    body += switch(y + 0.3 * T, not inter)
    y += 2.2 * T
    body += nics(y, rails)
    top_nic = y
    y += 1.3 * T
    # the rails: NIC k of every node on rail switch k
    rail_y = y + 1.2 * T
    for k in range(g):
        x = 4 + k * cw + cw / 2
        on = k in rails
        body.append(dg.line(x, top_nic + 1.3 * T, x, rail_y + 3.2 * T, stroke=_ON if on else _OFF,
                            width=3 if on else 1.5))
    body.append(dg.rect(4, rail_y, W - 8, 1.5 * T, fill="#fff", stroke="#999", dash=True))
    body.append(dg.text(W / 2, rail_y + 1.05 * T,
                        _("{n} rails · {link} · {bandwidth} per NIC").format(
                            n=node.nics_per_node, link=node.inter.name, bandwidth=_gbps(node.inter)),
                        anchor="middle", fill="#000"))
    y = rail_y + 3.2 * T
    body += nics(y, lit_other)
    y += 1.9 * T
    body += switch(y, False)
    y += 1.6 * T
    body += gpus(y, lit_other, _("node {n}").format(n=other))
    return "".join(body), y + 3.2 * T


def _rack(node, group, inter):
    dg = plotting.diagrams
    T, W, g = dg.TEXT, plotting.VIEW_WIDTH, node.gpus_per_node
    members = _members(group, g)
    # an inter-rack group of stride a multiple of the rack: every GPU's own group leaves through its own NIC
    lit = set(range(g)) if inter and group.stride % g == 0 else {gpu for n, gpu in members if n == 0}
    cols = 8 if g % 8 == 0 else 12                         # rows of eight: a TP group is a row, a PP group a column
    rows = -(-g // cols)
    cw = (W - 8) / cols
    body = [dg.text(4, 0.9 * T, _("rack {k}: {n} GPUs in one NVLink domain").format(k=0, n=g), weight=600)]
    y0 = 1.3 * T
    for k in range(g):
        r, c = divmod(k, cols)
        on = k in lit
        body.append(dg.rect(4 + c * cw + 3, y0 + r * 1.0 * T, cw - 6, 0.8 * T, fill="#fde3d0" if on else "#f4f4f4",
                            stroke=_ON if on else "#999", width=3 if on else 1, rx=2, title=f"GPU {k}"))
    y = y0 + rows * 1.0 * T + 0.4 * T
    body.append(dg.rect(4, y, W - 8, 1.5 * T, fill="#fde3d0" if not inter else "#f4f4f4",
                        stroke=_ON if not inter else "#999", width=3 if not inter else 1))
    body.append(dg.text(W / 2, y + 1.05 * T, _("NVLink Switch · {link} · {bandwidth}").format(
                            link=node.intra.name, bandwidth=_gbps(node.intra)),
                        anchor="middle", fill="#000"))
    y += 2.1 * T
    body.append(dg.rect(4, y, W - 8, 1.5 * T, fill="#fde3d0" if inter else "#fff",
                        stroke=_ON if inter else "#999", width=3 if inter else 1))
    body.append(dg.text(W / 2, y + 1.05 * T, _("{n} NICs · {link} · {bandwidth} each").format(
                            n=node.nics_per_node, link=node.inter.name, bandwidth=_gbps(node.inter)),
                        anchor="middle", fill="#000"))
    y += 1.5 * T
    body.append(dg.line(W / 2, y, W / 2, y + 1.2 * T, stroke=_ON if inter else _OFF, width=3 if inter else 1.5))
    body.append(dg.text(W / 2, y + 2.3 * T, "to the other racks", anchor="middle"))
    return "".join(body), y + 2.7 * T


def topology_view(system, dimension) -> str:
    """HTML: ``system``'s node ("DGX-H100" or "GB200-NVL72") drawn from the catalog, with the GPUs of rank 0's
    ``dimension`` group ("tp", "pp", "dp" or "ep") under :data:`PLANS` and the link their traffic crosses
    highlighted (:func:`chipchain.parallel.placement`)."""
    if system not in PLANS:
        raise ValueError(f"system must be one of {', '.join(PLANS)}, got {system!r}")
    if dimension not in DIMENSIONS:
        raise ValueError(f"dimension must be one of {', '.join(DIMENSIONS)}, got {dimension!r}")
    node, plan = systems.node(system), PLANS[system]
    group = dict(parallel.placement(plan, system).items())[dimension]
    inter = group.scope == "inter-node"
    body, height = (_dgx if node.gpus_per_node <= 16 else _rack)(node, group, inter)
    n = plan.tp * plan.pp * plan.dp
    rack = node.gpus_per_node > 16
    where = ({(True, False): _("leaves the node: {link}, {bandwidth} per direction per GPU"),
              (True, True): _("leaves the rack: {link}, {bandwidth} per direction per GPU"),
              (False, False): _("stays inside the node: {link}, {bandwidth} per direction per GPU"),
              (False, True): _("stays inside the rack: {link}, {bandwidth} per direction per GPU")}[inter, rack]
             .format(link=group.link.name, bandwidth=_gbps(group.link)))
    name = _(DIMENSIONS[dimension])
    alt = _("{system}: {gpus} GPUs on {intra}, {nics} NICs on {inter}. Under a TP {tp} × PP {pp} × DP {dp} plan, "
            "{name} groups {size} GPUs {stride} ranks apart; its traffic {where}.").format(
        system=node.name, gpus=node.gpus_per_node, intra=node.intra.name, nics=node.nics_per_node,
        inter=node.inter.name, tp=plan.tp, pp=plan.pp, dp=plan.dp, name=name, size=group.size, stride=group.stride,
        where=where)
    svg = plotting.svg_diagram(body, height, alt=alt, legend=[("this group's GPUs and the link it uses", _ON, "box"),
                                                              ("idle for this traffic", "#999", "line")])
    ratio = node.intra.bandwidth_per_direction / node.inter.bandwidth_per_direction
    head = _layout.verdict((_("{name}: {size} GPUs, {stride} ranks apart — traffic {where}.") if group.stride > 1 else
                            _("{name}: {size} GPUs, {stride} rank apart — traffic {where}.")).format(
        name=name, size=group.size, stride=group.stride, where=where), not inter)
    inside = (_("Inside the rack each GPU has {ratio}× the bandwidth it has across it.") if rack else
              _("Inside the node each GPU has {ratio}× the bandwidth it has across it.")).format(ratio=f"{ratio:,.0f}")
    note = _layout.para(
        _("Plan: TP {tp} × PP {pp} × DP {dp} = {n} GPUs{ep} (ranks laid out TP innermost, then DP, PP outermost). "
          "{inside}").format(tp=plan.tp, pp=plan.pp, dp=plan.dp, n=f"{n:,}", inside=inside,
                             ep=_(", EP {ep} inside each data-parallel group").format(ep=plan.ep) if plan.ep > 1 else ""),
        small=True)
    return head + svg + note


@widgets.explorer
def topology_explorer():
    """Chapter 3: a DGX H100 node or a GB200 NVL72 rack, and which link each parallelism's traffic crosses
    (default: DGX H100, tensor parallelism)."""
    return widgets.explore(topology_view, [
        widgets.Choice("system", "System", {"DGX H100 node": "DGX-H100", "GB200 NVL72 rack": "GB200-NVL72"},
                       value="DGX-H100"),
        widgets.Choice("dimension", "Traffic of", {v: k for k, v in DIMENSIONS.items()}, value="tp"),
    ], title="Which link does each parallelism use?")
