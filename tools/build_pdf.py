"""The book to keep: one edition of the built site as a paged PDF and a reflowable EPUB, offline.

    python tools/build_pdf.py --lang en        # after the site build: _build/html/steel-and-silicon.{pdf,epub}
    python tools/build_pdf.py --lang zh-CN     # the Chinese edition: _build/html/zh-CN/steel-and-silicon.{pdf,epub}

Nothing is executed again. The tool reads the pages the site build wrote (every chapter, lab and apparatus page in
the order of ``_toc.yml``), joins their articles into one document (ids prefixed per page, links between pages made
internal), moves each chapter's exercise solutions to the chapter's end, hides the inputs the site hides
(``hide-input``; ``remove-*`` cells are already gone) and adds, under every explorable, a line saying it is
interactive on the site. The site's own headless Chromium then runs the widget JavaScript and MathJax on that
document — so an explorable prints at its default view, the chapter's own numbers — and prints it with a print
stylesheet (``tools/pdf/print.css``): CSS paged media as Chromium implements it (page size, margin boxes with page
numbers and running heads through named pages, page breaks). Chromium embeds (subsets) every font and keeps the
library's SVG charts as vectors. The table of contents' page numbers come from a first printing (its named
destinations), written in, then the book is printed again.

The EPUB is made from the same rendered document: one XHTML file per page (``XMLSerializer``), maths as MathML
(MathJax's ``tex2mml`` on the TeX the site build wrote), each explorable as an image of its default view with the
same line, the charts as SVG, a navigation document and a package file; ``tests/test_pdf.py`` runs ``epubcheck``.

A layout report (``_build/print/<lang>/layout.json``) lists every figure, table, code block and image that is wider
than the text block in the print layout, for the tests.
"""
from __future__ import annotations

import argparse
import base64
import copy
import datetime as dt
import functools
import http.server
import json
import re
import subprocess
import sys
import threading
import time
import uuid
import zipfile
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent / "pdf"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"]
NAME = "steel-and-silicon"
PRINT_DOC = "__print__/book.html"

TEXT = {   # the few strings the tool itself writes, per edition
    "en": {
        "contents": "Contents", "part": "Part", "solutions": "Solutions to the exercises", "solution_to": "Solution to",
        "see_solution": "Solution at the end of the chapter",
        "interactive": "This figure is interactive on the book's website: move its controls at",
        "interactive_nourl": "This figure is interactive on the book's website (page {path}); shown here at its "
                             "default view, the chapter's own numbers.",
        "default_view": "Shown here at its default view, the chapter's own numbers.",
        "version": "Version", "built": "Built", "edition": "English edition",
        "subtitle": "LLM training systems from chip to nation",
        "note": "This PDF is printed from the book's website. Every number was computed by the chipchain library "
                "when the book was built; the explorables are shown at their default view.",
    },
    "zh-CN": {
        "contents": "目录", "part": "第", "solutions": "练习解答", "solution_to": "解答：",
        "see_solution": "解答见本章末尾",
        "interactive": "本图在本书网站上可交互，可在此处调节：",
        "interactive_nourl": "本图在本书网站上可交互（页面 {path}）；此处为默认视图，即本章的数值。",
        "default_view": "此处为默认视图，即本章的数值。",
        "version": "版本", "built": "构建日期", "edition": "简体中文版",
        "subtitle": "从芯片到国家的大模型训练系统",
        "note": "本 PDF 由本书网站打印而成。书中每个数字都在构建时由 chipchain 库计算；可交互图示以默认视图呈现。",
    },
}


# ---------------------------------------------------------------------------------------------------------------
# The book's pages, in the order of the table of contents
# ---------------------------------------------------------------------------------------------------------------


#: a tag carrying SVG 2's paint-order attribute
PAINT_ORDER_TAG = re.compile(r"<[a-zA-Z][^<>]*\spaint-order=\"[^\"]*\"[^<>]*>")


def _svg11_style(m) -> str:
    """One tag with ``paint-order="…"`` rewritten with the property in its ``style`` (kept with any style it has).

    >>> import re
    >>> _svg11_style(re.match(r".*", '<text x="1" paint-order="stroke" style="a:b">'))
    '<text x="1" style="a:b;paint-order:stroke">'
    """
    tag = m.group(0)
    value = re.search(r'\spaint-order="([^"]*)"', tag).group(1)
    tag = re.sub(r'\spaint-order="[^"]*"', "", tag)
    if re.search(r'\sstyle="', tag):
        return re.sub(r'\sstyle="([^"]*)"', lambda s: f' style="{s.group(1).rstrip(";")};paint-order:{value}"', tag,
                      count=1)
    return tag[:-1].rstrip("/").rstrip() + f' style="paint-order:{value}"' + ("/>" if tag.endswith("/>") else ">")

def toc_entries(toc_path: Path) -> list[dict]:
    """[{doc, part}] for the root page and every chapter of every part, in order."""
    toc = yaml.safe_load(toc_path.read_text(encoding="utf-8"))
    out = [{"doc": toc["root"], "part": None}]
    for part in toc.get("parts", []):
        for ch in part.get("chapters", []):
            out.append({"doc": ch["file"], "part": part.get("caption")})
    for ch in toc.get("chapters", []):
        out.append({"doc": ch["file"], "part": None})
    return out


def slug(doc: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "-", doc)


def git_version() -> tuple[str, str]:
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                                check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True).stdout.strip()
        date = subprocess.run(["git", "log", "-1", "--format=%cs"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown", dt.date.today().isoformat()
    return commit + ("+" if dirty else ""), date


class Assembler:
    """Joins the site's pages into one print document (a BeautifulSoup tree) and remembers what it moved."""

    def __init__(self, site: Path, lang: str, entries: list[dict], site_url: str):
        self.site, self.lang, self.entries, self.site_url = site, lang, entries, site_url.rstrip("/")
        self.t = TEXT.get(lang, TEXT["en"])
        self.docs = {e["doc"] for e in entries}
        self.widget_state: dict = {}
        self.view_ids: list[str] = []
        self.static_views: dict | None = None     # model id -> the rendered default view (static HTML)
        self.widget_css = ""
        self.head_css: list[str] = []
        self.chapters: list[dict] = []       # doc, slug, title, number, part
        self.explorables = 0
        self.solutions = 0

    # -- links ---------------------------------------------------------------------------------------------------
    def _target(self, doc: str, href: str) -> str | None:
        """The print document's href for ``href`` written on page ``doc`` (None: not part of the book)."""
        if href.startswith(("http://", "https://", "mailto:")):
            return href
        parts = urlsplit(href)
        if not parts.path:
            return f"#{slug(doc)}--{unquote(parts.fragment)}" if parts.fragment else f"#{slug(doc)}"
        resolved = urljoin(f"/{doc}.html", parts.path).lstrip("/")
        if resolved.endswith(".html") and resolved[:-5] in self.docs:
            target = resolved[:-5]
            return f"#{slug(target)}--{unquote(parts.fragment)}" if parts.fragment else f"#{slug(target)}"
        return None

    def site_link(self, path: str) -> str | None:
        return f"{self.site_url}/{path}" if self.site_url else None

    # -- one page ------------------------------------------------------------------------------------------------
    def page(self, index: int, entry: dict, soup_out: BeautifulSoup):
        doc = entry["doc"]
        html = (self.site / f"{doc}.html").read_text(encoding="utf-8")
        soup = BeautifulSoup(html, "html.parser")
        article = soup.find("article", class_="bd-article")
        if article is None:
            raise SystemExit(f"build_pdf: {doc}.html has no <article class='bd-article'>: is it a book page?")
        sid = slug(doc)
        h1 = article.find("h1")
        for a in article.select("a.headerlink"):
            a.decompose()
        title = h1.get_text(" ", strip=True) if h1 else doc
        m = re.match(r"^(\d+)\.\s+(.*)$", title)
        number, bare = (m.group(1), m.group(2)) if m else (None, title)
        for p in article.select("p.cc-run"):          # "Run this chapter: JupyterLite / download" — the site's
            p.decompose()
        for d in article.select("details.hide.above-input"):   # hide-input: bookkeeping, hidden on the site
            d.decompose()
        for el in article.select(".toggle-details, button"):
            el.decompose()

        # explorables: a line under each, with the site's address of its section
        for script in article.find_all("script", type="application/vnd.jupyter.widget-view+json"):
            model_id = json.loads(script.string)["model_id"]
            out = script.find_parent("div", class_="cell_output") or script.parent
            if self.static_views is not None:
                frag = BeautifulSoup(self.static_views.get(model_id) or "", "html.parser")
                if not frag.contents:
                    raise SystemExit(f"build_pdf: explorable {model_id} on {doc} did not render")
                script.replace_with(frag)
            section = out.find_parent("section")
            anchor = section.get("id") if section else None
            path = f"{doc}.html" + (f"#{anchor}" if anchor else "")
            note = soup.new_tag("p", attrs={"class": "print-interactive"})
            url = self.site_link(path)
            if url:
                note.append(self.t["interactive"] + " ")
                a = soup.new_tag("a", href=url)
                a.string = url
                note.append(a)
                note.append(". " + self.t["default_view"])
            else:
                note.append(self.t["interactive_nourl"].format(path=path))
            out.insert_after(note)
            out["class"] = out.get("class", []) + ["print-explorable"]
            self.explorables += 1

        # solutions: gathered at the end of the page, each linked both ways with its exercise
        sols = article.select("div.solution")
        if sols:
            box = soup.new_tag("section", attrs={"class": "print-solutions", "id": f"{sid}-print-solutions"})
            head = soup.new_tag("h2")
            head.string = self.t["solutions"]
            box.append(head)
            for sol in sols:
                sol.extract()
                sol["class"] = [c for c in sol.get("class", []) if c != "dropdown"]
                ref = sol.select_one("p.admonition-title a")
                if ref is not None and ref.get("href", "").startswith("#"):
                    ex = article.find(id=ref["href"][1:])
                    if ex is not None:
                        back = soup.new_tag("p", attrs={"class": "print-see-solution"})
                        a = soup.new_tag("a", href=f"#{sol.get('id', '')}")
                        a.string = self.t["see_solution"]
                        back.append(a)
                        ex.append(back)
                box.append(sol)
                self.solutions += 1
            article.append(box)

        # ids and links
        seen_ids: set[str] = set()
        for el in article.find_all(id=True):
            new_id = f"{sid}--{el['id']}"
            while new_id in seen_ids:        # sphinx-exercise repeats "exercise-content" in every exercise
                new_id += "-x"
            seen_ids.add(new_id)
            el["id"] = new_id
        for a in article.find_all("a", href=True):
            new = self._target(doc, a["href"])
            if new is None:
                url = self.site_link(urljoin(f"/{doc}.html", a["href"]).lstrip("/"))
                if url:
                    a["href"] = url
                else:
                    a.unwrap()
            else:
                a["href"] = new
        for img in article.find_all(["img", "source"], src=True):
            if not img["src"].startswith(("data:", "http://", "https://")):
                img["src"] = urljoin(f"/{doc}.html", img["src"])
        for m_ in article.select("span.math, div.math"):       # the TeX, for the EPUB's MathML
            m_["data-tex"] = m_.get_text()

        chapter = soup_out.new_tag("section", attrs={"class": "print-chapter", "id": sid, "data-doc": doc,
                                                     "style": f"page: {sid}"})
        if index == 0:
            chapter["class"].append("print-first")
        for child in list(article.children):
            chapter.append(child.extract())
        self.chapters.append({"doc": doc, "slug": sid, "title": title, "number": number, "bare": bare,
                              "part": entry["part"]})
        return chapter

    # -- the whole book ------------------------------------------------------------------------------------------
    def build(self, version: str, date: str) -> str:
        out = BeautifulSoup("<!DOCTYPE html><html><head></head><body></body></html>", "html.parser")
        out.html["lang"] = self.lang
        out.html["data-theme"] = "light"
        out.html["data-mode"] = "light"
        body_parts = []
        for i, entry in enumerate(self.entries):
            body_parts.append(self.page(i, entry, out))
        head = out.head
        head.append(out.new_tag("meta", charset="utf-8"))
        title = out.new_tag("title")
        title.string = "Steel and Silicon"
        head.append(title)
        for href in self.head_css:
            head.append(out.new_tag("link", rel="stylesheet", href=href))
        head.append(out.new_tag("link", rel="stylesheet", href="/__print__/print.css"))
        style = out.new_tag("style")
        style.string = "\n".join(self.page_rules())
        head.append(style)
        wcss = out.new_tag("style")
        wcss.string = self.widget_css
        head.append(wcss)
        mj = out.new_tag("script")
        mj.string = ('window.MathJax = {options: {processHtmlClass: "tex2jax_process|mathjax_process|math|output_area"},'
                     ' startup: {typeset: true}};')
        head.append(mj)
        head.append(out.new_tag("script", src="/_static/mathjax/tex-mml-chtml.js"))

        body = out.body
        body.append(self.title_page(out, version, date))
        body.append(self.contents(out))
        last_part = None
        for chapter, meta in zip(body_parts, self.chapters):
            if meta["part"] and meta["part"] != last_part:
                last_part = meta["part"]
                part = out.new_tag("section", attrs={"class": "print-part", "id": f"part-{slug(last_part)}"})
                h = out.new_tag("h1", attrs={"class": "print-part-title"})
                h.string = last_part
                part.append(h)
                body.append(part)
            body.append(chapter)
        return str(out)

    def collect(self):
        """First pass over the pages: titles aside, the widget state and the views each page displays."""
        for entry in self.entries:
            html = (self.site / f"{entry['doc']}.html").read_text(encoding="utf-8")
            if not self.head_css:
                head = BeautifulSoup(html[:html.find("</head>") + 7], "html.parser")
                self.head_css = [urljoin(f"/{entry['doc']}.html", link["href"])
                                 for link in head.find_all("link", rel="stylesheet")]
            for m in re.finditer(r'<script type="application/vnd.jupyter.widget-state\+json">(.*?)</script>', html, re.S):
                self.widget_state.update(json.loads(m.group(1))["state"])
            for m in re.finditer(r'<script type="application/vnd.jupyter.widget-view\+json">(.*?)</script>', html, re.S):
                self.view_ids.append(json.loads(m.group(1))["model_id"])

    def widget_sheet(self) -> str:
        """A page holding every explorable of the book at its default view and nothing else, with the site's
        widget JavaScript and MathJax: rendered once, its views are copied into the book as static HTML."""
        state = json.dumps({"version_major": 2, "version_minor": 0, "state": self.default_views_only()})
        views = "\n".join(f'<div class="print-view" data-model="{m}"><script type="application/vnd.jupyter.widget-view'
                          f'+json">{{"version_major": 2, "version_minor": 0, "model_id": "{m}"}}</script></div>'
                          for m in self.view_ids)
        css = "".join(f'<link rel="stylesheet" href="{h}">' for h in self.head_css)
        return f"""<!DOCTYPE html><html lang="{self.lang}" data-theme="light" data-mode="light"><head><meta charset="utf-8">
{css}<link rel="stylesheet" href="/__print__/print.css">
<script>window.MathJax = {{options: {{processHtmlClass: "tex2jax_process|mathjax_process|math|output_area"}}}};</script>
<script src="/_static/widgets_shim.js"></script><script src="/_static/require.js"></script>
<script src="/_static/widgets/embed-amd.js"></script><script defer src="/_static/mathjax/tex-mml-chtml.js"></script>
<script type="application/vnd.jupyter.widget-state+json">{state}</script></head>
<body><main class="print-sheet" style="width: 6in">{views}</main></body></html>"""

    def default_views_only(self) -> dict:
        """The widget state with every Stack holding only its selected view (the default, what the book prints);
        the other positions become one empty placeholder, so indices stay valid and the browser builds ~1/10 of
        the DOM. Models no longer reachable from a displayed view are dropped."""
        state = copy.deepcopy(self.widget_state)
        empty = "print0empty0html"
        state[empty] = {"model_name": "HTMLModel", "model_module": "@jupyter-widgets/controls",
                        "model_module_version": "2.0.0", "state": {"value": "", "_model_name": "HTMLModel",
                                                                   "_view_name": "HTMLView"}}
        for model in state.values():
            if model["model_name"] == "StackModel":
                s = model["state"]
                sel = s.get("selected_index") or 0
                s["children"] = [c if i == sel else f"IPY_MODEL_{empty}" for i, c in enumerate(s["children"])]
        # reachable from the displayed views (and every link, whose ends are displayed)
        roots = set(self.view_ids) | {empty} | {k for k, v in state.items() if v["model_name"] == "LinkModel"}
        seen, todo = set(), list(roots)
        while todo:
            k = todo.pop()
            if k in seen or k not in state:
                continue
            seen.add(k)
            todo.extend(re.findall(r"IPY_MODEL_([0-9a-z]+)", json.dumps(state[k]["state"])))
        return {k: v for k, v in state.items() if k in seen}

    def page_rules(self) -> list[str]:
        """Named pages: one per chapter, whose running head is the chapter's title (Chromium has margin boxes
        and named pages, not string-set)."""
        rules = []
        for ch in self.chapters:
            head = (f"{ch['number']} · {ch['bare']}" if ch["number"] else ch["bare"]).replace('"', '\\"')
            rules.append(f'@page {ch["slug"]}:right {{ @top-right {{ content: "{head}"; }} }}')
            rules.append(f'@page {ch["slug"]}:left {{ @top-left {{ content: "Steel and Silicon"; }} }}')
        return rules

    def title_page(self, out, version: str, date: str):
        sec = out.new_tag("section", attrs={"class": "print-title-page", "id": "print-title"})
        for tag, cls, text in [("h1", "print-book-title", "Steel and Silicon"),
                               ("p", "print-subtitle", self.t["subtitle"]),
                               ("p", "print-author", "The Steel and Silicon authors"),
                               ("p", "print-edition", self.t["edition"]),
                               ("p", "print-version", f"{self.t['version']} {version} · {date}"),
                               ("p", "print-note", self.t["note"])]:
            el = out.new_tag(tag, attrs={"class": cls})
            el.string = text
            sec.append(el)
        if self.site_url:
            p = out.new_tag("p", attrs={"class": "print-note"})
            a = out.new_tag("a", href=self.site_url + "/")
            a.string = self.site_url + "/"
            p.append(a)
            sec.append(p)
        return sec

    def contents(self, out):
        sec = out.new_tag("nav", attrs={"class": "print-toc", "id": "print-toc"})
        h = out.new_tag("h1")
        h.string = self.t["contents"]
        sec.append(h)
        ol = out.new_tag("ol")
        last_part = None
        for ch in self.chapters:
            if ch["part"] and ch["part"] != last_part:
                last_part = ch["part"]
                li = out.new_tag("li", attrs={"class": "print-toc-part"})
                li.string = last_part
                ol.append(li)
            li = out.new_tag("li", attrs={"class": "print-toc-entry"})
            a = out.new_tag("a", href=f"#{ch['slug']}")
            num = out.new_tag("span", attrs={"class": "print-toc-num"})
            num.string = ch["number"] or ""
            a.append(num)
            t = out.new_tag("span", attrs={"class": "print-toc-title"})
            t.string = ch["bare"]
            a.append(t)
            pg = out.new_tag("span", attrs={"class": "print-toc-page", "data-target": ch["slug"]})
            pg.string = "000"
            a.append(pg)
            li.append(a)
            ol.append(li)
        sec.append(ol)
        return sec


# ---------------------------------------------------------------------------------------------------------------
# Serving the site and the print document to Chromium
# ---------------------------------------------------------------------------------------------------------------

class Handler(http.server.SimpleHTTPRequestHandler):
    extra: dict[str, Path] = {}

    def translate_path(self, path):
        p = urlsplit(path).path
        for prefix, folder in self.extra.items():
            if p.startswith(prefix):
                return str(folder / unquote(p[len(prefix):]))
        return super().translate_path(path)

    def log_message(self, *args):
        pass


def serve(site: Path, print_dir: Path):
    handler = type("H", (Handler,), {"extra": {"/__print__/": print_dir}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


CAPTURE_VIEWS = """async () => {
  // Every explorable of the widget sheet, rendered by the site's widget manager, copied as static HTML: what is
  // not displayed (the Stack's other positions are placeholders anyway) dropped, form values written as attributes.
  const holders = [...document.querySelectorAll('.print-view')];
  const rendered = h => h.querySelector('.widget-subarea > *, .jupyter-widgets');
  const t0 = Date.now();
  while (Date.now() - t0 < 180000 && !holders.every(rendered)) await new Promise(r => setTimeout(r, 250));
  if (window.MathJax && MathJax.startup) { await MathJax.startup.promise; await MathJax.typesetPromise(); }
  await new Promise(r => setTimeout(r, 500));
  const views = {};
  for (const h of holders) {
    const root = h.querySelector('.widget-subarea') || rendered(h);
    if (!root || !rendered(h)) { views[h.dataset.model] = null; continue; }
    for (const e of root.querySelectorAll('*')) {
      if (getComputedStyle(e).display === 'none') e.setAttribute('data-print-drop', '');
      if (e.tagName === 'OPTION' && e.selected) e.setAttribute('selected', '');
      if (e.tagName === 'INPUT') e.setAttribute('value', e.value);
    }
    const clone = root.cloneNode(true);
    clone.querySelectorAll('[data-print-drop], script').forEach(e => e.remove());
    views[h.dataset.model] = clone.outerHTML;
  }
  const css = [...document.head.querySelectorAll('style')].map(s => s.textContent).join(' ');
  return {views, css, seconds: (Date.now() - t0) / 1000};
}"""

WAIT_TYPESET = """async () => {
  const t0 = Date.now();
  while (Date.now() - t0 < 120000 && !(window.MathJax && MathJax.startup && MathJax.startup.promise))
    await new Promise(r => setTimeout(r, 200));
  await MathJax.startup.promise;
  await document.fonts.ready;
  return (Date.now() - t0) / 1000;
}"""

FIT_TABLES = """() => {
  // A table wider than the text block is stepped down (print.css: print-fit-1..3: smaller type, tighter cells,
  // numbers allowed to wrap) until it fits; what still does not fit is reported by LAYOUT_REPORT.
  const out = [];
  for (const t of document.querySelectorAll('.print-chapter table')) {
    const avail = t.closest('.print-chapter').getBoundingClientRect().width;
    let step = 0;
    while (step < 3 && t.getBoundingClientRect().width > avail + 0.5) t.classList.add(`print-fit-${++step}`);
    if (step) out.push({doc: t.closest('.print-chapter').dataset.doc, step, width: Math.round(t.getBoundingClientRect().width)});
  }
  return out;
}"""

LAYOUT_REPORT = """() => {
  // Everything a reader would see cut at the text block's edge, measured in the print layout.
  const out = [];
  const text = document.querySelector('.print-chapter');
  const sel = 'figure, table, img, svg, pre, .cc-table-wrap, .cell_output, .jupyter-widgets, mjx-container[display="true"], .MathJax_Display, .math';
  for (const ch of document.querySelectorAll('.print-chapter')) {
    const box = ch.getBoundingClientRect();
    for (const el of ch.querySelectorAll(sel)) {
      if (el.closest('.print-hidden')) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      const cut = r.right > box.right + 1 || r.left < box.left - 1 ||
                  (el.scrollWidth > el.clientWidth + 1 && getComputedStyle(el).overflowX !== 'visible' && el.clientWidth > 0);
      if (cut) out.push({doc: ch.dataset.doc, tag: el.tagName.toLowerCase(), cls: String(el.className && el.className.baseVal !== undefined ? el.className.baseVal : el.className).slice(0, 60),
                         left: Math.round(r.left - box.left), right: Math.round(r.right - box.left), width: Math.round(box.width),
                         scroll: el.scrollWidth, client: el.clientWidth,
                         text: (el.textContent || '').trim().slice(0, 80)});
    }
  }
  return out;
}"""

EPUB_EXPORT = """async (args) => {
  // One XHTML body per book page: widgets as images (filled in by Python), maths as MathML, no scripts.
  const out = [];
  for (const ch of document.querySelectorAll('.print-chapter')) {
    const clone = ch.cloneNode(true);
    clone.removeAttribute('style');
    clone.querySelectorAll('script, style, link, button, input, select, textarea, mjx-assistive-mml').forEach(e => e.remove());
    for (const el of clone.querySelectorAll('[data-tex]')) {
      const display = el.tagName === 'DIV';
      let tex = el.dataset.tex.trim();
      tex = tex.replace(/^\\\\\\(|\\\\\\)$/g, '').replace(/^\\\\\\[|\\\\\\]$/g, '');
      let mml;
      try { mml = MathJax.tex2mml(tex, {display}); } catch (e) { mml = null; }
      const holder = document.createElement(display ? 'div' : 'span');
      holder.className = display ? 'math display' : 'math';
      if (mml) holder.innerHTML = mml; else holder.textContent = tex;
      el.replaceWith(holder);
    }
    clone.querySelectorAll('mjx-container').forEach(e => e.remove());
    out.push({doc: ch.dataset.doc, slug: ch.id, html: new XMLSerializer().serializeToString(clone)});
  }
  return out;
}"""


def launch(p):
    browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS)
    page = browser.new_page(viewport={"width": 576, "height": 900})
    page.set_default_timeout(600000)
    return browser, page


def capture_views(url: str) -> dict:
    """Render the widget sheet and return {views: {model id: html}, css}."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = launch(p)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{url}/__print__/widgets.html", wait_until="load")
        got = page.evaluate(CAPTURE_VIEWS)
        browser.close()
    missing = [k for k, v in got["views"].items() if not v]
    print(f"build_pdf: {len(got['views'])} explorables rendered at their default view in {got['seconds']:.0f} s")
    if missing:
        raise SystemExit(f"build_pdf: {len(missing)} explorable(s) did not render ({missing[:3]}): {errors[:3]}")
    return got


def render(url: str, pdf_path: Path, print_dir: Path, chapters: list[dict], lang: str, shots_dir: Path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser, page = launch(p)
        errors = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.emulate_media(media="print")
        t0 = time.time()
        page.goto(f"{url}/{PRINT_DOC}", wait_until="load")
        page.evaluate(WAIT_TYPESET)
        print(f"build_pdf: book typeset in {time.time() - t0:.0f} s")
        # The EPUB first: images of the explorables' default views, then XHTML bodies.
        shots_dir.mkdir(parents=True, exist_ok=True)
        shots = []
        for i, el in enumerate(page.query_selector_all(".print-explorable")):
            el.evaluate("(e, i) => e.setAttribute('data-shot', i)", i)
            target = el.query_selector(".widget-subarea") or el
            f = shots_dir / f"explorable-{i:02d}.png"
            target.screenshot(path=str(f))
            shots.append(f)
        epub_pages = page.evaluate(EPUB_EXPORT, {})
        fitted = page.evaluate(FIT_TABLES)
        print(f"build_pdf: {len(fitted)} wide table(s) set smaller to fit the page "
              f"({sum(f['step'] == 3 for f in fitted)} at 6 pt)")
        layout = page.evaluate(LAYOUT_REPORT)
        (print_dir / "layout.json").write_text(json.dumps(layout, indent=1, ensure_ascii=False), encoding="utf-8")

        def pdf():
            page.pdf(path=str(pdf_path), prefer_css_page_size=True, print_background=True, outline=True,
                     tagged=True, display_header_footer=False)

        t1 = time.time()
        pdf()                                              # first printing: where does each chapter begin?
        pages = chapter_pages(pdf_path, page, chapters)
        page.evaluate("(pages) => { for (const el of document.querySelectorAll('.print-toc-page')) "
                      "el.textContent = pages[el.dataset.target] || ''; }", pages)
        pdf()                                              # second printing, with the contents' page numbers
        print(f"build_pdf: printed twice in {time.time() - t1:.0f} s")
        again = chapter_pages(pdf_path, page, chapters)
        if again != pages:
            raise SystemExit(f"build_pdf: page numbers moved between printings: {pages} → {again}")
        browser.close()
    return epub_pages, shots, pages


def chapter_pages(pdf_path: Path, page, chapters: list[dict]) -> dict:
    """The printed page of each chapter's opening, from the PDF's named destinations (Chromium writes one for
    every element a link points at; the contents link to every chapter)."""
    dests = subprocess.run(["pdfinfo", "-dests", str(pdf_path)], capture_output=True, text=True, check=True).stdout
    found = {}
    for line in dests.splitlines():
        m = re.match(r'\s*(\d+)\s+\[.*\]\s+"(.*)"\s*$', line)
        if m:
            found[m.group(2)] = m.group(1)
    return {ch["slug"]: found[ch["slug"]] for ch in chapters if ch["slug"] in found}


# ---------------------------------------------------------------------------------------------------------------
# EPUB packaging
# ---------------------------------------------------------------------------------------------------------------

XHTML = """<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE html>
<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops" lang="{lang}" xml:lang="{lang}">
<head><meta charset="utf-8"/><title>{title}</title><link rel="stylesheet" type="text/css" href="book.css"/></head>
<body>
{body}
</body>
</html>
"""


def xml_escape(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def build_epub(epub_path: Path, site: Path, lang: str, chapters: list[dict], pages: list[dict], shots: list[Path],
               version: str, date: str, t: dict):
    files: dict[str, bytes] = {}
    images: dict[str, str] = {}          # site path -> epub name
    file_of = {ch["slug"]: f"{ch['slug']}.xhtml" for ch in chapters}
    media = {".svg": "image/svg+xml", ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg",
             ".gif": "image/gif", ".webp": "image/webp"}

    def fix(html: str) -> str:
        # XMLSerializer wrote XHTML (namespaced, self-closing voids); make links point at the right files.
        def href(m):
            target = m.group(2)
            if target.startswith("#"):
                frag = target[1:]
                owner = frag.split("--", 1)[0]
                if owner in file_of:
                    return f'{m.group(1)}="{file_of[owner]}#{frag}"' if "--" in frag else f'{m.group(1)}="{file_of[owner]}"'
            return m.group(0)

        html = re.sub(r'(href)="([^"]*)"', href, html)

        def src(m):
            path = m.group(1)
            if path.startswith("/"):
                f = site / unquote(path.lstrip("/"))
                if f.exists() and f.suffix.lower() in media:
                    name = images.setdefault(path, f"img/{len(images):03d}{f.suffix.lower()}")
                    data = f.read_bytes()
                    if f.suffix.lower() == ".svg":   # EPUB 3 forbids external DTDs: matplotlib writes SVG 1.1's
                        data = re.sub(rb"<!DOCTYPE[^\[>]*(\[.*?\]\s*)?>", b"", data, count=1, flags=re.S)
                    files[name] = data
                    return f'src="{name}"'
            return m.group(0)

        html = re.sub(r'src="([^"]*)"', src, html)
        # SVG 2 presentation attributes EPUB 3's SVG 1.1 schema lacks (the chart system's label halo,
        # paint-order="stroke") become the same CSS property in the element's style
        html = PAINT_ORDER_TAG.sub(_svg11_style, html)
        # attributes epubcheck's HTML5 schema rejects
        html = re.sub(r'\s(?:tabindex|aria-[\w-]+|role)="[^"]*"', lambda m: m.group(0) if "aria-label" in m.group(0) or "role" in m.group(0) else "", html)
        return html

    spine = []
    for ch, pg in zip(chapters, pages):
        body = pg["html"]
        # explorables: their image (default view) instead of the widget DOM
        def shot(m):
            i = int(m.group(1))
            name = f"img/explorable-{i:02d}.png"
            files[name] = shots[i].read_bytes()
            return f'<div class="cell_output print-explorable"><img src="{name}" alt="{xml_escape(t["default_view"])}"/></div>'
        body = re.sub(r'<div[^>]*data-shot="(\d+)"[^>]*>.*?(?=<p[^>]*class="print-interactive")', shot, body,
                      flags=re.S)
        files[file_of[ch["slug"]]] = XHTML.format(lang=lang, title=xml_escape(ch["title"]), body=fix(body)).encode()
        spine.append(file_of[ch["slug"]])

    # title page and navigation
    title_body = (f'<section class="title-page"><h1>Steel and Silicon</h1><p>{xml_escape(t["subtitle"])}</p>'
                  f'<p>The Steel and Silicon authors</p><p>{xml_escape(t["edition"])}</p>'
                  f'<p>{xml_escape(t["version"])} {version} · {date}</p><p>{xml_escape(t["note"])}</p></section>')
    files["title.xhtml"] = XHTML.format(lang=lang, title="Steel and Silicon", body=title_body).encode()
    items, last_part, open_part = [], None, False
    for ch in chapters:
        if ch["part"] != last_part and ch["part"]:
            if open_part:
                items.append("</ol></li>")
            items.append(f'<li><a href="{file_of[ch["slug"]]}">{xml_escape(ch["part"])}</a><ol>')
            open_part, last_part = True, ch["part"]
        items.append(f'<li><a href="{file_of[ch["slug"]]}">{xml_escape(ch["title"])}</a></li>')
    if open_part:
        items.append("</ol></li>")
    nav = (f'<nav epub:type="toc" id="toc"><h1>{xml_escape(t["contents"])}</h1><ol>'
           f'<li><a href="title.xhtml">Steel and Silicon</a></li>{"".join(items)}</ol></nav>')
    files["nav.xhtml"] = XHTML.format(lang=lang, title=xml_escape(t["contents"]), body=nav).encode()
    files["book.css"] = (HERE / "epub.css").read_bytes()

    uid = f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, f'steel-and-silicon/{lang}/{version}')}"
    modified = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    manifest = ['<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>',
                '<item id="title" href="title.xhtml" media-type="application/xhtml+xml"/>',
                '<item id="css" href="book.css" media-type="text/css"/>']
    for i, name in enumerate(spine):
        text = files[name].decode()
        props = []
        if "<math" in text:
            props.append("mathml")
        if "<svg" in text:
            props.append("svg")
        if re.search(r'href="https?://', text):
            props.append("remote-resources") if False else None
        prop = f' properties="{" ".join(props)}"' if props else ""
        manifest.append(f'<item id="p{i:02d}" href="{name}" media-type="application/xhtml+xml"{prop}/>')
    for name in sorted(n for n in files if n.startswith("img/")):
        manifest.append(f'<item id="{re.sub(r"[^A-Za-z0-9]", "_", name)}" href="{name}" '
                        f'media-type="{media[Path(name).suffix]}"/>')
    opf = f"""<?xml version="1.0" encoding="utf-8"?>
<package xmlns="http://www.idpf.org/2007/opf" version="3.0" unique-identifier="uid" xml:lang="{lang}">
<metadata xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:identifier id="uid">{uid}</dc:identifier>
<dc:title>Steel and Silicon</dc:title>
<dc:creator>The Steel and Silicon authors</dc:creator>
<dc:language>{lang}</dc:language>
<dc:date>{date}</dc:date>
<dc:description>{xml_escape(t["subtitle"])} — {xml_escape(t["version"])} {version}</dc:description>
<meta property="dcterms:modified">{modified}</meta>
</metadata>
<manifest>
{chr(10).join(manifest)}
</manifest>
<spine>
<itemref idref="title"/>
<itemref idref="nav"/>
{chr(10).join(f'<itemref idref="p{i:02d}"/>' for i in range(len(spine)))}
</spine>
</package>
"""
    files["content.opf"] = opf.encode()
    container = ('<?xml version="1.0" encoding="utf-8"?>\n<container version="1.0" '
                 'xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles>'
                 '<rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/>'
                 '</rootfiles></container>\n')
    with zipfile.ZipFile(epub_path, "w") as z:
        z.writestr(zipfile.ZipInfo("mimetype"), "application/epub+zip", compress_type=zipfile.ZIP_STORED)
        z.writestr("META-INF/container.xml", container, compress_type=zipfile.ZIP_DEFLATED)
        for name, data in files.items():
            z.writestr(f"OEBPS/{name}", data, compress_type=zipfile.ZIP_DEFLATED)


# ---------------------------------------------------------------------------------------------------------------

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lang", default="en", help="edition: en (the site's root) or e.g. zh-CN (_build/html/zh-CN)")
    ap.add_argument("--html", default=str(ROOT / "_build" / "html"), help="the built site")
    ap.add_argument("--toc", default=None, help="the table of contents (default: _toc.yml; for another edition its "
                                                "translated copy, _build/<lang>-src/_toc.yml, whose part captions "
                                                "are in that language)")
    ap.add_argument("--site-url", default=None, help="the published site's address (default: html.baseurl in "
                                                     "_config.yml); without one, explorables name their page")
    ap.add_argument("--only", nargs="*", help="while developing: only these pages (docnames), e.g. chapters/03_interconnect")
    args = ap.parse_args(argv)
    t0 = time.time()
    html_root = Path(args.html)
    site = html_root if args.lang == "en" else html_root / args.lang
    if not (site / "index.html").exists():
        raise SystemExit(f"build_pdf: {site} has no built site: build the {args.lang} edition first")
    config = yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))
    site_url = args.site_url if args.site_url is not None else ((config.get("html") or {}).get("baseurl") or "")
    if site_url and args.lang != "en":
        site_url = site_url.rstrip("/") + "/" + args.lang
    toc = Path(args.toc) if args.toc else ROOT / "_toc.yml"
    if args.toc is None and args.lang != "en":
        toc = ROOT / "_build" / f"{args.lang}-src" / "_toc.yml"
        if not toc.exists():
            raise SystemExit(f"build_pdf: {toc} is missing: build the {args.lang} edition first (make book-zh)")
    entries = toc_entries(toc)
    if args.only:
        entries = [e for e in entries if e["doc"] in args.only]
    version, date = git_version()
    build_date = dt.date.today().isoformat()
    asm = Assembler(site, args.lang, entries, site_url)
    asm.collect()
    print_dir = ROOT / "_build" / "print" / (args.lang + ("-partial" if args.only else ""))
    print_dir.mkdir(parents=True, exist_ok=True)
    (print_dir / "print.css").write_bytes((HERE / "print.css").read_bytes())
    (print_dir / "widgets.html").write_text(asm.widget_sheet(), encoding="utf-8")
    server, url = serve(site, print_dir)
    try:
        got = capture_views(url)
        asm.static_views, asm.widget_css = got["views"], got["css"]
        (print_dir / "book.html").write_text(asm.build(version, build_date), encoding="utf-8")
        out_dir = print_dir if args.only else site        # a partial book never replaces the site's files
        pdf_path, epub_path = out_dir / f"{NAME}.pdf", out_dir / f"{NAME}.epub"
        epub_pages, shots, pages = render(url, pdf_path, print_dir, asm.chapters, args.lang, print_dir / "shots")
    finally:
        server.shutdown()
    build_epub(epub_path, site, args.lang, asm.chapters, epub_pages, shots, version, build_date, asm.t)
    info = subprocess.run(["pdfinfo", str(pdf_path)], capture_output=True, text=True).stdout
    n_pages = re.search(r"Pages:\s+(\d+)", info).group(1)
    summary = {"lang": args.lang, "version": version, "date": build_date, "pdf": str(pdf_path.relative_to(ROOT)),
               "pages": int(n_pages), "pdf_bytes": pdf_path.stat().st_size, "epub_bytes": epub_path.stat().st_size,
               "chapters": {c["slug"]: {"title": c["title"], "page": pages.get(c["slug"])} for c in asm.chapters},
               "explorables": asm.explorables, "solutions": asm.solutions, "seconds": round(time.time() - t0)}
    (print_dir / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False), encoding="utf-8")
    print(f"build_pdf: {pdf_path.relative_to(ROOT)}: {n_pages} pages, {pdf_path.stat().st_size / 1e6:.1f} MB; "
          f"{epub_path.relative_to(ROOT)}: {epub_path.stat().st_size / 1e6:.1f} MB; {asm.explorables} explorables, "
          f"{asm.solutions} solutions moved; {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
