"""Organising the work: experiment tiers (screen many ideas small, confirm few at scale) and training recipes as
versioned configuration (:class:`TrainingRecipe`, saved to and loaded from JSON, and diffed).

>>> round(tier_plan(1e6, [100, 2_000, 100_000], [0.1, 0.2]).ideas[0])
435
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from . import _check, _data, compute

__all__ = ["experiment_gpu_hours", "TierPlan", "tier_plan", "Stage", "TrainingRecipe", "diff_recipes",
           "MupRule", "mup_rules", "SpikeRecovery", "spike_recovery", "step_mfu",
           "troubleshooting"]


def experiment_gpu_hours(params, tokens, peak_flops, mfu) -> float:
    """GPU-hours of one training experiment: 6·N·D / (peak · MFU) / 3600 (see :mod:`chipchain.compute`).

    A 1B-parameter model on 20B tokens on A100s (312 TFLOP/s BF16 dense) at 40 % MFU:

    >>> round(experiment_gpu_hours(1e9, 20e9, 312e12, 0.4))
    267
    """
    return compute.gpu_hours(compute.training_flops(params, tokens), peak_flops, mfu)


@dataclass(frozen=True)
class TierPlan:
    """Outcome of :func:`tier_plan`."""

    ideas: tuple                #: ideas entering each tier, smallest tier first
    budget_share: tuple         #: fraction of the budget each tier takes
    per_idea_gpu_hours: float   #: expected GPU-hours per idea screened
    full_scale_only: float      #: ideas the budget would test at the largest tier alone


def tier_plan(budget, costs, promote) -> TierPlan:
    """How many ideas a budget can take through a funnel of experiment tiers.

    ``budget`` (GPU-hours); ``costs`` the GPU-hours of one experiment at each tier, smallest first; ``promote`` the
    fraction of ideas passed from each tier to the next (one fewer entry than ``costs``). Each idea screened costs
    c₁ + p₁·c₂ + p₁p₂·c₃ + … in expectation, so ideas screened = budget / that. Returns the ideas entering each tier,
    the budget share each tier takes, and — for comparison — how many ideas the budget would test at full scale alone
    (a :class:`TierPlan`).

    >>> plan = tier_plan(1e6, [100, 2_000, 100_000], [0.1, 0.2])
    >>> round(plan.ideas[0]), round(plan.ideas[-1], 1), plan.full_scale_only
    (435, 8.7, 10.0)
    """
    b = _check.positive("budget", budget)
    cs = [_check.positive("costs", c) for c in costs]
    ps = [_check.fraction("promote", p) for p in promote]
    if len(cs) < 1 or len(ps) != len(cs) - 1:
        raise ValueError(f"promote must have one entry fewer than costs ({len(cs)}), got {len(ps)}")
    reach = [1.0]
    for p in ps:
        reach.append(reach[-1] * p)
    per_idea = sum(r * c for r, c in zip(reach, cs))
    n = b / per_idea
    ideas = [n * r for r in reach]
    shares = [n * r * c / b for r, c in zip(reach, cs)]
    return TierPlan(tuple(ideas), tuple(shares), per_idea, b / cs[-1])


# --- recipes as configuration --------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """One stage of a training recipe: a token budget with its own data mixture (weights summing to 1)."""

    name: str
    tokens: float
    mixture: dict

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"stage name must be a non-empty string, got {self.name!r}")
        _check.positive("tokens", self.tokens)
        _mixture(f"mixture of stage {self.name!r}", self.mixture)


def _mixture(name, mix):
    if not isinstance(mix, dict) or not mix:
        raise ValueError(f"{name} must be a non-empty dict source -> weight, got {mix!r}")
    for k, v in mix.items():
        _check.probability(f"{name}[{k!r}]", v)
    if abs(sum(mix.values()) - 1.0) > 1e-9:
        raise ValueError(f"{name} weights must sum to 1, got {sum(mix.values())!r}")


@dataclass(frozen=True)
class TrainingRecipe:
    """A training recipe as a record that can be saved, loaded, compared: learning rate and its schedule, warm-up,
    batch-size schedule, and the data stages with their mixtures.

    >>> r = TrainingRecipe("demo", peak_lr=3e-4, min_lr=3e-5, warmup_steps=2000, schedule="cosine",
    ...                    batch_schedule=((0, 1024), (10_000, 2048)),
    ...                    stages=(Stage("main", 1.8e12, {"web": 0.8, "code": 0.2}),))
    >>> TrainingRecipe.from_json(r.to_json()) == r
    True
    >>> diff_recipes(r, r.replace(peak_lr=2e-4))
    [('peak_lr', 0.0003, 0.0002)]
    """

    name: str
    peak_lr: float
    min_lr: float
    warmup_steps: int
    schedule: str = "cosine"
    batch_schedule: tuple = ((0, 1024),)      #: (from step, sequences per batch), steps increasing
    seq: int = 2048                         #: sequence length, tokens
    stages: tuple = ()
    seed: int = 0
    notes: str = ""

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        _check.positive("peak_lr", self.peak_lr)
        _check.nonnegative("min_lr", self.min_lr)
        if self.min_lr > self.peak_lr:
            raise ValueError(f"min_lr ({self.min_lr}) must not exceed peak_lr ({self.peak_lr})")
        _check.integer("warmup_steps", self.warmup_steps, minimum=0)
        _check.choice("schedule", self.schedule, ("cosine", "linear", "constant", "wsd"))
        _check.integer("seq", self.seq)
        _check.integer("seed", self.seed, minimum=0)
        steps = []
        for item in self.batch_schedule:
            try:
                step, batch = item
            except (TypeError, ValueError):
                raise ValueError(f"batch_schedule entries must be (step, batch) pairs, got {item!r}") from None
            steps.append(_check.integer("batch_schedule step", step, minimum=0))
            _check.integer("batch_schedule batch", batch)
        if not steps or steps[0] != 0 or steps != sorted(set(steps)):
            raise ValueError(f"batch_schedule must start at step 0 with increasing steps, got {self.batch_schedule!r}")
        for s in self.stages:
            if not isinstance(s, Stage):
                raise ValueError(f"stages must hold Stage objects, got {s!r}")
        object.__setattr__(self, "batch_schedule", tuple((int(a), int(b)) for a, b in self.batch_schedule))
        object.__setattr__(self, "stages", tuple(self.stages))

    @property
    def total_tokens(self) -> float:
        """Tokens over all stages."""
        return float(sum(s.tokens for s in self.stages))

    def replace(self, **changes) -> "TrainingRecipe":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["batch_schedule"] = [list(x) for x in self.batch_schedule]
        d["stages"] = [{"name": s.name, "tokens": s.tokens, "mixture": dict(s.mixture)} for s in self.stages]
        return d

    def to_json(self) -> str:
        """The recipe as JSON text (keys sorted, so that two saves of one recipe are byte-identical)."""
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_dict(cls, d) -> "TrainingRecipe":
        if not isinstance(d, dict):
            raise ValueError(f"a recipe must be a JSON object, got {type(d).__name__}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(d) - names
        if unknown:
            raise KeyError(_check.nearest_message(sorted(unknown)[0], sorted(names), "recipe field"))
        d = dict(d)
        d["batch_schedule"] = tuple(tuple(x) for x in d.get("batch_schedule", ((0, 1024),)))
        d["stages"] = tuple(Stage(**s) for s in d.get("stages", ()))
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> "TrainingRecipe":
        return cls.from_dict(json.loads(text))

    def save(self, path) -> None:
        """Write the recipe to ``path`` as JSON."""
        Path(path).write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path) -> "TrainingRecipe":
        """Read a recipe written by :meth:`save`."""
        return cls.from_json(Path(path).read_text(encoding="utf-8"))


def diff_recipes(a: TrainingRecipe, b: TrainingRecipe) -> list:
    """Differences between two recipes as (path, value in a, value in b), with nested paths such as
    ``stages[0].mixture.code``; an empty list means the recipes are the same.

    >>> r = TrainingRecipe("x", 3e-4, 3e-5, 100, stages=(Stage("s", 1e9, {"web": 1.0}),))
    >>> diff_recipes(r, r.replace(stages=(Stage("s", 1e9, {"web": 0.9, "code": 0.1}),)))
    [('stages[0].mixture.code', None, 0.1), ('stages[0].mixture.web', 1.0, 0.9)]
    """
    for name, r in (("a", a), ("b", b)):
        if not isinstance(r, TrainingRecipe):
            raise ValueError(f"{name} must be a TrainingRecipe, got {type(r).__name__}")
    out = []

    def walk(path, x, y):
        if isinstance(x, dict) and isinstance(y, dict):
            for k in sorted(set(x) | set(y)):
                walk(f"{path}.{k}" if path else k, x.get(k), y.get(k))
        elif isinstance(x, list) and isinstance(y, list) and x and y and isinstance(x[0], dict):
            for i in range(max(len(x), len(y))):
                walk(f"{path}[{i}]", x[i] if i < len(x) else None, y[i] if i < len(y) else None)
        elif x != y:
            out.append((path, x, y))

    walk("", a.to_dict(), b.to_dict())
    return out


# --- hyperparameter transfer, loss spikes, measured MFU -------------------------------------------------------------

@dataclass(frozen=True)
class MupRule:
    """How one kind of weight scales under µP with Adam when the width grows from ``base_width`` to ``width``
    (Yang et al. 2022, Table 3): factors that multiply the values tuned on the small model."""

    weights: str            #: which weights ("input and biases", "hidden", "output")
    init_std: float         #: multiplier of the initialisation standard deviation
    adam_lr: float          #: multiplier of the Adam learning rate


def mup_rules(base_width, width) -> tuple[MupRule, ...]:
    """µP's rules for Adam, as multipliers from a proxy of width ``base_width`` to a target of ``width``
    (Yang et al. 2022, Table 3, with r = base_width / width):

    * input weights (embeddings) and all biases and norms: initialisation and learning rate unchanged;
    * hidden weights: initialisation variance ∝ 1/fan_in, so its standard deviation × √r; Adam learning rate × r;
    * output weights: variance ∝ 1/fan_in², standard deviation × r; Adam learning rate × r.

    With these, the optimal learning rate, initialisation scale and schedule tuned on the proxy carry over; under
    the standard parametrisation they drift with width and must be re-tuned at every size.

    >>> [(r.weights, r.init_std, r.adam_lr) for r in mup_rules(768, 12288)]
    [('input and biases', 1.0, 1.0), ('hidden', 0.25, 0.0625), ('output', 0.0625, 0.0625)]
    """
    b = _check.positive("base_width", base_width)
    w = _check.positive("width", width)
    r = b / w
    return (MupRule("input and biases", 1.0, 1.0), MupRule("hidden", r ** 0.5, r), MupRule("output", r, r))


@dataclass(frozen=True)
class SpikeRecovery:
    """What the "roll back and skip" response to loss spikes costs over a run."""

    skipped_tokens: float       #: tokens never trained on
    skipped_fraction: float     #: of the run's tokens
    repeated_steps: float       #: steps computed twice (rolled back)
    repeated_fraction: float    #: of the run's steps


def spike_recovery(spikes, rollback_steps, skipped_batches, batch_tokens, total_tokens, total_steps) -> SpikeRecovery:
    """Cost of answering each of ``spikes`` loss spikes by restarting ``rollback_steps`` before it and skipping
    ``skipped_batches`` batches of ``batch_tokens`` tokens (PaLM's response, Chowdhery et al. 2022 §5.1):
    skipped tokens = spikes × batches × batch_tokens; repeated steps = spikes × rollback_steps; each also as a
    fraction of the run's ``total_tokens`` and ``total_steps``.

    PaLM 540B: about 20 spikes, about 100 steps back, 200–500 batches of up to 2,048 × 2,048 tokens, 780B tokens:

    >>> s = spike_recovery(20, 100, 500, 2048 * 2048, 780e9, 255_000)
    >>> round(s.skipped_fraction, 3), round(s.repeated_fraction, 4)
    (0.054, 0.0078)
    """
    k = _check.nonnegative("spikes", spikes)
    back = _check.nonnegative("rollback_steps", rollback_steps)
    skip = _check.nonnegative("skipped_batches", skipped_batches)
    bt = _check.positive("batch_tokens", batch_tokens)
    d = _check.positive("total_tokens", total_tokens)
    steps = _check.positive("total_steps", total_steps)
    tokens = k * skip * bt
    if tokens > d:
        raise ValueError(f"skipped tokens ({tokens:.3g}) exceed total_tokens ({d:.3g}): check the arguments")
    return SpikeRecovery(tokens, tokens / d, k * back, min(1.0, k * back / steps))


def step_mfu(tokens_per_second, flops_per_token, n_gpus, peak_flops) -> float:
    """MFU measured on a running job: MFU = r · F / (n · peak). ``tokens_per_second`` r is what to time — tokens
    per step over the wall time of a step, averaged over many steps, excluding evaluation and checkpoint pauses;
    ``flops_per_token`` F is what to count — 6N plus attention, 12·l·d·s (:func:`calibration.flops_per_token`),
    never the recomputed FLOPs (that is hardware utilisation); ``n_gpus`` n and the dense ``peak_flops`` per chip.

    PaLM 540B: 238.3K tokens/s on 6,144 TPU v4 chips (275 TFLOP/s BF16), 3.28 TFLOP per token → 46.2 %:

    >>> round(step_mfu(238.3e3, 3.2779e12, 6144, 275e12), 3)
    0.462
    """
    r = _check.positive("tokens_per_second", tokens_per_second)
    f = _check.positive("flops_per_token", flops_per_token)
    n = _check.integer("n_gpus", n_gpus)
    p = _check.positive("peak_flops", peak_flops)
    u = r * f / (n * p)
    if u > 1:
        raise ValueError(f"the measured rate implies MFU {u:.2f} > 1: check tokens_per_second, flops_per_token, "
                         "n_gpus and peak_flops (dense peak, per chip)")
    return u


# --- when a run misbehaves ---------------------------------------------------------------------------------------
def troubleshooting() -> tuple:
    """Seed 004 §6's troubleshooting table (``data/troubleshooting.csv``: symptom, likely causes, what to measure,
    what to do, the chapter that explains the cause) as dicts of strings, in file order: the one reader of that
    file (the table: :func:`chipchain.views.platform.troubleshooting`).

    >>> len(troubleshooting())
    6
    """
    return _data.rows("troubleshooting.csv")
