"""The book to keep (issue 26): the PDF and EPUB that `make book` writes beside the site, checked after it.

Budgets (BOOK-STANDARD §8 and this file): the PDF of one edition < 30 MB; the EPUB < 30 MB; the PDF between 150 and
900 pages (a page count outside it means chapters went missing or the print layout broke); building both for one
edition (tools/build_pdf.py, no re-execution) < 5 min on the 2-core machine. The report goes to
_build/reports/pdf_report.json.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import unicodedata
import zipfile
from html import unescape
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
SITE = ROOT / "_build" / "html"
PRINT = ROOT / "_build" / "print"
REPORTS = ROOT / "_build" / "reports"
NAME = "steel-and-silicon"
PDF_BUDGET = 30e6
EPUB_BUDGET = 30e6
PAGES_MIN, PAGES_MAX = 150, 900
BUILD_SECONDS_BUDGET = 300


def editions() -> list[str]:
    """en, and every other edition the site holds (a folder with its own index.html, e.g. zh-CN)."""
    out = ["en"]
    if SITE.exists():
        out += sorted(p.parent.name for p in SITE.glob("*/index.html") if re.fullmatch(r"[a-z]{2}(-[A-Z]{2})?",
                                                                                     p.parent.name))
    return out


EDITIONS = editions()


def site_of(lang: str) -> Path:
    return SITE if lang == "en" else SITE / lang


def docs_in_order() -> list[str]:
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"]] + [c["file"] for p in toc["parts"] for c in p["chapters"]]


def norm(text: str) -> str:
    """Text as pdftotext gives it, compared loosely: NFKC, one space for any run of white space (line breaks
    included), soft hyphens and the hyphen of a word split at a line end removed."""
    text = unicodedata.normalize("NFKC", text).replace("\u00ad", "")
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
    return re.sub(r"\s+", " ", text).strip()


def tool(*cmd: str) -> str:
    if shutil.which(cmd[0]) is None:
        pytest.fail(f"{cmd[0]} not found: install Debian's {'epubcheck' if cmd[0] == 'epubcheck' else 'poppler-utils'}")
    return subprocess.run(cmd, capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module", params=EDITIONS)
def edition(request):
    lang = request.param
    pdf, epub = site_of(lang) / f"{NAME}.pdf", site_of(lang) / f"{NAME}.epub"
    if not pdf.exists() or not epub.exists():
        pytest.fail(f"{pdf} or {epub} is missing: run `make book` first (make test does)")
    text = tool("pdftotext", "-enc", "UTF-8", str(pdf), "-")
    return {"lang": lang, "pdf": pdf, "epub": epub, "text": text, "pages": text.split("\f")}


def chapter_titles(site: Path) -> dict[str, str]:
    out = {}
    for doc in docs_in_order():
        html = (site / f"{doc}.html").read_text(encoding="utf-8")
        html = html[html.index('<article class="bd-article">'):]
        m = re.search(r"<h1>(.*?)<a class=\"headerlink\"", html, re.S)
        out[doc] = norm(unescape(re.sub(r"<[^>]+>", "", m.group(1))))
    return out


def chapter_chunks(edition) -> dict[str, str]:
    """Each page of the book (docname) -> the normalised text of the PDF pages it is printed on; where each
    chapter starts comes from the contents (summary.json), checked by test_book_furniture."""
    summary = json.loads((PRINT / edition["lang"] / "summary.json").read_text(encoding="utf-8"))
    starts = [int(c["page"]) for c in summary["chapters"].values()]
    ends = starts[1:] + [len(edition["pages"]) + 1]
    return {doc: norm("\n".join(edition["pages"][s - 1: e - 1]))
            for doc, s, e in zip(docs_in_order(), starts, ends)}


def test_every_chapter_title_is_in_the_pdf_in_toc_order(edition):
    text = norm(edition["text"])
    titles = chapter_titles(site_of(edition["lang"]))
    missing = [t for t in titles.values() if t not in text]
    assert not missing, f"chapter titles not in the PDF's text: {missing}"
    summary = json.loads((PRINT / edition["lang"] / "summary.json").read_text(encoding="utf-8"))
    assert [norm(c["title"]) for c in summary["chapters"].values()] == [
        norm(t) for t in titles.values()], "the PDF's chapters are not those of _toc.yml, in its order"
    starts = [int(c["page"]) for c in summary["chapters"].values()]
    assert starts == sorted(set(starts)), f"chapters do not start on increasing pages: {starts}"
    chunks = chapter_chunks(edition)
    wrong = [doc for doc, title in titles.items() if not chunks[doc].startswith(title)
             and title not in chunks[doc][:400]]
    assert not wrong, f"these chapters' printed pages do not open with their title: {wrong}"


def test_each_chapter_has_a_glued_number_equal_to_the_sites(edition):
    """Per page with glued numbers: glued values (read from the site's HTML) are in that chapter's printed pages
    — at least one, and at least half of the distinct ones, so a wholesale loss of glued values fails too."""
    site = site_of(edition["lang"])
    chunks = chapter_chunks(edition)
    checked, failed = 0, []
    for doc in docs_in_order():
        html = (site / f"{doc}.html").read_text(encoding="utf-8")
        html = re.sub(r'<span class="cc-nobr">([^<]*)</span>', r"\1", html)     # "28 %" kept whole (steel_glue)
        glued = {norm(unescape(g)) for g in re.findall(r'class="pasted-text">([^<]+)<', html)}
        glued = {g for g in glued if re.search(r"\d", g)}
        if not glued:
            continue
        found = {g for g in glued if g in chunks[doc]}
        checked += 1
        if not found or len(found) < len(glued) / 2:
            failed.append(f"{doc}: {len(found)} of {len(glued)} glued values, missing e.g. {sorted(glued - found)[:3]}")
    assert checked >= 14, f"only {checked} pages with glued numbers"
    assert not failed, "glued numbers of the site missing from the PDF:\n" + "\n".join(failed)


def test_fonts_embedded_and_no_missing_glyphs(edition):
    fonts = tool("pdffonts", str(edition["pdf"])).splitlines()[2:]
    assert fonts, "pdffonts lists no fonts"
    not_embedded = [f for f in fonts if f.split()[-5] != "yes"]       # columns: ... emb sub uni object ID
    assert not not_embedded, "fonts not embedded:\n" + "\n".join(not_embedded)
    no_unicode = [f for f in fonts if f.split()[-3] != "yes"]
    assert not no_unicode, "fonts without a ToUnicode map (text would not search or copy):\n" + "\n".join(no_unicode)
    # private-use code points are allowed only as the icons of the icon font the theme uses (admonition titles)
    icon_font = any("FontAwesome" in f for f in fonts)
    bad = {c for c in edition["text"] if c in "\ufffd\u25a1\u2610"
           or (unicodedata.category(c) == "Co" and not (icon_font and "\uf000" <= c <= "\uf8ff"))}
    assert not bad, f"missing-glyph characters in the PDF's text: {sorted(map(hex, map(ord, bad)))}"


def test_chinese_edition_has_its_glyphs(edition):
    if edition["lang"] != "zh-CN":
        # the English edition's glossary carries the sources' Chinese terms: they must print as Chinese
        assert re.search(r"[\u4e00-\u9fff]", edition["text"]), "no Chinese characters in the PDF (glossary terms)"
        return
    han = len(re.findall(r"[\u4e00-\u9fff]", edition["text"]))
    assert han > 10000, f"only {han} Chinese characters in the zh-CN PDF"


def test_nothing_runs_off_the_page(edition):
    """Text boxes (pdftotext -bbox) inside the page, and no figure, table, image or code block wider than the text
    block in the print layout (tools/build_pdf.py measures them in Chromium before printing)."""
    layout = json.loads((PRINT / edition["lang"] / "layout.json").read_text(encoding="utf-8"))
    assert not layout, f"{len(layout)} element(s) wider than the text block, e.g.:\n" + "\n".join(
        json.dumps(x, ensure_ascii=False) for x in layout[:8])
    bbox = tool("pdftotext", "-bbox", str(edition["pdf"]), "-")
    off = []
    for m in re.finditer(r'<page width="([\d.]+)" height="([\d.]+)">(.*?)</page>', bbox, re.S):
        w, h = float(m.group(1)), float(m.group(2))
        for word in re.finditer(r'<word xMin="([\d.-]+)" yMin="([\d.-]+)" xMax="([\d.-]+)" yMax="([\d.-]+)">'
                                r'([^<]*)</word>', m.group(3)):
            x0, y0, x1, y1 = map(float, word.groups()[:4])
            if x0 < 0 or y0 < 0 or x1 > w + 0.5 or y1 > h + 0.5:
                off.append(f"{word.group(5)!r} at ({x0:.0f}, {y0:.0f})–({x1:.0f}, {y1:.0f}) on a {w:.0f}×{h:.0f} page")
            # nothing but the running head and the page number sits in the margins (10 mm = 28 pt)
            elif x1 > w - 28 or x0 < 28:
                off.append(f"{word.group(5)!r} in the side margin at x {x0:.0f}–{x1:.0f} of {w:.0f}")
    assert not off, f"{len(off)} word(s) outside the text area, e.g.:\n" + "\n".join(off[:10])


def test_book_furniture(edition):
    """A book, not a printed web page: title page with the commit and date, contents with page numbers, running
    heads and page numbers, solutions gathered at chapter ends, explorables with their line."""
    pages = [norm(p) for p in edition["pages"]]
    summary = json.loads((PRINT / edition["lang"] / "summary.json").read_text(encoding="utf-8"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    assert summary["version"].rstrip("+") == commit, "the PDF was built from another commit: run `make book`"
    assert summary["version"] in pages[0] and summary["date"] in pages[0], f"title page: {pages[0][:200]}"
    # the contents: every chapter with the page its opening is printed on, and that page really opens it
    titles = chapter_titles(site_of(edition["lang"]))
    for doc, ch in zip(docs_in_order(), summary["chapters"].values()):
        n = int(ch["page"])
        assert titles[doc] in pages[n - 1], f"{doc}: the contents say page {n}, which does not open it"
    # page numbers at the foot, running heads at the head of the body's pages
    # the page number is the lowest word on its page (by position, pdftotext -bbox: a chart's labels may come after
    # the footer in the text stream, but never below it); only the title, contents and part pages go without one
    raw = edition["pages"]
    bbox = tool("pdftotext", "-bbox", str(edition["pdf"]), "-")
    feet = []
    for body in re.findall(r'<page width="[\d.]+" height="[\d.]+">(.*?)</page>', bbox, re.S):
        words = [(float(m.group(1)), m.group(2)) for m in
                 re.finditer(r'<word xMin="[\d.-]+" yMin="[\d.-]+" xMax="[\d.-]+" yMax="([\d.-]+)">([^<]*)</word>', body)]
        feet.append(max(words)[1] if words else None)
    parts = len(yaml.safe_load((ROOT / "_toc.yml").read_text(encoding="utf-8")).get("parts", []))
    unnumbered = [i for i, foot in enumerate(feet, start=1) if foot != str(i)]
    assert len(unnumbered) <= 3 + parts, (f"{len(unnumbered)} of {len(feet)} pages lack their page number at the foot "
                                          f"(title, contents and {parts} part pages may): pages {unnumbered[:20]}")
    # each part opens on a page of its own, titled in the edition's language (the zh-CN copy's _toc.yml)
    toc = ROOT / "_toc.yml" if edition["lang"] == "en" else ROOT / "_build" / f"{edition['lang']}-src" / "_toc.yml"
    captions = [p["caption"] for p in yaml.safe_load(toc.read_text(encoding="utf-8")).get("parts", [])]
    missing = [c for c in captions if not any(norm(c) == pg.strip() for pg in pages)]
    assert not missing, f"part pages missing or not in the edition's language: {missing}"
    heads = sum(1 for p in raw if p.strip() and p.strip().splitlines()[0].strip() == "Steel and Silicon")
    assert heads > 0.3 * len(raw), f"only {heads} pages carry the book's running head"
    assert summary["solutions"] >= 4 * 14, f"{summary['solutions']} solutions gathered"
    assert summary["explorables"] >= 14, f"{summary['explorables']} explorables"
    text = norm(edition["text"])
    assert text.count("interactive on the book") >= summary["explorables"] or edition["lang"] != "en"


def test_epubcheck_passes_and_maths_is_mathml(edition):
    exe = shutil.which("epubcheck")
    if exe is None:
        pytest.fail("epubcheck not found: install Debian's epubcheck")
    # Debian's /usr/bin/epubcheck is the jar itself (run through binfmt where it is set up): call java on it
    cmd = ["java", "-jar", str(Path(exe).resolve())] if Path(exe).resolve().suffix == ".jar" else [exe]
    out = subprocess.run(cmd + ["--quiet", str(edition["epub"])], capture_output=True, text=True)
    assert out.returncode == 0, "epubcheck:\n" + (out.stdout + out.stderr)[-4000:]
    with zipfile.ZipFile(edition["epub"]) as z:
        xhtml = {n: z.read(n).decode("utf-8") for n in z.namelist() if n.endswith(".xhtml")}
    body = "".join(xhtml.values())
    assert body.count("<math") > 50, "maths is not MathML in the EPUB"
    assert "\\(" not in re.sub(r"<pre.*?</pre>|<code.*?</code>", "", body, flags=re.S), "raw TeX left in the EPUB"
    assert "<script" not in body
    assert len(xhtml) >= len(docs_in_order()) + 2


def test_sizes_and_page_count_report(edition):
    summary = json.loads((PRINT / edition["lang"] / "summary.json").read_text(encoding="utf-8"))
    pdf_bytes, epub_bytes = edition["pdf"].stat().st_size, edition["epub"].stat().st_size
    report = {"lang": edition["lang"], "pages": len([p for p in edition["pages"] if p.strip()]),
              "pdf_bytes": pdf_bytes, "epub_bytes": epub_bytes, "build_seconds": summary["seconds"],
              "budgets": {"pdf_bytes": PDF_BUDGET, "epub_bytes": EPUB_BUDGET, "pages": [PAGES_MIN, PAGES_MAX],
                          "build_seconds": BUILD_SECONDS_BUDGET}}
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"pdf_report.{edition['lang']}.json").write_text(json.dumps(report, indent=1))
    print(f"\n{edition['lang']}: {report['pages']} pages, PDF {pdf_bytes / 1e6:.1f} MB, EPUB {epub_bytes / 1e6:.1f} MB, "
          f"built in {summary['seconds']} s")
    assert pdf_bytes < PDF_BUDGET and epub_bytes < EPUB_BUDGET
    assert PAGES_MIN <= report["pages"] <= PAGES_MAX
    assert summary["seconds"] < BUILD_SECONDS_BUDGET


def test_cross_references_resolve_inside_the_book(edition):
    """Every link between the book's pages (glossary terms, citations, exercises, solutions, chapters) is a link
    inside the PDF whose target exists, and the PDF carries a destination for each."""
    html = (PRINT / edition["lang"] / "book.html").read_text(encoding="utf-8")
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    hrefs = [unescape(h) for h in re.findall(r'href="#([^"]+)"', html)]
    assert len(hrefs) > 1000, f"only {len(hrefs)} internal links"
    dangling = sorted({h for h in hrefs if h not in ids})
    assert not dangling, f"{len(dangling)} internal link(s) with no target, e.g. {dangling[:8]}"
    dests = tool("pdfinfo", "-dests", str(edition["pdf"]))
    named = set(re.findall(r'"(.*)"\s*$', dests, re.M))
    missing = sorted(set(hrefs) - named)
    assert not missing, f"{len(missing)} link target(s) without a PDF destination, e.g. {missing[:8]}"
