"""Every chapter tells the same running example (issue 13: "a number about the running example must equal chapter
13's"), and no count of cards, GPUs or nodes is rounded down.

A chapter's glued value ``chNN_rx_<quantity>`` (the stored output of the committed notebook, exactly what the site
shows) is compared with what :class:`chipchain.walkthrough.Walkthrough` computes today, for every quantity the
walkthrough owns. Formatted values ("152 days", "2.8 TB") are parsed and compared within the precision they print.
"""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from chipchain.walkthrough import Walkthrough

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
W = Walkthrough()

#: the running example's quantities, by the suffix chapters glue them under (``chNN_rx_<suffix>``)
QUANTITIES = {
    "days": lambda: W.run_seconds / 86400,
    "flops": lambda: W.step2_compute().flops,
    "states": lambda: W.step1_states().total_bytes,
    "total": lambda: W.step1_states().total_bytes,
    "ckpt": lambda: W.step6_failures().checkpoint_bytes,
    "mtbf": lambda: W.step6_failures().mtbf / 3600,
    "g": lambda: W.step6_failures().goodput,
    "nodes": lambda: W.cluster.n_nodes,
    "peak_catalog": lambda: W.peak_flops / 1e12,
    "a100": lambda: W.run_seconds / 86400,
    "days_a100": lambda: W.run_seconds / 86400,
}
SCALES = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18}
#: chapter-specific keys whose suffix alone is ambiguous
BY_KEY = {"ch07_rx_n": lambda: W.step6_failures().wall_seconds / W.step6_failures().mtbf,   # over the wall clock
          "ch13_interruptions": lambda: W.step6_failures().wall_seconds / W.step6_failures().mtbf}
#: glue keys that name a count of hardware someone must buy or rent (a requirement: never rounded down)
COUNT_WORDS = re.compile(r"(cards|needed|nodes|servers)", re.I)


def _glued(path: Path) -> dict:
    out = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        for o in cell.get("outputs", []):
            name = o.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                text = [v for k, v in o.get("data", {}).items() if k.endswith("text/plain")]
                out[name] = "".join(text[0]) if text else ""
    return out


_FROM_SUPERSCRIPT = str.maketrans("⁻⁰¹²³⁴⁵⁶⁷⁸⁹", "-0123456789")


def _parse(text: str):
    """(value, relative precision) of a glued text: a plain float is exact; "2.8 TB" or "152 days" is good to
    half a unit of its last printed digit."""
    t = text.strip().strip("'\"").replace(",", "").replace("$", "")
    t = re.sub(r" × 10([⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)", lambda m: "e" + m.group(1).translate(_FROM_SUPERSCRIPT), t)  # 2.1 × 10²⁴
    try:
        v = float(t)
        return v, (1e-9 if ("." in t or "e" in t) else 0.5 / max(abs(v), 1e-300))
    except ValueError:
        pass
    m = re.match(r"^(-?\d+(?:\.(\d+))?)(?:e([+-]?\d+))?\s*([kMGTPE]?)(B|FLOPs?|FLOP/s|W|Wh|J)?\b", t)
    if not m:
        return None, None
    value = float(m.group(1)) * (10 ** int(m.group(3)) if m.group(3) else 1) * SCALES[m.group(4)]
    digits = len(m.group(2) or "")
    last = 10 ** -digits * (10 ** int(m.group(3)) if m.group(3) else 1) * SCALES[m.group(4)]
    return value, 0.5 * last / abs(value) if value else 1e-9


CASES = []
for nb in NOTEBOOKS:
    for key, text in _glued(nb).items():
        m = re.match(r"ch\d\d_rx_(\w+)$", key)
        if key in BY_KEY:
            CASES.append((nb.stem, key, text, key))
        elif m and m.group(1) in QUANTITIES:
            CASES.append((nb.stem, key, text, m.group(1)))


def test_chapters_glue_running_example_quantities():
    chapters = {c[0][:2] for c in CASES}
    assert len(chapters) >= 8, f"only chapters {sorted(chapters)} glue running-example quantities"


@pytest.mark.parametrize("chapter,key,text,quantity", CASES, ids=[c[1] for c in CASES])
def test_running_example_matches_the_walkthrough(chapter, key, text, quantity):
    value, precision = _parse(text)
    assert value is not None, f"{chapter}: cannot read {key} = {text!r}"
    expected = (BY_KEY.get(quantity) or QUANTITIES[quantity])()
    if quantity in ("mtbf",) and value > 1e4:        # glued in seconds rather than hours
        value /= 3600
    assert value == pytest.approx(expected, rel=max(precision, 1e-9)), \
        f"{chapter}: {key} = {text!r}, but the walkthrough (chapter 13) says {expected:.6g}"


def _markdown_and_code(path: Path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        yield cell["cell_type"], "".join(cell["source"])


ROUNDING = []
for nb in NOTEBOOKS:
    glued = _glued(nb)
    for kind, src in _markdown_and_code(nb):
        if kind == "code":
            for m in re.finditer(r"glue\(\s*[\"'](\w+)[\"']\s*,\s*(.+)", src):
                if COUNT_WORDS.search(m.group(1)) and re.search(r"\b(int|round|math\.floor|floor)\(", m.group(2)):
                    ROUNDING.append((nb.stem, m.group(1), m.group(2).strip()))
        else:
            for m in re.finditer(r"\{glue:text\}`(\w+):\.0f`", src):
                value, _ = _parse(glued.get(m.group(1), "nan"))
                integral = value is not None and math.isfinite(value) and value == int(value)
                if COUNT_WORDS.search(m.group(1)) and not integral:
                    ROUNDING.append((nb.stem, m.group(1), ":.0f in the prose"))


def test_no_count_of_cards_gpus_or_nodes_is_rounded_down():
    """A count of cards, GPUs or nodes must be rounded up (math.ceil): 2.8 TB needs 36 cards of 80 GB, not 35."""
    assert not ROUNDING, "\n".join(f"{c}: {k} is rounded with {how} (use math.ceil)" for c, k, how in ROUNDING)


def test_walkthrough_counts_round_up():
    s = W.step1_states()
    assert s.cards_worth * s.card_bytes >= s.total_bytes * (1 - 1e-12)
    assert W.cluster.n_nodes == math.ceil(W.n_gpus / W.gpus_per_node)
