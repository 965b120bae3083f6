"""Launch N ranks of a worker on this machine, the way ``torchrun`` would, and collect what each rank returns.

A *worker* is a module-level function ``worker(rank, n_ranks, **options)`` that runs inside an initialised
``torch.distributed`` process group and returns plain data (numbers, strings, lists, dicts: whatever JSON holds).
:func:`launch` starts ``n_ranks`` fresh interpreters (the ``spawn`` model), each with the environment
``torchrun`` would give it (``MASTER_ADDR=127.0.0.1``, a free ``MASTER_PORT``, ``RANK``, ``LOCAL_RANK``,
``WORLD_SIZE``) and one CPU thread, so N ranks share a small machine fairly. Each rank initialises the gloo
backend, runs the worker, destroys the process group, writes its result as JSON and ends with an explicit
``os._exit`` — spawned ranks that exit normally after ``destroy_process_group`` sometimes abort in the
interpreter's shutdown, which an explicit exit avoids.

On a GPU cluster the same worker runs under ``torchrun`` with NCCL, through :func:`main`::

    torchrun --nproc_per_node=8 -m chipchain.labs.collectives

(every lab module ends with ``if __name__ == "__main__": runner.main(worker)``). With CUDA present the backend is
NCCL and each rank uses GPU ``LOCAL_RANK`` (:func:`device`).
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import json
import os
import socket
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass

from .. import _check

__all__ = ["Launch", "launch", "main", "device", "synchronize", "free_port", "one_thread", "single_threaded"]


@dataclass(frozen=True)
class Launch:
    """One launch: the worker's name, the rank count, the backend, the wall time of the whole launch (process
    start-up included, seconds) and ``results``, one entry per rank in rank order (plain data)."""

    worker: str
    n_ranks: int
    backend: str
    seconds: float
    results: tuple


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def device():
    """The torch device of this rank: ``cuda:LOCAL_RANK`` when CUDA is available, else the CPU."""
    import torch
    if torch.cuda.is_available():
        return torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
    return torch.device("cpu")


def synchronize() -> None:
    """Wait for queued GPU work (a no-op on the CPU), so a timer sees the collective finish."""
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


@contextlib.contextmanager
def one_thread():
    """Run torch on one CPU thread inside the block, then restore the previous count. On a small, busy machine
    torch's default of one thread per core makes small operators wait on each other (a measured 30× slowdown)."""
    import torch
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def single_threaded(fn):
    """Decorator: run ``fn`` inside :func:`one_thread`."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with one_thread():
            return fn(*args, **kwargs)
    return wrapper


def _name(worker) -> str:
    if isinstance(worker, str):
        return worker
    if not callable(worker) or "<locals>" in getattr(worker, "__qualname__", "<locals>"):
        raise ValueError(f"worker must be a module-level function (or 'module:function'), got {worker!r}")
    return f"{worker.__module__}:{worker.__qualname__}"


def _resolve(name: str):
    module, _, attr = name.partition(":")
    return getattr(importlib.import_module(module), attr)


def _run_in_group(worker, options: dict):
    """Initialise the process group from the environment, run the worker, and tear the group down."""
    import torch
    import torch.distributed as dist
    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if torch.cuda.is_available():
        torch.cuda.set_device(device())
    dist.init_process_group(backend)
    try:
        return backend, worker(dist.get_rank(), dist.get_world_size(), **options)
    finally:
        dist.barrier()
        dist.destroy_process_group()


def _child(spec_path: str) -> None:
    """One rank, in a fresh interpreter: read the launch spec, run the worker in a group, write the result."""
    with open(spec_path, encoding="utf-8") as f:
        spec = json.load(f)
    outdir, rank = spec["outdir"], int(os.environ["RANK"])
    code = 1
    try:
        import torch
        torch.set_num_threads(1)
        backend, result = _run_in_group(_resolve(spec["worker"]), spec["options"])
        path = os.path.join(outdir, f"rank{rank}.json")
        with open(path + ".tmp", "w", encoding="utf-8") as f:
            json.dump({"backend": backend, "result": result}, f)
        os.replace(path + ".tmp", path)
        code = 0
    except BaseException:                     # report everything, then leave by os._exit below
        with open(os.path.join(outdir, f"rank{rank}.err"), "w", encoding="utf-8") as f:
            f.write(traceback.format_exc())
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)                        # explicit exit: no interpreter teardown after destroy_process_group


def launch(worker, n_ranks=2, *, timeout=120.0, **options) -> Launch:
    """Run ``worker(rank, n_ranks, **options)`` on ``n_ranks`` local processes (gloo on 127.0.0.1) and return a
    :class:`Launch` with each rank's result.

    Each rank is a fresh interpreter (the ``spawn`` model: nothing inherited from the caller but the environment),
    so a notebook, a script or a test can launch ranks alike. Args: ``worker`` a module-level function or
    ``"module:function"``; ``n_ranks`` ≥ 1; ``timeout`` seconds for the whole launch (ranks still running then are
    terminated and ``RuntimeError`` is raised); ``options`` keyword arguments for the worker (plain data, JSON). A
    rank that fails raises ``RuntimeError`` with its traceback.
    """
    import subprocess
    name = _name(worker)
    n = _check.integer("n_ranks", n_ranks)
    limit = _check.positive("timeout", timeout)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="chipchain-lab-") as outdir:
        spec = os.path.join(outdir, "spec.json")
        with open(spec, "w", encoding="utf-8") as f:
            json.dump({"worker": name, "options": options, "outdir": outdir}, f)
        port = free_port()
        code = f"from chipchain.labs.runner import _child; _child({spec!r})"
        procs = []
        for r in range(n):
            env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(r),
                       LOCAL_RANK=str(r), WORLD_SIZE=str(n), OMP_NUM_THREADS="1")
            with open(os.path.join(outdir, f"rank{r}.log"), "wb") as log:      # keep rank output out of notebooks
                procs.append(subprocess.Popen([sys.executable, "-c", code], env=env, stdin=subprocess.DEVNULL,
                                              stdout=log, stderr=subprocess.STDOUT))
        hung = []
        for r, p in enumerate(procs):
            try:
                p.wait(max(0.1, limit - (time.perf_counter() - t0)))
            except subprocess.TimeoutExpired:
                hung.append(r)
        for r in hung:
            procs[r].kill()
            procs[r].wait(5)
        errors = []
        for r in range(n):
            err = os.path.join(outdir, f"rank{r}.err")
            if os.path.exists(err) or procs[r].returncode:
                texts = []
                for path in (err, os.path.join(outdir, f"rank{r}.log")):
                    if os.path.exists(path):
                        with open(path, encoding="utf-8", errors="replace") as f:
                            texts.append(f.read()[-4000:])
                errors.append(f"rank {r}:\n" + "\n".join(texts))
        if hung:
            raise RuntimeError(f"{name}: ranks {hung} still running after {limit:g} s; stopped\n" + "\n".join(errors))
        codes = [p.returncode for p in procs]
        if errors or any(codes):
            raise RuntimeError(f"{name} failed (exit codes {codes})\n" + "\n".join(errors))
        out = []
        for r in range(n):
            with open(os.path.join(outdir, f"rank{r}.json"), encoding="utf-8") as f:
                out.append(json.load(f))
    return Launch(name, n, out[0]["backend"], time.perf_counter() - t0, tuple(o["result"] for o in out))


def main(worker, **options) -> None:
    """Entry point for ``torchrun``: read the rank from the environment ``torchrun`` sets, run the worker in a
    process group (NCCL with CUDA, else gloo), print each rank's result as one JSON line, and exit explicitly."""
    code = 1
    try:
        backend, result = _run_in_group(worker, options)
        print(json.dumps({"rank": int(os.environ.get("RANK", "0")), "backend": backend, "result": result}),
              flush=True)
        code = 0
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
