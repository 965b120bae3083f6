"""Lab: collectives on a real engine — time all-reduce, reduce-scatter and all-gather against message size, check
every result, and fit the α–β model of :mod:`chipchain.comms` to what was measured.

The worker :func:`collective_times` runs on every rank. Run it locally with :func:`measure` (gloo, N processes on
this machine) or on a GPU cluster with NCCL::

    torchrun --nproc_per_node=8 -m chipchain.labs.collectives

Conventions are those of :mod:`chipchain.comms`: ``nbytes`` M is the full buffer (what each rank contributes to an
all-reduce or a reduce-scatter, what each rank ends with after an all-gather); times are the slowest rank's, the
median of ``repeats``. The fit minimises the *relative* error, so small and large messages weigh alike.

>>> sizes = [1e3, 1e5, 1e7]
>>> t = [comms.ring_allreduce_time(m, 4, 1e9, 1e-3) for m in sizes]      # a made-up 1 GB/s, 1 ms machine
>>> f = fit_alpha_beta(sizes, t, 4)
>>> round(f.alpha * 1e3, 6), round(f.beta / 1e9, 6), round(f.rms_error, 9)
(1.0, 1.0, 0.0)
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from .._lazy import np

from .. import _check, comms
from . import runner

__all__ = ["COLLECTIVES", "DEFAULT_SIZES", "collective_times", "collective_times_by_group", "CollectiveTimes",
           "measure", "measure_groups", "AlphaBeta",
           "fit_alpha_beta", "relative_rms"]

#: the collectives timed, and the α–β cost each is fitted with (full buffer M, per-direction bandwidth β)
COLLECTIVES = ("all_reduce", "reduce_scatter", "all_gather")
_COST = {"all_reduce": comms.ring_allreduce_time, "reduce_scatter": comms.reduce_scatter_time,
         "all_gather": comms.allgather_time}
#: message sizes in bytes: 4 KiB to 16 MiB in steps of 4 (small enough for a lab on two busy cores)
DEFAULT_SIZES = tuple(4096 * 4 ** k for k in range(7))


# --- the worker (runs on every rank) ---------------------------------------------------------------------------

def collective_times_by_group(rank, n_ranks, group_sizes, sizes=DEFAULT_SIZES, repeats=3, warmup=1) -> dict:
    """Worker: :func:`collective_times` on the first k ranks for each k in ``group_sizes`` (one process group per k;
    the other ranks wait), so one launch measures several rank counts. Returns {str(k): result} on every rank."""
    import torch.distributed as dist
    out = {}
    for k in group_sizes:
        group = dist.new_group(list(range(k))) if k < n_ranks else None
        if rank < k:
            out[str(k)] = collective_times(rank, k, sizes, repeats, warmup, group=group)
        dist.barrier()
    return out


def collective_times(rank, n_ranks, sizes=DEFAULT_SIZES, repeats=3, warmup=1, group=None) -> dict:
    """Worker: time each collective at each size on this rank's process group, and check each result exactly.

    Inputs hold small integers (rank + 1 + i mod 7) so every sum is exact in FP32 and any misplaced or missing
    chunk shows. Returns ``{"nbytes": [...], "<collective>": [seconds...], "correct": {collective: bool}}``; times
    are the slowest rank's (all-reduced with MAX), median over ``repeats`` after ``warmup`` untimed calls.
    ``group``: a process group of ``n_ranks`` ranks (default: the whole world).
    """
    import torch
    import torch.distributed as dist
    dev = runner.device()
    reduce_scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor    # torch < 2.13
    all_gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    out = {"nbytes": [], "correct": {c: True for c in COLLECTIVES}, **{c: [] for c in COLLECTIVES}}
    for size in sizes:
        chunk = max(1, int(size) // 4 // n_ranks)
        numel = chunk * n_ranks
        pattern = (torch.arange(numel, device=dev) % 7).float()
        expect_sum = pattern * n_ranks + n_ranks * (n_ranks + 1) / 2
        full, mine = torch.empty(numel, device=dev), torch.empty(chunk, device=dev)
        calls = {"all_reduce": lambda: dist.all_reduce(full, group=group),
                 "reduce_scatter": lambda: reduce_scatter(mine, full, group=group),
                 "all_gather": lambda: all_gather(full, mine, group=group)}
        checks = {"all_reduce": lambda: torch.equal(full, expect_sum),
                  "reduce_scatter": lambda: torch.equal(mine, expect_sum[rank * chunk:(rank + 1) * chunk]),
                  "all_gather": lambda: torch.equal(full.view(n_ranks, chunk),
                                                    torch.arange(1, n_ranks + 1, device=dev).float()[:, None]
                                                    + pattern[:chunk])}
        out["nbytes"].append(numel * 4)
        for name in COLLECTIVES:
            times = []
            for i in range(warmup + repeats):
                full.copy_(pattern + rank + 1)
                mine.copy_(pattern[:chunk] + rank + 1)
                dist.barrier(group=group)
                runner.synchronize()
                t0 = time.perf_counter()
                calls[name]()
                runner.synchronize()
                times.append(time.perf_counter() - t0)
                if i == 0:
                    out["correct"][name] = bool(out["correct"][name] and checks[name]())
            slowest = torch.tensor(times[warmup:], dtype=torch.float64)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX, group=group)
            out[name].append(float(slowest.median()))
    ok = torch.tensor([float(out["correct"][c]) for c in COLLECTIVES])
    dist.all_reduce(ok, op=dist.ReduceOp.MIN, group=group)             # correct only if correct on every rank
    out["correct"] = {c: bool(v) for c, v in zip(COLLECTIVES, ok.tolist())}
    return out


# --- the parent side: records, fits, bandwidths ------------------------------------------------------------------

@dataclass(frozen=True)
class CollectiveTimes:
    """What :func:`measure` returns: ``nbytes`` (bytes, tuple), ``seconds`` {collective: tuple of seconds},
    ``correct`` {collective: every rank's result exact at every size}, ``n_ranks``, ``launch_seconds`` (the whole
    launch, process start-up included)."""

    n_ranks: int
    nbytes: tuple
    seconds: dict
    correct: dict
    launch_seconds: float

    def fit(self, collective="all_reduce", min_nbytes=0.0) -> "AlphaBeta":
        """:func:`fit_alpha_beta` over this measurement's sizes of at least ``min_nbytes``."""
        c = _check.choice("collective", collective, COLLECTIVES)
        return fit_alpha_beta(self.nbytes, self.seconds[c], self.n_ranks, c, min_nbytes)


def measure(n_ranks=4, sizes=DEFAULT_SIZES, repeats=3, timeout=120.0) -> CollectiveTimes:
    """Launch :func:`collective_times` on ``n_ranks`` local gloo ranks and return a :class:`CollectiveTimes`.

    ``sizes`` in bytes (each rounded down to a multiple of 4·n_ranks, at least one FP32 element per rank).
    """
    n = _check.integer("n_ranks", n_ranks)
    sz = [int(_check.positive("sizes", s)) for s in sizes]
    reps = _check.integer("repeats", repeats)
    run = runner.launch(collective_times, n, timeout=timeout, sizes=sz, repeats=reps)
    r = run.results[0]
    return CollectiveTimes(n, tuple(r["nbytes"]), {c: tuple(r[c]) for c in COLLECTIVES}, dict(r["correct"]),
                           run.seconds)


def measure_groups(rank_counts=(4, 2), sizes=DEFAULT_SIZES, repeats=3, timeout=120.0) -> tuple:
    """One launch of max(``rank_counts``) local ranks measuring each rank count in turn (the first k ranks form a
    group, the rest wait): a :class:`CollectiveTimes` per count, in the order given. Saves a launch (a Python and a
    torch start-up per rank) over calling :func:`measure` once per count."""
    counts = [_check.integer("rank_counts", k) for k in rank_counts]
    if not counts:
        raise ValueError("rank_counts must name at least one rank count")
    sz = [int(_check.positive("sizes", s)) for s in sizes]
    run = runner.launch(collective_times_by_group, max(counts), timeout=timeout, group_sizes=counts, sizes=sz,
                        repeats=_check.integer("repeats", repeats))
    out = []
    for k in counts:
        r = run.results[0][str(k)]
        out.append(CollectiveTimes(k, tuple(r["nbytes"]), {c: tuple(r[c]) for c in COLLECTIVES}, dict(r["correct"]),
                                   run.seconds))
    return tuple(out)


@dataclass(frozen=True)
class AlphaBeta:
    """A fitted α–β model of one collective on ``n_ranks`` ranks: ``alpha`` (s per step), ``beta`` (bytes/s per
    direction), ``rms_error`` (relative, over the ``points`` sizes fitted)."""

    collective: str
    n_ranks: int
    alpha: float
    beta: float
    rms_error: float
    points: int

    def seconds(self, nbytes):
        """The fitted model's time for ``nbytes`` (element-wise), by the :mod:`chipchain.comms` cost."""
        return _COST[self.collective](nbytes, self.n_ranks, self.beta, self.alpha)


def _coefficients(nbytes, n_ranks, collective):
    """(steps, bytes sent per rank): T = steps·α + sent/β for each size, read off the chipchain.comms cost."""
    cost = _COST[collective]
    steps = cost(0.0, n_ranks, 1.0, 1.0)                 # latency 1 s, no bytes: the number of steps
    per_byte = cost(1.0, n_ranks, 1.0, 0.0)              # bandwidth 1 B/s, one byte: bytes sent per byte of M
    return np.full(nbytes.shape, steps), per_byte * nbytes


def relative_rms(predicted, measured) -> float:
    """Root-mean-square relative error, √mean(((p − m)/m)²), of predicted against measured times (both > 0).

    >>> round(relative_rms([1.1, 0.9], [1.0, 1.0]), 3)
    0.1
    """
    p = np.atleast_1d(_check.values("predicted", predicted, _check.positive))
    m = np.atleast_1d(_check.values("measured", measured, _check.positive))
    if p.shape != m.shape:
        raise ValueError(f"predicted and measured must have the same length, got {p.shape} and {m.shape}")
    return float(np.sqrt(np.mean(((p - m) / m) ** 2)))


def fit_alpha_beta(nbytes, seconds, n_ranks, collective="all_reduce", min_nbytes=0.0) -> AlphaBeta:
    """Least-squares fit of the α–β cost of a ring collective to measured times, in relative error.

    The cost comes from :mod:`chipchain.comms`: all-reduce ``T = 2(n−1)·α + 2(n−1)/n · M/β``, reduce-scatter and
    all-gather ``T = (n−1)·α + (n−1)/n · M/β``. Writing ``T = c_α·α + c_β·M·(1/β)`` makes the fit linear in α
    and 1/β; each row is divided by its measured time so the fit minimises Σ((T_model − T)/T)². If the best α
    is negative, α = 0 and only β is fitted. Only sizes ``≥ min_nbytes`` are used (at least two).

    Args: ``nbytes`` M (bytes), ``seconds`` (s, > 0), same length; ``n_ranks`` n ≥ 2; ``collective`` one of
    :data:`COLLECTIVES`. Returns an :class:`AlphaBeta`. Source: Hockney (1994); Thakur, Rabenseifner & Gropp (2005).
    """
    m = np.atleast_1d(_check.values("nbytes", nbytes, _check.positive))
    t = np.atleast_1d(_check.values("seconds", seconds, _check.positive))
    if m.shape != t.shape:
        raise ValueError(f"nbytes and seconds must have the same length, got {m.shape} and {t.shape}")
    n = _check.integer("n_ranks", n_ranks, minimum=2)
    c = _check.choice("collective", collective, COLLECTIVES)
    keep = m >= _check.nonnegative("min_nbytes", min_nbytes)
    if keep.sum() < 2:
        raise ValueError(f"min_nbytes={min_nbytes!r} leaves {int(keep.sum())} sizes; the fit needs at least two")
    m, t = m[keep], t[keep]
    steps, sent = _coefficients(m, n, c)
    a = np.column_stack([steps / t, sent / t])
    (alpha, inv_beta), *_ = np.linalg.lstsq(a, np.ones_like(t), rcond=None)
    if alpha < 0:
        alpha, inv_beta = 0.0, float(np.sum(sent / t) / np.sum((sent / t) ** 2))
    if inv_beta <= 0:
        raise ValueError("the times do not grow with message size: there is no bandwidth to fit")
    fit = AlphaBeta(c, n, float(alpha), float(1 / inv_beta), 0.0, int(len(t)))
    return AlphaBeta(c, n, fit.alpha, fit.beta, relative_rms(fit.seconds(m), t), fit.points)


if __name__ == "__main__":                   # torchrun --nproc_per_node=N -m chipchain.labs.collectives
    runner.main(collective_times)
