"""Tests for chipchain.faults: stragglers (max of exponentials), hangs, silent data corruption and screening."""
import math
import time

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from chipchain import checkpoint as ck, faults, reliability


# --- harmonic numbers and the expected maximum ----------------------------------------------------------------------

def test_harmonic_numbers_exact_values():
    """H_1 = 1, H_2 = 3/2, H_10 = 7381/2520 (exact rational)."""
    assert faults.harmonic_number(1) == 1.0
    assert faults.harmonic_number(2) == 1.5
    assert faults.harmonic_number(10) == pytest.approx(7381 / 2520, rel=1e-15)


def test_harmonic_series_joins_the_exact_sum():
    """The asymptotic series beyond 10⁶ continues the exact sum: H_{n+1} − H_n = 1/(n+1) across the seam."""
    a, b = faults.harmonic_number(10**6), faults.harmonic_number(10**6 + 1)
    assert b - a == pytest.approx(1 / (10**6 + 1), rel=1e-6)
    assert a == pytest.approx(math.log(10**6) + 0.5772156649, abs=1e-6)


@pytest.mark.parametrize("n", [1, 10, 1000, 10_000])
def test_expected_max_matches_monte_carlo(n):
    """E[max of n i.i.d. Exp(mean s)] = s·H_n (Rényi): a simulation that draws every rank agrees within 4 SE."""
    t = faults.simulate_step_seconds(1.0, 0.05, n, steps=1000 if n < 10_000 else 400, seed=3)
    se = t.std(ddof=1) / math.sqrt(len(t))
    assert abs(t.mean() - faults.straggler_step_seconds(1.0, 0.05, n)) < 4 * se


def test_simulation_would_catch_a_wrong_formula():
    """The same simulation rejects a model that is off by 2 % of the jitter term's growth (s·ln n instead of s·H_n)."""
    n = 1000
    t = faults.simulate_step_seconds(1.0, 0.05, n, steps=2000, seed=4)
    se = t.std(ddof=1) / math.sqrt(len(t))
    wrong = 1.0 + 0.05 * math.log(n)                    # drops Euler's γ: 0.029 s too low
    assert abs(t.mean() - wrong) > 4 * se


@given(n=st.integers(1, 10**6), s=st.floats(0.001, 10))
@settings(max_examples=40, deadline=None)
def test_step_time_grows_with_ranks_and_stays_fast(n, s):
    start = time.process_time()
    t1, t2 = faults.straggler_step_seconds(1.0, s, n), faults.straggler_step_seconds(1.0, s, n + 1)
    assert t2 > t1 >= 1.0 + s * 0.999
    assert 0 <= faults.straggler_overhead(1.0, s, n) < 1
    assert time.process_time() - start < 1.0


def test_tail_cost_at_scale():
    """At 1k, 10k, 100k ranks the expected wait grows by s·ln 10 per decade."""
    t = [faults.straggler_step_seconds(1.0, 0.05, n) for n in (1_000, 10_000, 100_000)]
    assert t[1] - t[0] == pytest.approx(0.05 * math.log(10), rel=1e-3)
    assert t[2] - t[1] == pytest.approx(0.05 * math.log(10), rel=1e-4)


# --- hangs, SDC, screening -------------------------------------------------------------------------------------------

def test_hang_costs_a_crash_plus_the_timeout():
    lost = faults.hang_seconds_lost(600, 3600, 60, 600)
    assert lost == pytest.approx(600 + ck.time_lost_per_failure(3600, 60, 600))


def test_meta_sdc_rate_in_a_16k_job():
    """About one faulty device in a thousand (Dixit 2025): a Llama-3-size job of 16,384 GPUs expects about 16."""
    p = reliability.log_value("Meta fleet", "sdc_rate_per_device")
    assert faults.expected_faulty(16_384, p) == pytest.approx(16.384)
    assert faults.clean_start_probability(16_384, p) < 1e-7


@given(n=st.integers(1, 10**6), p=st.floats(0, 1), c=st.floats(0, 1))
@settings(max_examples=60)
def test_clean_start_is_a_probability_and_screening_helps(n, p, c):
    q = faults.clean_start_probability(n, p, c)
    assert 0.0 <= q <= 1.0
    assert faults.clean_start_probability(n, p, min(1.0, c + 0.1)) >= q
    assert faults.clean_start_probability(n, p, 1.0) == 1.0


def test_clean_start_matches_binomial():
    """(1 − q)ⁿ equals the binomial probability of zero faults."""
    assert faults.clean_start_probability(1024, 1e-3) == pytest.approx((1 - 1e-3) ** 1024, rel=1e-12)


@pytest.mark.parametrize("call", [
    lambda: faults.harmonic_number(0), lambda: faults.straggler_step_seconds(0, 0.1, 8),
    lambda: faults.straggler_step_seconds(1, -0.1, 8), lambda: faults.simulate_step_seconds(1, 0.1, 10**6, 100),
    lambda: faults.expected_faulty(8, 1.5), lambda: faults.clean_start_probability(8.5, 0.1),
    lambda: faults.hang_seconds_lost(float("nan"), 3600, 60, 600)])
def test_bad_input_is_refused(call):
    with pytest.raises(ValueError):
        call()
