"""Published training runs: one record per run or configuration in ``data/published_runs.csv`` (the utilisation a
run's GPU-hours imply is :func:`chipchain.calibration.implied_mfu`).

Each row has its source with the table or section, a tier (A: every input and target stated in a primary source;
B: something assumed, rounded or not re-read) and a caveat column that flags circular figures. ``kind`` is ``run``
(a whole training run: GPU-hours), ``step`` (a fully specified configuration with a measured time per iteration)
or ``config`` (a configuration whose schedule is not stated)::

    >>> r = get("llama2-70b")
    >>> r.tier, r.accelerator.name, r.gpu_hours
    ('A', 'A100-SXM-80GB', 1720320.0)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, _data, frameworks, hardware, models

__all__ = ["Run", "RUNS", "runs", "get", "names"]


@dataclass(frozen=True)
class Run(_data.Record):
    """One published run or configuration (counts, FLOP/s-free: the accelerator is a catalog record)."""

    name: str
    run: str
    family: str
    kind: str
    model: object               #: a models.Model, or None when the row gives no shape
    params: float
    active_params: float
    tokens: object              #: count, or None for a configuration
    accelerator: hardware.Accelerator
    system: str                 #: the node the run used when it is not the part's default (GB200-NVL72), or ""
    dtype: str
    n_gpus: object
    gpu_hours: object
    wall_days: object
    reported: str
    reported_mfu: object        #: fraction as the source states it, or None
    mfu_convention: str
    mfu_note: str               #: why the stated MFU differs from the one the GPU-hours imply
    step_seconds: object        #: s per iteration as published, or None
    plan: dict                  #: tp, cp, pp, dp, ep, zero, batch, seq, microbatch, virtual_stages, recompute,
    #: sequence_parallel, cp_variant, framework, schedule, fp8_scaling (how an FP8 recipe scales its tensors:
    #: "tensorwise" or torchao's "rowwise"), ep_dispatch (how its all-to-all reaches experts on other nodes, as its
    #: recipe sets the dispatcher: "per-expert" or "per-node"), None where the source does not state it
    location: str
    tier: str
    caveat: str
    bibkey: str
    checked: str
    source: str
    aliases: tuple = ()

    @property
    def fully_specified(self) -> bool:
        """A step row with a measured time and every input :func:`chipchain.calibration.predict_step` needs."""
        return self.kind == "step" and self.step_seconds is not None and self.model is not None

    @property
    def plan_stated(self) -> bool:
        """A whole run whose source states its shape and plan: model, TP, PP, DP, batch, sequence length,
        micro-batch and framework (what the step model needs; recomputation, when unstated, is the least that fits)."""
        return self.kind == "run" and self.model is not None and all(
            self.plan[k] is not None for k in ("tp", "pp", "dp", "batch", "seq", "microbatch", "framework"))


def _value(text: str):
    """A shape cell's value: ``true``/``false`` (a flag such as ``tied_embeddings``), a whole number, or a word (the
    ``attention`` kind, e.g. ``mla``)."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    return int(text) if low.lstrip("-").isdigit() else low


def _model(cell: str):
    """The ``model`` cell: a catalog name, or an inline shape ``name=…;layers=…;…;tied_embeddings=true``."""
    if not cell:
        return None
    if "=" not in cell:
        return models.get(cell)
    kv = dict(p.split("=") for p in cell.split(";"))
    name = kv.pop("name")
    return models.custom(name=name, **{k: _value(v) for k, v in kv.items()})


def _row(row: dict) -> Run:
    i = _data.optional_int

    def f(r, col):
        text = (r.get(col) or "").strip()
        return float(text) if text else None
    plan = {k: i(row, k) for k in ("tp", "pp", "dp", "batch", "seq", "microbatch", "virtual_stages", "cp", "ep",
                                   "zero", "offload_layers")}
    plan["recompute"] = row["recompute"] or None
    ov = (row.get("ep_overlap") or "").strip()
    plan["ep_overlap"] = {"true": True, "false": False, "": None}[ov]
    plan["recompute_modules"] = tuple(x.strip() for x in (row.get("recompute_modules") or "").split(";") if x.strip())
    plan["sequence_parallel"] = row["sequence_parallel"] == "true"
    for k, default in (("cp_variant", "all-gather"), ("framework", None), ("schedule", "1F1B"), ("fp8_scaling", None),
                       ("ep_dispatch", None)):
        plan[k] = (row.get(k) or "").strip() or default
    if plan["ep_dispatch"] is not None:
        _check.choice(f"ep_dispatch of {row['id']}", plan["ep_dispatch"], frameworks.EP_DISPATCH)
    return Run(row["id"], row["run"], row["family"], row["kind"], _model(row["model"]), f(row, "params"),
               f(row, "active_params"), f(row, "tokens"), hardware.get(row["accelerator"]), row.get("system") or "",
               row["dtype"],
               i(row, "n_gpus"), f(row, "gpu_hours"), f(row, "wall_days"), row["reported"], f(row, "reported_mfu"),
               row["mfu_convention"], row["mfu_note"], f(row, "step_seconds"), plan, row["location"], row["tier"], row["caveat"],
               row["bibkey"], row["checked"], row["source"])


def _build():
    return (_row(r) for r in _data.rows("published_runs.csv"))


#: every row of ``data/published_runs.csv``, looked up by id (``KeyError`` with the nearest ids for an unknown one)
RUNS = _data.Registry("published run", Run, _build, argument="name")


def runs() -> tuple:
    """Every row of ``data/published_runs.csv`` as a :class:`Run`, in file order."""
    return tuple(RUNS.all())


def get(name) -> Run:
    """One run by its id (a :class:`Run` passes through); ``KeyError`` with the nearest ids for an unknown one.

    >>> get("palm-540b").n_gpus
    6144
    """
    return RUNS.get(name)


def names() -> list:
    """The ids of every published run."""
    return RUNS.names()
