"""Chinese glyphs come from the site's own font, at desktop and phone widths.

The glossary and the references quote Chinese (稠密 / 稀疏, 钢与硅, 硬件炼体); on a machine without a CJK font they
rendered as boxes. ``tools/build_cjk_font.py`` subsets WenQuanYi Micro Hei to exactly the book's CJK characters and
``book/site.css`` declares it as "Steel CJK" first in every font stack. Chromium's own report of the fonts it used
for a text (DevTools ``CSS.getPlatformFontsForNode``) says which font drew each glyph; the check is that every CJK
glyph was drawn with the site's web font, loaded from this server.
"""
import re
from urllib.parse import urlparse

import pytest

from .conftest import SCREENSHOTS, SITE, editions

CJK = re.compile(r"[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
WIDTHS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}
PAGES = ["book/glossary.html", "book/references.html"]
#: the zh-CN edition (issue 25): its home page, a translated chapter with explorables, its glossary and a lab — the
#: site's own Chinese (Sphinx's and the theme's labels) and the translations, every glyph from the site's font.
#: The home page is book/intro.html: zh-CN/index.html is only Jupyter Book's meta-refresh to it, and probing that
#: page raced the refresh (CI, stop 37: "Execution context was destroyed, most likely because of a navigation").
if "zh-CN" in editions():
    PAGES += ["zh-CN/book/intro.html", "zh-CN/chapters/03_interconnect.html", "zh-CN/chapters/07_failures.html",
              "zh-CN/book/glossary.html", "zh-CN/book/conventions.html"]
FONT_FILE = "_static/fonts/steel-cjk.woff2"
#: BOOK-STANDARD §8: the CJK web font < 3 MB (a few hundred kB for the whole zh-CN edition's characters)
FONT_BUDGET = 3_000_000

#: mark up to 12 elements whose own text contains Chinese (spread over the page) so DevTools can be asked about them
MARK = r"""(max) => {
  const cjk = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]/;
  const hits = [];
  const walk = document.createTreeWalker(document.querySelector("main") || document.body, NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const el = walk.currentNode.parentElement;
    if (cjk.test(walk.currentNode.data) && el && !hits.includes(el) && el.getClientRects().length) hits.push(el);
  }
  const step = Math.max(1, Math.floor(hits.length / max));
  const picked = hits.filter((_, i) => i % step === 0).slice(0, max);
  picked.forEach((el, i) => el.setAttribute("data-cjk-probe", String(i)));
  return picked.map(el => [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.data).join(""));
}"""


@pytest.mark.parametrize("edition", editions())
def test_the_font_is_built_and_small(edition):
    font = SITE / ("" if edition == "en" else f"{edition}/") / FONT_FILE
    assert font.exists(), f"{FONT_FILE} missing from the built site: make assets builds it (tools/build_cjk_font.py)"
    assert font.read_bytes()[:4] == b"wOF2", "the CJK font is not WOFF2"
    assert font.stat().st_size < FONT_BUDGET, f"the CJK subset is {font.stat().st_size} bytes (budget 3 MB)"
    assert font.read_bytes() == (SITE / FONT_FILE).read_bytes(), "the editions serve different CJK fonts"


def test_the_font_covers_every_character_of_the_zh_edition():
    """Every CJK character on any page of any edition (the text of the built HTML: prose, tables, widget states,
    the theme's own labels) is in the site's font, so no reader's system font draws one."""
    from fontTools.ttLib import TTFont

    with TTFont(str(SITE / FONT_FILE)) as font:
        cmap = font.getBestCmap()
    missing = {}
    for page in SITE.rglob("*.html"):
        if "lite" in page.relative_to(SITE).parts:
            continue
        for c in set(CJK.findall(page.read_text(encoding="utf-8"))) - {"\u3000"}:
            if ord(c) not in cmap:
                missing.setdefault(c, str(page.relative_to(SITE)))
    assert not missing, f"{len(missing)} characters the font lacks, e.g. " + ", ".join(
        f"{c} ({p})" for c, p in sorted(missing.items())[:15])


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("path", PAGES)
def test_chinese_is_drawn_with_the_sites_font(browser, site_url, path, width):
    page = browser.new_page(viewport=WIDTHS[width])
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    try:
        page.goto(f"{site_url}/{path}", wait_until="networkidle")
        page.evaluate("document.fonts.ready.then(() => true)")
        texts = page.evaluate(MARK, 12)
        assert texts, f"no Chinese text found on {path}"
        # 1. the browser has the face loaded and it covers the page's characters
        sample = "".join(sorted(set(CJK.findall("".join(texts)))))
        assert page.evaluate("(s) => document.fonts.check('16px \"Steel CJK\"', s)", sample), \
            f"'Steel CJK' is not loaded for {sample!r} on {path}"
        # 2. it came from this server, and no font came from anywhere else
        fonts = [u for u in requests if re.search(r"\.(woff2?|ttf|otf)(\?|$)", u)]
        assert any(u.endswith(FONT_FILE) and urlparse(u).hostname == "127.0.0.1" for u in fonts), \
            f"{FONT_FILE} was not requested from this site on {path}: {fonts}"
        assert all(urlparse(u).hostname == "127.0.0.1" for u in fonts), f"fonts from another host: {fonts}"
        # 3. every Chinese glyph on the probed elements was drawn with the site's web font
        cdp = page.context.new_cdp_session(page)
        cdp.send("DOM.enable")
        cdp.send("CSS.enable")
        root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
        problems = []
        for i, text in enumerate(texts):
            node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": f'[data-cjk-probe="{i}"]'})["nodeId"]
            used = cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
            custom = sum(f["glyphCount"] for f in used if f["isCustomFont"])
            wanted = len(CJK.findall(text))
            if custom < wanted:
                problems.append(f"{text.strip()[:40]!r}: {wanted} CJK glyphs, {custom} from the web font; "
                                f"fonts used {[(f['familyName'], f['glyphCount']) for f in used]}")
        assert not problems, f"Chinese drawn with the reader's fonts on {path} at {width}: " + "; ".join(problems)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.locator('[data-cjk-probe="0"]').screenshot(
            path=str(SCREENSHOTS / f"cjk-{path.replace('/', '_').removesuffix('.html')}-{width}.png"))
    finally:
        page.close()


def test_references_show_no_tex_leftovers(browser, site_url):
    """A reader sees "$6.9 billion", not "\\$6.9 billion", and a label per source: no two alike."""
    page = browser.new_page(viewport=WIDTHS["desktop"])
    try:
        page.goto(f"{site_url}/book/references.html", wait_until="domcontentloaded")
        entries = page.locator("div.citation p").all_inner_texts()
        labels = page.locator("div.citation span.label").all_inner_texts()
        assert len(entries) > 50
        leftovers = [e[:80] for e in entries if re.search(r"\\|\{|\}", e)]
        assert not leftovers, f"TeX markup shown in references: {leftovers}"
        dupes = sorted({lab for lab in labels if labels.count(lab) > 1})
        assert not dupes, f"two references share a label: {dupes}"
    finally:
        page.close()
