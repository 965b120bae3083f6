"""The public API speaks one language (CONTRIBUTING.md, "One name for one quantity"), checked over every module.

- No public parameter ends in ``_`` (an error message would name an argument the caller cannot type).
- Names the naming table retired (``peak_flops_per_gpu``, ``n_accelerators``, ``recipe_name``, ``hours`` …) are
  gone from public signatures.
- A function that takes a model, accelerator, link or cluster resolves it through a registry (or hands it to a
  function that does), so a name that works in one chapter works everywhere: checked by calling every such
  function whose other arguments have defaults with a canonical name and with an alias, and comparing.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import chipchain

RETIRED = {"peak_flops_per_gpu", "peak", "n_accelerators", "recipe_name", "model_name", "restart_time", "hours",
           "years", "achieved_flops_per_gpu",
           # one name per batch (issue 29): micro-batch size `microbatch`, sequences per step `batch`
           "global_batch", "microbatch_size", "micro_batch", "batch_size", "n_micro"}
#: `stage` is not the ZeRO stage (that is `zero`) nor a pipeline stage (`pp`): only a stage of a training run
STAGE_MEANS_A_RUN_PHASE = {"chipchain.deepseek.stage_gpu_hours"}
#: `overlap` is the generic share of any communication hidden; the data-parallel all-reduce's share is `dp_overlap`
GENERIC_OVERLAP = {"chipchain.comms.exposed_seconds"}
RECORD_ARGS = {"model": ("GPT-3-175B", "175B"), "accelerator": ("A100-SXM-80GB", "a100"),
               "link": ("IB-NDR", "NDR400"), "cluster": ("DGX-A100", "A100"), "system": ("DGX-H100", "dgx h100")}


def _public_functions():
    out = []
    for info in pkgutil.walk_packages(chipchain.__path__, prefix="chipchain."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        mod = importlib.import_module(info.name)
        for name, fn in vars(mod).items():
            if name.startswith("_") or not inspect.isfunction(fn) or fn.__module__ != mod.__name__:
                continue
            out.append((f"{mod.__name__}.{name}", fn))
        for cname, cls in vars(mod).items():
            if inspect.isclass(cls) and cls.__module__ == mod.__name__ and not cname.startswith("_"):
                for name, fn in vars(cls).items():
                    if inspect.isfunction(fn) and not name.startswith("_"):
                        out.append((f"{mod.__name__}.{cname}.{name}", fn))
    return sorted(out, key=lambda x: x[0])


FUNCTIONS = _public_functions()


def test_the_library_has_public_functions():
    assert len(FUNCTIONS) > 150


@pytest.mark.parametrize("qualname,fn", FUNCTIONS, ids=[q for q, _ in FUNCTIONS])
def test_parameter_names_follow_the_naming_table(qualname, fn):
    params = list(inspect.signature(fn).parameters)
    trailing = [p for p in params if p.endswith("_") and not p.startswith("_")]
    retired = [p for p in params if p in RETIRED]
    assert not trailing, f"{qualname} has parameters ending in '_': {trailing}"
    assert not retired, f"{qualname} uses retired names {retired} (see CONTRIBUTING.md)"
    assert "stage" not in params or qualname in STAGE_MEANS_A_RUN_PHASE, \
        f"{qualname} takes `stage`: the ZeRO stage is `zero` (CONTRIBUTING.md)"
    assert "overlap" not in params or qualname in GENERIC_OVERLAP, \
        f"{qualname} takes `overlap`: the data-parallel all-reduce's hidden share is `dp_overlap` (CONTRIBUTING.md)"


def _records():
    import dataclasses
    out = []
    for info in pkgutil.walk_packages(chipchain.__path__, prefix="chipchain."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        mod = importlib.import_module(info.name)
        for cname, cls in vars(mod).items():
            if inspect.isclass(cls) and cls.__module__ == mod.__name__ and dataclasses.is_dataclass(cls):
                out.append((f"{mod.__name__}.{cname}", [f.name for f in dataclasses.fields(cls)]))
    return sorted(out)


RECORDS = _records()


@pytest.mark.parametrize("qualname,fields", RECORDS, ids=[q for q, _ in RECORDS])
def test_record_fields_follow_the_naming_table(qualname, fields):
    # a record's field is read by name as often as a parameter is passed: Plan.microbatch_size was Plan's name
    # for what every function calls `microbatch`
    retired = [f for f in fields if f in RETIRED or f in ("stage", "overlap")]
    assert not retired, f"{qualname} has fields with retired names {retired} (see CONTRIBUTING.md)"


def test_the_renamed_arguments_are_the_ones_the_library_uses():
    from chipchain import activations, comms, memory, parallel, plans, predictor, steptime, traffic
    assert "batch" in inspect.signature(predictor.predict_step).parameters                # the global batch
    # the step model's η is an efficiency, never an "mfu" (issue 29): MFU is its 6ND/(T·n·peak) output
    for fn in (steptime.step_time, steptime.data_parallel_step, predictor.predict_plan, predictor.predict_step,
               plans.search, plans.analyze):
        assert "efficiency" in inspect.signature(fn).parameters and "mfu" not in inspect.signature(fn).parameters
    assert list(inspect.signature(activations.activation_bytes_per_layer).parameters)[1] == "microbatch"
    assert list(inspect.signature(memory.sharded_state_breakdown).parameters)[2] == "zero"
    assert list(inspect.signature(traffic.zero_traffic_factor).parameters) == ["zero"]
    assert "dp_overlap" in inspect.signature(comms.dp_scaling_efficiency).parameters
    assert parallel.Plan(tp=1, pp=1, dp=2, microbatch=4).batch == 4 * 2              # microbatch × microbatches × dp


def _callable_with_one_record(fn):
    sig = inspect.signature(fn)
    required = [p for p in sig.parameters.values()
                if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if len(required) == 1 and required[0].name in RECORD_ARGS:
        return required[0].name
    return None


SINGLE = [(q, fn, _callable_with_one_record(fn)) for q, fn in FUNCTIONS if _callable_with_one_record(fn)]


@pytest.mark.parametrize("qualname,fn,arg", SINGLE, ids=[q for q, _, _ in SINGLE])
def test_names_and_aliases_give_the_same_answer(qualname, fn, arg):
    canonical, alias = RECORD_ARGS[arg]
    try:
        a = fn(**{arg: canonical})
    except ValueError as e:          # a figure the part lacks, named: acceptable, but then the alias must agree
        with pytest.raises(ValueError, match=str(e)[:30].replace("(", r"\(").replace(")", r"\)")):
            fn(**{arg: alias})
        return
    b = fn(**{arg: alias})
    if hasattr(a, "equals"):
        assert a.equals(b)
    else:
        assert repr(a) == repr(b)


def _public_names():
    """(name, module, kind) of every public class and function, where it is defined."""
    out = []
    for info in pkgutil.walk_packages(chipchain.__path__, prefix="chipchain."):
        if any(part.startswith("_") for part in info.name.split(".")[1:]):
            continue
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if not name.startswith("_") and (inspect.isclass(obj) or inspect.isfunction(obj)) \
                    and obj.__module__ == mod.__name__:
                out.append((name, mod.__name__, "class" if inspect.isclass(obj) else "function"))
    return out


#: the registries' shared protocol, and pairs the issue tracker keeps open (compute.implied_mfu is the core and
#: calibration's the run-level wrapper; schedules.idle_share against parallel.idle_share is the pipeline-bubble row)
SHARED_FUNCTIONS = {"get", "names", "implied_mfu", "idle_share", "measure"}


def test_a_class_name_means_one_thing():
    # two `Run`s, `Placement`s, `Timeline`s (issue 29): a reader who meets the name should meet one idea
    seen = {}
    for name, mod, kind in _public_names():
        if kind == "class":
            seen.setdefault(name, []).append(mod)
    repeated = {n: ms for n, ms in seen.items() if len(ms) > 1}
    assert not repeated, repeated


def test_a_function_name_means_one_thing_below_the_views():
    # a view may share its table's name (views.power.facts is power.facts as a DataFrame); below the views two
    # functions of one name are two ideas (all_nodes returned servers in systems and process nodes in moore)
    seen = {}
    for name, mod, kind in _public_names():
        # the measurement layer (labs) included: it converts its timings with the library's functions
        if kind == "function" and not mod.startswith("chipchain.views") \
                and name not in SHARED_FUNCTIONS:
            seen.setdefault(name, []).append(mod)
    repeated = {n: ms for n, ms in seen.items() if len(ms) > 1}
    assert not repeated, repeated
