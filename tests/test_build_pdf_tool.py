"""tools/build_pdf.py's joins, without a build: links made internal, solutions gathered, default views kept."""
import importlib.util
from pathlib import Path

from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_pdf", ROOT / "tools" / "build_pdf.py")
build_pdf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_pdf)

PAGE = """<html><head></head><body><article class="bd-article"><section id="top"><h1>3. Talk<a class="headerlink"
href="#top">#</a></h1><p class="cc-run">Run this chapter</p>
<p><a href="../book/glossary.html#term-GPU">GPU</a> <a href="#sec">here</a> <a href="../lite/x.html">lite</a>
<a href="https://example.org/">out</a></p>
<section id="sec"><div class="exercise admonition" id="ex1"><p class="admonition-title">Exercise 1</p>
<section id="exercise-content"><p>Q?</p></section></div>
<div class="solution dropdown admonition" id="sol1"><p class="admonition-title">Solution to<a href="#ex1"> Exercise
1</a></p><section id="solution-content"><p>A.</p></section></div>
<div class="exercise admonition" id="ex2"><section id="exercise-content"><p>Q2</p></section></div>
<div class="cell_output"><script type="application/vnd.jupyter.widget-view+json">{"model_id": "m1"}</script></div>
</section></section></article></body></html>"""


def make(tmp_path, site_url=""):
    (tmp_path / "chapters").mkdir()
    (tmp_path / "chapters" / "03_x.html").write_text(PAGE)
    entries = [{"doc": "chapters/03_x", "part": "Part"}, {"doc": "book/glossary", "part": "Part"}]
    asm = build_pdf.Assembler(tmp_path, "en", entries, site_url)
    asm.static_views = {"m1": '<div class="widget-subarea"><p>default view</p></div>'}
    out = BeautifulSoup("<html><body></body></html>", "html.parser")
    return asm, asm.page(0, entries[0], out)


def test_links_ids_solutions_and_explorables(tmp_path):
    asm, ch = make(tmp_path)
    hrefs = [a["href"] for a in ch.find_all("a")]
    assert "#book-glossary--term-GPU" in hrefs            # another page of the book: internal
    assert "#chapters-03_x--sec" in hrefs                  # same page: prefixed
    assert "https://example.org/" in hrefs
    assert not any("lite" in h for h in hrefs)             # not in the book and no site address: no dead link
    ids = [el["id"] for el in ch.find_all(id=True)]
    assert len(ids) == len(set(ids)), "ids repeated"
    assert ch.select_one(".cc-run") is None and ch.select_one(".headerlink") is None
    sols = ch.select(".print-solutions .solution")
    assert len(sols) == 1 and "dropdown" not in sols[0]["class"]
    assert ch.select_one("#chapters-03_x--ex1 .print-see-solution a")["href"] == "#chapters-03_x--sol1"
    assert "default view" in ch.select_one(".print-explorable").get_text()
    assert "interactive on the book" in ch.select_one(".print-interactive").get_text()
    assert asm.chapters[0]["number"] == "3" and asm.chapters[0]["bare"] == "Talk"


def test_explorable_links_to_the_site_when_it_has_an_address(tmp_path):
    _, ch = make(tmp_path, "https://books.example/steel")
    a = ch.select_one(".print-interactive a")
    assert a["href"] == "https://books.example/steel/chapters/03_x.html#sec"


def test_default_views_only_keeps_each_stacks_selected_child(tmp_path):
    asm = build_pdf.Assembler(tmp_path, "en", [], "")
    asm.view_ids = ["box"]
    asm.widget_state = {
        "box": {"model_name": "VBoxModel", "state": {"children": ["IPY_MODEL_st"]}},
        "st": {"model_name": "StackModel", "state": {"children": ["IPY_MODEL_a", "IPY_MODEL_b"], "selected_index": 1}},
        "a": {"model_name": "HTMLModel", "state": {"value": "A"}},
        "b": {"model_name": "HTMLModel", "state": {"value": "B"}},
        "orphan": {"model_name": "HTMLModel", "state": {"value": "x"}},
    }
    state = asm.default_views_only()
    assert state["st"]["state"]["children"][1] == "IPY_MODEL_b"
    assert state["st"]["state"]["children"][0] != "IPY_MODEL_a"
    assert "a" not in state and "orphan" not in state and "b" in state


def test_svg2_paint_order_becomes_a_style_property_epub_accepts():
    """epubcheck's SVG 1.1 schema has no paint-order attribute (the chart system's label halo): the EPUB writes the
    same CSS property in the element's style, keeping any style it has; a tag without it is left alone."""
    html = ('<svg><text x="1" stroke="#fff" paint-order="stroke">a</text>'
            '<text paint-order="stroke" style="fill:red;">b</text><rect paint-order="fill"/><text>c</text></svg>')
    out = build_pdf.PAINT_ORDER_TAG.sub(build_pdf._svg11_style, html)
    assert "paint-order=" not in out
    assert '<text x="1" stroke="#fff" style="paint-order:stroke">a</text>' in out
    assert '<text style="fill:red;paint-order:stroke">b</text>' in out
    assert '<rect style="paint-order:fill"/>' in out and "<text>c</text>" in out
