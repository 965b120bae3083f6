"""The book's model against published training runs, top-down: the MFU a run's GPU-hours imply, the FLOP
conventions papers mix, and the ranges comparable runs give (the bottom-up step-time predictor is
:mod:`chipchain.predictor`).

The runs are the registry :mod:`chipchain.published_runs` (``data/published_runs.csv``; look them up there:
``published_runs.get``, ``runs``, ``names``; :func:`implied_mfu` is this module's): whole runs with GPU-hours, fully
specified step configurations with a measured time per iteration, and configurations whose schedule is not stated::

    >>> from chipchain import published_runs
    >>> r = published_runs.get("llama2-70b")
    >>> r.tier, round(implied_mfu(r.active_params, r.tokens, r.gpu_hours, r.accelerator), 3)
    ('A', 0.428)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data, checkpoint, compute, hardware, models, predictor, published_runs, units

__all__ = ["conflicts", "implied_mfu", "flops_per_token", "CONVENTIONS", "convert_mfu",
           "rescale_peak", "same_generation", "mfu_range", "HoursError", "gpu_hours_errors",
           "BottomUpHours", "bottom_up_hours"]


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
    return us[0], units.median(us), us[-1], tuple(n for _, n in vals)


@dataclass(frozen=True)
class _RunHours:
    name: str
    family: str
    accelerator: str
    reported: float             #: GPU-hours the source gives
    predicted: float            #: GPU-hours predicted
    error: float                #: predicted / reported − 1


@dataclass(frozen=True)
class HoursError(_RunHours):
    """One whole run: reported GPU-hours, the GPU-hours 6ND predicts at the median MFU of the *other* runs of the
    same generation (leave-one-out), and the relative error; also at a fixed ``mfu`` for comparison."""

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
        u = units.median(implied_mfu(x.active_params, x.tokens, x.gpu_hours, x.accelerator, x.dtype)
                              for x in others)
        flops = compute.training_flops(r.active_params, r.tokens)
        peak = r.accelerator.peak_flops(r.dtype)
        pred, at_fixed = compute.gpu_hours(flops, peak, u), compute.gpu_hours(flops, peak, fixed)
        out.append(HoursError(r.name, r.family, r.accelerator.name, r.gpu_hours, pred, pred / r.gpu_hours - 1, u,
                              at_fixed, at_fixed / r.gpu_hours - 1, tuple(x.name for x in others)))
    return tuple(out)


@dataclass(frozen=True)
class BottomUpHours(_RunHours):
    """One whole run bottom-up (:func:`bottom_up_hours`): its stated plan's predicted step, the steps its tokens
    take, chapter 7's goodput, and the GPU-hours they make against the reported."""

    step_seconds: float
    steps: float
    goodput: float
    mfu: float                  #: the step's MFU (6N over the dense peak), before failures


def bottom_up_hours() -> tuple:
    """GPU-hours of every whole run whose source states its plan (``Run.plan_stated``), bottom-up as chapter 13
    sizes its running example: H = n · (D / (B · s)) · T_step / G / 3,600, with T_step the book's one step model
    (:func:`chipchain.predictor.row_prediction`, fitted without the run's family) and G chapter 7's goodput at the
    run's size (:func:`chipchain.checkpoint.run_failures`). G pays for failures only; billed hours also hold
    evaluations, restarts after loss spikes and idle reservations, which no plan states.

    BLOOM's 384 A100s (TP 4 × PP 12 × DP 8, full recomputation) come out within 1 % of the 1,082,990 reported:

    >>> b = {x.name: x for x in bottom_up_hours()}["bloom-176b"]
    >>> round(b.step_seconds), round(b.goodput, 3), abs(b.error) < 0.01
    (114, 0.984, True)
    """
    out = []
    for r in published_runs.runs():
        if not (r.plan_stated and r.gpu_hours):
            continue
        s = predictor.row_prediction(r.name, exclude_families=(r.family,))
        steps = r.tokens / s.tokens
        g = checkpoint.run_failures(r.model.params, r.n_gpus).goodput
        h = compute.gpu_hours_from_seconds(steps * s.seconds / g, r.n_gpus)
        out.append(BottomUpHours(r.name, r.family, r.accelerator.name, r.gpu_hours, h, h / r.gpu_hours - 1,
                                 s.seconds, steps, g, s.mfu))
    return tuple(out)
