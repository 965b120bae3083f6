"""The running example: one training run, from chip to nation, in seven steps.

A dense 175 B-parameter GPT-style model trained on 2 T tokens with 1,024 A100 GPUs (seed 000's walkthrough). The
source rounds the A100's 312 TFLOP/s BF16 dense peak to 3e14 FLOP/s; that rounding is kept as the default so the
book can reproduce the source's figures, and every input can be overridden::

    >>> w = Walkthrough()
    >>> f"{w.step2_compute().flops:.2g}"
    '2.1e+24'
    >>> round(w.step3_time().days[0.5])
    158

Each step method computes its numbers with the module that owns the idea (``compute``, ``memory``, ``parallel``,
``reliability``, ``power``) and returns a small result object; :meth:`Walkthrough.ledger` collects them.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from . import _check, compute
from .units import DAY

__all__ = ["Walkthrough", "ComputeStep", "TimeStep", "StatesStep"]


@dataclass(frozen=True)
class StatesStep:
    """Step ①: memory of the model states (weights, gradients, optimizer) before any sharding."""

    bytes_per_param: float
    total_bytes: float
    card_bytes: float
    cards_worth: float          #: total_bytes / card_bytes


@dataclass(frozen=True)
class ComputeStep:
    """Step ②: training compute by C = 6ND."""

    flops: float
    cluster_peak: float         #: FLOP/s of the whole cluster at the assumed per-GPU peak


@dataclass(frozen=True)
class TimeStep:
    """Step ③: wall-clock time at several utilisations."""

    seconds: dict               #: mfu -> seconds
    days: dict                  #: mfu -> days


@dataclass(frozen=True)
class Walkthrough:
    """Inputs of the running example; override any with ``Walkthrough(params=70e9, ...)`` or :meth:`with_`."""

    params: float = 175e9
    tokens: float = 2e12
    n_gpus: int = 1024
    accelerator: str = "A100-SXM-80GB"
    peak_flops: float = 3e14          #: per GPU, FLOP/s; the source's rounding of 312 TFLOP/s
    mfu: float = 0.5
    mfus: tuple = (0.5, 0.3)          #: the utilisations step ③ reports
    bytes_per_param: float = 16.0     #: mixed precision + Adam: 2 + 2 + 12 (Rajbhandari et al. 2020)
    # model shape: GPT-3 175B (Brown et al. 2020, Table 2.1)
    layers: int = 96
    hidden: int = 12288
    heads: int = 96
    seq: int = 2048
    vocab: int = 50257
    # the source's plan: tensor × pipeline × data = 8 × 16 × 8
    tp: int = 8
    pp: int = 16
    dp: int = 8
    gpus_per_node: int = 8

    def __post_init__(self):
        _check.positive("params", self.params)
        _check.positive("tokens", self.tokens)
        _check.integer("n_gpus", self.n_gpus)
        _check.positive("peak_flops", self.peak_flops)
        _check.fraction("mfu", self.mfu)
        for m in self.mfus:
            _check.fraction("mfus", m)
        _check.positive("bytes_per_param", self.bytes_per_param)
        for name in ("layers", "hidden", "heads", "seq", "vocab", "tp", "pp", "dp", "gpus_per_node"):
            _check.integer(name, getattr(self, name))

    def with_(self, **changes) -> "Walkthrough":
        """A copy with some inputs changed (validated again)."""
        return replace(self, **changes)

    @property
    def card(self):
        from . import hardware

        return hardware.get(self.accelerator)

    # --- ① memory of states -----------------------------------------------------------------------------------
    def step1_states(self) -> StatesStep:
        """Model states = bytes per parameter × parameters, compared with one card's memory.

        >>> s = Walkthrough().step1_states()
        >>> s.total_bytes / 1e12, round(s.cards_worth)
        (2.8, 35)
        """
        total = self.bytes_per_param * self.params
        card = self.card.require("memory_bytes")
        return StatesStep(self.bytes_per_param, total, card, total / card)

    # --- ② compute ----------------------------------------------------------------------------------------------
    def step2_compute(self) -> ComputeStep:
        """C = 6·N·D and the cluster's peak, n × peak per GPU (1,024 × 3e14 = 3.072e17 FLOP/s)."""
        return ComputeStep(compute.training_flops(self.params, self.tokens), self.n_gpus * self.peak_flops)

    # --- ③ time -------------------------------------------------------------------------------------------------
    def step3_time(self) -> TimeStep:
        """T = C / (n · peak · MFU) at each utilisation in ``mfus``.

        >>> {m: round(d) for m, d in Walkthrough().step3_time().days.items()}
        {0.5: 158, 0.3: 264}
        """
        c = self.step2_compute().flops
        secs = {m: compute.training_time(c, self.n_gpus, self.peak_flops, m) for m in self.mfus}
        return TimeStep(secs, {m: s / DAY for m, s in secs.items()})

    @property
    def run_seconds(self) -> float:
        """Length of the run at the walkthrough's own ``mfu``."""
        return compute.training_time(self.step2_compute().flops, self.n_gpus, self.peak_flops, self.mfu)

    # --- ④ the parallel plan and ⑤ memory per GPU (chipchain.parallel, chipchain.memory; chapters 4 and 6) ----------

    # --- ⑥ failures over the run (chipchain.reliability; chapter 7) ------------------------------------------------

    # --- ⑦ electricity (chipchain.power; chapter 9) ---------------------------------------------------------------

    # --- the whole ledger (chapter 13) ------------------------------------------------------------------------------
