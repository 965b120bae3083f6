"""The two editions side by side (issue 25): the English site at the root, the 简体中文 one under ``zh-CN/``.

- every page of each edition has the other's copy, and a language switch (English | 简体中文) in its header that
  links to exactly that copy by a relative URL, with ``lang`` and ``hreflang`` — checked in the built HTML of every
  page, and in Chromium with JavaScript switched off, at 1280 and 390 px: visible, inside the screen, and a click
  lands on the same page in the other edition, both ways;
- one source: every glued value of an English page is on its Chinese page, as many times (the translated prose and
  the shared outputs paste the same numbers);
- the zh-CN JupyterLite copy holds the translated chapters and loads the English copy's Pyodide runtime (one copy
  of the ~48 MB runtime for both editions).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from html import unescape
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest

from .conftest import ROOT, SCREENSHOTS, SITE, editions
from .test_site import DESKTOP, NOBR, PHONE

pytestmark = pytest.mark.skipif("zh-CN" not in editions(), reason="the zh-CN edition is not built (make book)")

ZH = SITE / "zh-CN"


def _pages(root: Path) -> list[str]:
    """Every page of one edition (index.html, Jupyter Book's redirect to book/intro.html, is not a page)."""
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.html") if p.relative_to(root) != Path("index.html")
                  and not any(part.startswith("_") or part in ("lite", "zh-CN") for part in p.relative_to(root).parts))


def _measured_here(rel: str) -> bool:
    """Whether the page's notebook glues values it measures on the build machine (cells tagged
    nbval-ignore-output that glue: the labs' timings of real torch.distributed ranks), which two builds cannot share."""
    nb = ROOT / Path(rel).with_suffix(".ipynb")
    if not nb.exists():
        return False
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    return any("nbval-ignore-output" in c.get("metadata", {}).get("tags", []) and
               any("scrapbook" in o.get("metadata", {}) for o in c.get("outputs", []))
               for c in cells if c["cell_type"] == "code")


def _switch(html: str) -> str:
    m = re.search(r'<nav class="steel-lang-switch"[^>]*>.*?</nav>', html, re.S)
    return m.group(0) if m else ""


def test_every_page_has_its_copy_in_the_other_edition():
    en, zh = _pages(SITE), _pages(ZH)
    assert len(en) >= 25
    assert set(en) == set(zh), f"only English: {sorted(set(en) - set(zh))[:5]}; only zh-CN: {sorted(set(zh) - set(en))[:5]}"


@pytest.mark.parametrize("edition", ["en", "zh-CN"])
def test_each_editions_address_lands_on_its_home_page(browser, site_url, edition):
    """A reader who types the edition's address (``/`` or ``/zh-CN/``) arrives on that edition's book/intro.html,
    in its own language: index.html is only a meta refresh, so the test waits for the navigation it starts."""
    folder = "" if edition == "en" else f"{edition}/"
    page = browser.new_page(viewport=DESKTOP)
    try:
        page.goto(f"{site_url}/{folder}")
        page.wait_for_url(f"{site_url}/{folder}book/intro.html", timeout=15_000)
        page.wait_for_load_state("domcontentloaded")
        assert page.evaluate("document.documentElement.lang") == ("en" if edition == "en" else "zh-CN")
        assert page.locator("article h1:has(a.headerlink)").first.is_visible()
    finally:
        page.close()


@pytest.mark.parametrize("edition", ["en", "zh-CN"])
def test_every_page_links_to_the_same_page_in_the_other_edition(edition):
    """The switch on every page: its one link is relative, resolves to the same page of the other edition, and says
    which language it leads to (hreflang, lang); the page's own language is marked current, and <html lang> is it."""
    root, other_root = (SITE, ZH) if edition == "en" else (ZH, SITE)
    other = "zh-CN" if edition == "en" else "en"
    problems = []
    for rel in _pages(root):
        html = (root / rel).read_text(encoding="utf-8")
        nav = _switch(html)
        links = re.findall(r'<a class="steel-lang-link" href="([^"]+)" hreflang="([^"]+)" lang="([^"]+)"', nav)
        current = re.findall(r'class="steel-lang-current" lang="([^"]+)" aria-current="true"', nav)
        if len(links) != 1 or current != [edition]:
            problems.append(f"{rel}: switch {nav[:120]!r}")
            continue
        href, hreflang, lang = links[0]
        target = (root / rel).parent / href
        if href.startswith(("/", "http")) or hreflang != other or lang != other:
            problems.append(f"{rel}: {href} hreflang={hreflang} lang={lang}")
        elif target.resolve() != (other_root / rel).resolve():
            problems.append(f"{rel}: links to {target.resolve()}, not {other_root / rel}")
        if not re.search(rf'<html[^>]*\slang="{re.escape(edition)}"', html):
            problems.append(f"{rel}: <html lang> is not {edition}")
        if f'<link rel="alternate" hreflang="{other}"' not in html:
            problems.append(f"{rel}: no <link rel=alternate hreflang={other}>")
    assert not problems, f"{len(problems)} pages: " + "; ".join(problems[:8])


def _glued(html: str) -> Counter:
    article = html[html.find('<article class="bd-article">'):html.find("</article>")]
    article = NOBR.sub(r"\1", article)                      # "28 %" kept whole (steel_glue): read its text
    return Counter(unescape(v) for v in re.findall(r'class="pasted-text">([^<]*)<', article))


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _numbers(values: Counter, translate: bool = False) -> Counter:
    """A page's glued values as the numbers they print: "152 days" and its zh-CN "152 天" are the same value, drawn
    in the reader's language by the library (chipchain._i18n); a value without digits is compared whole, an English
    one as the library's catalog translates it ("shorter" is 更短 on the zh-CN page)."""
    from chipchain import _i18n

    out = Counter()
    for value, n in values.items():
        if _NUMBER.search(value):
            out[" ".join(_NUMBER.findall(value))] += n
        elif translate:
            with _i18n.language("zh_CN"):
                out[_i18n.gettext(value, strict=False)] += n
        else:
            out[value] += n
    return out


def test_every_glued_value_of_an_english_page_is_on_its_chinese_page():
    """One source, every number still computed: the multiset of glued values ({glue:text} and {glue} in the prose
    and in outputs) of each English page equals its zh-CN page's (word order may move them within a paragraph), the
    numbers they print compared, since the library writes a value's words (a duration's unit, a glued verdict) in
    the reader's language; and no glued value on a zh-CN page is left in English words."""
    from chipchain import _i18n

    checked, problems, measured, english = 0, [], [], []
    for rel in _pages(SITE):
        en = _glued((SITE / rel).read_text(encoding="utf-8"))
        if not en:
            continue
        zh_values = _glued((ZH / rel).read_text(encoding="utf-8"))
        english += [f"{rel}: {v!r}" for v in zh_values if _i18n.needs_translation(v) and not _measured_here(rel)]
        en, zh = _numbers(en, translate=True), _numbers(zh_values)
        checked += sum(en.values())
        if en != zh and _measured_here(rel):      # a timing measured by each build: reported, not compared
            measured.append(rel)
        elif en != zh:
            problems.append(f"{rel}: only English {dict(en - zh)}, only zh-CN {dict(zh - en)}")
    assert checked > 500, checked
    REPORTS = SITE.parent / "reports"
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "editions_glue.json").write_text(json.dumps({"glued_values_compared": checked,
                                                            "measured_on_the_build_machine": measured}, indent=1))
    assert all(m.startswith("labs/") for m in measured), f"chapters whose glued values depend on the machine: {measured}"
    assert not problems, "; ".join(problems[:5])
    assert not english, f"{len(english)} glued words left in English on zh-CN pages: " + "; ".join(english[:8])


#: pages the switch is clicked on, both ways, at both widths, with JavaScript off
SWITCH_PAGES = ["book/intro.html", "chapters/03_interconnect.html", "book/glossary.html", "labs/L1_collectives.html"]


@pytest.mark.parametrize("width", ["desktop", "phone"])
@pytest.mark.parametrize("path", SWITCH_PAGES)
def test_the_switch_lands_on_the_same_page_both_ways_without_javascript(browser, site_url, path, width):
    viewport = DESKTOP if width == "desktop" else PHONE
    context = browser.new_context(viewport=viewport, java_script_enabled=False)
    page = context.new_page()
    try:
        start = f"{site_url}/{path}"
        for here, there in (("en", "zh-CN"), ("zh-CN", "en")):
            url = start if here == "en" else f"{site_url}/zh-CN/{path}"
            page.goto(url, wait_until="load")
            link = page.locator(f'.steel-lang-switch a[hreflang="{there}"]')
            assert link.count() == 1, f"{url}: no link to the {there} edition"
            box = link.bounding_box()
            assert link.is_visible() and box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"] \
                and box["y"] + box["height"] <= viewport["height"], f"{url}: the switch is off screen at {width}: {box}"
            size = float(link.evaluate("e => parseFloat(getComputedStyle(e).fontSize)"))
            assert size >= 12, f"{url}: the switch's text is {size} px"
            if width == "phone" and here == "zh-CN":
                SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SCREENSHOTS / f"switch-{path.replace('/', '_').removesuffix('.html')}.png"))
            link.click()
            page.wait_for_load_state("load")
            want = f"{site_url}/zh-CN/{path}" if there == "zh-CN" else start
            assert urlsplit(page.url).path == urlsplit(want).path, f"{url} → {page.url}, expected {want}"
            assert page.evaluate("document.documentElement.lang") == there
    finally:
        context.close()


def test_the_zh_lite_copy_holds_the_translated_chapters_and_shares_the_runtime():
    lite = ZH / "lite"
    config = json.loads((lite / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"]["@jupyterlite/pyodide-kernel-extension:kernel"]
    assert kernel["pyodideUrl"].startswith("./"), kernel    # the only relative form JupyterLite rebases
    runtime = urljoin("file:///x/zh-CN/lite/", kernel["pyodideUrl"])
    assert runtime == "file:///x/lite/static/pyodide/pyodide.js", runtime   # the English copy's runtime
    assert (SITE / "lite" / "static" / "pyodide" / "pyodide.js").exists()
    assert not (lite / "static" / "pyodide").exists(), "the zh-CN lite copy carries its own Pyodide runtime"
    chapters = sorted((lite / "files" / "chapters").glob("*.ipynb"))
    assert [p.name for p in chapters] == sorted(p.name for p in (SITE / "lite" / "files" / "chapters").glob("*.ipynb"))
    han = re.compile(r"[\u4e00-\u9fff]")
    translated = [p.name for p in chapters
                  if len(han.findall("".join("".join(c["source"]) for c in json.loads(p.read_text())["cells"]
                                             if c["cell_type"] == "markdown"))) > 500]
    zh_pages = [p.name.replace(".html", ".ipynb") for p in (ZH / "chapters").glob("*.html")
                if len(han.findall((ZH / "chapters" / p.name).read_text(encoding="utf-8"))) > 2000]
    assert set(zh_pages) <= set(translated), f"chapters translated on the site but not in the lite copy: " \
                                             f"{sorted(set(zh_pages) - set(translated))}"
