"""The site shows results, code on request (issue 28 item 3; reader's pass, findings 18, 19, 31 and 32), in Chromium:

- on every chapter and lab page, every code cell's source is collapsed under a visible "Show code" control except
  the cells tagged ``lesson``; the control reveals the code, and an explorable still responds afterwards with its
  width unchanged (opening the code moves it down; nothing inside it shifts);
- at 390 px, every table wider than its column — cc-tables and markdown tables alike — sits in a scrolling wrapper
  that shows the scroll cue (the edge shadow);
- a slider handle offers a 44 px touch target at 390 px;
- the chain map shows chapter 14 and the labs, and its text is 11 px or more at 390 px.
"""
import pytest

from .conftest import SCREENSHOTS, in_edition, site_pages
from .test_site import DESKTOP, PHONE, open_page

PAGES = site_pages()                     # both editions (zh-CN/… for the Chinese)
READING = [p for p in PAGES if in_edition(p).startswith(("chapters/", "labs/"))]

CODE_JS = r"""() => {
  const article = document.querySelector('article.bd-article');
  const visible = e => e.checkVisibility ? e.checkVisibility() : e.getClientRects().length > 0;
  const out = {collapsed: 0, lesson: 0, open: [], controls: 0};
  for (const cell of article.querySelectorAll('div.cell')) {
    const input = cell.querySelector('.cell_input');
    if (!input) continue;
    const details = input.closest('details.hide.above-input');
    if (cell.classList.contains('tag_lesson')) { out.lesson += 1; if (!visible(input)) out.open.push('lesson hidden'); continue; }
    if (!details || details.open || visible(input)) { out.open.push(input.innerText.slice(0, 60)); continue; }
    out.collapsed += 1;
    const summary = details.querySelector('summary');
    if (summary && visible(summary) && /Show code|显示代码/.test(summary.innerText)) out.controls += 1;
  }
  return out;
}"""


@pytest.mark.parametrize("path", READING)
def test_code_is_collapsed_behind_show_code_except_lessons(browser, site_url, path):
    page, _ = open_page(browser, f"{site_url}/{path}")
    try:
        r = page.evaluate(CODE_JS)
    finally:
        page.close()
    assert not r["open"], f"{path}: code shown that is not a lesson: {r['open'][:3]}"
    assert r["collapsed"] > 0 and r["controls"] == r["collapsed"], r


def test_show_code_reveals_the_code_and_the_explorable_still_responds(browser, site_url):
    page, _ = open_page(browser, f"{site_url}/chapters/07_failures.html")
    try:
        page.wait_for_selector(".widget-subarea .noUi-handle", state="attached", timeout=60_000)
        cell = page.locator("div.cell", has=page.locator(".widget-subarea .noUi-handle")).first
        cell.scroll_into_view_if_needed()
        widget = cell.locator(".widget-subarea").first
        code = cell.locator(".cell_input")
        assert not code.is_visible(), "the explorer's code is shown before it is asked for"
        before = widget.bounding_box()
        cell.locator("details.hide.above-input > summary").click()
        page.wait_for_timeout(200)
        assert code.is_visible() and code.inner_text().strip(), "Show code did not reveal the code"
        after = widget.bounding_box()
        assert after["width"] == pytest.approx(before["width"], abs=1), "the explorer changed width"
        assert after["y"] > before["y"], "the code did not open above the explorer"
        shown = "el => [...el.querySelectorAll('.widget-html-content')].map(e => e.innerText).join('|')"
        text = widget.evaluate(shown)                  # the explorer's result, not the slider's own readout
        handle = widget.locator(".noUi-handle").first
        handle.focus()
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(f"([el, t]) => ({shown})(el) !== t", arg=[widget.element_handle(), text],
                               timeout=10_000)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "presentation-show-code.png"))
    finally:
        page.close()


TABLES_JS = r"""() => {
  const article = document.querySelector('article.bd-article');
  const width = article.clientWidth, bad = [];
  let wide = 0;
  for (const t of article.querySelectorAll('table')) {
    if (t.closest('.widget-subarea') && !t.getClientRects().length) continue;
    const wrap = t.closest('.cc-table-wrap, .pst-scrollable-table-container');
    const over = t.getBoundingClientRect().width > (wrap ? wrap.clientWidth : width) + 1;
    if (!over) continue;
    wide += 1;
    const name = (t.querySelector('caption') || t).innerText.trim().slice(0, 50);
    if (!wrap) { bad.push(`no scroll wrapper: ${name}`); continue; }
    const s = getComputedStyle(wrap);
    if (!/auto|scroll/.test(s.overflowX)) bad.push(`wrapper does not scroll: ${name}`);
    if (!/radial-gradient/.test(s.backgroundImage)) bad.push(`no scroll cue: ${name}`);
  }
  return {wide, bad};
}"""


@pytest.mark.parametrize("path", PAGES)
def test_every_wide_table_has_the_scroll_cue_at_390(browser, site_url, path):
    page, _ = open_page(browser, f"{site_url}/{path}", PHONE)
    try:
        r = page.evaluate(TABLES_JS)
    finally:
        page.close()
    assert not r["bad"], f"{path}: {r['bad'][:5]}"


def test_markdown_tables_scroll_with_the_cue_on_the_conventions_page(browser, site_url):
    page, _ = open_page(browser, f"{site_url}/book/conventions.html", PHONE)
    try:
        r = page.evaluate(TABLES_JS)
        assert r["wide"] >= 1 and not r["bad"], r        # the conventions page's symbol table overflows at 390
    finally:
        page.close()


def test_slider_handles_have_a_44px_touch_target_at_390(browser, site_url):
    page, _ = open_page(browser, f"{site_url}/chapters/07_failures.html", PHONE)
    try:
        page.wait_for_selector(".widget-subarea .noUi-handle", state="attached", timeout=60_000)
        r = page.evaluate("""() => {
          const h = document.querySelector('.widget-subarea .noUi-handle');
          h.scrollIntoView({block: 'center'});
          const b = h.getBoundingClientRect(), before = getComputedStyle(h, '::before');
          const cx = b.left + b.width / 2, cy = b.top + b.height / 2;
          const hit = [[0, -18], [0, 18], [-18, 0], [18, 0]].map(([dx, dy]) => {
            const e = document.elementFromPoint(cx + dx, cy + dy); return !!e && (e === h || h.contains(e)); });
          return {w: parseFloat(before.width), h: parseFloat(before.height), look: [b.width, b.height], hit};
        }""")
        assert r["w"] >= 44 and r["h"] >= 44, r
        assert all(r["hit"]), f"a touch 18 px from the handle's centre misses it: {r}"
        assert r["look"][1] <= 24, f"the handle itself grew: {r}"      # the look stays the theme's small handle
    finally:
        page.close()


@pytest.mark.parametrize("label, viewport", [("desktop", DESKTOP), ("phone", PHONE)])
def test_chain_map_has_chapter_14_and_the_labs_and_legible_text(browser, site_url, label, viewport):
    page, _ = open_page(browser, f"{site_url}/book/chain_map.html", viewport)
    try:
        r = page.evaluate("""() => {
          const m = [...document.querySelectorAll('.chain-map')].find(e => e.offsetParent);
          const sizes = [...m.querySelectorAll('svg text')].map(t => {
            const c = t.getScreenCTM(); return parseFloat(getComputedStyle(t).fontSize) * Math.hypot(c.a, c.b); });
          const hrefs = [...m.querySelectorAll('a.chain-map-link')].map(a => a.getAttribute('href'));
          return {cls: m.className, smallest: Math.min(...sizes), hrefs,
                  cut: [...m.querySelectorAll('svg text')].some(t => t.textContent.includes('…'))};
        }""")
        page.screenshot(path=str(SCREENSHOTS / f"chain_map-{label}.png"), full_page=True)
    finally:
        page.close()
    assert ("narrow" in r["cls"]) == (label == "phone"), r["cls"]
    assert r["smallest"] >= (12 if label == "desktop" else 11) - 0.3, r["smallest"]
    assert "../chapters/14_calibration.html" in r["hrefs"] and "../chapters/05_flashattention.html" in r["hrefs"]
    assert {f"../labs/{n}.html" for n in ("L1_collectives", "L2_sharding", "L3_activations", "L4_resume")} \
        <= set(r["hrefs"])
    assert not r["cut"]
