"""The site's presentation rules, without a build (issue 28 items 3 and 4; the browser checks are in tests/browser):

- code on request: every code cell's source is collapsed under "Show code" on the site except a cell tagged
  ``lesson`` (book/_ext/steel_code.py), and the PDF/EPUB drop what is collapsed;
- the JupyterLab copy says on every stored control that it does not respond until its cell has run, and leaves the
  JupyterLite copy's outputs as the book has them;
- the chain map includes every chapter and lab, cuts no title, and keeps its phone text at 11 px or more;
- a number and its spaced percent sign ("28 %") are kept on one line wherever the prose has them, and nowhere else
  (book/_ext/steel_glue.py).
"""
from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


steel_code = _load("steel_code", ROOT / "book" / "_ext" / "steel_code.py")
sys.path.insert(0, str(ROOT / "tools"))
import lab_book  # noqa: E402
sys.path.insert(0, str(ROOT / "figures"))
import chain_map  # noqa: E402


def _cell_tree(tags, with_source=True, mode=None):
    from docutils import nodes

    cell = nodes.container(nb_element="cell_code", cell_metadata={"tags": list(tags)}, classes=["cell"])
    if mode:
        cell["hide_mode"] = mode
    if with_source:
        cell += nodes.container(nb_element="cell_code_source")
    cell += nodes.container(nb_element="cell_code_output")
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    doc = new_document("<test>", get_default_settings(Parser))
    doc += cell
    return doc, cell


@pytest.mark.parametrize("tags, collapsed", [([], True), (["nbval-ignore-output"], True), (["hide-input"], True),
                                             (["lesson"], False), (["lesson", "nbval-ignore-output"], False)])
def test_every_code_cell_but_a_lesson_is_collapsed(tags, collapsed):
    doc, cell = _cell_tree(tags, mode="input" if "hide-input" in tags else None)
    t = steel_code.CollapseCode(doc)
    t.run()
    assert (cell.get("hide_mode") == "input") is collapsed
    if collapsed:
        assert (cell["prompt_show"], cell["prompt_hide"]) == ("Show code", "Hide code")


def test_a_cell_without_source_is_left_alone():
    doc, cell = _cell_tree([], with_source=False)        # remove-input: only the output is there
    steel_code.CollapseCode(doc).run()
    assert "hide_mode" not in cell


def test_collapse_runs_before_myst_nbs_own_hiding():
    from myst_nb.sphinx_ import HideInputCells

    assert steel_code.CollapseCode.default_priority < HideInputCells.default_priority
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert re.search(r"^\s+steel_code: book/_ext", config, re.M), "the extension is not loaded"


def test_pdf_drops_collapsed_sources():
    tool = (ROOT / "tools" / "build_pdf.py").read_text(encoding="utf-8")
    assert 'article.select("details.hide.above-input")' in tool and "decompose()" in tool
    css = (ROOT / "book" / "site.css").read_text(encoding="utf-8")
    assert re.search(r"@media print \{ div\.cell details\.hide\.above-input \{ display: none", css)


def _nb_with_widget():
    return {"cells": [{"cell_type": "code", "metadata": {}, "source": "views.x.explorer()", "execution_count": 1,
                       "outputs": [{"output_type": "execute_result", "execution_count": 1, "metadata": {},
                                    "data": {lab_book.WIDGET_VIEW: {"model_id": "m", "version_major": 2,
                                                                    "version_minor": 0},
                                             "text/plain": "Explorable 'x'"}}]},
                      {"cell_type": "code", "metadata": {}, "source": "1 + 1", "execution_count": 2,
                       "outputs": [{"output_type": "execute_result", "execution_count": 2, "metadata": {},
                                    "data": {"text/plain": "2"}}]}],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_lab_copy_says_a_stored_control_is_not_live_until_run():
    copy, _ = lab_book.reader_copy(_nb_with_widget(), {}, {}, name="t")
    explorer, plain = copy["cells"]
    assert explorer["outputs"][0]["data"]["text/plain"] == lab_book.STALE_NOTE
    assert "do not respond until the cell has run" in explorer["outputs"][0]["data"]["text/html"]
    assert lab_book.WIDGET_VIEW in explorer["outputs"][1]["data"]          # the stored view is still shown
    assert len(plain["outputs"]) == 1                                       # other cells untouched


def test_lite_copy_keeps_the_books_outputs():
    nb = _nb_with_widget()
    (copy,), _ = lab_book.lite_copies([nb], ["t"])
    assert [c["outputs"] for c in copy["cells"]] == [c["outputs"] for c in nb["cells"]]


def test_chain_map_links_every_chapter_and_lab():
    html = (ROOT / "figures" / "chain_map.html").read_text(encoding="utf-8")
    assert html == chain_map.embed(), "figures/chain_map.html is stale: run python figures/chain_map.py"
    wide, narrow = html.split('class="chain-map chain-map-narrow"')
    for part in (wide, narrow):
        hrefs = set(re.findall(r'href="\.\./([^"]+)\.html"', part))
        want = {f"chapters/{p.stem}" for p in (ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")}
        want |= {f"labs/{p.stem}" for p in (ROOT / "labs").glob("L*.ipynb")}
        assert hrefs == want


def test_chain_map_cuts_no_title_and_phone_text_is_legible():
    assert "…" not in chain_map.embed()
    _, height = chain_map.svg_narrow()
    narrow = chain_map.svg_narrow()[0]
    sizes = [float(s) for s in re.findall(r'font-size="([\d.]+)"', narrow)]
    # drawn in a 342-px column (390 px less the theme's padding): 360 units → 0.95 px a unit
    assert min(sizes) * 342 / 360 >= 11, min(sizes)
    with pytest.raises(ValueError, match="lines"):
        chain_map.wrap("a " * 200, 12)


def test_lab_glossary_links_point_at_the_terms_entry():
    """Issue 28 item 4: a glossary link names its entry's cell (``glossary.ipynb#cell-id=term-…``), and the glossary
    notebook has one read-only Markdown cell per entry with that id, opening with the entry's term in bold."""
    terms, refs = lab_book.glossary(), lab_book.bibliography()
    r = lab_book.Renderer({}, terms, refs, 1, "t")
    link = r.markdown("{term}`liquid cooling <Liquid cooling>`")
    assert link == "[liquid cooling](../glossary.ipynb#cell-id=term-liquid-cooling)"
    nb = lab_book.glossary_notebook(terms, refs, {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                                   "language": "python"}})
    nbformat.validate(nbformat.from_dict(nb))           # cell ids valid and unique, as nbformat 4.5 requires
    cells = {c["id"]: c for c in nb["cells"]}
    assert re.match(r"\*\*Liquid cooling\*\* — .*coolant", cells["term-liquid-cooling"]["source"])
    assert len(nb["cells"]) - 1 == len({e[0] for e in terms.values()})
    assert all(c["cell_type"] == "markdown" and c["metadata"]["editable"] is False for c in nb["cells"])
    # the setting that keeps a read-only Markdown cell rendered when a link lands on it, given to JupyterLab
    assert lab_book.LAB_OVERRIDES["@jupyterlab/notebook-extension:tracker"]["showEditorForReadOnlyMarkdown"] is False
    assert any(a.startswith("--LabApp.app_settings_dir=") and a.endswith(lab_book.SETTINGS_DIR)
               for a in lab_book.lab_command(Path("/tmp/book")))


def test_a_number_and_its_percent_sign_are_kept_whole_in_prose_only():
    from docutils import nodes
    from docutils.core import publish_doctree
    steel_glue = _load("steel_glue", ROOT / "book" / "_ext" / "steel_glue.py")
    source = ("Within 13 % of it, −1.5 % and 3,000 %; not ``x = 5 %`` nor 5% (unspaced); 7 % again.\n\n"
              "* a list item at 20 %\n\n.. math:: 5 % \\\\ 6 %\n\n::\n\n    code at 9 %\n")
    doc = publish_doctree(source, settings_overrides={"report_level": 5})
    before = doc.astext()
    steel_glue._keep_percentages_whole(None, doc, "page")
    wrapped = [n.astext() for n in doc.findall(nodes.inline) if "cc-nobr" in n["classes"]]
    assert wrapped == ["13 %", "−1.5 %", "3,000 %", "7 %", "20 %"]       # prose and list; not code or mathematics
    assert doc.astext() == before                                          # the text itself is unchanged
    steel_glue._keep_percentages_whole(None, doc, "page")                  # a second pass wraps nothing twice
    assert [n.astext() for n in doc.findall(nodes.inline) if "cc-nobr" in n["classes"]] == wrapped
    # {glue:text}`key:.0f` %: the number pasted in an inline of its own, " %" after it in the prose
    para = nodes.paragraph("", "", nodes.Text("from "), nodes.inline("12", "12", classes=["pasted-text"]),
                           nodes.Text(" % too fast, "), nodes.inline("x", "x", classes=["pasted-text"]), nodes.Text(" %"))
    doc = nodes.document(None, None)
    doc += para
    steel_glue._keep_percentages_whole(None, doc, "page")
    whole = [n for n in para.findall(nodes.inline) if "cc-nobr" in n["classes"]]
    assert [n.astext() for n in whole] == ["12 %"] and para.astext() == "from 12 % too fast, x %"
    css = (ROOT / "book" / "site.css").read_text(encoding="utf-8") + (ROOT / "tools/pdf/epub.css").read_text("utf-8")
    assert css.count(".cc-nobr { white-space: nowrap; }") == 2               # the site (and PDF) and the EPUB
