"""Failures simulated: a seeded Monte Carlo of a checkpointed run, and a real training loop that restarts.

* **Monte Carlo.** Many runs with exponential failures, each losing the segment in progress and paying a restart;
  their mean wall time agrees with :func:`chipchain.checkpoint.goodput` within sampling error.
* **Exact resume.** A small but real NumPy training loop (two-layer network, Adam, shuffling, dropout) whose
  checkpoint holds the four things a restart must restore: parameters, optimizer state, RNG state and the data
  loader's position. Leave any one out and the resumed run diverges from the uninterrupted one.

Times in seconds; every generator is seeded, so results are identical run to run.

>>> r = simulate_goodput(3600, 60, 600, 24 * 3600, segments=50, runs=50, seed=0)
>>> round(r.goodput_model, 4)
0.9563
"""
from __future__ import annotations

import io
import json
import math
from dataclasses import dataclass

from ._lazy import np

from . import _check
from .checkpoint import goodput

__all__ = ["MonteCarloResult", "simulate_goodput", "Timeline", "simulate_timeline",
           "PARTS", "TinyTrainer", "save_checkpoint", "load_checkpoint", "ResumeResult", "train_with_restart"]


# --- Monte Carlo -----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MonteCarloResult:
    """Outcome of :func:`simulate_goodput`: per-run wall times and the goodput they imply."""

    work: float                 #: seconds of useful compute each run must complete
    wall_times: tuple           #: seconds, one per simulated run
    mean_wall: float
    stderr_wall: float          #: standard error of ``mean_wall``
    failures_mean: float        #: failures per run, averaged
    goodput: float              #: work / mean_wall
    goodput_model: float        #: :func:`goodput` for the same inputs
    z: float                    #: (mean_wall − expected wall) / stderr_wall


def _complete(rng, length: float, m: float, n: int):
    """Wall time to complete ``n`` independent blocks of ``length`` seconds that restart from zero on each
    failure; returns (times, failures)."""
    times = np.zeros(n)
    fails = np.zeros(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        t = rng.exponential(m, size=pending.size)
        ok = t >= length
        times[pending[ok]] += length
        bad = pending[~ok]
        times[bad] += t[~ok]
        fails[bad] += 1
        pending = bad
    return times, fails


#: rounds of :func:`_complete`'s loop allowed: the slowest block needs about e^(length/MTBF) tries, each a round of
#: a few NumPy calls (about 15 µs), whatever the number of blocks
_MAX_ROUNDS = 5e3


def _bounded(t, c, r, m, events, what, limit):
    """Refuse inputs whose simulation would take more than about a second: more than ``limit`` expected draws
    (3·10⁶ vectorised in :func:`simulate_goodput`, 10⁵ loop steps in :func:`simulate_timeline`), or, for the vectorised
    simulation, more than ``_MAX_ROUNDS`` rounds of its loop (a segment longer than about 8.5 MTBFs: two blocks of
    one 10⁶ s segment against a 70,320 s MTBF are 3·10⁶ draws, but 1.5·10⁶ rounds of two draws, 35 s)."""
    tries = math.exp(min((t + c) / m, 50.0)) + math.exp(min(r / m, 50.0))
    rounds = max(math.exp(min((t + c) / m, 50.0)), math.exp(min(r / m, 50.0)))
    if events * tries > limit or (limit > 1e5 and rounds > _MAX_ROUNDS):
        raise ValueError(f"{what}: segments of {t + c:g} s and restarts of {r:g} s against a {m:g} s MTBF would "
                         f"need about {events * tries:.2g} failure draws in about {rounds:.2g} rounds, more than the "
                         f"{limit:.0e} draws or {_MAX_ROUNDS:.0e} rounds this simulation allows (about a second); "
                         f"shorten the segments or lengthen the MTBF")


def simulate_goodput(interval, checkpoint_seconds, restart_seconds, mtbf, segments=200, runs=200,
                     seed=0) -> MonteCarloResult:
    """Simulate ``runs`` training runs of ``segments`` checkpointed segments each, with exponential failures of mean
    ``mtbf``; a failure loses the segment in progress and costs a restart (which can itself be hit by a failure).

    The model's expected wall time per run is ``segments × τ / goodput``; ``z`` measures the simulated mean against it
    in standard errors (|z| < 4 in tests). Seeded with NumPy's ``default_rng(seed)``. Times in seconds.

    >>> r = simulate_goodput(3600, 60, 600, 24 * 3600, segments=100, runs=100, seed=1)
    >>> round(r.goodput_model, 4), abs(r.z) < 4
    (0.9563, True)
    """
    t = _check.positive("interval", interval)
    c = _check.nonnegative("checkpoint_seconds", checkpoint_seconds)
    r = _check.nonnegative("restart_seconds", restart_seconds)
    m = _check.positive("mtbf", mtbf)
    k = _check.integer("segments", segments)
    n = _check.integer("runs", runs, minimum=2)
    _bounded(t, c, r, m, n * k, "simulate_goodput", 3e6)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    seg_times, seg_fails = _complete(rng, t + c, m, n * k)
    total_fails = int(seg_fails.sum())
    restart = np.zeros(n * k)
    if total_fails and r > 0:
        rt, _ = _complete(rng, r, m, total_fails)
        owner = np.repeat(np.arange(n * k), seg_fails.astype(np.intp))   # intp: 32-bit in WebAssembly
        np.add.at(restart, owner, rt)
    wall = (seg_times + restart).reshape(n, k).sum(axis=1)
    mean = float(wall.mean())
    se = float(wall.std(ddof=1) / math.sqrt(n))
    g_model = goodput(t, c, r, m)
    expected = k * t / g_model
    fails_per_run = float(seg_fails.reshape(n, k).sum(1).mean())
    return MonteCarloResult(k * t, tuple(float(w) for w in wall), mean, se, fails_per_run,
                            k * t / mean, g_model, (mean - expected) / se if se > 0 else 0.0)


@dataclass(frozen=True, eq=False)
class Timeline:
    """One simulated run (:func:`simulate_timeline`): progress against wall-clock time, and the failures."""

    wall: np.ndarray            #: wall-clock times, seconds (non-decreasing)
    progress: np.ndarray        #: work done at each time, including work not yet saved, seconds
    failures: np.ndarray        #: wall-clock times of the failures, seconds


def simulate_timeline(interval, checkpoint_seconds, restart_seconds, mtbf, work, seed=0) -> Timeline:
    """One simulated run as a :class:`Timeline`: progress (work done including work not yet saved) against wall
    time; progress drops back to the last checkpoint at every failure. Seeded; for figures. Times in seconds.

    >>> tl = simulate_timeline(3600, 60, 600, 6 * 3600, 20 * 3600, seed=0)
    >>> float(tl.progress[-1]) == 20 * 3600 and len(tl.failures) > 0
    True
    """
    t = _check.positive("interval", interval)
    c = _check.nonnegative("checkpoint_seconds", checkpoint_seconds)
    r = _check.nonnegative("restart_seconds", restart_seconds)
    m = _check.positive("mtbf", mtbf)
    total = _check.positive("work", work)
    _bounded(t, c, r, m, math.ceil(total / t), "simulate_timeline", 1e5)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    now, saved = 0.0, 0.0
    wall, prog, fails = [0.0], [0.0], []
    next_fail = rng.exponential(m)
    while saved < total - 1e-9:
        seg = min(t, total - saved)
        end = now + seg + c
        if next_fail >= end:                       # segment and its checkpoint complete
            wall += [now + seg, end]
            prog += [saved + seg, saved + seg]
            now, saved = end, saved + seg
            continue
        done = min(next_fail - now, seg)           # failure: progress falls back to the checkpoint
        wall += [next_fail, next_fail]
        prog += [saved + done, saved]
        fails.append(next_fail)
        now = next_fail
        next_fail = now + rng.exponential(m)
        while next_fail < now + r:                 # restart interrupted: start it again
            now = next_fail
            fails.append(now)
            next_fail = now + rng.exponential(m)
        now += r
        wall.append(now)
        prog.append(saved)
    return Timeline(np.array(wall), np.array(prog), np.array(fails))



# --- exact resume: a small real training loop --------------------------------------------------------------------

#: the four things a checkpoint must hold for an exact resume
PARTS = ("params", "optimizer", "rng", "loader")


class TinyTrainer:
    """A two-layer network (ReLU, dropout) trained with Adam on a synthetic regression set, in NumPy.

    Everything a run depends on lives in four places, which :func:`save_checkpoint` can save separately:

    * ``params`` — W1, b1, W2, b2, initialised from ``default_rng(seed)``;
    * ``optimizer`` — Adam's first and second moments and its step count;
    * ``rng`` — the generator that draws the dropout masks, seeded ``default_rng([seed, 1])``;
    * ``loader`` — the epoch and the position within it; epoch e is shuffled with ``default_rng([seed, 2, e])``
      (as a distributed sampler does with ``set_epoch``).

    >>> t = TinyTrainer(seed=0)
    >>> losses = [t.step() for _ in range(3)]
    >>> len(losses), t.t
    (3, 3)
    """

    def __init__(self, seed: int = 0, n_samples: int = 256, n_in: int = 8, hidden: int = 32, batch: int = 32,
                 lr: float = 1e-2, dropout: float = 0.2):
        self.seed = _check.integer("seed", seed, minimum=0)
        self.n_samples = _check.integer("n_samples", n_samples)
        self.batch = _check.integer("batch", batch)
        if self.batch > self.n_samples:
            raise ValueError(f"batch ({batch}) must not exceed n_samples ({n_samples})")
        self.lr = _check.positive("lr", lr)
        self.dropout = _check.probability("dropout", dropout)
        if self.dropout >= 1:
            raise ValueError(f"dropout must be below 1, got {dropout!r}")
        n_in, hidden = _check.integer("n_in", n_in), _check.integer("hidden", hidden)
        data = np.random.default_rng([self.seed, 0])
        self.X = data.standard_normal((self.n_samples, n_in))
        w_true = data.standard_normal(n_in)
        self.y = np.sin(self.X @ w_true)[:, None] + 0.1 * data.standard_normal((self.n_samples, 1))
        init = np.random.default_rng(self.seed)
        self.params = {"W1": init.standard_normal((n_in, hidden)) / math.sqrt(n_in), "b1": np.zeros(hidden),
                       "W2": init.standard_normal((hidden, 1)) / math.sqrt(hidden), "b2": np.zeros(1)}
        self.m = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.v = {k: np.zeros_like(v) for k, v in self.params.items()}
        self.t = 0
        self.rng = np.random.default_rng([self.seed, 1])
        self.epoch, self.cursor = 0, 0
        self.batches_per_epoch = self.n_samples // self.batch

    def _next_batch(self):
        order = np.random.default_rng([self.seed, 2, self.epoch]).permutation(self.n_samples)
        idx = order[self.cursor * self.batch:(self.cursor + 1) * self.batch]
        self.cursor += 1
        if self.cursor == self.batches_per_epoch:
            self.epoch, self.cursor = self.epoch + 1, 0
        return self.X[idx], self.y[idx]

    def step(self) -> float:
        """One Adam step on the next mini-batch; returns the mini-batch loss (mean squared error) before the step."""
        x, y = self._next_batch()
        p = self.params
        h = x @ p["W1"] + p["b1"]
        a = np.maximum(h, 0.0)
        keep = 1.0 - self.dropout
        mask = (self.rng.random(a.shape) < keep) / keep
        d = a * mask
        out = d @ p["W2"] + p["b2"]
        err = out - y
        loss = float(np.mean(err ** 2))
        g_out = 2.0 * err / err.shape[0]
        g = {"W2": d.T @ g_out, "b2": g_out.sum(0)}
        g_h = (g_out @ p["W2"].T) * mask * (h > 0)
        g["W1"], g["b1"] = x.T @ g_h, g_h.sum(0)
        self.t += 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        for k in p:
            self.m[k] = b1 * self.m[k] + (1 - b1) * g[k]
            self.v[k] = b2 * self.v[k] + (1 - b2) * g[k] ** 2
            m_hat = self.m[k] / (1 - b1 ** self.t)
            v_hat = self.v[k] / (1 - b2 ** self.t)
            p[k] = p[k] - self.lr * m_hat / (np.sqrt(v_hat) + eps)
        return loss

    def flat_params(self):
        """All parameters as one float64 vector (for bit-for-bit comparison)."""
        return np.concatenate([self.params[k].ravel() for k in ("W1", "b1", "W2", "b2")])


def save_checkpoint(trainer: TinyTrainer, parts=PARTS) -> bytes:
    """Serialise the chosen ``parts`` of a trainer's state (a subset of :data:`PARTS`) to bytes (NumPy ``.npz``;
    the RNG state as JSON). Arrays are stored bit for bit.

    >>> blob = save_checkpoint(TinyTrainer(), ("params",))
    >>> isinstance(blob, bytes) and len(blob) > 1000
    True
    """
    if not isinstance(trainer, TinyTrainer):
        raise ValueError(f"trainer must be a TinyTrainer, got {type(trainer).__name__}")
    parts = tuple(_check.choice("parts", p, PARTS) for p in parts)
    arrays = {"__parts__": np.array(json.dumps(list(parts)))}
    if "params" in parts:
        arrays.update({f"params.{k}": v for k, v in trainer.params.items()})
    if "optimizer" in parts:
        arrays.update({f"m.{k}": v for k, v in trainer.m.items()})
        arrays.update({f"v.{k}": v for k, v in trainer.v.items()})
        arrays["t"] = np.array(trainer.t)
    if "rng" in parts:
        arrays["rng"] = np.array(json.dumps(trainer.rng.bit_generator.state))
    if "loader" in parts:
        arrays["loader"] = np.array([trainer.epoch, trainer.cursor])
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def load_checkpoint(trainer: TinyTrainer, blob: bytes) -> TinyTrainer:
    """Restore into ``trainer`` (a freshly started one) whatever parts ``blob`` holds; the rest keeps the fresh
    process's values — which is exactly what happens when a checkpoint forgets something. Returns the trainer.

    >>> t = load_checkpoint(TinyTrainer(), save_checkpoint(TinyTrainer(), PARTS))
    >>> t.t
    0
    """
    if not isinstance(trainer, TinyTrainer):
        raise ValueError(f"trainer must be a TinyTrainer, got {type(trainer).__name__}")
    if not isinstance(blob, (bytes, bytearray)):
        raise ValueError(f"blob must be bytes from save_checkpoint, got {type(blob).__name__}")
    with np.load(io.BytesIO(blob)) as z:
        parts = json.loads(str(z["__parts__"]))
        if "params" in parts:
            trainer.params = {k: z[f"params.{k}"].copy() for k in trainer.params}
        if "optimizer" in parts:
            trainer.m = {k: z[f"m.{k}"].copy() for k in trainer.m}
            trainer.v = {k: z[f"v.{k}"].copy() for k in trainer.v}
            trainer.t = int(z["t"])
        if "rng" in parts:
            trainer.rng.bit_generator.state = json.loads(str(z["rng"]))
        if "loader" in parts:
            trainer.epoch, trainer.cursor = (int(v) for v in z["loader"])
    return trainer


@dataclass(frozen=True)
class ResumeResult:
    """Outcome of :func:`train_with_restart`."""

    kept: tuple                 #: the parts the checkpoint held
    stop_at: int | None
    losses: tuple               #: mini-batch loss at every step, across the restart
    params: object              #: final parameters, one flat float64 array
    checkpoint_bytes: int       #: size of the serialised checkpoint (0 without a restart)


def train_with_restart(steps=120, stop_at=None, keep=PARTS, seed=0) -> ResumeResult:
    """Train :class:`TinyTrainer` for ``steps`` steps; if ``stop_at`` is given, stop there, save a checkpoint holding
    only the parts in ``keep``, throw the process away, start a fresh one and load the checkpoint, and finish.

    With all four parts the final weights are bit-identical to an uninterrupted run; leaving any one out makes the
    runs diverge (for any ``0 < stop_at < steps``).

    >>> ref = train_with_restart(40)
    >>> full = train_with_restart(40, stop_at=17)
    >>> bool((ref.params == full.params).all())
    True
    >>> no_rng = train_with_restart(40, stop_at=17, keep=("params", "optimizer", "loader"))
    >>> bool((ref.params == no_rng.params).all())
    False
    """
    n = _check.integer("steps", steps)
    keep = tuple(_check.choice("keep", p, PARTS) for p in keep)
    if stop_at is not None:
        stop_at = _check.integer("stop_at", stop_at, minimum=0)
        if stop_at > n:
            raise ValueError(f"stop_at ({stop_at}) must not exceed steps ({n})")
    trainer = TinyTrainer(seed=seed)
    losses, size = [], 0
    for i in range(n):
        if stop_at is not None and i == stop_at:
            blob = save_checkpoint(trainer, keep)
            size = len(blob)
            trainer = load_checkpoint(TinyTrainer(seed=seed), blob)
        losses.append(trainer.step())
    return ResumeResult(keep, stop_at, tuple(losses), trainer.flat_params(), size)
