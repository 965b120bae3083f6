"""chipchain.economics: seed 002's worked example, ownership cost, break-even utilisation."""
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import compute, economics


def test_seed002_worked_example():
    c = economics.seed002_example()
    assert c.flops == pytest.approx(4.2e24)                       # 6 × 70e9 × 10e12
    assert c.gpu_hours / 1e6 == pytest.approx(2.95, abs=0.005)    # "295 万 GPU 小时"
    assert c.rental / 1e6 == pytest.approx(5.9, abs=0.01)         # "$590 万" at $2
    assert c.electricity_gpu_only / 1e6 == pytest.approx(0.25, abs=0.005)  # "25 万美元"
    assert c.electricity_facility / 1e6 == pytest.approx(0.35, abs=0.005)  # "35 万美元" with PUE 1.4
    assert c.ideal_gpu_hours / 1e6 == pytest.approx(1.18, abs=0.005)       # "118 万 GPU 小时" lower bound
    assert c.gpu_hours / c.ideal_gpu_hours == pytest.approx(2.5)           # 1 / MFU


def test_run_cost_reuses_compute():
    c = economics.run_cost(175e9, 2e12, 3e14, 0.5, 2.0, 400, 0.12)
    f = compute.training_flops(175e9, 2e12)
    assert c.gpu_hours == pytest.approx(compute.gpu_hours(f, 3e14, 0.5))
    assert c.rental == pytest.approx(compute.cost(c.gpu_hours, 2.0))
    assert c.mfu_price == pytest.approx(c.rental / 2)


def test_ownership_components():
    c = economics.ownership_cost(30_000, 0.5, 700, 300, pue=1.5, price_per_kwh=0.1, years=3,
                                 operations_fraction=0.1, facility_per_kw_year=1000)
    assert c.depreciation == pytest.approx(10_000)
    assert c.power == pytest.approx(1.0 * 8760 * 0.5 * 0.1)
    assert c.cooling == pytest.approx(0.5 * c.power)
    assert c.operations == pytest.approx(3000)
    assert c.facility == pytest.approx(1000)
    assert c.total == pytest.approx(10_000 + 438 + 219 + 3000 + 1000)
    assert economics.cost_per_used_hour(c) == pytest.approx(c.total / (8760 * 0.5))


def test_break_even_equates_the_two_costs():
    c = economics.ownership_cost(30_000, 1.0, 700, 575)
    u = economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.0)
    at_u = economics.ownership_cost(30_000, u, 700, 575)
    assert economics.cost_per_used_hour(at_u) == pytest.approx(3.0)


def test_break_even_at_seed_rule_of_thumb():
    # seed 002: "below 50 % utilisation, renting is usually cheaper" — with the book's assumptions, true near $3.30/h
    c = economics.ownership_cost(30_000, 1.0, 700, 575)
    assert economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, 3.3) == pytest.approx(0.5, abs=0.01)


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
    lambda: economics.cost_per_used_hour(economics.ownership_cost(30_000, 0.0, 700)),
    lambda: economics.cost_per_used_hour("not an ownership cost"),
    lambda: economics.run_cost(70e9, 10e12, 989.4e12, 0, 2.0, 700, 0.12),
    lambda: economics.break_even_utilisation(float("nan"), 0.1, 2),
])
def test_bad_input(call):
    with pytest.raises(ValueError):
        call()


@settings(max_examples=60, deadline=None)
@given(purchase=st.floats(5_000, 100_000), rent=st.floats(1.0, 10.0), price=st.floats(0.02, 0.3),
       bump=st.floats(0.05, 2.0))
def test_break_even_monotone(purchase, rent, price, bump):
    c = economics.ownership_cost(purchase, 1.0, 700, 300, price_per_kwh=price)
    c2 = economics.ownership_cost(purchase * (1 + bump), 1.0, 700, 300, price_per_kwh=price)
    u = economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, rent)
    assert economics.break_even_utilisation(c2.fixed, c2.variable_per_used_hour, rent) > u   # dearer to buy
    assert economics.break_even_utilisation(c.fixed, c.variable_per_used_hour, rent + bump) < u  # dearer to rent
