"""`make lab`: JupyterLab on a reader's copy of the book, with the prose rendered as on the website.

The chapters' Markdown is MyST for Jupyter Book. In JupyterLab the jupyterlab-myst extension (pinned in
``requirements.lock``) renders MyST — admonitions, exercises, dropdowns, maths — but it does not know myst-nb's
``{glue:}`` roles (their values live in the notebook's own outputs), Sphinx's ``{term}`` (the glossary is another
page) or sphinxcontrib-bibtex's ``{cite:p}``/``{cite:t}`` (the bibliography is a .bib file). So this tool writes a
reader's copy of every chapter and lab into ``_build/lab/`` (the notebooks in the repository are never touched), in
which

- every ``{glue:}``/``{glue:text}`` role is replaced by its value, read from the notebook's stored glue output and
  formatted as myst-nb formats it (``{glue:text}`key:.1f``` → ``7.0``);
- every ``{term}`` becomes a link to the term's entry in ``glossary.ipynb``, written beside the chapters: one
  read-only Markdown cell per entry, its cell id naming the term, linked as ``glossary.ipynb#cell-id=term-…``, which
  JupyterLab 4's notebook scrolls to (:func:`glossary_notebook` says why this form and not another);
- every ``{cite:p}``/``{cite:t}`` becomes the author–year text the website shows (``book/_ext/steel_bib.py`` computes
  the labels, a/b suffixes included), linked to ``references.md``, the bibliography in plain Markdown;
- every ``{doc}`` becomes a link to the chapter's notebook or the page's text;
- every exercise's solution becomes a collapsed ``{dropdown}``: the reader sees "Solution" and clicks to open it;
- the website-only "Run this chapter" line is dropped, and the code of cells the website hides (``remove-cell``,
  ``hide-input``, ``remove-input``) is collapsed (``jupyter.source_hidden``);
- every stored explorer and "Predict first" control gets a note above it saying that it is the stored view and
  does not respond until its cell has run (a widget restored from the notebook's saved state looks live but has no
  kernel behind it); running the cell replaces the note;

writes into each copy's metadata the ``kernelspec`` and ``language_info`` that the kernel it names reports on this
machine (JupyterLab rewrites both when the kernel starts, and a notebook executed under another Python or a kernelspec
named "Python 3" rather than "Python 3 (ipykernel)" showed as modified the moment it opened), and then signs each
copy as trusted for the user running it (what ``jupyter trust`` does), so that stored SVG and HTML outputs — figures,
tables, explorables' last views — display without re-running. ``--serve`` then starts JupyterLab
on the copy (with ``--allow-root`` only when run as root, which JupyterLab otherwise refuses).

Run from the project root:  .venv/bin/python tools/lab_book.py [--output-dir _build/lab] [--serve [lab args…]]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "lib"))
from chipchain.notebook import GLUE_PREFIX  # noqa: E402  (one constant: the prefix myst-nb gives undisplayed glue)
from chipchain.units import space_percent  # noqa: E402  (the book's one rule for "50 %", as the site's glue)
SOURCES = ("chapters", "labs")
HIDDEN_TAGS = {"remove-cell", "hide-input", "remove-input", "hide-cell"}

_ROLE = re.compile(r"\{(glue|glue:|glue:text|glue:md|glue:any|term|cite:p|cite:t|cite|doc)\}`([^`]*)`")
_SOLUTION = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
_RUN_LINE = re.compile(r'^<p class="cc-run">.*?</p>\s*$\n?', re.M | re.S)


# ---------------------------------------------------------------------------------------------------- glue values
def glue_values(nb: dict) -> dict[str, str]:
    """name -> text/plain of every glued value the notebook stores (myst-nb's scrapbook outputs)."""
    out = {}
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            sb = o.get("metadata", {}).get("scrapbook")
            if not sb:
                continue
            data = o.get("data", {})
            text = data.get(sb.get("mime_prefix", "") + "text/plain", data.get("text/plain"))
            if text is not None:
                out[sb["name"]] = "".join(text) if isinstance(text, list) else text
    return out


def format_plain(text: str, fmt: str) -> str:
    """A text/plain glue value formatted as myst-nb's ``{glue:text}`` formats it (myst_nb.core.variables)."""
    numpy_scalar = re.fullmatch(r"np\.\w+\((.*)\)", text.strip())    # NumPy 2's repr: np.float64(46.05)
    try:
        value = ast.literal_eval(numpy_scalar.group(1) if numpy_scalar else text)
    except (SyntaxError, ValueError):
        value = text
    if fmt == "":
        return str(value)
    kind = fmt[-1]
    if kind == "s":
        value = str(value)
    elif kind in "bcdoxX":
        value = int(value)
    elif kind in "eEfFgGn%":
        value = float(value)
    return format(value, fmt)


def _escape(text: str) -> str:
    """Glued text placed in Markdown: a dollar sign must not open maths, a star or underscore not emphasis."""
    return re.sub(r"([$*_\\`<])", r"\\\1", text)


# ---------------------------------------------------------------------------------------------- glossary, references
def glossary(path: Path = ROOT / "book" / "glossary.md") -> dict[str, tuple[str, str]]:
    """lower-cased term (every alias line) -> (the entry's first term, its definition) from the ``{glossary}``."""
    text = path.read_text(encoding="utf-8")
    m = re.search(r"^(`{3,}|:{3,})\{glossary\}[^\n]*\n(.*?)^\1", text, re.S | re.M)
    if not m:
        raise RuntimeError(f"no {{glossary}} directive in {path}")
    entries, terms, definition = {}, [], []

    def flush():
        if terms:
            for t in terms:
                entries[t.lower()] = (terms[0], " ".join(definition).strip())

    for line in m.group(2).splitlines():
        if not line.strip() or line.startswith(":"):
            continue
        if line[0].isspace():
            definition.append(line.strip())
        else:
            if definition:
                flush()
                terms, definition = [], []
            terms.append(line.strip())
    flush()
    return entries


def bibliography(path: Path = ROOT / "book" / "references.bib") -> dict[str, dict]:
    """key -> {author, year, title, url} with the website's author–year labels (book/_ext/steel_bib.py)."""
    from pybtex.database import parse_file

    entries = parse_file(str(path)).entries
    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    try:
        import steel_bib
        labels = steel_bib.author_year_labels(entries)
    except ImportError:       # the extension is the one place labels are computed; without it, last names
        labels = {k: (" and ".join(p.last_names[0] for p in e.persons.get("author", [])[:2]) or k,
                      e.fields.get("year", "n.d.")) for k, e in entries.items()}
    finally:
        sys.path.pop(0)
    out = {}
    for key, e in entries.items():
        author, year = labels[key]
        url = e.fields.get("url") or (f"https://doi.org/{e.fields['doi']}" if "doi" in e.fields else "")
        title = re.sub(r"[{}\\]", "", e.fields.get("title", ""))
        out[key] = {"author": author.replace("{", "").replace("}", ""), "year": year, "title": title, "url": url,
                    "note": re.sub(r"[{}\\]", "", e.fields.get("howpublished", ""))}
    return out


# ----------------------------------------------------------------------------------------------------- rendering
class Renderer:
    """Turns one notebook's MyST roles into Markdown that jupyterlab-myst renders."""

    def __init__(self, glue: dict[str, str], terms: dict, refs: dict, depth: int, name: str):
        self.glue, self.terms, self.refs, self.name = glue, terms, refs, name
        self.up = "../" * depth
        self.unresolved: list[str] = []

    def role(self, m: re.Match) -> str:
        kind, content = m.group(1), m.group(2)
        if kind.startswith("glue"):
            return self.glued(kind, content)
        if kind == "term":
            return self.term(content)
        if kind.startswith("cite"):
            return self.cite(kind, content)
        return self.doc(content)

    def glued(self, kind: str, content: str) -> str:
        key, fmt = content, ""
        if kind == "glue:text":     # myst-nb: ``key:format``, the format "s" when there is none
            key, fmt = content.rsplit(":", 1) if ":" in content else (content, "s")
        if key not in self.glue:
            self.unresolved.append(f"{self.name}: glue {key!r} has no stored value")
            return f"**[{key}: run the notebook]**"
        value = self.glue[key]
        try:
            text = format_plain(value, fmt) if kind == "glue:text" else value
            if kind == "glue:text" and fmt.endswith("%"):     # spaced, as book/_ext/steel_glue.py does on the site
                text = space_percent(text)
        except ValueError:
            self.unresolved.append(f"{self.name}: glue {key!r} = {value!r} does not take the format {fmt!r}")
            text = value
        if kind != "glue:text" and re.fullmatch(r"'[^']*'|\"[^\"]*\"", text):
            text = text[1:-1]
        return _escape(text)

    def term(self, content: str) -> str:
        m = re.fullmatch(r"(.*?)\s*<([^>]+)>", content.strip(), re.S)
        text, target = (m.group(1), m.group(2)) if m else (content, content)
        entry = self.terms.get(target.strip().lower())
        if not entry:
            self.unresolved.append(f"{self.name}: term {target!r} is not in the glossary")
            return text
        return self.term_markup(text, entry)

    def term_markup(self, text: str, entry: tuple[str, str]) -> str:
        """A resolved glossary term: a link to the term's cell in the glossary notebook written beside the chapters,
        which JupyterLab's notebook scrolls to: the glossary opens at the term, not at its top."""
        return f"[{text}]({self.up}{GLOSSARY}#cell-id={term_anchor(entry[0])})"

    def cite(self, kind: str, content: str) -> str:
        parts = []
        for key in (k.strip() for k in content.split(",") if k.strip()):
            ref = self.refs.get(key)
            if not ref:
                self.unresolved.append(f"{self.name}: citation {key!r} is not in references.bib")
                parts.append(key)
                continue
            label = f'{ref["author"]} ({ref["year"]})' if kind == "cite:t" else f'{ref["author"]}, {ref["year"]}'
            parts.append(self.cite_markup(label, ref))
        return ", ".join(parts) if kind == "cite:t" else "(" + "; ".join(parts) + ")"

    def cite_markup(self, label: str, ref: dict) -> str:
        """A resolved citation: the website's author–year label, linked to the references page."""
        return f"[{label}]({self.up}references.md)"

    def doc(self, content: str) -> str:
        m = re.fullmatch(r"(.*?)\s*<([^>]+)>", content.strip(), re.S)
        text, target = (m.group(1), m.group(2)) if m else (None, content.strip())
        path = target.lstrip("/")
        stem = path.split("/")[-1]
        if "chapters/" in path or "labs/" in path:
            folder = "chapters" if "chapters/" in path else "labs"
            return f"[{text or stem}]({self.up}{folder}/{stem}.ipynb)"
        return text or stem.replace("_", " ").capitalize()

    def markdown(self, src: str) -> str:
        src = _RUN_LINE.sub("", src)
        src = _SOLUTION.sub(self._dropdown, src)
        return _ROLE.sub(self.role, src)

    @staticmethod
    def _dropdown(m: re.Match) -> str:
        body = "\n".join(line for line in m.group("body").splitlines() if not re.match(r"^:(class|label):", line))
        fence = m.group("fence")
        return f"{fence}{{dropdown}} Solution\n{body.strip()}\n{fence}"


_DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{(?P<kind>admonition|exercise|solution|note|tip|warning|important|"
                        r"dropdown)\}(?P<arg>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.S | re.M)
_TARGET = re.compile(r"^\([\w:.-]+\)=[ \t]*\n", re.M)


def plain_text(markdown: str, refs: dict | None = None) -> str:
    """Markdown (a glossary definition) as one line of plain text, for a ``title`` attribute: citations as
    "(Author, Year)" from ``refs``, other roles reduced to their text, emphasis, code and link marks dropped, quotes
    and angle brackets escaped for HTML."""
    def cited(m: re.Match) -> str:
        labels = [f'{refs[k]["author"]}, {refs[k]["year"]}' if refs and k in refs else k
                  for k in (k.strip() for k in m.group(2).split(",")) if k]
        return f'{labels[0].replace(", ", " (")})' if m.group(1) == "cite:t" and len(labels) == 1 \
            else "(" + "; ".join(labels) + ")"

    text = re.sub(r"\{(cite:p|cite:t|cite)\}`([^`]*)`", cited, markdown)
    text = re.sub(r"\{[\w:]+\}`([^`<]*?)\s*(?:<[^>]*>)?`", r"\1", text)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_`$]", "", text)
    return " ".join(text.split()).replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")


class LiteRenderer(Renderer):
    """Turns one chapter's MyST into what JupyterLite's plain Markdown renderer shows well (the lite site carries no
    jupyterlab-myst: 8 MB the browser kernel does not need): glued values as text, a glossary term as the term with
    its definition on hover (``<abbr title>``), a citation as the website's author–year text with the work's title
    on hover, admonitions and exercises as quoted blocks (``<blockquote>``) with their title in bold, and each solution folded in a
    ``<details>`` the reader opens. Exercises carry the website's numbers (``first_exercise`` onwards)."""

    def __init__(self, glue: dict[str, str], terms: dict, refs: dict, name: str, first_exercise: int = 1):
        super().__init__(glue, terms, refs, 1, name)
        self.exercise = first_exercise - 1
        self.numbers: dict[str, int] = {}

    def term_markup(self, text: str, entry: tuple[str, str]) -> str:
        return f'<abbr title="{entry[0]}: {plain_text(entry[1], self.refs)}">{text}</abbr>'

    def cite_markup(self, label: str, ref: dict) -> str:
        return f'<abbr title="{plain_text(ref["title"])}">{label}</abbr>'

    def doc(self, content: str) -> str:
        m = re.fullmatch(r"(.*?)\s*<([^>]+)>", content.strip(), re.S)
        text, target = (m.group(1), m.group(2)) if m else (None, content.strip())
        stem = target.lstrip("/").split("/")[-1]
        if "chapters/" in target:         # the lite site holds the chapters, side by side
            return f"[{text or stem}]({stem}.ipynb)"
        return text or stem.replace("_", " ").capitalize()

    def directive(self, m: re.Match) -> str:
        kind, arg = m.group("kind"), m.group("arg").strip()
        options = dict(re.findall(r"^:(\w+):[ \t]*(.*)$", m.group("body"), re.M))
        body = "\n".join(line for line in m.group("body").splitlines() if not re.match(r"^:\w+:", line)).strip()
        body = _DIRECTIVE.sub(self.directive, body)
        if kind == "solution":
            number = self.numbers.get(arg)
            title = f"Solution to Exercise {number}" if number else "Solution"
            return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>\n"
        if kind == "exercise":
            self.exercise += 1
            if "label" in options:
                self.numbers[options["label"]] = self.exercise
            title = f"Exercise {self.exercise}" + (f" ({arg})" if arg else "")
        else:
            title = arg or kind.capitalize()
        if kind == "dropdown":
            return f"<details><summary>{title}</summary>\n\n{body}\n\n</details>\n"
        # an HTML block then Markdown after a blank line (CommonMark): the body keeps its maths, lists and code as
        # they are, where a "> " before every line would end up inside multi-line $$ maths
        return f"<blockquote>\n\n**{title}**\n\n{body}\n\n</blockquote>\n"

    def markdown(self, src: str) -> str:
        src = _RUN_LINE.sub("", src)
        src = _TARGET.sub("", src)
        src = _DIRECTIVE.sub(self.directive, src)
        return _literal_dollars(_ROLE.sub(self.role, src))


def _literal_dollars(markdown: str) -> str:
    """An escaped dollar (``\\$0.12``) as the HTML entity ``&#36;``, outside code: JupyterLab's own Markdown renderer
    (JupyterLite has no jupyterlab-myst) looks for maths before it reads escapes, so "\\$0.12 … \\$510,000" would
    become one formula."""
    parts = re.split(r"(`+[^`]*`+)", markdown)
    return "".join(p if p.startswith("`") else p.replace("\\$", "&#36;") for p in parts)


def lite_copies(notebooks: list[dict], names: list[str]) -> tuple[list[dict], list[str]]:
    """Every chapter in ``notebooks`` (in the book's order) rendered for JupyterLite by :class:`LiteRenderer`, the
    exercises numbered on from one chapter to the next as on the website; plus what stayed raw."""
    terms, refs = glossary(), bibliography()
    out, unresolved, first = [], [], 1
    for nb, name in zip(notebooks, names):
        r = LiteRenderer(glue_values(nb), terms, refs, name, first)
        out.append(rendered(nb, r))
        unresolved += r.unresolved
        first = r.exercise + 1
    return out, unresolved


def rendered(nb: dict, r: Renderer) -> dict:
    """A copy of ``nb`` with its Markdown rendered by ``r`` and the code of the cells the website hides collapsed."""
    cells = []
    for cell in nb["cells"]:
        cell = json.loads(json.dumps(cell))
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if cell["cell_type"] == "markdown":
            cell["source"] = r.markdown(src)
        elif cell["cell_type"] == "code" and HIDDEN_TAGS & set(cell.get("metadata", {}).get("tags", [])):
            cell.setdefault("metadata", {}).setdefault("jupyter", {})["source_hidden"] = True
        cells.append(cell)
    return {**nb, "cells": cells}


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
#: said on every stored explorer and "Predict first" control in the JupyterLab copy (issue 28 item 4): before its cell
#: has run, a control shows its stored view and does not respond; running the cell replaces the note with a live one
STALE_NOTE = ("Stored view: these controls do not respond until the cell has run. Run the cells above first "
              "(Run ▸ Run All Above Selected Cell), then this one (Shift+Enter).")


def stale_note() -> dict:
    """The output put above a stored widget view: plain text and the same line as HTML, in the book's grey."""
    html = ('<p class="cc-stale" style="margin:.2em 0 .4em;padding:.3em .6em;border-left:3px solid #E69F00;'
            f'background:#fff8e6;color:#333;font-size:.9em">▶ {STALE_NOTE}</p>')
    return {"output_type": "display_data", "metadata": {}, "data": {"text/plain": STALE_NOTE, "text/html": html}}


def mark_stale_widgets(nb: dict) -> dict:
    """``nb`` with :func:`stale_note` above every stored widget view (explorers, "Predict first" questions)."""
    for cell in nb["cells"]:
        outputs = cell.get("outputs") or []
        if cell["cell_type"] == "code" and any(WIDGET_VIEW in o.get("data", {}) for o in outputs):
            cell["outputs"] = [stale_note()] + outputs
    return nb


def reader_copy(nb: dict, terms: dict, refs: dict, depth: int = 1, name: str = "") -> tuple[dict, list[str]]:
    """The notebook with its Markdown rendered for JupyterLab, its hidden code collapsed and its stored controls
    marked as stored (:func:`mark_stale_widgets`); plus what stayed raw."""
    r = Renderer(glue_values(nb), terms, refs, depth, name)
    return mark_stale_widgets(rendered(nb, r)), r.unresolved


def term_anchor(term: str) -> str:
    """The cell id of a glossary entry in the reader's copy: ``"Liquid cooling"`` → ``term-liquid-cooling`` (letters,
    digits and hyphens: a valid nbformat cell id that needs no escaping in a URL fragment).

    >>> term_anchor("Liquid cooling"), term_anchor("FP8 (E4M3)")
    ('term-liquid-cooling', 'term-fp8-e4m3')
    """
    return "term-" + re.sub(r"[^a-z0-9]+", "-", term.lower()).strip("-")


def glossary_entries(terms: dict, refs: dict) -> list[tuple[str, str]]:
    """(cell id, Markdown) of every glossary entry, in alphabetical order: the entry's terms in bold (its first term,
    then its aliases) and its definition, its roles rendered as in the chapters."""
    if not terms:
        raise ValueError("glossary_entries: no terms")
    r = Renderer({}, terms, refs, 0, "glossary")
    seen, out = set(), []
    for first, definition in sorted(set(terms.values()), key=lambda e: e[0].lower()):
        if first in seen:
            continue
        seen.add(first)
        aliases = sorted({t for t, e in terms.items() if e[0] == first and t != first.lower()})
        names = first + "".join(f" / {a}" for a in aliases)
        anchor = term_anchor(first)
        if not re.fullmatch(r"term-[a-z0-9-]{1,59}", anchor) or anchor in {a for a, _ in out}:
            raise ValueError(f"glossary term {first!r} gives the cell id {anchor!r}: empty, too long or not unique")
        out.append((anchor, f"**{names}** — {_ROLE.sub(r.role, definition)}"))
    return out


GLOSSARY = "glossary.ipynb"
GLOSSARY_INTRO = ("# Glossary\n\nThe terms the chapters link, each with its definition (as in the book's glossary "
                  "page). A term's link in a chapter opens this notebook at the term.")


def glossary_notebook(terms: dict, refs: dict, metadata: dict) -> dict:
    """The glossary as a notebook: one Markdown cell per entry, its cell id the entry's :func:`term_anchor` (what a
    chapter's ``glossary.ipynb#cell-id=…`` link names), every cell read-only (``editable: false``).

    Why this form. jupyterlab-myst renders a Markdown file without its fragment (a ``glossary.md#…`` link opened at
    the top). In a notebook, JupyterLab 4 resolves ``#cell-id=`` from the notebook's model, so it works the moment the
    notebook opens; a fragment naming an element (``#term-…``) is looked up in the rendered cells, which do not exist
    yet when a link opens the notebook (``NotebookPanel.setFragment`` runs once the file is read). Landing on a cell,
    JupyterLab activates it, which opens a Markdown cell for editing, unless the cell is read-only and the notebook
    setting ``showEditorForReadOnlyMarkdown`` is off: :data:`LAB_OVERRIDES`, which :func:`lab_command` gives the
    server. ``metadata`` is the chapters' kernel metadata, so that opening the glossary neither asks for a kernel nor
    marks it as modified."""
    if not isinstance(metadata, dict) or "kernelspec" not in metadata:
        raise ValueError(f"glossary_notebook: notebook metadata with a kernelspec is required, not {metadata!r}")
    readonly = {"editable": False, "deletable": False}
    cells = [{"cell_type": "markdown", "id": "glossary", "metadata": dict(readonly), "source": GLOSSARY_INTRO}]
    cells += [{"cell_type": "markdown", "id": anchor, "metadata": dict(readonly), "source": text}
              for anchor, text in glossary_entries(terms, refs)]
    return {"cells": cells, "metadata": dict(metadata), "nbformat": 4, "nbformat_minor": 5}


#: JupyterLab setting defaults for the reader's copy (a user's own settings still win): a read-only Markdown cell stays
#: rendered when JupyterLab activates it, as it does for the glossary entry a link lands on
LAB_OVERRIDES = {"@jupyterlab/notebook-extension:tracker": {"showEditorForReadOnlyMarkdown": False}}
#: where :func:`prepare` writes them, inside the copy (hidden from JupyterLab's file browser)
SETTINGS_DIR = ".lab-settings"


def references_page(refs: dict) -> str:
    lines = ["# References", ""]
    for key, ref in sorted(refs.items(), key=lambda kv: (kv[1]["author"].lower(), kv[1]["year"])):
        title = f"[{ref['title']}]({ref['url']})" if ref["url"] else ref["title"]
        lines += [f"- **{ref['author']}, {ref['year']}**. {title}." + (f" {ref['note']}." if ref["note"] else ""), ""]
    return "\n".join(lines)


def sign(paths) -> None:
    """Mark each notebook trusted for this user (``jupyter trust``), so stored SVG/HTML outputs display."""
    import nbformat
    from nbformat.sign import NotebookNotary

    notary = NotebookNotary()
    for path in paths:
        notary.sign(nbformat.read(str(path), as_version=4))


def kernel_metadata(name: str, timeout: float = 60) -> dict:
    """``{"kernelspec": …, "language_info": …}`` as JupyterLab writes them into a notebook once kernel ``name`` has
    started (``NotebookPanel._updateSpec`` and ``_updateLanguage``): the installed kernelspec's name, display name and
    language, and the language_info that the kernel itself answers to a ``kernel_info`` request (one kernel is
    started for the question and shut down)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    from jupyter_client.manager import start_new_kernel

    if not isinstance(name, str) or not name:
        raise ValueError(f"kernel_metadata: a kernel name is required, not {name!r}")
    try:
        spec = KernelSpecManager().get_kernel_spec(name)
    except NoSuchKernel as exc:
        raise ValueError(f"kernel_metadata: no kernel {name!r} is installed") from exc
    km, kc = start_new_kernel(kernel_name=name, startup_timeout=timeout,     # its start-up warnings are not ours
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        reply = kc.kernel_info(reply=True, timeout=timeout)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return {"kernelspec": {"name": name, "display_name": spec.display_name, "language": spec.language},
            "language_info": reply["content"]["language_info"]}


def prepare(output_dir: Path = ROOT / "_build" / "lab", trust: bool = True) -> dict:
    """Write the reader's copy into ``output_dir``; return ``{"notebooks": [...], "unresolved": [...]}`` (the
    notebooks: every chapter and lab, then the glossary)."""
    from nbformat.validator import normalize

    terms, refs = glossary(), bibliography()
    if output_dir.exists():
        shutil.rmtree(output_dir)
    written, unresolved, kernels = [], [], {}
    for folder in SOURCES:
        for path in sorted((ROOT / folder).glob("*.ipynb")):
            nb = json.loads(path.read_text(encoding="utf-8"))
            copy, missing = reader_copy(nb, terms, refs, depth=1, name=f"{folder}/{path.name}")
            kernel = copy["metadata"].get("kernelspec", {}).get("name", "python3")
            if kernel not in kernels:
                kernels[kernel] = kernel_metadata(kernel)
            copy["metadata"] = {**copy["metadata"], **kernels[kernel]}
            with warnings.catch_warnings():     # cell ids where a lab lacks them: what is signed is what is read
                warnings.simplefilter("ignore")
                copy = normalize(copy)[1]
            target = output_dir / folder / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(copy, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
            written.append(target)
            unresolved += missing
    target = output_dir / GLOSSARY
    target.write_text(json.dumps(glossary_notebook(terms, refs, kernels.get("python3") or kernel_metadata("python3")),
                                 indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    written.append(target)
    (output_dir / SETTINGS_DIR).mkdir()
    (output_dir / SETTINGS_DIR / "overrides.json").write_text(json.dumps(LAB_OVERRIDES, indent=1) + "\n")
    (output_dir / "references.md").write_text(references_page(refs), encoding="utf-8")
    if trust:
        sign(written)
    return {"notebooks": written, "unresolved": unresolved}


def lab_command(root: Path, extra=()) -> list[str]:
    """The JupyterLab command line for ``root``: --allow-root only when running as root; the copy's setting defaults
    (:data:`LAB_OVERRIDES`) as the application settings."""
    cmd = [str(Path(sys.executable).with_name("jupyter")), "lab", str(root),
           f"--LabApp.app_settings_dir={Path(root).resolve() / SETTINGS_DIR}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd + list(extra)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "_build" / "lab")
    parser.add_argument("--serve", action="store_true", help="then start JupyterLab on the copy")
    args, extra = parser.parse_known_args(argv)
    result = prepare(args.output_dir)
    for line in result["unresolved"]:
        print(f"lab_book: left as text: {line}", file=sys.stderr)
    print(f"lab_book: {len(result['notebooks'])} notebooks written to {args.output_dir} and trusted; "
          f"{len(result['unresolved'])} roles left as text")
    if args.serve:
        cmd = lab_command(args.output_dir, extra)
        os.execv(cmd[0], cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
