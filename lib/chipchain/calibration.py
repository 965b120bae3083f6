"""The book's model against published training runs: implied MFU, the conventions papers mix, and a step-time
predictor built from the library's own pieces.

The runs are the registry :mod:`chipchain.published_runs` (``data/published_runs.csv``; look them up there:
``published_runs.get``, ``runs``, ``names``; :func:`implied_mfu` is this module's): whole runs with GPU-hours, fully
specified step configurations with a measured time per iteration, and configurations whose schedule is not stated::

    >>> from chipchain import published_runs
    >>> r = published_runs.get("llama2-70b")
    >>> r.tier, round(implied_mfu(r.active_params, r.tokens, r.gpu_hours, r.accelerator), 3)
    ('A', 0.428)
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import lru_cache

from . import _check, _data, comms, compute, hardware, models, parallel, published_runs, systems
from .published_runs import Run

__all__ = ["conflicts", "implied_mfu", "flops_per_token", "CONVENTIONS", "convert_mfu",
           "rescale_peak", "StepPrediction", "predict_step", "matmul_efficiency", "StepError", "step_errors",
           "same_generation", "mfu_range", "HoursError", "gpu_hours_errors"]

def _median(values) -> float:
    """The median of an iterable of numbers (kept here: the statistics module costs 20 ms of import time)."""
    v = sorted(values)
    k = len(v) // 2
    return v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2


#: what a "FLOP" counts, from fewest to most (Chowdhery et al. 2022 App. B; Korthikanti et al. 2022 §6)
CONVENTIONS = ("6N", "6N+attention", "hardware-selective", "hardware-full")


# --- where sources disagree --------------------------------------------------------------------------------------

def conflicts() -> tuple:
    """The rows of ``data/run_conflicts.csv``: where two sources (or one paper and its own arithmetic) give
    different figures for the same run, as dicts with ``figure_a`` and ``figure_b`` as floats (the one reader of
    that file; the table is :func:`chipchain.views.calibration.conflicts_table`).

    >>> all(isinstance(c["figure_a"], float) for c in conflicts())
    True
    """
    out = []
    for row in _data.rows("run_conflicts.csv"):
        d = dict(row)
        d["figure_a"], d["figure_b"] = float(row["figure_a"]), float(row["figure_b"])
        out.append(d)
    return tuple(out)


# --- MFU and its conventions ----------------------------------------------------------------------------------

def implied_mfu(active_params, tokens, gpu_hours, accelerator, dtype="bf16"):
    """Model FLOP utilisation a run's GPU-hours imply: MFU = 6·N·D / (GPU-hours · 3,600 · peak)
    (:func:`chipchain.compute.implied_mfu` of :func:`chipchain.compute.training_flops`).

    ``active_params`` N (count; the activated parameters of an MoE model), ``tokens`` D, ``gpu_hours`` (accelerator
    hours, whatever the paper counts: downtime and restarts included), ``accelerator`` (catalog name or record) at its
    dense ``dtype`` peak. The 6N convention leaves out attention (see :func:`convert_mfu`). Element-wise; a
    utilisation above 1 is refused as a unit slip.

    Llama 2 70B (Touvron et al. 2023, Table 2: 1,720,320 A100-hours for 2 T tokens); DeepSeek-V3's 2,664 K H800-hours
    for 14.8 T tokens against the H800's FP8 dense peak (DeepSeek-AI 2024, Table 1):

    >>> round(implied_mfu(68.98e9, 2e12, 1720320, "A100"), 3), round(implied_mfu(37e9, 14.8e12, 2664e3, "H800", "fp8"), 3)
    (0.428, 0.173)
    """
    peak = hardware.get(accelerator).peak_flops(dtype)
    return compute.implied_mfu(compute.training_flops(active_params, tokens), gpu_hours, peak)


def flops_per_token(model, seq=None, convention="6N+attention") -> float:
    """FLOPs one training token costs under a ``convention`` (:data:`CONVENTIONS`):

    * ``"6N"``: 6·N (Kaplan et al. 2020); N = the model's active parameters;
    * ``"6N+attention"``: + 12·l·d·s, the attention scores and the weighted sum, forward and backward, without the
      causal halving (Chowdhery et al. 2022, App. B; Narayanan et al. 2021, Eq. 3);
    * ``"hardware-selective"``: + 4·l·d·s, the attention core recomputed (Korthikanti et al. 2022);
    * ``"hardware-full"``: + 2·N + 4·l·d·s, one whole forward pass recomputed.

    l layers, d = heads × head_dim, s = ``seq`` (default the model's). FLOPs per token.

    >>> round(flops_per_token("175B", convention="6N") / 1e12, 2), round(flops_per_token("175B") / 1e12, 3)
    (1.05, 1.079)
    """
    m = models.get(model)
    s = m.seq if seq is None else _check.integer("seq", seq)
    conv = _check.choice("convention", convention, CONVENTIONS)
    n = m.active_params if m.is_moe else m.params
    attn = 4.0 * m.layers * m.d_attn * s           # forward attention FLOPs per token
    extra = {"6N": -3 * attn, "6N+attention": 0.0, "hardware-selective": attn, "hardware-full": 2 * n + attn}
    return compute.FLOPS_PER_PARAM_TOKEN * n + 3 * attn + extra[conv]


def convert_mfu(mfu, model, *, seq=None, source="6N+attention", target="6N"):
    """A utilisation stated under one FLOP convention, restated under another: MFU × F_target / F_source, with F
    from :func:`flops_per_token`. Hardware FLOP utilisation (HFU) is the ``hardware-*`` conventions. Element-wise.

    PaLM 540B's 46.2 % counts attention (Chowdhery et al. 2022, Table 3); without it, 45.7 %:

    >>> m = models.custom(layers=118, hidden=18432, heads=48, head_dim=256, seq=2048, params=540.35e9)
    >>> round(convert_mfu(0.462, m), 3)
    0.457
    """
    u = _check.values("mfu", mfu, _check.positive)
    ratio = flops_per_token(model, seq, target) / flops_per_token(model, seq, source)
    return _check.result(u * ratio)


def rescale_peak(mfu, accelerator, *, source_dtype="bf16", target_dtype="fp8", source_sparse=False,
                 target_sparse=False):
    """The same achieved FLOP/s against another peak: MFU × peak_source / peak_target (dense vs sparse, BF16 vs FP8).

    DeepSeek-V3's 38.94 % is against the H800's BF16 dense peak though its GEMMs run in FP8 (Zhao et al. 2025):

    >>> round(rescale_peak(0.3894, "H800"), 4)
    0.1947
    """
    u = _check.values("mfu", mfu, _check.positive)
    a = hardware.get(accelerator)
    return _check.result(u * a.peak_flops(source_dtype, source_sparse) / a.peak_flops(target_dtype, target_sparse))


# --- the step-time predictor ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class StepPrediction:
    """One training step, predicted (s): compute (model FLOPs), recomputation, pipeline bubble and exposed
    communication; ``seconds`` is their sum; ``mfu`` and ``hfu`` follow from it."""

    seconds: float
    compute: float
    recompute: float
    bubble: float
    exposed_comm: float
    comm: tuple                 #: chipchain.parallel.CommRow per kind of traffic (before overlap)
    mfu: float
    hfu: float
    efficiency: float           #: achievable-matmul efficiency used (fraction of the dense peak)
    plan: parallel.Plan


def predict_step(model, accelerator, n_gpus, *, tp, pp, batch, seq=None, microbatch=1,
                 recompute="selective", sequence_parallel=True, virtual_stages=1, efficiency=None, dtype="bf16",
                 dp_overlap=0.0) -> StepPrediction:
    """Seconds per training step of a TP × PP × DP plan, from the library's pieces:

    T = F_hw / (n · peak · η) · (1 + bubble) + T_TP + T_PP + (1 − ``dp_overlap``) · T_DP

    F_hw: :func:`flops_per_token` (6N + attention, plus the recomputation) × ``batch`` (the global batch, sequences
    per optimizer step) × ``seq``; η the
    achievable-matmul efficiency (:func:`matmul_efficiency`, fitted on published configurations, unless given);
    bubble :func:`chipchain.parallel.bubble_fraction` (1F1B, ``virtual_stages`` chunks); traffic
    :func:`chipchain.parallel.communication` (α–β over the cluster's links from :func:`chipchain.systems.cluster`).
    Overlap stated: tensor- and pipeline-parallel traffic is on the critical path (Megatron-LM); data-parallel
    traffic overlaps with the backward pass by ``dp_overlap`` (default none). ``model``: registry name or
    :func:`chipchain.models.custom`; ``accelerator``: accelerator or node name.

    Korthikanti et al. 2022's 175B on 64 A100 (13.75 s measured):

    >>> p = predict_step("175B", "A100", 64, tp=8, pp=8, batch=64)
    >>> round(p.seconds, 1), round(p.mfu, 2)
    (14.2, 0.5)
    """
    m = models.get(model)
    if seq is not None and _check.integer("seq", seq) != m.seq:
        m = dataclasses.replace(m, seq=seq)
    c = systems.cluster(accelerator, _check.integer("n_gpus", n_gpus))
    t, p = _check.integer("tp", tp), _check.integer("pp", pp)
    b, mb = _check.integer("batch", batch), _check.integer("microbatch", microbatch)
    if c.n_gpus % (t * p):
        raise ValueError(f"n_gpus={n_gpus} is not a multiple of tp × pp = {t * p}")
    dp = c.n_gpus // (t * p)
    if b % (dp * mb):
        raise ValueError(f"batch={b} is not a multiple of dp × microbatch = {dp} × {mb}")
    plan = parallel.Plan(tp=t, pp=p, dp=dp, zero=1, microbatches=b // (dp * mb), microbatch=mb,
                         virtual_stages=virtual_stages, sequence_parallel=sequence_parallel, recompute=recompute)
    peak = c.accelerator.peak_flops(dtype)
    eta = (matmul_efficiency(c.accelerator, m.hidden / t) if efficiency is None
           else _check.fraction("efficiency", efficiency))
    tokens = b * m.seq
    model_f = tokens * flops_per_token(m, convention="6N+attention")
    hw = tokens * flops_per_token(m, convention="6N+attention" if recompute == "none" else f"hardware-{recompute}")
    rate = c.n_gpus * peak * eta
    bub = parallel.bubble_fraction(p, plan.microbatches, plan.virtual_stages) * hw / rate
    rows = parallel.communication(plan, m, c)
    dp_s = sum(r.seconds for r in rows if r.kind.startswith("DP"))
    exposed = sum(r.seconds for r in rows) - dp_s + comms.exposed_seconds(
        dp_s, _check.probability("dp_overlap", dp_overlap), hw / rate)
    secs = hw / rate + bub + exposed
    return StepPrediction(secs, model_f / rate, (hw - model_f) / rate, bub, exposed, rows,
                          model_f / (secs * c.n_gpus * peak), hw / (secs * c.n_gpus * peak), eta, plan)


def _predict(run: Run, efficiency) -> StepPrediction:
    p = run.plan
    return predict_step(run.model, run.accelerator, run.n_gpus, tp=p["tp"], pp=p["pp"], batch=p["batch"],
                        seq=p["seq"], microbatch=p["microbatch"], recompute=p["recompute"],
                        sequence_parallel=p["sequence_parallel"], virtual_stages=p["virtual_stages"],
                        efficiency=efficiency, dtype=run.dtype)


@lru_cache(maxsize=None)
def _row_efficiency(name: str) -> float:
    """The η that makes :func:`predict_step` reproduce one step row's measured time exactly."""
    r = published_runs.get(name)
    p1 = _predict(r, 1.0)
    compute = p1.seconds - p1.exposed_comm
    return compute / max(r.step_seconds - p1.exposed_comm, 1e-9 * r.step_seconds)


#: GEMM width (hidden / tp, per GPU) at which the achievable efficiency is half its large-matrix value: narrow
#: per-GPU matrices run further below peak (tile and wave quantisation, memory-bound epilogues). One shape
#: constant for every part, chosen on the 14 fully specified rows of ``published_runs.csv`` (a grid 0–700 by the
#: leave-one-out median error; 300 is in-sample for this one constant, the per-part η is left out row by row).
GEMM_HALF_WIDTH = 300.0


def _width(run: Run) -> float:
    return run.model.hidden / run.plan["tp"]


def matmul_efficiency(accelerator, width=None, exclude=()) -> float:
    """Achievable-matmul efficiency η of ``accelerator`` (fraction of its dense peak) for per-GPU GEMMs ``width``
    wide (hidden / tp): η = η∞ · w / (w + :data:`GEMM_HALF_WIDTH`); ``width=None`` gives η∞.

    η∞ is the median, over the fully specified step rows of ``data/published_runs.csv`` run on that part (minus
    the ids in ``exclude``), of the η∞ that reproduces each row's measured time; with no row for the part, the
    median over every part's rows.

    >>> 0.6 < matmul_efficiency("A100") < 0.9, matmul_efficiency("A100", 768) < matmul_efficiency("A100", 3200)
    (True, True)
    """
    a = hardware.get(accelerator)
    drop = {exclude} if isinstance(exclude, str) else set(exclude)
    pool = [r for r in published_runs.runs() if r.fully_specified and r.name not in drop]
    use = [r for r in pool if r.accelerator is a] or pool
    if not use:
        raise ValueError(f"no published step rows left to fit an efficiency for {a.name} after exclude={exclude!r}")
    inf = _median(_row_efficiency(r.name) * (_width(r) + GEMM_HALF_WIDTH) / _width(r) for r in use)
    if width is None:
        return inf
    w = _check.positive("width", width)
    return inf * w / (w + GEMM_HALF_WIDTH)


@dataclass(frozen=True)
class StepError:
    """One fully specified row: measured and predicted seconds per step, relative error (predicted / measured −
    1), the efficiency used and the rows it was fitted on."""

    name: str
    family: str
    accelerator: str
    measured: float
    predicted: float
    error: float
    efficiency: float
    fitted_on: tuple
    prediction: StepPrediction


def step_errors(leave_one_out=True) -> tuple:
    """:func:`predict_step` against every fully specified row; with ``leave_one_out`` (the default) each row's
    efficiency η∞ is fitted on the *other* rows of its accelerator, so no row is predicted by a constant fitted on it
    (:data:`GEMM_HALF_WIDTH`, one shape constant, is the exception and is stated as in-sample).

    >>> errs = step_errors()
    >>> len(errs) >= 10, all(e.name not in e.fitted_on for e in errs)
    (True, True)
    """
    _check.flag("leave_one_out", leave_one_out)
    out = []
    for r in published_runs.runs():
        if not r.fully_specified:
            continue
        drop = (r.name,) if leave_one_out else ()
        eta = matmul_efficiency(r.accelerator, _width(r), drop)
        own = [x.name for x in published_runs.runs() if x.fully_specified and x.name not in drop and x.accelerator is r.accelerator]
        p = _predict(r, eta)
        out.append(StepError(r.name, r.family, r.accelerator.name, r.step_seconds, p.seconds,
                             p.seconds / r.step_seconds - 1, eta, tuple(own), p))
    return tuple(out)


def same_generation(accelerator) -> tuple:
    """Catalog parts of ``accelerator``'s generation: same vendor and same dense BF16 (or FP16) peak — the A100
    80 GB, 40 GB and the A800 are one generation; the H100, H800 and H200 another.

    >>> same_generation("A100")
    ('A100-SXM-80GB', 'A800', 'A100-SXM-40GB')
    """
    a = hardware.get(accelerator)

    def peak(x):
        return x.peaks.get("bf16") or x.peaks.get("fp16")

    if not peak(a):
        raise ValueError(f"{a.name} has no 16-bit peak in the catalog to compare generations by")
    return tuple(x.name for x in hardware.all_accelerators() if x.vendor == a.vendor and peak(x) == peak(a))


def mfu_range(accelerator="A100", min_gpus=384) -> tuple:
    """(lowest, median, highest) MFU implied by the GPU-hours of the whole published runs on ``accelerator``'s
    generation (:func:`same_generation`) with at least ``min_gpus`` accelerators — the comparable runs for a
    capstone estimate — and their ids, lowest first.

    Implied MFU from billed GPU-hours already absorbs restarts and idle time, so a time computed from it must not
    add failures again.

    >>> lo, mid, hi, ids = mfu_range("A100")
    >>> round(lo, 2), round(mid, 2), round(hi, 2), ids[0], ids[-1]
    (0.24, 0.35, 0.48, 'bloomberggpt-50b', 'falcon-180b')
    """
    want = set(same_generation(accelerator))
    k = _check.integer("min_gpus", min_gpus)
    rows = [r for r in published_runs.runs() if r.kind == "run" and r.accelerator.name in want and r.gpu_hours
            and r.n_gpus and r.n_gpus >= k]
    if not rows:
        raise ValueError(f"no published run on {hardware.get(accelerator).name}'s generation with at least {k} GPUs")
    vals = sorted((implied_mfu(r.active_params, r.tokens, r.gpu_hours, r.accelerator, r.dtype), r.name) for r in rows)
    us = [v for v, _ in vals]
    return us[0], _median(us), us[-1], tuple(n for _, n in vals)


@dataclass(frozen=True)
class HoursError:
    """One whole run: reported GPU-hours, the GPU-hours 6ND predicts at the median MFU of the *other* runs of the
    same generation (leave-one-out), and the relative error; also at a fixed ``mfu`` for comparison."""

    name: str
    family: str
    accelerator: str
    reported: float
    predicted: float
    error: float
    mfu: float                  #: the leave-one-out median MFU used
    fixed: float                #: GPU-hours at the fixed MFU
    fixed_error: float
    fitted_on: tuple


def gpu_hours_errors(fixed_mfu=0.5) -> tuple:
    """GPU-hours = 6·N·D / (3,600 · peak · MFU) for every whole run with GPU-hours, MFU the median implied MFU of
    the other runs on its generation (:func:`same_generation`; runs with no other run of their generation are
    left out), beside the same at ``fixed_mfu`` (the source's 50 %).

    >>> e = {x.name: x for x in gpu_hours_errors()}
    >>> round(e["llama2-70b"].error, 2), round(e["llama2-70b"].fixed_error, 2)
    (0.14, -0.14)
    """
    fixed = _check.fraction("fixed_mfu", fixed_mfu)
    whole = [r for r in published_runs.runs() if r.kind == "run" and r.gpu_hours]
    out = []
    for r in whole:
        gen = set(same_generation(r.accelerator))
        others = [x for x in whole if x is not r and x.accelerator.name in gen]
        if not others:
            continue
        u = _median(implied_mfu(x.active_params, x.tokens, x.gpu_hours, x.accelerator, x.dtype)
                              for x in others)
        flops = compute.training_flops(r.active_params, r.tokens)
        peak = r.accelerator.peak_flops(r.dtype)
        pred, at_fixed = compute.gpu_hours(flops, peak, u), compute.gpu_hours(flops, peak, fixed)
        out.append(HoursError(r.name, r.family, r.accelerator.name, r.gpu_hours, pred, pred / r.gpu_hours - 1, u,
                              at_fixed, at_fixed / r.gpu_hours - 1, tuple(x.name for x in others)))
    return tuple(out)
