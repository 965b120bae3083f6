"""Every chapter runs to the end in the built JupyterLite site, in headless Chromium, served by 127.0.0.1 alone.

For each chapter, in a fresh browser context (cold cache: a reader's first start), the test opens the notebook where
the chapter's "Run this chapter" link leads — JupyterLite's notebook interface (``notebooks/index.html?path=…``) in the
lite site that ``make book`` writes to ``_build/html/lite`` (or ``LITE_SITE``) — runs every cell through the menus
(*Run → Run All Cells*: JupyterLite 0.6 exposes no ``window.jupyterapp``) and waits until every code cell whose input
shows has an execution count and the kernel shows idle. It then requires:

- no error and no stderr output in any cell;
- prose rendered for the reader: no MyST role, directive or label shown raw, glossary terms with their definition
  on hover; and, when the chapter opens, its stored figures shown, not "<Figure size … with 1 Axes>";
- as many live explorables as the committed chapter has, each answering one of its controls (a drop-down, a slider
  or a toggle) with a new view computed by the browser's kernel;
- no request for anything but the site: every request Playwright sees goes to 127.0.0.1, the site itself answered
  the Pyodide runtime and lock, and Chromium's resolver is told that no other host exists, so a request from
  anywhere in the browser (a worker included) would fail rather than reach out.

The time from *Run All* to the first finished cell (the kernel's start — the Pyodide download and every package —
and the install cell) and to the end of each chapter go to ``_build/reports/lite_runs/<chapter>.json`` and, with the
lite site's size, to ``_build/reports/lite_report.json`` and the site report, ``_build/reports/site_report.json``.

A kernel that dies fails the test at once, and one that stalls fails after ``STALL_S`` without a finished cell
(``START_TIMEOUT_S`` for the first), naming the cell it was running; each chapter gets a fresh Chromium.

Allow-listed console messages (each with its reason):
- "Unsatisfied version" / "No satisfying version" — the widget manager extension (jupyterlab_widgets 3.0.17, built
  against JupyterLab 4.6) meets JupyterLite 0.6's JupyterLab 4.4 and falls back to the shared 4.4 modules; it works.
"""
from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import time
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from .conftest import CHROMIUM, CHROMIUM_FLAGS, ROOT, SCREENSHOTS

#: `make test-lite-run` (the last step of `make test`, after the build), two chapters at a time; not in test-browser
pytestmark = pytest.mark.lite_run

LITE = Path(os.environ.get("LITE_SITE", ROOT / "_build" / "html" / "lite"))
#: what the test server serves: the whole built site, so that the zh-CN edition's lite copy (zh-CN/lite) reaches the
#: Pyodide runtime it shares with the English copy (lite/static/pyodide) by its relative URL; with LITE_SITE, that
#: site alone (English chapters only)
SERVED = LITE.parent if "LITE_SITE" not in os.environ else LITE
#: each edition's lite copy, as a path under SERVED
LITE_PATHS = {"en": LITE.name} if "LITE_SITE" not in os.environ else {"en": ""}
if "LITE_SITE" not in os.environ and (SERVED / "zh-CN" / "lite" / "lab" / "index.html").exists():
    LITE_PATHS["zh-CN"] = "zh-CN/lite"
REPORTS = ROOT / "_build" / "reports"
CHAPTERS = sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb"))
#: the zh-CN copy (issue 25): two short chapters run to the end, translated prose and the same explorables
ZH_CHAPTERS = ["05_flashattention.ipynb", "10_export_controls.ipynb"]
RUNS = [("en", c) for c in CHAPTERS] + [("zh-CN", c) for c in ZH_CHAPTERS if "zh-CN" in LITE_PATHS]
#: limits that make a dead or stalled kernel fail the test within minutes, naming the cell (measured on 2 busy cores:
#: first cell 10-85 s, a whole chapter 20-170 s; a redraw well under a second)
START_TIMEOUT_S = 240         # Run All to the first finished cell: Pyodide's start and the install cell
STALL_S = 120                 # after that, this long without one more finished cell is a stalled kernel
RUN_TIMEOUT_S = 480           # a whole chapter
RESPONSE_TIMEOUT_MS = 30_000  # a control's new view, computed by the kernel
MAX_CONTROLS = 4              # controls tried per explorable before it counts as not answering
RUN_ALL_CLICKS = 3            # Run All chosen again when the kernel went Idle without running anything
#: Chromium's resolver knows no host but the loopback: a request for anything else fails at once
NO_OTHER_HOSTS = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
ALLOWED_CONSOLE = [r"Unsatisfied version", r"No satisfying version", r"Available versions"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    served: list = []

    def log_message(self, *args):
        pass

    def log_request(self, code="-", size="-"):
        self.served.append((self.path, int(code) if str(code).isdigit() else 0))


@pytest.fixture(scope="module")
def lite_url():
    if not (LITE / "lab" / "index.html").exists():
        pytest.fail(f"{LITE} has no JupyterLite site: run `make book` first (make test does)")
    handler = functools.partial(_Handler, directory=str(SERVED))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    _write_report()


@pytest.fixture()
def lite_browser():
    """A fresh Chromium for each chapter, so one chapter's stalled or crashed tab cannot slow the next."""
    from playwright.sync_api import sync_playwright

    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS + [NO_OTHER_HOSTS])
        yield b
        b.close()


def explorables_in(name: str) -> int:
    """How many explorables (widget views) the committed chapter displays."""
    nb = json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))
    return sum(1 for c in nb["cells"] if c["cell_type"] == "code" for o in c.get("outputs", [])
               if "application/vnd.jupyter.widget-view+json" in o.get("data", {}))


#: the code cells whose input shows: the lite copies fold the bookkeeping cells the website hides (their prompt, and
#: so their execution count, is not in the page); Run All runs them in order, so each visible cell after one proves it
#: finished, and one that raised shows its traceback in its output (_PROBLEMS)
_STATE = """() => {
  const cells = [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')]
      .filter(c => { const p = c.querySelector('.jp-InputArea-prompt'); return p && p.offsetParent !== null; });
  const prompts = cells.map(c => (c.querySelector('.jp-InputArea-prompt') || {innerText: ''}).innerText.trim());
  const sources = cells.map(c => ((c.querySelector('.jp-InputArea-editor') || {innerText: ''}).innerText
      .split('\\n').find(l => l.trim()) || '').trim().slice(0, 100));
  const status = [...document.querySelectorAll('.jp-StatusBar-TextItem, .jp-Notebook-ExecutionIndicator')]
      .map(e => e.innerText + ' ' + (e.getAttribute('data-status') || '')).join(' | ');
  const dialog = [...document.querySelectorAll('.jp-Dialog')].map(d => d.innerText.slice(0, 300)).join(' | ');
  return {prompts, sources, status, dialog};
}"""
#: what the status bar or a dialog shows when the kernel is gone
_DEAD = re.compile(r"\bDead\b|\bRestarting\b|kernel (appears to have )?died", re.I)
_DONE = re.compile(r"^\[\d+\]:$")

#: stderr streams and tracebacks (JupyterLab renders both with the stderr MIME type)
_PROBLEMS = """() => [...document.querySelectorAll('.jp-OutputArea-output')]
  .filter(e => e.getAttribute('data-mime-type') === 'application/vnd.jupyter.stderr'
               || e.classList.contains('jp-mod-error')
               || e.querySelector('[data-mime-type="application/vnd.jupyter.stderr"]'))
  .map(e => e.innerText.slice(0, 400))"""

#: the prose as the reader sees it (rendered Markdown cells), and what raw MyST in it looks like: a role, a directive
#: fence or a target label (tools/lab_book.LiteRenderer renders them when the site is built)
_PROSE = """() => [...document.querySelectorAll('.jp-MarkdownCell .jp-RenderedMarkdown')].map(e => e.innerText)
  .join('\\n')"""
_RAW_MYST = re.compile(r"\{(?:glue|term|cite|doc|numref|ref|admonition|exercise|solution|dropdown|note|warning|"
                       r"tip)(?::\w+)?\}|^\([\w:-]+\)=", re.M)
#: what JupyterLab shows for a stored figure of an untrusted notebook: its text/plain ("<Figure size 640x280 with 1
#: Axes>"); the lite copies' code cells are marked trusted (tools/build_lite.py), so the figure itself shows
_PLACEHOLDERS = """() => [...document.querySelectorAll('.jp-OutputArea-output')].map(e => e.innerText)
  .filter(t => /^<(Figure|IPython|pandas)[^>]*>$/m.test(t)).slice(0, 5)"""
#: glossary terms whose definition shows on hover (``<abbr title>``)
_HOVERS = """() => [...document.querySelectorAll('.jp-MarkdownCell abbr[title]')].length"""

#: the outermost widget boxes of each output: the explorables (a VBox of title, controls and the rendered view)
_BOXES = """() => [...document.querySelectorAll('.jp-OutputArea-output .widget-vbox')]
  .filter(e => !e.parentElement.closest('.widget-vbox'))"""

#: what the kernel draws in a box: the content of its HTML widgets (the title and the view), not the controls
_VIEW = """b => [...b.querySelectorAll('.widget-html .widget-html-content')].map(e => e.innerHTML).join('\\n')"""


def _where(state, console) -> str:
    """The cell a run is stuck on (its index among the code cells and first line), for a failure message."""
    running = [i for i, p in enumerate(state["prompts"]) if p == "[*]:"]
    i = running[0] if running else next((i for i, p in enumerate(state["prompts"]) if not _DONE.match(p)), None)
    cell = f"code cell {i} ({state['sources'][i]!r})" if i is not None else "no unfinished cell"
    return (f"{cell}; status {state['status']!r}; dialog {state['dialog']!r}; "
            f"last console lines {console[-5:]}")


def run_all(page, console) -> tuple[float, float]:
    """Run every cell via the menus; return (seconds to the first finished cell, seconds to the end).

    The run is over when the kernel shows Idle and no cell is queued ([*]) on two polls in a row; a cell that
    raised stops Run All, so the cells after it keep an empty prompt and the run is reported with its error output.
    It fails at once, naming the cell, when the kernel dies (status Dead/Unknown/Restarting or a kernel dialog), and
    within ``STALL_S`` when no further cell finishes (``START_TIMEOUT_S`` for the first, which starts the kernel).
    """
    def click_run_all():
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).first.click()
        page.locator(".lm-Menu-itemLabel", has_text=re.compile(r"^Run All Cells$")).first.click()
        return time.monotonic()

    t0 = last_progress = clicked = click_run_all()
    first, quiet, finished, clicks, dialogs = None, 0, 0, 1, 0
    while True:
        page.wait_for_timeout(500)
        now, state = time.monotonic(), page.evaluate(_STATE)
        done = [bool(_DONE.match(p)) for p in state["prompts"]]
        # Run All chosen while the kernel was still starting can be dropped (seen: kernel Idle, nothing queued,
        # nothing run): choose it again, at most RUN_ALL_CLICKS times in all, counting time from the first choice
        started = any(p == "[*]:" for p in state["prompts"]) or any(done)
        if (not started and clicks < RUN_ALL_CLICKS and now - clicked > 15
                and re.search(r"\bidle\b", state["status"], re.I)):
            clicked, clicks = click_run_all(), clicks + 1
            continue
        # JupyterLite can still ask "Select Kernel" while it starts (overrides.json sets autoStartDefaultKernel): a
        # reader would press Select, whose default is the site's Python (Pyodide); so does the test, once, then Run All
        if "Select Kernel" in state["dialog"] and dialogs < 1:
            page.locator(".jp-Dialog .jp-mod-accept").first.click()
            dialogs += 1
            clicked = last_progress = click_run_all()
            continue
        if sum(done) > finished:
            finished, last_progress = sum(done), now
        if first is None and done and done[0]:
            first = now - t0
        dead = _DEAD.search(state["status"] + " " + state["dialog"])
        assert not dead, f"the kernel died after {now - t0:.0f} s at {_where(state, console)}; " \
                         f"errors: {page.evaluate(_PROBLEMS)}"
        idle = re.search(r"\bIdle\b|\bidle\b", state["status"]) and "[*]:" not in state["prompts"]
        quiet = quiet + 1 if first is not None and idle else 0
        if quiet >= 2:
            unfinished = [i for i, d in enumerate(done) if not d]
            assert not unfinished, (f"Run All stopped before code cells {unfinished}: "
                                    f"{page.evaluate(_PROBLEMS) or 'no error output shown'}")
            return first, now - t0
        limit = START_TIMEOUT_S if first is None else STALL_S
        assert now - last_progress < limit and now - t0 < RUN_TIMEOUT_S, (
            f"stalled: no cell finished in the last {now - last_progress:.0f} s ({now - t0:.0f} s since Run All; "
            f"{sum(done)} of {len(done)} code cells done) at {_where(state, console)}; "
            f"errors so far: {page.evaluate(_PROBLEMS)}")


def answers_one_control(page, box) -> str | None:
    """Change the box's controls one at a time until the kernel redraws the view; return the one that worked."""
    before = box.evaluate(_VIEW)
    controls = ([("drop-down", s) for s in box.query_selector_all("select")]
                + [("slider", h) for h in box.query_selector_all(".noUi-handle")]
                + [("toggle", g) for g in box.query_selector_all(".widget-toggle-buttons")])
    for kind, control in controls[:MAX_CONTROLS]:
        if kind == "drop-down":
            n, current = control.evaluate("s => [s.options.length, s.selectedIndex]")
            if n < 2:
                continue
            control.select_option(index=(current + 1) % n)
        elif kind == "slider":          # drag the handle a quarter of the track to the right, or left at the end
            control.scroll_into_view_if_needed()
            handle, track = control.bounding_box(), box.query_selector(".noUi-base, .noUi-target").bounding_box()
            x, y = handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2
            step = track["width"] / 4 if x + track["width"] / 4 <= track["x"] + track["width"] else -track["width"] / 4
            page.mouse.move(x, y)
            page.mouse.down()
            page.mouse.move(x + step / 2, y, steps=4)
            page.mouse.move(x + step, y, steps=4)
            page.mouse.up()
        else:
            buttons = [b for b in control.query_selector_all("button")
                       if "mod-active" not in (b.get_attribute("class") or "")]
            if not buttons:
                continue
            buttons[0].click()
        try:
            page.wait_for_function(f"([b, before]) => ({_VIEW})(b) !== before", arg=[box, before],
                                   timeout=RESPONSE_TIMEOUT_MS, polling=250)
            return kind
        except Exception:               # this control left the view as it was (an edge value): try the next
            continue
    return None


@pytest.mark.parametrize("edition, name", RUNS, ids=[f"{e}-{c.removesuffix('.ipynb')}" for e, c in RUNS])
def test_chapter_runs_in_the_browser(lite_browser, lite_url, edition, name):
    context = lite_browser.new_context(viewport={"width": 1280, "height": 900})
    requests, console = [], []
    context.on("request", lambda r: requests.append(r.url))
    page = context.new_page()
    page.on("console", lambda m: console.append(f"{m.type}: {m.text[:300]}"))
    page.on("pageerror", lambda e: console.append(f"pageerror: {e}"))
    start = len(_Handler.served)
    try:
        t0 = time.monotonic()
        base = "/".join(x for x in (lite_url, LITE_PATHS[edition]) if x)
        page.goto(f"{base}/notebooks/index.html?path=chapters/{name}")     # where the chapter's link leads
        page.wait_for_selector(".jp-Notebook .jp-CodeCell", timeout=120_000)
        opened = time.monotonic() - t0
        page.wait_for_timeout(1000)     # the stored outputs, before anything runs: figures, not their placeholders
        placeholders = page.evaluate(_PLACEHOLDERS)
        assert not placeholders, f"{name}: stored outputs shown as placeholders before running: {placeholders[:3]}"
        first, end = run_all(page, console)
        REPORTS.mkdir(parents=True, exist_ok=True)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        tag = "" if edition == "en" else f"{edition}-"
        page.screenshot(path=str(SCREENSHOTS / f"lite-{tag}{name.removesuffix('.ipynb')}.png"))

        problems = page.evaluate(_PROBLEMS)
        assert not problems, f"{name}: error or stderr output in the browser: {problems}"

        prose = page.evaluate(_PROSE)
        raw = sorted(set(_RAW_MYST.findall(prose)))
        assert not raw, f"{name}: the prose shows MyST the lite copy should have rendered: {raw[:8]}"
        assert page.evaluate(_HOVERS) > 0, f"{name}: no glossary term shows its definition on hover"

        boxes = page.evaluate_handle(_BOXES)
        handles = [boxes.get_property(str(i)).as_element()
                   for i in range(boxes.get_property("length").json_value())]
        expected = explorables_in(name)
        assert len(handles) >= expected, f"{name}: {len(handles)} live explorables rendered, the chapter has {expected}"
        answered = []
        for i, box in enumerate(handles[:expected] if expected else handles):
            box.scroll_into_view_if_needed()
            kind = answers_one_control(page, box)
            assert kind, f"{name}: explorable {i} did not redraw when any of its controls changed"
            answered.append(kind)

        outside = [u for u in requests if not u.startswith((lite_url, "data:", "blob:"))]
        assert not outside, f"{name}: requests that left 127.0.0.1: {sorted(set(outside))[:10]}"
        served = _Handler.served[start:]
        # the browser's own probe of the host's root for /favicon.ico (the lite copies serve theirs in their folder;
        # the whole site is served here since the zh-CN copy shares lite/static/pyodide)
        failed = [(p, c) for p, c in served if c >= 400 and not (p == "/favicon.ico" and SERVED != LITE)]
        assert not failed, f"{name}: requests the site could not answer: {failed[:10]}"
        fetched = {urlsplit(p).path for p, c in served if c == 200}
        for wanted in ("/static/pyodide/pyodide.asm.wasm", "/static/pyodide/pyodide-lock.json"):   # from the site
            assert any(f.endswith(wanted) for f in fetched), f"{name}: the kernel did not load {wanted} from the site"
        noise = [c for c in console if c.startswith(("error", "pageerror"))
                 and not any(re.search(a, c) for a in ALLOWED_CONSOLE)]
        assert not [c for c in noise if c.startswith(("error", "pageerror"))], f"{name}: console errors: {noise}"

        record = {"chapter": name, "edition": edition, "open_s": round(opened, 1), "first_cell_s": round(first, 1),
                  "end_s": round(end, 1), "cells": len(page.evaluate(_STATE)["prompts"]),
                  "explorables": len(answered), "controls_answered": answered, "requests": len(requests),
                  "requests_outside": len(outside), "downloaded_bytes": downloaded(served)}
        (REPORTS / "lite_runs").mkdir(parents=True, exist_ok=True)
        (REPORTS / "lite_runs" / f"{tag}{name.removesuffix('.ipynb')}.json").write_text(json.dumps(record, indent=1))
    finally:
        context.close()


def downloaded(served) -> int:
    """Bytes of the distinct site files a chapter's run fetched (what a first start downloads)."""
    paths = {urlsplit(p).path for p, code in served if code == 200}
    files = [SERVED / unquote(p).lstrip("/") for p in paths]
    return sum(f.stat().st_size for f in files if f.is_file())


def _write_report():
    """Gather every chapter's run (each xdist worker writes its own) and the lite site's size into one report."""
    runs = [json.loads(p.read_text()) for p in sorted((REPORTS / "lite_runs").glob("*.json"))] \
        if (REPORTS / "lite_runs").exists() else []
    files = [p for p in LITE.rglob("*") if p.is_file()]
    runtime = [p for p in files if "static/pyodide" in p.relative_to(LITE).as_posix()]
    report = {"lite_bytes": sum(p.stat().st_size for p in files),
              "pyodide_runtime_and_packages_bytes": sum(p.stat().st_size for p in runtime),
              "chapters_run": len(runs), "runs": runs}
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "lite_report.json").write_text(json.dumps(report, indent=1))
    # the site report (tests/browser/test_site.py writes it first in `make test`) gains the same figures
    site_report = REPORTS / "site_report.json"
    merged = json.loads(site_report.read_text()) if site_report.exists() else {}
    merged["jupyterlite"] = {
        "lite_bytes": report["lite_bytes"], "pyodide_runtime_and_packages_bytes":
            report["pyodide_runtime_and_packages_bytes"],
        "chapters": {("" if r.get("edition", "en") == "en" else r["edition"] + "/") + r["chapter"]: {k: r[k] for k in ("first_cell_s", "end_s", "downloaded_bytes") if k in r}
                     for r in runs}}
    site_report.write_text(json.dumps(merged, indent=1))
