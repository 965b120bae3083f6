"""Every chapter notebook follows the book's anatomy (BOOK-STANDARD §4) and stays light (issue: well under 1 MB)."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "chapters").glob("[0-9][0-9]_*.ipynb"))
HEADINGS = ["in this chapter", "predict first", "running example", "check your understanding", "takeaways", "sources"]
MAX_BYTES = 500_000


def load(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    cells = nb["cells"]
    src = lambda c: "".join(c["source"]) if isinstance(c["source"], list) else c["source"]   # noqa: E731
    md = "\n".join(src(c) for c in cells if c["cell_type"] == "markdown")
    code = [c for c in cells if c["cell_type"] == "code"]
    return nb, md, code, src


def test_chapters_exist():
    assert CHAPTERS


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_anatomy(path):
    nb, md, code, src = load(path)
    headings = [l.strip("# ").lower() for l in md.splitlines() if l.startswith("#")]
    assert re.match(r"\d+\. ", headings[0]), f"{path.name}: first heading must be 'N. Title'"
    order = []
    for h in HEADINGS:
        found = [i for i, line in enumerate(headings) if line.startswith(h)]
        assert found, f"{path.name}: missing section '{h}'"
        order.append(found[0])
    assert order == sorted(order), f"{path.name}: anatomy sections out of order"
    exercises = re.findall(r"```\{exercise\}\s*\n:label: (\S+)", md)
    solutions = re.findall(r"```\{solution\} (\S+)\s*\n:class: dropdown", md)
    assert len(exercises) >= 4, f"{path.name}: {len(exercises)} exercises (need 4)"
    assert set(exercises) <= set(solutions), f"{path.name}: exercises without a hidden solution"
    assert re.search(r"\{admonition\} Source check", md), f"{path.name}: no Source check box"
    assert len(re.findall(r"\{glue(?::\w+)?\}", md)) >= 5, f"{path.name}: too few glued numbers"
    assert len(re.findall(r"\{cite(?::\w+)?\}", md)) >= 3, f"{path.name}: too few citations"
    all_code = "\n".join(src(c) for c in code)
    assert "widgets.predict" in all_code, f"{path.name}: no predict-first widget"
    shown = [o["data"]["text/plain"] for c in code for o in c.get("outputs", [])
             if "text/plain" in o.get("data", {}) and "".join(o["data"]["text/plain"]).startswith(("Explorable '", 'Explorable "'))]
    assert len(shown) >= 2, f"{path.name}: needs a predict-first widget and at least one explorable"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_executed_clean_and_light(path):
    nb, md, code, src = load(path)
    assert path.stat().st_size < MAX_BYTES, f"{path.name} is {path.stat().st_size / 1e3:.0f} kB"
    assert nb["metadata"]["kernelspec"]["name"] == "python3"
    for c in code:
        if src(c).strip():
            assert c.get("execution_count") is not None, f"{path.name}: unexecuted cell {src(c)[:60]!r}"
        for out in c.get("outputs", []):
            assert out["output_type"] != "error", f"{path.name}: error output"
            assert not (out["output_type"] == "stream" and out.get("name") == "stderr"), \
                f"{path.name}: stderr output in {src(c)[:60]!r}"
    counts = [c["execution_count"] for c in code if c.get("execution_count") is not None]
    assert counts == sorted(counts), f"{path.name}: cells were run out of order"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_code_cells_are_short(path):
    _, _, code, src = load(path)
    long = [src(c).splitlines()[0] for c in code if len(src(c).strip().splitlines()) > 15]
    assert not long, f"{path.name}: code cells over 15 lines (move logic into chipchain): {long}"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_figures_have_caption_and_alt(path):
    _, _, code, src = load(path)
    for c in code:
        has_image = any("image/png" in o.get("data", {}) for o in c.get("outputs", []))
        if has_image:
            meta = c["metadata"].get("mystnb", {})
            assert meta.get("figure", {}).get("caption"), f"{path.name}: figure without caption: {src(c)[:60]!r}"
            assert meta.get("image", {}).get("alt"), f"{path.name}: figure without alt text: {src(c)[:60]!r}"
