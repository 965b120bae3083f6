"""Glue for chapter notebooks: the same output as ``myst_nb.glue``, without its import cost.

myst-nb's ``glue(name, value, display=False)`` stores a value's display data in a cell output marked with
``{"scrapbook": {"name": ..., "mime_prefix": ...}}`` metadata, which the book build then pastes into the prose with
``{glue:}`name``` roles. Importing ``myst_nb`` pulls in Sphinx-side machinery and, on the first call, nbformat and
jsonschema — about two seconds per chapter on the book's 2-core reference machine. This function writes the
identical output (``tests/test_notebook.py`` checks it against myst-nb's) using only IPython, which a running
kernel has already imported.

One difference, on purpose: floats are stored rounded to :data:`chipchain.units.STABLE_DIGITS` (12) significant
digits (:func:`chipchain.units.stable`), far beyond anything the prose prints. A float's last digit or two depend on
which kernels OpenBLAS and NumPy pick for the CPU, and nbval compares stored outputs exactly: a glued
``0.9479448604570861`` is ``0.9479448604570859`` on another machine. ``tests/test_stored_outputs.py`` fails on any
committed output that holds a float with more digits.
"""
from __future__ import annotations

from .units import stable

#: the prefix myst-nb gives glued data that is not displayed (myst_nb.ext.glue.GLUE_PREFIX)
GLUE_PREFIX = "application/papermill.record/"

__all__ = ["glue", "GLUE_PREFIX"]


def glue(name: str, variable, display: bool = True) -> None:
    """Store ``variable``'s display data under ``name`` for ``{glue:}`` roles (myst-nb's format).

    ``name``: a key unique within the notebook (the book prefixes it with the chapter, e.g. ``ch01_ridge``).
    ``variable``: the value; floats in it are stored to 12 significant digits (see the module docstring).
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"name must be a non-empty string, got {name!r}")
    from IPython.core.formatters import format_display_data
    from IPython.display import display as ipy_display

    mimebundle, metadata = format_display_data(stable(variable))
    mime_prefix = "" if display else GLUE_PREFIX
    metadata["scrapbook"] = dict(name=name, mime_prefix=mime_prefix)
    ipy_display({mime_prefix + k: v for k, v in mimebundle.items()}, raw=True, metadata=metadata)
