"""Views for chapter 9 (power and money): the reference tables, the energy-ledger explorer, and buy-versus-rent.

Every number comes from :mod:`chipchain.power` and :mod:`chipchain.economics`; nothing here re-derives a formula.
"""
from __future__ import annotations

from .._lazy import np

from .. import _check, economics, plotting, power, systems, units, walkthrough, widgets
from . import _layout
from ._figure import Figure
from .._i18n import gettext as _
from ..units import fmt_percent

__all__ = ["facts", "deals", "run_energy_explorer", "buy_vs_rent_figure", "buy_vs_rent_explorer"]


def facts():
    """The reference figures (``data/energy_facts.csv``) as a pandas DataFrame indexed by key (value, unit,
    description, source, checked).

    >>> f = facts()
    >>> float(f.loc["pue_uptime_2023", "value"]), f.loc["pue_uptime_2023", "checked"]
    (1.58, 'V2')
    """
    import pandas as pd

    df = pd.DataFrame(list(power.facts())).set_index("key")
    df["value"] = df["value"].astype(float)
    return df


def deals():
    """Nuclear and power-purchase deals for datacenters (``data/energy_deals.csv``) as a pandas DataFrame.

    Two rows describe Three Mile Island Unit 1: the operator's "about 835 MW" and the EIA's 837 MW net capacity —
    the same plant counted two ways, kept side by side rather than reconciled.

    >>> d = deals()
    >>> sorted(int(v) for v in d.loc[d["what"].str.contains("Three Mile|same unit"), "capacity_MW"])
    [835, 837]
    """
    import pandas as pd

    df = pd.DataFrame(list(power.deals())).replace("", np.nan)
    for column in df.columns:        # numeric columns typed as numbers, as pandas would read the file
        try:
            df[column] = pd.to_numeric(df[column])
        except (TypeError, ValueError):
            continue
        if (df[column].dropna() % 1 == 0).all():     # whole numbers stay whole where a cell is empty
            df[column] = df[column].astype("Int64")
    return df


_GWH = 3.6e12          # joules in a gigawatt-hour


@widgets.explorer
def run_energy_explorer():
    """Explorable: the energy, electricity bill and emissions of a training run.

    Controls: accelerators, the server (A100 in a DGX A100 or H100 in a DGX H100: the GPU's rated power and the
    host share of :func:`chipchain.power.host_share`, the DGX rating minus its GPUs, per GPU — one method for
    both), days (90, or the running example's run), PUE, electricity price (the US industrial average or seed 002's
    $0.12) and grid carbon intensity. Equations: :func:`chipchain.power.run_ledger`.

    >>> ex = run_energy_explorer()
    >>> ex.n_views, "host share 412 W per GPU" in ex.render_current(), "$507,789" in ex.render_current()
    (96, True, True)
    """
    def render(n, system, days, pue, price, carbon):
        node = systems.node(system)
        watts, host = power.accelerator_power(node.accelerator), power.host_share(node)
        r = power.run_ledger(n, watts, days * units.DAY, host_share=host, pue=pue, price_per_kwh=price,
                             kg_co2_per_kwh=carbon)
        bars = plotting.svg_bars(
            [("accelerators", r.accelerator_energy / _GWH), ("host, network, storage", r.host_energy / _GWH),
             ("cooling and conversion", r.overhead_energy / _GWH)],
            unit_format=lambda v: str(units.fmt_energy(v * _GWH)), xlabel="energy at the meter (GWh)",
            alt=_("Energy ledger: accelerators {accelerators}, host {host}, facility overhead {overhead}").format(
                accelerators=units.fmt_energy(r.accelerator_energy), host=units.fmt_energy(r.host_energy),
                overhead=units.fmt_energy(r.overhead_energy)))
        cards = _layout.headline([
            ("electricity bill", str(units.fmt_dollars(r.dollars)), _("at ${price}/kWh").format(price=f"{price:g}")),
            ("energy at the meter", str(units.fmt_energy(r.energy)),
             _("facility power {power}").format(power=units.fmt_power(r.facility_power))),
            ("emissions", f"{units.fmt_number(r.kg_co2 / 1e3)} t CO₂e",
             _("at {carbon} kg CO₂e/kWh").format(carbon=f"{carbon:g}")),
            ("US household-years", str(units.fmt_number(r.household_years)), "of electricity")])
        note = _layout.para(_("{accelerator} at {watts}; host share {host} per GPU ({node} rating minus its GPUs, per "
                              "GPU — a maximum); every accelerator at its rated power for {days} days; PUE {pue}.")
                            .format(accelerator=node.accelerator.name, watts=units.fmt_power(watts),
                                    host=units.fmt_power(host), node=node.name, days=f"{days:,.0f}", pue=f"{pue:g}"),
                            small=True)
        return cards + bars + note

    # the running example's wall clock (training plus failures, step ⑥): its bill by default, as step ⑦ bills it
    run_days = walkthrough.Walkthrough().step6_failures().wall_seconds / units.DAY
    return widgets.explore(render, [
        widgets.Slider("n", "Accelerators", [1024, 16384, 100_000], value=1024, fmt=units.fmt_number),
        widgets.Choice("system", "Server", {"A100 in a DGX A100": "DGX-A100", "H100 in a DGX H100": "DGX-H100"}),
        widgets.Slider("days", "Days", [90, run_days], value=run_days, fmt=lambda v: f"{v:.0f}"),
        widgets.Slider("pue", "PUE", [power.fact("pue_hyperscale"), power.fact("pue_seed002")],
                       value=power.fact("pue_seed002")),
        widgets.Slider("price", "Price ($/kWh)", [power.fact("us_industrial_price_2023"), power.fact("price_seed002")],
                       value=power.fact("price_seed002"), fmt=lambda v: f"${v:.3g}"),
        widgets.Slider("carbon", "Grid (kg CO₂e/kWh)", [0.1, power.fact("us_grid_kg_co2_per_kwh")],
                       value=power.fact("us_grid_kg_co2_per_kwh")),
    ], title="Energy and cost of a training run")


def buy_vs_rent_figure(purchase_price=None, gpu_power="H100", host_share=None, rents=(2.0, 3.0, 4.0),
                       loaded_price=None, **ownership):
    """Owning's cost per used GPU-hour (:func:`chipchain.economics.cost_per_used_hour` over utilisation, 10–100 %)
    against each rent as a dashed horizontal line, with its break-even utilisation
    (:func:`chipchain.economics.break_even_utilisation`) marked — a chart-system figure
    (:class:`~chipchain.views._figure.Figure`). ``purchase_price`` defaults to seed 002's $30,000 (the GPU alone),
    ``host_share`` to the DGX H100's 575 W at its rating (:func:`chipchain.power.host_share`); extra keyword
    arguments go to :func:`chipchain.economics.ownership_cost`. With ``loaded_price`` (for instance
    :func:`chipchain.economics.loaded_purchase_price`: server share and network, what a cloud GPU-hour includes) a
    second curve is drawn with its own break-evens; a rent whose break-even lies past 100 % is said on the chart:
    owning at that price never beats it.

    >>> f = buy_vs_rent_figure(rents=(2.0, 4.0))
    >>> [(r, round(u, 2)) for r, u in f.data["break_even"]]
    [(2.0, 0.86), (4.0, 0.4)]
    >>> g = buy_vs_rent_figure(rents=(2.0, 4.0), loaded_price=economics.loaded_purchase_price())
    >>> [(r, round(u, 2)) for r, u in g.data["break_even_loaded"]]
    [(2.0, 1.14), (4.0, 0.54)]
    """
    purchase = power.fact("h100_price_seed002") if purchase_price is None else purchase_price
    host = power.host_share("H100") if host_share is None else host_share
    rents = [float(_check.positive("rent", r)) for r in rents]
    if not rents:
        raise ValueError("rents must hold at least one hourly rent")
    us = np.linspace(0.1, 1.0, 46)
    xs = [units.stable(float(u)) for u in us]

    def curve(price):
        owned = economics.ownership_cost(price, us, gpu_power, host, **ownership)
        cost = [units.stable(float(v)) for v in economics.cost_per_used_hour(owned)]
        return cost, [(r, float(economics.break_even_utilisation(owned.fixed, owned.variable_per_used_hour, r)))
                      for r in rents]

    cost, even = curve(purchase)
    alone = _("own the GPU alone ({price})").format(price=units.fmt_dollars(purchase)) if loaded_price is not None \
        else "own: cost per used GPU-hour"
    lines = [{"x": xs, "y": cost, "label": alone, "color": plotting.color(0)}]
    points = []
    for i, r in enumerate(rents):
        lines.append({"x": [0.1, 1.0], "y": [r, r], "label": _("rent ${rent}/h").format(rent=f"{r:.2f}"), "color": plotting.color(i + 1),
                      "dash": True})
    for i, (r, u) in enumerate(even):
        if u <= 1:
            points.append({"x": u, "y": r, "label": str(fmt_percent(u, decimals=0)), "color": plotting.color(i + 1)})
    data = {"utilisation": [float(u) for u in us], "cost": cost, "break_even": even}

    def said(pairs):
        return _("; ").join(_("${rent}/h breaks even at {share} utilisation").format(
            rent=f"{r:.2f}", share=fmt_percent(u, decimals=0)) if u <= 1 else
            _("${rent}/h is cheaper than owning even at full use").format(rent=f"{r:.2f}") for r, u in pairs)

    text = f"Owning: ${cost[-1]:.2f} per used hour at full use; " + said(even)
    alt = _("Falling curve of owning an H100's cost per used GPU-hour against utilisation: ${lo} at 10 %, ${hi} at "
            "100 %, with dashed rent lines; {said}").format(lo=f"{cost[0]:.2f}", hi=f"{cost[-1]:.2f}", said=said(even))
    if loaded_price is not None:
        loaded = _check.positive("loaded_price", loaded_price)
        cost_l, even_l = curve(loaded)
        c = plotting.color(7)
        lines.insert(1, {"x": xs, "y": cost_l, "label": _("own, fully loaded ({price}: server share and network)").format(
            price=units.fmt_dollars(round(loaded, -2))), "color": c})
        for r, u in even_l:
            if u <= 1:
                points.append({"x": u, "y": r, "label": str(fmt_percent(u, decimals=0)), "color": c})
        never = [r for r, u in even_l if u > 1]
        if never:                    # past 100 %: said where the loaded curve ends, above the rent it never meets
            points.append({"x": 1.0, "y": cost_l[-1], "color": c,
                           "label": _("loaded: never beats ${rents}/h").format(
                               rents=", $".join(f"{r:.0f}" for r in never))})
        data.update({"cost_loaded": cost_l, "break_even_loaded": even_l, "loaded_price": loaded})
        text += f". Fully loaded ({units.fmt_dollars(round(loaded, -2))}): ${cost_l[-1]:.2f} at full use; " + said(even_l)
        alt += _(". The fully loaded price's curve lies above it, ${lo} at 10 % and ${hi} at 100 %: {said}").format(
            lo=f"{cost_l[0]:.2f}", hi=f"{cost_l[-1]:.2f}", said=said(even_l))
    ymax = max(8.0, max(rents) * 1.3)
    html = plotting.svg_chart(lines=lines, points=points, xlim=(0.1, 1.0), ylim=(0, ymax), xformat="percent",
                              xlabel="utilisation of an owned GPU (share of the year's hours)",
                              ylabel="cost ($ per used GPU-hour)", height=300, alt=alt + ".")
    data["ylim"] = (0, ymax)
    return Figure(html, text, data)


@widgets.explorer
def buy_vs_rent_explorer():
    """Explorable: cost per used GPU-hour of owning vs renting, over utilisation, with the break-even point.

    Controls: rental price, purchase price, electricity price, depreciation years. The purchase opens on the fully
    loaded price (:func:`chipchain.economics.loaded_purchase_price`: the GPU's share of its server and of the
    cluster network, as a cloud GPU-hour includes them — chapter 9's like-for-like comparison; $41,700, to the
    nearest $100 as the chapter prints it); seed 002's $30,000
    (the GPU alone) is a position of the slider. Fixed: the H100's 700 W, the DGX H100's 575 W host share at its
    rating, PUE 1.4, operations 5 %/year, facility $1,500/kW-year (assumptions, from ``data/energy_facts.csv``).
    Equations: :mod:`chipchain.economics`.

    >>> ex = buy_vs_rent_explorer()
    >>> ex.n_views, "break-even would need 114 %" in ex.render_current()
    (64, True)
    """
    us = np.linspace(0.1, 1.0, 19)
    host = power.host_share("H100")
    base_price = power.fact("h100_price_seed002")
    loaded = round(economics.loaded_purchase_price(), -2)      # to the nearest $100, as chapter 9 prints it

    chapter = economics.cost_per_used_hour(economics.ownership_cost(loaded, us, "H100", host))

    def render(rent, purchase, price, years):
        base = economics.ownership_cost(purchase, us, "H100", host, price_per_kwh=price,
                                        depreciation_seconds=years * units.YEAR)
        owned = economics.cost_per_used_hour(base)
        u_star = economics.break_even_utilisation(base.fixed, base.variable_per_used_hour, rent)
        vlines = [{"x": u_star, "label": _("break-even {share}").format(share=units.fmt_percent(u_star)), "color": "#000"}] \
            if u_star <= 1 else []
        lines = [{"x": list(us), "y": list(owned), "label": "own: cost per used GPU-hour", "color": plotting.color(0)},
                 {"x": [us[0], us[-1]], "y": [rent, rent], "label": _("rent ${rent}/h").format(rent=f"{rent:g}"), "dash": True,
                  "color": plotting.color(1)}]
        if not np.allclose(owned, chapter):
            lines.append({"x": list(us), "y": list(chapter), "label": "own, the chapter's loaded price",
                          "color": "#999", "dash": True})
        chart = plotting.svg_chart(
            lines=lines, vlines=vlines, xlim=(0.1, 1.0), ylim=(0, max(8.0, rent * 1.2)),
            xlabel="utilisation of the owned GPU (share of the year's hours)", ylabel="$ per used GPU-hour",
            xformat="percent", height=260,
            alt=_("Owning costs ${own} per used hour at full use and more at lower use; renting costs ${rent}. ").format(
                own=f"{owned[-1]:.2f}", rent=f"{rent:.2f}")
            + (_("Break-even utilisation {share}.") if u_star <= 1 else
               _("Owning never breaks even (it would need {share}).")).format(share=units.fmt_percent(u_star)))
        verdict = (_layout.verdict(_("Owning is cheaper above {share} utilisation.").format(
            share=units.fmt_percent(u_star)), None) if u_star <= 1 else
                   _layout.verdict(_("Renting at ${rent}/h is cheaper even at 100 % use (break-even would need "
                                     "{share}).").format(rent=f"{rent:g}", share=units.fmt_percent(u_star)), None))
        fixed = plotting.svg_bars(
            [("depreciation", base.depreciation), ("operations", base.operations), ("facility", base.facility),
             ("energy and cooling at full use", base.variable_per_used_hour * 8760)],
            unit_format=lambda v: str(units.fmt_dollars(v)), xlabel="cost of a year of ownership ($)",   # as the table
            alt=_("A year of ownership at full use: depreciation {dep}, operations {ops}, facility {fac}, energy and "
                  "cooling {energy}").format(dep=units.fmt_dollars(base.depreciation),
                                             ops=units.fmt_dollars(base.operations),
                                             fac=units.fmt_dollars(base.facility),
                                             energy=units.fmt_dollars(base.variable_per_used_hour * 8760)))
        return verdict + chart + fixed

    return widgets.explore(render, [
        widgets.Slider("rent", "Rent ($/GPU-hour)", [1.5, power.fact("rent_seed002"), 3.0, 4.0],
                       value=power.fact("rent_seed002"), fmt=lambda v: f"${v:g}"),
        widgets.Slider("purchase", "Purchase ($ per GPU)", [25_000, base_price, loaded, 50_000], value=loaded,
                       fmt=lambda v: units.fmt_dollars(v)),
        widgets.Slider("price", "Electricity ($/kWh)",
                       [power.fact("us_industrial_price_2023"), power.fact("price_seed002")],
                       value=power.fact("price_seed002"), fmt=lambda v: f"${v:.3g}"),
        widgets.Slider("years", "Depreciation (years)", [int(power.fact("depreciation_years_seed002")), 5],
                       value=int(power.fact("depreciation_years_seed002"))),
    ], title="Buy or rent?")
