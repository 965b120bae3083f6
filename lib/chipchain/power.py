"""Power and energy: from watts per chip to megawatts per site, kilowatt-hours per run, and what they cost.

The chain of multiplications this module owns:

* **IT power** of a cluster: ``P_IT = n · (P_acc + P_host)``: every accelerator draws its own power plus its share of
  the host (CPUs, memory, NICs, switches, fans, storage).
* **Facility power**: ``P_fac = PUE · P_IT``. Power usage effectiveness (PUE) is facility energy ÷ IT energy
  (The Green Grid's definition); the extra is cooling and power conversion.
* **Energy of a run**: ``E = P_fac · T · f`` with ``f`` the average draw as a fraction of the stated power.
  Utilisation (MFU) enters through the *duration* ``T``: a GPU waiting for data still draws power, so a run at
  half the MFU takes twice as long and uses about twice the energy.
* **Cost** ``= E · price``; **emissions** ``= E · carbon intensity``; **household-years** ``= E ÷`` a US home's
  annual use (EIA: 10,715 kWh in 2020).

Reference figures with their sources live in ``data/energy_facts.csv`` (:func:`fact`); the nuclear and power
purchase deals in ``data/energy_deals.csv`` (:func:`deals`). All quantities are SI: watts, joules, seconds,
dollars, kilograms of CO₂-equivalent.

>>> it_power(100_000, 700) / 1e6     # 100,000 H100 at 700 W: the GPUs alone
70.0
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources

from . import _check, hardware, plotting, units, widgets
from .units import kWh

__all__ = [
    "fact", "facts", "deals", "accelerator_power", "host_share_from_system", "it_power", "facility_power",
    "accelerators_supported", "run_energy", "electricity_cost", "emissions", "household_years",
    "peak_efficiency", "realised_efficiency", "RunEnergy", "run_ledger", "run_energy_explorer",
]


# --- reference data --------------------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _fact_rows() -> tuple:
    with resources.files("chipchain").joinpath("data/energy_facts.csv").open(encoding="utf-8") as f:
        return tuple(csv.DictReader(f))


def fact(key: str) -> float:
    """A reference figure from ``data/energy_facts.csv``, in the unit its row states (kWh/year, ratio, $/kWh, W …).

    Each row carries its source and check level; :func:`facts` returns the table.

    >>> fact("us_household_kwh_per_year")
    10715.0
    >>> fact("pue")
    Traceback (most recent call last):
    ...
    KeyError: "unknown energy fact 'pue'; nearest: pue_seed002, pue_hyperscale, pue_uptime_2023"
    """
    import difflib

    rows = {r["key"]: r for r in _fact_rows()}
    if not isinstance(key, str) or key not in rows:
        near = difflib.get_close_matches(str(key), list(rows), n=3, cutoff=0.3) or list(rows)[:3]
        raise KeyError(f"unknown energy fact {key!r}; nearest: {', '.join(near)}")
    return float(rows[key]["value"])


def facts():
    """The reference figures as a pandas DataFrame indexed by key (value, unit, description, source, checked).

    >>> f = facts()
    >>> float(f.loc["pue_uptime_2023", "value"]), f.loc["pue_uptime_2023", "checked"]
    (1.58, 'V2')
    """
    import pandas as pd

    df = pd.DataFrame(_fact_rows()).set_index("key")
    df["value"] = df["value"].astype(float)
    return df


def deals():
    """Nuclear and power-purchase deals for datacenters (``data/energy_deals.csv``) as a pandas DataFrame.

    Two rows describe Three Mile Island Unit 1: the operator's "about 835 MW" and the EIA's 837 MW net capacity —
    the same plant counted two ways, kept side by side rather than reconciled.

    >>> d = deals()
    >>> sorted(d.loc[d["what"].str.contains("Three Mile|same unit"), "capacity_MW"])
    [835, 837]
    """
    import pandas as pd

    with resources.files("chipchain").joinpath("data/energy_deals.csv").open(encoding="utf-8") as f:
        df = pd.read_csv(f)
    return df


# --- power ----------------------------------------------------------------------------------------------------
def accelerator_power(accelerator) -> float:
    """Rated board power (TDP) of a catalog accelerator, in watts; ``ValueError`` if the catalog lacks it.

    Source: the catalog row (``hardware``). H100 SXM: up to 700 W (NVIDIA product page).

    >>> accelerator_power("H100"), accelerator_power("A100")
    (700.0, 400.0)
    """
    return hardware.get(accelerator).require("tdp")


def host_share_from_system(system_power, accelerators_per_system, accelerator_power_) -> float:
    """Host share per accelerator: ``P_host = P_system / k − P_acc`` (watts).

    ``system_power`` W for the whole server, ``accelerators_per_system`` count, ``accelerator_power_`` W.
    A DGX H100 is rated at about 10.2 kW for 8 GPUs of 700 W (NVIDIA DGX H100 datasheet), which leaves 575 W per GPU
    for CPUs, memory, NVSwitches, NICs, fans and storage — at the *maximum* rating, so an upper reference:

    >>> host_share_from_system(10_200, 8, 700)
    575.0
    """
    p = _check.positive("system_power", system_power)
    k = _check.integer("accelerators_per_system", accelerators_per_system)
    a = _check.positive("accelerator_power_", accelerator_power_)
    share = p / k - a
    if share < 0:
        raise ValueError(f"system_power ({p:g} W) is less than {k} × accelerator_power_ ({a:g} W)")
    return share


def it_power(n_accelerators, accelerator_power_, host_share=0.0) -> float:
    """IT power of a cluster: ``P_IT = n · (P_acc + P_host)`` in watts.

    ``n_accelerators`` count; ``accelerator_power_`` and ``host_share`` in watts per accelerator. With
    ``host_share = 0`` this is the heat of the accelerators alone: 100,000 H100 × 700 W = 70 MW (seed 000 §10).

    >>> it_power(100_000, 700) / 1e6
    70.0
    >>> it_power(1024, 400, 200) / 1e3
    614.4
    """
    n = _check.integer("n_accelerators", n_accelerators)
    return n * (_check.positive("accelerator_power_", accelerator_power_) + _check.nonnegative("host_share",
                                                                                                host_share))


def facility_power(n_accelerators, accelerator_power_, host_share=0.0, pue=1.0) -> float:
    """Facility power: ``P_fac = PUE · n · (P_acc + P_host)`` in watts.

    ``pue`` ≥ 1 (facility energy ÷ IT energy; Uptime Institute's 2023 survey average is 1.58). 100,000 H100 with
    the DGX H100's 575 W host share and PUE 1.3:

    >>> round(facility_power(100_000, 700, 575, 1.3) / 1e6, 1)
    165.8
    """
    p = _check.positive("pue", pue)
    if p < 1:
        raise ValueError(f"pue must be at least 1 (facility energy cannot be less than IT energy), got {pue!r}")
    return p * it_power(n_accelerators, accelerator_power_, host_share)


def accelerators_supported(site_power, accelerator_power_, host_share=0.0, pue=1.0) -> float:
    """How many accelerators a site's power supports: ``n = P_site / (PUE · (P_acc + P_host))`` (not rounded).

    ``site_power`` W. Stargate's 10 GW target in H100-equivalents, GPUs alone (700 W, PUE 1):

    >>> round(accelerators_supported(10e9, 700) / 1e6, 1)
    14.3
    """
    s = _check.positive("site_power", site_power)
    p = _check.positive("pue", pue)
    if p < 1:
        raise ValueError(f"pue must be at least 1, got {pue!r}")
    return s / (p * (_check.positive("accelerator_power_", accelerator_power_)
                     + _check.nonnegative("host_share", host_share)))


# --- energy, cost, emissions ------------------------------------------------------------------------------------
def run_energy(n_accelerators, accelerator_power_, seconds, host_share=0.0, pue=1.0, power_fraction=1.0) -> float:
    """Energy of a run at the meter: ``E = PUE · n · (P_acc + P_host) · f · T`` in joules.

    ``seconds`` T; ``power_fraction`` f in (0, 1] is the average draw as a fraction of the stated power (1 = at the
    rating all the time). Seed 002's example: 2,048 H100 at 700 W for three months (90 days), GPUs only:

    >>> round(run_energy(2048, 700, 90 * 86400) / 3.6e12, 2)     # GWh
    3.1
    """
    t = _check.positive("seconds", seconds)
    f = _check.fraction("power_fraction", power_fraction)
    return facility_power(n_accelerators, accelerator_power_, host_share, pue) * f * t


def electricity_cost(joules, price_per_kwh) -> float:
    """Dollars = energy in kWh × price: ``$ = (E / 3.6e6) · p``.

    ``joules`` J; ``price_per_kwh`` $/kWh. 3.0 GWh at $0.12/kWh (seed 002):

    >>> round(electricity_cost(3.0e6 * 3.6e6, 0.12))
    360000
    """
    return _check.nonnegative("joules", joules) / kWh * _check.nonnegative("price_per_kwh", price_per_kwh)


def emissions(joules, kg_co2_per_kwh) -> float:
    """Operational emissions in kg CO₂e: ``m = (E / 3.6e6) · c`` (embodied carbon of the hardware not counted).

    ``kg_co2_per_kwh`` grid carbon intensity. BLOOM's 433,196 kWh (Luccioni et al. 2023) at 0.057 kg/kWh, the
    French grid figure the paper uses, gives its 24.7 t of dynamic-power emissions:

    >>> round(emissions(433_196 * 3.6e6, 0.057) / 1e3, 1)
    24.7
    """
    return _check.nonnegative("joules", joules) / kWh * _check.nonnegative("kg_co2_per_kwh", kg_co2_per_kwh)


def household_years(joules, kwh_per_household_year=None) -> float:
    """Energy expressed as US household-years of electricity: ``E / 3.6e6 / 10,715`` (EIA 2020 average).

    Seed 000 §11's "50 million kWh ≈ 5,000 US households for a year" recomputed:

    >>> round(household_years(50e6 * 3.6e6))
    4666
    """
    e = _check.nonnegative("joules", joules)
    h = fact("us_household_kwh_per_year") if kwh_per_household_year is None else _check.positive(
        "kwh_per_household_year", kwh_per_household_year)
    return e / kWh / h


# --- efficiency -------------------------------------------------------------------------------------------------
def peak_efficiency(accelerator, dtype="bf16") -> float:
    """Peak energy efficiency ``η = peak FLOP/s ÷ rated power`` in FLOP per joule (1e12 FLOP/J = 1 TFLOPS/W).

    Dense peak at ``dtype`` over the catalog TDP. Seed 002: A100 312/400 ≈ 0.78 TFLOPS/W, H100 989/700 ≈ 1.41:

    >>> round(peak_efficiency("A100") / 1e12, 2), round(peak_efficiency("H100") / 1e12, 2)
    (0.78, 1.41)
    """
    acc = hardware.get(accelerator)
    return acc.peak_flops(dtype) / acc.require("tdp")


def realised_efficiency(peak_flops, accelerator_power_, mfu, pue=1.0, host_share=0.0) -> float:
    """Useful FLOPs per joule at the meter: ``η_real = peak · MFU / (PUE · (P_acc + P_host))``.

    ``peak_flops`` FLOP/s; powers in W; ``mfu`` in (0, 1]. H100 at 40 % MFU and PUE 1.4, GPU power only — seed 002's
    "1.41 on paper, 0.4–0.7 in practice" before the facility overhead, 0.40 after it:

    >>> round(realised_efficiency(989.4e12, 700, 0.4, pue=1.4) / 1e12, 2)
    0.4
    """
    p = _check.positive("pue", pue)
    if p < 1:
        raise ValueError(f"pue must be at least 1, got {pue!r}")
    watts = _check.positive("accelerator_power_", accelerator_power_) + _check.nonnegative("host_share", host_share)
    return _check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu) / (p * watts)


# --- a run's ledger, and its explorable ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RunEnergy:
    """The energy ledger of one run (SI units: W, J, $, kg CO₂e)."""

    it_power: float
    facility_power: float
    accelerator_energy: float   #: J drawn by the accelerators themselves
    host_energy: float          #: J drawn by their share of hosts, network and storage
    overhead_energy: float      #: J of cooling and power conversion, (PUE − 1) × IT energy
    energy: float               #: J at the meter (the sum of the three)
    dollars: float
    kg_co2: float
    household_years: float

    @property
    def kwh(self) -> float:
        """Energy at the meter in kWh."""
        return self.energy / kWh


def run_ledger(n_accelerators, accelerator_power_, seconds, host_share=0.0, pue=1.0, price_per_kwh=0.0,
               kg_co2_per_kwh=0.0, power_fraction=1.0) -> RunEnergy:
    """Energy, cost, emissions and household-years of a run, split into accelerator, host and facility overhead.

    Same equations as :func:`run_energy`, :func:`electricity_cost`, :func:`emissions`, :func:`household_years`.
    Seed 002's worked example: 2.95 M H100-hours at 0.7 kW is 2.065 GWh; at $0.12/kWh about $0.25 M, with PUE 1.4
    about $0.35 M (one GPU for 2.95 M hours is the same energy as 2.95 M GPUs for an hour):

    >>> r = run_ledger(1, 700, 2.95e6 * 3600, pue=1.4, price_per_kwh=0.12)
    >>> round(r.accelerator_energy / 3.6e12, 3), round(r.dollars / 1e6, 3)
    (2.065, 0.347)
    """
    it = it_power(n_accelerators, accelerator_power_, host_share)
    fac = facility_power(n_accelerators, accelerator_power_, host_share, pue)
    total = run_energy(n_accelerators, accelerator_power_, seconds, host_share, pue, power_fraction)
    f = power_fraction
    acc = n_accelerators * accelerator_power_ * f * seconds
    host = n_accelerators * host_share * f * seconds
    return RunEnergy(it, fac, acc, host, total - acc - host, total, electricity_cost(total, price_per_kwh),
                     emissions(total, kg_co2_per_kwh), household_years(total))


@widgets.explorer
def run_energy_explorer():
    """Explorable: the energy, electricity bill and emissions of a training run.

    Controls: accelerators, power per accelerator (the host share is set to half of it, an assumption shown in the
    output), days, PUE, electricity price and grid carbon intensity. Equations: :func:`run_ledger`.

    >>> ex = run_energy_explorer()
    >>> ex.n_views, "3.3 GWh" in ex.render_current()
    (144, True)
    """
    def render(n, watts, days, pue, price, carbon):
        host = 0.5 * watts
        r = run_ledger(n, watts, days * 86400, host_share=host, pue=pue, price_per_kwh=price, kg_co2_per_kwh=carbon)
        bars = plotting.svg_bars(
            [("accelerators", r.accelerator_energy), ("host, network, storage", r.host_energy),
             ("cooling and conversion", r.overhead_energy)], unit_format=units.fmt_energy,
            alt=f"Energy ledger: accelerators {units.fmt_energy(r.accelerator_energy)}, host "
                f"{units.fmt_energy(r.host_energy)}, facility overhead {units.fmt_energy(r.overhead_energy)}")
        rows = [("Facility power", units.fmt_power(r.facility_power)),
                ("Energy at the meter", units.fmt_energy(r.energy)),
                ("Electricity bill", units.fmt_dollars(r.dollars)),
                ("Emissions", f"{units.fmt_number(r.kg_co2 / 1e3)} t CO₂e"),
                ("US household-years", units.fmt_number(r.household_years))]
        body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
        note = (f"<p style='font-size:90%'>Assumed host share {units.fmt_power(host)} per accelerator (half its "
                f"power); every accelerator at its rated power for the whole run.</p>")
        return f"{bars}<table class='cc-table'>{body}</table>{note}"

    return widgets.explore(render, [
        widgets.Slider("n", "Accelerators", [1024, 16384, 100_000], value=1024, fmt=units.fmt_number),
        widgets.Slider("watts", "Power per accelerator (W)", [400.0, 700.0, 1000.0], value=400.0, fmt="g"),
        widgets.Slider("days", "Days", [90, 158], value=158),
        widgets.Slider("pue", "PUE", [1.1, 1.4], value=1.4),
        widgets.Slider("price", "Price ($/kWh)", [0.06, 0.12], value=0.12),
        widgets.Slider("carbon", "Grid (kg CO₂e/kWh)", [0.1, 0.4], value=0.4),
    ], title="Energy and cost of a training run")

