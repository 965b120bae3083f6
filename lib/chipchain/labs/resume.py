"""Lab: exact resume on a real engine — stop a training run, save its state, start again from the file, and check
that the continuation is bit for bit the run that never stopped.

What must be saved (the four parts of :data:`STATE`): the model's weights, the optimizer's state (Adam's moments and
step count), the random-number generator (dropout draws from it) and the data loader's position (which samples come
next). Leave one out and the continuation drifts. The lab trains a small MLP with dropout and AdamW on synthetic
data:

* :func:`resume_single` — one process, in this interpreter.
* :func:`resume_worker` on N ranks (:func:`measure`) — DDP, whose first iteration after a restart all-reduces one
  big gradient bucket while the uninterrupted run has long since rebuilt its buckets in gradient-ready order, so
  each element is summed in a different order (different rounding) unless bucket rebuilding is off
  (``find_unused_parameters=True`` keeps the initial buckets for good); and FSDP2 saved and loaded with
  distributed checkpointing (DCP), each rank writing its own shards.

On a cluster: ``torchrun --nproc_per_node=8 -m chipchain.labs.resume`` (with ``CHECKPOINT_DIR`` on shared storage).

>>> Loader(10, 4, seed=0).state_dict()
{'epoch': 0, 'position': 0}
"""
from __future__ import annotations

import io
import os
import tempfile
from dataclasses import dataclass

from .. import _check
from . import runner

__all__ = ["STATE", "CASES", "Loader", "Resume", "resume_single", "resume_worker", "measure"]

#: the parts of a training state a checkpoint must hold for an exact resume
STATE = ("model", "optimizer", "rng", "loader")
#: the distributed cases :func:`resume_worker` runs
CASES = ("ddp", "ddp-no-rebuild", "fsdp2")
_WIDTHS = (64, 512, 512, 10)         # 301,066 parameters: 1.2 MB of FP32 gradients, more than DDP's 1 MiB first bucket


class Loader:
    """A data loader whose position is state: epoch e visits ``torch.randperm(n_samples)`` drawn from a generator
    seeded with ``seed + e`` (as ``DistributedSampler`` does), rank r of N taking every N-th index from r, in
    batches of ``batch``. ``state_dict()`` is ``{"epoch", "position"}``; ``load_state_dict`` restores it."""

    def __init__(self, n_samples, batch, seed=0, rank=0, n_ranks=1):
        self.n = _check.integer("n_samples", n_samples)
        self.batch = _check.integer("batch", batch)
        self.seed = _check.integer("seed", seed, minimum=0)
        self.rank, self.n_ranks = _check.integer("rank", rank, minimum=0), _check.integer("n_ranks", n_ranks)
        self.epoch, self.position = 0, 0

    def state_dict(self) -> dict:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])

    def next(self):
        """The next batch of sample indices (a LongTensor), moving to a new epoch when this one is used up."""
        import torch
        order = torch.randperm(self.n, generator=torch.Generator().manual_seed(self.seed + self.epoch))
        mine = order[self.rank::self.n_ranks]
        if self.position + self.batch > len(mine):
            self.epoch, self.position = self.epoch + 1, 0
            return self.next()
        idx = mine[self.position:self.position + self.batch]
        self.position += self.batch
        return idx


def _data(n=256):
    import torch
    g = torch.Generator().manual_seed(1234)
    x = torch.randn(n, _WIDTHS[0], generator=g)
    return x.to(runner.device()), torch.tanh(x @ torch.randn(_WIDTHS[0], _WIDTHS[-1], generator=g)).to(runner.device())


def _model(seed):
    import torch
    torch.manual_seed(seed)
    w = _WIDTHS
    return torch.nn.Sequential(torch.nn.Linear(w[0], w[1]), torch.nn.ReLU(), torch.nn.Dropout(0.1),
                               torch.nn.Linear(w[1], w[2]), torch.nn.ReLU(), torch.nn.Linear(w[2], w[3])
                               ).to(runner.device())


def _train(model, opt, loader, data, steps):
    import torch
    losses = []
    for _ in range(steps):
        idx = loader.next().to(data[0].device)
        loss = torch.nn.functional.mse_loss(model(data[0][idx]), data[1][idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def _compare(a, b) -> tuple:
    """(identical, largest absolute difference) over two models' parameters (local shards for DTensors)."""
    diffs = []
    for p, q in zip(a.parameters(), b.parameters()):
        p, q = [t.to_local() if hasattr(t, "to_local") else t for t in (p.detach(), q.detach())]
        diffs.append((p.float() - q.float()).abs().max().item() if p.numel() else 0.0)
    return all(d == 0 for d in diffs), max(diffs)


@dataclass(frozen=True)
class Resume:
    """One resume experiment: ``restored`` (the parts of :data:`STATE` reloaded), ``identical`` (every weight and
    every loss after the restart equal, bit for bit, to the uninterrupted run's), ``max_difference`` (largest
    absolute weight difference at the end) and the losses after the restart of both runs."""

    case: str
    restored: tuple
    identical: bool
    max_difference: float
    losses: tuple
    resumed_losses: tuple


def _state(which, model, opt, loader):
    import torch
    return {"model": model.state_dict(), "optimizer": opt.state_dict(), "rng": torch.get_rng_state(),
            "loader": loader.state_dict()}


@runner.single_threaded
def resume_single(steps=8, save_at=3, restore=STATE, seed=0) -> Resume:
    """Train ``steps`` steps straight; train ``save_at`` steps, save the state to bytes (``torch.save``), build a
    fresh model, optimizer and loader (differently initialised), reload the parts in ``restore`` and train the rest.

    Args: ``steps`` > ``save_at`` ≥ 1; ``restore`` a subset of :data:`STATE`; ``seed`` (int ≥ 0). Returns a
    :class:`Resume`.
    """
    import torch
    n, k = _check.integer("steps", steps, minimum=2), _check.integer("save_at", save_at)
    if k >= n:
        raise ValueError(f"save_at ({k}) must be below steps ({n})")
    parts = tuple(_check.choice("restore", r, STATE) for r in restore)
    sd = _check.integer("seed", seed, minimum=0)
    data = _data()

    def fresh(model_seed):
        model = _model(model_seed)
        return model, torch.optim.AdamW(model.parameters(), lr=1e-3), Loader(len(data[0]), 16, sd)
    ref, opt, loader = fresh(sd)
    ref_losses = _train(ref, opt, loader, data, n)[k:]
    model, opt, loader = fresh(sd)
    _train(model, opt, loader, data, k)
    buf = io.BytesIO()
    torch.save(_state(parts, model, opt, loader), buf)
    model, opt, loader = fresh(sd + 1)                      # a new process: other weights, its own RNG stream
    torch.manual_seed(sd + 1)
    state = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    targets = {"model": model, "optimizer": opt, "loader": loader}
    for part in parts:
        if part == "rng":
            torch.set_rng_state(state["rng"])
        else:
            targets[part].load_state_dict(state[part])
    losses = _train(model, opt, loader, data, n - k)
    same, diff = _compare(ref, model)
    return Resume("single process", parts, same and losses == ref_losses, diff, tuple(ref_losses), tuple(losses))


# --- the distributed worker -----------------------------------------------------------------------------------

def _wrap(case, model, n_ranks):
    import torch
    if case == "fsdp2":
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard
        mesh = init_device_mesh(runner.device().type, (n_ranks,))
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer, mesh=mesh)
        return fully_shard(model, mesh=mesh)
    from torch.nn.parallel import DistributedDataParallel as DDP
    return DDP(model, find_unused_parameters=(case == "ddp-no-rebuild"))


def _save(case, model, opt, loader, path, rank):
    import torch
    extra = {"rng": torch.get_rng_state(), "loader": loader.state_dict()}
    if case == "fsdp2":
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict
        msd, osd = get_state_dict(model, opt)
        dcp.save({"model": msd, "optimizer": osd}, checkpoint_id=path)
    else:
        extra.update(model=model.module.state_dict(), optimizer=opt.state_dict())
    torch.save(extra, os.path.join(path, f"rank{rank}.pt"))


def _load(case, model, opt, loader, path, rank):
    import torch
    extra = torch.load(os.path.join(path, f"rank{rank}.pt"), weights_only=True)
    if case == "fsdp2":
        import torch.distributed.checkpoint as dcp
        from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
        msd, osd = get_state_dict(model, opt)
        state = {"model": msd, "optimizer": osd}
        dcp.load(state, checkpoint_id=path)
        set_state_dict(model, opt, model_state_dict=state["model"], optim_state_dict=state["optimizer"])
    else:
        model.module.load_state_dict(extra["model"])
        opt.load_state_dict(extra["optimizer"])
    torch.set_rng_state(extra["rng"])
    loader.load_state_dict(extra["loader"])


def resume_worker(rank, n_ranks, cases=CASES, steps=6, save_at=2, checkpoint_dir=None) -> dict:
    """Worker: for each case of :data:`CASES`, train ``steps`` steps straight, then train ``save_at`` steps, save
    (model, optimizer, RNG, loader; DCP for FSDP2) under ``checkpoint_dir``, rebuild the wrapped model from a
    different initialisation, load, and train the rest. Returns {case: {"identical", "max_difference", "losses",
    "resumed_losses"}} for this rank."""
    import torch
    import torch.distributed as dist
    root = checkpoint_dir or os.environ.get("CHECKPOINT_DIR") or tempfile.gettempdir()
    data, out = _data(), {}
    for case in cases:
        path = os.path.join(root, f"{case}-step{save_at}")
        os.makedirs(path, exist_ok=True)

        def fresh(seed):
            model = _wrap(case, _model(seed), n_ranks)
            torch.manual_seed(100 + rank)
            return model, torch.optim.AdamW(model.parameters(), lr=1e-3), Loader(len(data[0]), 16, 0, rank, n_ranks)
        ref, opt, loader = fresh(0)
        ref_losses = _train(ref, opt, loader, data, steps)[save_at:]
        model, opt, loader = fresh(0)
        _train(model, opt, loader, data, save_at)
        _save(case, model, opt, loader, path, rank)
        dist.barrier()
        model, opt, loader = fresh(1)
        _load(case, model, opt, loader, path, rank)
        losses = _train(model, opt, loader, data, steps - save_at)
        same, diff = _compare(ref, model)
        out[case] = {"identical": bool(same and losses == ref_losses), "max_difference": diff,
                     "losses": ref_losses, "resumed_losses": losses}
    return out


def measure(n_ranks=4, cases=CASES, steps=6, save_at=2, timeout=180.0) -> dict:
    """Launch :func:`resume_worker` on ``n_ranks`` local gloo ranks (a temporary checkpoint directory) and return
    {case: :class:`Resume`}, identical only if identical on every rank."""
    n = _check.integer("n_ranks", n_ranks)
    cs = [_check.choice("cases", c, CASES) for c in cases]
    with tempfile.TemporaryDirectory(prefix="chipchain-resume-") as root:
        run = runner.launch(resume_worker, n, timeout=timeout, cases=cs, steps=_check.integer("steps", steps),
                            save_at=_check.integer("save_at", save_at), checkpoint_dir=root)
    out = {}
    for c in cs:
        per_rank = [r[c] for r in run.results]
        out[c] = Resume(c, STATE, all(r["identical"] for r in per_rank),
                        max(r["max_difference"] for r in per_rank), tuple(per_rank[0]["losses"]),
                        tuple(per_rank[0]["resumed_losses"]))
    return out


if __name__ == "__main__":                   # torchrun --nproc_per_node=N -m chipchain.labs.resume
    runner.main(resume_worker)
