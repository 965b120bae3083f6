"""Lab: sharding memory on a real engine — the bytes each rank holds for weights, gradients and optimizer states
under DDP, ZeRO-1 (``ZeroRedundancyOptimizer``) and FSDP2 (``fully_shard``), against the ZeRO ledger of
:func:`chipchain.memory.sharded_state_breakdown`.

The model is a small stack of FP32 ``Linear`` layers trained with AdamW (recipe ``fp32-adam``: 4 B of weights,
4 B of gradients, 8 B of moments per parameter, 16Ψ in all). Each rank counts the *storage* its tensors occupy —
every distinct buffer once, so a gradient that is a view into a communication bucket is not counted twice. DDP's
gradient buckets are seen through a communication hook (``GradBucket.buffer()``).

Run it on a GPU cluster with ``torchrun --nproc_per_node=8 -m chipchain.labs.sharding``.

>>> d = predicted_bytes(1000, 4, "zero1")
>>> d["weights"], d["gradients"], d["moments"]
(4000.0, 4000.0, 2000.0)
>>> zero1_partition([(256, 256), (256,), (10, 256), (10,)], 2)     # numels of the parameters each rank owns
((65536,), (2560, 256, 10))
>>> fsdp_shard_numel((10, 256), 4), fsdp_shard_numel((10, 256), 4, rank=3)   # 10 rows over 4 ranks: 3, 3, 3, 1
(768, 256)
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from .. import _check, memory
from . import runner

__all__ = ["STRATEGIES", "DEFAULT_WIDTHS", "layer_shapes", "predicted_bytes", "zero1_partition", "fsdp_shard_numel",
           "exact_bytes", "sharded_bytes", "Sharding", "measure"]

#: the strategies measured, and the ZeRO stage of each
STRATEGIES = {"ddp": 0, "ddp-bucket-view": 0, "zero1": 1, "fsdp2": 3}
#: layer widths of the lab's model: 64 → 256 → 256 → 10 (the last layer's 10 rows do not divide by 4: padding)
DEFAULT_WIDTHS = (64, 256, 256, 10)
_RECIPE = "fp32-adam"
_COMPONENTS = ("weights", "gradients", "buckets", "moments")


def _widths(widths):
    w = tuple(_check.integer("widths", x) for x in widths)
    if len(w) < 2:
        raise ValueError(f"widths must name at least an input and an output width, got {widths!r}")
    return w


def layer_shapes(widths=DEFAULT_WIDTHS) -> tuple:
    """Parameter shapes of the lab's model, in ``model.parameters()`` order: (out, in) weight then (out,) bias.

    >>> layer_shapes((4, 3, 2))
    ((3, 4), (3,), (2, 3), (2,))
    """
    w = _widths(widths)
    return tuple(s for a, b in zip(w, w[1:]) for s in ((b, a), (b,)))


def predicted_bytes(params, n_ranks, strategy) -> dict:
    """The ZeRO ledger's bytes per rank, by component, for FP32 AdamW (``fp32-adam``): weights 4Ψ, gradients 4Ψ,
    moments 8Ψ, each divided by N where the stage shards it (:func:`chipchain.memory.sharded_state_breakdown`).
    ``buckets`` is DDP's separate gradient-bucket copy, 4Ψ, which the ledger does not list: present for ``"ddp"``
    only (``gradient_as_bucket_view=True`` makes the gradients views into the buckets).

    Args: ``params`` Ψ; ``n_ranks`` N; ``strategy`` a key of :data:`STRATEGIES`. Returns {component: bytes}.
    """
    s = _check.choice("strategy", strategy, STRATEGIES)
    b = memory.sharded_state_breakdown(params, n_ranks, STRATEGIES[s], _RECIPE)
    return {"weights": b["weights"], "gradients": b["gradients"],
            "buckets": b["gradients"] if s == "ddp" else 0.0, "moments": b["master weights"] + b["optimizer moments"]}


def zero1_partition(shapes, n_ranks) -> tuple:
    """Which parameters ``ZeroRedundancyOptimizer`` gives each rank: whole parameters, largest first, each to the
    rank holding the fewest elements so far (the lowest rank on a tie) — PyTorch's greedy partition. Returns, per
    rank, the element counts of its parameters. Whole parameters cannot split, so the shards are uneven.
    """
    n = _check.integer("n_ranks", n_ranks)
    sizes = [math.prod(_check.integer("shape", d) for d in s) for s in shapes]
    owned, load = [[] for _ in range(n)], [0] * n
    for numel in sorted(sizes, reverse=True):
        r = load.index(min(load))
        owned[r].append(numel)
        load[r] += numel
    return tuple(tuple(x) for x in owned)


def fsdp_shard_numel(shape, n_ranks, rank=None) -> int:
    """Elements of one parameter on one rank under FSDP2. Dim 0 is cut like ``torch.chunk``: N chunks of
    c = ⌈d₀/N⌉ rows, the last ones shorter or empty. The sharded parameter (and its gradient) is stored padded to
    c rows on every rank: c · (other dims) — the default, ``rank=None``. Tensors made from the shard's shape, such
    as Adam's moments, hold only rank ``rank``'s real rows: max(0, min(c, d₀ − rank·c)) · (other dims)."""
    n = _check.integer("n_ranks", n_ranks)
    dims = [_check.integer("shape", d) for d in shape]
    c = math.ceil(dims[0] / n)
    if rank is None:
        return c * math.prod(dims[1:])
    r = _check.integer("rank", rank, minimum=0)
    return max(0, min(c, dims[0] - r * c)) * math.prod(dims[1:])


def exact_bytes(widths, n_ranks, strategy, rank=0) -> dict:
    """The bytes rank ``rank`` must hold, derived exactly from PyTorch's rules (not the ledger's Ψ/N): DDP holds
    everything (plus the bucket copy unless gradients are bucket views); ZeRO-1's moments are 8 B × the elements of
    the parameters :func:`zero1_partition` assigns it; FSDP2 holds :func:`fsdp_shard_numel` elements of each
    parameter, padding included, for weights and gradients, and only its real rows for the two moments (4 B each).
    """
    s = _check.choice("strategy", strategy, STRATEGIES)
    shapes = layer_shapes(widths)
    n = _check.integer("n_ranks", n_ranks)
    r = _check.integer("rank", rank, minimum=0)
    if r >= n:
        raise ValueError(f"rank must be below n_ranks={n}, got {rank!r}")
    psi = sum(math.prod(x) for x in shapes)
    if s == "fsdp2":
        padded = sum(fsdp_shard_numel(x, n) for x in shapes)
        real = sum(fsdp_shard_numel(x, n, r) for x in shapes)
        return {"weights": 4.0 * padded, "gradients": 4.0 * padded, "buckets": 0.0, "moments": 8.0 * real}
    moments = 8.0 * (sum(zero1_partition(shapes, n)[r]) if s == "zero1" else psi)
    return {"weights": 4.0 * psi, "gradients": 4.0 * psi, "buckets": 4.0 * psi if s == "ddp" else 0.0,
            "moments": moments}


# --- the worker (runs on every rank) ---------------------------------------------------------------------------

def _model(widths, seed=0):
    import torch
    torch.manual_seed(seed)
    layers = []
    for a, b in zip(widths, widths[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    return torch.nn.Sequential(*layers[:-1]).to(runner.device())


def _count(groups) -> dict:
    """Bytes of distinct storage per component; a buffer claimed by an earlier component is not counted again."""
    seen, out = set(), {}
    for name, tensors in groups:
        total = 0
        for t in tensors:
            t = t.to_local() if hasattr(t, "to_local") else t
            st = t.untyped_storage()
            if st.data_ptr() not in seen and st.nbytes():
                seen.add(st.data_ptr())
                total += st.nbytes()
        out[name] = float(total)
    return out


def _moments(optimizer):
    return [v for state in optimizer.state.values() for k, v in state.items() if k in ("exp_avg", "exp_avg_sq")]


def sharded_bytes(rank, n_ranks, widths=DEFAULT_WIDTHS, steps=2) -> dict:
    """Worker: train the lab's model ``steps`` AdamW steps under each strategy of :data:`STRATEGIES` and count this
    rank's bytes of weights, gradients, DDP gradient buckets and Adam moments. Returns
    ``{"params": Ψ, "bytes": {strategy: {component: bytes}}}``."""
    import torch
    from torch.distributed.algorithms.ddp_comm_hooks import default_hooks
    from torch.distributed.device_mesh import init_device_mesh
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel as DDP
    dev = runner.device()
    torch.manual_seed(100 + rank)
    x, y = torch.randn(32, widths[0], device=dev), torch.randn(32, widths[-1], device=dev)
    out = {"params": sum(p.numel() for p in _model(widths).parameters()), "bytes": {}}
    for strategy in STRATEGIES:
        model, buckets = _model(widths), {}
        if strategy == "fsdp2":
            mesh = init_device_mesh(dev.type, (n_ranks,))
            for layer in model:
                if isinstance(layer, torch.nn.Linear):
                    fully_shard(layer, mesh=mesh)
            wrapped = fully_shard(model, mesh=mesh)
        else:
            wrapped = DDP(model, gradient_as_bucket_view=(strategy != "ddp"))

            def hook(state, bucket):              # remember each bucket's flat buffer, then all-reduce as usual
                buckets[bucket.index()] = bucket.buffer()
                return default_hooks.allreduce_hook(None, bucket)
            wrapped.register_comm_hook(None, hook)
        if strategy == "zero1":
            opt = ZeroRedundancyOptimizer(wrapped.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3)
        else:
            opt = torch.optim.AdamW(wrapped.parameters(), lr=1e-3)
        for _ in range(steps):
            buckets.clear()
            torch.nn.functional.mse_loss(wrapped(x), y).backward()
            opt.step()
        params = list(model.parameters())
        inner = opt.optim if strategy == "zero1" else opt
        out["bytes"][strategy] = _count([("weights", params), ("gradients", [p.grad for p in params]),
                                         ("buckets", list(buckets.values())), ("moments", _moments(inner))])
    return out


@dataclass(frozen=True)
class Sharding:
    """What :func:`measure` returns: ``params`` Ψ, ``n_ranks``, ``widths`` and ``measured``, one
    {strategy: {component: bytes}} per rank (rank order), plus ``launch_seconds``."""

    params: int
    n_ranks: int
    widths: tuple
    measured: tuple
    launch_seconds: float

    def predicted(self, strategy) -> dict:
        """The ledger's bytes per rank (:func:`predicted_bytes`) for this model and rank count."""
        return predicted_bytes(self.params, self.n_ranks, strategy)

    def exact(self, strategy, rank=0) -> dict:
        """The bytes derived from PyTorch's rules (:func:`exact_bytes`) for ``rank``."""
        return exact_bytes(self.widths, self.n_ranks, strategy, rank)


def measure(n_ranks=4, widths=DEFAULT_WIDTHS, timeout=120.0) -> Sharding:
    """Launch :func:`sharded_bytes` on ``n_ranks`` local gloo ranks; return a :class:`Sharding`."""
    w = _widths(widths)
    run = runner.launch(sharded_bytes, _check.integer("n_ranks", n_ranks), timeout=timeout, widths=list(w))
    return Sharding(run.results[0]["params"], run.n_ranks, w, tuple(r["bytes"] for r in run.results), run.seconds)


if __name__ == "__main__":                   # torchrun --nproc_per_node=N -m chipchain.labs.sharding
    runner.main(sharded_bytes)
