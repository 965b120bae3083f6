"""chipchain.economics: seed 002's worked example, ownership cost, break-even utilisation."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import compute, economics, hardware, power, systems
from chipchain.units import HOUR, YEAR


def test_seed002_worked_example():
    # seed 002 (K16-17): 70B × 10T tokens, H100 at 989 TFLOP/s, MFU 40 %, $2/GPU-hour, 0.7 kW, $0.12/kWh, PUE 1.4
    c = economics.seed002_example()
    assert c.flops == pytest.approx(4.2e24)                       # "4.2×10²⁴ FLOPs"
    assert c.gpu_hours / 1e6 == pytest.approx(2.95, abs=0.005)    # "295 万 GPU 小时"
    assert c.rental / 1e6 == pytest.approx(5.9, abs=0.01)         # "约 590 万美元" at $2
    assert c.electricity_gpu_only / 1e6 == pytest.approx(0.25, abs=0.005)  # "25 万美元"
    assert c.electricity_facility / 1e6 == pytest.approx(0.35, abs=0.005)  # "35 万美元" with PUE 1.4
    assert 6e6 <= c.rental + c.electricity_facility <= 7e6                 # "总 TCO 落在 600~700 万美元量级"
    assert c.ideal_gpu_hours / 1e6 == pytest.approx(1.18, abs=0.005)       # "118 万 GPU 小时" lower bound
    assert c.gpu_hours / c.ideal_gpu_hours == pytest.approx(2.5)           # "两者相差 2.5 倍" = 1 / MFU


def test_seed002_example_reads_the_catalog():
    h100 = hardware.get("H100")
    c = economics.seed002_example()
    explicit = economics.run_cost(70e9, 10e12, h100, 0.4, 2.0, 0.12, pue=1.4, host_share=0.0,
                                  peak_flops=h100.peak_flops("bf16"), gpu_power=h100.tdp)
    assert c == explicit == economics.run_cost(70e9, 10e12, "H100-SXM5", 0.4, 2.0, 0.12, pue=1.4, host_share=0.0)


def test_run_cost_and_the_walkthrough_price_the_running_example_alike():
    # one home for a run's electricity (power.electricity): with no stated PUE, price or host share both read the
    # same data rows (seed 002's PUE 1.4 and $0.12/kWh) and the DGX A100's host share; before, $179 k against $510 k
    from chipchain.walkthrough import Walkthrough
    w = Walkthrough(mfu=0.5).step7_electricity()
    c = economics.run_cost(175e9, 2e12, "A100", 0.5, 2.0)
    # the walkthrough bills its wall clock (training + failures); run_cost the training time: the same rate
    t = compute.training_time(compute.training_flops(175e9, 2e12), 1024, 312e12, 0.5)
    assert c.electricity_facility * w.seconds / t == pytest.approx(w.dollars, rel=1e-12)
    assert (w.pue, w.price_per_kwh) == (power.fact(power.DEFAULT_PUE), power.fact(power.DEFAULT_PRICE)) == (1.4, 0.12)


@pytest.mark.parametrize("system", [n.name for n in systems.all_nodes() if n.accelerator is not None])
def test_electricity_for_every_node(system):
    # every catalog node: facility energy = PUE · (1 + host / TDP) × the GPUs-only energy (The Green Grid's PUE)
    node = systems.node(system)
    acc = node.accelerator
    try:
        tdp = acc.require("tdp")
    except ValueError:
        pytest.skip(f"{acc.name} has no TDP in the catalog")
    try:
        host = power.host_share(node)
    except KeyError:
        host = 100.0                                     # no server rating in the catalog: any stated share
    e = power.electricity(node.gpus_per_node, acc, 86400.0, host_share=host)
    assert e.energy == pytest.approx(e.pue * (1 + host / tdp) * e.gpu_only_energy, rel=1e-12)
    assert e.dollars == pytest.approx(e.energy / 3.6e6 * e.price_per_kwh, rel=1e-12)


def test_run_cost_agrees_with_compute_and_power():
    c = economics.run_cost(175e9, 2e12, "A100", 0.5, 2.0, 0.12)
    f = compute.training_flops(175e9, 2e12)
    assert c.gpu_hours == pytest.approx(compute.gpu_hours(f, hardware.get("A100").peak_flops(), 0.5))
    assert c.rental == pytest.approx(compute.cost(c.gpu_hours, 2.0))
    assert c.gpu_energy == pytest.approx(power.run_energy(1, "A100", c.gpu_hours * HOUR))
    assert c.mfu_price == pytest.approx(c.rental / 2)      # at 50 % MFU half the rent buys idle time


def test_ownership_seed002_and_consistency():
    # seed 002: "H100 单卡 $3 万", "按 3 年折旧摊销" → $10,000 a year
    c = economics.ownership_cost(30_000, 0.5, "H100", 300, pue=1.5, price_per_kwh=0.1, operations_fraction=0.1,
                                 facility_per_kw_year=1000)
    assert c.depreciation == pytest.approx(10_000)
    # the power line is the electricity of one GPU plus host running half the year (chipchain.power)
    assert c.power == pytest.approx(power.electricity_cost(power.run_energy(1, 700 + 300, 0.5 * YEAR), 0.1))
    assert c.cooling / c.power == pytest.approx(0.5)       # (PUE − 1)
    assert c.operations == pytest.approx(3000) and c.facility == pytest.approx(1000)
    assert economics.cost_per_used_hour(c) * 0.5 * YEAR / HOUR == pytest.approx(c.total)
    assert economics.ownership_cost(30_000, 0.5, "H100", depreciation_seconds=5 * YEAR).depreciation == 6000


def test_ownership_defaults_come_from_the_facts():
    c = economics.ownership_cost(30_000, 0.7, "H100", 575)
    same = economics.ownership_cost(30_000, 0.7, 700, 575, pue=power.fact("pue_seed002"),
                                    price_per_kwh=power.fact("price_seed002"),
                                    depreciation_seconds=power.fact("depreciation_years_seed002") * YEAR,
                                    operations_fraction=power.fact("operations_fraction_assumed"),
                                    facility_per_kw_year=power.fact("facility_per_kw_year_assumed"))
    assert c == same


def test_break_even_equates_the_two_costs():
    c = economics.ownership_cost(30_000, 1.0, "H100", 575)
    u = economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.0)
    at_u = economics.ownership_cost(30_000, u, "H100", 575)
    assert economics.cost_per_used_hour(at_u) == pytest.approx(3.0)


def test_break_even_at_seed_rule_of_thumb():
    # seed 002: "below 50 % utilisation, renting is usually cheaper" — with the book's assumptions, true near $3.30/h
    c = economics.ownership_cost(30_000, 1.0, "H100", 575)
    assert economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.3) == pytest.approx(0.5, abs=0.01)


def test_arrays_of_utilisation_and_rent():
    us = np.linspace(0.1, 1.0, 10)
    c = economics.ownership_cost(30_000, us, "H100", 575)
    per_hour = economics.cost_per_used_hour(c)
    assert per_hour.shape == (10,) and np.all(np.diff(per_hour) < 0)        # more use, cheaper hours
    assert per_hour[3] == pytest.approx(economics.cost_per_used_hour(economics.ownership_cost(30_000, us[3],
                                                                                               "H100", 575)))
    be = economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, [2.0, 3.0, 4.0])
    assert np.all(np.diff(be) < 0)
    assert be[0] == pytest.approx(0.86, abs=0.005)                           # chapter 9's $2 break-even


def test_break_even_rejects_rent_below_energy_cost():
    with pytest.raises(ValueError, match="never breaks even"):
        economics.break_even_utilisation(10_000, 0.3, 0.2)


def test_efficiency_claim_of_seed004():
    # seed 004 §6.3: a 2× efficiency gap makes three-year TCO differ "by an order of magnitude" — it does not
    a = economics.ownership_cost(30_000, 0.8, 700, 575)
    b = economics.ownership_cost(30_000, 0.8, 1400, 1150)
    assert 1.0 < b.total / a.total < 1.5


@pytest.mark.parametrize("call", [
    lambda: economics.ownership_cost(0, 0.5, 700), lambda: economics.ownership_cost(30_000, 1.5, 700),
    lambda: economics.ownership_cost(30_000, 0.5, 700, pue=0.8), lambda: economics.ownership_cost(30_000, 0.5, -1),
    lambda: economics.ownership_cost(30_000, [0.5, float("nan")], 700),
    lambda: economics.ownership_cost(30_000, 0.5, 700, depreciation_seconds=0),
    lambda: economics.cost_per_used_hour(economics.ownership_cost(30_000, 0.0, 700)),
    lambda: economics.cost_per_used_hour("not an ownership cost"),
    lambda: economics.run_cost(70e9, 10e12, "H100", 0, 2.0, 0.12),
    lambda: economics.run_cost(70e9, 10e12, "TPU-v4", 0.4, 2.0, 0.12),     # no TDP in the catalog
    lambda: economics.break_even_utilisation(float("nan"), 0.1, 2),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_accelerator():
    with pytest.raises(KeyError, match="nearest known names"):
        economics.run_cost(70e9, 10e12, "H300", 0.4, 2.0, 0.12)


@settings(max_examples=60, deadline=None)
@given(purchase=st.floats(5_000, 100_000), rent=st.floats(1.0, 10.0), price=st.floats(0.02, 0.3),
       bump=st.floats(0.05, 2.0))
def test_break_even_monotone(purchase, rent, price, bump):
    c = economics.ownership_cost(purchase, 1.0, 700, 300, price_per_kwh=price)
    c2 = economics.ownership_cost(purchase * (1 + bump), 1.0, 700, 300, price_per_kwh=price)
    u = economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, rent)
    assert economics.break_even_utilisation(c2.fixed, c2.variable_per_used_hour, rent) > u   # dearer to buy
    assert economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, rent + bump) < u  # dearer to rent


# --- properties (issue 13) ------------------------------------------------------------------------------------------
import math
import time


def test_seed002_example_is_quick_and_finite():
    t = time.process_time()
    c = economics.seed002_example()
    assert time.process_time() - t < 1.0
    assert all(math.isfinite(getattr(c, k)) and getattr(c, k) > 0 for k in ("flops", "gpu_hours", "rental"))


@settings(max_examples=60, deadline=1000)
@given(params=st.floats(1e8, 2e12), tokens=st.floats(1e9, 1e14), mfu=st.floats(0.01, 1), rent=st.floats(0, 20),
       price=st.floats(0, 1), pue=st.floats(1, 3), host=st.floats(0, 2000))
def test_run_cost_never_below_its_ideal(params, tokens, mfu, rent, price, pue, host):
    c = economics.run_cost(params, tokens, "H100", mfu, rent, price, pue=pue, host_share=host)
    assert c.gpu_hours >= c.ideal_gpu_hours * (1 - 1e-12)             # 100 % MFU is the lower bound
    assert c.electricity_facility >= c.electricity_gpu_only * (1 - 1e-12)   # hosts and PUE only add
    assert all(math.isfinite(v) for v in (c.rental, c.electricity_facility, c.mfu_price))


@settings(max_examples=60, deadline=1000)
@given(purchase=st.floats(100, 1e6), u=st.floats(0.01, 1), watts=st.floats(1, 3000), host=st.floats(0, 3000),
       years=st.floats(0.5, 10))
def test_owning_costs_less_per_used_hour_the_more_it_is_used(purchase, u, watts, host, years):
    lo = economics.ownership_cost(purchase, u, watts, host, depreciation_seconds=years * YEAR)
    hi = economics.ownership_cost(purchase, min(1.0, u * 1.5), watts, host, depreciation_seconds=years * YEAR)
    assert lo.total == pytest.approx(lo.depreciation + lo.power + lo.cooling + lo.operations + lo.facility)
    assert economics.cost_per_used_hour(hi) <= economics.cost_per_used_hour(lo) * (1 + 1e-12)
    assert math.isfinite(economics.cost_per_used_hour(lo))
