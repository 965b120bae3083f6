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
class PlanStep:
    """Step ④: the parallel plan, where its groups sit, its pipeline bubble and its traffic per GPU per step."""

    plan: object                #: chipchain.parallel.Plan
    placement: dict             #: "tp"/"pp"/"dp" -> "intra-node" | "inter-node" | "none"
    microbatches: int
    bubble: float               #: bubble time / ideal time, (p − 1)/m
    idle: float                 #: idle share of the step, (p − 1)/(m + p − 1)
    comm: tuple                 #: chipchain.parallel.CommRow per kind of traffic
    traffic: dict               #: link name -> bytes sent per GPU per step
    memory_per_gpu: float       #: bytes, states + activations
    fits: bool
    warnings: tuple


@dataclass(frozen=True)
class MemoryStep:
    """Step ⑤: memory per GPU — model states fully sharded, under the plan, and activations by recompute choice."""

    states_total: float         #: bytes, all model states
    states_full_sharding: float  #: bytes per GPU, states / n_gpus
    states_plan: float          #: bytes per GPU under TP × PP × DP with ZeRO-1
    activations: dict           #: recompute choice -> bytes per GPU (first pipeline stage)
    card_bytes: float


@dataclass(frozen=True)
class ElectricityStep:
    """Step ⑦: the electricity of the run, with the assumptions that produce it (W, s, J, kWh, $)."""

    gpu_power: float            #: W per GPU (catalog TDP unless overridden)
    host_share: float           #: W per GPU for its share of hosts, network and storage (an assumption)
    pue: float
    price_per_kwh: float        #: $/kWh
    seconds: float              #: run length at the walkthrough's MFU
    facility_power: float       #: W at the meter, PUE · n · (P_gpu + P_host)
    energy: float               #: J at the meter
    kwh: float
    dollars: float
    gpu_only_kwh: float         #: the GPUs alone at their rated power, no host share, PUE 1


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

    def _model(self):
        from . import memory

        return memory.Model("walkthrough", self.params, self.layers, self.hidden, self.heads, self.seq, self.vocab,
                            "the running example's shape (GPT-3 175B, Brown et al. 2020, Table 2.1)")

    def step4_plan(self, global_batch: int = 1536) -> PlanStep:
        """The source's plan TP × PP × DP = 8 × 16 × 8, validated and placed, with ZeRO-1, sequence parallelism and
        selective recomputation (Korthikanti et al. 2022's setting) and ``global_batch`` sequences per step
        (1,536, the GPT-3-class batch of Narayanan et al. 2021, Table 1) in micro-batches of one sequence.

        >>> s = Walkthrough().step4_plan()
        >>> s.plan.n_gpus, s.microbatches, round(s.bubble, 3), s.placement["tp"], s.placement["pp"]
        (1024, 192, 0.078, 'intra-node', 'inter-node')
        >>> {k: round(v / 1e9) for k, v in s.traffic.items()}
        {'NVLink3': 406, 'IB-HDR': 7}
        """
        from . import parallel

        b = _check.integer("global_batch", global_batch)
        if b % self.dp:
            raise ValueError(f"global_batch ({b}) must be divisible by dp ({self.dp})")
        plan = parallel.Plan(tp=self.tp, pp=self.pp, dp=self.dp, zero=1, microbatches=b // self.dp,
                             sequence_parallel=True, recompute="selective")
        a = parallel.analyze(plan, self._model(), self.accelerator, n_gpus=self.n_gpus,
                             gpus_per_node=self.gpus_per_node)
        traffic: dict = {}
        for row in a.comm:
            traffic[row.link] = traffic.get(row.link, 0.0) + row.bytes
        return PlanStep(plan, {k: g.scope for k, g in a.placement.items()}, plan.microbatches, a.bubble, a.idle,
                        tuple(a.comm), traffic, a.ledger.total, a.fit.fits, a.warnings)

    def step5_memory_per_gpu(self, microbatches: int = 192) -> MemoryStep:
        """Memory per GPU: the model states spread over every GPU (ZeRO-3 over all n: 16 B × Ψ / n), the states
        under the 8 × 16 × 8 plan with ZeRO-1, and the first pipeline stage's activations (TP 8 with sequence
        parallelism, micro-batch 1) under each recomputation choice.

        >>> s = Walkthrough().step5_memory_per_gpu()
        >>> round(s.states_full_sharding / 1e9, 2), round(s.states_plan / 1e9, 2)
        (2.73, 7.52)
        >>> {k: round(v / 1e9, 2) for k, v in s.activations.items()}
        {'none': 34.43, 'selective': 10.27, 'full': 0.6}
        """
        from . import memory

        m = self._model()
        total = self.bytes_per_param * self.params
        per_gpu_psi = self.params / (self.tp * self.pp)
        k = self.bytes_per_param - 4.0
        states_plan = memory.zero_bytes_per_gpu(per_gpu_psi, self.dp, 1, k=k)
        acts = {rc: memory.activation_bytes_per_stage(m.seq, 1, m.hidden, m.heads, m.layers, self.pp, self.tp, True,
                                                      rc, microbatches)
                for rc in memory.RECOMPUTE}
        return MemoryStep(total, total / self.n_gpus, states_plan, acts, self.card.require("memory_bytes"))

    # --- ⑥ failures over the run (chipchain.reliability; chapter 7) ------------------------------------------------

    # --- ⑦ electricity (chipchain.power; chapter 9) ---------------------------------------------------------------

    def step7_electricity(self, gpu_power=None, host_share=200.0, pue=1.4, price_per_kwh=0.12) -> ElectricityStep:
        """Energy and electricity bill of the run: E = PUE · n · (P_gpu + P_host) · T, cost = E[kWh] · price.

        ``gpu_power`` W (default: the catalog TDP, 400 W for the A100), ``host_share`` W per GPU (an assumption: half
        the GPU's power; a DGX H100 at its maximum rating implies 575 W per 700 W GPU), ``pue`` (seed 002 uses 1.4),
        ``price_per_kwh`` $/kWh (seed 002's $0.12). T is :attr:`run_seconds` (158 days at 50 % MFU).

        >>> e = Walkthrough().step7_electricity()
        >>> round(e.kwh / 1e6, 2), round(e.dollars / 1e3), round(e.gpu_only_kwh / 1e6, 2)
        (3.27, 392, 1.56)
        """
        from . import power
        from .units import kWh

        p_gpu = self.card.require("tdp") if gpu_power is None else _check.positive("gpu_power", gpu_power)
        t = self.run_seconds
        energy = power.run_energy(self.n_gpus, p_gpu, t, host_share=host_share, pue=pue)
        gpu_only = power.run_energy(self.n_gpus, p_gpu, t)
        price = _check.nonnegative("price_per_kwh", price_per_kwh)
        facility = power.facility_power(self.n_gpus, p_gpu, host_share, pue)
        return ElectricityStep(p_gpu, float(host_share), float(pue), price, t, facility, energy, energy / kWh,
                               power.electricity_cost(energy, price), gpu_only / kWh)


    # --- the whole ledger (chapter 13) ------------------------------------------------------------------------------
