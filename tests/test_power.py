"""chipchain.power: facility power, energy of a run, cost, emissions, efficiency — pinned to the sources."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import power, walkthrough
from chipchain.units import DAY, GWh, kWh
from chipchain.views import power as views_power


def test_hundred_thousand_h100_is_70_mw_of_gpu_heat():
    assert power.it_power(100_000, "H100") == pytest.approx(70e6)  # seed 000 §10: "100,000 H100 … 70 MW"
    assert power.it_power(100_000, "H100") == power.it_power(100_000, power.accelerator_power("H100"))


def test_dgx_h100_at_its_rating():
    # NVIDIA DGX H100 datasheet: ~10.2 kW maximum for 8 × 700 W GPUs → 575 W of host per GPU
    assert power.host_share_from_system(power.fact("dgx_h100_max_power"), 8, 700) == pytest.approx(575)
    assert power.host_share("DGX-H100") == power.host_share("H100") == pytest.approx(575)
    assert power.facility_power(8, "H100", power.host_share("H100")) == pytest.approx(10_200)
    # NVIDIA DGX A100 datasheet: 6.5 kW maximum for 8 × 400 W GPUs → 412.5 W
    assert power.host_share("DGX-A100") == pytest.approx(412.5)
    with pytest.raises(ValueError, match="system_power"):
        power.host_share_from_system(5000, 8, 700)
    with pytest.raises(KeyError, match="maximum system power"):
        power.host_share("GB200-NVL72")


def test_uptime_pue_and_overhead():
    # Uptime Institute Global Data Center Survey 2023: average PUE 1.58 (1.55 in 2022)
    assert power.fact("pue_uptime_2023") == 1.58 and power.fact("pue_uptime_2022") == 1.55
    it = power.it_power(1000, "H100", 575)
    overhead = 1 - it / power.facility_power(1000, "H100", 575, power.fact("pue_uptime_2023"))
    assert overhead == pytest.approx(0.367, abs=5e-4)     # 36.7 % of facility energy is not IT


def test_site_power_inverts_facility_power():
    # Stargate's 10 GW (seed 000): 14.3 M H100 by the boards alone; the inverse of facility_power exactly
    assert power.accelerators_supported(10e9, "H100") / 1e6 == pytest.approx(14.29, abs=0.005)
    n = power.accelerators_supported(10e9, "H100", 575, 1.3)
    assert power.facility_power(1, "H100", 575, 1.3) * n == pytest.approx(10e9)


def test_seed002_2048_h100_three_months():
    # seed 002: 2,048 H100, 1.4 MW, three months, "about 3.0 GWh × $0.12 ≈ $360k"
    assert power.it_power(2048, "H100") / 1e6 == pytest.approx(1.4, abs=0.05)
    e = power.run_energy(2048, "H100", 90 * DAY)
    assert e / GWh == pytest.approx(3.0966, rel=1e-3)          # 3.1 GWh, not 3.0
    assert power.electricity_cost(e, 0.12) == pytest.approx(371_589, rel=1e-3)
    assert power.electricity_cost(3.0 * GWh, 0.12) == pytest.approx(360_000)   # the source's own product


def test_household_years_eia():
    assert power.fact("us_household_kwh_per_year") == 10_715   # EIA, 2020
    assert power.household_years(50e6 * kWh) == pytest.approx(4666.4, rel=1e-4)   # seed 000 §11 says ~5,000
    assert power.household_years(10_715 * kWh) == pytest.approx(1.0)


def test_peak_efficiency_seed002():
    assert power.peak_efficiency("A100") / 1e12 == pytest.approx(0.78)          # seed 002: 312 / 400
    assert power.peak_efficiency("H100") / 1e12 == pytest.approx(1.41, abs=0.005)  # seed 002: 989 / 700


def test_realised_efficiency_seed002_range_and_utilisation_lever():
    assert power.realised_efficiency("H100", 1.0) == pytest.approx(power.peak_efficiency("H100"))
    # seed 002: "nominal 1.41 often only 0.4–0.7 in practice" at MFU 30–50 %
    for mfu in (0.3, 0.5):
        assert 0.4 <= power.realised_efficiency("H100", mfu) / 1e12 <= 0.71
    # seed 000 §11: 50 % vs 20 % utilisation is 2.5× the useful work per joule
    assert power.realised_efficiency("H100", 0.5) / power.realised_efficiency("H100", 0.2) == pytest.approx(2.5)
    assert power.realised_efficiency("A100", 0.5, peak_flops=3e14) / 1e12 == pytest.approx(0.375)


def test_bloom_emissions():
    # Luccioni et al. 2023: 433,196 kWh, 24.7 t CO2eq at 57 g/kWh
    assert power.emissions(433_196 * kWh, 0.057) / 1e3 == pytest.approx(24.7, abs=0.05)


def test_run_ledger_sums_and_matches_parts():
    r = power.run_ledger(1024, 400, 158 * DAY, host_share=200, pue=1.4, price_per_kwh=0.12, kg_co2_per_kwh=0.4)
    assert r.accelerator_energy + r.host_energy + r.overhead_energy == pytest.approx(r.energy)
    assert r.overhead_energy == pytest.approx(0.4 * (r.accelerator_energy + r.host_energy))
    assert r.dollars == pytest.approx(power.electricity_cost(r.energy, 0.12))
    assert r.kg_co2 == pytest.approx(power.emissions(r.energy, 0.4))


def test_equations_take_arrays():
    days = np.array([30.0, 90.0, 158.0])
    e = power.run_energy(2048, "H100", days * DAY)
    assert e.shape == (3,) and e[1] == pytest.approx(power.run_energy(2048, "H100", 90 * DAY))
    bills = power.electricity_cost(e, [0.06, 0.12, 0.2])
    assert bills[1] == pytest.approx(power.electricity_cost(e[1], 0.12))
    assert np.all(np.diff(power.realised_efficiency("H100", np.array([0.2, 0.4, 0.6]))) > 0)
    with pytest.raises(ValueError, match="seconds"):
        power.run_energy(8, 700, np.array([1.0, float("nan")]))
    with pytest.raises(ValueError, match="energy"):
        power.electricity_cost([-1.0, 2.0], 0.1)


def test_missing_tdp_fails_by_name():
    with pytest.raises(ValueError, match="TPU-v4 has no 'tdp'"):
        power.it_power(10, "TPU-v4")


def test_deals_show_both_tmi_figures():
    d = views_power.deals()
    assert set(d["capacity_MW"]) >= {835, 837, 500, 960, 1920, 10_000}
    for col in ("bibkey", "checked", "source"):
        assert d[col].notna().all(), col


def test_every_fact_has_source_and_check_level():
    f = views_power.facts()
    assert f["source"].str.len().gt(0).all() and f["checked"].isin(["V", "V2", "U"]).all()


def test_walkthrough_step7():
    w = walkthrough.Walkthrough()
    e = w.step7_electricity()
    assert e.seconds == pytest.approx(w.step6_failures().wall_seconds)      # billed on the wall clock, as the rent
    # the DGX A100's host share by the one method (6.5 kW rating − 8 × 400 W) / 8 = 412.5 W, PUE 1.4
    assert e.host_share == pytest.approx(412.5)
    assert e.kwh == pytest.approx(power.run_energy(1024, "A100", e.seconds, 412.5, 1.4) / kWh)
    assert e.dollars == pytest.approx(power.electricity_cost(e.energy, 0.12))
    # seed 000's "$1.55 M" is the GPU-only kWh count at the source's rounded 300 TFLOP/s peak (158 days)
    # (over the training days alone; the book bills the wall clock, a few days more)
    src = w.replace(peak_flops=3e14, mfu=0.5)
    assert src.run_seconds / DAY == pytest.approx(158, abs=0.5)
    e = src.step7_electricity()
    assert e.gpu_only_kwh * src.run_seconds / e.seconds / 1e6 == pytest.approx(1.55, abs=0.01)


@pytest.mark.parametrize("call", [
    lambda: power.it_power(0, 700), lambda: power.it_power(10, -1), lambda: power.facility_power(10, 700, 0, 0.9),
    lambda: power.run_energy(10, 700, float("nan")), lambda: power.run_energy(10, 700, 10, power_fraction=1.5),
    lambda: power.electricity_cost(-1, 0.1), lambda: power.emissions(1, float("inf")),
    lambda: power.household_years(1, 0), lambda: power.realised_efficiency("H100", 0),
    lambda: power.it_power(True, 700), lambda: power.accelerators_supported(0, 700),
    lambda: power.it_power(8, [True, False]), lambda: power.fact(3),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()


def test_unknown_names_raise_key_error():
    with pytest.raises(KeyError, match="nearest"):
        power.fact("household")
    with pytest.raises(KeyError, match="nearest known names"):
        power.accelerator_power("H300")
    with pytest.raises(KeyError, match="nearest known names"):
        power.it_power(8, "H300")


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 200_000), watts=st.floats(50, 2000), host=st.floats(0, 1000), pue=st.floats(1, 2.5),
       days=st.floats(0.1, 400), extra=st.floats(0.01, 10))
def test_energy_is_monotone(n, watts, host, pue, days, extra):
    e = power.run_energy(n, watts, days * DAY, host, pue)
    assert power.run_energy(n + 1, watts, days * DAY, host, pue) > e
    assert power.run_energy(n, watts + extra, days * DAY, host, pue) > e
    assert power.run_energy(n, watts, (days + extra) * DAY, host, pue) > e
    assert power.run_energy(n, watts, days * DAY, host, pue + extra) > e
    # energy scales exactly with GPUs and time: twice the GPUs for half the time is the same energy
    assert math.isclose(power.run_energy(2 * n, watts, days * DAY / 2, host, pue), e, rel_tol=1e-12)


# --- properties (issue 13): up to 10⁶ GPUs and multi-year runs, within a second, never NaN ------------------------
import time

from chipchain import hardware

_FACT_KEYS = list(views_power.facts().index)


def _fast(call):
    t = time.process_time()
    out = call()
    assert time.process_time() - t < 1.0
    return out


def test_every_fact_and_catalog_rating_is_a_number():
    assert all(math.isfinite(power.fact(k)) for k in _FACT_KEYS)
    for name in hardware.names():
        try:
            w = power.accelerator_power(name)
        except ValueError:
            continue                          # the catalog lacks a TDP: said by name, not a NaN
        assert 0 < w < 30_000
        try:
            e = power.peak_efficiency(name)
        except ValueError:
            continue
        assert e > 0 and math.isfinite(e)


def test_one_host_share_method_for_every_dgx():
    # (system rating − GPUs × TDP) / GPUs, from the datasheets: DGX A100 6.5 kW, DGX H100 10.2 kW
    assert power.host_share("DGX-A100") == pytest.approx((6500 - 8 * 400) / 8)
    assert power.host_share("DGX-H100") == pytest.approx((10_200 - 8 * 700) / 8)
    assert power.host_share("A100") == power.host_share("DGX-A100")
    with pytest.raises(KeyError, match="no maximum system power"):
        power.host_share("HGX-H800")


@settings(max_examples=80, deadline=None)
@given(n=st.integers(1, 10**6), watts=st.floats(1, 3000), host=st.floats(0, 3000), pue=st.floats(1, 3),
       seconds=st.floats(1, 5 * 365 * DAY), price=st.floats(0, 1), carbon=st.floats(0, 2))
def test_power_chain_round_trips_at_any_scale(n, watts, host, pue, seconds, price, carbon):
    fac = _fast(lambda: power.facility_power(n, watts, host, pue))
    assert power.accelerators_supported(fac, watts, host, pue) == pytest.approx(n)   # the inverse, exactly
    led = _fast(lambda: power.run_ledger(n, watts, seconds, host, pue, price, carbon))
    parts = led.accelerator_energy + led.host_energy + led.overhead_energy
    assert parts == pytest.approx(led.energy) and led.energy == pytest.approx(power.run_energy(n, watts, seconds, host,
                                                                                                 pue))
    for v in (led.dollars, led.kg_co2, led.household_years):
        assert v >= 0 and math.isfinite(v)
    assert power.electricity_cost(led.energy, price) == pytest.approx(led.dollars)
    assert power.emissions(led.energy, carbon) == pytest.approx(led.kg_co2)
    assert power.household_years(led.energy) == pytest.approx(led.household_years)


@settings(max_examples=60, deadline=None)
@given(system=st.floats(100, 1e5), k=st.integers(1, 72), gpu=st.floats(1, 2000))
def test_host_share_from_a_rating_is_never_negative(system, k, gpu):
    if system >= k * gpu:
        assert power.host_share_from_system(system, k, gpu) >= 0
    else:
        with pytest.raises(ValueError):
            power.host_share_from_system(system, k, gpu)


@settings(max_examples=40, deadline=None)
@given(acc=st.sampled_from(["A100", "H100", "H200", "MI300X"]), mfu=st.floats(0.01, 1), pue=st.floats(1, 3),
       host=st.floats(0, 2000))
def test_realised_efficiency_never_beats_the_datasheet(acc, mfu, pue, host):
    r = _fast(lambda: power.realised_efficiency(acc, mfu, pue, host))
    assert 0 < r <= power.peak_efficiency(acc) * (1 + 1e-12)


# --- water, swings, measured draw (issue 19) -------------------------------------------------------------------------

def test_water_use_published_wue():
    """Microsoft's fleet WUE fell from 0.49 to 0.30 L/kWh (2021 → FY2023): the same IT energy uses 39 % less water."""
    e = 1e6 * kWh
    a = power.water_use(e, power.fact("wue_microsoft_2021"))
    b = power.water_use(e, power.fact("wue_microsoft_fy2023"))
    assert a == pytest.approx(490_000) and 1 - b / a == pytest.approx(0.39, abs=0.005)


def test_power_swing_llama3_scale_is_tens_of_megawatts():
    """Llama 3 reports swings 'on the order of tens of megawatts' (Dubey et al. 2024 §3.3.4): 24,576 H100s
    (Meta's cluster) dropping to 100–200 W each swing 12–15 MW of GPU power alone."""
    assert 12e6 < power.power_swing(24_576, "H100", 200) < power.power_swing(24_576, "H100", 100) < 15e6


def test_measured_fraction_latif():
    """Latif et al. 2025: 8.4 kW measured against 10.2 kW rated, '18 % lower'."""
    f = power.measured_power_fraction(power.fact("dgx_h100_measured_max_power"), power.fact("dgx_h100_max_power"))
    assert 1 - f == pytest.approx(0.18, abs=0.005)


@given(n=st.integers(1, 10**6), idle=st.floats(0, 700))
@settings(max_examples=40)
def test_swing_bounds(n, idle):
    s = power.power_swing(n, 700, idle)
    assert 0 <= s <= power.it_power(n, 700) + 1e-6


@pytest.mark.parametrize("call", [lambda: power.water_use(-1, 0.3), lambda: power.power_swing(8, 700, 800),
                                  lambda: power.measured_power_fraction(0, 10), lambda: power.water_use(1, float("inf"))])
def test_new_power_bad_input(call):
    with pytest.raises(ValueError):
        call()
