"""The reader's language for what the library draws (issue 25): one gettext catalog, English the default.

The book's zh-CN edition is executed with ``CHIPCHAIN_LANG=zh_CN``; then every word the library puts in front of
a reader — axis titles, legends and direct labels of charts, table headers, captions and notes, explorer controls
and their readouts, headline cards, verdicts, messages such as "does not fit", and the units of durations — is
looked up in ``chipchain/locale/<lang>/LC_MESSAGES/chipchain.po`` (gettext's format, read by Python's
:mod:`gettext` through :class:`Catalog`). Numbers and unit symbols keep the book's conventions in every language
(80 GiB, 989 TFLOP/s, 50 %); names of products, models, papers and people stay as published.

Where the words are translated: at the library's presentation boundaries (:mod:`chipchain.plotting`'s text,
:mod:`chipchain.tables`, :mod:`chipchain.widgets`, :mod:`chipchain.views._layout`), so chapter code that passes
English labels to them needs no change. A label built from numbers is a template translated before it is filled
in: ``_("{n} GPUs").format(n=...)``; the filled text then holds Chinese and is left alone at the boundary.

Nothing is invented: a string the catalog lacks stays English. When ``CHIPCHAIN_I18N_MISSING`` names a file, each
such string that needs a translation (it holds words, not only numbers, units and names) is appended to it once per
process, as a JSON string on a line of its own; the zh build fails while that file is not empty (``tools/i18n.py lib-check``).

>>> with language("zh_CN"):
...     gettext("{n} days").format(n=152), gettext("H100-SXM"), gettext("1,024")
('152 天', 'H100-SXM', '1,024')
>>> gettext("{n} days").format(n=152)
'152 days'
>>> with language("zh_CN"):                       # a filled-in template read back: same numbers, translated words
...     gettext("152 days")
'152 天'
"""
from __future__ import annotations

import contextlib
import gettext as _gettext
import json
import os
import re
from pathlib import Path

from . import _data

__all__ = ["gettext", "_", "lang", "language", "Catalog", "catalog", "needs_translation", "CATALOG_PATH",
           "has_cjk"]

ENV = "CHIPCHAIN_LANG"
MISSING_ENV = "CHIPCHAIN_I18N_MISSING"
_LOCALE = Path(__file__).resolve().parent / "locale"
#: languages the library has a catalog for (``en`` needs none)
LANGUAGES = ("en", "zh_CN")


def CATALOG_PATH(code: str) -> Path:          # noqa: N802 — a path per language, named like the constant it was
    """The catalog file of language ``code`` (``zh_CN``)."""
    return _LOCALE / code / "LC_MESSAGES" / "chipchain.po"


_override: list = []


def lang() -> str:
    """The reader's language: ``en`` or ``zh_CN`` (from ``CHIPCHAIN_LANG``; ``zh-CN``, ``zh`` and ``zh_CN.UTF-8``
    name the same). An unknown language raises ``ValueError`` naming the variable."""
    raw = _override[-1] if _override else os.environ.get(ENV, "")
    code = raw.split(".")[0].replace("-", "_").strip()
    if code in ("", "en", "en_US", "en_GB", "C", "POSIX"):
        return "en"
    if code in ("zh", "zh_CN", "zh_Hans", "zh_Hans_CN"):
        return "zh_CN"
    raise ValueError(f"{ENV}={raw!r}: the library draws in {', '.join(LANGUAGES)}, not {raw!r}")


@contextlib.contextmanager
def language(code: str):
    """Draw in ``code`` inside the ``with`` block (tests, and a reader comparing editions)."""
    _override.append(code)
    try:
        lang()
        yield
    finally:
        _override.pop()


# --- the catalog: a .po file read into Python's gettext -------------------------------------------------------
_PO_STRING = re.compile(r'^"(.*)"\s*$')


def _unquote(text: str) -> str:
    return (text.replace(r"\\", "\x00").replace(r"\"", '"').replace(r"\n", "\n").replace(r"\t", "\t")
            .replace("\x00", "\\"))


def read_po(path) -> list:
    """Entries of a .po file as dicts ``{"id", "str", "fuzzy", "comments"}`` (the header entry left out)."""
    entries, cur, field = [], None, None

    def close():
        if cur is not None and cur["id"]:
            entries.append(cur)

    for raw in Path(path).read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line:
            close()
            cur, field = None, None
            continue
        if cur is None:
            cur = {"id": "", "str": "", "fuzzy": False, "comments": []}
        if line.startswith("#,"):
            cur["fuzzy"] = cur["fuzzy"] or "fuzzy" in line
        elif line.startswith("#"):
            cur["comments"].append(line)
        elif line.startswith("msgid "):
            field, cur["id"] = "id", _unquote(_PO_STRING.match(line[6:]).group(1))
        elif line.startswith("msgstr "):
            field, cur["str"] = "str", _unquote(_PO_STRING.match(line[7:]).group(1))
        elif _PO_STRING.match(line) and field:
            cur[field] += _unquote(_PO_STRING.match(line).group(1))
    close()
    return entries


class Catalog(_gettext.NullTranslations):
    """A gettext catalog read straight from its .po file (no compiled .mo to go stale): fuzzy and empty entries
    are not translations."""

    def __init__(self, path):
        super().__init__()
        self.path = Path(path)
        self.entries = read_po(self.path) if self.path.exists() else []
        self._catalog = {e["id"]: e["str"] for e in self.entries if e["str"] and not e["fuzzy"]}
        self._compiled = None
        self._filled: dict = {}

    def gettext(self, message):
        return self._catalog.get(message, message)

    def fill(self, text: str):
        """``text`` read as one of the catalog's templates filled in, translated: "GPT-3-175B (96 heads)" matches
        "{name} ({heads} heads)" and comes back as its translation filled with the same values. A template must
        hold words of its own (not "{a} {b}"), and a value that is itself words must have a translation, so a
        sentence is never half translated. None when no template reads the text."""
        if text in self._filled:
            return self._filled[text]
        out = None
        for regex, names, translation in self._templates():
            m = regex.match(text)
            if not m:
                continue
            values = {}
            for name in names:
                v = m.group(name)
                if needs_translation(v):
                    v = self._catalog.get(v) or self.fill(v)
                    if v is None:
                        break
                values[name] = v
            else:
                out = _PLACEHOLDER.sub(lambda f: values[f.group(0)[1:-1].split(":")[0].split("!")[0]],
                                       translation)
                break
        self._filled[text] = out
        return out

    def _templates(self):
        if self._compiled is None:
            compiled = []
            for msgid, msgstr in self._catalog.items():
                fields = _PLACEHOLDER.findall(msgid)
                literal = _PLACEHOLDER.sub(" ", msgid)
                if not fields or len(re.findall(r"[A-Za-z]{2,}", literal)) < 1 \
                        or sum(len(w) for w in re.findall(r"[A-Za-z]+", literal)) < 2:
                    continue
                names = [f[1:-1].split(":")[0].split("!")[0] for f in fields]
                if len(set(names)) != len(names) or not all(n.isidentifier() for n in names):
                    continue
                parts = _PLACEHOLDER.split(msgid)
                pattern = "".join(re.escape(p) + (f"(?P<{n}>.+?)" if i < len(names) else "")
                                  for i, (p, n) in enumerate(zip(parts, names + [None])))
                compiled.append((len(literal.replace(" ", "")), re.compile(f"^{pattern}$", re.S), names, msgstr))
            # the template with the most literal text first: the most specific reading wins
            compiled.sort(key=lambda t: -t[0])
            self._compiled = [t[1:] for t in compiled]
        return self._compiled

    def __contains__(self, message) -> bool:
        return message in self._catalog

    def __len__(self) -> int:
        return len(self._catalog)


_catalogs: dict = {}


def catalog(code: str | None = None) -> Catalog:
    """The catalog of language ``code`` (default: the reader's), read once."""
    code = code or lang()
    if code not in _catalogs:
        _catalogs[code] = Catalog(CATALOG_PATH(code))
    return _catalogs[code]


# --- what needs a translation --------------------------------------------------------------------------------
_PLACEHOLDER = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*(?:[:!][^{}]*)?\}")
_LETTERS = re.compile(r"[A-Za-z]{2}")
_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")
#: tokens that read the same in every edition: unit symbols, the book's abbreviations and formats, product words
_INVARIANT = set("""
s ms µs ns us h min B kB KB MB GB TB PB KiB MiB GiB TiB b Gb Tb bit bits W kW MW GW Wh kWh MWh GWh TWh J kJ MJ
FLOP FLOPs FLOP/s TFLOP/s PFLOP/s EFLOP/s GFLOP/s TFLOPs PFLOPs GB/s TB/s MB/s Gb/s Tb/s PB/s Gbps GHz MHz nm mm mm²
TP PP DP EP CP SP ZeRO FSDP MFU HFU GPU GPUs CPU CPUs TPU TPUs NPU NPUs HBM SRAM DRAM KV MoE LLM NVLink NVSwitch PCIe
InfiniBand RoCE BF16 FP16 FP32 FP64 TF32 FP8 FP4 FP6 INT8 INT4 MXFP8 MXFP4 NVFP4 TOPS TPP PD SXM NVL HGX DGX GB200 Adam
AdamW SGD M k K G T P x y n N M_sub e e.g i.e vs a b c d p q v v1 v2 GQA MQA MLA MHA RMSNorm LayerNorm GELU SwiGLU
ReLU softmax Q K V O API CUDA ROCm NCCL RCCL gloo UB AI rank
All-Reduce All-Gather Reduce-Scatter All-to-All all-reduce all-gather reduce-scatter all-to-all
""".split())


def needs_translation(text) -> bool:
    """Whether ``text`` holds words a reader of another language needs translated: not only numbers, unit symbols,
    abbreviations and catalog names, and not already Chinese.

    >>> needs_translation("989 TFLOP/s"), needs_translation("H100-SXM"), needs_translation("TP 8 × PP 4")
    (False, False, False)
    >>> needs_translation("does not fit"), needs_translation("步时间"), needs_translation("Llama-3-70B on 2,048 GPUs")
    (True, False, True)
    >>> needs_translation("LLaMA-7B, LLaMA-13B and LLaMA-65B")      # published runs' names
    False
    >>> needs_translation("{label} {value}"), needs_translation("N = M/d = 1,536"), needs_translation("175B-base")
    (False, False, False)
    """
    s = str(text)
    if not s.strip() or _CJK.search(s):
        return False
    if _is_record(s):
        return False
    s = _PLACEHOLDER.sub(" ", s)                        # a template's {fields} are not words
    for word in re.findall(r"[A-Za-z0-9][A-Za-z0-9'’]*(?:[-/.][A-Za-z0-9]+)*", s):
        if not re.search(r"[A-Za-z]", word):
            continue                                     # a number
        if all(len(part) == 1 for part in re.split(r"[-/.]", word) if part):
            continue                                     # symbols: M/d, s/h, x-y
        if word in _INVARIANT or word.rstrip(".") in _INVARIANT or _is_name(word):
            continue
        if len(word) == 1:
            continue
        return True
    return False


_names_cache: set | None = None


def _is_name(word: str) -> bool:
    """A catalog name (an accelerator, model, link, system or framework) or a product-like token (has a digit, or is
    all capitals), which stays as published."""
    if any(ch.isdigit() for ch in word) or (word.isupper() and len(word) <= 6):
        return True
    global _names_cache
    if _names_cache is None:
        _names_cache = _catalog_names()
    return word in _names_cache


#: the registries whose names stay as published (data files through the one loader, :func:`chipchain._data.rows`)
_NAME_FILES = ("accelerators.csv", "models.csv", "links.csv", "systems.csv", "frameworks.csv", "superpods.csv",
               "serving_devices.csv", "factions.csv")


def _catalog_names() -> set:
    """Words of the registries' names, vendors and families."""
    names: set = set()
    for filename in _NAME_FILES:
        try:
            rows = _data.rows(filename)
        except FileNotFoundError:
            continue
        for row in rows:
            for key in ("name", "vendor", "family", "org", "maker", "framework", "faction", "aliases"):
                value = row.get(key)
                if value:
                    names.update(re.findall(r"[A-Za-z][A-Za-z0-9'’]*(?:[-/.][A-Za-z0-9]+)*", value))
    return names


_records_cache: set | None = None


def _is_record(text: str) -> bool:
    """The whole text is a registry record's name (a published run such as "Qwen3-30B-A3B on 8 H100-SXM (bf16)", a
    node "DGX H100 node"), or a list of them ("A, B and C"): a name, which stays as published."""
    global _records_cache
    if _records_cache is None:
        _records_cache = set()
        for filename, keys in (("published_runs.csv", ("run",)), ("systems.csv", ("name", "node_name")),
                               ("accelerators.csv", ("name",)), ("models.csv", ("name",))):
            try:
                rows = _data.rows(filename)
            except FileNotFoundError:
                continue
            for row in rows:
                _records_cache.update(row[k].strip() for k in keys if row.get(k))
    if text.strip() in _records_cache:
        return True
    parts = [p.strip() for p in re.split(r",\s+(?:and\s+)?|\s+and\s+", text) if p.strip()]   # "2,240" stays whole
    return bool(parts) and all(p in _records_cache for p in parts)


_reported: set = set()


def _report(text: str) -> None:
    target = os.environ.get(MISSING_ENV)
    if not target or text in _reported:
        return
    _reported.add(text)
    with open(target, "a", encoding="utf-8") as fh:        # one JSON string a line
        fh.write(json.dumps(text, ensure_ascii=False) + "\n")


def gettext(text, *, strict: bool = True) -> str:
    """``text`` in the reader's language: its catalog translation, or ``text`` itself (English, or a string that
    needs none). ``strict=False`` (data that may be English by nature, such as a table's text cells) does not report
    a missing translation."""
    if text is None:
        return text
    s = str(text)
    code = lang()
    if code == "en":
        return s
    cat = catalog(code)
    if s in cat:
        return cat.gettext(s)
    if _LETTERS.search(s):                 # a filled-in template (a run's name, a sentence with its numbers)
        filled = cat.fill(s)
        if filled is not None:
            return filled
    if strict and needs_translation(s):
        _report(s)
    return s


_ = gettext


def has_cjk(text) -> bool:
    """Whether ``text`` holds Chinese characters (or full-width punctuation)."""
    return bool(_CJK.search(str(text)))
