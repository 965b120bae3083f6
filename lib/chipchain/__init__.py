"""chipchain — the calculations behind *Steel and Silicon: LLM training systems from chip to nation*.

Every quantity is in SI base units (FLOP, byte, second, watt, joule, US dollar); conversions for people happen in
:mod:`chipchain.units`. Submodules are imported lazily so that ``import chipchain`` stays fast::

    >>> import chipchain
    >>> chipchain.hardware.get("H100").memory_bytes
    80000000000.0
"""
from __future__ import annotations

import importlib

__version__ = "0.1.0"

_SUBMODULES = (
    "attention", "comms", "compute", "deepseek", "economics", "hardware", "inference", "landscape", "memory", "notebook", "numerics",
    "parallel", "platform",
    "plotting", "policy", "power", "reliability", "roofline", "units", "walkthrough", "widgets",
)
__all__ = list(_SUBMODULES)


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'chipchain' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_SUBMODULES))
