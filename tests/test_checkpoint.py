"""Tests for chipchain.checkpoint: Young/Daly intervals, goodput, checkpoint size and write bandwidth."""
import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import checkpoint as ck, reliability
from chipchain.units import DAY, HOUR


# --- Young (1974) and Daly (2006): identities and the published relation between them ------------------------------

@given(c=st.floats(1, 600), m=st.floats(3600, 1e7))
@settings(max_examples=40)
def test_young_maximises_the_first_order_goodput(c, m):
    """Young 1974: τ = √(2CM) is where d/dτ (1 − C/τ − τ/2M) = 0, so nearby intervals do no better."""
    t = ck.young_interval(c, m)
    g = ck.goodput_first_order(t, c, 0, m)
    assert g >= ck.goodput_first_order(t * 1.01, c, 0, m) and g >= ck.goodput_first_order(t / 1.01, c, 0, m)
    assert c / t == pytest.approx(t / (2 * m))           # at the optimum checkpoint overhead equals expected rework


@pytest.mark.parametrize("ratio", [1e-2, 1e-4, 1e-6, 1e-8])
def test_daly_tends_to_young_as_the_write_cost_vanishes(ratio):
    """Daly 2006: the higher-order estimate reduces to Young's as C/M → 0. Exactly, with x = C/2M,
    τ_Daly/τ_Young − 1 = −(2/3)·√x + x/9: the −C term outweighs the higher-order gain."""
    m = DAY
    c = ratio * m
    young, daly = ck.young_interval(c, m), ck.daly_interval(c, m)
    x = ratio / 2
    assert daly / young - 1 == pytest.approx(-2 / 3 * math.sqrt(x) + x / 9, rel=1e-6, abs=1e-12)
    assert daly < young


def test_daly_beyond_its_range_checkpoints_every_mtbf():
    """Daly 2006 eq. 37: for C ≥ 2M the optimum interval is M."""
    assert ck.daly_interval(10, 4) == 4
    assert ck.daly_interval(8, 4) == 4


@given(c=st.floats(1, 600), m=st.floats(3600, 1e7), rr=st.floats(0, 3600))
@settings(max_examples=40)
def test_daly_is_near_the_numerical_optimum(c, m, rr):
    opt = ck.optimal_interval(c, rr, m)
    g_opt = ck.goodput(opt, c, rr, m)
    assert ck.goodput(ck.daly_interval(c, m), c, rr, m) >= g_opt - 1e-6
    if c / m <= 0.01:                                # Young is first order: close when C ≪ M
        assert ck.goodput(ck.young_interval(c, m), c, rr, m) >= g_opt - 1e-3
    assert ck.goodput(opt * 2, c, rr, m) <= g_opt + 1e-12 and ck.goodput(opt / 2, c, rr, m) <= g_opt + 1e-12


def test_restart_cost_does_not_move_the_optimum():
    """R multiplies every segment's expected wall time by e^{R/M}, so the best τ is independent of R."""
    assert ck.optimal_interval(60, 0, DAY) == pytest.approx(ck.optimal_interval(60, 3600, DAY), rel=1e-6)


# --- goodput: properties and a published bound -------------------------------------------------------------------

@given(c=st.floats(1, 600), m=st.floats(1e4, 1e7))
@settings(max_examples=40)
def test_goodput_falls_with_failure_rate_and_write_time(c, m):
    tau = ck.daly_interval(c, m)
    assert ck.goodput(tau, c * 2, 600, m) < ck.goodput(tau, c, 600, m)
    assert ck.goodput(tau, c, 600, m * 2) > ck.goodput(tau, c, 600, m)       # rarer failures, more goodput
    assert 0 < ck.goodput(tau, c, 600, m) < 1


def test_first_order_agrees_when_failures_are_rare():
    g = ck.goodput(1800, 30, 300, 30 * DAY)
    # the neglected terms are second order: (C/τ)² dominates here
    assert ck.goodput_first_order(1800, 30, 300, 30 * DAY) == pytest.approx(g, abs=1.1 * (30 / 1800) ** 2)
    assert ck.goodput_first_order(1800, 30, 300, 30 * DAY) != pytest.approx(g, abs=1e-5)


def test_llama3_effective_training_time_above_90_percent_is_reachable():
    """Dubey et al. 2024 §3.3.4: effective training time > 90 % with an interruption every ~3 hours. At the
    snapshot's MTBF that is reachable only with fast recovery: a 30 s write and a 2-minute restart give > 90 %; a
    1-minute write and a 10-minute restart fall short; a 2-hour manual restart loses half the time."""
    m = reliability.llama3_mtbf()
    assert ck.goodput(ck.daly_interval(30, m), 30, 120, m) > 0.90
    assert ck.goodput(ck.daly_interval(60, m), 60, 600, m) < 0.90
    assert ck.goodput(ck.daly_interval(60, m), 60, 2 * HOUR, m) < 0.50


def test_goodput_over_arrays_matches_scalars_and_never_nan():
    taus = np.geomspace(60, 10 * DAY, 50)
    g = ck.goodput(taus, 60, 600, DAY)
    assert np.allclose(g, [ck.goodput(float(t), 60, 600, DAY) for t in taus])
    assert np.all(np.isfinite(g)) and g[-1] < 1e-3
    assert ck.goodput(1e9, 0, 0, 1.0) == 0.0                  # e^(10⁹) overflows: no goodput, no NaN
    assert np.allclose(ck.young_interval(np.array([60.0, 120.0]), DAY),
                       [ck.young_interval(60, DAY), ck.young_interval(120, DAY)])
    d = ck.daly_interval(np.array([10.0, 1e6]), 4 * HOUR)
    assert d[1] == 4 * HOUR and d[0] == pytest.approx(ck.daly_interval(10, 4 * HOUR))


@pytest.mark.parametrize("bad", [-1, float("nan"), float("inf"), "3", True, np.array([1.0, np.nan])])
def test_bad_input(bad):
    with pytest.raises(ValueError):
        ck.young_interval(bad, 3600)
    with pytest.raises(ValueError):
        ck.goodput(3600, 60, 600, bad)


def test_time_lost_and_per_week():
    assert ck.time_lost_per_failure(3600, 60, 600) == 2430                     # (τ + C)/2 + R
    assert ck.lost_seconds_per_week(0.9) == pytest.approx(16.8 * HOUR)
    assert ck.lost_seconds_per_week(1.0) == 0.0
    with pytest.raises(ValueError, match="goodput"):
        ck.lost_seconds_per_week(1.5)


# --- checkpoint size and bandwidth ---------------------------------------------------------------------------------

def test_seed002_seventy_b_every_thirty_minutes():
    weights = ck.checkpoint_bytes(70e9, 2)
    assert weights == 140e9                                                   # seed 002: 140 GB of BF16 weights
    assert ck.required_write_bandwidth(weights, 1800, 1.0) == pytest.approx(77.8e6, rel=1e-3)
    full = ck.checkpoint_bytes(70e9, 14)
    need = ck.required_write_bandwidth(full, 1800, 0.01)
    assert 10e9 < need < 100e9                                                # "tens of GB/s" holds for the full state
    assert ck.write_seconds(full, need) == pytest.approx(18.0)               # 1 % of 30 minutes


def test_size_bad_input():
    with pytest.raises(ValueError, match="params"):
        ck.checkpoint_bytes(0, 14)
    with pytest.raises(ValueError, match="bandwidth"):
        ck.write_seconds(1e9, 0)
    with pytest.raises(ValueError, match="overhead"):
        ck.required_write_bandwidth(1e9, 1800, 5)


# --- properties over the whole input range: MTBFs from a minute to five years, each call < 1 s, never NaN -----------

import time  # noqa: E402

from chipchain import memory  # noqa: E402

YEARS5 = 5 * 365 * DAY
MTBF = st.floats(60.0, YEARS5)
WRITE = st.floats(0.1, 4 * HOUR)
RESTART = st.floats(0.0, 2 * DAY)


def _timed(f, *args):
    t0 = time.process_time()
    out = f(*args)
    assert time.process_time() - t0 < 1.0, f"{f.__name__}{args} took more than a second"
    return out


@given(c=WRITE, r=RESTART, m=MTBF)
@settings(max_examples=60, deadline=None)
def test_property_optimal_interval_is_at_least_as_good_as_daly(c, r, m):
    tau = _timed(ck.optimal_interval, c, r, m)
    assert math.isfinite(tau) and tau > 0
    g_opt, g_daly = ck.goodput(tau, c, r, m), ck.goodput(ck.daly_interval(c, m), c, r, m)
    assert 0.0 <= g_daly <= g_opt * (1 + 1e-9) + 1e-300 and g_opt <= 1.0


@given(t=st.floats(1.0, 10 * YEARS5), c=st.floats(0.0, 4 * HOUR), r=RESTART, m=MTBF)
@settings(max_examples=100, deadline=None)
def test_property_goodput_is_a_fraction_never_nan(t, c, r, m):
    """A multi-year segment against a one-minute MTBF has goodput 0, not NaN or an overflow."""
    g = _timed(ck.goodput, t, c, r, m)
    assert 0.0 <= g < 1.0 and not math.isnan(g)
    assert ck.goodput_first_order(t, c, r, m) <= 1.0
    lost = ck.lost_seconds_per_week(g)
    assert 0.0 <= lost <= 7 * DAY
    assert ck.time_lost_per_failure(t, c, r) == pytest.approx((t + c) / 2 + r)


@given(params=st.floats(1e6, 1e13), bpp=st.floats(0.5, 20.0), interval=st.floats(60.0, YEARS5),
       stall=st.floats(1e-4, 1.0))
@settings(max_examples=100, deadline=None)
def test_property_write_bandwidth_meets_its_stall(params, bpp, interval, stall):
    """Writing S at B = S / (stall·τ) takes exactly stall·τ seconds."""
    s = _timed(ck.checkpoint_bytes, params, bpp)
    b = _timed(ck.required_write_bandwidth, s, interval, stall)
    assert _timed(ck.write_seconds, s, b) == pytest.approx(stall * interval)


@pytest.mark.parametrize("name", memory.recipe_names())
def test_restart_state_is_the_recipe_without_gradients(name):
    r = memory.recipe(name)
    assert ck.restart_bytes_per_param(name) == r.weights + r.master + r.moments
    assert ck.restart_bytes_per_param(name) == r.total - r.gradients < r.total


def test_restart_state_of_mixed_adam_is_14_bytes():
    # Rajbhandari et al. 2020 §3.1: 2 (fp16 weights) + 4 (fp32 master) + 4 + 4 (Adam m, v); the 2-byte gradients
    # are recomputed after a restart
    assert ck.restart_bytes_per_param() == ck.restart_bytes_per_param("bf16-mixed") == 14
    with pytest.raises(KeyError, match="mixed-adam"):
        ck.restart_bytes_per_param("mixd-adam")


# --- asynchronous checkpoints and resharding (issue 19) --------------------------------------------------------------

def test_async_interval_uses_the_blocking_cost():
    """Only the blocking copy enters Young's formula: a 0.1 s copy instead of a 49 s write shortens τ by √490."""
    m = 178_000.0
    assert ck.async_interval(0.1, 0.0, m) == pytest.approx(ck.young_interval(49, m) / math.sqrt(490))
    assert ck.async_interval(0.1, 1e4, m) == 1e4                      # the drain bounds it from below


@given(c=st.floats(0.01, 60), w=st.floats(0, 600), m=st.floats(3600, 1e7))
@settings(max_examples=40)
def test_async_beats_blocking_when_the_copy_is_shorter(c, w, m):
    """With the same interval, blocking for c < C and paying the drain on failures never loses to blocking for
    C = c + w as long as the drain is shorter than the write it replaces."""
    tau = ck.young_interval(c + w, m)
    assert ck.async_goodput(tau, c, w, 600, m) >= ck.goodput(tau, c + w, 600, m) - 1e-12


def test_blocking_copy_running_example():
    """2.45 TB over 1,024 GPUs at 25 GB/s per GPU: under 0.1 s, 500 times shorter than the 49 s write at 50 GB/s."""
    c = ck.blocking_copy_seconds(2.45e12, 1024, 25e9)
    assert c == pytest.approx(2.45e12 / 1024 / 25e9)
    assert ck.write_seconds(2.45e12, 50e9) / c == pytest.approx(512)


def test_sharded_load_bytes():
    """DP replicas read the same slice: the total read is DP times the checkpoint; ZeRO sharding divides it."""
    s = 2.45e12
    assert ck.load_bytes_per_rank(s, 128) * 1024 == pytest.approx(8 * s)
    assert ck.load_bytes_per_rank(s, 128, 8, 1.0) * 1024 == pytest.approx(s)


@given(m=st.integers(1, 4096), n=st.integers(1, 4096))
@settings(max_examples=80)
def test_reshard_sources_bounds(m, n):
    k = ck.reshard_sources(m, n)
    assert math.ceil(m / n) <= k <= math.ceil(m / n) + 1
    if m % n == 0:
        assert k == m // n
    if n % m == 0:
        assert k == 1


def test_reshard_sources_brute_force():
    """Against a direct interval-overlap count with exact fractions."""
    from fractions import Fraction as F
    for m in range(1, 13):
        for n in range(1, 13):
            best = max(sum(1 for k in range(m) if F(k, m) < F(j + 1, n) and F(j, n) < F(k + 1, m)) for j in range(n))
            assert ck.reshard_sources(m, n) == best


@pytest.mark.parametrize("call", [lambda: ck.blocking_copy_seconds(1e9, 0, 1e9),
                                  lambda: ck.async_interval(0, 1, 100), lambda: ck.load_bytes_per_rank(1e9, 8, 1, 1.5),
                                  lambda: ck.reshard_sources(0, 4), lambda: ck.reshard_sources(10**8, 1)])
def test_async_bad_input(call):
    with pytest.raises(ValueError):
        call()


def test_a_runs_failures_have_one_home_and_name_bad_input():
    """checkpoint.run_failures is chapter 7's model of a run (the capstone's step ⑥ reads it): more GPUs fail more
    often, so the goodput falls with the cluster's size; bad input is named."""
    small, large = ck.run_failures(175e9, 1024), ck.run_failures(175e9, 16384)
    assert large.mtbf == pytest.approx(small.mtbf / 16)
    assert large.goodput < small.goodput < 1
    assert small.checkpoint_bytes == 175e9 * 14
    for kw, name in ((dict(params=-1.0, n_gpus=8), "params"), (dict(params=1e9, n_gpus=0), "n_gpus"),
                     (dict(params=1e9, n_gpus=8, restart_seconds=-1), "restart_seconds"),
                     (dict(params=1e9, n_gpus=8, write_bandwidth=0), "bandwidth")):
        with pytest.raises(ValueError, match=name):
            ck.run_failures(**kw)
