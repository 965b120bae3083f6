"""The data path: document lengths, padding, bucketing and packing, and the tokens a loader must deliver.

Padding waste for a length distribution under naive batching, length bucketing and sequence packing (first-fit
decreasing, FFD); the tokens per second (and bytes per second) a loader must sustain to keep the GPUs fed.
``batch`` is documents per batch, ``seq`` the sequence length in tokens.

>>> round(padding_efficiency([100, 300, 200, 400], batch=2), 3)
0.714
"""
from __future__ import annotations

import math

from ._lazy import np

from . import _check, compute, models, systems

__all__ = ["sample_lengths", "padding_efficiency", "bucket_efficiency", "pack_ffd", "packing_efficiency",
           "loader_tokens_per_second", "cluster_tokens_per_second", "loader_bytes_per_second"]


def sample_lengths(n_docs, median=600, sigma=1.2, max_len=4096, seed=0):
    """``n_docs`` document lengths (tokens) from a log-normal distribution with the given ``median`` and log-space
    ``sigma``, rounded and clipped to [1, ``max_len``]. Web-text lengths are heavy-tailed and roughly log-normal;
    the parameters here are illustrative, not fitted to a particular corpus. Returns an int64 array.

    >>> x = sample_lengths(1000, median=600, sigma=1.2, max_len=4096, seed=0)
    >>> len(x), int(x.min()) >= 1, int(x.max()) <= 4096
    (1000, True, True)
    """
    n = _check.integer("n_docs", n_docs)
    med = _check.positive("median", median)
    sig = _check.positive("sigma", sigma)
    mx = _check.integer("max_len", max_len)
    rng = np.random.default_rng(_check.integer("seed", seed, minimum=0))
    x = np.rint(rng.lognormal(math.log(med), sig, n))
    return np.clip(x, 1, mx).astype(np.int64)


def _lengths(lengths):
    if isinstance(lengths, (str, bytes)):
        raise ValueError("lengths must be a sequence of positive integers")
    x = np.asarray(lengths)
    if x.ndim != 1 or x.size == 0:
        raise ValueError(f"lengths must be a non-empty 1-D sequence, got shape {x.shape}")
    if x.dtype.kind not in "iu" and not (x.dtype.kind == "f" and np.all(np.isfinite(x)) and np.all(x == np.rint(x))):
        raise ValueError("lengths must be whole numbers of tokens")
    if np.any(x < 1):
        raise ValueError(f"lengths must be at least 1 token, got a minimum of {x.min()}")
    return x.astype(np.int64)


def padding_efficiency(lengths, batch, pad_to=None) -> float:
    """Fraction of token slots holding real tokens when documents are batched in arrival order and each batch is
    padded to its longest member (or to a fixed ``pad_to``, the static-shape case):
    E = Σ ℓᵢ / Σ_batches (b · max ℓ in batch).

    >>> padding_efficiency([100, 300, 200, 400], batch=2)   # (100+300+200+400) / (2·300 + 2·400)
    0.7142857142857143
    >>> padding_efficiency([100, 300, 200, 400], batch=2, pad_to=512)
    0.48828125
    """
    x = _lengths(lengths)
    b = _check.integer("batch", batch)
    if pad_to is not None:
        p = _check.integer("pad_to", pad_to)
        if x.max() > p:
            raise ValueError(f"pad_to ({p}) is shorter than the longest document ({x.max()}); truncate first")
        return float(x.sum() / (x.size * p))
    n_full = x.size // b * b
    slots = int(x[:n_full].reshape(-1, b).max(1).sum()) * b
    if n_full < x.size:
        rest = x[n_full:]
        slots += int(rest.max()) * rest.size
    return float(x.sum() / slots)


def bucket_efficiency(lengths, batch, n_buckets=8) -> float:
    """Padding efficiency with length bucketing: documents go to one of ``n_buckets`` buckets by length quantile,
    batches are formed within a bucket (in arrival order) and padded to their longest member.

    >>> x = [10, 1000, 12, 990, 11, 1010, 9, 1005]
    >>> round(padding_efficiency(x, 2), 3), round(bucket_efficiency(x, 2, n_buckets=2), 3)
    (0.505, 0.995)
    """
    x = _lengths(lengths)
    b = _check.integer("batch", batch)
    k = _check.integer("n_buckets", n_buckets)
    edges = np.quantile(x, np.linspace(0, 1, k + 1)[1:-1])
    which = np.searchsorted(edges, x, side="left")
    slots = 0
    for j in range(k):
        xs = x[which == j]
        if xs.size == 0:
            continue
        n_full = xs.size // b * b
        slots += int(xs[:n_full].reshape(-1, b).max(1).sum()) * b if n_full else 0
        if n_full < xs.size:
            slots += int(xs[n_full:].max()) * (xs.size - n_full)
    return float(x.sum() / slots)


def pack_ffd(lengths, seq):
    """First-fit decreasing packing of documents into sequences of ``seq`` tokens: sort by length, longest
    first; put each into the first sequence with room, or open a new one. Documents longer than ``seq`` are
    cut into ``seq``-sized pieces first (as pre-training does). Returns the tokens used in each sequence
    (int64 array). FFD uses at most 11/9·OPT + 6/9 bins (Dósa 2007).

    >>> pack_ffd([500, 400, 300, 300, 200, 200, 100], seq=1000).tolist()
    [1000, 1000]
    """
    x = _lengths(lengths)
    cap = _check.integer("seq", seq)
    whole, rest = np.divmod(x, cap)
    pieces = np.sort(rest[rest > 0])[::-1]
    used = np.zeros(pieces.size + 1, dtype=np.int64)
    n_bins = 0
    for length in pieces.tolist():
        room = cap - used[:n_bins]
        hits = np.flatnonzero(room >= length)
        if hits.size:
            used[hits[0]] += length
        else:
            used[n_bins] = length
            n_bins += 1
    return np.concatenate([np.full(int(whole.sum()), cap, dtype=np.int64), used[:n_bins]])


def packing_efficiency(lengths, seq) -> float:
    """Fraction of token slots filled by FFD packing: Σ ℓᵢ / (sequences × seq).

    >>> packing_efficiency([500, 400, 300, 300, 200, 200, 100], 1000)
    1.0
    """
    used = pack_ffd(lengths, seq)
    return float(used.sum() / (used.size * _check.integer("seq", seq)))


def loader_tokens_per_second(n_gpus, peak_flops, mfu, params, flops_per_param_token=compute.FLOPS_PER_PARAM_TOKEN) -> float:
    """Training tokens per second the cluster consumes, which the data loader must sustain:
    r = n · peak · MFU / (6 · N)  (each token costs 6N FLOPs, Kaplan et al. 2020).

    The running example (1,024 GPUs at 3e14 FLOP/s, 50 % MFU, 175B parameters):

    >>> round(loader_tokens_per_second(1024, 3e14, 0.5, 175e9))
    146286
    """
    n = _check.integer("n_gpus", n_gpus)
    return (n * _check.positive("peak_flops", peak_flops) * _check.fraction("mfu", mfu)
            / (_check.positive("flops_per_param_token", flops_per_param_token) * _check.positive("params", params)))


def cluster_tokens_per_second(model, cluster, mfu, n_gpus=None, dtype="bf16") -> float:
    """:func:`loader_tokens_per_second` for a ``model`` (name or record; its active parameters for an MoE) on a
    ``cluster`` (name or :class:`chipchain.systems.Cluster`; ``n_gpus`` with a name), at the accelerator's dense
    ``dtype`` peak from the catalog.

    One H100 (989.4 TFLOP/s BF16 dense) training Llama-2-7B (6.74e9 parameters) at 40 % MFU:

    >>> round(cluster_tokens_per_second("7B", "H100", 0.4, n_gpus=1))
    9786
    """
    m = models.get(model)
    c = systems.cluster(cluster, n_gpus)
    return loader_tokens_per_second(c.n_gpus, c.accelerator.peak_flops(dtype), mfu,
                                    m.active_params if m.is_moe else m.params)


def loader_bytes_per_second(tokens_per_second, bytes_per_token=4.0, efficiency=1.0) -> float:
    """Bytes per second the loader reads: tokens/s × bytes per token (≈ 4 bytes of UTF-8 text per token for English
    with a BPE tokenizer; 2–4 bytes if pre-tokenized ids are stored) ÷ the fraction of slots holding real tokens.

    >>> round(loader_bytes_per_second(146286, 4.0) / 1e6, 2)
    0.59
    """
    return (_check.nonnegative("tokens_per_second", tokens_per_second)
            * _check.positive("bytes_per_token", bytes_per_token)
            / _check.fraction("efficiency", efficiency))
