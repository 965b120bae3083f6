"""The running example: one training run, from chip to nation, in nine steps.

A :class:`Walkthrough` holds objects — a :class:`~chipchain.models.Model` (GPT-3 175B by default), a
:class:`~chipchain.systems.Cluster` (1,024 A100 in DGX A100 nodes) and a :class:`~chipchain.parallel.Plan` — plus
the tokens (2 T, seed 000's walkthrough), the utilisation and the number format. Its per-GPU peak is the chosen
accelerator's catalog dense peak at ``dtype`` (312 TFLOP/s BF16 for the A100) unless ``peak_flops`` overrides it;
the source rounds that peak to 3e14, so its figures sit about 4 % away from the book's (chapter 13's source checks
show both)::

    >>> w = Walkthrough()
    >>> f"{w.step2_compute().flops:.2g}", w.peak_flops == w.accelerator.peak_flops("bf16")
    ('2.1e+24', True)
    >>> round(w.step3_time().days[0.5])
    152
    >>> h = w.replace(accelerator="H100-SXM")
    >>> h.cluster.node.name, round(h.peak_flops / 1e12, 1), round(h.step3_time().days[0.5])
    ('DGX-H100', 989.4, 48)

Each step method computes its numbers with the module that owns the idea (``compute``, ``memory``, ``parallel``,
``reliability``, ``power``) and returns a frozen record; :func:`chipchain.views.walkthrough.ledger_rows` turns
them into the ledger's labelled rows, each tagged with the number of the chapter that derives it. When the model or the GPU count changes, the plan is found
again by :func:`chipchain.plans.search` (or the steps that need one refuse with the reason)::

    >>> seven = w.replace(model="7B")
    >>> seven.pp <= seven.layers, seven.tp * seven.pp * seven.dp == seven.n_gpus
    (True, True)
"""
from __future__ import annotations

from dataclasses import dataclass

from functools import lru_cache, wraps

from . import (_check, activations, assumptions, calibration, checkpoint, compute, frameworks, hardware, inference,
               memory, models, parallel, economics, plans, policy, power, predictor, reliability, serving, systems,
               units)
from .units import DAY, kWh

__all__ = ["Walkthrough", "StatesStep", "ComputeStep", "TimeStep", "RunStep", "EvidenceStep", "PlanStep", "MemoryStep",
           "FailureStep", "ElectricityStep", "ExportStep", "ServingStep"]

def _assumed(name, given):
    """``given``, or the assumption ``name`` of ``data/assumptions.csv`` when it is None."""
    return assumptions.value(name) if given is None else given


@dataclass(frozen=True)
class StatesStep:
    """Step ①: memory of the model states (weights, gradients, optimizer) before any sharding (bytes)."""

    bytes_per_param: float
    total_bytes: float
    card_bytes: float
    cards_worth: float          #: total_bytes / card_bytes
    cards: int                  #: whole cards whose memory would hold the states, cards_worth rounded up


@dataclass(frozen=True)
class ComputeStep:
    """Step ②: training compute by C = 6ND (FLOP) and the cluster's peak (FLOP/s)."""

    flops: float
    cluster_peak: float         #: FLOP/s of the whole cluster at the per-GPU peak


@dataclass(frozen=True)
class TimeStep:
    """Step ③: wall-clock time at several utilisations."""

    seconds: dict               #: mfu -> seconds
    days: dict                  #: mfu -> days


@dataclass(frozen=True)
class RunStep:
    """Step ③ bottom-up: the plan's predicted step (:func:`chipchain.predictor.predict_plan`) times the steps the tokens
    take, then chapter 7's failure overhead (step ⑥'s goodput) on the wall clock."""

    step_seconds: float         #: predicted s per step
    steps: float                #: tokens / tokens per step
    seconds: float              #: s of training, steps × step_seconds
    mfu: float                  #: 6ND / (seconds · n · peak), the book's one MFU
    hfu: float                  #: executed FLOPs over the same
    wall_seconds: float         #: seconds / goodput (interruptions, checkpoints, restarts)
    interval: tuple             #: (low, high) s of training, the step's leave-one-family-out interval × steps
    step: object                #: the chipchain.steptime.StepTime


@dataclass(frozen=True)
class EvidenceStep:
    """Step ③ from evidence: the MFU that comparable published runs achieved (lowest, median, highest; implied by
    their GPU-hours, downtime included) and what each makes of the run: wall-clock seconds, GPU-hours and dollars."""

    mfus: tuple                 #: (lowest, median, highest) implied MFU of the comparable runs
    runs: tuple                 #: their ids in chipchain.calibration, lowest MFU first
    seconds: tuple              #: s at each MFU (no failure time added: billed hours already include it)
    gpu_hours: tuple
    dollars: tuple              #: GPU-hours × price_per_gpu_hour
    price_per_gpu_hour: float


@dataclass(frozen=True)
class PlanStep:
    """Step ④: the parallel plan, where its groups sit, its pipeline bubble and its traffic per GPU per step."""

    plan: parallel.Plan
    placement: dict             #: "tp"/"pp"/"dp" -> "intra-node" | "inter-node" | "none"
    microbatches: int
    bubble: float               #: bubble time / ideal time, (p − 1)/m
    idle: float                 #: idle share of the step, (p − 1)/(m + p − 1)
    comm: tuple                 #: chipchain.traffic.CommRow per kind of traffic
    traffic: dict               #: link name -> bytes sent per GPU per step
    memory_per_gpu: float       #: bytes, states + activations
    fits: bool
    warnings: tuple
    compute_seconds: float = 0.0   #: s of model computation per step on the busiest GPU (no bubble, no traffic)
    step_seconds: float = 0.0      #: predicted s per step (chipchain.steptime: compute, bubble, exposed traffic)


@dataclass(frozen=True)
class MemoryStep:
    """Step ⑤: memory per GPU — model states fully sharded, under the plan, and activations by recompute choice."""

    states_total: float         #: bytes, all model states
    states_full_sharding: float  #: bytes per GPU, states / n_gpus
    states_plan: float          #: bytes per GPU under TP × PP × DP with the plan's ZeRO stage
    activations: dict           #: recompute choice -> bytes per GPU (first pipeline stage)
    card_bytes: float


@dataclass(frozen=True)
class FailureStep:
    """Step ⑥: interruptions over the run, the checkpoint interval, and the time failures cost (s, B, per s)."""

    per_gpu_rate: float         #: interruptions per GPU-second (Llama 3's snapshot unless overridden)
    mtbf: float                 #: s, cluster mean time between interruptions, 1 / (n · rate)
    run_seconds: float          #: s of computing at the walkthrough's MFU
    expected_interruptions: float  #: rate · n · wall_seconds (failures strike the wall clock, restarts included)
    checkpoint_bytes: float     #: B, params × restart bytes per param (recipe less gradients)
    write_seconds: float        #: s, checkpoint_bytes / write bandwidth
    restart_seconds: float      #: s, detection + restart + reload (an assumption)
    young_interval: float       #: s, √(2CM)
    checkpoint_interval: float  #: s, Daly's interval (the one chosen)
    goodput: float              #: kept progress per wall-clock second at that interval
    wall_seconds: float         #: s, run_seconds / goodput
    lost_seconds: float         #: s, wall_seconds − run_seconds


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
class ExportStep:
    """Step ⑧: how each export rule classifies the run's accelerator, and the best part each rule lets through —
    the catalog part with a node in :mod:`chipchain.systems` that the rule does not control and that has the
    highest dense peak at the walkthrough's ``dtype`` — with the days the same run takes on as many of them at the
    same MFU (dicts keyed by rule id)."""

    accelerator: str
    classifications: dict       #: rule id → :class:`chipchain.policy.Classification`
    shippable: dict             #: rule id → best uncontrolled part's name (None if none qualifies)
    shippable_peak: dict        #: rule id → its dense peak, FLOP/s (None if no part qualifies)
    shippable_days: dict        #: rule id → days of computing for the same run, same n_gpus and MFU (None if none)


@dataclass(frozen=True)
class ServingStep:
    """Step ⑨: serving the trained model on the run's accelerator (roofline bounds, :mod:`chipchain.serving`):
    the fewest GPUs that hold the weights and one full-context sequence, the batch their memory holds, tokens per
    second at batch 1 and at that batch, joules per token at the GPUs' rated power, and dollars per million tokens
    at the rent per GPU-hour."""

    n_gpus: int                 #: GPUs that hold the weights (a power of two; 90 % of memory usable)
    n_nodes: int                #: nodes those GPUs fill (rounded up)
    context: int                #: tokens per sequence (the model's training sequence length)
    max_batch: int              #: sequences the GPUs' memory holds at that context
    tokens_per_second_1: float  #: all tokens/s at batch 1
    tokens_per_second: float    #: all tokens/s at max_batch
    per_user_tokens_per_second: float   #: each sequence's tokens/s at max_batch
    gpu_power: float            #: W per GPU (rated)
    joules_per_token_1: float   #: J per token at batch 1, GPUs at rated power
    joules_per_token: float     #: J per token at max_batch
    price_per_gpu_hour: float   #: $ per GPU-hour
    dollars_per_million_tokens_1: float
    dollars_per_million_tokens: float


def _serving_step(acc, m, seq, gpus_per_node, price, usable) -> ServingStep:
    n = serving.gpus_to_hold(acc, m, seq, usable_fraction=usable)
    top = inference.max_batch(n * acc.require("memory_bytes"), m, seq, usable_fraction=usable)
    one = serving.decode(acc, m, seq, 1, n_gpus=n)
    full = serving.decode(acc, m, seq, max(top, 1), n_gpus=n)
    watts = n * acc.require("tdp")
    return ServingStep(n, units.count_up(n / gpus_per_node), seq, top, float(one.tokens_per_second),
                       float(full.tokens_per_second), float(full.per_sequence_tokens_per_second),
                       float(acc.tdp), float(inference.energy_per_token(watts, one.tokens_per_second)),
                       float(inference.energy_per_token(watts, full.tokens_per_second)), price,
                       float(economics.cost_per_million_tokens(price, n, one.tokens_per_second)),
                       float(economics.cost_per_million_tokens(price, n, full.tokens_per_second)))


@lru_cache(maxsize=256)
def _serving_cached(acc_name, model_name, seq, gpus_per_node, price, usable) -> ServingStep:
    return _serving_step(hardware.get(acc_name), models.get(model_name), seq, gpus_per_node, price, usable)


#: the inputs :meth:`Walkthrough.replace` accepts
_INPUTS = ("model", "accelerator", "n_gpus", "system", "cluster", "plan", "tokens", "mfu", "mfus", "dtype",
           "peak_flops", "recipe", "batch", "framework")


def _once(step):
    """Compute a step that takes no argument once per walkthrough (a frozen record, so the answer cannot change):
    the ledger, the views and the later steps ask for steps ① – ⑤ and ⑧ again and again. A step that raises
    (no plan) is not cached and raises again."""
    @wraps(step)
    def once(self):
        done = self.__dict__.setdefault("_steps_done", {})
        if step.__name__ not in done:
            done[step.__name__] = step(self)
        return done[step.__name__]
    return once


#: the source's plan for the running example (seed 000's "8 × 16 × 8"), with Korthikanti et al. 2022's settings
SOURCE_PLAN = dict(tp=8, pp=16, dp=8, zero=1, sequence_parallel=True, recompute="selective")


@dataclass(frozen=True, init=False)
class Walkthrough:
    """The running example's inputs, as objects. Every argument takes a name or the record:

    ``model`` (a :mod:`~chipchain.models` name or :class:`~chipchain.models.Model`, default GPT-3 175B);
    ``accelerator`` and ``n_gpus`` (default the A100 and 1,024), or ``system`` (a node name such as "DGX-H100"),
    or a whole ``cluster`` (:func:`chipchain.systems.cluster`); ``plan`` (a :class:`~chipchain.parallel.Plan`;
    "source" → the source's TP 8 × PP 16 × DP 8 (:data:`SOURCE_PLAN`) when it is valid and fits, else the fastest
    plan :func:`chipchain.plans.search` finds for ``batch`` sequences per step; None → that search);
    ``tokens``; ``mfu`` (None → the MFU the plan's predicted step achieves, the bottom-up run; a number → a
    what-if run at that utilisation) and the fixed ``mfus`` step ③ sets beside it (the source's 50 % and 30 %);
    ``dtype`` of the peak and the training; ``peak_flops`` (FLOP/s per GPU; None → the catalog dense peak at
    ``dtype``; used by the top-down figures); ``recipe`` (bytes of state per parameter, a name in
    :data:`chipchain.memory.RECIPES`); ``batch`` (sequences per step, 1,536 as Narayanan et al. 2021 use for GPT-3
    175B); ``framework`` (:mod:`chipchain.frameworks`; Megatron-LM 2022, the source plan's, by default).

    ``plan`` is None (and :attr:`plan_reason` says why) when no plan fits; then the steps that need a plan
    (③ bottom-up, ④, ⑤) refuse with that reason, and a run length needs a given ``mfu``.

    >>> Walkthrough(accelerator="A1000")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    KeyError: "unknown system or accelerator 'A1000'; nearest known names: ..."
    """

    model: models.Model
    cluster: systems.Cluster
    plan: parallel.Plan | None
    plan_reason: str
    tokens: float
    mfu_given: float | None
    mfus: tuple
    dtype: str
    peak_override: float | None
    recipe: str
    batch: int
    framework: str

    def __init__(self, model="GPT-3-175B", accelerator=None, n_gpus=None, *, system=None, cluster=None,
                 plan="source", tokens=2 * units.TERA, mfu=None, mfus=(0.5, 0.3), dtype="bf16", peak_flops=None,
                 recipe="mixed-adam", batch=1536, framework="megatron-2022"):
        m = models.get(model)
        if cluster is not None:
            if accelerator is not None or system is not None:
                raise ValueError("give either cluster or accelerator/system, not both")
            c = systems.cluster(cluster, n_gpus)
        else:
            c = systems.cluster(system if system is not None else (accelerator if accelerator is not None
                                                                   else "A100"),
                                1024 if n_gpus is None else n_gpus)
            if system is not None and accelerator is not None and hardware.get(accelerator) is not c.accelerator:
                raise ValueError(f"accelerator {accelerator!r} is not the {c.node.name}'s {c.accelerator.name}")
        mfu = None if mfu is None else _check.fraction("mfu", mfu)
        ms = tuple(_check.fraction("mfus", x) for x in (mfus if isinstance(mfus, (tuple, list)) else (mfus,)))
        if not isinstance(dtype, str):
            raise ValueError(f"dtype must be a number-format name such as 'bf16', got {dtype!r}")
        peak = None if peak_flops is None else _check.positive("peak_flops", peak_flops)
        c.accelerator.peak_flops(dtype)              # fails now, by name, if the catalog lacks that peak
        r = memory.recipe(recipe).name
        b = _check.integer("batch", batch)
        fw = frameworks.get(framework).name
        reason = ""
        if isinstance(plan, str) and plan == "source":
            plan = self._source_plan(m, c, b, r, fw, dtype)
        if plan is None:
            try:
                plan = plans.search(m, c, batch=b, recipe=r, top=1, dtype=dtype, framework=fw)[0].plan
            except ValueError as err:                  # plans.search says why no plan qualifies
                reason = str(err)
        elif isinstance(plan, parallel.Plan):
            parallel.validate(plan, m, c)
        else:
            raise ValueError(f"plan must be a chipchain.parallel.Plan, 'source' or None, got {plan!r}")
        for name, value in (("model", m), ("cluster", c), ("plan", plan), ("plan_reason", reason),
                            ("tokens", _check.positive("tokens", tokens)), ("mfu_given", mfu), ("mfus", ms),
                            ("dtype", dtype), ("peak_override", peak), ("recipe", r), ("batch", b),
                            ("framework", fw)):
            object.__setattr__(self, name, value)

    @staticmethod
    def _source_plan(m, c, batch, recipe, framework, dtype):
        """The source's plan for the source's model (GPT-3 175B on 1,024 GPUs) if it is valid for this cluster and
        batch and fits in memory; else None (another model or cluster is planned by the search)."""
        k = SOURCE_PLAN
        if m.name != "GPT-3-175B" or c.n_gpus != k["tp"] * k["pp"] * k["dp"] or batch % k["dp"]:
            return None
        p = parallel.Plan(microbatches=batch // k["dp"], **k)
        try:
            parallel.validate(p, m, c)
            a = plans.analyze(p, m, c, recipe=recipe, framework=framework, dtype=dtype)
        except ValueError:
            return None
        return p if a.fit.fits else None

    def replace(self, **changes) -> "Walkthrough":
        """A copy with some inputs changed (names as in the constructor), validated again.

        Changing the accelerator, system or ``dtype`` drops a ``peak_flops`` override (the new part's catalog peak
        applies unless a new ``peak_flops`` is given); changing the model, the cluster, ``batch``, ``recipe`` or
        ``framework`` chooses the plan again (the source's if it still applies, else the search's) unless a new
        ``plan`` is given.

        >>> Walkthrough().replace(n_gpus=2048).plan.n_gpus
        2048
        """
        unknown = sorted(set(changes) - set(_INPUTS))
        if unknown:
            raise ValueError(f"Walkthrough has no input {unknown[0]!r}; inputs are {', '.join(_INPUTS)}")
        args = {"model": self.model, "cluster": self.cluster, "plan": self.plan, "tokens": self.tokens,
                "mfu": self.mfu_given, "mfus": self.mfus, "dtype": self.dtype, "peak_flops": self.peak_override,
                "recipe": self.recipe, "batch": self.batch, "framework": self.framework}
        if {"accelerator", "system", "n_gpus"} & set(changes) and "cluster" not in changes:
            del args["cluster"]
            if "accelerator" not in changes and "system" not in changes:
                args["system"] = self.cluster.node
            args["n_gpus"] = self.n_gpus
        if {"accelerator", "system", "dtype"} & set(changes):
            args["peak_flops"] = None
        if {"model", "accelerator", "system", "n_gpus", "cluster", "batch", "recipe", "framework", "dtype"} & set(changes):
            args["plan"] = "source"
        args.update(changes)
        return Walkthrough(**args)

    # --- what the chapters read ---------------------------------------------------------------------------------
    @property
    def accelerator(self) -> hardware.Accelerator:
        """The cluster's accelerator (a :class:`~chipchain.hardware.Accelerator`)."""
        return self.cluster.accelerator

    @property
    def card(self) -> hardware.Accelerator:
        """Same as :attr:`accelerator`."""
        return self.cluster.accelerator

    @property
    def peak_flops(self) -> float:
        """FLOP/s per GPU: the override, or the accelerator's catalog dense peak at ``dtype``."""
        if self.peak_override is not None:
            return self.peak_override
        return self.accelerator.peak_flops(self.dtype)

    @property
    def n_gpus(self) -> int:
        return self.cluster.n_gpus

    @property
    def gpus_per_node(self) -> int:
        return self.cluster.gpus_per_node

    @property
    def params(self) -> float:
        return self.model.params

    @property
    def layers(self) -> int:
        return self.model.layers

    @property
    def hidden(self) -> int:
        return self.model.hidden

    @property
    def heads(self) -> int:
        return self.model.heads

    @property
    def seq(self) -> int:
        return self.model.seq

    @property
    def vocab(self) -> int:
        return self.model.vocab

    def _require_plan(self) -> parallel.Plan:
        if self.plan is None:
            raise ValueError(self.plan_reason)
        return self.plan

    @property
    def tp(self) -> int:
        return self._require_plan().tp

    @property
    def pp(self) -> int:
        return self._require_plan().pp

    @property
    def dp(self) -> int:
        return self._require_plan().dp

    @property
    def bytes_per_param(self) -> float:
        """Bytes of model state per parameter under ``recipe`` (16 for mixed-precision Adam)."""
        return memory.recipe(self.recipe).total

    @property
    def mfu(self) -> float:
        """The run's MFU, 6ND / (T · n · peak): the given ``mfu``, or the one the plan's predicted step achieves
        (:meth:`step3_run`; the catalog peak, whatever ``peak_flops`` says)."""
        if self.mfu_given is not None:
            return self.mfu_given
        if self.plan is None:                # no plan to predict: the first assumed utilisation (the source's)
            return self.mfus[0]
        return self.step3_run().mfu

    @property
    def mfu_basis(self) -> str:
        """"predicted" (the plan's step, bottom-up), "given" (an ``mfu`` input) or "assumed" (no plan: ``mfus[0]``)."""
        return "given" if self.mfu_given is not None else ("assumed" if self.plan is None else "predicted")

    @property
    def effective_flops(self) -> float:
        """Sustained cluster throughput, n · peak · MFU in FLOP/s (the 6N FLOPs the run advances per second).

        >>> f"{Walkthrough(mfu=0.5).effective_flops:.4g}"
        '1.597e+17'
        """
        if self.mfu_basis == "predicted":
            return self.step2_compute().flops / self.run_seconds
        return self.n_gpus * self.peak_flops * self.mfu

    @property
    def run_seconds(self) -> float:
        """Seconds of training (no failures): the bottom-up run (:meth:`step3_run`), or C / (n · peak · ``mfu``)
        when an ``mfu`` is given (or assumed: no plan)."""
        if self.mfu_basis == "predicted":
            return self.step3_run().seconds
        return compute.training_time(self.step2_compute().flops, self.n_gpus, self.peak_flops, self.mfu)

    # --- ① memory of states ---------------------------------------------------------------------------------
    @_once
    def step1_states(self) -> StatesStep:
        """Model states = bytes per parameter × parameters, compared with one card's memory.

        The card's capacity is binary (the A100's "80 GB" is 80 GiB = 85.9 GB), so 2.8 TB is 32.6 cards' worth and
        needs 33 cards — a count of cards is rounded up (:func:`chipchain.memory.min_gpus`).

        >>> s = Walkthrough().step1_states()
        >>> s.total_bytes / 1e12, round(s.cards_worth, 1), s.cards
        (2.8, 32.6, 33)
        """
        total = memory.state_bytes(self.params, self.recipe)
        card = self.card.require("memory_bytes")
        return StatesStep(self.bytes_per_param, total, card, total / card, memory.min_gpus(total, card))

    # --- ② compute ----------------------------------------------------------------------------------------
    @_once
    def step2_compute(self) -> ComputeStep:
        """C = 6·N·D with N the active parameters (all of them for a dense model; 37 B of DeepSeek-V3's 671 B), and
        the cluster's peak, n × peak per GPU (1,024 × 312e12 = 3.19e17 FLOP/s)."""
        return ComputeStep(compute.training_flops(self.model.active_params, self.tokens),
                           self.n_gpus * self.peak_flops)

    # --- ③ time -----------------------------------------------------------------------------------------------
    @_once
    def step3_time(self) -> TimeStep:
        """Top-down: T = C / (n · peak · MFU) at each assumed utilisation in ``mfus`` (the source's 50 % and 30 %).

        >>> {m: round(d) for m, d in Walkthrough().step3_time().days.items()}
        {0.5: 152, 0.3: 254}
        """
        c = self.step2_compute().flops
        secs = {m: compute.training_time(c, self.n_gpus, self.peak_flops, m) for m in self.mfus}
        return TimeStep(secs, {m: s / DAY for m, s in secs.items()})

    @_once
    def step3_run(self) -> RunStep:
        """Bottom-up: the plan's predicted step (:func:`chipchain.predictor.predict_plan`, the book's one step model at
        its fitted efficiency, in ``framework``) × the D / (batch · s) steps the tokens take; then the wall clock
        with chapter 7's failures (step ⑥'s goodput). MFU = 6ND / (T · n · peak) follows, so the top-down formula at
        this MFU gives the same T to the second.

        >>> r = Walkthrough().step3_run()
        >>> round(r.step_seconds, 1), round(r.seconds / 86400), round(r.mfu, 3), round(r.wall_seconds / 86400)
        (20.0, 147, 0.516, 151)
        """
        plan = self._require_plan()
        s = predictor.predict_plan(plan, self.model, self.cluster, dtype=self.dtype, framework=self.framework,
                              recipe=self.recipe, check_memory=False)
        steps = self.tokens / s.tokens
        secs = steps * s.seconds
        lo, hi = predictor.interval(s.seconds)
        g = self._goodput(secs)
        return RunStep(s.seconds, steps, secs, s.mfu, s.hfu, secs / g, (lo * steps, hi * steps), s)

    def step3_evidence(self, price_per_gpu_hour=None, min_gpus=384) -> EvidenceStep:
        """Step ③ as a range: the run at the MFU that comparable published runs achieved
        (:func:`chipchain.calibration.mfu_range`: whole runs on the same generation of accelerator — same vendor and
        dense BF16 peak — with at least ``min_gpus`` of them), beside the fixed utilisations of :meth:`step3_time`.
        Their MFU is implied by billed GPU-hours, so it already pays for restarts: no failure time is added.
        ``price_per_gpu_hour`` $ (default: :mod:`chipchain.assumptions`' ``gpu_rent_per_hour``, the $2 at which
        DeepSeek-AI 2024 priced its run).

        >>> e = Walkthrough().step3_evidence()
        >>> [round(m, 2) for m in e.mfus], [round(s / 86400) for s in e.seconds]
        ([0.24, 0.35, 0.48], [322, 220, 158])
        """
        lo, mid, hi, ids = calibration.mfu_range(self.accelerator, min_gpus)
        price = _check.nonnegative("price_per_gpu_hour", _assumed("gpu_rent_per_hour", price_per_gpu_hour))
        c = self.step2_compute().flops
        secs = tuple(compute.training_time(c, self.n_gpus, self.peak_flops, m) for m in (lo, mid, hi))
        hours = tuple(compute.gpu_hours_from_seconds(s, self.n_gpus) for s in secs)
        return EvidenceStep((lo, mid, hi), ids, secs, hours, tuple(compute.cost(h, price) for h in hours), price)

    # --- ④ the parallel plan and ⑤ memory per GPU (chapters 4 and 6) ----------------------------------------
    @_once
    def step4_plan(self) -> PlanStep:
        """The plan (for the default, the source's TP × PP × DP = 8 × 16 × 8 with ZeRO-1, sequence parallelism and
        selective recomputation, Korthikanti et al. 2022's setting, 1,536 sequences per step in micro-batches of
        one), validated, placed on the cluster's nodes, with its bubble and traffic.

        >>> s = Walkthrough().step4_plan()
        >>> s.plan.n_gpus, s.microbatches, round(s.bubble, 3), s.placement["tp"], s.placement["pp"]
        (1024, 192, 0.078, 'intra-node', 'inter-node')
        >>> {k: round(v / 1e9) for k, v in s.traffic.items()}
        {'NVLink3': 406, 'IB-HDR': 7}
        """
        plan = self._require_plan()
        a = plans.analyze(plan, self.model, self.cluster, recipe=self.recipe, dtype=self.dtype,
                          framework=self.framework)
        traffic: dict = {}
        for row in a.comm:
            traffic[row.link] = traffic.get(row.link, 0.0) + row.sent_bytes
        return PlanStep(plan, {k: g.scope for k, g in a.placement.items()}, plan.microbatches, a.bubble, a.idle,
                        tuple(a.comm), traffic, a.ledger.total, a.fit.fits, a.warnings, a.compute_seconds,
                        a.step_seconds)

    @_once
    def step5_memory_per_gpu(self) -> MemoryStep:
        """Memory per GPU: the model states spread over every GPU (ZeRO-3 over all n: 16 B × Ψ / n), the states
        under the plan (its TP × PP and its ZeRO stage over DP), and the first pipeline stage's activations under
        each recomputation choice (the plan's TP, sequence parallelism and micro-batches) — all read from
        :func:`chipchain.memory.ledger` for the walkthrough's ``recipe``, the same ledger step ④ prices.

        >>> s = Walkthrough().step5_memory_per_gpu()
        >>> round(s.states_full_sharding / 1e9, 2), round(s.states_plan / 1e9, 2)
        (2.73, 7.52)
        >>> {k: round(v / 1e9, 2) for k, v in s.activations.items()}
        {'none': 34.43, 'selective': 10.27, 'full': 0.6}
        """
        plan = self._require_plan()
        total = memory.state_bytes(self.params, self.recipe)
        ledgers = {rc: memory.ledger(self.model, self.recipe, microbatch=plan.microbatch, tp=plan.tp, pp=plan.pp,
                                     dp=plan.dp, zero=plan.zero, sequence_parallel=plan.sequence_parallel,
                                     recompute=rc, microbatches=plan.microbatches, virtual_stages=plan.virtual_stages)
                   for rc in activations.RECOMPUTE}
        acts = {rc: L.components["activations"] for rc, L in ledgers.items()}
        return MemoryStep(total, total / self.n_gpus, ledgers[plan.recompute].states, acts,
                          self.card.require("memory_bytes"))

    # --- ⑥ failures over the run (chipchain.reliability; chapter 7) -----------------------------------------
    def _failure_terms(self, write_bandwidth=None, restart_seconds=None, per_gpu_rate=None) -> tuple:
        """(rate, MTBF, checkpoint bytes, write s, restart s, Daly interval, goodput) of
        :func:`chipchain.checkpoint.run_failures` — goodput does not depend on the run's length, so step ③'s wall
        clock and step ⑥ share it."""
        f = checkpoint.run_failures(self.params, self.n_gpus, self.recipe, write_bandwidth, restart_seconds,
                                    per_gpu_rate)
        return f.rate, f.mtbf, f.checkpoint_bytes, f.write_seconds, f.restart_seconds, f.interval, f.goodput

    def _goodput(self, _seconds=None) -> float:
        return self._failure_terms()[-1]

    def step6_failures(self, write_bandwidth=None, restart_seconds=None, per_gpu_rate=None) -> FailureStep:
        """Interruptions over the run, Daly's checkpoint interval and the time lost (chapter 7).

        Rate: Llama 3's 419 unexpected interruptions in 54 days on 16,384 H100 (Dubey et al. 2024, §3.3.4), charged
        per GPU and scaled to ``n_gpus`` — an assumption that A100 clusters fail per GPU as often as that H100
        cluster did. Checkpoint: the restart state, :func:`chipchain.checkpoint.restart_bytes_per_param` × params (14 B
        for mixed-precision Adam: the recipe's 16 B less the gradients), written
        at ``write_bandwidth`` B/s (default: an assumed 50 GB/s aggregate); ``restart_seconds`` (default: an assumed
        10 minutes) — both rows of ``data/assumptions.csv`` (:mod:`chipchain.assumptions`).
        Interval τ by Daly (2006); goodput G = τ / (M·e^{R/M}·(e^{(τ+C)/M} − 1)); lost time = T/G − T.

        >>> f = Walkthrough().step6_failures()
        >>> round(f.mtbf / 3600, 1), round(f.expected_interruptions), round(f.write_seconds)
        (49.5, 73, 49)
        >>> round(f.checkpoint_interval / 60), round(f.goodput, 3), round(f.lost_seconds / 86400, 1)
        (69, 0.973, 4.0)
        """
        rate, m, size, c, r, tau, g = self._failure_terms(write_bandwidth, restart_seconds, per_gpu_rate)
        t = self.run_seconds
        return FailureStep(rate, m, t, reliability.expected_failures(rate * self.n_gpus, t / g), size, c, r,
                           checkpoint.young_interval(c, m), tau, g, t / g, t / g - t)

    # --- ⑦ electricity (chipchain.power; chapter 9) ---------------------------------------------------------
    def step7_electricity(self, gpu_power=None, host_share=None, pue=None, price_per_kwh=None) -> ElectricityStep:
        """Energy and electricity bill of the run: E = PUE · n · (P_gpu + P_host) · T, cost = E[kWh] · price.

        ``gpu_power`` W (default: the catalog TDP, 400 W for the A100); ``host_share`` W per GPU (default: one method
        for every server, :func:`chipchain.power.host_share` — the server's maximum rated power less its GPUs' TDP,
        per GPU: (6,500 − 8 × 400)/8 = 412.5 W for a DGX A100, 575 W for a DGX H100; an upper reference, since servers
        rarely draw their maximum; a node without a rating in the catalog takes the book's assumed
        ``host_share_per_gpu`` of ``data/assumptions.csv``);
        ``pue`` and ``price_per_kwh`` $/kWh (default: the rows of ``data/energy_facts.csv`` that
        :func:`chipchain.power.electricity` reads, seed 002's 1.4 and $0.12, nearer a US commercial than an industrial
        rate). T is the wall clock of step ⑥ — training plus what failures cost, the basis the rent is billed on too
        (the cluster draws power while it restarts).

        >>> e = Walkthrough().step7_electricity()
        >>> e.host_share, round(e.kwh / 1e6, 2), round(e.dollars / 1e3), round(e.gpu_only_kwh / 1e6, 2)
        (412.5, 4.23, 508, 1.49)
        """
        p_gpu = self.card.require("tdp") if gpu_power is None else _check.positive("gpu_power", gpu_power)
        if host_share is None:
            try:
                host_share = power.host_share(self.cluster.node)
            except KeyError:                 # no rated server in the catalog: the book's stated assumption
                host_share = assumptions.value("host_share_per_gpu")
        t = self.step6_failures().wall_seconds
        e = power.electricity(self.n_gpus, p_gpu, t, host_share, pue, price_per_kwh)
        return ElectricityStep(p_gpu, e.host_share, e.pue, e.price_per_kwh, t, e.facility_power, e.energy,
                               e.energy / kWh, e.dollars, e.gpu_only_energy / kWh)

    # --- ⑦ rent (chipchain.compute; chapter 11's $2 per GPU-hour) -------------------------------------------
    def gpu_rent(self, price_per_gpu_hour=None) -> float:
        """Dollars of GPU time for the whole run on the wall clock, failures and checkpoints included (step ⑥'s
        ``wall_seconds``), at ``price_per_gpu_hour`` (default: the assumed ``gpu_rent_per_hour``, DeepSeek-V3's $2).

        >>> round(Walkthrough().gpu_rent() / 1e6, 2)
        7.44
        """
        hours = compute.gpu_hours_from_seconds(self.step6_failures().wall_seconds, self.n_gpus)
        price = _check.positive("price_per_gpu_hour", _assumed("gpu_rent_per_hour", price_per_gpu_hour))
        return float(compute.cost(hours, price))

    # --- ⑧ export controls (chipchain.policy; chapter 10) ---------------------------------------------------
    @_once
    def step8_export(self) -> ExportStep:
        """The accelerator's classification under every rule in :func:`chipchain.policy.rules`, and for each rule
        the fastest part it lets through (:func:`chipchain.policy.shippable_parts`) with the days the same run takes on it — same
        GPU count, same MFU, the same 6ND (the plan is not re-searched: time depends only on n · peak · MFU).

        >>> e = Walkthrough().step8_export()
        >>> {r: c.category for r, c in e.classifications.items()}
        {'2022-10': '3A090', '2023-10': '3A090.a'}
        >>> e.shippable["2023-10"], round(e.shippable_days["2023-10"])
        ('H20', 311)
        """
        cls, ship, peak, days = {}, {}, {}, {}
        for r in policy.rules():
            cls[r.id] = policy.classify(self.accelerator, r.id)
            parts = policy.shippable_parts(r.id, self.dtype)
            ship[r.id] = parts[0][0] if parts else None
            peak[r.id] = parts[0][1] if parts else None          # never a silent NaN: no part, no figure
            days[r.id] = self.days_on(parts[0][0]) if parts else None
        return ExportStep(self.accelerator.name, cls, ship, peak, days)

    def days_on(self, accelerator) -> float:
        """Days the same run takes on another ``accelerator``: the same GPU count, the same MFU (:attr:`mfu`) and the
        same 6ND, at that part's dense peak in the run's format — the comparison step ⑧ and chapter 10 make (the plan
        is not re-searched: time depends only on n · peak · MFU).

        >>> w = Walkthrough()
        >>> round(w.days_on("H20")), round(w.days_on(w.accelerator)) == round(w.run_seconds / DAY)
        (311, True)
        """
        peak = hardware.get(accelerator).peak_flops(self.dtype)
        return compute.training_time(self.step2_compute().flops, self.n_gpus, peak, self.mfu) / DAY

    # --- ⑨ serving (chipchain.serving, chipchain.inference; chapter 12) -------------------------------------
    def step9_serving(self, price_per_gpu_hour=None, usable_fraction=None) -> ServingStep:
        """Serving the trained model on the run's accelerator in BF16 at its training sequence length: the fewest
        GPUs (a power of two) whose memory holds the weights and one sequence's KV cache, the batch that memory
        holds, roofline tokens per second, joules per token at the GPUs' rated power (hosts and cooling left out,
        as chapter 12 does) and dollars per million tokens at ``price_per_gpu_hour``.

        >>> s = Walkthrough().step9_serving()
        >>> s.n_gpus, s.n_nodes, s.max_batch, round(s.tokens_per_second), round(s.dollars_per_million_tokens, 2)
        (8, 1, 27, 721, 6.17)
        """
        acc, m = self.accelerator, self.model
        price = _check.positive("price_per_gpu_hour", _assumed("gpu_rent_per_hour", price_per_gpu_hour))
        usable = _check.fraction("usable_fraction", _assumed("usable_memory_fraction", usable_fraction))
        if m.name in models.names() and models.get(m.name) is m and hardware.get(acc.name) is acc:   # cache
            return _serving_cached(acc.name, m.name, self.seq, self.gpus_per_node, price, usable)
        return _serving_step(acc, m, self.seq, self.gpus_per_node, price, usable)
