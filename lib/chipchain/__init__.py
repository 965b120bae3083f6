"""chipchain — the calculations behind *Steel and Silicon: LLM training systems from chip to nation*.

Every quantity is in SI base units (FLOP, byte, second, watt, joule, US dollar); conversions for people happen in
:mod:`chipchain.units`. Submodules are imported lazily so that ``import chipchain`` stays fast::

    >>> import chipchain
    >>> chipchain.hardware.get("H100").memory_bytes     # 80 GiB, in bytes
    85899345920.0

Where things live: each module is one idea, in layers that import one way only (``tests/test_architecture.py``
enforces it; a module imports only its own layer and those above it in this table). Each quantity has one home
(bytes of state per parameter: ``memory.RECIPES``; bytes per element: ``units.BYTES_PER_ELEMENT``; FLOPs per token:
``compute.FLOPS_PER_PARAM_TOKEN``; GPU-hours ↔ wall clock and implied MFU: ``compute``; a run's electricity:
``power.electricity``; exposed communication: ``comms.exposed_seconds``; a count of cards: ``units.count_up``).
Each data file has one reader in a registry or equation module; views ask that module, never ``data/``.

==============  ================================================================================  ==============
layer           modules                                                                           chapters
==============  ================================================================================  ==============
core            ``_check`` (validation), ``_data`` (the one loader, ``Registry``), ``_lazy``,     all
                ``units`` (constants, formatting, ``count_up``), ``_i18n`` (the reader's language)
registries      ``hardware`` (accelerators), ``links``, ``models``, ``systems`` (nodes,           all
                clusters), ``devices`` (edge), ``published_runs`` (training runs),
                ``assumptions`` (the book's stated assumptions)
equations       chip: ``roofline``, ``numerics``, ``accumulation``, ``landscape``                 1, 2, 11
                attention: ``attention``, ``attention_backward``, ``attention_io``                5
                network: ``comms``, ``collectives``, ``ringsim``, ``commbound``                   1, 3, 4
                parallelism: ``parallel``, ``schedules``, ``plans``, ``expert_routing``           4, 11
                memory: ``memory``, ``activations``, ``loss_memory``, ``offload``, ``timeline``   6
                failures: ``reliability``, ``faults``, ``checkpoint``, ``failsim``                7
                platform: ``scheduling``, ``datapath``, ``experiments``                           8
                facility: ``power``, ``economics``, ``policy`` (``.rules``, ``.placements``)      9, 10
                serving: ``inference``, ``serving``, ``serving_latency``, ``moore``               12
                training: ``compute`` (6ND, GPU-hours, MFU), ``calibration``                      2, 13, 14
compositions    ``walkthrough`` (the running example), ``deepseek``, ``source_checks``            every, 11, 13
views           ``views.<topic>`` (one per chapter), ``widgets``, ``plotting`` (``_style``,       every
                ``_ticks``, ``_svg``, ``charts``), ``tables``,
                ``notebook`` (glue)
measurements    ``labs`` (time the reader's machine: ``labs.machine`` for the CPU roofline,       1, labs/
                torch ranks for the rest; nothing imports them)
==============  ================================================================================  ==============
"""
from __future__ import annotations

import importlib
import os

__version__ = "0.1.0"

#: every public submodule (found on disk, so a new module needs no edit here)
_SUBMODULES = tuple(sorted(n[:-3] if n.endswith(".py") else n for n in os.listdir(__path__[0])
       if not n.startswith(("_", ".")) and (n.endswith(".py") or os.path.isfile(os.path.join(__path__[0], n, "__init__.py")))))
__all__ = list(_SUBMODULES)


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'chipchain' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
