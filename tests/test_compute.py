"""Training compute pinned to the seeds (recomputed) and to the papers they cite."""
import math

import pytest
from hypothesis import given, settings, strategies as st

from chipchain import models, compute, hardware
from chipchain.units import DAY, YEAR


def test_6nd_seed_figures():
    assert compute.training_flops(175e9, 2e12) == pytest.approx(2.1e24)       # seed 000 walkthrough
    assert compute.training_flops(7e9, 2e12) == pytest.approx(8.4e22)         # Llama-2-7B on 2T tokens
    # seed 004 multiplies by 2e13 for "2 trillion": 8.4e23 is ten times too large
    assert compute.training_flops(7e9, 2e13) == pytest.approx(8.4e23)


def test_gpt3_compute_matches_brown_table_d1():
    # Brown et al. 2020, Table D.1: GPT-3 175B, 300B tokens, 3.14e23 FLOPs
    assert compute.training_flops(174.6e9, 300e9) == pytest.approx(3.14e23, rel=0.01)


def test_seed004_rtx3090_years_and_cards():
    flops = compute.training_flops(7e9, 2e13)     # the seed's (wrong) 8.4e23
    years = flops / 35.6e12 / YEAR
    assert years == pytest.approx(748, abs=1)      # seed: "about 749 years"
    assert compute.gpus_needed(flops, 35.6e12, 0.4, 30 * DAY) == pytest.approx(22755, abs=5)   # seed: 22,773
    assert compute.gpus_needed(flops / 10, 35.6e12, 0.4, 30 * DAY) == pytest.approx(2276, abs=1)  # with 2e12 tokens


def test_running_example_times():
    c = compute.training_flops(175e9, 2e12)
    assert compute.training_time(c, 1024, 3e14, 0.5) / DAY == pytest.approx(158.2, abs=0.1)   # seed: ~158 days
    assert compute.training_time(c, 1024, 3e14, 0.3) / DAY == pytest.approx(263.7, abs=0.1)   # seed: ~264 days


def test_megatron_equations():
    # Narayanan et al. 2021, Eq. 4 example: 175B, 300B tokens, 1024 A100 at 140 TFLOP/s -> ~34 days
    assert compute.megatron_training_time(300e9, 175e9, 1024, 140e12) / DAY == pytest.approx(33.9, abs=0.1)
    # Eq. 3 with recomputation is 4/3 of the no-recompute count
    with_rc = compute.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200)
    without = compute.megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200, recompute=False)
    assert with_rc / without == pytest.approx(4 / 3)
    # per token, Eq. 3 approaches 8 * params (6 + 2 recompute) when s << 6h
    per_token = with_rc / (1536 * 2048)
    assert per_token / models.params_from_shape(96, 12288, 0) == pytest.approx(8, rel=0.06)


def test_llama3_mfu_table4():
    # Dubey et al. 2024, Table 4: 430 / 400 / 380 TFLOP/s per GPU -> 43 % / 41 % / 38 % of 989 TFLOP/s
    peak = hardware.get("H100").peak_flops("bf16")
    assert [round(compute.mfu(x, peak), 2) for x in (430e12, 400e12, 380e12)] == [0.43, 0.40, 0.38]


def test_seed002_gpu_hours_and_deepseek_cost():
    c = compute.training_flops(70e9, 10e12)
    assert c == pytest.approx(4.2e24)
    assert compute.gpu_hours(c, 989.4e12, 0.4) == pytest.approx(2.95e6, rel=0.005)
    assert compute.gpu_hours(c, 989.4e12, 1.0) == pytest.approx(1.18e6, rel=0.005)
    assert compute.cost(2.788e6, 2.0) == pytest.approx(5.576e6)


@given(st.integers(1, 100_000), st.integers(1, 100_000))
def test_more_gpus_never_slower(n1, n2):
    lo, hi = sorted((n1, n2))
    assert compute.training_time(1e24, hi, 1e15, 0.4) <= compute.training_time(1e24, lo, 1e15, 0.4)


@given(st.floats(0.01, 1.0), st.floats(0.01, 1.0))
def test_higher_mfu_never_slower(m1, m2):
    lo, hi = sorted((m1, m2))
    assert compute.training_time(1e24, 1024, 3e14, hi) <= compute.training_time(1e24, 1024, 3e14, lo)


@pytest.mark.parametrize("kwargs,arg", [
    (dict(params=-1, tokens=1e12), "params"), (dict(params=1e9, tokens=math.nan), "tokens"),
    (dict(params=1e9, tokens=math.inf), "tokens"), (dict(params="7B", tokens=1e12), "params"),
])
def test_training_flops_bad_input(kwargs, arg):
    with pytest.raises(ValueError, match=arg):
        compute.training_flops(**kwargs)


@pytest.mark.parametrize("kwargs,arg", [
    (dict(n_gpus=0), "n_gpus"), (dict(n_gpus=2.5), "n_gpus"), (dict(n_gpus=True), "n_gpus"),
    (dict(mfu=0), "mfu"), (dict(mfu=50), "mfu"), (dict(peak_flops=-1), "peak_flops"),
])
def test_training_time_bad_input(kwargs, arg):
    base = dict(flops=1e24, n_gpus=8, peak_flops=1e15, mfu=0.4)
    base.update(kwargs)
    with pytest.raises(ValueError, match=arg):
        compute.training_time(**base)


def test_mfu_cannot_exceed_peak():
    with pytest.raises(ValueError, match="cannot exceed"):
        compute.mfu(2e15, 1e15)


def test_6nd_llama3_405b_published_budget():
    # Dubey et al. 2024 (Llama 3), §1: 405B parameters pre-trained on 15.6T tokens "using 3.8 × 10^25 FLOPs"
    assert compute.training_flops(405e9, 15.6e12) == pytest.approx(3.8e25, rel=0.01)


def test_megatron_eq4_trillion_parameter_example():
    # Narayanan et al. 2021, §5.1 after Eq. 4: a 1T-parameter model on 450B tokens with 3,072 A100 at 163 TFLOP/s
    # each trains in about 84 days
    assert compute.megatron_training_time(450e9, 1e12, 3072, 163e12) / DAY == pytest.approx(84, rel=0.02)


# --- properties (hypothesis): up to 10⁶ GPUs and multi-year runs, each call under a second ----------------------

SECOND = settings(deadline=1000, max_examples=80)


@SECOND
@given(st.floats(1e6, 1e15), st.floats(1e6, 1e16), st.integers(1, 10**6), st.floats(1e12, 1e16),
       st.floats(0.01, 1.0))
def test_time_gpu_hours_and_gpus_needed_describe_one_run(params, tokens, n, peak, mfu):
    """One run seen three ways: n GPUs for T seconds is n·T/3600 GPU-hours (independent of n), and finishing in T
    needs n GPUs. Holds from one GPU to a million and from seconds to centuries."""
    c = compute.training_flops(params, tokens)
    t = compute.training_time(c, n, peak, mfu)
    assert math.isfinite(t) and t > 0
    assert compute.gpu_hours(c, peak, mfu) == pytest.approx(n * t / 3600, rel=1e-9)
    assert compute.gpus_needed(c, peak, mfu, t) == pytest.approx(n, rel=1e-9)
    assert compute.cost(compute.gpu_hours(c, peak, mfu), 2.0) == pytest.approx(2.0 * n * t / 3600, rel=1e-9)


@SECOND
@given(st.integers(1, 4096), st.integers(1, 2**17), st.integers(1, 256), st.integers(64, 2**16),
       st.integers(1, 2**18))
def test_megatron_recomputation_adds_one_forward_pass(batch, seq, layers, hidden, vocab):
    """Narayanan et al. 2021, Eq. 3: full recomputation repeats the forward pass, so it costs 96/72 = 4/3 of the
    plain iteration; the plain iteration is at least 6ND for the 12·l·h² transformer-block parameters."""
    with_r = compute.megatron_flops_per_iteration(batch, seq, layers, hidden, vocab, recompute=True)
    without = compute.megatron_flops_per_iteration(batch, seq, layers, hidden, vocab, recompute=False)
    assert with_r == pytest.approx(without * 4 / 3, rel=1e-12)
    assert without >= compute.training_flops(12 * layers * hidden**2, batch * seq) * (1 - 1e-12)


@SECOND
@given(st.floats(1e9, 1e16), st.floats(1e6, 1e15), st.integers(1, 10**6), st.floats(1e12, 1e16))
def test_megatron_eq4_is_6nd_plus_the_recomputed_forward(tokens, params, n, achieved):
    """Eq. 4's 8·T·P/(n·X) is 6ND plus a third for recomputation, run at X per GPU."""
    t = compute.megatron_training_time(tokens, params, n, achieved)
    assert t == pytest.approx(compute.training_time(compute.training_flops(params, tokens) * 8 / 6, n, achieved, 1.0),
                              rel=1e-12)


@SECOND
@given(st.floats(0, 1e16), st.floats(1e9, 1e16))
def test_mfu_is_a_fraction_or_an_error(achieved, peak):
    if achieved > peak:
        with pytest.raises(ValueError, match="cannot exceed"):
            compute.mfu(achieved, peak)
    else:
        assert 0 <= compute.mfu(achieved, peak) <= 1


# --- one home for GPU-hours ↔ wall clock and for implied MFU -------------------------------------------------

def test_gpu_hours_and_wall_clock_deepseek_v3():
    # DeepSeek-AI 2024, Sec. 1: 180 K H800 GPU-hours per trillion tokens is 3.7 days on 2,048 GPUs
    assert round(compute.seconds_from_gpu_hours(180e3, 2048) / 86400, 1) == 3.7      # the report prints 3.7
    assert compute.gpu_hours_from_seconds(3.662 * 86400, 2048) == pytest.approx(180e3, rel=1e-3)


@settings(max_examples=200, deadline=None)
@given(st.floats(0, 1e12), st.integers(1, 1_000_000))
def test_gpu_hours_round_trip(hours, n):
    # H → T → H is the identity (two roundings, so a few ulps)
    back = compute.gpu_hours_from_seconds(compute.seconds_from_gpu_hours(hours, n), n)
    assert back == pytest.approx(hours, rel=1e-12, abs=1e-300)


def test_implied_mfu_refuses_one_gpu_hour_for_a_15t_token_run():
    # issue 27: Llama 3 70B's 15 T tokens in "1 GPU-hour" on H100 would be a utilisation of 1.77 million
    flops = compute.training_flops(70e9, 15e12)
    with pytest.raises(ValueError, match=r"gpu_hours \(1\) imply a utilisation of 1\.77e\+06 .*unit slip"):
        compute.implied_mfu(flops, 1.0, 989.4e12)


@settings(max_examples=300, deadline=None)
@given(st.floats(1e15, 1e27), st.floats(1e-3, 1e10), st.floats(1e12, 1e16))
def test_implied_mfu_is_a_fraction_or_refused(flops, hours, peak):
    # a utilisation is in (0, 1]; anything above is refused by name, never returned
    try:
        u = compute.implied_mfu(flops, hours, peak)
    except ValueError as err:
        assert "gpu_hours" in str(err) and flops / (hours * 3600 * peak) > 1 - 1e-12
    else:
        assert 0 < u <= 1


def test_implied_mfu_element_wise():
    import numpy as np
    u = compute.implied_mfu(compute.training_flops(np.array([68.98e9, 68.98e9]), 2e12), np.array([1720320, 2 * 1720320]), 312e12)
    assert u[0] == pytest.approx(0.428, rel=1e-3) and u[1] == pytest.approx(u[0] / 2, rel=1e-12)   # Llama 2 Table 2
