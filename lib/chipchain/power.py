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
purchase deals in ``data/energy_deals.csv`` (tables in :mod:`chipchain.views.power`). All quantities are SI: watts,
joules, seconds, dollars, kilograms of CO₂-equivalent. Wherever a function takes ``gpu_power`` (watts per
accelerator) it also accepts an accelerator name or record, meaning its catalog TDP; the element-wise equations
accept NumPy arrays.

>>> it_power(100_000, "H100") / 1e6     # 100,000 H100 at 700 W: the GPUs alone
70.0
"""
from __future__ import annotations

from dataclasses import dataclass

from ._lazy import np

from . import _check, _data, hardware, systems
from .units import kWh

__all__ = [
    "facts", "fact", "deals", "accelerator_power", "host_share", "host_share_from_system", "it_power", "facility_power",
    "accelerators_supported", "run_energy", "electricity_cost", "Electricity", "electricity", "DEFAULT_PUE",
    "DEFAULT_PRICE", "emissions", "household_years",
    "peak_efficiency", "realised_efficiency", "RunEnergy", "run_ledger",
    "water_use", "power_swing", "measured_power_fraction",
]


# --- checks that accept arrays ------------------------------------------------------------------------------------
def _pue(pue):
    p = _check.values("pue", pue, _check.positive)
    if np.any(np.asarray(p) < 1):
        raise ValueError(f"pue must be at least 1 (facility energy cannot be less than IT energy), got {pue!r}")
    return p


def _watts(gpu_power):
    """Watts per accelerator: a number (or array), or an accelerator name/record meaning its catalog TDP."""
    if isinstance(gpu_power, (str, hardware.Accelerator)):
        return accelerator_power(gpu_power)
    return _check.values("gpu_power", gpu_power, _check.positive)


# --- reference data --------------------------------------------------------------------------------------------
def facts() -> tuple:
    """Every row of ``data/energy_facts.csv`` (key, value, unit, description, source, checked) as a dict of
    strings, in file order: the one reader of that file (one figure: :func:`fact`; the table:
    :func:`chipchain.views.power.facts`).

    >>> facts()[0]["checked"] in ("V", "V2", "U")
    True
    """
    return _data.rows("energy_facts.csv")


def deals() -> tuple:
    """Every row of ``data/energy_deals.csv`` (nuclear and power-purchase deals for datacenters) as a dict of
    strings, empty where the source gives no figure, in file order (the table: :func:`chipchain.views.power.deals`).

    >>> sum("Three Mile" in r["what"] for r in deals()) >= 1
    True
    """
    return _data.rows("energy_deals.csv")


def fact(key: str) -> float:
    """A reference figure from ``data/energy_facts.csv``, in the unit its row states (kWh/year, ratio, $/kWh, W …).

    Each row carries its source and check level (the table: :func:`chipchain.views.power.facts`).

    >>> fact("us_household_kwh_per_year")
    10715.0
    >>> fact("pue")
    Traceback (most recent call last):
    ...
    KeyError: "unknown energy fact 'pue'; nearest known names: pue_seed002"
    """
    rows = {r["key"]: r for r in facts()}
    if not isinstance(key, str):
        raise ValueError(f"key must be an energy-fact name (str), got {key!r}")
    if key not in rows:
        raise KeyError(_check.nearest_message(key, list(rows), "energy fact"))
    return float(rows[key]["value"])


# --- power ----------------------------------------------------------------------------------------------------
def accelerator_power(accelerator) -> float:
    """Rated board power (TDP) of a catalog accelerator (name, alias or record), in watts; ``ValueError`` naming
    the part if the catalog lacks it.

    Source: the catalog row (``hardware``). H100 SXM: up to 700 W (NVIDIA product page).

    >>> accelerator_power("H100"), accelerator_power("A100")
    (700.0, 400.0)
    """
    return hardware.get(accelerator).require("tdp")


def host_share_from_system(system_power, n_gpus, gpu_power) -> float:
    """Host share per accelerator: ``P_host = P_system / n − P_acc`` (watts).

    ``system_power`` W for the whole server, ``n_gpus`` accelerators in it, ``gpu_power`` W each (or an accelerator
    name). A DGX H100 is rated at about 10.2 kW for 8 GPUs of 700 W (NVIDIA DGX H100 datasheet), which leaves 575 W
    per GPU for CPUs, memory, NVSwitches, NICs, fans and storage — at the *maximum* rating, so an upper reference:

    >>> host_share_from_system(10_200, 8, 700)
    575.0
    """
    p = _check.positive("system_power", system_power)
    k = _check.integer("n_gpus", n_gpus)
    a = _watts(gpu_power)
    share = p / k - a
    if np.any(np.asarray(share) < 0):
        raise ValueError(f"system_power ({p:g} W) is less than {k} × gpu_power ({gpu_power!r} W)")
    return share


def host_share(system) -> float:
    """Host share per accelerator of a catalog server at its maximum rating, in watts: :func:`host_share_from_system`
    with the server's power from ``data/energy_facts.csv`` and its GPU count and accelerator from
    :mod:`chipchain.systems` (any node or accelerator name). ``KeyError`` if the facts lack the server's power.

    >>> host_share("H100"), host_share("DGX-A100")
    (575.0, 412.5)
    """
    node = systems.node(system)
    key = f"{node.name.lower().replace('-', '_')}_max_power"
    try:
        watts = fact(key)
    except KeyError:
        raise KeyError(f"no maximum system power for {node.name} in energy_facts.csv (looked for {key!r})") from None
    return host_share_from_system(watts, node.gpus_per_node, node.accelerator)


def it_power(n_gpus, gpu_power, host_share=0.0):
    """IT power of a cluster: ``P_IT = n · (P_acc + P_host)`` in watts.

    ``n_gpus`` count; ``gpu_power`` (W, or an accelerator name) and ``host_share`` in watts per accelerator. With
    ``host_share = 0`` this is the heat of the accelerators alone: 100,000 H100 × 700 W = 70 MW (seed 000 §10).

    >>> it_power(100_000, 700) / 1e6
    70.0
    >>> it_power(1024, 400, 200) / 1e3
    614.4
    """
    n = _check.integer("n_gpus", n_gpus)
    return n * (_watts(gpu_power) + _check.values("host_share", host_share))


def facility_power(n_gpus, gpu_power, host_share=0.0, pue=1.0):
    """Facility power: ``P_fac = PUE · n · (P_acc + P_host)`` in watts.

    ``pue`` ≥ 1 (facility energy ÷ IT energy; Uptime Institute's 2023 survey average is 1.58). 100,000 H100 with
    the DGX H100's 575 W host share and PUE 1.3:

    >>> round(facility_power(100_000, "H100", 575, 1.3) / 1e6, 1)
    165.8
    """
    return _pue(pue) * it_power(n_gpus, gpu_power, host_share)


def accelerators_supported(site_power, gpu_power, host_share=0.0, pue=1.0):
    """How many accelerators a site's power supports: ``n = P_site / (PUE · (P_acc + P_host))`` (not rounded).

    ``site_power`` W. Stargate's 10 GW target in H100-equivalents, GPUs alone (700 W, PUE 1):

    >>> round(accelerators_supported(10e9, "H100") / 1e6, 1)
    14.3
    """
    s = _check.values("site_power", site_power, _check.positive)
    return s / (_pue(pue) * (_watts(gpu_power) + _check.values("host_share", host_share)))


# --- energy, cost, emissions ------------------------------------------------------------------------------------
def run_energy(n_gpus, gpu_power, seconds, host_share=0.0, pue=1.0, power_fraction=1.0):
    """Energy of a run at the meter: ``E = PUE · n · (P_acc + P_host) · f · T`` in joules.

    ``seconds`` T; ``power_fraction`` f in (0, 1] is the average draw as a fraction of the stated power (1 = at the
    rating all the time). Seed 002's example: 2,048 H100 at 700 W for three months (90 days), GPUs only:

    >>> round(run_energy(2048, 700, 90 * 86400) / 3.6e12, 2)     # GWh
    3.1
    """
    t = _check.values("seconds", seconds, _check.positive)
    f = _check.values("power_fraction", power_fraction, _check.fraction)
    return facility_power(n_gpus, gpu_power, host_share, pue) * f * t


def electricity_cost(energy, price_per_kwh):
    """Dollars = energy in kWh × price: ``$ = (E / 3.6e6) · p``.

    ``energy`` J; ``price_per_kwh`` $/kWh; either may be an array. 3.0 GWh at $0.12/kWh (seed 002):

    >>> round(electricity_cost(3.0e6 * 3.6e6, 0.12))
    360000
    """
    return _check.values("energy", energy) / kWh * _check.values("price_per_kwh", price_per_kwh)


#: the rows of ``data/energy_facts.csv`` that give a run's PUE and electricity price when none is stated: seed 002's
#: assumptions (PUE 1.4; $0.12/kWh, nearer a US commercial than an industrial rate)
DEFAULT_PUE, DEFAULT_PRICE = "pue_seed002", "price_seed002"


@dataclass(frozen=True)
class Electricity:
    """A run's electricity: facility power (W), energy at the meter and of the GPUs alone (J), the bill ($), and
    the assumptions that produce them (host share W per GPU, PUE, $/kWh)."""

    facility_power: float
    energy: float
    gpu_only_energy: float      #: J of the accelerators alone at their rated power, no host share, PUE 1
    dollars: float
    host_share: float
    pue: float
    price_per_kwh: float


def electricity(n_gpus, gpu_power, seconds, host_share=0.0, pue=None, price_per_kwh=None) -> Electricity:
    """The electricity of a run and its bill, the one home of both: ``P_fac = PUE · n · (P_acc + P_host)``,
    ``E = P_fac · T``, ``$ = E[kWh] · price``.

    ``n_gpus`` count; ``gpu_power`` W (or an accelerator name: its TDP); ``seconds`` T; ``host_share`` W per GPU;
    ``pue`` and ``price_per_kwh`` ($/kWh) default to the rows :data:`DEFAULT_PUE` and :data:`DEFAULT_PRICE` of
    ``data/energy_facts.csv`` (seed 002's 1.4 and $0.12). The running example's 1,024 A100 at 400 W with the DGX
    A100's 412.5 W host share for 152 days (at 50 % MFU):

    >>> e = electricity(1024, 400, 152.3 * 86400, host_share=412.5)
    >>> e.pue, e.price_per_kwh, round(e.dollars / 1e3)
    (1.4, 0.12, 511)
    """
    p = fact(DEFAULT_PUE) if pue is None else pue
    price = fact(DEFAULT_PRICE) if price_per_kwh is None else _check.nonnegative("price_per_kwh", price_per_kwh)
    host = _check.nonnegative("host_share", host_share)
    energy = run_energy(n_gpus, gpu_power, seconds, host_share=host, pue=p)
    gpu_only = run_energy(n_gpus, gpu_power, seconds)
    return Electricity(float(facility_power(n_gpus, gpu_power, host, p)), float(energy), float(gpu_only),
                       float(electricity_cost(energy, price)), float(host), float(p), float(price))


def emissions(energy, kg_co2_per_kwh):
    """Operational emissions in kg CO₂e: ``m = (E / 3.6e6) · c`` (embodied carbon of the hardware not counted).

    ``energy`` J; ``kg_co2_per_kwh`` grid carbon intensity. BLOOM's 433,196 kWh (Luccioni et al. 2023) at
    0.057 kg/kWh, the French grid figure the paper uses, gives its 24.7 t of dynamic-power emissions:

    >>> round(emissions(433_196 * 3.6e6, 0.057) / 1e3, 1)
    24.7
    """
    return _check.values("energy", energy) / kWh * _check.values("kg_co2_per_kwh", kg_co2_per_kwh)


def household_years(energy, kwh_per_household_year=None):
    """Energy expressed as US household-years of electricity: ``E / 3.6e6 / 10,715`` (EIA 2020 average).

    ``energy`` J. Seed 000 §11's "50 million kWh ≈ 5,000 US households for a year" recomputed:

    >>> round(household_years(50e6 * 3.6e6))
    4666
    """
    e = _check.values("energy", energy)
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


def realised_efficiency(accelerator, mfu, pue=1.0, host_share=0.0, dtype="bf16", peak_flops=None, gpu_power=None):
    """Useful FLOPs per joule at the meter: ``η_real = peak · MFU / (PUE · (P_acc + P_host))``.

    ``accelerator`` a catalog name or record: its dense peak at ``dtype`` (FLOP/s) and TDP (W), unless
    ``peak_flops`` or ``gpu_power`` override them; ``mfu`` in (0, 1] (or an array). H100 (989.4 TFLOP/s, 700 W) at
    40 % MFU and PUE 1.4, GPU power only — seed 002's "1.41 on paper, 0.4–0.7 in practice" before the facility
    overhead, 0.40 after it:

    >>> round(realised_efficiency("H100", 0.4, pue=1.4) / 1e12, 2)
    0.4
    """
    acc = hardware.get(accelerator)
    peak = acc.peak_flops(dtype) if peak_flops is None else _check.positive("peak_flops", peak_flops)
    watts = _watts(acc if gpu_power is None else gpu_power) + _check.values("host_share", host_share)
    return peak * _check.values("mfu", mfu, _check.fraction) / (_pue(pue) * watts)


# --- a run's ledger -----------------------------------------------------------------------------------------------
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


def run_ledger(n_gpus, gpu_power, seconds, host_share=0.0, pue=1.0, price_per_kwh=0.0, kg_co2_per_kwh=0.0,
               power_fraction=1.0) -> RunEnergy:
    """Energy, cost, emissions and household-years of a run, split into accelerator, host and facility overhead.

    Same equations as :func:`run_energy`, :func:`electricity_cost`, :func:`emissions`, :func:`household_years`.
    Seed 002's worked example: 2.95 M H100-hours at 0.7 kW is 2.065 GWh; at $0.12/kWh about $0.25 M, with PUE 1.4
    about $0.35 M (one GPU for 2.95 M hours is the same energy as 2.95 M GPUs for an hour):

    >>> r = run_ledger(1, "H100", 2.95e6 * 3600, pue=1.4, price_per_kwh=0.12)
    >>> round(r.accelerator_energy / 3.6e12, 3), round(r.dollars / 1e6, 3)
    (2.065, 0.347)
    """
    f = power_fraction
    total = run_energy(n_gpus, gpu_power, seconds, host_share, pue, f)
    acc = run_energy(n_gpus, gpu_power, seconds, power_fraction=f)
    host = run_energy(n_gpus, gpu_power, seconds, host_share, power_fraction=f) - acc
    return RunEnergy(it_power(n_gpus, gpu_power, host_share), facility_power(n_gpus, gpu_power, host_share, pue),
                     acc, host, total - acc - host, total, electricity_cost(total, price_per_kwh),
                     emissions(total, kg_co2_per_kwh), household_years(total))


# --- water, power swings, measured draw ----------------------------------------------------------------------------

def water_use(it_energy, litres_per_kwh):
    """Cooling water a site consumes: V = E_IT × WUE, in litres. ``it_energy`` E_IT is the energy delivered to the
    IT equipment in joules (water usage effectiveness is defined per IT kilowatt-hour, The Green Grid), and
    ``litres_per_kwh`` the site's WUE: water evaporated or discharged for cooling and humidification per IT kWh.
    An evaporative site runs at tenths of a litre to a few litres per kWh; a closed loop refilled once, near zero.
    Element-wise.

    A 100 MW IT load for a year at Microsoft's fleet-average 0.30 L/kWh (fiscal 2023):

    >>> round(water_use(100e6 * 8760 * 3600, 0.30) / 1e6)      # million litres
    263
    """
    e = _check.values("it_energy", it_energy, _check.nonnegative)
    w = _check.values("litres_per_kwh", litres_per_kwh, _check.nonnegative)
    return _check.result(e / kWh * w)


def power_swing(n_gpus, gpu_power, idle_power, host_swing=0.0):
    """How far a synchronous job's IT power falls when every GPU pauses at once (a checkpoint, a collective that
    waits, the job stopping) and rises again when they resume: ΔP = n · (P_busy − P_idle + ΔP_host), in watts.
    ``gpu_power`` the draw while computing (a name means the catalog TDP), ``idle_power`` the draw while waiting
    (watts per GPU, at most the busy draw) and ``host_swing`` any change of the host share (watts per GPU).
    Element-wise.

    16,384 H100s falling from 700 W to an assumed 100 W while they wait:

    >>> power_swing(16_384, "H100", 100) / 1e6
    9.8304
    """
    busy = _watts(gpu_power)
    idle = _check.values("idle_power", idle_power, _check.nonnegative)
    if np.any(np.asarray(idle) > np.asarray(busy)):
        raise ValueError(f"idle_power must not exceed gpu_power, got {idle_power!r} > {gpu_power!r}")
    n = _check.values("n_gpus", n_gpus, _check.integer)
    return _check.result(n * (busy - idle + _check.values("host_swing", host_swing, _check.nonnegative)))


def measured_power_fraction(measured_power, rated_power):
    """Measured draw as a fraction of the rating: f = P_measured / P_rated, for :func:`run_energy`'s
    ``power_fraction``. A server under training draws less than its nameplate: Latif et al. (2025) measured at most
    8.4 kW on an 8-GPU H100 node rated 10.2 kW.

    >>> round(measured_power_fraction(8.4e3, 10.2e3), 3)
    0.824
    """
    m = _check.positive("measured_power", measured_power)
    r = _check.positive("rated_power", rated_power)
    if m > r * 1.5:
        raise ValueError(f"measured_power {m:g} W is far above rated_power {r:g} W: check the arguments")
    return m / r
