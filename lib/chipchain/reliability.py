"""Failure arithmetic: rates that add, a cluster's mean time between interruptions, published failure logs, spares.

Components fail independently as Poisson processes; rates add. A cluster of ``n_i`` components with rate ``λ_i``
each is interrupted at ``λ = Σ n_i·λ_i`` and its mean time between interruptions is ``1/λ``. Llama 3's 54-day
snapshot (Dubey et al. 2024, §3.3.4, Table 5) gives a measured per-GPU rate, which scales to any cluster.

The checkpoint interval and goodput are in :mod:`chipchain.checkpoint`; the Monte Carlo run and the exact-resume
training loop in :mod:`chipchain.failsim`. Rates are per second, times in seconds.

>>> round(llama3_mtbf() / 3600, 2)          # hours between unexpected interruptions on 16,384 GPUs
3.09
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ._lazy import np

from . import _check, _data
from .units import DAY

__all__ = [
    "rate_from_daily_probability", "cluster_failure_rate", "mtbf", "expected_failures", "prob_no_failure",
    "daily_failures", "DailyFailures", "seed_back_of_envelope",
    "failure_logs", "log_value", "RootCause", "root_causes", "root_cause_share", "root_cause_check",
    "llama3_mtbf", "llama3_per_gpu_rate", "per_gpu_rate", "cluster_mtbf", "spare_nodes",
]


# --- failure arithmetic ------------------------------------------------------------------------------------------

def rate_from_daily_probability(p_per_day) -> float:
    """Poisson rate (per second) of a component that fails on a given day with probability ``p``:
    λ = −ln(1 − p) / day (≈ p / day for small p).

    >>> round(rate_from_daily_probability(1e-4) * 86400, 8)
    0.00010001
    """
    p = _check.probability("p_per_day", p_per_day)
    if p >= 1:
        raise ValueError(f"p_per_day must be below 1 (a component that always fails has no rate), got {p_per_day!r}")
    return -math.log1p(-p) / DAY


def cluster_failure_rate(components) -> float:
    """Interruption rate of a cluster whose components fail independently: λ = Σ nᵢ·λᵢ (per second).

    ``components``: mapping name → (count, rate per second per component). Independent Poisson processes add.

    >>> lam = cluster_failure_rate({"gpu": (1024, 1 / (5 * 365 * 86400))})
    >>> round(1 / lam / 3600, 1)     # hours between interruptions for 1,024 GPUs with a 5-year MTBF each
    42.8
    """
    if not hasattr(components, "items") or not components:
        raise ValueError(f"components must be a non-empty mapping name -> (count, rate), got {components!r}")
    total = 0.0
    for name, spec in components.items():
        try:
            count, rate = spec
        except (TypeError, ValueError):
            raise ValueError(f"components[{name!r}] must be a (count, rate) pair, got {spec!r}") from None
        total += _check.integer(f"count of {name}", count, minimum=0) * _check.nonnegative(f"rate of {name}", rate)
    return total


def mtbf(rate):
    """Mean time between failures of a Poisson process: M = 1/λ (seconds). Element-wise over arrays.

    >>> mtbf(1 / 3600)
    3600.0
    """
    return 1.0 / _check.values("rate", rate, _check.positive)


def expected_failures(rate, seconds):
    """Expected number of failures in a period: E[N] = λ·T. Element-wise over arrays.

    >>> expected_failures(1 / 3600, 86400)
    24.0
    """
    return _check.values("rate", rate, _check.nonnegative) * _check.values("seconds", seconds, _check.nonnegative)


def prob_no_failure(rate, seconds):
    """Probability of no failure in a period: P = exp(−λ·T). Element-wise over arrays.

    >>> round(prob_no_failure(1 / 3600, 3600), 4)
    0.3679
    """
    p = np.exp(-expected_failures(rate, seconds))
    return float(p) if np.ndim(p) == 0 else p


@dataclass(frozen=True)
class DailyFailures:
    """Failures per day of a set of components (:func:`daily_failures`, :func:`seed_back_of_envelope`)."""

    per_day: float              #: expected failures per day, E = Σ nᵢ·pᵢ
    p_at_least_one: float       #: probability of a day with at least one failure
    components: int             #: number of components counted

    @property
    def seconds_between(self) -> float:
        """Mean time between failures, seconds (infinite when nothing fails)."""
        return DAY / self.per_day if self.per_day else math.inf


def daily_failures(components) -> DailyFailures:
    """Expected failures per day and the probability of at least one, for components that each fail on a given day
    with probability ``p``: E = Σ nᵢ·pᵢ and P(≥1) = 1 − Π(1 − pᵢ)^nᵢ.

    ``components``: mapping name → (count, probability per day).

    >>> d = daily_failures({"cards": (10_000, 1e-4)})
    >>> d.per_day, round(d.p_at_least_one, 3)
    (1.0, 0.632)
    """
    if not hasattr(components, "items") or not components:
        raise ValueError(f"components must be a non-empty mapping name -> (count, probability), got {components!r}")
    expected, log_none, count = 0.0, 0.0, 0
    for name, spec in components.items():
        try:
            n, p = spec
        except (TypeError, ValueError):
            raise ValueError(f"components[{name!r}] must be a (count, probability) pair, got {spec!r}") from None
        n = _check.integer(f"count of {name}", n, minimum=0)
        p = _check.probability(f"probability of {name}", p)
        expected += n * p
        count += n
        log_none += n * math.log1p(-p) if p < 1 else (-math.inf if n else 0.0)
    return DailyFailures(expected, 1.0 - math.exp(log_none), count)


def seed_back_of_envelope(fans=20_000, cards=10_000, cables=10_000, p_per_day=1e-4) -> DailyFailures:
    """The source's back-of-envelope (seed 000 §8): 10,000 cards, 10,000 cables and "tens of thousands" of fans,
    each failing with probability 1e-4 per day: expected failures per day, the probability of a day with at least
    one, and the mean time between failures.

    ``fans`` reads "tens of thousands" as 20,000 by default (the smallest reading); the chapter varies it.

    >>> r = seed_back_of_envelope()
    >>> r.per_day, round(r.p_at_least_one, 3), r.seconds_between / 3600
    (4.0, 0.982, 6.0)
    """
    p = _check.probability("p_per_day", p_per_day)
    return daily_failures({"cards": (cards, p), "cables": (cables, p), "fans": (fans, p)})


# --- published failure logs ----------------------------------------------------------------------------------------

def failure_logs() -> tuple:
    """Every row of ``data/failure_logs.csv`` (run-level figures from published training logs: Llama 3 405B,
    OPT-175B) as a dict with ``run``, ``quantity``, ``value`` (a float), its source and check level, in file order.
    The one reader of that file (the table is :func:`chipchain.views.reliability.failure_logs`).

    >>> [r["value"] for r in failure_logs() if r["quantity"] == "unexpected_interruptions"][:1]
    [419.0]
    """
    return tuple({**r, "value": float(r["value"])} for r in _data.rows("failure_logs.csv"))


def log_value(run: str, quantity: str) -> float:
    """One figure from ``data/failure_logs.csv``; unknown names raise ``KeyError`` listing the nearest.

    >>> log_value("Llama 3 405B", "interruptions")
    466.0
    """
    rows = failure_logs()
    for r in rows:
        if r["run"].lower() == str(run).lower() and r["quantity"] == quantity:
            return r["value"]
    raise KeyError(_check.nearest_message(f"{run}/{quantity}", [f"{r['run']}/{r['quantity']}" for r in rows],
                                          "failure-log figure"))


@dataclass(frozen=True)
class RootCause:
    """One row of Llama 3's root-cause table (Dubey et al. 2024, Table 5)."""

    component: str
    category: str
    count: int                  #: unexpected interruptions in the 54-day snapshot
    printed_percent: float      #: the percentage the paper prints
    recomputed_percent: float   #: 100 × count / total (the counts sum to 419)

    @property
    def difference_pp(self) -> float:
        """Printed minus recomputed percentage, in percentage points."""
        return self.printed_percent - self.recomputed_percent


def root_causes() -> tuple[RootCause, ...]:
    """Llama 3's unexpected interruptions by root cause, in the paper's order (``data/llama3_interruptions.csv``).

    >>> rc = root_causes()
    >>> sum(r.count for r in rc), round(sum(r.printed_percent for r in rc), 1), rc[0].component
    (419, 94.9, 'Faulty GPU')
    """
    rows = _data.rows("llama3_interruptions.csv")
    total = sum(int(r["count"]) for r in rows)
    return tuple(RootCause(r["component"], r["category"], int(r["count"]), float(r["printed_percent"]),
                           100.0 * int(r["count"]) / total) for r in rows)


def root_cause_share(categories, printed=False) -> float:
    """Fraction of Llama 3's unexpected interruptions whose root cause falls in ``categories`` (Table 5's
    category column: "GPU", "Host", "Network", "Dependency", "Unplanned Maintenance", "Unknown"), from the counts,
    or with ``printed=True`` the sum of the percentages the table prints (divided by 100).

    The paper's text says GPU issues are 58.7 % of unexpected interruptions: the sum of the printed column, which
    carries the faulty-GPU row's 30.1 %; the counts give 268/419 = 64.0 %.

    >>> round(root_cause_share(["GPU", "Host", "Network"]), 3)     # the paper says "approximately 78%"
    0.773
    >>> round(root_cause_share("GPU"), 3), round(root_cause_share("GPU", printed=True), 3)
    (0.64, 0.587)
    """
    rc = root_causes()
    known = sorted({r.category for r in rc})
    if isinstance(categories, str):
        categories = [categories]
    chosen = {_check.choice("categories", c, known) for c in categories}
    if not chosen:
        raise ValueError("categories must name at least one category")
    if _check.flag("printed", printed):
        return sum(r.printed_percent for r in rc if r.category in chosen) / 100.0
    return sum(r.count for r in rc if r.category in chosen) / sum(r.count for r in rc)


def root_cause_check(tolerance_pp=0.05) -> tuple[RootCause, ...]:
    """Rows of Table 5 whose printed percentage differs from count/total by more than rounding allows
    (``tolerance_pp`` percentage points beyond the printed one-decimal rounding).

    >>> bad = root_cause_check()
    >>> [(r.component, r.count, r.printed_percent) for r in bad]
    [('Faulty GPU', 148, 30.1)]
    """
    tol = _check.nonnegative("tolerance_pp", tolerance_pp)
    return tuple(r for r in root_causes() if abs(r.difference_pp) > 0.05 + tol)


def per_gpu_rate(interruptions, seconds, n_gpus) -> float:
    """Per-GPU interruption rate implied by a log: λ_gpu = N / (T · n) (per GPU-second).

    Charging every interruption to the GPUs is a simplification: Llama 3's table includes switches, hosts and
    software. The rate then scales with the cluster as long as the cluster has the same mix of parts per GPU.

    >>> round(per_gpu_rate(419, 54 * 86400, 16384) * 86400, 6)   # per GPU-day
    0.000474
    """
    n_int = _check.nonnegative("interruptions", interruptions)
    return n_int / (_check.positive("seconds", seconds) * _check.integer("n_gpus", n_gpus))


def cluster_mtbf(rate, n_gpus):
    """Mean time between interruptions of a cluster of ``n_gpus`` GPUs that each fail at ``rate`` (per
    GPU-second): M = 1 / (n · λ_gpu), seconds. Element-wise over an array of cluster sizes.

    Llama 3's rate on the running example's 1,024 GPUs:

    >>> round(cluster_mtbf(llama3_per_gpu_rate(), 1024) / 3600, 1)
    49.5
    """
    lam = _check.positive("rate", rate)
    if np.ndim(n_gpus) == 0:
        return 1.0 / (_check.integer("n_gpus", n_gpus) * lam)
    n = np.asarray(n_gpus)
    if n.dtype.kind not in "iu" or n.size == 0 or n.min() < 1:
        raise ValueError(f"n_gpus must hold positive integers, got {n_gpus!r}")
    return 1.0 / (n * lam)


def _llama3_count(kind: str) -> float:
    kind = _check.choice("kind", kind, ("unexpected", "all"))
    return log_value("Llama 3 405B", "unexpected_interruptions" if kind == "unexpected" else "interruptions")


def llama3_mtbf(kind: str = "unexpected") -> float:
    """Mean time between interruptions of Llama 3's 16,384-GPU cluster in its 54-day snapshot: 54 days / N, in
    seconds (N = 419 unexpected interruptions, or 466 with the planned ones: ``kind="all"``).

    >>> round(llama3_mtbf("all") / 3600, 2)
    2.78
    """
    return log_value("Llama 3 405B", "snapshot_days") * DAY / _llama3_count(kind)


def llama3_per_gpu_rate(kind: str = "unexpected") -> float:
    """Per-GPU interruption rate (per second) from Llama 3's snapshot: N / (54 days × 16,384 GPUs), with N the 419
    *unexpected* interruptions by default — the 47 planned ones (firmware upgrades, operator changes) are scheduled
    and left out; ``kind="all"`` counts all 466.

    >>> round(1 / llama3_per_gpu_rate() / (365 * 86400), 2)    # per-GPU mean time between interruptions, years
    5.79
    """
    return per_gpu_rate(_llama3_count(kind), log_value("Llama 3 405B", "snapshot_days") * DAY,
                        int(log_value("Llama 3 405B", "gpus")))


#: the largest expected number of nodes out of service :func:`spare_nodes` accepts (a million-node cluster with every
#: node out ten times over)
_MAX_OUT = 1e7


# --- spares --------------------------------------------------------------------------------------------------------

def spare_nodes(n_nodes, node_rate, repair_seconds, confidence=0.99) -> int:
    """Spare nodes to hold so that a job of ``n_nodes`` nodes can always be refilled while broken nodes are repaired:
    the smallest k with P(N ≤ k) ≥ ``confidence`` for N ~ Poisson(n · λ_node · T_repair) nodes out at a time.

    ``node_rate`` failures per node-second that take a node out of service; ``repair_seconds`` time to swap or fix
    it. With Llama 3's hardware share (≈ 78 % of its per-GPU rate, 8 GPUs per node), 128 nodes and a 3-day repair:

    >>> lam = 0.78 * 8 * llama3_per_gpu_rate()
    >>> spare_nodes(128, lam, 3 * 86400)
    4
    """
    n = _check.integer("n_nodes", n_nodes)
    mean = n * _check.nonnegative("node_rate", node_rate) * _check.nonnegative("repair_seconds", repair_seconds)
    q = _check.probability("confidence", confidence)
    if q >= 1:
        raise ValueError(f"confidence must be below 1, got {confidence!r}")
    if not math.isfinite(mean) or mean > _MAX_OUT:
        raise ValueError(f"n_nodes × node_rate × repair_seconds = {mean:.3g} nodes out of service at once: more "
                         f"than any cluster (limit {_MAX_OUT:.0e}); check the units of node_rate (per second)")
    if mean == 0:
        return 0
    # The Poisson pmf in log space over [mean − w, mean + w], w = 12·√mean + 60: the mass outside is below 1e-30
    # for every mean (exp(−mean) alone underflows past 745). The window is normalised, so its CDF ends at exactly 1
    # and the search ends for any confidence < 1: at most ~24·√mean + 120 terms, about 3 ms at a mean of 10⁷.
    w = 12.0 * math.sqrt(mean) + 60.0
    lo = max(0, math.floor(mean - w))
    k = np.arange(lo, math.ceil(mean + w) + 1, dtype=float)
    log_pmf = k * math.log(mean) - mean - np.array([math.lgamma(x + 1.0) for x in k])
    pmf = np.exp(log_pmf - log_pmf.max())
    pmf /= pmf.sum()
    if q <= 0.5:                                  # P(N ≤ k) ≥ q, summed from below
        return lo + int(np.searchsorted(np.cumsum(pmf), q))
    sf = np.cumsum(pmf[::-1])[::-1] - pmf         # P(N > k), summed from above: exact near 1 − q ≈ 1e-16
    return lo + int(np.argmax(sf <= 1.0 - q))
