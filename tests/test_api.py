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
           "years", "achieved_flops_per_gpu"}
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
