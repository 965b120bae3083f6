"""The book's step-time predictor: the one step model (:func:`chipchain.steptime.step_time`) at the matmul efficiency
η fitted on published runs, and how well it predicts runs it was never fitted on.

η = η∞ · w / (w + r), r the accelerator's ridge point in the GEMM's format (:func:`half_width`: chapter 1's peak
over memory bandwidth, no fitted constant), w the per-GPU GEMM width — each GEMM's narrower side, FLOP-weighted over
a layer's projections and MLP (:func:`dense_width`; a mixture of experts' routed experts run at their own width,
:func:`expert_width`, usually far narrower); log η∞ is the sum of effects fitted by medians (a median polish, robust to one odd row) over the fully specified step rows of
``data/published_runs.csv``: the accelerator's **generation** (same vendor and dense 16-bit peak), the **number
format** (FP8 against its own peak, BF16 the reference), the **framework** (kernels and schedule of
:mod:`chipchain.frameworks`; overlap is modelled, not fitted) and the model's **kind** (dense, a mixture of
dense-sized experts, or a fine-grained mixture of many narrow ones: :func:`model_kind`). Scoring is **leave-one-family-out**
(:func:`step_errors`): every row of a paper or benchmark table is predicted by a fit without any row of that
family, and each prediction carries an interval from those residuals (:func:`interval`)::

    >>> p = predict_step("175B", "A100", 64, tp=8, pp=8, batch=64, framework="megatron-2022")
    >>> round(p.seconds, 1), round(p.mfu, 2)
    (13.3, 0.52)
"""
from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

from . import _check, activations, frameworks, hardware, models, parallel, published_runs, steptime, systems, units

__all__ = ["half_width", "FINE_GRAINED", "KINDS", "ROW_SETTINGS", "model_kind", "generation", "dense_width", "expert_width", "matmul_efficiency", "predict_plan",
           "predict_step", "setting_errors", "StepError", "step_errors", "family_summary", "interval", "row_prediction", "outside_rows", "twins"]


def half_width(accelerator, dtype="bf16") -> float:
    """The GEMM width at which a matrix product reaches half its large-matrix efficiency: the accelerator's ridge
    point in ``dtype``, its dense peak over its memory bandwidth (FLOP per byte; chapter 1). A product whose
    narrower side is w does about w FLOPs per byte of its wide input (2 FLOPs a multiply-add over 2 bytes a BF16
    element), so the roofline with compute and memory time added gives it w / (w + ridge) of the peak. FP8 training
    keeps activations in BF16 between layers and casts each GEMM's input on the way in, so the bytes stay while the
    peak doubles: its half width is the FP8 ridge. A100 BF16, H100 BF16 and H100 FP8:

    >>> round(half_width("A100")), round(half_width("H100")), round(half_width("H100", "fp8"))
    (153, 295, 591)
    """
    a = hardware.get(accelerator)
    return a.peak_flops(dtype) / a.require("memory_bandwidth")


#: A mixture of experts is **fine-grained** when its routed experts are at most this many hidden widths wide
#: (DeepSeekMoE's fine-grained expert segmentation: many narrow experts, several routed per token): DeepSeek-V3
#: (2,048 wide against h = 7,168), Qwen3 (768 and 1,536 against 2,048 and 4,096) and gpt-oss (2,880 = h). Such a
#: model spends its time in many small grouped GEMMs, the router, and the permutation of k copies of every token;
#: Mixtral's 8 experts, 14,336 wide (3.5 h), are dense-sized MLPs. Any threshold between 1 and 3.5 sorts the
#: catalog's models the same way.
FINE_GRAINED = 2.0
ROW_SETTINGS = ("ep_overlap", "ep_dispatch")    #: recipe flags a published row may set over its framework's


def generation(accelerator) -> str:
    """The generation an accelerator's efficiency is fitted by: vendor and dense 16-bit peak (the A100 80 GB,
    40 GB and A800 are one; the H100, H800 and H200 another).

    >>> generation("H800") == generation("H100"), generation("A100") == generation("H100")
    (True, False)
    """
    a = hardware.get(accelerator)
    peak = a.peaks.get("bf16") or a.peaks.get("fp16")
    if not peak:
        raise ValueError(f"{a.name} has no 16-bit peak in the catalog to place it in a generation")
    return f"{a.vendor} {peak / units.TERA:.0f}"


@lru_cache(maxsize=None)
def _plan_of(name: str) -> parallel.Plan:
    run = published_runs.get(name)
    p = run.plan
    kw = dict(tp=p["tp"], pp=p["pp"], dp=p["dp"], cp=p["cp"] or 1, ep=p["ep"] or 1, zero=p["zero"] or 0,
              microbatches=p["batch"] // (p["dp"] * p["microbatch"]), microbatch=p["microbatch"],
              virtual_stages=p["virtual_stages"] or 1, sequence_parallel=p["sequence_parallel"],
              cp_variant=p["cp_variant"], offload_layers=p["offload_layers"] or 0, recompute_modules=p["recompute_modules"])
    if p["recompute"]:
        return parallel.Plan(recompute=p["recompute"], **kw)
    # not stated: the least recomputation that fits, as the vendors' recipes choose it
    for rc in activations.RECOMPUTE:
        plan = parallel.Plan(recompute=rc, **{**kw, "recompute_modules": ()})
        if steptime.step_time(plan, _model(run), _cluster(run), efficiency=0.5, dtype=run.dtype,
                              framework=p["framework"], schedule=p["schedule"]).fits:
            return plan
    return plan


def _model(run):
    return run.model if run.plan["seq"] in (None, run.model.seq) else dataclasses.replace(run.model, seq=run.plan["seq"])


def _cluster(run):
    return systems.cluster(run.system or run.accelerator, run.n_gpus)


def expert_width(model):
    """The routed experts' GEMM width: the intermediate width f_e the expert parameters imply,
    N_experts / (moe layers · E · matrices · h); None for a dense model. DeepSeek-V3's experts are 2,048 wide
    (DeepSeek-AI 2024, §4.2), against a hidden width of 7,168:

    >>> round(expert_width("DeepSeek-V3")), expert_width("70B")
    (2050, None)
    """
    m = models.get(model)
    if not m.is_moe:
        return None
    return m.expert_params / (m.moe_layers * m.experts * m.mlp_matrices * m.hidden)


def _width_share(width, half):
    return width / (width + half)


def dense_width(model, tp=1, accelerator="H100", dtype="bf16"):
    """The width the dense GEMMs of one layer run at on a GPU of a ``tp``-way split, FLOP-weighted over them:
    each GEMM's narrower side — the query, key-value and output projections (h against d_attn/t and 2·n_kv·d_h/t),
    the MLP's (h against f/t; in a mixture of experts only the dense layers' MLP) — averaged in w / (w + r) by its
    FLOPs (r the ``accelerator``'s :func:`half_width` in ``dtype``) and given back as the width with that factor.
    Llama 2 70B at TP 8 on H100s: its MLP (f = 28,672) keeps most of the FLOPs wide, so the layer runs as if about
    3,000 wide, not at h/t = 1,024:

    >>> round(dense_width("70B", 8)), round(dense_width("70B"))
    (3052, 7777)
    """
    m = models.get(model)
    t = _check.integer("tp", tp)
    h, d = m.hidden, m.d_attn
    f = m.ffn or 4 * h
    dense_share = (m.layers - m.moe_layers) / m.layers
    gemms = [(h * d / t, min(h, d / t)), (h * 2 * m.kv_heads * m.head_dim / t, min(h, 2 * m.kv_heads * m.head_dim / t)),
             (d / t * h, min(h, d / t)),
             (dense_share * h * (m.mlp_matrices - 1) * f / t, min(h, (m.mlp_matrices - 1) * f / t)),
             (dense_share * f / t * h, min(h, f / t))]
    flops = sum(x for x, _ in gemms)
    r = half_width(accelerator, dtype)
    share = sum(x * _width_share(w, r) for x, w in gemms) / flops
    return share * r / (1 - share)


def _run_step(run, eta):
    """The step at large-matrix efficiency ``eta`` × the width factor of each GEMM family (dense at hidden / tp,
    routed experts at their own width)."""
    m, p = _model(run), _plan_of(run.name)
    fe, r = expert_width(m), half_width(run.accelerator, run.dtype)
    return steptime.step_time(p, m, _cluster(run),
                              efficiency=min(eta * _width_share(dense_width(m, p.tp, run.accelerator, run.dtype), r), 1.0),
                              dtype=run.dtype, framework=run.plan["framework"], schedule=run.plan["schedule"],
                              **{k: run.plan[k] for k in ROW_SETTINGS},
                              expert_efficiency=None if fe is None else min(eta * _width_share(fe, r), 1.0))


@lru_cache(maxsize=None)
def _row_eta_inf(name: str):
    """η∞ that makes the step model reproduce one row's measured time, or None when even η = 1 is slower than
    measured: the row's traffic is outside the model (:func:`outside_rows`). Solved in x = 1/η, where the step is
    piecewise linear and rising (compute ∝ x; exposed traffic flat, or falling as compute hides it)."""
    r = published_runs.get(name)
    share = _width_share(dense_width(r.model, r.plan["tp"], r.accelerator, r.dtype), half_width(r.accelerator, r.dtype))
    if _run_step(r, 1 / share).seconds > r.step_seconds:                     # a dense η of 1 is still too slow
        return None
    x = units.rising_root(lambda x: _run_step(r, 1 / x).seconds - r.step_seconds, share, 1 / 0.02,
                          tol=1e-12 * r.step_seconds)
    return 1 / x


#: FP8 scalings the fitted format effect stands for: one scale per tensor (Transformer Engine's delayed or current,
#: torchao's tensorwise) or unstated. torchao's row-wise scaling computes a scale per row of each operand in kernels
#: of its own: its rows are left out of the fit, predicted as tensor-wise and scored like the rest.
PRICED_FP8_SCALING = (None, "tensorwise")


def _steps(exclude_families=(), fittable=False) -> list:
    drop = set(exclude_families)
    return [r for r in published_runs.runs() if r.fully_specified and r.family not in drop and (not fittable or (
        _row_eta_inf(r.name) is not None and r.plan["fp8_scaling"] in PRICED_FP8_SCALING))]


def outside_rows() -> tuple:
    """Ids of the step rows the model cannot reproduce at any efficiency ≤ 1 — its exposed traffic alone is longer
    than the measured step (MoE rows whose all-to-all a vendor hides in ways the model does not price, a DeepSpeed
    2021 ZeRO-3 row whose exposed gathers alone nearly fill its step). Left out of the fit, scored like the rest."""
    return tuple(r.name for r in _steps() if _row_eta_inf(r.name) is None)


def twins() -> tuple:
    """Rows the model cannot tell apart (one plan, model, cluster, format, framework, schedule, overlap flag) measured
    at different times: ((names, least worst |error|), …), widest first. A model giving a configuration one answer
    misses a row of a group by at least (slowest − fastest) / (slowest + fastest) (at their harmonic mean).
    Megatron-Bridge 26.02 and 26.02.01 print one Qwen3-30B-A3B configuration at 51.3 s and 28.9 s a step:

    >>> [round(bound, 3) for names, bound in twins() if "mb2602-qwen3-30b-a3b-h100-16-fp8" in names]
    [0.278]
    """
    groups: dict = {}
    for r in _steps():
        groups.setdefault((_plan_of(r.name), _model(r).name, _model(r).seq, r.system or r.accelerator.name, r.n_gpus,
                           r.dtype, *(r.plan[k] for k in ("framework", "schedule", *ROW_SETTINGS))), []).append(r)
    out = [(tuple(sorted(r.name for r in g)), (max(t) - min(t)) / (max(t) + min(t)))
           for g in groups.values() for t in [[r.step_seconds for r in g]] if max(t) > min(t)]
    return tuple(sorted(out, key=lambda x: -x[1]))


@lru_cache(maxsize=None)
def _effects(exclude_families: tuple):
    """Median polish of log η∞ = generation + format + framework over the rows left (BF16 the reference format,
    frameworks centred on their median)."""
    rows = _steps(exclude_families, fittable=True)
    if not rows:
        raise ValueError(f"no published step rows left after leaving out {', '.join(exclude_families)}")
    y = {r.name: math.log(_row_eta_inf(r.name)) for r in rows}
    keys = {r.name: (generation(r.accelerator), r.dtype, r.plan["framework"], model_kind(r.model)) for r in rows}
    eff = [dict(), dict(), dict(), dict()]
    for _ in range(20):
        for j in range(4):
            groups: dict = {}
            for n, k in keys.items():
                rest = y[n] - sum(eff[i].get(k[i], 0.0) for i in range(4) if i != j)
                groups.setdefault(k[j], []).append(rest)
            eff[j] = {g: units.median(v) for g, v in groups.items()}
            # BF16 the reference format, frameworks centred on their median, dense models the reference kind
            shift = (eff[1].get("bf16", 0.0) if j == 1 else units.median(eff[2].values()) if j == 2
                     else eff[3].get("dense", 0.0) if j == 3 else 0.0)
            eff[j] = {g: v - shift for g, v in eff[j].items()}
    return eff[0], eff[1], eff[2], eff[3], tuple(sorted(y))


#: The kinds of model the efficiency is fitted by (:func:`model_kind`).
KINDS = ("dense", "moe", "fine-grained moe")


def model_kind(model) -> str:
    """"dense", "moe" (experts wider than :data:`FINE_GRAINED` hidden widths: dense-sized MLPs routed whole) or
    "fine-grained moe" (many narrow experts: small grouped GEMMs, routing and token permutation, which reach a
    lower share of the peak than a dense model's large GEMMs):

    >>> mixtral = published_runs.get("nemo2502-mixtral-8x7b-b200-64-fp8").model
    >>> model_kind("70B"), model_kind(mixtral), model_kind("DeepSeek-V3")
    ('dense', 'moe', 'fine-grained moe')
    """
    m = models.get(model)
    if not m.is_moe:
        return "dense"
    return "moe" if expert_width(m) > FINE_GRAINED * m.hidden else "fine-grained moe"


def matmul_efficiency(accelerator, width=None, *, dtype="bf16", framework="megatron-core", moe=False,
                      exclude_families=()) -> float:
    """Achievable-matmul efficiency η of ``accelerator`` at ``dtype`` in ``framework`` for per-GPU GEMMs ``width``
    wide (:func:`dense_width`, :func:`expert_width`; None → the large-matrix η∞), fitted on the published step rows minus ``exclude_families``.
    ``moe`` is the model's kind (:func:`model_kind`: one of :data:`KINDS`), or True for "moe" and False for
    "dense"; a kind of mixture with no row left takes the other kind's effect.

    A generation with no row left takes the median generation; a framework with no row left takes the effect of
    the nearest framework it grew from (:func:`chipchain.frameworks.lineage`), else the median; a format with no row
    left raises (the model does not guess an FP8 speed-up).

    >>> 0.5 < matmul_efficiency("A100", framework="megatron-2022") < 0.9
    True
    """
    gens, fmts, fws, kinds, _ = _effects(tuple(sorted(set(exclude_families))))
    g = gens.get(generation(accelerator), units.median(gens.values()))
    if dtype not in fmts:
        if dtype == "bf16" or dtype == "fp16":
            f = 0.0
        else:
            raise ValueError(f"no published {dtype} step rows to fit an efficiency on (after leaving out "
                             f"{', '.join(exclude_families) or 'nothing'})")
    else:
        f = fmts[dtype]
    fw = next((fws[x] for x in frameworks.lineage(framework) if x in fws), 0.0)   # the nearest fitted ancestor
    kind = _check.choice("moe", moe, KINDS) if isinstance(moe, str) else ("moe" if _check.flag("moe", moe) else "dense")
    if kind not in kinds and kind != "dense":        # no row of this kind left: the other kind of MoE, else dense
        kind = next((k for k in KINDS[1:] if k in kinds), "dense")
    eta = math.exp(g + f + fw + kinds.get(kind, 0.0))
    if width is None:
        return eta
    w = _check.positive("width", width)
    return min(eta * _width_share(w, half_width(accelerator, dtype)), 1.0)


def predict_plan(plan, model, cluster="A100", *, dtype="bf16", framework="megatron-core", schedule="1F1B",
            recipe="mixed-adam", efficiency=None, expert_imbalance=1.0, check_memory=True,
            exclude_families=(), ep_overlap=None, ep_dispatch=None) -> steptime.StepTime:
    """:func:`chipchain.steptime.step_time` of ``plan`` at the fitted η (:func:`matmul_efficiency`) unless
    ``efficiency`` is given; with ``check_memory`` a plan whose memory ledger does not fit raises ``ValueError``."""
    m = models.get(model)
    c = systems.cluster(cluster, plan.n_gpus) if not isinstance(cluster, systems.Cluster) else cluster
    fe = expert_width(m)
    if efficiency is None:
        kw = dict(dtype=dtype, framework=framework, moe=model_kind(m), exclude_families=exclude_families)
        eta = matmul_efficiency(c.accelerator, dense_width(m, plan.tp, c.accelerator, dtype), **kw)
        eta_e = None if fe is None else matmul_efficiency(c.accelerator, fe, **kw)
    else:
        eta, eta_e = _check.fraction("efficiency", efficiency), None
    s = steptime.step_time(plan, m, c, efficiency=eta, dtype=dtype, recipe=recipe, framework=framework,
                           schedule=schedule, expert_imbalance=expert_imbalance, ep_overlap=ep_overlap,
                           expert_efficiency=eta_e, ep_dispatch=ep_dispatch)
    if _check.flag("check_memory", check_memory) and not s.fits:
        raise ValueError(f"{plan} does not fit: it needs {s.memory_bytes / 1e9:.1f} GB per GPU on {c.accelerator.name}")
    return s


def predict_step(model, accelerator, n_gpus, *, tp, pp, batch, cp=1, cp_variant="all-gather", ep=1, zero=1,
                 seq=None, microbatch=1, recompute="selective", sequence_parallel=True, virtual_stages=1,
                 dtype="bf16", framework="megatron-core", schedule="1F1B", efficiency=None, expert_imbalance=1.0,
                 check_memory=True) -> steptime.StepTime:
    """Seconds per step of a TP × CP × PP × DP plan of ``batch`` sequences on ``n_gpus`` × ``accelerator`` (DP is
    what is left), by :func:`predict_plan`. Korthikanti et al. 2022's 175B on 64 A100 measured 13.75 s (module doctest)."""
    m = models.get(model)
    if seq is not None and _check.integer("seq", seq) != m.seq:
        m = models.custom(name=m.name, layers=m.layers, hidden=m.hidden, heads=m.heads, seq=seq, vocab=m.vocab,
                          params=m.params, active_params=m.active_params, kv_heads=m.kv_heads, head_dim=m.head_dim)
    n, t, c, p, b, mb = (_check.integer(k, v) for k, v in (("n_gpus", n_gpus), ("tp", tp), ("cp", cp), ("pp", pp),
                                                            ("batch", batch), ("microbatch", microbatch)))
    if n % (t * c * p):
        raise ValueError(f"n_gpus={n} is not a multiple of tp × cp × pp = {t * c * p}")
    dp = n // (t * c * p)
    if b % (dp * mb):
        raise ValueError(f"batch={b} is not a multiple of dp × microbatch = {dp} × {mb}")
    plan = parallel.Plan(tp=t, cp=c, pp=p, dp=dp, ep=ep, zero=zero, microbatches=b // (dp * mb), microbatch=mb,
                         virtual_stages=virtual_stages, sequence_parallel=sequence_parallel, recompute=recompute,
                         cp_variant=cp_variant)
    return predict_plan(plan, m, systems.cluster(accelerator, n), dtype=dtype, framework=framework, schedule=schedule,
                   efficiency=efficiency, expert_imbalance=expert_imbalance, check_memory=check_memory)


def row_prediction(name, exclude_families=(), framework=None, **settings) -> steptime.StepTime:
    """One published step row, or a whole run's stated plan, predicted by the fit without ``exclude_families`` (its own
    family, for scoring); a ``framework`` (:func:`setting_errors`) or :data:`ROW_SETTINGS` ask a what-if."""
    r = published_runs.get(name)
    if not (ok := r.fully_specified or r.plan_stated) or set(settings) - set(ROW_SETTINGS):
        raise ValueError(f"settings {sorted(set(settings) - set(ROW_SETTINGS))} are beyond {ROW_SETTINGS}" if ok else
                         f"{r.name} is neither a fully specified step row nor a run with its plan (kind {r.kind!r})")
    fw = r.plan["framework"] if framework is None else frameworks.get(framework)
    return predict_plan(_plan_of(r.name), _model(r), _cluster(r), dtype=r.dtype, framework=fw, schedule=r.plan["schedule"],
                        check_memory=False, exclude_families=exclude_families, **({k: r.plan[k] for k in ROW_SETTINGS} | settings))


def setting_errors(framework, **settings) -> dict:
    """What a framework's settings are worth: {row: (error as recorded, error with ``settings`` — fields of
    :class:`chipchain.frameworks.Framework` — changed)} over its fully specified rows, each leave-one-family-out.
    DeepSpeed 2021's ZeRO-3 with its gathers hidden at a node's eight NICs, as its ``overlap_comm`` promised:

    >>> now, hidden = setting_errors("deepspeed-2021", dp_overlap=1.0, dp_links="node")["narayanan21-t2-zero3-175b-1536"]
    >>> abs(now) < 0.2 < -hidden
    True
    """
    fw = frameworks.get(framework)
    bad = sorted(set(settings) - {f.name for f in dataclasses.fields(fw)})
    if bad or not settings:
        raise ValueError(f"settings: name fields of a framework to change, not {', '.join(bad) or 'none'}")
    other = dataclasses.replace(fw, **settings)
    return {e.name: (e.error, row_prediction(e.name, (e.family,), other).seconds / e.measured - 1)
            for e in step_errors() if e.framework == fw.name}


@dataclasses.dataclass(frozen=True)
class StepError:
    """One fully specified row predicted leave-one-family-out: measured and predicted s per step, relative error
    (predicted / measured − 1), the η used and the families the fit saw."""

    name: str
    family: str
    accelerator: str
    dtype: str
    framework: str
    measured: float
    predicted: float
    error: float
    efficiency: float
    fitted_on: tuple
    prediction: steptime.StepTime


@lru_cache(maxsize=4)
def step_errors(leave_out="family") -> tuple:
    """:func:`row_prediction` for every fully specified row; ``leave_out`` "family" refits without the row's whole
    family (a paper or a benchmark table), "none" uses every row (in-sample).

    >>> errs = step_errors()
    >>> len(errs) >= 14, all(e.family not in e.fitted_on for e in errs)
    (True, True)
    """
    mode = _check.choice("leave_out", leave_out, ("family", "none"))
    out = []
    for r in _steps():
        drop = (r.family,) if mode == "family" else ()
        p = row_prediction(r.name, drop)
        seen = tuple(sorted({x.family for x in _steps(drop, fittable=True)}))
        out.append(StepError(r.name, r.family, r.accelerator.name, r.dtype, r.plan["framework"], r.step_seconds,
                             p.seconds, p.seconds / r.step_seconds - 1, p.efficiency, seen, p))
    return tuple(out)


def interval(seconds, coverage=0.8) -> tuple:
    """(low, high) seconds that the measured time falls in with about ``coverage`` probability, for a predicted
    ``seconds``: the predicted time over (1 + the leave-one-family-out errors' quantiles).

    >>> lo, hi = interval(10.0)
    >>> lo < 10.0 < hi
    True
    """
    t = _check.positive("seconds", seconds)
    q = _check.fraction("coverage", coverage)
    errs = sorted(e.error for e in step_errors())
    k = len(errs) - 1

    def quantile(x):
        j = int(math.floor(x * k))
        return errs[j] + (errs[min(j + 1, k)] - errs[j]) * (x * k - j)
    return t / (1 + quantile(1 - (1 - q) / 2)), t / (1 + quantile((1 - q) / 2))


def family_summary() -> dict:
    """Per family: (rows, median |error|, worst |error|) of the leave-one-family-out predictions."""
    out: dict = {}
    for e in step_errors():
        out.setdefault(e.family, []).append(abs(e.error))
    return {f: (len(v), units.median(v), max(v)) for f, v in out.items()}
