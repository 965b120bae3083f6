"""Money: the cost of a training run, the cost of owning an accelerator, and when owning beats renting.

* **A run, rented**: GPU-hours × price per GPU-hour (:func:`chipchain.compute.gpu_hours`,
  :func:`chipchain.compute.cost`), plus, for comparison, the electricity those GPU-hours draw (:mod:`chipchain.power`).
* **Owning one accelerator for a year** (seed 002's TCO list): depreciation ``purchase / years`` (straight line),
  power ``(P_acc + P_host) · 8760 h · u · price``, cooling and conversion ``(PUE − 1)`` times that, operations
  (a fraction of the purchase price per year), facility (dollars per kW of IT capacity per year). Utilisation ``u``
  is the fraction of the year's hours the accelerator does work you would otherwise rent; an idle accelerator is
  assumed to draw nothing (idle draw would make owning a little dearer).
* **Break-even utilisation**: owning costs ``F + u · 8760 · v`` a year (F fixed, v energy per used hour), renting
  ``u · 8760 · r``; they are equal at ``u* = F / (8760 · (r − v))``. Above ``u*`` owning is cheaper.

The price defaults in :func:`ownership_cost` (operations 5 % of purchase a year, facility $1,500 per kW-year) are
the book's assumptions, not published figures; the chapters say so wherever they are used.

>>> c = seed002_example()
>>> round(c.gpu_hours / 1e6, 2), round(c.rental / 1e6, 1)
(2.95, 5.9)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, compute, plotting, power, units, widgets
from .units import HOUR

__all__ = ["RunCost", "run_cost", "seed002_example", "OwnershipCost", "ownership_cost", "cost_per_used_hour",
           "break_even_utilisation", "HOURS_PER_YEAR", "plot_buy_vs_rent", "buy_vs_rent_explorer"]

#: hours in a 365-day year
HOURS_PER_YEAR = 8760.0


@dataclass(frozen=True)
class RunCost:
    """The cost of one training run bought by the GPU-hour (FLOPs, hours, dollars, joules)."""

    flops: float
    gpu_hours: float
    ideal_gpu_hours: float          #: at 100 % MFU: the lower bound
    rental: float                   #: $ at the GPU-hour price
    gpu_energy: float               #: J drawn by the GPUs alone at their stated power
    electricity_gpu_only: float     #: $ for gpu_energy
    electricity_facility: float     #: $ with host share and PUE

    @property
    def mfu_price(self) -> float:
        """Dollars lost to utilisation below 100 %: rental × (1 − ideal / actual)."""
        return self.rental * (1 - self.ideal_gpu_hours / self.gpu_hours)


def run_cost(params, tokens, peak_flops, mfu, price_per_gpu_hour, accelerator_power_, price_per_kwh, pue=1.0,
             host_share=0.0) -> RunCost:
    """Cost of a training run: ``C = 6ND``, ``GPU-h = C / (peak · MFU) / 3600``, ``$ = GPU-h · price``; electricity
    ``GPU-h · P · price_kWh`` (GPUs alone) and ``× PUE`` with the host share (facility).

    Units: counts, FLOP/s, fraction, $/GPU-hour, W, $/kWh. Seed 002's example (70B × 10T tokens on H100 at 40 % MFU,
    $2 per GPU-hour, 0.7 kW, $0.12/kWh, PUE 1.4):

    >>> c = run_cost(70e9, 10e12, 989.4e12, 0.4, 2.0, 700, 0.12, pue=1.4)
    >>> f"{c.flops:.2g}", round(c.ideal_gpu_hours / 1e6, 2), round(c.electricity_gpu_only / 1e6, 3)
    ('4.2e+24', 1.18, 0.248)
    """
    flops = compute.training_flops(params, tokens)
    hours = compute.gpu_hours(flops, peak_flops, mfu)
    ideal = compute.gpu_hours(flops, peak_flops, 1.0)
    gpu_energy = power.run_energy(1, accelerator_power_, hours * HOUR)
    fac_energy = power.run_energy(1, accelerator_power_, hours * HOUR, host_share=host_share, pue=pue)
    return RunCost(flops, hours, ideal, compute.cost(hours, price_per_gpu_hour), gpu_energy,
                   power.electricity_cost(gpu_energy, price_per_kwh), power.electricity_cost(fac_energy, price_per_kwh))


def seed002_example() -> RunCost:
    """Seed 002's worked example with its own assumptions: 70B parameters × 10T tokens on H100 (989.4 TFLOP/s BF16
    dense) at 40 % MFU, $2 per GPU-hour, 700 W per GPU, $0.12/kWh, PUE 1.4, no host share.

    >>> c = seed002_example()
    >>> round(c.electricity_gpu_only / 1e6, 2), round(c.electricity_facility / 1e6, 2)
    (0.25, 0.35)
    """
    return run_cost(70e9, 10e12, 989.4e12, 0.4, 2.0, 700, 0.12, pue=1.4)


@dataclass(frozen=True)
class OwnershipCost:
    """Cost of owning one accelerator for one year, by component, in dollars (and the usage it assumes)."""

    depreciation: float
    power: float
    cooling: float
    operations: float
    facility: float
    utilisation: float

    @property
    def total(self) -> float:
        """Dollars per year, all components."""
        return self.depreciation + self.power + self.cooling + self.operations + self.facility

    @property
    def fixed(self) -> float:
        """Dollars per year paid whether or not the accelerator works: depreciation, operations, facility."""
        return self.depreciation + self.operations + self.facility

    @property
    def variable_per_used_hour(self) -> float:
        """Energy dollars (power + cooling) per hour of work."""
        used = self.utilisation * HOURS_PER_YEAR
        return (self.power + self.cooling) / used if used else 0.0


def ownership_cost(purchase_price, utilisation, accelerator_power_, host_share=0.0, pue=1.4, price_per_kwh=0.12,
                   years=3, operations_fraction=0.05, facility_per_kw_year=1500.0) -> OwnershipCost:
    """Annual cost of owning one accelerator (seed 002's TCO list, 3-year straight-line depreciation by default).

    depreciation = purchase / years; power = (P_acc + P_host)/1000 · 8760 · u · price; cooling = (PUE − 1) · power;
    operations = operations_fraction · purchase; facility = facility_per_kw_year · (P_acc + P_host)/1000.

    Units: $, fraction, W, W, ratio, $/kWh, years, fraction per year, $ per kW-year. ``operations_fraction`` and
    ``facility_per_kw_year`` default to the book's assumptions (5 %, $1,500). An H100 at seed 002's $30,000,
    with a 575 W host share, used 70 % of the year:

    >>> c = ownership_cost(30_000, 0.7, 700, 575)
    >>> round(c.depreciation), round(c.power), round(c.total)
    (10000, 938, 14726)
    """
    p = _check.positive("purchase_price", purchase_price)
    u = _check.fraction("utilisation", utilisation, allow_zero=True)
    watts = _check.positive("accelerator_power_", accelerator_power_) + _check.nonnegative("host_share", host_share)
    kw = watts / 1e3
    pue_ = _check.positive("pue", pue)
    if pue_ < 1:
        raise ValueError(f"pue must be at least 1, got {pue!r}")
    energy_dollars = kw * HOURS_PER_YEAR * u * _check.nonnegative("price_per_kwh", price_per_kwh)
    return OwnershipCost(depreciation=p / _check.positive("years", years), power=energy_dollars,
                         cooling=(pue_ - 1) * energy_dollars,
                         operations=_check.nonnegative("operations_fraction", operations_fraction) * p,
                         facility=_check.nonnegative("facility_per_kw_year", facility_per_kw_year) * kw,
                         utilisation=u)


def cost_per_used_hour(ownership: OwnershipCost) -> float:
    """Owning's price per hour of work: ``total / (8760 · u)`` in $/hour (``ValueError`` at zero utilisation).

    >>> round(cost_per_used_hour(ownership_cost(30_000, 0.7, 700, 575)), 2)
    2.4
    """
    if not isinstance(ownership, OwnershipCost):
        raise ValueError(f"ownership must be an OwnershipCost, got {ownership!r}")
    if ownership.utilisation == 0:
        raise ValueError("ownership.utilisation is 0: an unused accelerator has no cost per used hour")
    return ownership.total / (HOURS_PER_YEAR * ownership.utilisation)


def break_even_utilisation(fixed_per_year, variable_per_used_hour, rent_per_hour) -> float:
    """Utilisation above which owning is cheaper than renting: ``u* = F / (8760 · (r − v))``.

    ``fixed_per_year`` F in $/year, ``variable_per_used_hour`` v and ``rent_per_hour`` r in $/hour. A result above 1
    means renting is cheaper even at full use. ``ValueError`` when r ≤ v (the rent does not even cover the energy).
    Seed 002's rule of thumb is "below 50 % utilisation, rent"; with the defaults of :func:`ownership_cost` for an
    H100 that holds at a rent near $3.30 per hour; at $2 the break-even is 86 %:

    >>> c = ownership_cost(30_000, 1.0, 700, 575)
    >>> round(break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.3), 2)
    0.5
    >>> round(break_even_utilisation(c.fixed, c.variable_per_used_hour, 2.0), 2)
    0.86
    """
    f = _check.nonnegative("fixed_per_year", fixed_per_year)
    v = _check.nonnegative("variable_per_used_hour", variable_per_used_hour)
    r = _check.positive("rent_per_hour", rent_per_hour)
    if r <= v:
        raise ValueError(f"rent_per_hour (${r:g}) does not exceed the energy cost per used hour (${v:.3g}): "
                         f"owning never breaks even")
    return f / (HOURS_PER_YEAR * (r - v))


def plot_buy_vs_rent(purchase_price=30_000, accelerator_power_=700, host_share=575, rents=(2.0, 3.0, 4.0), ax=None,
                     **ownership):
    """Owning's cost per used hour, ``F / (8760 · u) + v``, against utilisation, with each rent as a horizontal line
    and its break-even utilisation marked. Extra keyword arguments go to :func:`ownership_cost`. Returns the Axes.

    >>> ax = plot_buy_vs_rent(rents=(2.0, 4.0))
    >>> [t.get_text() for t in ax.texts]
    ['86%', '40%']
    >>> import matplotlib.pyplot as plt; plt.close("all")
    """
    base = ownership_cost(purchase_price, 1.0, accelerator_power_, host_share, **ownership)
    ax = plotting.axes(ax)
    us = [0.02 * i for i in range(5, 51)]
    ax.plot(us, [base.fixed / (HOURS_PER_YEAR * u) + base.variable_per_used_hour for u in us],
            color=plotting.color(0), lw=2, label="own: cost per used GPU-hour")
    for i, r in enumerate(rents):
        r = _check.positive("rents", r)
        c = plotting.color(i + 1)
        ax.axhline(r, color=c, ls="--", lw=1.2, label=f"rent ${r:.2f}/h")
        u = break_even_utilisation(base.fixed, base.variable_per_used_hour, r)
        if u <= 1:
            ax.plot([u], [r], "o", color=c)
            ax.annotate(f"{u:.0%}", (u, r), xytext=(4, 4), textcoords="offset points", fontsize=8, color=c)
    ax.set_xlim(0.1, 1.0)
    ax.set_ylim(0, max(8.0, max(rents) * 1.3))
    ax.set_xlabel("utilisation of an owned GPU (fraction of the year's hours)")
    ax.set_ylabel("$ per used GPU-hour")
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:.0%}")
    ax.legend(fontsize=8)
    return ax


@widgets.explorer
def buy_vs_rent_explorer():
    """Explorable: cost per used GPU-hour of owning vs renting, over utilisation, with the break-even point.

    Controls: rental price, purchase price, electricity price, depreciation years. Fixed: 700 W, 575 W host share
    (DGX H100 at its rating), PUE 1.4, operations 5 %/year, facility $1,500/kW-year (assumptions).

    >>> ex = buy_vs_rent_explorer()
    >>> ex.n_views, "Owning is cheaper above 86 %" in ex.render_current()
    (48, True)
    """
    us = [0.05 * i for i in range(2, 21)]

    def render(rent, purchase, price, years):
        base = ownership_cost(purchase, 1.0, 700, 575, 1.4, price, years)
        owned = [base.fixed / (HOURS_PER_YEAR * u) + base.variable_per_used_hour for u in us]
        u_star = break_even_utilisation(base.fixed, base.variable_per_used_hour, rent)
        vlines = [{"x": u_star, "label": f"break-even {units.fmt_percent(u_star)}", "color": "#000"}] \
            if u_star <= 1 else []
        chart = plotting.svg_chart(
            lines=[{"x": us, "y": owned, "label": "own (per used hour)"},
                   {"x": [us[0], us[-1]], "y": [rent, rent], "label": "rent", "dash": True}],
            vlines=vlines, xlim=(0.1, 1.0), ylim=(0, max(8.0, rent * 1.2)), xlabel="utilisation of the owned GPU",
            ylabel="$ per used GPU-hour",
            alt=f"Owning costs ${owned[-1]:.2f} per used hour at full use and more at lower use; renting "
                f"costs ${rent:.2f}. Break-even utilisation {units.fmt_percent(u_star)}.")
        verdict = (f"Owning is cheaper above {units.fmt_percent(u_star)} utilisation." if u_star <= 1 else
                   f"Renting at ${rent:g}/h is cheaper even at 100 % use (break-even would need "
                   f"{units.fmt_percent(u_star)}).")
        parts = (f"depreciation {units.fmt_dollars(base.depreciation)}, operations {units.fmt_dollars(base.operations)}"
                 f", facility {units.fmt_dollars(base.facility)} a year fixed; energy and cooling "
                 f"${base.variable_per_used_hour:.3f} per used hour")
        return f"{chart}<p><strong>{verdict}</strong> Owning: {parts}.</p>"

    return widgets.explore(render, [
        widgets.Slider("rent", "Rent ($/GPU-hour)", [1.5, 2.0, 3.0, 4.0], value=2.0),
        widgets.Slider("purchase", "Purchase ($ per GPU)", [25_000, 30_000, 40_000], value=30_000,
                       fmt=lambda v: units.fmt_dollars(v)),
        widgets.Slider("price", "Electricity ($/kWh)", [0.06, 0.12], value=0.12),
        widgets.Slider("years", "Depreciation (years)", [3, 5], value=3),
    ], title="Buy or rent?")
