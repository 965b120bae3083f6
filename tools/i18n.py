#!/usr/bin/env python3
"""The book's translations: gettext catalogs of its prose, and a translated copy of its source to build (issue 25).

One source. Code cells, data and outputs are shared by both editions; only prose is translated. Each translatable
block of MyST — a paragraph, a list, a table, a heading, an admonition's title or body paragraph — is one catalog
entry whose ``msgid`` is the English block as written (glue, term, cite, ref and doc roles and maths included) and
whose ``msgstr`` is its translation. A changed English paragraph no longer matches its entry: ``update`` carries
the old translation over marked ``fuzzy`` (with the previous English as ``#| msgid``), so it is flagged for
re-translation, and ``check`` fails until a translator clears the flag.

The translated edition is built from a translated *copy* of the source (``build``): every notebook keeps its code
cells and replaces each markdown block by its translation, so myst-nb's ``{glue}`` roles resolve in the translated
paragraph exactly as in English (Sphinx's own gettext pass re-parses a translated paragraph outside its notebook,
where myst-nb finds no glue data). Then the copy is built as a book of its own, into ``_build/html/zh-CN``.

    python tools/i18n.py update  [--lang zh-CN]        # extract English blocks, merge them into the catalogs
    python tools/i18n.py check   [--lang zh-CN]        # missing or fuzzy entries, spans a translation lost
    python tools/i18n.py build   [--lang zh-CN] --out DIR [--allow-missing]   # the translated source tree
    python tools/i18n.py stats   [--lang zh-CN]        # entries and words per catalog
    python tools/i18n.py todo    --catalog chapters/01_h100 --out F.json [--all]   # entries to translate, as JSON
    python tools/i18n.py fill    --catalog chapters/01_h100 --json F.json     # write a translator's JSON into the catalog
    python tools/i18n.py lib-update --missing F   # add the library words an execution drew in English (F) to its catalog
    python tools/i18n.py lib-check [--missing F]  # the library's catalog complete, placeholders kept, nothing missing

The library's presentation words (axis titles, table headers, controls, messages: :mod:`chipchain._i18n`) have one
catalog of their own, ``lib/chipchain/locale/<ll_CC>/LC_MESSAGES/chipchain.po``, shipped in the package; ``todo`` and
``fill`` take it as ``--catalog chipchain``.

A translator's loop: ``todo`` writes the catalog's untranslated and stale entries as a JSON list of objects
``{"id": English, "str": translation so far, "fuzzy": bool, "previous": old English or null}``; fill in ``str``;
``fill`` writes every non-empty ``str`` back as a current translation (clearing ``fuzzy``) and refuses an entry
whose translation lost a glued value, term, citation, reference, formula, code span or link.

Catalogs: ``locale/<ll_CC>/LC_MESSAGES/<source path without suffix>.po`` (Sphinx's layout), one per chapter and page.
"""
from __future__ import annotations

import argparse
import difflib
import json
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LANGS = {"zh-CN": "zh_CN"}
#: the site's own words that the configuration sets (myst-nb's code toggles)
SITE_TEXT = {"zh-CN": {"nb_code_prompt_show": "显示代码", "nb_code_prompt_hide": "隐藏代码"}}
#: figure and table captions as the edition numbers them (Sphinx's zh_CN catalog leaves "Fig. %s" untranslated)
NUMFIG_FORMAT = {"zh-CN": {"numfig_format": {"figure": "图 %s", "table": "表 %s", "code-block": "代码 %s",
                                              "section": "第 %s 节"}}}

#: how the zh-CN edition cites its three Chinese sources: the references' author labels of the seed documents (the
#: English edition's "Source chapter, 2025" reads 源章节, 2025 in a Chinese paragraph)
BIB_AUTHORS = {"zh-CN": {"Source chapter": "源章节", "Hardware primer": "硬件炼体篇", "Practitioner's article": "从业者文章"}}

# directives whose body is not prose: kept verbatim
_VERBATIM = {"code-cell", "code", "code-block", "math", "raw", "bibliography", "tableofcontents", "toctree",
             "glue:figure", "glue:math", "list-table", "csv-table", "mermaid", "literalinclude", "include"}
# directives whose argument is a title a reader sees
_TITLED = {"admonition", "exercise", "solution", "figure", "topic", "sidebar", "dropdown", "card", "tab-item",
           "table", "note", "warning", "tip", "important", "seealso", "attention", "caution", "danger", "error",
           "hint"}
_FENCE = re.compile(r"^(\s*)(`{3,}|:{3,}|~{3,})(.*?)\s*$")
_OPTION = re.compile(r"^\s*:[\w-]+:")
_TARGET = re.compile(r"^\s*\([^)]+\)=\s*$")


@dataclass(frozen=True)
class Piece:
    """One piece of a markdown text: translatable prose or verbatim structure. ``"".join`` restores the text."""

    text: str
    prose: bool


def pieces(markdown: str) -> list[Piece]:
    """The markdown split into prose blocks and verbatim structure, in order; joined, they are the markdown again.

    >>> [p for p in pieces("# Title\\n\\nSome $x$ text.\\n") if p.prose]
    [Piece(text='# Title', prose=True), Piece(text='Some $x$ text.', prose=True)]
    >>> "".join(p.text for p in pieces("a\\n\\n```python\\nx = 1\\n```\\nb")) == "a\\n\\n```python\\nx = 1\\n```\\nb"
    True
    """
    return _pieces(markdown.splitlines(keepends=True))


def _pieces(lines: list[str]) -> list[Piece]:
    out: list[Piece] = []
    block: list[str] = []

    def keep(text):
        if text:
            out.append(Piece(text, False))

    def flush():
        if block:
            text = "".join(block)
            body = text.rstrip("\n")
            out.append(Piece(body, True))
            keep(text[len(body):])
            block.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        stripped = line.strip()
        if not stripped:
            flush()
            keep(line)
            i += 1
        elif fence:
            flush()
            indent, marks, info = fence.groups()
            j = i + 1
            close = re.compile(r"^\s*" + re.escape(marks[0]) + "{" + str(len(marks)) + r",}\s*$")
            depth = 0
            while j < len(lines):
                inner = _FENCE.match(lines[j])
                if close.match(lines[j]) and depth == 0:
                    break
                if inner and inner.group(2)[0] == marks[0] and inner.group(3) and len(inner.group(2)) >= len(marks):
                    depth += 1                         # a nested fence of the same kind, written as long
                elif close.match(lines[j]):
                    depth -= 1
                j += 1
            body = lines[i + 1:j]
            end = lines[j] if j < len(lines) else ""
            if info.startswith("{") and "}" in info:
                name = info[1:info.index("}")]
                title = info[info.index("}") + 1:].strip()
                if title and name in _TITLED:
                    head = line[:line.index(title)]
                    keep(head)
                    out.append(Piece(title, True))
                    keep(line[line.index(title) + len(title):])
                else:
                    keep(line)
                k = 0
                if body and body[0].strip() == "---":            # YAML options block
                    k = 1
                    while k < len(body) and body[k].strip() != "---":
                        k += 1
                    k += 1
                while k < len(body) and _OPTION.match(body[k]):
                    k += 1
                keep("".join(body[:k]))
                if name in _VERBATIM:
                    keep("".join(body[k:]))
                else:
                    out.extend(_pieces(body[k:]))
            else:                                   # a code block: verbatim
                keep(line + "".join(body))
            keep(end)
            i = j + 1
        elif stripped.startswith("$$"):
            flush()
            j = i
            if not (len(stripped) > 2 and stripped.endswith("$$")):
                j = i + 1
                while j < len(lines) and not lines[j].rstrip().endswith("$$"):
                    j += 1
            keep("".join(lines[i:j + 1]))
            i = j + 1
        elif _TARGET.match(line):                   # a (label)= target
            flush()
            keep(line)
            i += 1
        elif not block and (stripped.startswith("<!--") or stripped.startswith("<")) \
                and not stripped.startswith('<p class="cc-run">'):     # the "run this chapter" line is prose
            flush()                                 # an HTML block: verbatim up to the next blank line
            j = i
            while j + 1 < len(lines) and lines[j + 1].strip():
                j += 1
            keep("".join(lines[i:j + 1]))
            i = j + 1
        else:
            block.append(line)
            i += 1
    flush()
    return out


# --- what a translation must keep --------------------------------------------------------------------------------
_ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$[^$\n]+?(?:\n[^$\n]+?)?\$", re.S)   # inline maths may wrap one line
_CODE = re.compile(r"(?<![`{}\w])`([^`\n]+)`")


def spans(text: str) -> Counter:
    """What a translation of ``text`` must keep, as a multiset: glued values (key and format), glossary terms and
    references (their targets: the words a translation may change are the shown text), citations (their keys),
    maths, inline code and links' targets.

    >>> sorted(spans("{glue:text}`ch01_mem:.0f` GB of {term}`HBM <High-bandwidth memory>`, $x^2$ {cite:p}`a2024`"))
    [('cite', 'a2024'), ('glue:text', 'ch01_mem:.0f'), ('math', '$x^2$'), ('term', 'High-bandwidth memory')]
    """
    found: Counter = Counter()
    rest = text
    for m in _ROLE.finditer(text):
        role, content = m.groups()
        if role in ("term", "ref", "doc", "numref", "eq", "download", "prf:ref"):
            target = re.search(r"<([^<>]+)>\s*$", content)
            found[(role, (target.group(1) if target else content).strip())] += 1
        elif role.startswith("cite"):
            for key in content.split(","):
                found[("cite", key.strip())] += 1
        else:
            found[(role, content)] += 1
    rest = _ROLE.sub(" ", text)
    for m in _MATH.finditer(rest):
        found[("math", m.group(0))] += 1
    rest = _MATH.sub(" ", rest)
    for m in _CODE.finditer(rest):
        found[("code", m.group(1))] += 1
    for m in re.finditer(r"\]\(([^)\s]+)\)", rest):
        found[("link", m.group(1))] += 1
    return found


def lost_spans(msgid: str, msgstr: str) -> list[str]:
    """The spans of ``msgid`` that ``msgstr`` lacks or has in another number (empty when the translation keeps
    them all)."""
    want, got = spans(msgid), spans(msgstr)
    return [f"{kind} {value!r}" for (kind, value), n in sorted(want.items()) if got[(kind, value)] != n] + \
           [f"extra {kind} {value!r}" for (kind, value), n in sorted(got.items()) if (kind, value) not in want]


# --- the book's sources --------------------------------------------------------------------------------------------
def sources(root: Path = ROOT) -> list[Path]:
    """Every page of the table of contents, in its order (notebooks and Markdown)."""
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    files = re.findall(r"^\s*(?:root|- file):\s*(\S+)", toc, flags=re.M)
    out = []
    for f in files:
        for suffix in (".ipynb", ".md"):
            if (root / (f + suffix)).exists():
                out.append(root / (f + suffix))
                break
        else:
            raise FileNotFoundError(f"_toc.yml names {f}, which is neither {f}.ipynb nor {f}.md")
    return out


def toc_captions(root: Path = ROOT) -> list[str]:
    """The book's title (``_config.yml``) and the table of contents' part captions: the ``_toc`` catalog."""
    config = (root / "_config.yml").read_text(encoding="utf-8")
    title = re.search(r'^title:\s*"?(.+?)"?\s*$', config, flags=re.M).group(1)
    return [title] + re.findall(r"^\s*- caption:\s*(.+?)\s*$", (root / "_toc.yml").read_text(encoding="utf-8"),
                                flags=re.M)


def blocks(path: Path):
    """(location, Piece) for every prose piece of one page; the location is the cell's number (from 1) in a notebook,
    the line number in a Markdown page."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        for index, cell in enumerate(nb["cells"]):
            if cell["cell_type"] != "markdown":
                for text in _metadata_prose(cell).values():
                    yield index + 1, Piece(text, True)
                continue
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            for piece in pieces(src):
                if piece.prose:
                    yield index + 1, piece
    else:
        text = path.read_text(encoding="utf-8")
        body, front = _split_front_matter(text)
        line = front.count("\n") + 1
        for piece in pieces(body):
            if piece.prose:
                yield line, piece
            line += piece.text.count("\n")


#: prose a code cell carries in its metadata (myst-nb's figure caption and image alt text), by key path
_METADATA_PROSE = (("mystnb", "figure", "caption"), ("mystnb", "image", "alt"))


def _metadata_prose(cell) -> dict:
    """{key path: text} of the prose in a code cell's metadata (a figure's caption, an image's alt text)."""
    out = {}
    for path in _METADATA_PROSE:
        node = cell.get("metadata", {})
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str) and node.strip():
            out[path] = node
    return out


def _split_front_matter(text: str):
    if text.startswith("---\n"):
        end = text.index("\n---\n", 4) + 5
        return text[end:], text[:end]
    return text, ""


#: where the catalogs are read from instead of ``<root>/locale`` (``--locale DIR``: a scratch copy to try a build with)
LOCALE: Path | None = None


def locale_base(lang: str, root: Path = ROOT) -> Path:
    return (LOCALE if LOCALE is not None and root == ROOT else root / "locale") / LANGS[lang] / "LC_MESSAGES"


def catalog_path(page: Path, lang: str, root: Path = ROOT) -> Path:
    rel = page.relative_to(root).with_suffix(".po")
    return locale_base(lang, root) / rel


# --- catalogs ------------------------------------------------------------------------------------------------------
def read_catalog(path: Path):
    """A catalog, with each fuzzy entry's previous English (``#| msgid``), which babel's reader drops."""
    import ast

    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f, abort_invalid=True)
    for entry in path.read_text(encoding="utf-8").split("\n\n"):
        if "#| msgid" not in entry:
            continue
        # babel wraps the previous English (``#| msgid``) as a comment, at spaces and inside its string literals,
        # so the literals are re-joined across the wrapped lines before they are read
        lines = entry.splitlines()
        prev_text = " ".join(line[3:] for line in lines if line.startswith("#| ")).removeprefix("msgid ")
        prev = [ast.literal_eval(f'"{m}"') for m in re.findall(r'"((?:[^"\\]|\\.)*)"', prev_text)]
        cur, part = [], None
        for line in lines:
            if line.startswith("msgid "):
                part, line = cur, line[len("msgid "):]
            elif line.startswith("msgstr") or line.startswith("#"):
                part = None
                continue
            if part is not None and line.startswith('"'):
                part.append(ast.literal_eval(line))
        msgid = "".join(cur)
        if msgid in catalog:
            catalog[msgid].previous_id = ["".join(prev)]
    return catalog


def write_catalog(path: Path, catalog) -> None:
    from babel.messages.pofile import write_po

    for m in catalog:                      # babel guesses printf/brace formats from the text when it reads; prose has none
        m.flags.discard("python-format")
        m.flags.discard("python-brace-format")

    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, catalog, width=0, include_previous=True, sort_output=False)


def update(lang: str, root: Path = ROOT) -> dict:
    """Merge the English blocks of every page into its catalog; report new, fuzzy and obsolete entries."""
    from babel.messages.catalog import Catalog

    report = {}
    pages = [(p, list(blocks(p))) for p in sources(root)]
    pages.append((root / "_toc.yml", [(i + 1, Piece(c, True)) for i, c in enumerate(toc_captions(root))]))
    for page, found in pages:
        path = catalog_path(page, lang, root) if page.suffix != ".yml" else \
            locale_base(lang, root) / "_toc.po"
        old = read_catalog(path) if path.exists() else None
        cat = Catalog(locale=LANGS[lang], project="Steel and Silicon", fuzzy=False, version="1",
                      creation_date=old.creation_date if old else None,     # re-running changes nothing
                      revision_date=old.revision_date if old else None,
                      header_comment=f"# {page.relative_to(root)}: the {lang} translation of its prose "
                                     f"(tools/i18n.py; one entry per English block)")
        old_ids = {m.id: m for m in old if m.id} if old else {}
        counts = Counter()
        rel = str(page.relative_to(root))
        for where, piece in found:
            if piece.text in cat:
                cat[piece.text].locations.append((rel, where))
                continue
            prev = old_ids.get(piece.text)
            if prev is not None:
                cat.add(piece.text, prev.string, locations=[(rel, where)], flags=prev.flags,
                        previous_id=prev.previous_id, user_comments=prev.user_comments)
                counts["fuzzy" if "fuzzy" in prev.flags else ("kept" if prev.string else "missing")] += 1
                continue
            near = difflib.get_close_matches(piece.text, [k for k, m in old_ids.items() if m.string], n=1,
                                             cutoff=0.6)
            if near:
                cat.add(piece.text, old_ids[near[0]].string, locations=[(rel, where)], flags=("fuzzy",),
                        previous_id=near[0])
                counts["fuzzy"] += 1
            else:
                cat.add(piece.text, "", locations=[(rel, where)])
                counts["missing"] += 1
        used = {m.id for m in cat if m.id}
        for k, m in old_ids.items():
            if k not in used and m.string:
                cat.obsolete[k] = m
                counts["obsolete"] += 1
        for m in cat:                      # babel guesses printf/brace formats from the text; prose has none
            m.flags.discard("python-format")
            m.flags.discard("python-brace-format")
        write_catalog(path, cat)
        report[rel] = dict(counts)
    return report


def translations(lang: str, root: Path = ROOT) -> dict[str, dict[str, str]]:
    """Current (non-fuzzy, non-empty) translations per catalog: {source path: {English: translation}}."""
    out = {}
    base = locale_base(lang, root)
    for po in sorted(base.rglob("*.po")) if base.exists() else []:
        rel = str(po.relative_to(base).with_suffix(""))
        out[rel] = {m.id: m.string for m in read_catalog(po) if m.id and m.string and "fuzzy" not in m.flags}
    return out


def check(lang: str, root: Path = ROOT) -> list[str]:
    """Every problem a reader of the translated edition would meet: English blocks with no current translation
    (missing or fuzzy) and translations that lost a glued value, term, citation, reference or formula."""
    problems = []
    base = locale_base(lang, root)
    for page in [*sources(root), root / "_toc.yml"]:
        rel = page.relative_to(root)
        po = base / ("_toc.po" if page.suffix == ".yml" else rel.with_suffix(".po"))
        if not po.exists():
            problems.append(f"{rel}: no catalog ({po.relative_to(root)}); run tools/i18n.py update")
            continue
        entries = {m.id: m for m in read_catalog(po) if m.id}
        found = list(blocks(page)) if page.suffix != ".yml" else [(i + 1, Piece(c, True))
                                                                    for i, c in enumerate(toc_captions(root))]
        for where, piece in found:
            m = entries.get(piece.text)
            if m is None:
                problems.append(f"{rel} {where}: not in the catalog (run tools/i18n.py update): {piece.text[:60]!r}")
            elif not m.string:
                problems.append(f"{rel} {where}: not translated: {piece.text[:60]!r}")
            elif "fuzzy" in m.flags:
                problems.append(f"{rel} {where}: the English changed, translation is stale: {piece.text[:60]!r}")
            else:
                lost = lost_spans(piece.text, m.string)
                if lost:
                    problems.append(f"{rel} {where}: the translation lost {', '.join(lost)}")
    return problems


def _translated_or_missing(text: str, table: dict[str, str], missing: list) -> str:
    """A metadata caption (one block, whole): its translation, or the English noted as missing."""
    if text in table:
        return table[text]
    missing.append(text)
    return text


def translate_markdown(text: str, table: dict[str, str], missing: list) -> str:
    out = []
    for piece in pieces(text):
        if piece.prose:
            t = table.get(piece.text)
            if t is None:
                missing.append(piece.text)
                t = piece.text
            out.append(t)
        else:
            out.append(piece.text)
    return "".join(out)


def build(lang: str, out: Path, root: Path = ROOT, allow_missing: bool = False) -> dict:
    """Write the translated source tree to ``out``: the book's files with every prose block translated."""
    table = translations(lang, root)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    for name in ("book", "chapters", "labs", "figures"):
        shutil.copytree(root / name, out / name)
    missing: list[str] = []
    for page in sources(root):
        rel = str(page.relative_to(root).with_suffix(""))
        t = table.get(rel, {})
        target = out / page.relative_to(root)
        if page.suffix == ".ipynb":
            nb = json.loads(page.read_text(encoding="utf-8"))
            for cell in nb["cells"]:
                if cell["cell_type"] == "markdown":
                    src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
                    cell["source"] = translate_markdown(src, t, missing)
                for path, text in _metadata_prose(cell).items():      # a figure's caption, an image's alt
                    node = cell["metadata"]
                    for key in path[:-1]:
                        node = node[key]
                    node[path[-1]] = _translated_or_missing(text, t, missing)
            nb["metadata"]["language_info"] = nb["metadata"].get("language_info", {})
            target.write_text(json.dumps(nb, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        else:
            body, front = _split_front_matter(page.read_text(encoding="utf-8"))
            target.write_text(front + translate_markdown(body, t, missing), encoding="utf-8")
    bib = out / "book" / "references.bib"
    if bib.exists() and BIB_AUTHORS.get(lang):
        text = bib.read_text(encoding="utf-8")
        for english, label in BIB_AUTHORS[lang].items():
            text = text.replace(f"author = {{{{{english}}}}}", f"author = {{{{{label}}}}}")
        bib.write_text(text, encoding="utf-8")
    toc = (root / "_toc.yml").read_text(encoding="utf-8")
    caps = table.get("_toc", {})
    title, *captions = toc_captions(root)
    for c in [title, *captions]:
        if c not in caps:
            missing.append(c)
    for c in captions:
        toc = toc.replace(f"- caption: {c}\n", f"- caption: {caps.get(c, c)}\n")
    (out / "_toc.yml").write_text(toc, encoding="utf-8")
    import yaml

    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8"))
    config["title"] = caps.get(title, title)
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["language"] = LANGS[lang]                  # Sphinx's own labels, sphinx-exercise's 练习 / 解答, search
    sphinx.update(NUMFIG_FORMAT.get(lang, {}))
    sphinx.update(SITE_TEXT.get(lang, {}))
    if lang.startswith("zh"):        # Sphinx's zh search splits words with jieba; the term base keeps terms whole
        words = out / "search_terms.txt"
        words.write_text("".join(f"{w}\n" for w in search_terms(root)), encoding="utf-8")
        sphinx["html_search_options"] = {"dict": str(words.resolve())}
    (out / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    if (root / "_site_assets").exists():
        (out / "_site_assets").symlink_to(root / "_site_assets")
    if missing and not allow_missing:
        raise SystemExit(f"i18n build: {len(missing)} blocks have no current {lang} translation "
                         f"(tools/i18n.py check lists them; --allow-missing keeps them in English)")
    return {"blocks_missing": len(missing)}


def search_terms(root: Path = ROOT) -> list[str]:
    """The glossary's Chinese terms (its "Chinese: …" clauses: every run of two or more Han characters), as a
    jieba user dictionary for the zh edition's search index: jieba's own dictionary splits 张量并行 into 张量 / 并行,
    so a reader searching for the term would find nothing; with the term in the dictionary, ``cut_for_search`` indexes
    the whole term and its parts.

    >>> "张量并行" in search_terms() and "显存" in search_terms()
    True
    """
    glossary = root / "book" / "glossary.md"
    text = glossary.read_text(encoding="utf-8") if glossary.exists() else ""
    found = set()
    for clause in re.findall(r"Chinese:\s*([^\n]*?)(?:\.\s|\.$|$)", text, flags=re.M):
        found.update(re.findall(r"[\u4e00-\u9fff]{2,}", clause))
    return sorted(found)


def stats(lang: str, root: Path = ROOT) -> list[tuple[str, int, int, int, int]]:
    """(catalog, entries, translated, English words, Chinese characters) per catalog."""
    rows = []
    base = locale_base(lang, root)
    for po in sorted(base.rglob("*.po")):
        cat = [m for m in read_catalog(po) if m.id]
        done = [m for m in cat if m.string and "fuzzy" not in m.flags]
        words = sum(len(re.findall(r"[A-Za-z]+(?:'[a-z]+)?", m.id)) for m in cat)
        han = sum(len(re.findall(r"[\u4e00-\u9fff]", m.string)) for m in done)
        rows.append((str(po.relative_to(base)), len(cat), len(done), words, han))
    return rows


#: the library's own catalog (its presentation words: chipchain._i18n), named "chipchain" in todo/fill/check
LIB_CATALOG = "chipchain"


def lib_catalog_path(lang: str, root: Path = ROOT) -> Path:
    return root / "lib" / "chipchain" / "locale" / LANGS[lang] / "LC_MESSAGES" / "chipchain.po"


def _catalog_file(catalog: str, lang: str, root: Path = ROOT) -> Path:
    if catalog.removesuffix(".po") == LIB_CATALOG:
        return lib_catalog_path(lang, root)
    path = locale_base(lang, root) / (catalog.removesuffix(".po") + ".po")
    if not path.exists():
        names = sorted(str(p.relative_to(path.parents[len(Path(catalog).parts) - 1]).with_suffix(""))
                       for p in (locale_base(lang, root)).rglob("*.po"))
        near = difflib.get_close_matches(catalog, names, n=3, cutoff=0.3)
        raise SystemExit(f"i18n: no catalog {catalog!r}; nearest: {', '.join(near) or ', '.join(names[:5])}")
    return path


def todo(catalog: str, lang: str, everything: bool = False, root: Path = ROOT) -> list[dict]:
    """The catalog's entries still to translate (missing or fuzzy), or all of them with ``everything``."""
    out = []
    for m in read_catalog(_catalog_file(catalog, lang, root)):
        if not m.id:
            continue
        fuzzy = "fuzzy" in m.flags
        if everything or fuzzy or not m.string:
            prev = m.previous_id[0] if m.previous_id else None
            out.append({"id": m.id, "str": m.string or "", "fuzzy": fuzzy, "previous": prev})
    return out


def fill(catalog: str, lang: str, entries: list[dict], root: Path = ROOT) -> dict:
    """Write translations into the catalog; an entry whose translation loses a span is refused (reported)."""
    path = _catalog_file(catalog, lang, root)
    cat = read_catalog(path)
    report = {"written": 0, "refused": [], "unknown": []}
    for e in entries:
        text = (e.get("str") or "").strip("\n")
        if not text:
            continue
        m = cat.get(e["id"])
        if m is None or not m.id:
            report["unknown"].append(e["id"][:60])
            continue
        if catalog.removesuffix(".po") == LIB_CATALOG:       # the library's words: plain text with {fields}
            lost = [] if sorted(_PLACEHOLDER.findall(e["id"])) == sorted(_PLACEHOLDER.findall(text)) \
                else ["placeholders " + " ".join(sorted(set(_PLACEHOLDER.findall(e["id"]))))]
        else:
            lost = lost_spans(e["id"], text)
        if lost:
            report["refused"].append(f"{e['id'][:60]!r}: lost {', '.join(lost)}")
            continue
        m.string = text
        m.flags.discard("fuzzy")
        m.previous_id = []
        report["written"] += 1
    write_catalog(path, cat)
    return report


# --- the library's catalog (issue 25: presentation words from chipchain, Python's gettext) -----------------------
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}")


def _missing_strings(path: Path) -> list[str]:
    """The strings a zh execution reported missing (``CHIPCHAIN_I18N_MISSING``), once each, in order."""
    if path is None or not path.exists():
        return []
    seen = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            seen.setdefault(json.loads(line), None)
    return list(seen)


def lib_update(lang: str, missing: Path, root: Path = ROOT) -> dict:
    """Add the strings an execution reported missing to the library's catalog, untranslated."""
    from babel.messages.catalog import Catalog

    path = lib_catalog_path(lang, root)
    cat = read_catalog(path) if path.exists() else Catalog(locale=LANGS[lang], project="chipchain")
    added = 0
    for text in _missing_strings(missing):
        if text not in cat:
            cat.add(text, "")
            added += 1
    header = path.read_text(encoding="utf-8").split("msgid", 1)[0] if path.exists() else ""
    write_catalog(path, cat)
    if header.strip():                                     # babel rewrites the header; keep the file's comments
        body = path.read_text(encoding="utf-8")
        body = "\n".join(l for l in body.split("msgid", 1)[0].splitlines() if not l.startswith("#")) \
            + "msgid" + body.split("msgid", 1)[1]
        path.write_text(header + body.lstrip("\n"), encoding="utf-8")
    return {"added": added, "entries": len([m for m in cat if m.id])}


def lib_check(lang: str, missing: Path | None = None, root: Path = ROOT) -> list[str]:
    """Problems of the library's catalog: an entry untranslated or fuzzy, a translation whose ``{placeholders}``
    differ from its English, and any string an execution reported missing (``--missing``)."""
    path = lib_catalog_path(lang, root)
    problems = []
    if not path.exists():
        return [f"chipchain: no catalog {path.relative_to(root)}"]
    for m in read_catalog(path):
        if not m.id:
            continue
        if not m.string:
            problems.append(f"chipchain: untranslated: {m.id[:80]!r}")
        elif "fuzzy" in m.flags:
            problems.append(f"chipchain: fuzzy: {m.id[:80]!r}")
        elif sorted(_PLACEHOLDER.findall(m.id)) != sorted(_PLACEHOLDER.findall(m.string)):
            problems.append(f"chipchain: placeholders differ: {m.id[:60]!r} → {m.string[:60]!r}")
    for text in _missing_strings(missing):
        problems.append(f"chipchain: drawn in English in the {lang} edition (not in the catalog): {text[:100]!r}")
    return problems


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["update", "check", "build", "stats", "todo", "fill", "lib-update", "lib-check"])
    ap.add_argument("--missing", type=Path, help="lib-update/lib-check: the strings an execution reported missing")
    ap.add_argument("--json", type=Path, help="fill: the translator's JSON file")
    ap.add_argument("--catalog", help="todo/fill/check: one catalog, e.g. chapters/01_h100")
    ap.add_argument("--all", action="store_true", help="todo: every entry, translated or not")
    ap.add_argument("--lang", default="zh-CN", choices=sorted(LANGS))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--allow-missing", action="store_true")
    ap.add_argument("--locale", type=Path, help="read the catalogs from DIR (its <ll_CC>/LC_MESSAGES) instead of locale/")
    args = ap.parse_args(argv)
    if args.locale is not None:
        global LOCALE
        LOCALE = args.locale.resolve()
    if args.command == "update":
        for page, counts in update(args.lang).items():
            print(f"{page}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    elif args.command == "check":
        problems = check(args.lang)
        if args.catalog:
            problems = [p for p in problems if p.startswith(args.catalog.removesuffix(".po") + ".")]
        for p in problems[:200]:
            print(p)
        print(f"i18n check: {len(problems)} problems")
        return 1 if problems else 0
    elif args.command == "lib-update":
        if args.missing is None:
            ap.error("lib-update needs --missing FILE")
        print(lib_update(args.lang, args.missing))
    elif args.command == "lib-check":
        problems = lib_check(args.lang, args.missing)
        for p in problems[:200]:
            print(p)
        print(f"i18n lib-check: {len(problems)} problems")
        return 1 if problems else 0
    elif args.command == "todo":
        if not args.catalog or not args.out:
            ap.error("todo needs --catalog and --out")
        items = todo(args.catalog, args.lang, args.all)
        args.out.write_text(json.dumps(items, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        print(f"{args.catalog}: {len(items)} entries to {args.out}")
    elif args.command == "fill":
        if not args.catalog or not args.json:
            ap.error("fill needs --catalog and a JSON file")
        report = fill(args.catalog, args.lang, json.loads(args.json.read_text(encoding="utf-8")))
        print(f"{args.catalog}: {report['written']} written, {len(report['refused'])} refused, "
              f"{len(report['unknown'])} not in the catalog")
        for r in report["refused"] + [f"not in the catalog: {u!r}" for u in report["unknown"]]:
            print("  " + r)
        return 1 if report["refused"] or report["unknown"] else 0
    elif args.command == "build":
        if args.out is None:
            ap.error("build needs --out DIR")
        print(build(args.lang, args.out, allow_missing=args.allow_missing))
    else:
        rows = stats(args.lang)
        for name, n, done, words, han in rows:
            print(f"{name:45s} {done:5d}/{n:<5d} entries  {words:7d} English words  {han:7d} Chinese characters")
        print(f"total: {sum(r[2] for r in rows)}/{sum(r[1] for r in rows)} entries, "
              f"{sum(r[3] for r in rows)} English words, {sum(r[4] for r in rows)} Chinese characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
