"""Author–year citations a reader can follow: every label names one source.

sphinxcontrib-bibtex's ``author_year`` style renders two NVIDIA documents of 2022 both as "NVIDIA, 2022", and the
``plain`` bibliography numbers its entries [1]…[114], so a reader cannot tell which entry a citation means. This
extension registers

* ``steel`` — a pybtex formatting style: ``plain`` entries, titles kept as written (``plain`` lower-cases every
  word, turning "Zhenwu V900" into "zhenwu v900" and "American" into "american"), each labelled with its
  author–year citation, e.g. ``[NVIDIA, 2022a]``;
* ``steel_author_year`` — a referencing style: ``author_year`` with the same a/b/c suffix on the year, so the text
  says "NVIDIA, 2022a" and the references page lists "[NVIDIA, 2022a]"; sources cited together are separated by
  semicolons.

Colliding labels (same rendered author and year) get suffixes a, b, c … in bibliography order (author, year,
title). ``author_year_labels`` is the one place the labels are computed; ``tests/test_bibliography.py`` uses it.
Configured in ``_config.yml`` (``bibtex_default_style: steel``, ``bibtex_reference_style: steel_author_year``).
"""
from __future__ import annotations

import string
from dataclasses import dataclass
from dataclasses import field as dc_field
from pathlib import Path

import pybtex.plugin
from pybtex.richtext import Text
from pybtex.style.formatting.plain import Style as PlainStyle
from pybtex.style.labels import BaseLabelStyle
from pybtex.style.template import field, first_of, optional, sentence
from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle
from sphinxcontrib.bibtex.style.referencing.basic_author_year import (
    BasicAuthorYearParentheticalReferenceStyle, BasicAuthorYearTextualReferenceStyle)
from sphinxcontrib.bibtex.style.referencing.extra_author import ExtraAuthorReferenceStyle
from sphinxcontrib.bibtex.style.referencing.extra_empty import ExtraEmptyReferenceStyle
from sphinxcontrib.bibtex.style.referencing.extra_label import ExtraLabelReferenceStyle
from sphinxcontrib.bibtex.style.referencing.extra_year import ExtraYearReferenceStyle
from sphinxcontrib.bibtex.style.template import join, join2, node, post_text, pre_text, reference

#: key -> year with its suffix ("2022a"); filled from the configured .bib files when Sphinx starts
_YEARS: dict[str, str] = {}


def _plain(text) -> str:
    return text.render(pybtex.plugin.find_plugin("pybtex.backends", "plaintext")())


def author_year_labels(entries) -> dict[str, tuple[str, str]]:
    """key -> (author as cited, year with suffix) for pybtex ``entries`` (a key -> Entry mapping).

    The author is rendered by sphinxcontrib-bibtex's own template (last names, "and", *et al.*), so the text here is
    the text a reader sees. Entries whose (author, year) coincide get "a", "b", … in bibliography order.
    """
    person = PersonStyle()
    template = person.author_or_editor_or_title(full=False)
    style = type("_Style", (), {"person": person})
    authors = {k: _plain(template.format_data({"entry": e, "style": style})) for k, e in entries.items()}
    years = {k: e.fields.get("year", "n.d.") for k, e in entries.items()}
    ordered = pybtex.plugin.find_plugin("pybtex.style.sorting", "author_year_title")().sort(list(entries.values()))
    groups: dict[tuple[str, str], list[str]] = {}
    for e in ordered:
        groups.setdefault((authors[e.key], years[e.key]), []).append(e.key)
    out = {}
    for (author, year), keys in groups.items():
        for i, key in enumerate(keys):
            suffix = "" if len(keys) == 1 else _suffix(i)
            out[key] = (author, year + suffix)
    return out


def _suffix(i: int) -> str:
    letters = string.ascii_lowercase
    return letters[i] if i < 26 else letters[i // 26 - 1] + letters[i % 26]


def load(bibfiles) -> dict[str, tuple[str, str]]:
    """Labels for every entry of the given .bib files (parsed with pybtex, as sphinxcontrib-bibtex does)."""
    from pybtex.database import BibliographyData, parse_file

    data = BibliographyData()
    for path in bibfiles:
        for key, entry in parse_file(str(path)).entries.items():
            data.entries[key] = entry
    return author_year_labels(data.entries)


@node
def year_suffixed(children, data):
    """The entry's year with its collision suffix ("2022a")."""
    assert not children
    key = data["entry"].key
    if key in _YEARS:
        return Text(_YEARS[key])
    return first_of[optional[field("year")], "n.d."].format_data(data)


class SteelLabelStyle(BaseLabelStyle):
    """Bibliography labels equal to the author–year citation text: "NVIDIA, 2022a"."""

    def format_labels(self, sorted_entries):
        entries = list(sorted_entries)
        labels = author_year_labels({e.key: e for e in entries})
        for e in entries:
            author, year = labels[e.key]
            yield f"{author}, {_YEARS.get(e.key, year)}"


class SteelStyle(PlainStyle):
    """``plain`` with author–year labels and titles left as written."""

    default_label_style = "steel_author_year"

    def format_title(self, e, which_field, as_sentence=True):
        title = field(which_field)
        return sentence[title] if as_sentence else title


@dataclass
class _Parenthetical(BasicAuthorYearParentheticalReferenceStyle):
    def inner(self, role_name):
        return join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[
            pre_text,
            reference[join(sep=self.author_year_sep)[
                self.person.author_or_editor_or_title(full="s" in role_name), year_suffixed]],
            post_text,
        ]


@dataclass
class _Textual(BasicAuthorYearTextualReferenceStyle):
    def inner(self, role_name):
        return join(sep=self.text_reference_sep)[
            self.person.author_or_editor_or_title(full="s" in role_name),
            join[self.bracket.left,
                 join2(sep1=self.pre_text_sep, sep2=self.post_text_sep)[pre_text, reference[year_suffixed],
                                                                         post_text],
                 self.bracket.right],
        ]


@dataclass
class _Year(ExtraYearReferenceStyle):
    def inner(self, role_name):
        return reference[year_suffixed]


@dataclass
class SteelReferenceStyle(AuthorYearReferenceStyle):
    """``author_year`` whose years carry the collision suffix; several sources in one citation are separated by
    semicolons: "[NVIDIA, 2022a; NVIDIA, 2024d]", not "[NVIDIA, 2022a, NVIDIA, 2024d]"; a textual citation reads
    "Dao (2023)"."""

    bracket_textual: BracketStyle = dc_field(default_factory=lambda: BracketStyle(left="(", right=")", sep="; "))
    bracket_parenthetical: BracketStyle = dc_field(default_factory=lambda: BracketStyle(sep="; "))
    bracket_author: BracketStyle = dc_field(default_factory=lambda: BracketStyle(sep="; "))
    bracket_label: BracketStyle = dc_field(default_factory=lambda: BracketStyle(sep="; "))
    bracket_year: BracketStyle = dc_field(default_factory=lambda: BracketStyle(sep="; "))

    def __post_init__(self):
        self.styles.extend([
            _Parenthetical(bracket=self.bracket_parenthetical, person=self.person,
                           author_year_sep=self.author_year_sep, pre_text_sep=self.pre_text_sep,
                           post_text_sep=self.post_text_sep),
            _Textual(bracket=self.bracket_textual, person=self.person, text_reference_sep=self.text_reference_sep,
                     pre_text_sep=self.pre_text_sep, post_text_sep=self.post_text_sep),
            ExtraAuthorReferenceStyle(bracket=self.bracket_author, person=self.person),
            ExtraLabelReferenceStyle(bracket=self.bracket_label),
            _Year(bracket=self.bracket_year),
            ExtraEmptyReferenceStyle(),
        ])
        # skip AuthorYearReferenceStyle.__post_init__ (it would add the unsuffixed styles); run the group's own
        super(AuthorYearReferenceStyle, self).__post_init__()


def _config_inited(app, config):
    _YEARS.clear()
    files = [Path(app.confdir) / f for f in (config.bibtex_bibfiles or [])]
    _YEARS.update({k: year for k, (_, year) in load(files).items()})


pybtex.plugin.register_plugin("pybtex.style.labels", "steel_author_year", SteelLabelStyle)
pybtex.plugin.register_plugin("pybtex.style.formatting", "steel", SteelStyle)
register_plugin("sphinxcontrib.bibtex.style.referencing", "steel_author_year", SteelReferenceStyle)


def setup(app):
    app.connect("config-inited", _config_inited)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
