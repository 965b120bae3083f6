"""chipchain.power: facility power, energy of a run, cost, emissions, efficiency — pinned to the sources."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import power, walkthrough
from chipchain.units import DAY, GWh, kWh


def test_hundred_thousand_h100_is_70_mw_of_gpu_heat():
    assert power.it_power(100_000, power.accelerator_power("H100")) == pytest.approx(70e6)  # seed 000 §10


def test_facility_power_multiplies_host_share_and_pue():
    assert power.facility_power(8, 700, 575, 1.0) == pytest.approx(10_200)  # a DGX H100 at its rating
    assert power.facility_power(100_000, 700, 575, 1.3) == pytest.approx(165.75e6)


def test_host_share_from_dgx_h100():
    # NVIDIA DGX H100 datasheet: ~10.2 kW for 8 × 700 W GPUs
    assert power.host_share_from_system(power.fact("dgx_h100_max_power"), 8, 700) == pytest.approx(575)
    with pytest.raises(ValueError, match="system_power"):
        power.host_share_from_system(5000, 8, 700)


def test_stargate_in_h100_equivalents():
    assert power.accelerators_supported(10e9, 700) == pytest.approx(10e9 / 700)
    assert power.accelerators_supported(10e9, 700, 575, 1.3) == pytest.approx(10e9 / (1275 * 1.3))


def test_seed002_2048_h100_three_months():
    # seed 002: 2,048 H100, 1.4 MW, three months, "about 3.0 GWh × $0.12 ≈ $360k"
    assert power.it_power(2048, 700) == pytest.approx(1.4336e6)
    e = power.run_energy(2048, 700, 90 * DAY)
    assert e / GWh == pytest.approx(3.0966, rel=1e-3)          # 3.1 GWh, not 3.0
    assert power.electricity_cost(e, 0.12) == pytest.approx(371_589, rel=1e-3)


def test_household_years_eia():
    assert power.fact("us_household_kwh_per_year") == 10_715   # EIA, 2020
    assert power.household_years(50e6 * kWh) == pytest.approx(4666.4, rel=1e-4)   # seed 000 §11 says ~5,000
    assert power.household_years(10_715 * kWh) == pytest.approx(1.0)


def test_peak_efficiency_seed002():
    assert power.peak_efficiency("A100") / 1e12 == pytest.approx(0.78)          # 312 / 400
    assert power.peak_efficiency("H100") / 1e12 == pytest.approx(1.41, abs=0.005)  # 989.4 / 700


def test_realised_efficiency_and_utilisation_lever():
    full = power.realised_efficiency(989.4e12, 700, 1.0)
    assert full == pytest.approx(power.peak_efficiency("H100"))
    train = power.realised_efficiency(989.4e12, 700, 0.5)
    decode = power.realised_efficiency(989.4e12, 700, 0.2)
    assert train / decode == pytest.approx(2.5)     # seed 000 §11: 50 % vs 20 % utilisation


def test_bloom_emissions():
    # Luccioni et al. 2023: 433,196 kWh, 24.7 t CO2eq at 57 g/kWh
    assert power.emissions(433_196 * kWh, 0.057) / 1e3 == pytest.approx(24.7, abs=0.05)


def test_run_ledger_sums_and_matches_parts():
    r = power.run_ledger(1024, 400, 158 * DAY, host_share=200, pue=1.4, price_per_kwh=0.12, kg_co2_per_kwh=0.4)
    assert r.accelerator_energy + r.host_energy + r.overhead_energy == pytest.approx(r.energy)
    assert r.overhead_energy == pytest.approx(0.4 * (r.accelerator_energy + r.host_energy))
    assert r.dollars == pytest.approx(r.kwh * 0.12)
    assert r.kg_co2 == pytest.approx(r.kwh * 0.4)


def test_deals_show_both_tmi_figures():
    d = power.deals()
    assert set(d["capacity_MW"]) >= {835, 837, 500, 960, 1920, 10_000}
    for col in ("bibkey", "checked", "source"):
        assert d[col].notna().all(), col


def test_every_fact_has_source_and_check_level():
    f = power.facts()
    assert f["source"].str.len().gt(0).all() and f["checked"].isin(["V", "V2", "U"]).all()


def test_walkthrough_step7():
    e = walkthrough.Walkthrough().step7_electricity()
    w = walkthrough.Walkthrough()
    assert e.seconds == pytest.approx(w.run_seconds)
    assert e.gpu_only_kwh == pytest.approx(1024 * 0.4 * w.run_seconds / 3600)       # 1.56 M kWh
    assert e.kwh == pytest.approx(1024 * 0.6 * 1.4 * w.run_seconds / 3600)
    assert e.dollars == pytest.approx(e.kwh * 0.12)
    # seed 000's "$1.55 M" equals the GPU-only kWh count at $1/kWh
    assert e.gpu_only_kwh / 1e6 == pytest.approx(1.55, abs=0.01)


@pytest.mark.parametrize("call", [
    lambda: power.it_power(0, 700), lambda: power.it_power(10, -1), lambda: power.facility_power(10, 700, 0, 0.9),
    lambda: power.run_energy(10, 700, float("nan")), lambda: power.run_energy(10, 700, 10, power_fraction=1.5),
    lambda: power.electricity_cost(-1, 0.1), lambda: power.emissions(1, float("inf")),
    lambda: power.household_years(1, 0), lambda: power.realised_efficiency(1e15, 700, 0),
    lambda: power.it_power(True, 700),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_names_raise_key_error():
    with pytest.raises(KeyError, match="nearest"):
        power.fact("household")
    with pytest.raises(KeyError, match="nearest known names"):
        power.accelerator_power("H300")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200_000), watts=st.floats(50, 2000), host=st.floats(0, 1000), pue=st.floats(1, 2.5),
       days=st.floats(0.1, 400), extra=st.floats(0.01, 10))
def test_energy_is_monotone(n, watts, host, pue, days, extra):
    e = power.run_energy(n, watts, days * DAY, host, pue)
    assert power.run_energy(n + 1, watts, days * DAY, host, pue) > e
    assert power.run_energy(n, watts + extra, days * DAY, host, pue) > e
    assert power.run_energy(n, watts, (days + extra) * DAY, host, pue) > e
    assert power.run_energy(n, watts, days * DAY, host, pue + extra) > e
    assert math.isclose(e, pue * n * (watts + host) * days * DAY, rel_tol=1e-12)
