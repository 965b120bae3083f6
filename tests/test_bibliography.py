"""The bibliography: every citation resolves, every entry is cited, and every entry has enough to find the source.

Citations are MyST roles (``{cite}`k1,k2` ``, ``{cite:p}``, ``{cite:t}`` and the other sphinxcontrib-bibtex
variants) in the markdown cells of ``chapters/*.ipynb`` and in ``book/*.md`` / ``book/*.ipynb``. Keys live in
``book/references.bib``. The strict site build already fails on an unknown key; this test names the file and the key
without a 3-minute build, and it is the only check that catches an entry nobody cites.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIB = ROOT / "book" / "references.bib"

CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
ENTRY = re.compile(r"^@(\w+)\s*\{\s*([^,\s]+)\s*,", re.M)
#: where a reader can look the source up: a venue, a publisher, an address
LOCATORS = ("journal", "booktitle", "publisher", "howpublished", "url", "doi", "eprint", "institution", "school",
            "organization")


def sources() -> list[Path]:
    files = sorted((ROOT / "chapters").glob("*.ipynb")) + sorted((ROOT / "chapters").glob("*.md"))
    files += sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "book").glob("*.ipynb"))
    return [f for f in files if ".ipynb_checkpoints" not in f.parts]


def markdown_of(path: Path) -> str:
    """The text a reader sees: markdown cells of a notebook, or the whole .md file."""
    if path.suffix == ".ipynb":
        nb = json.loads(path.read_text(encoding="utf-8"))
        return "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "markdown")
    return path.read_text(encoding="utf-8")


def cited_keys(text: str) -> list[str]:
    """Keys of every citation role in ``text``.

    >>> cited_keys("as {cite:p}`kaplan2020scaling, hoffmann2022chinchilla` and {cite:t}`horowitz2014energy` show")
    ['kaplan2020scaling', 'hoffmann2022chinchilla', 'horowitz2014energy']
    """
    return [k.strip() for group in CITE.findall(text) for k in group.split(",") if k.strip()]


def citations() -> dict[str, list[str]]:
    """key -> files citing it."""
    out: dict[str, list[str]] = {}
    for path in sources():
        for key in cited_keys(markdown_of(path)):
            out.setdefault(key, []).append(str(path.relative_to(ROOT)))
    return out


def bib_keys() -> list[str]:
    return [key for kind, key in ENTRY.findall(BIB.read_text(encoding="utf-8")) if kind.lower() not in
            ("comment", "preamble", "string")]


def test_there_is_something_to_check():
    assert bib_keys(), "book/references.bib has no entries"
    assert citations(), "no {cite} roles found in chapters/ or book/"


def test_no_duplicate_keys():
    dupes = [k for k, n in Counter(bib_keys()).items() if n > 1]
    assert not dupes, f"duplicate keys in references.bib: {dupes}"


def test_every_citation_resolves():
    known = set(bib_keys())
    missing = {k: files for k, files in citations().items() if k not in known}
    assert not missing, "cited but not in book/references.bib: " + "; ".join(
        f"{k} (in {', '.join(sorted(set(f)))})" for k, f in sorted(missing.items()))


def test_every_entry_is_cited():
    cited = set(citations())
    unused = [k for k in bib_keys() if k not in cited]
    assert not unused, f"entries in book/references.bib that nothing cites: {unused}"


def test_every_entry_can_be_found():
    from pybtex.database import parse_file

    problems = []
    for key, entry in parse_file(str(BIB)).entries.items():
        fields = {k.lower() for k in entry.fields}
        lacks = [name for name, ok in (("author or editor", entry.persons or "organization" in fields),
                                       ("title", "title" in fields), ("year", "year" in fields),
                                       ("a venue, publisher or address", fields & set(LOCATORS))) if not ok]
        if lacks:
            problems.append(f"{key} lacks {', '.join(lacks)}")
    assert not problems, "; ".join(problems)


def _steel_bib():
    import sys

    sys.path.insert(0, str(ROOT / "book" / "_ext"))
    import steel_bib  # the site's citation style (book/_ext/steel_bib.py), as _config.yml loads it

    return steel_bib


def test_citation_labels_name_one_source_each():
    """Two sources never render as the same "[NVIDIA, 2022]": colliding author–years get a/b suffixes."""
    config = (ROOT / "_config.yml").read_text(encoding="utf-8")
    assert "bibtex_reference_style: steel_author_year" in config and "bibtex_default_style: steel" in config
    labels = _steel_bib().load([BIB])
    rendered = Counter(f"{author}, {year}" for author, year in labels.values())
    assert not [lab for lab, n in rendered.items() if n > 1], "citation labels that name two sources"
    # the three source documents are told apart by name, not only by a suffix
    seeds = {labels[k][0] for k in ("seed000", "seed002", "seed004")}
    assert len(seeds) == 3, f"the three source documents share an author label: {seeds}"


def test_rendered_entries_have_no_stray_markup():
    """What the references page prints: no "\\$4.5 billion", no TeX braces or commands left over."""
    import pybtex.plugin
    from pybtex.database import parse_file

    _steel_bib()
    style = pybtex.plugin.find_plugin("pybtex.style.formatting", "steel")()
    backend = pybtex.plugin.find_plugin("pybtex.backends", "plaintext")()
    # \url{...} is the one command the site turns into a link (checked on the built page by tests/browser/test_fonts.py)
    bad = [f"{fe.key}: {text[:80]}" for fe in style.format_entries(parse_file(str(BIB)).entries.values())
           if re.search(r"[\\{}]", text := fe.text.render(backend).replace("\\url ", ""))]
    assert not bad, "entries that render with a backslash or brace: " + "; ".join(bad)


@pytest.mark.parametrize("text, keys", [
    ("{cite}`a2020x`", ["a2020x"]),
    ("{cite:p}`a2020x,b2021y`", ["a2020x", "b2021y"]),
    ("{cite:ps}`a2020x` then `{cite}` prose", ["a2020x"]),
    ("no roles, just `code`", []),
])
def test_cite_pattern(text, keys):
    assert cited_keys(text) == keys
