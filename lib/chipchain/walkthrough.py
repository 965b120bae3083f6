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
``reliability``, ``power``) and returns a small result object; :meth:`Walkthrough.ledger` collects them, each
row tagged with the chapter that derives it (chapter 13). :func:`source_checks` sets every number the sources state
beside the library's recomputation, and :func:`four_questions` asks the book's four questions of catalog parts::

    >>> round(Walkthrough().effective_flops / 1e17, 3)
    1.536
    >>> sum(not c.agrees for c in source_checks()) > 0
    True
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from . import _check, compute
from .units import DAY

__all__ = ["Walkthrough", "StatesStep", "ComputeStep", "TimeStep", "PlanStep", "MemoryStep", "FailureStep",
           "ElectricityStep", "LedgerRow", "SourceCheck", "source_checks", "source_check_table", "FOUR_QUESTIONS",
           "four_questions", "LEDGER_MODELS", "ledger_view", "ledger_explorer", "plot_time_budget"]


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
class FailureStep:
    """Step ⑥: interruptions over the run, the checkpoint interval, and the time failures cost (s, B, per s)."""

    per_gpu_rate: float         #: interruptions per GPU-second (Llama 3's snapshot unless overridden)
    mtbf: float                 #: s, cluster mean time between interruptions, 1 / (n · rate)
    run_seconds: float          #: s of computing at the walkthrough's MFU
    expected_interruptions: float  #: rate · n · run_seconds
    checkpoint_bytes: float     #: B, params × bytes_per_param
    write_seconds: float        #: s, checkpoint_bytes / write bandwidth
    restart_seconds: float      #: s, detection + restart + reload (an assumption)
    young_interval: float       #: s, √(2CM)
    checkpoint_interval: float  #: s, Daly's interval (the one chosen)
    goodput: float              #: kept progress per wall-clock second at that interval
    wall_seconds: float         #: s, run_seconds / goodput
    lost_seconds: float         #: s, wall_seconds − run_seconds


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
        (1,536, the batch Narayanan et al. 2021 use for GPT-3 175B) in micro-batches of one sequence.

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

    def step6_failures(self, write_bandwidth=50e9, restart_seconds=600.0, per_gpu_rate=None) -> FailureStep:
        """Interruptions over the run, Daly's checkpoint interval and the time lost (chapter 7).

        Rate: Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100 (Dubey et al. 2024, §3.3.4), charged
        per GPU and scaled to ``n_gpus`` — an assumption that A100 clusters fail per GPU as often as that H100
        cluster did. Checkpoint: ``bytes_per_param`` × params (16 B counts gradients too, so it is generous), written
        at ``write_bandwidth`` B/s (an assumed 50 GB/s aggregate); ``restart_seconds`` is an assumed 10 minutes.
        Interval τ by Daly (2006); goodput G = τ / (M·e^{R/M}·(e^{(τ+C)/M} − 1)); lost time = T/G − T.

        >>> f = Walkthrough().step6_failures()
        >>> round(f.mtbf / 3600, 1), round(f.expected_interruptions), round(f.write_seconds)
        (49.5, 77, 56)
        >>> round(f.checkpoint_interval / 60), round(f.goodput, 3), round(f.lost_seconds / 86400, 1)
        (74, 0.972, 4.6)
        """
        from . import reliability

        rate = reliability.llama3_per_gpu_rate() if per_gpu_rate is None else _check.positive("per_gpu_rate",
                                                                                               per_gpu_rate)
        m = reliability.cluster_mtbf(rate, self.n_gpus)
        t = self.run_seconds
        size = reliability.checkpoint_bytes(self.params, self.bytes_per_param)
        c = reliability.write_time(size, write_bandwidth)
        r = _check.nonnegative("restart_seconds", restart_seconds)
        tau = reliability.daly_interval(c, m)
        g = reliability.goodput(tau, c, r, m)
        return FailureStep(rate, m, t, reliability.expected_failures(rate * self.n_gpus, t), size, c, r,
                           reliability.young_interval(c, m), tau, g, t / g, t / g - t)

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
    #: the chapter each step links back to: step -> (notebook stem, chapter number, chapter title)
    STEP_CHAPTERS = {
        1: ("06_memory", 6, "The memory ledger"),
        2: ("01_h100", 1, "One chip: the H100"),
        3: ("11_deepseek", 11, "Same cards, different engineering: DeepSeek"),
        4: ("04_parallelism", 4, "Three ways to cut a model"),
        5: ("06_memory", 6, "The memory ledger"),
        6: ("07_failures", 7, "Failure is the normal state"),
        7: ("09_power", 9, "Electricity, water, land, policy"),
    }
    #: the seven steps' names, in order
    STEP_NAMES = {1: "① memory of states", 2: "② compute", 3: "③ time", 4: "④ parallel plan",
                  5: "⑤ memory per GPU", 6: "⑥ failures", 7: "⑦ electricity"}

    @property
    def effective_flops(self) -> float:
        """Sustained cluster throughput, n · peak · MFU in FLOP/s (1,024 × 3e14 × 0.5 = 1.536e17).

        >>> f"{Walkthrough().effective_flops:.4g}"
        '1.536e+17'
        """
        return self.n_gpus * self.peak_flops * self.mfu

    def ledger_rows(self) -> list:
        """Every step's headline numbers as :class:`LedgerRow` objects, computed by the step methods.

        A step whose method is not available (``step4_plan`` … ``step7_electricity`` are added by the chapters that
        own them) gives one row saying so instead of a number, so the ledger never silently drops a step.

        >>> rows = Walkthrough().ledger_rows()
        >>> [r.text for r in rows if r.quantity.startswith("training compute")]
        ['2.1e24 FLOP']
        """
        from . import units

        rows = []

        def add(step, quantity, value, text):
            rows.append(LedgerRow(step, self.STEP_NAMES[step], quantity, float(value), str(text),
                                  self.STEP_CHAPTERS[step][1]))

        s1 = self.step1_states()
        add(1, f"model states at {self.bytes_per_param:g} B/parameter", s1.total_bytes, units.fmt_bytes(s1.total_bytes))
        add(1, "…in cards' worth of memory", s1.cards_worth,
            f"{s1.cards_worth:.0f} × {units.fmt_bytes(s1.card_bytes)}")
        s2 = self.step2_compute()
        add(2, "training compute, 6ND", s2.flops, f"{units.fmt_sci(s2.flops)} FLOP")
        add(2, "cluster peak, n × peak", s2.cluster_peak, units.fmt_rate(s2.cluster_peak))
        add(3, f"effective compute at {self.mfu:.0%} MFU", self.effective_flops, units.fmt_rate(self.effective_flops))
        add(3, f"run length at {self.mfu:.0%} MFU", self.run_seconds, units.fmt_duration(self.run_seconds))
        for m, s in self.step3_time().seconds.items():
            if m != self.mfu:
                add(3, f"run length at {m:.0%} MFU", s, units.fmt_duration(s))
        missing = []
        if hasattr(self, "step4_plan"):
            s4 = self.step4_plan()
            add(4, "plan", s4.plan.n_gpus, str(s4.plan))
            add(4, "where the groups sit", len(s4.placement),
                ", ".join(f"{k.upper()} {v}" for k, v in s4.placement.items()))
            add(4, "pipeline bubble (share of the step idle)", s4.idle, units.fmt_percent(s4.idle))
        else:
            missing.append(4)
        if hasattr(self, "step5_memory_per_gpu"):
            s5 = self.step5_memory_per_gpu()
            add(5, "states per GPU, sharded over all GPUs", s5.states_full_sharding,
                units.fmt_bytes(s5.states_full_sharding))
            add(5, "states per GPU under the plan (ZeRO-1)", s5.states_plan, units.fmt_bytes(s5.states_plan))
            add(5, "activations per GPU, selective recompute", s5.activations["selective"],
                units.fmt_bytes(s5.activations["selective"]))
            if hasattr(self, "step4_plan"):
                add(5, "total per GPU under the plan, against the card", s4.memory_per_gpu,
                    f"{units.fmt_bytes(s4.memory_per_gpu)} of {units.fmt_bytes(s5.card_bytes)}: "
                    + ("fits" if s4.fits else "does not fit"))
        else:
            missing.append(5)
        if hasattr(self, "step6_failures"):
            for quantity, value, text in _failure_rows(self.step6_failures()):
                add(6, quantity, value, text)
        else:
            missing.append(6)
        if hasattr(self, "step7_electricity"):
            s7 = self.step7_electricity()
            add(7, f"facility power (PUE {s7.pue:g})", s7.facility_power, units.fmt_power(s7.facility_power))
            add(7, "energy at the meter", s7.energy, units.fmt_energy(s7.energy))
            add(7, f"electricity bill at ${s7.price_per_kwh:g}/kWh", s7.dollars, units.fmt_dollars(s7.dollars))
        else:
            missing.append(7)
        for step in missing:
            rows.append(LedgerRow(step, self.STEP_NAMES[step], "not available in this version of chipchain",
                                  float("nan"), "—", self.STEP_CHAPTERS[step][1]))
        rows.sort(key=lambda r: r.step)
        return rows

    def ledger(self):
        """The whole running example as a pandas DataFrame: one row per headline number, with its step, its
        formatted value and the chapter that derives it (columns ``step``, ``quantity``, ``value``, ``chapter``).

        >>> df = Walkthrough().ledger()
        >>> sorted(set(df["step"]))[:3]
        ['① memory of states', '② compute', '③ time']
        """
        import pandas as pd

        return pd.DataFrame([{"step": r.name, "quantity": r.quantity, "value": r.text, "chapter": r.chapter}
                             for r in self.ledger_rows()])

    @classmethod
    def chapter_reference(cls, step, available=()) -> str:
        """MyST text linking a step to its chapter: a ``{doc}`` link when the chapter's notebook stem is in
        ``available`` (e.g. the chapters listed in ``_toc.yml``), otherwise plain text.

        >>> Walkthrough.chapter_reference(4, available={"04_parallelism"})
        '{doc}`chapter 4 <../chapters/04_parallelism>`'
        >>> Walkthrough.chapter_reference(6)
        'chapter 7 (Failure is the normal state)'
        """
        s = _check.integer("step", step)
        if s not in cls.STEP_CHAPTERS:
            raise ValueError(f"step must be one of 1…7, got {step!r}")
        stem, number, title = cls.STEP_CHAPTERS[s]
        if stem in set(available):
            return f"{{doc}}`chapter {number} <../chapters/{stem}>`"
        return f"chapter {number} ({title})"


@dataclass(frozen=True)
class LedgerRow:
    """One headline number of the ledger: its step, what it is, its SI value and its text, and its chapter."""

    step: int
    name: str
    quantity: str
    value: float
    text: str
    chapter: int


def _failure_rows(s6) -> list:
    """(quantity, value, text) rows for step ⑥, from whatever the failures step reports."""
    from . import units

    out = []
    for attr, label, fmt in (("expected_interruptions", "expected interruptions over the run", lambda v: f"{v:.0f}"),
                             ("mtbf", "mean time between interruptions", units.fmt_duration),
                             ("checkpoint_interval", "checkpoint interval", units.fmt_duration),
                             ("goodput", "goodput", units.fmt_percent),
                             ("lost_seconds", "time lost to failures", units.fmt_duration)):
        v = getattr(s6, attr, None)
        if isinstance(v, (int, float)):
            out.append((label, v, fmt(v)))
    return out


# --- the source check: every seed number the book recomputed ------------------------------------------------------

@dataclass(frozen=True)
class SourceCheck:
    """A number stated by a source, the book's recomputation, and whether they agree within ``tolerance``."""

    source: str                 #: seed and section
    claim: str                  #: what the source says, in English
    stated: float
    recomputed: float
    unit: str
    tolerance: float            #: relative tolerance for agreement
    why: str                    #: what explains a disagreement (or what the recomputation used)
    chapter: int

    @property
    def agrees(self) -> bool:
        """|recomputed − stated| ≤ tolerance · |stated|."""
        return abs(self.recomputed - self.stated) <= self.tolerance * abs(self.stated)


def source_checks(walkthrough: "Walkthrough | None" = None) -> list:
    """Every number from the seeds that the book recomputes, stated value beside the library's.

    The stated values are the sources' (data); the recomputed ones come from chipchain each time this runs.
    Agreement means within 5 % (the sources round), unless an entry says otherwise.

    >>> bad = {c.claim for c in source_checks() if not c.agrees}
    >>> "7B model on 2 trillion tokens: 6 × 7e9 × 2e13 = 8.4e23 FLOP" in bad
    True
    """
    from . import comms, deepseek, hardware, memory, roofline
    from .units import DAY, YEAR, kWh

    w = Walkthrough() if walkthrough is None else walkthrough
    s1, s2, s3 = w.step1_states(), w.step2_compute(), w.step3_time()
    c7b = compute.training_flops(7e9, 2e12)
    rtx = 35.6e12          # the RTX 3090 figure seed 004 uses (its FP32 peak, called "fp16" there)
    checks = [
        SourceCheck("seed 000, walkthrough ①", "model states, 16 B × 175 B", 2.8e12, s1.total_bytes, "B", 0.05,
                    "agrees", 6),
        SourceCheck("seed 000, walkthrough ①", "35 times one 80 GB card", 35, s1.cards_worth, "×", 0.05,
                    "agrees", 6),
        SourceCheck("seed 000, walkthrough ②", "6 × 1.75e11 × 2e12 = 2.1e24 FLOP", 2.1e24, s2.flops, "FLOP", 0.05,
                    "agrees", 1),
        SourceCheck("seed 000, walkthrough ②", "Llama 2 7B on 2 T tokens: 8.4e22 FLOP", 8.4e22, c7b, "FLOP", 0.05,
                    "agrees", 1),
        SourceCheck("seed 000, walkthrough ②", "Llama 2 7B on the same 1,024 cards: about a week", 7.0,
                    compute.training_time(c7b, w.n_gpus, w.peak_flops, w.mfu) / DAY, "days", 0.15,
                    "agrees: 6.3 days at 50 % MFU ('about a week' read as 7 ± 1 days)", 11),
        SourceCheck("seed 000, walkthrough ③", "1,024 × 3e14 × 50 % = 1.536e17 FLOP/s", 1.536e17, w.effective_flops,
                    "FLOP/s", 0.05, "agrees", 11),
        SourceCheck("seed 000, walkthrough ③", "2.1e24 / 1.536e17 ≈ 158 days", 158, s3.days[0.5], "days", 0.05,
                    "agrees", 11),
        SourceCheck("seed 000, walkthrough ③", "at 30 % utilisation, about 264 days", 264, s3.days[0.3], "days", 0.05,
                    "agrees", 11),
        SourceCheck("seed 000, walkthrough ⑤", "2.8 TB over 1,024 cards ≈ 2.7 GB each", 2.7e9,
                    s1.total_bytes / w.n_gpus, "B", 0.05, "agrees", 6),
    ]
    f6 = w.step6_failures()
    expected, mtbf_h = f6.expected_interruptions, f6.mtbf / 3600
    checks += [
        SourceCheck("seed 000, walkthrough ⑥", "over a hundred interruptions in the run", 100, expected, "count",
                    0.05, f"Llama 3's rate was measured on 16,384 GPUs; per GPU, on 1,024 GPUs for "
                          f"{s3.days[0.5]:.0f} days it gives about {expected:.0f}", 7),
        SourceCheck("seed 000, walkthrough ⑥", "on average one every three hours", 3, mtbf_h, "hours", 0.05,
                    "3 hours is Llama 3's interval on 16,384 GPUs; 16 times fewer GPUs fail 16 times less often", 7),
    ]
    e = w.step7_electricity()
    checks.append(SourceCheck(
        "seed 000, walkthrough ⑦", "an electricity bill of about $1.55 M", 1.55e6, e.dollars, "$", 0.05,
        f"at ${e.price_per_kwh:g}/kWh, PUE {e.pue:g} and {e.host_share:g} W of host per GPU; the GPUs alone use "
        f"{e.gpu_only_kwh / 1e6:.2f} M kWh, so $1.55 M matches the kWh count priced at $1 per kWh", 9))
    checks += [
        SourceCheck("seed 000, §13", "DeepSeek-V3's final run: about $5.58 M", 5.58e6,
                    deepseek.cost_breakdown()["total"], "$", 0.05, "agrees (DeepSeek-AI 2024, Table 1)", 11),
        SourceCheck("seed 000, §13", "the figure excludes post-training (0 GPU-hours of it)", 0.0,
                    deepseek.V3.gpu_hours["post-training"], "GPU-hours", 0.05,
                    "Table 1 includes 5 K GPU-hours of post-training ($10 K); it excludes prior research", 11),
        SourceCheck("seed 004, §2.3", "7B model on 2 trillion tokens: 6 × 7e9 × 2e13 = 8.4e23 FLOP", 8.4e23, c7b,
                    "FLOP", 0.05, "2 trillion is 2e12, not 2e13: the source's exponent is one too high", 1),
        SourceCheck("seed 004, §2.3", "one RTX 3090 would take about 749 years", 749,
                    c7b / rtx / YEAR, "years", 0.05, "the 10× exponent error carried through", 1),
        SourceCheck("seed 004, §5.1", "about 22,773 RTX 3090s to finish in 30 days at 40 % MFU", 22773,
                    compute.gpus_needed(c7b, rtx, 0.4, 30 * DAY), "cards", 0.05,
                    "the 10× exponent error again (the source also divides FLOPs by MFU and calls it FLOP/s)", 1),
        SourceCheck("seed 004, §5.1", "about 7,600 cards if the run may take 90 days", 7600,
                    compute.gpus_needed(c7b, rtx, 0.4, 90 * DAY), "cards", 0.05, "the same 10× error", 1),
        SourceCheck("seed 002, cost", "70 B × 10 T tokens on H100 at 40 % MFU: 2.95 M GPU-hours", 2.95e6,
                    compute.gpu_hours(compute.training_flops(70e9, 10e12), 989.4e12, 0.4), "GPU-hours", 0.05,
                    "agrees", 9),
        SourceCheck("seed 002, energy", "2,048 H100 for 3 months: about 3.0 GWh", 3.0e6,
                    2048 * 700 * 90 * DAY / kWh, "kWh", 0.05, "agrees (700 W each, 90 days, GPUs only)", 9),
        SourceCheck("seed 002, roofline", "an element-wise op leaves a 312 TFLOP/s card at only 5 %", 0.05,
                    roofline.fraction_of_peak("A100", roofline.elementwise_intensity(), "bf16"), "fraction", 0.05,
                    "2.039 TB/s × 1/12 FLOP/byte is 0.17 TFLOP/s, about 0.05 % of 312, not 5 %", 1),
        SourceCheck("seed 002, memory wall", "A100 → H100 HBM bandwidth grew 1.65×", 1.65,
                    hardware.get("H100").memory_bandwidth / hardware.get("A100").memory_bandwidth, "×", 0.05,
                    "agrees (the source rounds 2,039 GB/s to 2.0 TB/s)", 1),
        SourceCheck("seed 002, energy per op", "a DRAM read costs 170 times an FP32 multiply", 170,
                    hardware.energy_per_op("DRAM read") / hardware.energy_per_op("FP32 multiply"), "×", 0.05,
                    "agrees (Horowitz 2014: 640 pJ vs 3.7 pJ)", 1),
        SourceCheck("seed 002, Tensor Cores", "FP32 → FP16 on the H100 is 14.8×", 14.8,
                    hardware.get("H100").peak_flops("bf16") / hardware.get("H100").peak_flops("fp32"), "×", 0.05,
                    "agrees (989.4 dense Tensor Core vs 67 FP32 non-Tensor)", 1),
        SourceCheck("seed 002, training cards", "mixed-precision Adam: 18 B/parameter, 1.26 TB for 70 B", 1.26e12,
                    memory.state_bytes(70e9, "mixed-adam-fp32-grads"), "B", 0.05,
                    "agrees; 18 B keeps FP32 gradients, seed 000's 16 B keeps BF16 ones (a convention, not an error)",
                    6),
        SourceCheck("seed 000, §4", "NVLink 900 GB/s vs InfiniBand 50 GB/s: a gap of about 20×", 20,
                    comms.link("NVLink4").bandwidth_per_direction / comms.link("IB-NDR").bandwidth_per_direction,
                    "×", 0.15, "900 GB/s is NVLink's two directions summed, 50 GB/s one direction of a 400 Gb/s port; "
                               "like for like the gap is 9× (18× only when the conventions are mixed)", 3),
    ]
    return checks


def source_check_table(walkthrough: "Walkthrough | None" = None):
    """:func:`source_checks` as a pandas DataFrame (``agrees`` True/False), disagreements first."""
    import pandas as pd

    rows = [{"source": c.source, "claim": c.claim, "stated": c.stated, "recomputed": c.recomputed, "unit": c.unit,
             "agrees": c.agrees, "why": c.why, "chapter": c.chapter} for c in source_checks(walkthrough)]
    return pd.DataFrame(rows).sort_values("agrees", kind="stable").reset_index(drop=True)


# --- the four questions to ask of the next generation ----------------------------------------------------------------

#: the book's four questions, each with the catalog figure that answers it
FOUR_QUESTIONS = {
    "Can it compute?": "dense BF16 peak (FLOP/s)",
    "Can it feed the compute?": "HBM bandwidth (bytes/s) and the ridge point it implies (FLOP/byte)",
    "Can it talk?": "chip-to-chip bandwidth, both directions summed (bytes/s)",
    "Can it be supplied?": "board power (W) and dense BF16 FLOP/s per watt",
}


def four_questions(accelerators=("A100", "H100", "H800", "B200")):
    """The four questions answered for catalog accelerators, as a pandas DataFrame in human units (TFLOP/s, TB/s,
    FLOP/byte, GB/s, W, TFLOP/s per W). Missing catalog figures stay empty; estimated rows are flagged.

    >>> round(float(four_questions(["A100", "H100"]).loc["H100-SXM", "ridge (FLOP/byte)"]))
    295
    """
    import pandas as pd
    from . import hardware

    rows = {}
    for name in accelerators:
        a = hardware.get(name)
        peak = a.peaks.get("bf16")
        rows[a.name] = {
            "BF16 dense (TFLOP/s)": peak / 1e12 if peak else None,
            "HBM (TB/s)": a.memory_bandwidth / 1e12 if a.memory_bandwidth else None,
            "ridge (FLOP/byte)": peak / a.memory_bandwidth if peak and a.memory_bandwidth else None,
            "link, bidirectional (GB/s)": a.interconnect_bandwidth / 1e9 if a.interconnect_bandwidth else None,
            "power (W)": a.tdp,
            "TFLOP/s per W": peak / 1e12 / a.tdp if peak and a.tdp else None,
            "estimate": a.is_estimate,
        }
    return pd.DataFrame(rows).T.astype({"estimate": bool})


def plot_time_budget(walkthrough: "Walkthrough | None" = None, ax=None):
    """Static figure: the run's length in days at 100 % of peak, at the walkthrough's MFU (step ③), and on the wall
    clock once failures, checkpoints and restarts are paid (step ⑥: run / goodput). Returns the Axes."""
    from . import plotting

    w = Walkthrough() if walkthrough is None else walkthrough
    f6 = w.step6_failures()
    bars = [("at 100 % of peak", w.step2_compute().flops / w.step2_compute().cluster_peak / DAY),
            (f"at {w.mfu:.0%} MFU (step ③)", w.run_seconds / DAY),
            ("on the wall clock (step ⑥)", f6.wall_seconds / DAY)]
    ax = plotting.axes(ax)
    ys = range(len(bars))
    ax.barh(list(ys), [b[1] for b in bars], color=[plotting.color(i) for i in ys])
    for y, (_, d) in zip(ys, bars):
        ax.text(d, y, f" {d:.0f} days", va="center")
    ax.set_yticks(list(ys), [b[0] for b in bars])
    ax.invert_yaxis()
    ax.set_xlabel("days on the cluster")
    ax.set_xlim(0, max(b[1] for b in bars) * 1.2)
    ax.grid(axis="y", visible=False)
    return ax


# --- the capstone explorable ------------------------------------------------------------------------------------------

from . import widgets as _widgets  # noqa: E402  (kept with the explorable it serves)

#: model shapes the explorable offers: name -> (params, layers, hidden, heads)
LEDGER_MODELS = {
    "7B (Llama-2-7B shape)": (7e9, 32, 4096, 32),
    "70B (Llama-2-70B shape)": (70e9, 80, 8192, 64),
    "175B (GPT-3 shape)": (175e9, 96, 12288, 96),
}


def ledger_view(model="175B (GPT-3 shape)", n_gpus=1024, accelerator="A100", mfu=0.5) -> Walkthrough:
    """The running example with a different model, cluster size, GPU and utilisation — what the capstone
    explorable recomputes. The plan keeps TP 8 × PP 16 and gives the rest to data parallelism (n / 128); the A100
    keeps the source's 3e14 FLOP/s, other parts use their catalog BF16 dense peak.

    >>> round(ledger_view(n_gpus=2048).step3_time().days[0.5])
    79
    """
    from . import hardware

    key = _check.choice("model", model, LEDGER_MODELS)
    params, layers, hidden, heads = LEDGER_MODELS[key]
    n = _check.integer("n_gpus", n_gpus)
    acc = hardware.get(accelerator)
    if n % 128:
        raise ValueError(f"n_gpus ({n}) must be a multiple of 128 for the TP 8 × PP 16 plan")
    peak = 3e14 if acc.name == "A100-SXM-80GB" else acc.peak_flops("bf16")
    m = _check.fraction("mfu", mfu)
    return Walkthrough(params=params, layers=layers, hidden=hidden, heads=heads, n_gpus=n, accelerator=acc.name,
                       peak_flops=peak, mfu=m, mfus=(m,), dp=n // 128)


@_widgets.explorer
def ledger_explorer():
    """The whole ledger, recomputed for a model, a cluster size, a GPU type and a utilisation."""

    def render(model, n_gpus, accelerator, mfu):
        w = ledger_view(model, n_gpus, accelerator, mfu)
        rows = "".join(f"<tr><td>{r.name}</td><td>{r.quantity}</td><td><b>{r.text}</b></td>"
                       f"<td>ch. {r.chapter}</td></tr>" for r in w.ledger_rows())
        return (f"<p>{model}, {w.tokens / 1e12:g} T tokens, {n_gpus:,} × {w.card.name} at {mfu:.0%} MFU</p>"
                f"<table class='cc-table'><tr><th>step</th><th>quantity</th><th>value</th><th>chapter</th></tr>"
                f"{rows}</table>")

    return _widgets.explore(render, [
        _widgets.Choice("model", "model", {k: k for k in LEDGER_MODELS}, value="175B (GPT-3 shape)"),
        _widgets.Slider("n_gpus", "GPUs", [512, 1024, 2048], value=1024),
        _widgets.Choice("accelerator", "GPU", {"A100 (80 GB)": "A100", "H100 (SXM)": "H100"}, value="A100"),
        _widgets.Slider("mfu", "MFU", [0.3, 0.4, 0.5], value=0.5, fmt=lambda v: f"{v:.0%}"),
    ], title="The whole ledger: 2 T tokens, one training run from chip to nation")



