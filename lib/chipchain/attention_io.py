"""Attention on a GPU: the IO model (HBM accesses against an on-chip SRAM) and the memory attention needs.

The IO model counts **elements** moved between "HBM" (the full arrays) and an "SRAM" that holds ``sram`` elements
(Dao et al. 2022 count the same way; multiply by the bytes per element for bytes). Theorem 2 of Dao et al. (2022):
standard attention needs Θ(N·d + N²) HBM accesses, FlashAttention Θ(N²·d²/M) for d ≤ M ≤ N·d. The counts match an
instrumented run of :func:`chipchain.attention.flash_attention` exactly. The sizes (:func:`score_matrix_bytes`,
:func:`attention_activation_bytes`) accept NumPy arrays of sequence lengths.

>>> flash_hbm_accesses(1024, 64, sram_per_sm("A100") // 2) < standard_hbm_accesses(1024, 64, sram_per_sm("A100") // 2)
True
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ._lazy import np

from . import _check, _data, hardware, models

__all__ = [
    "SRAM_KINDS", "sram_per_sm", "block_sizes", "dao_block_sizes", "standard_hbm_accesses", "flash_hbm_accesses", "theorem2_standard",
    "theorem2_flash", "score_matrix_bytes", "attention_activation_bytes", "AttentionStep", "running_example",
    "TileStep", "flash_tile_steps",
]

#: what an SM offers a kernel, by kind: ``"l1_shared"`` the combined L1 data cache and shared memory (the SRAM per
#: SM of Dao et al. 2022, Sec. 2.1: 192 KiB on the A100), ``"shared"`` the most of it a kernel can reserve as shared
#: memory. Per-SM figures (in KiB, NVIDIA's "KB") live in ``data/sm_memory.csv`` with their sources.
SRAM_KINDS = ("l1_shared", "shared")


def _sm_rows() -> dict:
    return {hardware.get(r["name"]).name: r for r in _data.rows("sm_memory.csv")}


def sram_per_sm(accelerator, kind="l1_shared") -> int:
    """On-chip SRAM per streaming multiprocessor of ``accelerator`` (any catalog name or alias, or the record), in
    bytes: ``kind="l1_shared"`` the combined L1/shared memory, ``"shared"`` the largest shared-memory carve-out
    (NVIDIA Ampere and Hopper whitepapers; ``data/sm_memory.csv``). Compare like with like: A100 192 KiB against
    H100 256 KiB combined, 164 KiB against 228 KiB of shared memory. An unknown name raises ``KeyError`` with the
    nearest names; a chip without the figure the catalog's ``ValueError``.

    >>> sram_per_sm("A100") // 1024, sram_per_sm("H100") // 1024
    (192, 256)
    >>> sram_per_sm("A100", "shared") // 1024, sram_per_sm("H100", "shared") // 1024
    (164, 228)
    >>> sram_per_sm("B200")
    Traceback (most recent call last):
    ...
    ValueError: B200 has no 'sram_per_sm' figure in the catalog
    """
    acc = hardware.get(accelerator)
    k = _check.choice("kind", kind, SRAM_KINDS)
    row = _sm_rows().get(acc.name)
    if row is None:
        raise _check.Missing(acc.name, "sram_per_sm").error()
    return int(row["l1_shared_KiB" if k == "l1_shared" else "max_shared_KiB"]) * 1024


def _counts(name, value):
    """An integer ≥ 1 (returned as int), or an array of them (returned as a float array): element-wise sizes."""
    if np.ndim(value) == 0:
        return _check.integer(name, value.item() if isinstance(value, np.generic) else value)
    a = np.asarray(value)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} must hold integers, got dtype {a.dtype}")
    if a.size == 0:
        raise ValueError(f"{name} must not be empty")
    if not np.isfinite(a).all() or (a != np.round(a)).any():
        raise ValueError(f"{name} must hold integers, got {value!r}")
    if (a < 1).any():
        raise ValueError(f"{name} must be at least 1, got {value!r}")
    return a.astype(float)


def _block(name, value):
    return _check.integer(name, value, minimum=1)


# --- the IO model -------------------------------------------------------------------------------------------------

def dao_block_sizes(d, sram) -> tuple:
    """Dao et al. (2022), Algorithm 1, line 1: B_c = ⌈M/(4d)⌉ rows of K and V, B_r = min(⌈M/(4d)⌉, d) rows of Q,
    for an SRAM of M = ``sram`` elements and head dimension ``d``. K/V blocks are the outer loop there. The choice
    is sized for the O(·) bound, not to the element: the four tiles plus the B_r×B_c score tile can exceed M by up
    to a quarter (2·B_c·d ≈ M/2, 2·B_r·d ≤ M/2, B_r·B_c ≤ M/4).

    >>> dao_block_sizes(64, 98304)       # 192 KiB of BF16 elements, d = 64
    (64, 384)
    """
    d = _check.integer("d", d)
    m = _check.integer("sram", sram)
    bc = -(-m // (4 * d))
    return min(bc, d), bc


def block_sizes(d, sram) -> tuple:
    """Tile sizes (B_r, B_c) this book uses for an SRAM of ``sram`` elements and head dimension ``d``.

    B_c = min(d, ⌊M/(4d)⌋) rows of K and V; then B_r, the largest integer with
    2·B_r·d (Q_i, Õ_i) + 2·B_c·d (K_j, V_j) + B_r·B_c (S_ij) + 2·B_r (m, ℓ) ≤ M.
    Where it differs from Dao et al. (2022), Algorithm 1 (:func:`dao_block_sizes`: B_c = ⌈M/4d⌉,
    B_r = min(B_c, d)): the loops are swapped as in FlashAttention-2 (Q blocks outside, so the *outer* tile is the
    large one: B_r here plays Dao's B_c and B_c plays Dao's B_r); ⌊ ⌋ replaces ⌈ ⌉; and the outer tile fills the
    SRAM exactly instead of taking M/4d, so every tile really fits. Raises ValueError if even one row of each tile
    does not fit (M < 4d + 3).

    >>> block_sizes(64, 98304)          # 192 KiB of BF16 elements, d = 64
    (464, 64)
    """
    d = _check.integer("d", d)
    m = _check.integer("sram", sram)
    bc = min(d, m // (4 * d))
    br = (m - 2 * bc * d) // (2 * d + bc + 2) if bc >= 1 else 0
    if br < 1:
        raise ValueError(f"sram must hold at least one row of Q, K, V and O (4·d + 3 = {4 * d + 3} elements "
                         f"for d = {d}), got {sram!r}")
    return br, bc


def _loaded_keys(n, nk, bq, bk, causal):
    """Σ over Q blocks of the number of keys in the K/V blocks that Q block loads."""
    tr = -(-n // bq)
    if not causal:
        return tr * nk
    qe = np.minimum(np.arange(1, tr + 1, dtype=np.int64) * bq, n)
    kstop = np.minimum(qe, nk)
    return int(np.minimum(-(-kstop // bk) * bk, nk).sum())


def flash_hbm_accesses(n, d, sram=None, block_q=None, block_k=None, causal=False, n_k=None, d_v=None) -> int:
    """HBM accesses (elements) of :func:`flash_attention` for one head, counted block by block.

    A = N·d (read Q) + Σ_i keys(i)·(d + d_v) (read K_j, V_j for every block j that Q block i needs) + N·d_v
    (write O). Without a mask keys(i) = N_k for each of the ⌈N/B_r⌉ Q blocks. Give either ``sram`` (elements;
    the tiles come from :func:`block_sizes`) or both ``block_q`` and ``block_k``. Equals the tally of an
    instrumented run (``flash_attention(..., counter=IOCounter())``) for one head.
    Source: the access pattern of Dao et al. (2022), Algorithm 1 / Theorem 2, in FlashAttention-2's loop order.

    >>> flash_hbm_accesses(1024, 64, block_q=256, block_k=64)     # 64K + 4·1024·128 + 64K
    655360
    """
    n = _check.integer("n", n)
    d = _check.integer("d", d)
    nk = n if n_k is None else _check.integer("n_k", n_k)
    dv = d if d_v is None else _check.integer("d_v", d_v)
    causal = _check.flag("causal", causal)
    if sram is not None:
        if block_q is not None or block_k is not None:
            raise ValueError("give either sram or block_q and block_k, not both")
        bq, bk = block_sizes(d, sram)
    elif block_q is None or block_k is None:
        raise ValueError("give sram, or both block_q and block_k")
    else:
        bq, bk = _block("block_q", block_q), _block("block_k", block_k)
    return n * d + _loaded_keys(n, nk, bq, bk, causal) * (d + dv) + n * dv


@dataclass(frozen=True)
class TileStep:
    """One step of :func:`flash_tile_steps`: Q block ``i`` (rows ``q_rows``, a half-open range) and K/V block ``j``
    (rows ``k_rows``) sit in SRAM (``None`` for the final state); ``loaded`` the elements this step moved between
    HBM and SRAM (reads of Q_i, K_j, V_j; the write of O_i when the row of blocks ends); ``total`` the elements
    moved so far."""

    i: int | None
    j: int | None
    q_rows: tuple | None
    k_rows: tuple | None
    loaded: int
    total: int
    writes_output: bool


def flash_tile_steps(n, d, sram=None, block_q=None, block_k=None) -> list:
    """FlashAttention's forward pass for one head, tile by tile, in FlashAttention-2's loop order (Dao 2023):
    the **outer** loop runs over Q blocks (B_r rows, loaded once with its output accumulator), the **inner** loop
    over K/V blocks (B_c rows each, loaded for every Q block). Step (i, j) loads K_j and V_j (2·B_c·d elements),
    plus Q_i (B_r·d) when j = 0; the last j of a row writes O_i (B_r·d). The list starts with the state before any
    load and ends with every block done; its last ``total`` equals :func:`flash_hbm_accesses` (no mask).

    ``n`` sequence length, ``d`` head dimension; ``sram`` (elements; tiles from :func:`block_sizes`) or both
    ``block_q`` and ``block_k``. At most 4,096 steps.

    >>> st = flash_tile_steps(1024, 64, block_q=256, block_k=256)
    >>> len(st), st[1].loaded, st[-1].total == flash_hbm_accesses(1024, 64, block_q=256, block_k=256)
    (17, 49152, True)
    """
    n = _check.integer("n", n)
    d = _check.integer("d", d)
    if sram is not None:
        if block_q is not None or block_k is not None:
            raise ValueError("give either sram or block_q and block_k, not both")
        bq, bk = block_sizes(d, sram)
    elif block_q is None or block_k is None:
        raise ValueError("give sram, or both block_q and block_k")
    else:
        bq, bk = _block("block_q", block_q), _block("block_k", block_k)
    tr, tc = -(-n // bq), -(-n // bk)
    if tr * tc > 4096:
        raise ValueError(f"{tr} × {tc} = {tr * tc:,} tile steps is too many to list (at most 4,096): use larger "
                         f"blocks or a shorter n than {n:,}")
    out, total = [TileStep(None, None, None, None, 0, 0, False)], 0
    for i in range(tr):
        q = (i * bq, min(n, (i + 1) * bq))
        for j in range(tc):
            k = (j * bk, min(n, (j + 1) * bk))
            last = j == tc - 1
            loaded = 2 * (k[1] - k[0]) * d + ((q[1] - q[0]) * d if j == 0 else 0) + ((q[1] - q[0]) * d if last else 0)
            total += loaded
            out.append(TileStep(i, j, q, k, loaded, total, last))
    return out


def standard_hbm_accesses(n, d, sram=None) -> int:
    """HBM accesses (elements) of standard attention (Algorithm 0) for one head, with tiled matrix products.

    Three kernels, each tiled to fit ``sram`` elements with the tiles of :func:`block_sizes` (T_r = ⌈N/B_r⌉):
    S = τ·Q·Kᵀ reads Q once and K once per row block and writes S: N·d + T_r·N·d + N²;
    softmax reads S (once if a row of N scores fits in SRAM, else twice with the online normaliser of Milakov
    and Gimelshein 2018) and writes P: (1 or 2)·N² + N²; O = P·V reads P, V once per row block, writes O:
    N² + T_r·N·d + N·d. With ``sram=None`` (unlimited) T_r = 1 and the count equals the tally of
    :func:`naive_attention`: 4·N² + 4·N·d. Theorem 2 of Dao et al. (2022): Θ(N·d + N²).

    >>> standard_hbm_accesses(1024, 64)
    4456448
    """
    n = _check.integer("n", n)
    d = _check.integer("d", d)
    if sram is None:
        tr, passes = 1, 1
    else:
        br, _ = block_sizes(d, sram)
        tr, passes = -(-n // br), (1 if n <= sram else 2)
    return (n * d + tr * n * d + n * n) + (passes * n * n + n * n) + (n * n + tr * n * d + n * d)


def theorem2_standard(n, d) -> float:
    """The order of standard attention's HBM accesses in Dao et al. (2022), Theorem 2: N·d + N² (elements).

    >>> theorem2_standard(1024, 64)
    1114112.0
    """
    n, d = _check.positive("n", n), _check.positive("d", d)
    return n * d + n * n


def theorem2_flash(n, d, sram) -> float:
    """The order of FlashAttention's HBM accesses in Dao et al. (2022), Theorem 2: N²·d²/M (elements),
    valid for d ≤ M ≤ N·d (``sram`` M in elements).

    >>> theorem2_flash(1024, 64, 98304)
    43690.666666666664
    """
    n, d, m = _check.positive("n", n), _check.positive("d", d), _check.positive("sram", sram)
    return n * n * d * d / m


def score_matrix_bytes(seq, heads, batch=1, bytes_per_element=2) -> float:
    """Bytes of one layer's attention score matrix S: B·a·N²·b (one N×N matrix per head and sequence).

    ``seq`` N tokens (an integer or an array of them), ``heads`` a, ``batch`` B sequences, ``bytes_per_element`` b
    (2 for fp16/bf16). GPT-3 175B (96 heads, Brown et al. 2020) at 2,048 and 131,072 tokens in bf16:

    >>> score_matrix_bytes(2048, 96) / 1e9
    0.805306368
    >>> (score_matrix_bytes(np.array([2048, 131072]), 96) / 1e9).round(1).tolist()
    [0.8, 3298.5]
    """
    n = _counts("seq", seq)
    return (_check.integer("batch", batch) * _check.integer("heads", heads) * n * n
            * _check.positive("bytes_per_element", bytes_per_element))


def attention_activation_bytes(seq, heads, batch=1, flash=False) -> float:
    """Bytes one layer's attention core keeps for the backward pass, beyond Q, K, V and O.

    Standard (Korthikanti et al. 2022, Sec. 4.1, 16-bit activations): softmax output 2·a·s²·b, dropout mask
    a·s²·b, dropout output 2·a·s²·b → 5·a·s²·b bytes. FlashAttention keeps only the softmax statistics, one fp32
    log-sum-exp per row (Dao et al. 2022, Sec. 3.1; FlashAttention-2 stores L = m + log ℓ): 4·a·s·b bytes; the
    N×N matrices are recomputed in the backward pass. ``seq`` may be an array.

    >>> attention_activation_bytes(2048, 96) / 1e9, attention_activation_bytes(2048, 96, flash=True) / 1e6
    (2.01326592, 0.786432)
    """
    s = _counts("seq", seq)
    a = _check.integer("heads", heads)
    b = _check.integer("batch", batch)
    _check.flag("flash", flash)
    return 4.0 * a * s * b if flash else 5.0 * a * s * s * b


@dataclass(frozen=True)
class AttentionStep:
    """Attention-score memory of the running example, with and without FlashAttention (bytes)."""

    scores_per_layer: float          #: one layer's S for all heads, ``batch`` sequences (bf16)
    saved_per_layer: float           #: kept for backward per layer, standard (5·a·s²·b)
    saved_per_layer_flash: float     #: kept for backward per layer, FlashAttention (fp32 log-sum-exp per row)
    saved_model: float               #: all layers, standard
    saved_model_flash: float         #: all layers, FlashAttention
    saved_per_gpu: float             #: standard, on one GPU of the tp × pp plan (heads / tp, layers / pp)
    saved_per_gpu_flash: float
    card_memory: float               #: the accelerator's memory, bytes

    @property
    def card_share(self) -> float:
        """The standard per-GPU score memory as a fraction of the card's memory."""
        return self.saved_per_gpu / self.card_memory


def running_example(model, accelerator, tp=1, pp=1, batch=1, seq=None) -> AttentionStep:
    """Attention memory of ``model`` (a name, alias or :class:`~chipchain.models.Model`) for ``batch`` sequences of
    ``seq`` tokens (default: the model's training length), in all and per GPU of a ``tp`` × ``pp`` plan on
    ``accelerator`` (a name, alias or record): heads / tp of ⌈layers / pp⌉ layers per GPU.

    The book's running example, GPT-3 175B (96 layers, 96 heads, 2,048 tokens) on A100s as TP 8 × PP 16:

    >>> r = running_example("175B", "A100", tp=8, pp=16)
    >>> round(r.saved_model / 1e9), round(r.saved_model_flash / 1e6, 1), round(r.card_share, 3)
    (193, 75.5, 0.018)
    """
    m = models.get(model)
    acc = hardware.get(accelerator)
    t, p = _check.integer("tp", tp), _check.integer("pp", pp)
    if m.heads % t:
        raise ValueError(f"tp ({t}) must divide the number of heads of {m.name} ({m.heads})")
    b = _check.integer("batch", batch)
    s = m.seq if seq is None else _check.integer("seq", seq)
    per_layer = attention_activation_bytes(s, m.heads, b)
    per_layer_f = attention_activation_bytes(s, m.heads, b, flash=True)
    share = math.ceil(m.layers / p) / t
    return AttentionStep(score_matrix_bytes(s, m.heads, b), per_layer, per_layer_f, per_layer * m.layers,
                         per_layer_f * m.layers, per_layer * share, per_layer_f * share, acc.memory_bytes * 1.0)
