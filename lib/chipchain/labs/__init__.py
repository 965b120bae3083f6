"""Labs: the book's formulas measured on a real engine, PyTorch's ``torch.distributed``.

Each lab pairs a worker (a function every rank runs, ``worker(rank, n_ranks, **options)`` returning plain data) with
the ``chipchain`` equation it tests:

* :mod:`~chipchain.labs.runner` — launch N local ranks on 127.0.0.1 with gloo and collect each rank's result;
  the same workers run under ``torchrun`` with NCCL on a GPU cluster (:func:`~chipchain.labs.runner.main`).
* :mod:`~chipchain.labs.collectives` — all-reduce, reduce-scatter and all-gather times; α and β fitted with the
  α–β costs of :mod:`chipchain.comms`.
* :mod:`~chipchain.labs.sharding` — bytes per rank under DDP, ZeRO-1 and FSDP2 against
  :func:`chipchain.memory.sharded_state_breakdown`.
* :mod:`~chipchain.labs.saved` — tensors saved for backward, counted with ``saved_tensors_hooks``, against
  Korthikanti et al.'s ledger (:func:`chipchain.activations.activation_bytes_per_layer`), term by term.
* :mod:`~chipchain.labs.machine` — the reader's CPU: matmul FLOP/s and triad bytes/s, chapter 1's roofline of the
  machine the notebook runs on (NumPy, no torch).
* :mod:`~chipchain.labs.resume` — exact resume: model, optimizer, RNG and data-loader state; single process,
  DDP (and its bucket rebuild) and FSDP2 with distributed checkpointing.

``torch`` is imported only inside functions, so ``import chipchain`` stays fast and the chapters never need it.
"""
