"""NumPy, imported on first use.

Equation modules work element-wise on NumPy arrays, but most calls a chapter makes are on plain numbers, and the
compositions import every equation module at the top. ``from ._lazy import np`` gives each module the real
``numpy`` the first time an attribute is used, so ``import chipchain`` (and the walkthrough) stays fast and works
where NumPy is not installed until an array is actually needed.

>>> from chipchain._lazy import np
>>> float(np.sqrt(4.0))
2.0
"""
from __future__ import annotations

import importlib

__all__ = ["np"]


class _LazyModule:
    """A stand-in for a module that imports it on the first attribute access and then holds its namespace."""

    def __init__(self, name: str):
        self.__dict__["_name"] = name

    def __getattr__(self, attr):
        module = importlib.import_module(self.__dict__["_name"])
        self.__dict__.update(vars(module))      # later look-ups find the attribute directly, at full speed
        return getattr(module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self.__dict__['_name']!r}>"


np = _LazyModule("numpy")
