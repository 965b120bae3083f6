"""Tests for chipchain.reliability: failure arithmetic, the published failure logs (Llama 3, OPT-175B), spares."""
import csv
import math
from importlib import resources

import numpy as np
import pytest
from hypothesis import given, strategies as st

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


# --- Llama 3 (Dubey et al. 2024, §3.3.4 and Table 5) ---------------------------------------------------------------

def test_llama3_snapshot_figures():
    # §3.3.4: "During a 54-day snapshot period of pre-training, we experienced a total of 466 job interruptions.
    # Of these, 47 were planned interruptions ... and 419 were unexpected interruptions"; up to 16K H100 GPUs.
    assert r.log_value("Llama 3 405B", "snapshot_days") == 54
    assert r.log_value("Llama 3 405B", "interruptions") == 466
    assert r.log_value("Llama 3 405B", "planned_interruptions") == 47
    assert r.log_value("Llama 3 405B", "unexpected_interruptions") == 419
    assert r.log_value("Llama 3 405B", "gpus") == 16384
    assert 466 - 47 == 419


# Table 5, in the paper's order (component, count)
TABLE5 = [("Faulty GPU", 148), ("GPU HBM3 Memory", 72), ("Software Bug", 54), ("Network Switch/Cable", 35),
          ("Host Maintenance", 32), ("GPU SRAM Memory", 19), ("GPU System Processor", 17), ("NIC", 7),
          ("NCCL Watchdog Timeouts", 7), ("Silent Data Corruption", 6), ("GPU Thermal Interface + Sensor", 6),
          ("SSD", 3), ("Power Supply", 3), ("Server Chassis", 2), ("IO Expansion Board", 2), ("Dependency", 2),
          ("CPU", 2), ("System Memory", 2)]


def test_llama3_table5_counts():
    rc = r.root_causes()
    assert [(x.component, x.count) for x in rc] == TABLE5                      # Dubey et al. 2024, Table 5
    assert sum(x.count for x in rc) == 419                                    # §3.3.4: 419 unexpected


def test_llama3_hardware_share_is_about_78_percent():
    # §3.3.4: "approximately 78% of the unexpected interruptions are attributed to confirmed hardware issues"
    assert r.root_cause_share(["GPU", "Host", "Network"]) == pytest.approx(0.78, abs=0.01)
    assert r.log_value("Llama 3 405B", "hardware_share_stated") == 0.78
    # GPU issues alone are the largest category: 58.7 % printed in §3.3.4 (counts give 64 %, see below)
    assert r.root_cause_share("GPU") > 0.5


def test_printed_percentages_match_counts_except_faulty_gpu():
    rc = r.root_causes()
    assert rc[0].recomputed_percent == pytest.approx(100 * 148 / 419)          # 35.3 %, printed 30.1 %
    assert [x.component for x in r.root_cause_check()] == ["Faulty GPU"]
    assert sum(x.printed_percent for x in rc) == pytest.approx(94.9, abs=1e-9)  # printed column does not add to 100
    assert all(abs(x.difference_pp) <= 0.05 + 1e-9 for x in rc[1:])


def test_llama3_one_interruption_about_every_three_hours():
    # widely reported reading of §3.3.4: "one failure every three hours" (54 days × 24 h / 419 = 3.09 h)
    assert r.llama3_mtbf() / HOUR == pytest.approx(3.0, rel=0.05)
    assert r.llama3_mtbf("all") / HOUR == pytest.approx(54 * 24 / 466)
    # scaling the per-GPU rate back to the snapshot's own cluster reproduces the snapshot (exact identity)
    lam = r.llama3_per_gpu_rate()
    assert r.cluster_mtbf(lam, 16384) == pytest.approx(r.llama3_mtbf())
    assert 1 / lam / YEAR == pytest.approx(5.79, abs=0.01)                      # per-GPU: one interruption in ~6 years


def test_opt175b_logbook_rate():
    # Zhang et al. 2022 §2.5: 992 A100s, "at least 35 manual restarts" and "70+ automatic restarts" in ~2 months
    n = r.log_value("OPT-175B", "manual_restarts") + r.log_value("OPT-175B", "automatic_restarts")
    assert n == 105
    rate = r.per_gpu_rate(n, r.log_value("OPT-175B", "training_days") * DAY, 992)
    assert r.cluster_mtbf(rate, 992) / HOUR == pytest.approx(60 * 24 / 105)      # ≈ 14 h between restarts
    assert rate > r.llama3_per_gpu_rate()                   # OPT's cluster restarted more often per GPU than Llama 3's


def test_log_value_unknown_name_lists_nearest():
    with pytest.raises(KeyError, match="nearest"):
        r.log_value("Llama 3 405B", "interuptions")


# --- failure arithmetic --------------------------------------------------------------------------------------------

def test_seed_back_of_envelope_several_a_day():
    res = r.seed_back_of_envelope()                     # seed 000 §8: 10k cards, 10k cables, tens of thousands fans
    assert res.per_day == pytest.approx(4.0) and res.components == 40_000
    assert res.seconds_between == pytest.approx(6 * HOUR)
    assert r.seed_back_of_envelope(fans=50_000).per_day == pytest.approx(7.0)
    assert res.p_at_least_one == pytest.approx(1 - (1 - 1e-4) ** 40_000)


def test_poisson_identities():
    lam = r.cluster_failure_rate({"a": (10, 1e-6), "b": (5, 2e-6)})           # rates add
    assert lam == pytest.approx(2e-5)
    assert r.mtbf(lam) * lam == pytest.approx(1.0)
    assert r.prob_no_failure(lam, 1e5) == pytest.approx(math.exp(-r.expected_failures(lam, 1e5)))
    assert r.rate_from_daily_probability(1e-4) * DAY == pytest.approx(1e-4, rel=1e-4)


def test_arrays_element_wise():
    sizes = np.array([1024, 4096, 16384])
    lam = r.llama3_per_gpu_rate()
    assert np.allclose(r.cluster_mtbf(lam, sizes), [r.cluster_mtbf(lam, int(n)) for n in sizes])
    assert np.allclose(r.mtbf(np.array([1.0, 2.0])), [1.0, 0.5])
    with pytest.raises(ValueError, match="n_gpus"):
        r.cluster_mtbf(lam, np.array([0, 8]))
    with pytest.raises(ValueError, match="rate"):
        r.mtbf(np.array([1.0, -1.0]))


@given(n1=st.integers(1, 10**5), n2=st.integers(1, 10**5), p=st.floats(1e-9, 1e-2))
def test_more_components_fail_more(n1, n2, p):
    lo, hi = sorted((n1, n2))
    assert r.daily_failures({"x": (lo, p)}).per_day <= r.daily_failures({"x": (hi, p)}).per_day
    assert r.cluster_mtbf(p, hi) <= r.cluster_mtbf(p, lo)


def test_bad_structures():
    with pytest.raises(ValueError, match="components"):
        r.cluster_failure_rate({})
    with pytest.raises(ValueError, match="pair"):
        r.cluster_failure_rate({"gpu": 3})
    with pytest.raises(ValueError, match="p_per_day"):
        r.rate_from_daily_probability(1.0)
    with pytest.raises(ValueError, match="kind"):
        r.llama3_mtbf("planned")
    with pytest.raises(ValueError, match="categories"):
        r.root_cause_share(["Cosmic rays"])
    for bad in (-1, float("nan"), float("inf"), "3", True):
        with pytest.raises(ValueError):
            r.cluster_mtbf(bad, 1024)


# --- spares --------------------------------------------------------------------------------------------------------

def test_spare_nodes_poisson_quantile():
    assert r.spare_nodes(100, 0.0, 86400) == 0
    lam = 0.78 * 8 * r.llama3_per_gpu_rate()
    mean = 128 * lam * 3 * DAY
    k = r.spare_nodes(128, lam, 3 * DAY)
    cdf = lambda k: sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1))  # noqa: E731
    assert cdf(k) >= 0.99 > cdf(k - 1)
    assert r.spare_nodes(1280, 1e-6, DAY) >= r.spare_nodes(128, 1e-6, DAY)


def test_spare_nodes_large_mean_does_not_underflow_or_hang():
    mean = 100_000 * 1e-5 * 10 * DAY                        # 864,000 nodes out on average: exp(−mean) underflows
    k = r.spare_nodes(100_000, 1e-5, 10 * DAY)
    assert mean + 2.2 * math.sqrt(mean) < k < mean + 2.5 * math.sqrt(mean)     # the 99 % quantile, z = 2.33
    with pytest.raises(ValueError, match="more than any cluster"):
        r.spare_nodes(10**6, 1.0, 1e6)


# --- properties over the whole input range: up to 10⁶ GPUs, multi-year runs, each call < 1 s, never NaN --------------

import time  # noqa: E402

from hypothesis import settings  # noqa: E402

GPUS = st.integers(1, 10**6)
RUN = st.floats(1.0, 5 * YEAR)                                  # one second to five years
PER_GPU = st.floats(1e-12, 1e-6)                                # per GPU-second: a failure per 30 000 years … 12 days
CONFIDENCE = st.one_of(st.floats(1e-9, 0.999999), st.sampled_from([0.5, 0.99, 1 - 1e-15, 0.9999999999999999]))


def _timed(f, *args, **kwargs):
    t0 = time.perf_counter()
    out = f(*args, **kwargs)
    assert time.perf_counter() - t0 < 1.0, f"{f.__name__}{args} took more than a second"
    return out


@settings(max_examples=150, deadline=None)
@given(n_nodes=GPUS, node_rate=st.one_of(st.just(0.0), st.floats(1e-12, 1e-4)),
       repair=st.floats(0.0, 5 * YEAR), q=CONFIDENCE)
def test_property_spare_nodes_always_answers(n_nodes, node_rate, repair, q):
    """Never hangs (the old loop summed the pmf until it reached q and, for q near 1, never did), never NaN: a
    Poisson quantile, inside mean ± 12σ + 60, or a ValueError naming the inputs when the mean is beyond any cluster."""
    mean = n_nodes * node_rate * repair
    if mean > 1e7:
        with pytest.raises(ValueError, match="node_rate"):
            _timed(r.spare_nodes, n_nodes, node_rate, repair, q)
        return
    k = _timed(r.spare_nodes, n_nodes, node_rate, repair, q)
    assert isinstance(k, int) and k >= 0
    assert k <= mean + 12 * math.sqrt(mean) + 61
    if q >= 0.5:
        assert k >= math.floor(mean) - 1                            # the median of a Poisson is ≥ ⌊mean⌋ − 1
    q2 = q + (1 - q) / 2 if q + (1 - q) / 2 < 1 else q
    assert _timed(r.spare_nodes, n_nodes, node_rate, repair, q2) >= k                  # monotone in q


@settings(max_examples=40, deadline=None)
@given(mean=st.floats(0.01, 60.0), q=st.floats(0.01, 0.999))
def test_property_spare_nodes_is_the_exact_poisson_quantile(mean, q):
    cdf = lambda k: sum(math.exp(-mean) * mean**i / math.factorial(i) for i in range(k + 1))  # noqa: E731
    k = r.spare_nodes(1, mean, 1.0, q)
    assert cdf(k) >= q * (1 - 1e-12) and (k == 0 or cdf(k - 1) < q * (1 + 1e-12))


@settings(max_examples=100, deadline=None)
@given(n=GPUS, lam=PER_GPU, seconds=RUN)
def test_property_cluster_rates_scale_with_size(n, lam, seconds):
    m = _timed(r.cluster_mtbf, lam, n)
    assert math.isfinite(m) and m > 0 and m * n * lam == pytest.approx(1.0)
    e = _timed(r.expected_failures, lam * n, seconds)
    p = _timed(r.prob_no_failure, lam * n, seconds)
    assert e == pytest.approx(seconds / m) and 0.0 <= p <= 1.0 and not math.isnan(p)
    assert p == pytest.approx(math.exp(-e), rel=1e-12, abs=1e-300)    # np.exp vs math.exp: a few ulps
    assert r.mtbf(lam * n) == pytest.approx(m)
    assert r.cluster_failure_rate({"gpu": (n, lam)}) == pytest.approx(lam * n)


@settings(max_examples=100, deadline=None)
@given(interruptions=st.integers(0, 10**6), seconds=RUN, n=GPUS)
def test_property_per_gpu_rate_round_trips(interruptions, seconds, n):
    lam = _timed(r.per_gpu_rate, interruptions, seconds, n)
    assert math.isfinite(lam) and lam >= 0
    if interruptions:                                               # the cluster saw one every T/N seconds
        assert r.cluster_mtbf(lam, n) == pytest.approx(seconds / interruptions)


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 10**6), p=st.floats(0.0, 1.0))
def test_property_daily_failures_bounded(n, p):
    d = _timed(r.daily_failures, {"x": (n, p)})
    assert d.per_day == pytest.approx(n * p) and 0.0 <= d.p_at_least_one <= 1.0
    assert not math.isnan(d.p_at_least_one) and d.seconds_between > 0
    if 1e-300 < p < 1:                                             # (subnormal p loses digits in λ·day)
        assert r.rate_from_daily_probability(p) * DAY >= p * (1 - 1e-12)      # −ln(1 − p) ≥ p


@settings(max_examples=60, deadline=None)
@given(cats=st.sets(st.sampled_from(["GPU", "Host", "Network", "Dependency", "Unplanned Maintenance", "Unknown"]),
                    min_size=1))
def test_property_root_cause_shares_are_fractions(cats):
    for printed in (False, True):
        s = r.root_cause_share(sorted(cats), printed=printed)
        assert 0.0 < s <= 1.0
    assert r.root_cause_share(sorted(cats)) + r.root_cause_share(
        sorted({"GPU", "Host", "Network", "Dependency", "Unplanned Maintenance", "Unknown"} - cats) or ["GPU"]) \
        >= 1.0 - 1e-12


def test_gpu_share_stated_in_the_text_is_the_printed_column():
    # Dubey et al. 2024 §3.3.4: "GPU issues ... accounting for 58.7% of all unexpected issues". Table 5's GPU rows
    # print 30.1 + 17.2 + 4.5 + 4.1 + 1.4 + 1.4 = 58.7 %; their counts are 268 of 419 = 64.0 %.
    assert r.log_value("Llama 3 405B", "gpu_issue_share_stated") == 0.587
    assert r.root_cause_share("GPU", printed=True) == pytest.approx(0.587, abs=1e-9)
    assert r.root_cause_share("GPU") == pytest.approx(268 / 419)


def test_llama3_rate_counts_only_unexpected_interruptions():
    # 419 unexpected of 466 (47 planned) in 54 days on 16,384 GPUs (Dubey et al. 2024, §3.3.4)
    assert r.llama3_per_gpu_rate() * 54 * DAY * 16384 == pytest.approx(419)
    assert r.llama3_per_gpu_rate("all") * 54 * DAY * 16384 == pytest.approx(466)
