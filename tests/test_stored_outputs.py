"""Stored outputs hold only what every IEEE machine computes alike (issue 23; BOOK-STANDARD §7).

nbval compares a notebook's stored outputs with a fresh run character for character. A float printed in full keeps
17 significant digits, and the last one or two depend on which kernels OpenBLAS and NumPy choose for the CPU: a
chapter 7 glue record stored ``0.9479448604570861`` and an AMD EPYC computed ``0.9479448604570859``. So every float
a committed notebook stores — glued values, printed numbers, table and figure text — carries at most
``units.STABLE_DIGITS`` (12) significant digits, the rounding ``chipchain.notebook.glue`` and the table renderer
apply. The test reads the committed files; it does not execute anything.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chipchain import notebook, units

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted([*ROOT.glob("chapters/*.ipynb"), *ROOT.glob("labs/*.ipynb"), *ROOT.glob("book/*.ipynb")])

# a decimal number with a fraction, optionally in e-notation, not part of a longer word or number
_FLOAT = re.compile(r"(?<![\w.])-?(\d+)\.(\d+)(?:[eE][-+]?\d+)?(?![\w.])")


def significant_digits(text: str) -> int:
    """Significant digits of a decimal literal: ``0.00120`` → 3, ``19768.67578125`` → 13."""
    m = _FLOAT.fullmatch(text)
    if not m:
        raise ValueError(f"text must be a decimal literal, got {text!r}")
    digits = (m.group(1) + m.group(2)).lstrip("0")
    return len(digits)


def long_floats(text: str) -> list[str]:
    return [m.group(0) for m in _FLOAT.finditer(text) if significant_digits(m.group(0)) > units.STABLE_DIGITS]


def _texts(output: dict):
    if "text" in output:
        yield "stream", "".join(output["text"])
    for mime, value in output.get("data", {}).items():
        if mime.startswith("image/png") or mime.startswith("image/jpeg") or "widget-view" in mime:
            continue                                  # binary, or a widget model id nbval does not compare
        yield mime, "".join(value) if isinstance(value, list) else json.dumps(value)


def test_significant_digits():
    assert significant_digits("0.9479448604570861") == 16
    assert significant_digits("19768.67578125") == 13
    assert significant_digits("0.00120") == 3
    assert significant_digits("2.5e-07") == 2
    assert long_floats("x 0.947944860457 y 0.9479448604570861 z 3.14") == ["0.9479448604570861"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_cpu_dependent_digits(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    bad = []
    for index, cell in enumerate(nb["cells"]):
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            for mime, text in _texts(output):
                for value in long_floats(text):
                    bad.append(f"cell {index} {name or mime}: {value}")
    assert not bad, (f"{path.name} stores floats with more than {units.STABLE_DIGITS} significant digits, whose "
                     f"last digits depend on the CPU (glue through chipchain.notebook.glue, round printed floats "
                     f"with units.stable, then re-execute): " + "; ".join(bad[:12]))


def test_glue_rounds_what_it_stores():
    """glue stores 12 significant digits, so two CPUs' results one ulp apart store the same record."""
    from unittest import mock

    a, b = 0.9479448604570861, 0.9479448604570859          # the two machines' values of chapter 7's cell 14
    stored = []
    for value in (a, b):
        with mock.patch("IPython.display.display") as shown:
            notebook.glue("k", value, display=False)
        stored.append(shown.call_args.args[0])
    assert stored[0] == stored[1] == {notebook.GLUE_PREFIX + "text/plain": "0.947944860457"}


def test_table_renderer_formats_stable_values():
    """The table renderer formats the value rounded to 12 digits: x.xx5 one ulp below or above prints alike."""
    from chipchain import tables
    import pandas as pd

    below, above = 0.12349999999999999, 0.12350000000000001   # two ulps apart around a 4-digit boundary
    t1 = str(tables.show(pd.DataFrame({"v": [below]}), columns={"v": tables.Col("v", ".3f")}))
    t2 = str(tables.show(pd.DataFrame({"v": [above]}), columns={"v": tables.Col("v", ".3f")}))
    assert t1 == t2
