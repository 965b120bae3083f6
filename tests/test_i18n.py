"""The translation machinery (tools/i18n.py, issue 25): catalogs tied to the English source, and translated sources
in which every glued number, term, citation, reference and formula still resolves."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import i18n  # noqa: E402


def _markdown_sources():
    for page in i18n.sources():
        if page.suffix == ".ipynb":
            nb = json.loads(page.read_text(encoding="utf-8"))
            for index, cell in enumerate(nb["cells"]):
                if cell["cell_type"] == "markdown":
                    yield f"{page.name} cell {index + 1}", "".join(cell["source"])
        else:
            yield page.name, page.read_text(encoding="utf-8")


def test_every_page_splits_into_blocks_that_join_back_exactly():
    """No character of the book is lost or added by the split into translatable blocks."""
    n = 0
    for where, text in _markdown_sources():
        parts = i18n.pieces(text)
        assert "".join(p.text for p in parts) == text, where
        n += sum(p.prose for p in parts)
    assert n > 1000                                     # the book has well over a thousand prose blocks


def test_structure_is_never_offered_for_translation():
    """Fences, directive options, maths blocks and label targets stay verbatim: a translator sees prose only."""
    for where, text in _markdown_sources():
        for p in i18n.pieces(text):
            if p.prose:
                for mark in ("```", ":::", ":class:", ":label:", "$$", "{code-cell}"):
                    assert mark not in p.text, f"{where}: {mark!r} in {p.text[:80]!r}"


def test_directive_titles_and_bodies_are_prose():
    text = ('```{admonition} Source check: a "20×" gap\n:class: note\nThe source says {glue:text}`k:.0f`×.\n\n'
            'Second paragraph.\n```\n')
    prose = [p.text for p in i18n.pieces(text) if p.prose]
    assert prose == ['Source check: a "20×" gap', "The source says {glue:text}`k:.0f`×.", "Second paragraph."]


def test_spans_a_translation_must_keep():
    en = ("Per direction the gap is {glue:text}`ch04_gap:.0f`× for the {term}`cluster <Cluster>` "
          "{cite:p}`seed000,dubey2024llama3`; see {ref}`ch04-ex-bubble` and {doc}`06_memory`, with $p - 1$ and "
          "`parallel.bubble_fraction`.")
    good = ("按单向计，{term}`集群 <Cluster>` 的差距为 {glue:text}`ch04_gap:.0f`× {cite:p}`seed000,dubey2024llama3`；"
            "见 {ref}`ch04-ex-bubble` 与 {doc}`06_memory`，其中 $p - 1$，`parallel.bubble_fraction`。")
    assert i18n.lost_spans(en, good) == []
    lost_number = good.replace("{glue:text}`ch04_gap:.0f`", "9")
    assert i18n.lost_spans(en, lost_number) == ["glue:text 'ch04_gap:.0f'"]
    changed_formula = good.replace("$p - 1$", "$p-1$")
    assert "math '$p - 1$'" in i18n.lost_spans(en, changed_formula)
    other_term = good.replace("<Cluster>", "<Node>")
    assert "term 'Cluster'" in i18n.lost_spans(en, other_term)


def _mini_book(tmp: Path, paragraph: str) -> Path:
    root = tmp / "book"
    (root / "chapters").mkdir(parents=True)
    for name in ("book", "figures", "labs"):
        (root / name).mkdir(exist_ok=True)
    (root / "_config.yml").write_text('title: "Mini"\n', encoding="utf-8")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n  - caption: Part one\n"
                                   "    chapters:\n      - file: chapters/01_x\n", encoding="utf-8")
    (root / "book" / "intro.md").write_text("# Intro\n\nOne line.\n", encoding="utf-8")
    nb = {"cells": [{"cell_type": "markdown", "metadata": {}, "source": "# 1. A chapter\n\n" + paragraph},
                    {"cell_type": "code", "metadata": {}, "execution_count": 1, "outputs": [{"output_type": "stream",
                     "name": "stdout", "text": "42\n"}], "source": "print(42)"}],
          "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
                       "language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    for i, cell in enumerate(nb["cells"]):
        cell["id"] = f"c{i}"
    (root / "chapters" / "01_x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return root


def test_a_changed_english_paragraph_is_flagged_until_retranslated(tmp_path):
    root = _mini_book(tmp_path, "The gap is large.")
    i18n.update("zh-CN", root)
    po = i18n.catalog_path(root / "chapters" / "01_x.ipynb", "zh-CN", root)
    cat = i18n.read_catalog(po)
    for m in cat:
        if m.id:
            m.string = {"# 1. A chapter": "# 1. 一章", "The gap is large.": "差距很大。"}.get(m.id, m.string)
    i18n.write_catalog(po, cat)
    toc = root / "locale" / "zh_CN" / "LC_MESSAGES" / "_toc.po"
    cat = i18n.read_catalog(toc)
    for m in cat:
        if m.id:
            m.string = {"Mini": "小书", "Part one": "第一部分"}[m.id]
    i18n.write_catalog(toc, cat)
    (root / "book" / "intro.md").write_text("# Intro\n\nOne line.\n", encoding="utf-8")
    problems = i18n.check("zh-CN", root)
    assert [p for p in problems if "01_x" in p] == []
    # the author edits the English: the old translation is kept, marked fuzzy, and the check fails on it
    nb = json.loads((root / "chapters" / "01_x.ipynb").read_text(encoding="utf-8"))
    nb["cells"][0]["source"] = "# 1. A chapter\n\nThe gap is very large."
    (root / "chapters" / "01_x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    report = i18n.update("zh-CN", root)
    assert report["chapters/01_x.ipynb"].get("fuzzy") == 1
    entry = [m for m in i18n.read_catalog(po) if m.id == "The gap is very large."][0]
    assert "fuzzy" in entry.flags and entry.string == "差距很大。" and entry.previous_id == ["The gap is large."]
    assert any("stale" in p and "01_x" in p for p in i18n.check("zh-CN", root))


def test_updating_twice_changes_nothing(tmp_path):
    """A catalog changes only when the English does: re-running update is a no-op (no date churn in git)."""
    root = _mini_book(tmp_path, "The gap is large.")
    i18n.update("zh-CN", root)
    po = i18n.catalog_path(root / "chapters" / "01_x.ipynb", "zh-CN", root)
    first = po.read_bytes()
    i18n.update("zh-CN", root)
    assert po.read_bytes() == first


def test_the_books_catalogs_are_current():
    """Every English block of the book is an entry of its page's catalog (tools/i18n.py update was run)."""
    problems = [p for p in i18n.check("zh-CN") if "not in the catalog" in p or "no catalog" in p]
    assert not problems, problems[:5]


def test_translated_copy_keeps_code_and_outputs(tmp_path):
    root = _mini_book(tmp_path, "Forty-two: {glue:text}`k`.")
    i18n.update("zh-CN", root)
    with pytest.raises(SystemExit, match="no current zh-CN translation"):
        i18n.build("zh-CN", tmp_path / "out", root)
    i18n.build("zh-CN", tmp_path / "out", root, allow_missing=True)
    a = json.loads((root / "chapters" / "01_x.ipynb").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "out" / "chapters" / "01_x.ipynb").read_text(encoding="utf-8"))
    assert [c for c in a["cells"] if c["cell_type"] == "code"] == [c for c in b["cells"] if c["cell_type"] == "code"]
    assert "language: zh_CN" in (tmp_path / "out" / "_config.yml").read_text(encoding="utf-8")


@pytest.mark.skipif(shutil.which("jupyter-book", path=str(ROOT / ".venv" / "bin")) is None,
                    reason="needs the book's venv")
def test_glue_term_cite_ref_and_math_resolve_in_a_translated_paragraph(tmp_path):
    """The trial's failure (Sphinx's gettext pass: "No key 'ch01_mem' found in glue data") cannot happen: the
    translated paragraph sits in its own notebook, whose glue data myst-nb reads. Built strictly, as the book is."""
    paragraph = ("Each GPU holds {glue:text}`mem:.1f` GB ({glue:text}`share:.0%`), see {ref}`tgt` and "
                 "{doc}`../book/intro`, $x^2$.\n\n(tgt)=\n## Target\n\nEnd.")
    root = _mini_book(tmp_path, paragraph)
    nb = json.loads((root / "chapters" / "01_x.ipynb").read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "code", "id": "glue", "metadata": {"tags": ["remove-cell"]}, "execution_count": 2,
                        "source": "from chipchain.notebook import glue\nglue('mem', 74.0, display=False)\n"
                                  "glue('share', 0.5, display=False)",
                        "outputs": [{"output_type": "display_data", "metadata": {"scrapbook": {
                            "name": n, "mime_prefix": "application/papermill.record/"}},
                            "data": {"application/papermill.record/text/plain": v}}
                            for n, v in (("mem", "74.0"), ("share", "0.5"))]})
    (root / "chapters" / "01_x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (root / "_config.yml").write_text('title: "Mini"\nexecute:\n  execute_notebooks: "off"\n', encoding="utf-8")
    i18n.update("zh-CN", root)
    zh = {"# 1. A chapter": "# 1. 一章",
          paragraph.split("\n\n")[0]: "每个 GPU 存放 {glue:text}`mem:.1f` GB（{glue:text}`share:.0%`），见 {ref}`tgt` 与 "
                                      "{doc}`../book/intro`，$x^2$。",
          "## Target": "## 目标", "End.": "完。", "Mini": "小书", "Part one": "第一部分",
          "# Intro": "# 引言", "One line.": "一行。"}
    base = root / "locale" / "zh_CN" / "LC_MESSAGES"
    for po in base.rglob("*.po"):
        cat = i18n.read_catalog(po)
        for m in cat:
            if m.id:
                m.string = zh[m.id]
        i18n.write_catalog(po, cat)
    assert i18n.check("zh-CN", root) == []
    out = tmp_path / "zh"
    i18n.build("zh-CN", out, root)
    run = subprocess.run([str(ROOT / ".venv" / "bin" / "jupyter-book"), "build", str(out), "-W", "-n",
                          "--keep-going"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-2000:]
    import html
    import re

    page = (out / "_build" / "html" / "chapters" / "01_x.html").read_text(encoding="utf-8")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "每个 GPU 存放 74.0 GB（50%），见 目标 与 引言，" in text     # glue, ref and doc all resolved
    assert r"\(x^2\)" in text and 'lang="zh-CN"' in page


# --- every catalog, as the translators leave it (issue 25: checks in `make test`) ---------------------------------
BASE = ROOT / "locale" / "zh_CN" / "LC_MESSAGES"
COMPLETE = ROOT / "locale" / "zh_CN" / "COMPLETE"


def _catalogs():
    return sorted(BASE.rglob("*.po"))


def test_no_catalog_has_a_stale_entry_or_a_translation_that_lost_a_span():
    """Over every catalog: no entry marked fuzzy (the English changed since it was translated), and no translation
    without every glued value, term, citation, reference, formula, code span and link of its English."""
    problems = []
    for po in _catalogs():
        rel = po.relative_to(BASE).with_suffix("")
        for m in i18n.read_catalog(po):
            if not m.id:
                continue
            if "fuzzy" in m.flags:
                problems.append(f"{rel}: stale (fuzzy) entry: {m.id[:60]!r}")
            elif m.string:
                lost = i18n.lost_spans(m.id, m.string)
                if lost:
                    problems.append(f"{rel}: the translation of {m.id[:50]!r} lost {', '.join(lost)}")
    assert len(_catalogs()) >= 20
    assert not problems, f"{len(problems)} problems:\n" + "\n".join(problems[:30])


def complete_catalogs() -> list[str]:
    """The catalogs declared finished (``locale/zh_CN/COMPLETE``: one catalog path a line, e.g. chapters/01_h100;
    blank lines and ``#`` comments allowed)."""
    lines = COMPLETE.read_text(encoding="utf-8").splitlines()
    return [ln.strip().removesuffix(".po") for ln in lines if ln.strip() and not ln.strip().startswith("#")]


def test_complete_catalogs_have_no_missing_entry():
    """Every catalog named in locale/zh_CN/COMPLETE translates every English block of its page (missing, stale or
    span-losing entries fail), and names a catalog that exists."""
    assert COMPLETE.exists(), "locale/zh_CN/COMPLETE is missing (one finished catalog a line; it may be empty)"
    names = complete_catalogs()
    unknown = [n for n in names if not (BASE / f"{n}.po").exists()]
    assert not unknown, f"COMPLETE names catalogs that do not exist: {unknown}"
    assert len(set(names)) == len(names), "COMPLETE names a catalog twice"
    problems = [p for p in i18n.check("zh-CN")
                if any(p.startswith(f"{n}.") or p.startswith(f"{n} ") for n in names)
                or (("_toc" in names) and p.startswith("_toc.yml"))]
    assert not problems, f"{len(problems)} problems in complete catalogs:\n" + "\n".join(problems[:30])


def _canonical(obj) -> str:
    return json.dumps(obj, sort_keys=True, ensure_ascii=False)


def test_the_translated_copy_of_the_book_keeps_every_code_cell_and_output_byte_identical(tmp_path):
    """One source: the copy `make book` builds the zh-CN edition from (tools/i18n.py build) has, in every notebook of
    the book, the same code cells — source, metadata, outputs and their metadata — the same cell ids, kinds and
    markdown-cell metadata, and the same notebook metadata; only markdown text may differ. Pages in Markdown keep
    their front matter, and the data and figures are the same files."""
    out = tmp_path / "zh"
    i18n.build("zh-CN", out, allow_missing=True)
    checked = 0
    for page in i18n.sources():
        rel = page.relative_to(ROOT)
        copy = out / rel
        assert copy.exists(), f"{rel} is not in the translated copy"
        if page.suffix != ".ipynb":
            body, front = i18n._split_front_matter(page.read_text(encoding="utf-8"))
            assert copy.read_text(encoding="utf-8").startswith(front), f"{rel}: front matter changed"
            continue
        a, b = (json.loads(p.read_text(encoding="utf-8")) for p in (page, copy))
        assert _canonical(a["metadata"]) == _canonical(b["metadata"]), f"{rel}: notebook metadata changed"
        assert (a["nbformat"], a["nbformat_minor"]) == (b["nbformat"], b["nbformat_minor"]), rel
        assert len(a["cells"]) == len(b["cells"]), f"{rel}: cells added or lost"
        for i, (x, y) in enumerate(zip(a["cells"], b["cells"])):
            assert (x["cell_type"], x.get("id")) == (y["cell_type"], y.get("id")), f"{rel} cell {i + 1}"
            if x["cell_type"] == "code":
                # the code and outputs are the same; only the prose of its metadata (a figure's caption, an image's
                # alt text: i18n._metadata_prose) is the translation
                assert _canonical(_without_metadata_prose(x)) == _canonical(_without_metadata_prose(y)), \
                    f"{rel} cell {i + 1}: a code cell or its outputs changed"
                for key, text in i18n._metadata_prose(x).items():
                    assert i18n._metadata_prose(y)[key] != text or not text, f"{rel} cell {i + 1}: {key} untranslated"
                checked += 1
            else:
                assert _canonical(x.get("metadata", {})) == _canonical(y.get("metadata", {})), f"{rel} cell {i + 1}"
    assert checked > 300
    for name in ("figures",):
        for f in (ROOT / name).rglob("*"):
            if f.is_file() and "__pycache__" not in f.parts:
                assert (out / f.relative_to(ROOT)).read_bytes() == f.read_bytes(), f"{f.relative_to(ROOT)} changed"
    config = (out / "_config.yml").read_text(encoding="utf-8")
    assert "language: zh_CN" in config and "图 %s" in config and "表 %s" in config


def _without_metadata_prose(cell: dict) -> dict:
    cell = json.loads(json.dumps(cell))
    for path in i18n._METADATA_PROSE:
        node = cell.get("metadata", {})
        for key in path[:-1]:
            node = node.get(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node.pop(path[-1], None)
    return cell


_ALL_ROLES = ("Each GPU holds {glue:text}`mem:.1f` GB of {term}`HBM` ({glue:text}`share:.0%` of it) "
              "{cite:p}`mini2024`, see {ref}`tgt` and {doc}`../book/intro`, with $x^2$.")


def _mini_with_every_role(tmp_path: Path) -> Path:
    """A one-chapter book whose paragraph uses every role kind: glue, term, cite, ref, doc and math."""
    root = _mini_book(tmp_path, _ALL_ROLES + "\n\n(tgt)=\n## Target\n\nEnd.")
    nb = json.loads((root / "chapters" / "01_x.ipynb").read_text(encoding="utf-8"))
    nb["cells"].append({"cell_type": "code", "id": "glue", "metadata": {"tags": ["remove-cell"]}, "execution_count": 2,
                        "source": "from chipchain.notebook import glue\nglue('mem', 74.0, display=False)\n"
                                  "glue('share', 0.5, display=False)",
                        "outputs": [{"output_type": "display_data", "metadata": {"scrapbook": {
                            "name": n, "mime_prefix": "application/papermill.record/"}},
                            "data": {"application/papermill.record/text/plain": v}}
                            for n, v in (("mem", "74.0"), ("share", "0.5"))]})
    (root / "chapters" / "01_x.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    (root / "book" / "glossary.md").write_text("# Glossary\n\n```{glossary}\nHBM\n  High-bandwidth memory.\n```\n",
                                               encoding="utf-8")
    (root / "book" / "references.md").write_text("# References\n\n```{bibliography}\n```\n", encoding="utf-8")
    (root / "book" / "references.bib").write_text(
        "@misc{mini2024,\n  author = {Doe, Jane},\n  title = {A mini source},\n  year = {2024}\n}\n", encoding="utf-8")
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/intro\nparts:\n  - caption: Part one\n"
                                   "    chapters:\n      - file: chapters/01_x\n      - file: book/glossary\n"
                                   "      - file: book/references\n", encoding="utf-8")
    (root / "_config.yml").write_text('title: "Mini"\nexecute:\n  execute_notebooks: "off"\n'
                                      "bibtex_bibfiles:\n  - book/references.bib\n", encoding="utf-8")
    return root


@pytest.mark.skipif(shutil.which("jupyter-book", path=str(ROOT / ".venv" / "bin")) is None,
                    reason="needs the book's venv")
def test_a_chapter_with_every_role_kind_shows_the_same_glued_values_in_both_editions(tmp_path):
    """Glue, term, cite, ref, doc and math in one translated paragraph: both editions built strictly, as `make book`
    builds them; the zh page shows exactly the English page's glued values, glossary link, citation label,
    reference and document links and formula."""
    import html
    import re

    root = _mini_with_every_role(tmp_path)
    i18n.update("zh-CN", root)
    zh = {"# 1. A chapter": "# 1. 一章",
          _ALL_ROLES: "每个 GPU 存放 {glue:text}`mem:.1f` GB 的 {term}`高带宽存储 <HBM>`（其中 {glue:text}`share:.0%`）"
                      "{cite:p}`mini2024`，见 {ref}`tgt` 与 {doc}`../book/intro`，其中 $x^2$。",
          "## Target": "## 目标", "End.": "完。", "Mini": "小书", "Part one": "第一部分", "# Intro": "# 引言",
          "One line.": "一行。", "# Glossary": "# 术语表", "HBM\n  High-bandwidth memory.": "HBM\n  高带宽存储。",
          "# References": "# 参考文献"}
    for po in (root / "locale" / "zh_CN" / "LC_MESSAGES").rglob("*.po"):
        cat = i18n.read_catalog(po)
        for m in cat:
            if m.id:
                m.string = zh[m.id]
        i18n.write_catalog(po, cat)
    assert i18n.check("zh-CN", root) == []
    out = tmp_path / "zh"
    i18n.build("zh-CN", out, root)
    jb = str(ROOT / ".venv" / "bin" / "jupyter-book")
    pages = {}
    for edition, src in (("en", root), ("zh", out)):
        run = subprocess.run([jb, "build", str(src), "-W", "-n", "--keep-going"], capture_output=True, text=True,
                             timeout=300)
        assert run.returncode == 0, edition + run.stdout[-3000:] + run.stderr[-2000:]
        pages[edition] = (src / "_build" / "html" / "chapters" / "01_x.html").read_text(encoding="utf-8")

    def article(page):
        return page[page.index('<article class="bd-article">'):page.index("</article>")]

    def found(page):
        a = article(page)
        return {"glue": re.findall(r'class="pasted-text">([^<]*)<', a),
                "term": re.findall(r'href="([^"]*glossary\.html#term-[^"]*)"', a),
                "cite": [html.unescape(re.sub(r"<[^>]+>", "", c)) for c in
                         re.findall(r'<a class="reference internal" href="[^"]*references\.html#[^"]*"[^>]*>(.*?)</a>', a)],
                "ref": re.findall(r'class="reference internal" href="(#tgt)"', a), "doc": re.findall(r'href="(\.\./book/intro\.html)"', a),
                "math": re.findall(r'<span class="math notranslate nohighlight">(.*?)</span>', a)}

    en, zh_found = found(pages["en"]), found(pages["zh"])
    assert en["glue"] == ["74.0", "50%"] and all(en[k] for k in en), en
    assert zh_found == en, (zh_found, en)
    text = html.unescape(re.sub(r"<[^>]+>", "", article(pages["zh"])))
    assert "每个 GPU 存放 74.0 GB 的 高带宽存储（其中 50%）" in text, text[:500]
    assert "{glue" not in text and "{term" not in text and "{cite" not in text


def test_the_zh_edition_is_complete():
    """Issue 25: no English paragraph without a current translation — every catalog is declared finished, so a new
    or changed English block fails the test above until its translation is written (tools/i18n.py todo/fill)."""
    assert sorted(complete_catalogs()) == sorted(str(p.relative_to(BASE).with_suffix("")) for p in _catalogs())


def _literal_emphasis(markdown: str) -> list[str]:
    """Emphasis marks CommonMark leaves as literal text (a ``**`` that cannot close after "）" or "。" before a Chinese
    character, or open after one before a role): what the reader would see as stray asterisks."""
    import re

    from markdown_it import MarkdownIt

    text = re.sub(r"`[^`]*`", "C", markdown)          # code spans and roles' targets are not emphasis
    text = re.sub(r"\$[^$]*\$", "M", text)             # nor maths
    html = MarkdownIt("commonmark").render(text)
    return re.findall(r".{0,12}(?:\*\*|(?<![\w*])\*(?=[^\s*][^*<]*\*)).{0,12}", html)


def test_no_translation_shows_a_stray_asterisk():
    """CJK punctuation next to ``**`` defeats CommonMark's flanking rules (``**挂起。**一个`` renders its asterisks):
    every translated block's bold and italics render as bold and italics."""
    problems = []
    for po in sorted(i18n.locale_base("zh-CN").rglob("*.po")):
        for m in i18n.read_catalog(po):
            if m.id and m.string and _literal_emphasis(m.string) and not _literal_emphasis(m.id):
                problems.append(f"{po.name}: {_literal_emphasis(m.string)[0]!r}")
    assert not problems, f"{len(problems)} translations: " + "; ".join(problems[:6])


def test_the_zh_copy_cites_the_chinese_sources_by_chinese_labels(tmp_path):
    """The three seed documents are Chinese: the zh-CN edition cites them as 源章节, 硬件炼体篇 and 从业者文章 (their
    references' author labels), every other reference as published."""
    out = tmp_path / "zh"
    i18n.build("zh-CN", out, allow_missing=True)
    english = (ROOT / "book" / "references.bib").read_text(encoding="utf-8")
    chinese = (out / "book" / "references.bib").read_text(encoding="utf-8")
    for en, zh in i18n.BIB_AUTHORS["zh-CN"].items():
        assert f"author = {{{{{en}}}}}" in english and f"author = {{{{{zh}}}}}" in chinese
    assert chinese.count("@") == english.count("@")
    assert [l for l in chinese.splitlines() if "author" not in l] == [l for l in english.splitlines() if "author" not in l]
