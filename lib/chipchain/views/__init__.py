"""Views: figures, explorables and tables for the chapters — the only place presentation lives.

One module per chapter topic; each imports the equations it shows and calls them rather than re-deriving a quantity
(conversions such as GPU-hours ↔ wall clock go through :mod:`chipchain.compute`). Submodules load on
first use, so ``from chipchain import views`` costs nothing until a view is drawn::

    >>> from chipchain import views
    >>> views.chip.spec_sheet("H100").loc["Memory bandwidth", "value"]
    '3.35 TB/s'
"""
from __future__ import annotations

import importlib
import os

__all__ = sorted(n[:-3] if n.endswith(".py") else n for n in os.listdir(__path__[0])
       if not n.startswith(("_", ".")) and (n.endswith(".py") or os.path.isfile(os.path.join(__path__[0], n, "__init__.py"))))


def __getattr__(name: str):
    if name in __all__:
        module = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = module
        return module
    raise AttributeError(f"module 'chipchain.views' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
