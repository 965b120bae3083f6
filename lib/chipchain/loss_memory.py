"""The last line of the memory ledger: the logits and the loss over a large vocabulary, and chunked cross-entropy.

The output layer turns each of T tokens' hidden vectors into V logits. The logits tensor is T·V elements — for
T = B·S tokens in a micro-batch — and the cross-entropy that follows keeps more of the same size. With a 128k
vocabulary it is often the largest single tensor of a training step (Hsu et al. 2024, Liger Kernel: "a batch size of
8 and sequence length of 4096, the 256k vocabulary size results in a 16.8 GB logit tensor").

Counted per (token, vocabulary entry), the unfused path holds at its peak the 16-bit logits (2 bytes), their FP32
copy with the log-softmax the loss keeps for the backward pass (4 bytes) and the FP32 gradient of the logits (4
bytes): 10 bytes. Chunked cross-entropy runs the output projection, the loss and its gradient on T/c tokens at a
time and never materialises the whole tensor: the peak falls by the chunk count c (as Liger Kernel's fused linear
cross-entropy does).

>>> logits_bytes(8 * 4096, 256000) / 1e9          # Liger Kernel's Gemma example: 8 × 4,096 tokens, 256k vocabulary
16.777216
>>> round(loss_peak_bytes(8192, 128256) / 1e9, 2)  # one 8,192-token sequence, Llama 3's vocabulary
10.51
"""
from __future__ import annotations

from . import _check

__all__ = ["logits_bytes", "loss_peak_bytes", "LOSS_BYTES_PER_LOGIT"]

#: bytes per (token, vocabulary entry) the unfused loss holds at its peak: 16-bit logits 2, FP32 log-softmax 4,
#: FP32 logit gradient 4
LOSS_BYTES_PER_LOGIT = 10.0


def logits_bytes(tokens, vocab, bytes_per_element=2.0):
    """Size of the logits tensor: T · V · b bytes for ``tokens`` T (micro-batch × sequence), ``vocab`` V entries and
    ``bytes_per_element`` b (2 for BF16). Element-wise in ``tokens``.

    >>> logits_bytes(2048, 50257) / 1e6                # one GPT-3 sequence
    205.852672
    """
    t = _check.values("tokens", tokens, _check.positive)
    v = _check.integer("vocab", vocab)
    return _check.result(t * v * _check.positive("bytes_per_element", bytes_per_element))


def loss_peak_bytes(tokens, vocab, chunks=1, bytes_per_logit=LOSS_BYTES_PER_LOGIT):
    """Peak memory of the output layer's loss: T · V · ``bytes_per_logit`` / c for ``chunks`` c (1 = unchunked,
    the whole logits tensor and its FP32 companions at once). ``chunks`` may be an array (element-wise); it must not
    exceed the tokens.

    >>> [round(loss_peak_bytes(8192, 128256, c) / 1e9, 3) for c in (1, 8, 64)]
    [10.507, 1.313, 0.164]
    """
    t = _check.positive("tokens", tokens)
    v = _check.integer("vocab", vocab)
    c = _check.values("chunks", chunks, _check.integer)
    b = _check.positive("bytes_per_logit", bytes_per_logit)
    if (c > t).any() if hasattr(c, "any") else c > t:
        raise ValueError(f"chunks must not exceed tokens ({t:g}), got {chunks!r}")
    return _check.result(t * v * b / c)
