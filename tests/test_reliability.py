"""Tests for chipchain.reliability: failure arithmetic, Llama 3's snapshot, Young/Daly, goodput, Monte Carlo,
checkpoint bandwidth and exact resume."""
import csv
import math
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import reliability as r
from chipchain.units import DAY, HOUR, YEAR


# --- data files ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["llama3_interruptions.csv", "failure_logs.csv"])
def test_every_row_has_source_and_check_level(name):
    text = resources.files("chipchain").joinpath("data", name).read_text(encoding="utf-8")
    rows = list(csv.DictReader(text.splitlines()))
    assert rows
    for row in rows:
        assert row["source"].strip(), row
        assert row["checked"] in ("V", "V2", "U"), row
        if "percent_checked" in row:
            assert row["percent_source"].strip() and row["percent_checked"] in ("V", "V2", "U"), row


def test_llama3_table5_counts_sum_to_419():
    df = r.llama3_interruptions()
    assert int(df["count"].sum()) == 419                                   # Dubey et al. 2024, §3.3.4
    assert len(df) == 18
    assert df["count"].iloc[0] == 148 and df["component"].iloc[0] == "Faulty GPU"   # Table 5


def test_printed_percentages_match_counts_except_faulty_gpu():
    df = r.llama3_interruptions()
    assert df["recomputed_percent"].iloc[0] == pytest.approx(35.32, abs=0.01)   # 148/419
    bad = r.root_cause_check()
    assert list(bad["component"]) == ["Faulty GPU"]
    assert float(df["printed_percent"].sum()) == pytest.approx(94.9, abs=1e-9)  # printed column does not add to 100
    ok = df[df["component"] != "Faulty GPU"]
    assert (ok["difference_pp"].abs() <= 0.05 + 1e-9).all()


def test_llama3_snapshot_rates():
    assert r.llama3_hours_between() == pytest.approx(54 * 24 / 419)              # ≈ 3.09 h, "every ~3 hours"
    assert r.llama3_hours_between("all") == pytest.approx(54 * 24 / 466)
    lam = r.llama3_per_gpu_rate()
    assert lam == pytest.approx(419 / (54 * DAY * 16384))
    assert 1 / lam / HOUR == pytest.approx(16384 * 54 * 24 / 419)               # ≈ 50,700 GPU-hours
    # scaling back to the snapshot's own cluster reproduces the snapshot
    assert r.cluster_mtbf(lam, 16384) / HOUR == pytest.approx(r.llama3_hours_between())
    assert r.cluster_mtbf(lam, 1024) / HOUR == pytest.approx(16 * 54 * 24 / 419)


def test_log_value_unknown_name_lists_nearest():
    with pytest.raises(KeyError, match="nearest"):
        r.log_value("Llama 3 405B", "interuptions")


# --- failure arithmetic --------------------------------------------------------------------------------------------

def test_seed_back_of_envelope_several_a_day():
    res = r.seed_back_of_envelope()                     # seed 000 §8: 10k cards, 10k cables, tens of thousands fans
    assert res["per_day"] == pytest.approx(4.0)
    assert r.seed_back_of_envelope(fans=50_000)["per_day"] == pytest.approx(7.0)
    assert res["p_at_least_one"] == pytest.approx(1 - (1 - 1e-4) ** 40_000)


def test_rates_add_and_poisson_identities():
    lam = r.cluster_failure_rate({"a": (10, 1e-6), "b": (5, 2e-6)})
    assert lam == pytest.approx(2e-5)
    assert r.mtbf(lam) == pytest.approx(5e4)
    assert r.expected_failures(lam, 1e5) == pytest.approx(2.0)
    assert r.prob_no_failure(lam, 1e5) == pytest.approx(math.exp(-2))
    assert r.rate_from_daily_probability(1e-4) * DAY == pytest.approx(1e-4, rel=1e-4)


@given(n1=st.integers(1, 10**5), n2=st.integers(1, 10**5), p=st.floats(1e-9, 1e-2))
def test_more_components_fail_more(n1, n2, p):
    lo, hi = sorted((n1, n2))
    assert r.daily_failures({"x": (lo, p)})[0] <= r.daily_failures({"x": (hi, p)})[0]
    assert r.cluster_mtbf(p, hi) <= r.cluster_mtbf(p, lo)


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "3", True])
def test_bad_input(bad):
    with pytest.raises(ValueError):
        r.young_interval(bad, 3600)
    with pytest.raises(ValueError):
        r.goodput(3600, 60, 600, bad)


def test_bad_structures():
    with pytest.raises(ValueError, match="components"):
        r.cluster_failure_rate({})
    with pytest.raises(ValueError, match="pair"):
        r.cluster_failure_rate({"gpu": 3})
    with pytest.raises(ValueError, match="p_per_day"):
        r.rate_from_daily_probability(1.0)
    with pytest.raises(ValueError, match="kind"):
        r.llama3_hours_between("planned")


# --- checkpoint interval and goodput ---------------------------------------------------------------------------

def test_young_and_daly():
    assert r.young_interval(60, 86400) == pytest.approx(math.sqrt(2 * 60 * 86400))       # Young 1974
    c, m = 60.0, 86400.0
    x = c / (2 * m)
    assert r.daly_interval(c, m) == pytest.approx(math.sqrt(2 * c * m) * (1 + math.sqrt(x) / 3 + x / 9) - c)
    assert r.daly_interval(10, 4) == 4                                                  # C ≥ 2M → τ = M


@given(c=st.floats(1, 600), m=st.floats(3600, 1e7), rr=st.floats(0, 3600))
@settings(max_examples=40)
def test_daly_is_near_the_numerical_optimum(c, m, rr):
    opt = r.optimal_interval(c, rr, m)
    g_opt = r.goodput(opt, c, rr, m)
    assert r.goodput(r.daly_interval(c, m), c, rr, m) >= g_opt - 1e-6
    if c / m <= 0.01:                                # Young is first order: close when C ≪ M
        assert r.goodput(r.young_interval(c, m), c, rr, m) >= g_opt - 1e-3
    assert r.goodput(opt * 2, c, rr, m) <= g_opt + 1e-12 and r.goodput(opt / 2, c, rr, m) <= g_opt + 1e-12


@given(c=st.floats(1, 600), m=st.floats(1e4, 1e7))
@settings(max_examples=40)
def test_goodput_falls_with_write_time_and_rises_with_mtbf(c, m):
    tau = r.daly_interval(c, m)
    assert r.goodput(tau, c * 2, 600, m) < r.goodput(tau, c, 600, m)
    assert r.goodput(tau, c, 600, m * 2) > r.goodput(tau, c, 600, m)
    assert 0 < r.goodput(tau, c, 600, m) < 1


def test_first_order_agrees_when_failures_are_rare():
    g = r.goodput(1800, 30, 300, 30 * DAY)
    # the neglected terms are second order: (C/τ)² dominates here
    assert r.goodput_first_order(1800, 30, 300, 30 * DAY) == pytest.approx(g, abs=1.1 * (30 / 1800) ** 2)
    assert r.goodput_first_order(1800, 30, 300, 30 * DAY) != pytest.approx(g, abs=1e-5)


def test_spare_nodes_poisson_quantile():
    assert r.spare_nodes(100, 0.0, 86400) == 0
    mean = 128 * 0.78 * 8 * r.llama3_per_gpu_rate() * 3 * DAY
    k = r.spare_nodes(128, 0.78 * 8 * r.llama3_per_gpu_rate(), 3 * DAY)
    cdf = lambda k: sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1))  # noqa: E731
    assert cdf(k) >= 0.99 > cdf(k - 1)
    assert r.spare_nodes(1280, 1e-6, DAY) >= r.spare_nodes(128, 1e-6, DAY)


def test_time_lost_and_hours_per_week():
    assert r.time_lost_per_failure(3600, 60, 600) == 2430
    assert r.hours_lost_per_week(0.9) == pytest.approx(16.8)


# --- Monte Carlo -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("tau,c,rs,m,seed", [(3600, 60, 600, 86400, 0), (1800, 120, 300, 6 * 3600, 1),
                                            (7200, 30, 0, 12 * 3600, 2)])
def test_monte_carlo_mean_agrees_with_model(tau, c, rs, m, seed):
    res = r.simulate_goodput(tau, c, rs, m, segments=200, runs=300, seed=seed)
    assert abs(res.z) < 4, res.z                      # within sampling error of the exact renewal model
    rel_se = res.stderr_wall / res.mean_wall
    assert res.goodput == pytest.approx(res.goodput_model, rel=4 * rel_se + 1e-12)


def test_monte_carlo_detects_a_wrong_model():
    """The comparison has power: a 2 % wrong goodput would sit many standard errors away."""
    res = r.simulate_goodput(3600, 60, 600, 86400, segments=200, runs=300, seed=0)
    wrong = res.work / (res.goodput_model * 0.98)
    assert abs(res.mean_wall - wrong) / res.stderr_wall > 4


def test_monte_carlo_is_seeded():
    a = r.simulate_goodput(3600, 60, 600, 86400, segments=20, runs=20, seed=5)
    b = r.simulate_goodput(3600, 60, 600, 86400, segments=20, runs=20, seed=5)
    assert a.wall_times == b.wall_times


def test_timeline_reaches_the_work_and_drops_at_failures():
    w, p, f = r.simulate_timeline(3600, 60, 600, 4 * 3600, 30 * 3600, seed=3)
    assert p[-1] == 30 * 3600 and np.all(np.diff(w) >= 0)
    assert len(f) > 0 and np.any(np.diff(p) < 0)


# --- checkpoint size and bandwidth ---------------------------------------------------------------------------------

def test_seed002_seventy_b_every_thirty_minutes():
    weights = r.checkpoint_bytes(70e9, 2)
    assert weights == 140e9                                                   # seed 002: 140 GB of BF16 weights
    assert r.required_write_bandwidth(weights, 1800, 1.0) == pytest.approx(77.8e6, rel=1e-3)
    full = r.checkpoint_bytes(70e9, 14)
    need = r.required_write_bandwidth(full, 1800, 0.01)
    assert 10e9 < need < 100e9                                                # "tens of GB/s" holds for the full state
    assert r.write_time(full, need) == pytest.approx(18.0)


# --- exact resume --------------------------------------------------------------------------------------------------

REF = r.train_with_restart(60)


@given(stop=st.integers(0, 60))
@settings(max_examples=25, deadline=None)
def test_full_checkpoint_resumes_bit_identically(stop):
    res = r.train_with_restart(60, stop_at=stop)
    assert np.array_equal(res.params, REF.params)
    assert res.losses == REF.losses


@pytest.mark.parametrize("missing", r.PARTS)
@given(stop=st.integers(1, 59))
@settings(max_examples=10, deadline=None)
def test_leaving_out_any_part_diverges(missing, stop):
    keep = tuple(p for p in r.PARTS if p != missing)
    res = r.train_with_restart(60, stop_at=stop, keep=keep)
    assert not np.array_equal(res.params, REF.params), missing


def test_checkpoint_roundtrip_is_bitwise():
    t = r.TinyTrainer(seed=3)
    for _ in range(7):
        t.step()
    u = r.load_checkpoint(r.TinyTrainer(seed=3), r.save_checkpoint(t))
    assert all(np.array_equal(t.params[k], u.params[k]) for k in t.params)
    assert (u.t, u.epoch, u.cursor) == (t.t, t.epoch, t.cursor)
    assert t.rng.bit_generator.state == u.rng.bit_generator.state
    assert t.step() == u.step()


def test_training_actually_learns():
    res = r.train_with_restart(400)
    assert np.mean(res.losses[-40:]) < 0.6 * np.mean(res.losses[:10])


def test_resume_bad_input():
    with pytest.raises(ValueError, match="keep"):
        r.train_with_restart(10, stop_at=5, keep=("weights",))
    with pytest.raises(ValueError, match="stop_at"):
        r.train_with_restart(10, stop_at=11)
    with pytest.raises(ValueError, match="trainer"):
        r.save_checkpoint(object())


# --- explorables -------------------------------------------------------------------------------------------------

def test_resume_explorer_verdicts():
    ex = r.resume_explorer()
    assert ex.n_views == 16
    assert "Bit-identical" in ex.render_at((1, 1, 1, 1))
    for i in range(4):
        idx = [1, 1, 1, 1]
        idx[i] = 0
        assert "Diverged" in ex.render_at(tuple(idx))


def test_goodput_explorer_impossible_combination_is_a_message():
    html = r.goodput_view(4096, 1.0, 600.0)
    assert "Daly" in html
    with pytest.raises(ValueError, match="longer than"):
        r.goodput_view(65536, 1.0, 600.0)          # M = 8 minutes < a 10-minute write
    assert "Not possible" in r.goodput_explorer().render_at((4, 0, 5))
