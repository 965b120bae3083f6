"""chipchain — the calculations behind *Steel and Silicon: LLM training systems from chip to nation*.

Every quantity is in SI base units (FLOP, byte, second, watt, joule, US dollar); conversions for people happen in
:mod:`chipchain.units`. Submodules are imported lazily so that ``import chipchain`` stays fast::

    >>> import chipchain
    >>> chipchain.hardware.get("H100").memory_bytes     # 80 GiB, in bytes
    85899345920.0
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
