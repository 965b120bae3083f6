"""What a reader of the published site would notice, checked in headless Chromium on every page.

Allow-listed console errors (each with its reason):
- "Got invalid theme mode" — pydata-sphinx-theme on first visit with no stored theme; it resets to auto.
- "THEBE_JS_URL" has already been declared — Jupyter Book 1 emits sphinx-thebe's script twice.
- "processLuminoMessage" — the widget library when a control changes faster than one frame; the display stays right.

Console warnings are collected too, and only one is known (reader review #30): on every page that loads the widget
manager, ajv logs "strict mode: use allowUnionTypes to allow union type keyword at
"#/properties/state/additionalProperties/properties/buffers/items/properties/path/items" (strictTypes)". It stays
because its cause is not ours: @jupyter-widgets/html-manager 1.0.6 (lib/libembed.js) builds its validator with a
bare ``new Ajv()`` — ajv 8, whose strictTypes default only logs — and compiles @jupyter-widgets/schema's v2 state
schema, whose buffer-path items have the union type ["string", "number"]. Both live in the vendored bundle
(_site_assets/widgets/embed-amd.js, copied from node_modules by tools/vendor_assets.py), which holds two copies of
ajv and of the validator, so the warning is printed twice on a page with widgets (the reader's "2 per page"), and
validation still runs (ajv allows the union; it only says so). It goes when the manager passes ``allowUnionTypes``
(or ``strict: false``) upstream; patching the minified bundle here would be worse.
"""
import json
import re
from pathlib import Path
from urllib.parse import urldefrag, urljoin, urlparse

import pytest

from .conftest import EDITION_FOLDERS, SCREENSHOTS, SITE, edition_of, editions, in_edition, site_pages

ALLOWED_ERRORS = [r"processLuminoMessage"]   # the widget manager's harmless message on static pages
# the one known console warning (see the module docstring): at most once per copy of the validator in the bundle
KNOWN_WARNING_COPIES = 2
KNOWN_WARNINGS = [r"^strict mode: use allowUnionTypes to allow union type keyword at "
                  r"\"#/properties/state/additionalProperties/properties/buffers/items/properties/path/items\" "
                  r"\(strictTypes\)$"]
PAGES = site_pages()                     # both editions' pages: the zh-CN ones as zh-CN/…
CHAPTERS = [p for p in PAGES if in_edition(p).startswith("chapters/")]
EDITIONS = editions()
PHONE, DESKTOP = {"width": 390, "height": 844}, {"width": 1280, "height": 900}
REPORTS = SCREENSHOTS.parent / "reports"
# bytes of HTML (embedded widget state included). Issue 28's mechanism explorables took the heaviest page to 4.6 MB;
# the static payload was then thinned (views share one layout and style model, identical views are one model, view
# blocks styled by classes, compact SVG) and chapter 4 is 2.75 MB again, under the original 3 MB.
HEAVIEST_PAGE_BUDGET = 3_000_000
HEAVIEST_PAGE_GZIP_BUDGET = 500_000  # what a phone downloads for that page


def open_page(browser, url, viewport=DESKTOP):
    page = browser.new_page(viewport=viewport)
    log = {"errors": [], "warnings": [], "requests": [], "failed": []}
    page.on("console", lambda m: m.type == "error" and log["errors"].append(m.text))
    page.on("console", lambda m: m.type == "warning" and log["warnings"].append(m.text))
    page.on("pageerror", lambda e: log["errors"].append(f"pageerror: {e}"))
    page.on("request", lambda r: log["requests"].append(r.url))
    page.on("response", lambda r: r.status >= 400 and log["failed"].append(f"{r.status} {r.url}"))
    page.goto(url, wait_until="networkidle")
    page.wait_for_timeout(300)
    return page, log


@pytest.mark.parametrize("edition", EDITIONS)
def test_site_has_every_chapter_in_the_toc(edition):
    toc = (SITE.parent.parent / "_toc.yml").read_text()
    listed = re.findall(r"^\s*- file: (\S+)", toc, flags=re.M)
    assert [f for f in listed if f.startswith("chapters/")], "no chapter in _toc.yml"
    for ch in listed:
        assert (SITE / EDITION_FOLDERS[edition] / f"{ch}.html").exists(), \
            f"{ch} is in the toc but was not built in the {edition} edition"


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_clean_and_self_contained(browser, site_url, path):
    page, log = open_page(browser, f"{site_url}/{path}")
    try:
        name = path.replace("/", "_").removesuffix(".html")
        if path in CHAPTERS:        # first move every control: what it loads lazily must also come from this site
            exercised = exercise_explorables(page, path)
            REPORTS.mkdir(parents=True, exist_ok=True)
            (REPORTS / f"controls-{name}.txt").write_text(f"{exercised}\n")
        # every font any stylesheet declares (widget icons load theirs lazily): load them all now, from this site
        fonts = page.evaluate("Promise.all([...document.fonts].map(f => f.load().then(() => 'ok', () => f.family)))")
        page.wait_for_load_state("networkidle")
        assert all(f == "ok" for f in fonts), f"fonts that failed to load on {path}: {set(fonts) - {'ok'}}"
        errors = [e for e in log["errors"] if not any(re.search(a, e) for a in ALLOWED_ERRORS)]
        assert not errors, f"console errors on {path}: {errors}"
        unknown = [w for w in log["warnings"] if not any(re.search(k, w) for k in KNOWN_WARNINGS)]
        assert not unknown, f"console warnings on {path}: {unknown}"
        repeated = [k for k in KNOWN_WARNINGS
                    if sum(bool(re.search(k, w)) for w in log["warnings"]) > KNOWN_WARNING_COPIES]
        assert not repeated, f"{path}: the known ajv warning, more often than the bundle has validators: " \
                             f"{log['warnings']}"
        outside = [u for u in log["requests"] if not u.startswith((site_url, "data:", "blob:"))]
        assert not outside, f"{path} requested other hosts: {outside}"
        assert not log["failed"], f"{path} had failed requests: {log['failed']}"
        broken = page.evaluate("[...document.images].filter(i => !i.complete || i.naturalWidth === 0)"
                               ".map(i => i.src)")
        assert not broken, f"broken images on {path}: {broken}"
        alts = page.evaluate("[...document.images].map(i => [i.getAttribute('alt') || '', i.src])")
        for alt, src in alts:
            name = Path(urlparse(src).path).name
            assert alt.strip() and alt.strip() != name and not re.fullmatch(r"[\w.-]+\.(png|svg|jpe?g)", alt), \
                f"image without meaningful alt text on {path}: {src} (alt={alt!r})"
        unlabeled = page.evaluate("[...document.querySelectorAll('article.bd-article svg[role=img]')]"
                                  ".filter(s => !(s.getAttribute('aria-label') || '').trim()).length")
        assert unlabeled == 0, f"{unlabeled} charts without aria-label on {path}"
        math = page.evaluate("document.querySelectorAll('.math').length")
        if math:
            page.wait_for_function("document.querySelectorAll('mjx-container').length > 0", timeout=10_000)
        raw = page.evaluate(r"""(() => { const t = document.querySelector('main, article, body').innerText;
                                 return (t.match(/\$\$|\\\(|\\\[|\{glue|\{cite|\{doc\}|\{term\}/g) || []).length })()""")
        assert raw == 0, f"{path} shows raw math or unprocessed roles ({raw} occurrences)"
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / f"{name}-desktop.png"))
    finally:
        page.close()


def visible_text(handle):
    return handle.evaluate("e => e.innerText")


def controls_of(box):
    return (box.query_selector_all("select"), box.query_selector_all(".noUi-handle"),
            box.query_selector_all(".widget-toggle-buttons"))


def exercise_explorables(page, path):
    """Move every control of every explorable on the page; each must change what is displayed.

    Each control is tried from the page's initial state (the previous control is put back first), so one control's
    dead end (e.g. a precision the chosen chip lacks) does not hide another's effect. Returns the number of
    controls exercised.
    """
    exercised = 0
    try:   # the widget manager renders after the network is idle; on a busy machine that can take a few seconds
        page.wait_for_selector(".widget-subarea > .widget-vbox", timeout=20_000)
    except Exception:
        pass
    boxes = page.query_selector_all(".widget-subarea > .widget-vbox")
    assert boxes, f"{path} has no explorable"
    for i, box in enumerate(boxes):
        selects, handles, toggles = controls_of(box)
        assert selects or handles or toggles, f"explorable {i} on {path} has no control"
        for sel in selects:
            before, n = visible_text(box), sel.evaluate("s => s.options.length")
            current = sel.evaluate("s => s.selectedIndex")
            changed = False
            for k in [j for j in range(n) if j != current]:
                sel.select_option(index=k)
                page.wait_for_timeout(60)
                if visible_text(box) != before:
                    changed = True
                    break
            sel.select_option(index=current)
            page.wait_for_timeout(60)
            assert changed, f"drop-down in explorable {i} on {path} never changes the display"
            exercised += 1
        for handle in handles:
            before = visible_text(box)
            handle.focus()
            changed, moved = False, 0
            for key in ["ArrowRight"] * 3 + ["ArrowLeft"] * 6:
                page.keyboard.press(key)
                moved += 1 if key == "ArrowRight" else -1
                page.wait_for_timeout(60)
                if visible_text(box) != before:
                    changed = True
                    break
            for _ in range(abs(moved)):
                page.keyboard.press("ArrowLeft" if moved > 0 else "ArrowRight")
                page.wait_for_timeout(60)
            assert changed, f"slider in explorable {i} on {path} never changes the display"
            exercised += 1
        for group in toggles:
            before = visible_text(box)
            buttons = group.query_selector_all("button")
            active = [b for b in buttons if "mod-active" in (b.get_attribute("class") or "")]
            changed = False
            for b in buttons:
                b.click()
                page.wait_for_timeout(60)
                if visible_text(box) != before:
                    changed = True
                    break
            if active:
                active[0].click()
                page.wait_for_timeout(60)
            assert changed, f"toggle in explorable {i} on {path} never changes the display"
            exercised += 1
    return exercised


@pytest.mark.parametrize("path", CHAPTERS + [EDITION_FOLDERS[e] + "book/intro.html" for e in EDITIONS])
def test_screenshots_and_no_overflow_on_phone(browser, site_url, path):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    name = path.replace("/", "_").removesuffix(".html")
    for label, viewport in (("phone", PHONE),):
        page, _ = open_page(browser, f"{site_url}/{path}", viewport)
        try:
            page.screenshot(path=str(SCREENSHOTS / f"{name}-{label}.png"), full_page=False)
            if label == "phone":
                for i, box in enumerate(page.query_selector_all(".widget-subarea")[:4]):
                    box.scroll_into_view_if_needed()
                    box.screenshot(path=str(SCREENSHOTS / f"{name}-phone-explorable{i}.png"))
                overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
                assert overflow <= 1, f"{path} scrolls sideways by {overflow}px at phone width"
                wide = page.evaluate("""[...document.querySelectorAll('article.bd-article *')].filter(e => {
                    if (e.getBoundingClientRect().right <= window.innerWidth + 1) return false;
                    for (let a = e.parentElement; a && a !== document.body; a = a.parentElement) {
                        const o = getComputedStyle(a).overflowX;
                        if (o === 'auto' || o === 'scroll' || o === 'hidden') return false;   // scrolls inside its box
                    }
                    return true;
                }).map(e => e.tagName + '.' + (e.getAttribute('class') || '')).slice(0, 5)""")
                assert not wide, f"{path}: elements stick out at phone width: {wide}"
                split = page.evaluate("""[...document.querySelectorAll('article.bd-article .cc-nobr')]
                    .filter(e => new Set([...e.getClientRects()].map(r => Math.round(r.top))).size > 1)   // lines
                    .map(e => e.textContent).slice(0, 5)""")
                assert not split, f"{path}: a number parted from its percent sign at phone width: {split}"
        finally:
            page.close()


def test_internal_links_resolve(browser, site_url):
    import urllib.request

    seen, bad, anchors_cache, lite_links = set(), [], {}, []
    page = browser.new_page()
    try:
        for path in PAGES:
            page.goto(f"{site_url}/{path}", wait_until="domcontentloaded")
            for href in page.evaluate("[...document.querySelectorAll('a[href]')].map(a => a.href)"):
                if not href.startswith(site_url) or href in seen:
                    continue
                seen.add(href)
                target, frag = urldefrag(href)
                lite = re.search(r"^(.*?)/lite/(lab|notebooks)/index\.html\?path=", target)
                if lite:                                   # JupyterLite: the notebook must be in the edition's lite
                    lite_links.append(target)              # site (zh-CN/lite for the zh-CN pages)
                    nb = target.split("path=", 1)[1]
                    folder = lite.group(1).removeprefix(site_url).strip("/")
                    if not (SITE / folder / "lite" / "files" / nb).exists():
                        bad.append(f"{href} (from {path}): {nb} is not in the JupyterLite site {folder}/lite")
                try:
                    with urllib.request.urlopen(target) as r:
                        body = r.read().decode("utf-8", "replace") if target.endswith((".html", "/")) else ""
                except Exception as exc:           # noqa: BLE001 - report every failure
                    bad.append(f"{href} (from {path}): {exc}")
                    continue
                if frag and body and not re.search(rf'id="{re.escape(frag)}"', body):
                    bad.append(f"{href} (from {path}): no element with id {frag!r}")
    finally:
        page.close()
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "links_crawled.txt").write_text(f"{len(seen)}\n")
    assert len(seen) > 20
    assert not bad, "broken internal links:\n" + "\n".join(bad[:20])
    # every chapter's "Run this chapter" opens it in JupyterLite's notebook interface (one document, usable on a phone)
    for edition in EDITIONS:
        folder = EDITION_FOLDERS[edition]
        opened = {t.split("path=", 1)[1] for t in lite_links
                  if t.removeprefix(site_url + "/").startswith(folder + "lite/notebooks/index.html")}
        chapters = {f"chapters/{p.stem}.ipynb" for p in (SITE / folder / "chapters").glob("[0-9][0-9]_*.html")}
        assert chapters <= opened, f"{edition}: chapters without a JupyterLite notebook link: {sorted(chapters - opened)}"


def test_search_finds_a_chapter_by_a_term_it_teaches(browser, site_url):
    page, _ = open_page(browser, f"{site_url}/search.html?q=roofline")
    try:
        page.wait_for_selector("#search-results li a", timeout=15_000)
        hrefs = page.evaluate("[...document.querySelectorAll('#search-results li a')].map(a => a.href)")
        assert any("chapters/01_h100" in h for h in hrefs), hrefs
    finally:
        page.close()


#: Chinese queries and a page each must find: terms of the glossary (the term base), which jieba splits apart
#: unless the index knows them (tools/i18n.py search_terms), and a term the translated chapters use
ZH_QUERIES = {"显存": "book/glossary", "张量并行": "book/glossary"}


@pytest.mark.skipif("zh-CN" not in EDITIONS, reason="the zh-CN edition is not built")
@pytest.mark.parametrize("query", ZH_QUERIES)
def test_chinese_search_finds_pages(browser, site_url, query):
    """Sphinx's Chinese search (jieba splits the words when the index is built) finds pages in the zh-CN edition,
    and only there: every result is a zh-CN page."""
    page, _ = open_page(browser, f"{site_url}/zh-CN/search.html?q={query}")
    try:
        page.wait_for_selector("#search-results li a", timeout=15_000)
        hrefs = page.evaluate("[...document.querySelectorAll('#search-results li a')].map(a => a.href)")
    finally:
        page.close()
    assert any(ZH_QUERIES[query] in h for h in hrefs), (query, hrefs)
    assert all("/zh-CN/" in h for h in hrefs), hrefs


def test_site_size_report():
    """Report the site's size; keep every page light enough to open on a phone (compressed, as servers send it)."""
    import gzip

    files = [p for p in SITE.rglob("*") if p.is_file()]
    # the whole-book downloads (steel-and-silicon.pdf/.epub) have their own budgets in tests/test_pdf.py
    book = [p for p in files if "lite" not in p.relative_to(SITE).parts and not p.name.startswith("steel-and-silicon.")]
    total, book_total = (sum(p.stat().st_size for p in fs) for fs in (files, book))
    # each edition's pages, without its JupyterLite copy and downloads: the budget holds per edition
    per_edition = {e: sum(p.stat().st_size for p in book if edition_of(str(p.relative_to(SITE))) == e)
                   for e in EDITIONS}
    pages = {str(p.relative_to(SITE)): p.stat().st_size for p in SITE.rglob("*.html") if p in set(book)}
    heaviest = max(pages, key=pages.get)
    gz = len(gzip.compress((SITE / heaviest).read_bytes(), 6))
    report = {"total_bytes": total, "book_bytes": book_total, "lite_bytes": total - book_total, "files": len(files),
              "pages": len(pages), "heaviest_page": heaviest, "heaviest_page_bytes": pages[heaviest],
              "heaviest_page_gzip_bytes": gz, "edition_bytes": per_edition}
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "site_report.json").write_text(json.dumps(report, indent=1))
    assert gz < HEAVIEST_PAGE_GZIP_BUDGET, f"{heaviest} is {gz / 1e3:.0f} kB compressed"
    # the zh-CN pages hold the same views with their words in Chinese, three bytes a character in UTF-8 against one
    # for Latin text: their raw budget is 10 % larger (what a reader downloads, the gzip budget above, is the same);
    # to thin chapter 4's zh payload back under 3 MB is open work
    for page, size in pages.items():
        budget = HEAVIEST_PAGE_BUDGET * (1.1 if edition_of(page) == "zh-CN" else 1.0)
        assert size < budget, f"{page} is {size / 1e6:.1f} MB"
    for edition, size in per_edition.items():    # English 40.7 MB once issue 28's explorables were thinned
        assert size < 50e6, f"the {edition} edition (without JupyterLite) is {size / 1e6:.0f} MB"


# --- what a reader sees (issue 14): legible charts, nothing cut off, no bookkeeping or Python reprs ---------------
CHART_TEXT_MIN_PX = {"desktop": 12.0, "phone": 11.0}
#: patterns of Python output a reader should never see in a rendered cell output
REPR_PATTERNS = {
    "NaN": r"\bNaN\b",
    "None": r"\bNone\b",
    "Ellipsis": r"\bEllipsis\b",
    "record repr": r"\b[A-Z]\w*\((?:[a-z_]\w*=)",                          # FailureStep(per_gpu_rate=…
    "dict repr": r"\{\s*(?:-?\d[\d.e+-]*|'[^']*'|\"[^\"]*\")\s*:\s",        # {0.3: 0.3, …} / {'a': …
    "tuple output": r"(?m)^\s*\(\s*-?[\w.'\"+-]+,\s*-?[\w.'\"+-]+[^\n]*\)\s*$",  # (1, 2) printed as output
    "list output": r"(?m)^\s*\[\s*-?[\d.e+-]+,\s*-?[\d.e+-]+[^\n]*\]\s*$",
    "object repr": r"<[\w.]+ (?:object at 0x|size \d+x\d+ with \d+ Axes>)|<Figure size",
}
#: ancestors that scroll a wide table sideways on purpose (a cell in one may be wider than the screen)
SCROLL_WRAPPERS = ".cc-table-wrap, .pst-scrollable-table-container, .table-wrapper"

READER_JS = r"""([minPx, wrappers]) => {
  const article = document.querySelector('article.bd-article') || document.body;
  const visible = e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0;
  const where = e => { const box = e.closest('.widget-subarea, table, figure'); return box ? box.className || box.tagName : ''; };
  // 1. text inside explorable charts and static chart-system figures (issue 28): computed size × the SVG's scale
  const small = [];
  let smallest = null;
  for (const t of article.querySelectorAll('.widget-subarea svg text, .cell_output figure.cc-chart svg text')) {
    if (!visible(t) || !t.textContent.trim()) continue;
    const m = t.getScreenCTM();
    if (!m) continue;
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    if (smallest === null || px < smallest) smallest = px;
    if (px < minPx - 0.05) small.push(`${px.toFixed(1)} px "${t.textContent.trim().slice(0, 30)}"`);
  }
  for (const t of article.querySelectorAll('.widget-subarea .cc-legend li, .widget-subarea figure figcaption, '
                                           + '.cell_output figure.cc-chart .cc-legend li, '
                                           + '.cell_output figure.cc-chart > figcaption')) {
    if (!visible(t)) continue;
    const px = parseFloat(getComputedStyle(t).fontSize);
    if (px < minPx - 0.05) small.push(`${px.toFixed(1)} px legend "${t.textContent.trim().slice(0, 30)}"`);
  }
  // 2. text cut off in its own box: table cells, control labels, readouts, toggle buttons
  const cut = [];
  const sel = 'td, th, caption, .widget-label, .widget-readout, .widget-toggle-button, .cc-legend li';
  for (const e of article.querySelectorAll(sel)) {
    if (!visible(e) || !e.textContent.trim() || e.closest(wrappers)) continue;
    const text = e.textContent.trim(), name = `${e.tagName.toLowerCase()}.${(e.className || '').toString().split(' ').pop()}`;
    if (e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0)
      cut.push(`${name} "${text.slice(0, 40)}" (${e.scrollWidth} > ${e.clientWidth} px)`);
    else if (/\S(\.\.\.|…)$/.test(text) && /^t[dh]$/i.test(e.tagName))     // pandas' max_colwidth cut
      cut.push(`${name} "…${text.slice(-40)}" (truncated text)`);
  }
  // 3. rendered outputs (cells and explorables), and 4. the page's text
  const outputs = [...article.querySelectorAll('.cell_output')].filter(visible).map(e => e.innerText);
  // 5. static figures not yet drawn by the chart system (matplotlib PNG or SVG; issue 28): how much each is shrunk
  //    (displayed / natural width; its 10 pt text renders at about 13.3 px × that) and, for an inline SVG, its
  //    smallest text on screen
  const legacy = [];
  for (const f of article.querySelectorAll('.cell_output img, .cell_output svg')) {
    if (!visible(f) || f.closest('.cc-chart, .widget-subarea') || (f.tagName.toLowerCase() === 'svg'
        && f.parentElement && f.parentElement.closest('svg'))) continue;
    const fig = f.closest('figure'), id = fig && fig.id ? fig.id : '';
    const shown = f.getBoundingClientRect().width;
    if (f.tagName.toLowerCase() === 'img') {
      const kind = (f.currentSrc || f.src).split(/[?#]/)[0].split('.').pop().toLowerCase();
      if (f.naturalWidth) legacy.push({figure: id, kind, scale: +(shown / f.naturalWidth).toFixed(3)});
      continue;
    }
    let least = null;
    for (const t of f.querySelectorAll('text')) {
      const m = t.getScreenCTM();
      if (!m || !t.textContent.trim()) continue;
      const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
      if (least === null || px < least) least = px;
    }
    legacy.push({figure: id, kind: 'svg', smallest_text_px: least === null ? null : +least.toFixed(2)});
  }
  return {smallest, small, cut, outputs, legacy, text: article.innerText};
}"""


def _reader_findings(page, label):
    if page.query_selector('script[type="application/vnd.jupyter.widget-view+json"]'):
        try:
            page.wait_for_selector(".widget-subarea > .widget-vbox", timeout=20_000)
            page.wait_for_timeout(300)
        except Exception:
            pass
    r = page.evaluate(READER_JS, [CHART_TEXT_MIN_PX[label], SCROLL_WRAPPERS])
    found = {}
    if r["small"]:
        found[f"chart text < {CHART_TEXT_MIN_PX[label]:g} px at {label}"] = r["small"]
    if r["cut"]:
        found[f"text cut off at {label}"] = r["cut"]
    if label == "desktop":
        for name, pattern in REPR_PATTERNS.items():
            hits = [m.group(0)[:60] for out in r["outputs"] for m in re.finditer(pattern, out)]
            if hits:
                found[f"{name} in outputs"] = hits
        glue = re.findall(r"[^\n]{0,30}\bglue\([^\n]{0,30}", r["text"])
        if glue:
            found["glue( visible"] = glue
    return found, r["smallest"], r["legacy"]


@pytest.mark.parametrize("path", PAGES)
def test_what_the_reader_sees(browser, site_url, path):
    """Issue 14 at 1280 and 390 px: text in every explorable chart and every static chart-system figure (issue 28)
    ≥ 12 px (desktop) / ≥ 11 px (phone), its key and title too; no table
    cell, control label, readout or button whose text is cut off (unless inside a table's horizontal-scroll
    wrapper); no NaN, None, Ellipsis or Python repr (record, dict, tuple, list, object) in any rendered output; no
    ``glue(`` anywhere on the page."""
    findings, smallest, legacy = {}, {}, {}
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        page, _ = open_page(browser, f"{site_url}/{path}", viewport)
        try:
            found, smallest[label], legacy[label] = _reader_findings(page, label)
            findings.update(found)
        finally:
            page.close()
    REPORTS.mkdir(parents=True, exist_ok=True)
    name = path.replace("/", "_").removesuffix(".html")
    # matplotlib figures still to redraw (issue 28) are reported, not asserted: the chart-system ones are asserted
    (REPORTS / f"reader-{name}.json").write_text(json.dumps({"smallest_chart_text_px": smallest,
                                                             "findings": findings,
                                                             "static_figures_not_yet_chart_system": legacy},
                                                            indent=1, ensure_ascii=False))
    assert not findings, f"{path}: " + "; ".join(f"{k}: {len(v)} (e.g. {v[:3]})" for k, v in findings.items())


@pytest.mark.parametrize("edition", EDITIONS)
def test_lite_copies_carry_the_sites_exercise_numbers_and_no_raw_myst(edition):
    """The JupyterLite copy of each chapter (tools/lab_book.LiteRenderer) numbers its exercises as the website does
    (sphinx-exercise counts across the book: "Exercise 3", 练习 3 in the zh-CN edition) and shows none of the MyST
    the website renders."""
    lite = SITE / EDITION_FOLDERS[edition] / "lite" / "files" / "chapters"
    chapters = sorted((SITE / EDITION_FOLDERS[edition] / "chapters").glob("[0-9][0-9]_*.html"))
    assert chapters and lite.is_dir(), f"no built chapters or lite copies under {SITE}"
    raw = re.compile(r"\{(?:glue|term|cite|doc)[\w:]*\}`|^(?:`{3,}|:{3,})\{\w+\}|^\([\w:-]+\)=", re.M)
    for page in chapters:
        site_numbers = [int(n) for n in re.findall(
            r'class="exercise admonition"[^>]*>\s*<p class="admonition-title"><span class="caption-number">'
            r'(?:Exercise|练习) (\d+)', page.read_text(encoding="utf-8"))]
        nb = json.loads((lite / f"{page.stem}.ipynb").read_text(encoding="utf-8"))
        prose = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
        lite_numbers = [int(n) for n in re.findall(r"^\*\*(?:Exercise|练习) (\d+)", prose, re.M)]
        assert site_numbers, f"{page.name}: no numbered exercise found on the website page"
        assert lite_numbers == site_numbers, f"{page.stem}: lite exercises {lite_numbers}, website {site_numbers}"
        assert not raw.findall(prose), f"{page.stem}: raw MyST in the lite copy: {sorted(set(raw.findall(prose)))[:5]}"


@pytest.mark.parametrize("edition", EDITIONS)
def test_glued_percentages_are_spaced_as_the_prose(edition):
    """A glued percentage reads "50 %" like the rest of the book (book/_ext/steel_glue.py), not Python's "50%"."""
    pages = sorted((SITE / EDITION_FOLDERS[edition] / "chapters").glob("[0-9][0-9]_*.html"))
    assert pages, f"no built chapters under {SITE}"
    unwrapped = {p: NOBR.sub(r"\1", p.read_text(encoding="utf-8")) for p in pages}     # "28 %" kept whole: its text
    glued = {p.stem: re.findall(r'class="pasted-text">([^<]*%)<', html) for p, html in unwrapped.items()}
    assert sum(map(len, glued.values())) > 50, "expected the chapters' glued percentages on the pages"
    unspaced = {k: [t for t in v if re.search(r"\d%", t)] for k, v in glued.items()}
    assert not any(unspaced.values()), {k: v[:3] for k, v in unspaced.items() if v}


#: steel_glue's wrapper around a number and its percent sign
NOBR = re.compile(r'<span class="cc-nobr">([^<]*)</span>')


@pytest.mark.parametrize("edition", EDITIONS)
def test_no_number_in_the_prose_is_parted_from_its_percent_sign(edition):
    """The book writes "28 %" with a space, where a browser may break a line: book/_ext/steel_glue.py wraps every
    "number %" of the prose, glued or written, in .cc-nobr (nowrap in book/site.css), and chipchain.tables does the
    same in its tables. None is left bare in a chapter's prose or tables (code, mathematics and other cell outputs
    aside); the phone test checks that none is drawn on two lines."""
    from bs4 import BeautifulSoup
    pages = sorted((SITE / EDITION_FOLDERS[edition] / "chapters").glob("[0-9][0-9]_*.html"))
    assert pages, f"no built chapters under {SITE}"
    bare, wrapped = {}, 0
    for p in pages:
        article = BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser").select_one("article.bd-article")
        wrapped += len(article.select("span.cc-nobr"))
        for s in article.find_all(string=re.compile(r"\d %")):
            in_table = s.find_parent(class_=("cc-table-wrap", "cc-table-notes"))
            if s.find_parent(["code", "pre", "script", "style", "svg"]) or any(
                    s.find_parent(class_=c) for c in ("math", "cc-nobr")) or (
                    s.find_parent(class_="cell_output") and not in_table):
                continue
            bare.setdefault(p.stem, []).append(str(s)[:80])
        for s in article.find_all(string=re.compile(r"^ %")):          # {glue:text}`key:.0f` % — number pasted apart
            before = s.previous_sibling
            if (getattr(before, "get", None) and "pasted-text" in before.get("class", [])
                    and before.get_text()[-1:].isdigit() and not s.find_parent(class_="cc-nobr")):
                bare.setdefault(p.stem, []).append(before.get_text() + str(s)[:40])
    assert wrapped > 300, f"only {wrapped} wrapped percentages in the {edition} chapters"
    assert not bare, {k: v[:3] for k, v in bare.items()}
