"""Money: the cost of a training run, the cost of owning an accelerator, and when owning beats renting.

* **A run, rented**: GPU-hours × price per GPU-hour (:func:`chipchain.compute.gpu_hours`,
  :func:`chipchain.compute.cost`), plus, for comparison, the electricity those GPU-hours draw (:mod:`chipchain.power`).
* **Owning one accelerator for a year** (seed 002's TCO list): depreciation ``purchase · year / T_dep`` (straight
  line), power ``(P_acc + P_host) · 8760 h · u · price``, cooling and conversion ``(PUE − 1)`` times that,
  operations (a fraction of the purchase price per year), facility (dollars per kW of IT capacity per year).
  Utilisation ``u`` is the fraction of the year's hours the accelerator does work you would otherwise rent; an idle
  accelerator is assumed to draw nothing (idle draw would make owning a little dearer).
* **Break-even utilisation**: owning costs ``F + u · 8760 · v`` a year (F fixed, v energy per used hour), renting
  ``u · 8760 · r``; they are equal at ``u* = F / (8760 · (r − v))``. Above ``u*`` owning is cheaper.

Defaults come from ``data/energy_facts.csv``: seed 002's PUE 1.4, $0.12/kWh, $2 per GPU-hour and three-year
depreciation (the source's assumptions), and the book's own assumptions for operations (5 % of the purchase a
year) and facility ($1,500 per kW-year), which are not published figures; the chapters say so wherever they are
used. Utilisation and rents may be NumPy arrays. Figures and explorers: :mod:`chipchain.views.power`.

>>> c = seed002_example()
>>> round(c.gpu_hours / 1e6, 2), round(c.rental / 1e6, 1)
(2.95, 5.9)
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

from . import _check, compute, hardware, power, systems
from .power import fact
from .units import HOUR, YEAR

__all__ = ["RunCost", "run_cost", "seed002_example", "OwnershipCost", "ownership_cost", "cost_per_used_hour",
           "break_even_utilisation", "loaded_purchase_price", "cost_per_million_tokens"]

_HOURS_PER_YEAR = YEAR / HOUR   # 8760


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


def run_cost(params, tokens, accelerator, mfu, price_per_gpu_hour, price_per_kwh=None, pue=None, host_share=None,
             dtype="bf16", peak_flops=None, gpu_power=None) -> RunCost:
    """Cost of a training run: ``C = 6ND``, ``GPU-h = C / (peak · MFU) / 3600``, ``$ = GPU-h · price``; electricity
    (:func:`chipchain.power.electricity`) of the GPUs alone and at the facility, with the host share and PUE.

    ``accelerator`` a catalog name or record: its dense peak at ``dtype`` (FLOP/s) and TDP (W), unless
    ``peak_flops`` or ``gpu_power`` override them. ``host_share`` W per GPU (default: its server's,
    :func:`chipchain.power.host_share`); ``pue`` and ``price_per_kwh`` $/kWh (default: ``data/energy_facts.csv``'s
    seed 002 rows, as :func:`chipchain.power.electricity`). Units: counts, fraction, $/GPU-hour, $/kWh, W. So the
    running example costs what its step ⑦ says; seed 002's example (70B × 10T tokens on H100 — 989.4 TFLOP/s BF16
    dense, 700 W — at 40 % MFU, $2 per GPU-hour, $0.12/kWh, PUE 1.4, no host share):

    >>> round(run_cost(175e9, 2e12, "A100", 0.5, 2.0).electricity_facility / 1e3)
    510
    >>> c = run_cost(70e9, 10e12, "H100", 0.4, 2.0, 0.12, pue=1.4, host_share=0.0)
    >>> f"{c.flops:.2g}", round(c.ideal_gpu_hours / 1e6, 2), round(c.electricity_gpu_only / 1e6, 3)
    ('4.2e+24', 1.18, 0.248)
    """
    acc = hardware.get(accelerator)
    peak = acc.peak_flops(dtype) if peak_flops is None else peak_flops
    watts = acc.require("tdp") if gpu_power is None else gpu_power
    if host_share is None:
        try:
            host_share = power.host_share(acc)
        except KeyError as err:
            raise ValueError(f"host_share: {err.args[0]}; pass host_share= (W per GPU) explicitly") from None
    flops = compute.training_flops(params, tokens)
    hours = compute.gpu_hours(flops, peak, mfu)
    ideal = compute.gpu_hours(flops, peak, 1.0)
    e = power.electricity(1, watts, compute.seconds_from_gpu_hours(hours, 1), host_share, pue, price_per_kwh)
    return RunCost(flops, hours, ideal, compute.cost(hours, price_per_gpu_hour), e.gpu_only_energy,
                   power.electricity_cost(e.gpu_only_energy, e.price_per_kwh), e.dollars)


def seed002_example() -> RunCost:
    """Seed 002's worked example with its own assumptions: 70B parameters × 10T tokens on H100 (989.4 TFLOP/s BF16
    dense and 700 W, from the catalog) at 40 % MFU, $2 per GPU-hour, $0.12/kWh, PUE 1.4, no host share.

    >>> c = seed002_example()
    >>> round(c.electricity_gpu_only / 1e6, 2), round(c.electricity_facility / 1e6, 2)
    (0.25, 0.35)
    """
    return run_cost(70e9, 10e12, "H100", 0.4, fact("rent_seed002"), fact("price_seed002"), pue=fact("pue_seed002"),
                    host_share=0.0)


@dataclass(frozen=True)
class OwnershipCost:
    """Cost of owning one accelerator for one year, by component, in dollars (and the usage it assumes).

    ``power``, ``cooling`` and ``utilisation`` are arrays when :func:`ownership_cost` was given an array of
    utilisations."""

    depreciation: float
    power: float
    cooling: float
    operations: float
    facility: float
    utilisation: float
    variable_per_used_hour: float   #: energy dollars (power + cooling) per hour of work

    @property
    def total(self) -> float:
        """Dollars per year, all components."""
        return self.depreciation + self.power + self.cooling + self.operations + self.facility

    @property
    def fixed(self) -> float:
        """Dollars per year paid whether or not the accelerator works: depreciation, operations, facility."""
        return self.depreciation + self.operations + self.facility


def ownership_cost(purchase_price, utilisation, gpu_power, host_share=0.0, pue=None, price_per_kwh=None,
                   depreciation_seconds=None, operations_fraction=None, facility_per_kw_year=None) -> OwnershipCost:
    """Annual cost of owning one accelerator (seed 002's TCO list, straight-line depreciation).

    depreciation = purchase · year / T_dep; power = (P_acc + P_host)/1000 · 8760 · u · price; cooling =
    (PUE − 1) · power; operations = operations_fraction · purchase; facility = facility_per_kw_year ·
    (P_acc + P_host)/1000.

    Units: $, fraction (or an array of them), W (or an accelerator name: its TDP), W, ratio, $/kWh, s, fraction per
    year, $ per kW-year. Unset arguments come from ``data/energy_facts.csv``: PUE 1.4, $0.12/kWh and three years
    (seed 002), operations 5 % and facility $1,500 (the book's assumptions). An H100 at seed 002's $30,000, with a
    575 W host share, used 70 % of the year:

    >>> c = ownership_cost(30_000, 0.7, "H100", 575)
    >>> round(c.depreciation), round(c.power), round(c.total)
    (10000, 938, 14726)
    """
    p = _check.positive("purchase_price", purchase_price)
    u = _check.values("utilisation", utilisation, _check.probability)
    kw = (power._watts(gpu_power) + _check.values("host_share", host_share)) / 1e3
    pue_ = power._pue(fact("pue_seed002") if pue is None else pue)
    price = _check.values("price_per_kwh", fact("price_seed002") if price_per_kwh is None else price_per_kwh)
    t_dep = fact("depreciation_years_seed002") * YEAR if depreciation_seconds is None else _check.positive(
        "depreciation_seconds", depreciation_seconds)
    ops = fact("operations_fraction_assumed") if operations_fraction is None else _check.nonnegative(
        "operations_fraction", operations_fraction)
    fac = fact("facility_per_kw_year_assumed") if facility_per_kw_year is None else _check.nonnegative(
        "facility_per_kw_year", facility_per_kw_year)
    energy_dollars = kw * _HOURS_PER_YEAR * u * price
    return OwnershipCost(depreciation=p * YEAR / t_dep, power=energy_dollars, cooling=(pue_ - 1) * energy_dollars,
                         operations=ops * p, facility=fac * kw, utilisation=u, variable_per_used_hour=kw * price * pue_)


def cost_per_used_hour(ownership: OwnershipCost):
    """Owning's price per hour of work: ``total / (8760 · u)`` in $/hour (``ValueError`` at zero utilisation).

    Element-wise when the ownership was computed over an array of utilisations.

    >>> round(cost_per_used_hour(ownership_cost(30_000, 0.7, "H100", 575)), 2)
    2.4
    """
    if not isinstance(ownership, OwnershipCost):
        raise ValueError(f"ownership must be an OwnershipCost, got {ownership!r}")
    if np.any(np.asarray(ownership.utilisation) == 0):
        raise ValueError("ownership.utilisation is 0: an unused accelerator has no cost per used hour")
    return ownership.total / (_HOURS_PER_YEAR * ownership.utilisation)


def break_even_utilisation(fixed_per_year, variable_per_used_hour, rent_per_hour):
    """Utilisation above which owning is cheaper than renting: ``u* = F / (8760 · (r − v))``.

    ``fixed_per_year`` F in $/year, ``variable_per_used_hour`` v and ``rent_per_hour`` r in $/hour (r may be an
    array). A result above 1 means renting is cheaper even at full use. ``ValueError`` when r ≤ v (the rent does not
    even cover the energy). Seed 002's rule of thumb is "below 50 % utilisation, rent"; with the defaults of
    :func:`ownership_cost` for an H100 that holds at a rent near $3.30 per hour; at $2 the break-even is 86 %:

    >>> c = ownership_cost(30_000, 1.0, "H100", 575)
    >>> round(break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.3), 2)
    0.5
    >>> round(break_even_utilisation(c.fixed, c.variable_per_used_hour, 2.0), 2)
    0.86
    """
    f = _check.nonnegative("fixed_per_year", fixed_per_year)
    v = _check.nonnegative("variable_per_used_hour", variable_per_used_hour)
    r = _check.values("rent_per_hour", rent_per_hour, _check.positive)
    if np.any(np.asarray(r) <= v):
        raise ValueError(f"rent_per_hour (${np.min(r):g}) does not exceed the energy cost per used hour "
                         f"(${v:.3g}): owning never breaks even")
    return f / (_HOURS_PER_YEAR * (r - v))


def loaded_purchase_price(system_price=None, gpus_per_system=None, network_share=None) -> float:
    """A GPU's fully loaded purchase price: its share of the server, plus its share of the cluster network,
    ``P = (S / g) / (1 − f)`` — what a cloud GPU-hour's price has to recover, where seed 002's $30,000 buys the GPU
    alone.

    Units: $ per server, GPUs per server, fraction of the cluster's hardware cost that is its interconnect; returns
    $ per GPU. Defaults (``data/energy_facts.csv``, both estimates): SemiAnalysis's $270,000 for a DGX H100 and
    Epoch AI's 19 % network share (Cottier et al. 2024), over the DGX H100's 8 GPUs (its ``systems`` row) — about
    $41,700 per H100:

    >>> round(loaded_purchase_price(), -2)
    41700.0
    """
    s = fact("dgx_h100_price_semianalysis") if system_price is None else _check.positive("system_price", system_price)
    g = systems.node("DGX-H100").gpus_per_node if gpus_per_system is None else _check.integer(
        "gpus_per_system", gpus_per_system, minimum=1)
    f = fact("cluster_network_share_epoch") if network_share is None else _check.probability("network_share",
                                                                                            network_share)
    if f >= 1:
        raise ValueError(f"network_share must be below 1 (the network cannot be the whole cluster), got {f!r}")
    return s / g / (1 - f)


def cost_per_million_tokens(price_per_gpu_hour, n_gpus, tokens_per_second):
    """Dollars per million generated tokens when ``n_gpus`` rented at ``price_per_gpu_hour`` produce
    ``tokens_per_second`` in total: ``n · price / (3,600 · tokens/s) · 10⁶`` (``tokens_per_second`` may be an array).

    One H100 at $2 an hour producing 1,000 tokens/s costs 56 cents per million tokens:

    >>> round(cost_per_million_tokens(2.0, 1, 1000), 3)
    0.556
    """
    p = _check.positive("price_per_gpu_hour", price_per_gpu_hour)
    n = _check.integer("n_gpus", n_gpus)
    t = _check.values("tokens_per_second", tokens_per_second, _check.positive)
    return n * p / (HOUR * t) * 1e6
