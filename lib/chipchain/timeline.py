"""The memory of one GPU through one training step: forward, backward, optimizer — where the peak falls.

A step is a sequence of events; at each, the GPU holds (bytes):

* **model states** kept across steps: the 16-bit weights, the FP32 master weights and Adam's moments (sharded by
  ZeRO as :func:`chipchain.memory.sharded_state_breakdown` says);
* **gradients**: allocated as the backward pass reaches each layer (``zero_grad(set_to_none=True)`` freed them after
  the last step), kept until the optimizer has used them;
* **activations**: one layer's worth more after each forward layer, one layer's worth less after each backward layer
  (:func:`chipchain.activations.activation_bytes_per_layer`);
* **logits and loss**: the output layer's buffers (:func:`chipchain.loss_memory.loss_peak_bytes`), alive from the
  end of the forward pass until the loss's backward has produced the gradient of the last hidden state.

The peak therefore comes at the turn from forward to backward: every activation is still held and the logits are
added on top; during the backward pass gradients replace activations layer by layer. One micro-batch, no pipeline.

>>> tl = step_timeline("7B", seq=4096, dp=8, zero=1, recompute="selective")
>>> tl.peak_label, round(tl.peak / 1e9, 1)
('loss (end of forward)', 42.1)
"""
from __future__ import annotations

from dataclasses import dataclass

from . import _check, activations, loss_memory, memory, models

__all__ = ["COMPONENTS", "MemoryTimeline", "step_timeline"]

#: the stacked components, bottom to top
COMPONENTS = ("model states", "gradients", "activations", "logits and loss")


@dataclass(frozen=True)
class MemoryTimeline:
    """Memory per GPU at each event of one step: ``labels`` (one per event), ``phases`` ("forward", "backward",
    "optimizer"), and ``bytes`` — a dict from each of :data:`COMPONENTS` to a tuple of bytes per event. ``peak`` is
    the largest total, reached first at event ``peak_index`` (``peak_label``)."""

    model: str
    labels: tuple
    phases: tuple
    bytes: dict

    @property
    def totals(self) -> tuple:
        return tuple(sum(col) for col in zip(*self.bytes.values()))

    @property
    def peak(self) -> float:
        return max(self.totals)

    @property
    def peak_index(self) -> int:
        t = self.totals
        return t.index(max(t))

    @property
    def peak_label(self) -> str:
        return self.labels[self.peak_index]

    def __str__(self) -> str:
        return (f"{self.model}: {len(self.labels)} events, peak {self.peak / 1e9:,.1f} GB at "
                f"{self.peak_label!r}")


def step_timeline(model, recipe="mixed-adam", *, microbatch=1, seq=None, tp=1, dp=1, zero=0,
                  sequence_parallel=False, recompute="none", loss_chunks=1) -> MemoryTimeline:
    """The memory timeline of one training step of ``model`` on one GPU (tensor parallel over ``tp``, ZeRO stage
    ``zero`` over ``dp``; no pipeline), with ``loss_chunks`` chunks for the cross-entropy. Events: start, one per
    forward layer, the loss, one per backward layer, the optimizer step, and zero_grad. Gradients of a ZeRO-2/3
    rank are its shard (the reduce-scatter frees the rest as the backward pass goes).

    >>> tl = step_timeline("7B", seq=4096, dp=8, zero=1, recompute="selective")
    >>> len(tl.labels), tl.labels[tl.peak_index - 1], round(tl.totals[-1] / 1e9, 1)
    (68, 'forward layer 32', 23.6)
    """
    m = models.get(model)
    s = m.seq if seq is None else _check.integer("seq", seq)
    b = _check.integer("microbatch", microbatch)
    t = _check.integer("tp", tp)
    states = memory.sharded_state_breakdown(m.params / t, dp, zero, recipe)
    grads_total = states.pop("gradients")
    kept = sum(states.values())
    layer = memory.layer_activation_bytes(m, seq=s, microbatch=b, tp=t, sequence_parallel=sequence_parallel,
                                          recompute=recompute)
    layer *= memory.recipe(recipe).activation_element / 2
    loss = loss_memory.loss_peak_bytes(b * s / (t if sequence_parallel else 1), m.vocab or 1, loss_chunks)
    L = m.layers
    labels, phases, rows = ["start of step"], ["forward"], [(kept, 0.0, 0.0, 0.0)]
    for i in range(1, L + 1):
        labels.append(f"forward layer {i}"); phases.append("forward"); rows.append((kept, 0.0, i * layer, 0.0))
    labels.append("loss (end of forward)"); phases.append("forward"); rows.append((kept, 0.0, L * layer, loss))
    for i in range(L, 0, -1):
        done = L - i + 1
        labels.append(f"backward layer {i}"); phases.append("backward")
        rows.append((kept, grads_total * done / L, (i - 1) * layer, 0.0))
    labels.append("optimizer step"); phases.append("optimizer"); rows.append((kept, grads_total, 0.0, 0.0))
    labels.append("zero_grad"); phases.append("optimizer"); rows.append((kept, 0.0, 0.0, 0.0))
    cols = {c: tuple(r[j] for r in rows) for j, c in enumerate(COMPONENTS)}
    return MemoryTimeline(m.name, tuple(labels), tuple(phases), cols)
