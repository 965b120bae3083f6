"""Build the site's Chinese web font: a WOFF2 subset holding exactly the CJK characters the book uses.

The glossary, the references and several chapters quote Chinese terms; on a machine without a CJK font they render
as boxes. The site serves its own fonts, so it serves these glyphs too — only the few hundred characters the book
actually contains (a few hundred kilobytes rather than the whole font's megabytes).

1. Collect every CJK character (ideographs, CJK and full-width punctuation, kana) from the book's text: ``book/``
   (pages, bibliography), every notebook in ``chapters/`` and ``labs/`` (markdown and stored outputs), and the
   library's catalog data and views, which tables and explorables display; for the zh-CN edition (issue 25) the
   translations, every ``msgstr`` of ``locale/**/*.po``, the strings the book's Sphinx extensions and the PDF tool
   write (``book/_ext/*.py``, ``tools/build_pdf.py``), and the Chinese catalogs of what draws the pages around the
   text — Sphinx's, pydata-sphinx-theme's, sphinx-book-theme's and sphinx-exercise's ``zh_CN`` messages (搜索, 目录, 练习, 解答, …).
2. Find the source font: ``$CJK_FONT`` if set (any TrueType/OpenType/TTC file); else the cached copy under
   ``_build/cache/fonts/``; else Debian's ``fonts-wqy-microhei`` (WenQuanYi Micro Hei, Apache-2.0 or GPL-3 with the
   font exception), fetched with ``apt-get download`` and unpacked with ``dpkg-deb -x`` — both work without root; on
   a fresh CI container running as root, ``apt-get update`` is run once if the package index is empty.
3. Subset it with fontTools (``pyftsubset``'s library) to exactly those characters, WOFF2 (Brotli) flavour, and
   write ``_site_assets/fonts/steel-cjk.woff2`` plus the font's licence beside it. ``book/site.css`` declares it as
   the family "Steel CJK" with a CJK ``unicode-range``, first in the site's font stack.

Fails (exit 1) if the font lacks a character the book uses, naming it. Run from the project root:
    python tools/build_cjk_font.py [--out _site_assets/fonts/steel-cjk.woff2] [--list]
``make assets`` (and so ``make book``) runs it.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "_site_assets" / "fonts" / "steel-cjk.woff2"
CACHE = ROOT / "_build" / "cache" / "fonts"
PACKAGE = "fonts-wqy-microhei"
FONT_IN_PACKAGE = "usr/share/fonts/truetype/wqy/wqy-microhei.ttc"
LICENCE_IN_PACKAGE = "usr/share/doc/fonts-wqy-microhei/copyright"

#: the ranges book/site.css gives the font (its @font-face unicode-range); keep the two in step
RANGES = [(0x2E80, 0x2FDF), (0x3000, 0x303F), (0x3040, 0x30FF), (0x3100, 0x312F), (0x31C0, 0x31EF),
          (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF), (0xFE30, 0xFE4F), (0xFF00, 0xFFEF)]
CJK = re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in RANGES) + "]")


def sources() -> list[Path]:
    """The files whose text can reach a page of the site."""
    files = sorted((ROOT / "book").glob("*.md")) + sorted((ROOT / "book").glob("*.bib"))
    files += sorted((ROOT / "book").glob("*.ipynb")) + sorted((ROOT / "chapters").glob("*.ipynb"))
    files += sorted((ROOT / "labs").glob("*.ipynb"))
    lib = ROOT / "lib" / "chipchain"
    files += sorted(lib.glob("data/*.csv")) + sorted(lib.glob("views/*.py")) + sorted(lib.glob("*.py"))
    files += sorted((ROOT / "book" / "_ext").glob("*.py")) + [ROOT / "tools" / "build_pdf.py"]
    files += sorted((LOCALE or ROOT / "locale").rglob("*.po")) + ui_catalogs()
    files += sorted((ROOT / "lib" / "chipchain" / "locale").rglob("*.po"))     # the library's words (chipchain._i18n)
    return [f for f in files if ".ipynb_checkpoints" not in f.parts]


#: read the translations from this folder instead of ``locale/`` (``--locale``: try a font with scratch catalogs)
LOCALE: Path | None = None
#: the Chinese catalogs of the packages that draw the zh-CN pages' furniture: (package, catalog inside it)
UI_CATALOGS = [("sphinx", "locale/zh_CN/LC_MESSAGES/sphinx.po"),
               ("pydata_sphinx_theme", "locale/zh/LC_MESSAGES/sphinx.po"),
               ("sphinx_book_theme", "theme/sphinx_book_theme/static/locales/zh_CN/LC_MESSAGES/booktheme.po"),
               ("sphinx_exercise", "translations/locales/zh_CN/LC_MESSAGES/exercise.po")]


def ui_catalogs() -> list[Path]:
    """The installed Chinese catalogs of Sphinx, the theme and sphinx-exercise (those the environment has)."""
    import importlib.util

    out = []
    for package, rel in UI_CATALOGS:
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            path = Path(next(iter(spec.submodule_search_locations))) / rel
            if path.exists():
                out.append(path)
    return out


def _msgstrs(path: Path) -> str:
    """The translations of a gettext catalog (its ``msgstr`` texts), not its English."""
    from babel.messages.pofile import read_po

    with path.open("rb") as f:
        catalog = read_po(f)
    return "\n".join(s for m in catalog if m.id for s in ([m.string] if isinstance(m.string, str) else m.string) if s)


def _strings(obj):
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, list):
        for x in obj:
            yield from _strings(x)
    elif isinstance(obj, dict):
        for x in obj.values():
            yield from _strings(x)


def book_characters(files: list[Path] | None = None) -> str:
    """Every CJK character in ``files`` (default: ``sources()``), sorted, each once.

    >>> import tempfile; d = Path(tempfile.mkdtemp()); _ = (d / "a.md").write_text("稠密 / 稀疏（2:4 结构化稀疏）, HBM")
    >>> book_characters([d / "a.md"])
    '化密构疏稀稠结（）'
    """
    found: set[str] = set()
    for path in files if files is not None else sources():
        text = _msgstrs(path) if path.suffix == ".po" else path.read_text(encoding="utf-8")
        if path.suffix == ".ipynb":     # decode JSON escapes (\\u4e2d) so escaped characters count too
            text = "\n".join(_strings(json.loads(text)))
        found.update(CJK.findall(text))
    return "".join(sorted(found))


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def source_font() -> tuple[Path, Path | None]:
    """(font file, licence file or None): $CJK_FONT, the cache, or Debian's package fetched into the cache."""
    if os.environ.get("CJK_FONT"):
        return Path(os.environ["CJK_FONT"]), None
    font, licence = CACHE / "extract" / FONT_IN_PACKAGE, CACHE / "extract" / LICENCE_IN_PACKAGE
    if font.exists():
        return font, licence if licence.exists() else None
    if not shutil.which("apt-get") or not shutil.which("dpkg-deb"):
        sys.exit(f"build_cjk_font: no cached font and no apt-get/dpkg-deb here; set CJK_FONT=/path/to/a CJK font "
                 f"(e.g. {PACKAGE}'s wqy-microhei.ttc)")
    CACHE.mkdir(parents=True, exist_ok=True)
    got = _run(["apt-get", "download", PACKAGE], CACHE)
    if got.returncode != 0 and os.geteuid() == 0:      # a fresh container has no package index yet
        _run(["apt-get", "update", "-qq"], CACHE)
        got = _run(["apt-get", "download", PACKAGE], CACHE)
    debs = sorted(CACHE.glob(f"{PACKAGE}_*.deb"))
    if got.returncode != 0 or not debs:
        sys.exit(f"build_cjk_font: `apt-get download {PACKAGE}` failed:\n{got.stderr.strip()}\n"
                 f"(as root run `apt-get update` first, or set CJK_FONT=/path/to/a CJK font)")
    unpacked = _run(["dpkg-deb", "-x", str(debs[-1]), str(CACHE / "extract")], CACHE)
    if unpacked.returncode != 0 or not font.exists():
        sys.exit(f"build_cjk_font: could not unpack {debs[-1].name}: {unpacked.stderr.strip()}")
    return font, licence if licence.exists() else None


def subset(font: Path, chars: str, out: Path) -> list[str]:
    """Write the WOFF2 subset of ``font`` holding ``chars``; return the characters the font lacks."""
    import logging

    from fontTools import subset as ft
    from fontTools.ttLib import TTFont

    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)   # "FFTM NOT subset": a FontForge timestamp

    options = ft.Options()
    options.flavor = "woff2"
    options.font_number = 0
    options.hinting = False            # browsers rasterise CJK well without hints; halves the size
    options.desubroutinize = True
    options.name_IDs = ["*"]           # keep copyright and licence names
    options.notdef_outline = True
    with TTFont(str(font), fontNumber=0, lazy=True) as whole:
        cmap = whole.getBestCmap()
        missing = [c for c in chars if ord(c) not in cmap]
    tt = ft.load_font(str(font), options, lazy=False)
    subsetter = ft.Subsetter(options)
    subsetter.populate(unicodes=[ord(c) for c in chars if c not in missing])
    subsetter.subset(tt)
    out.parent.mkdir(parents=True, exist_ok=True)
    ft.save_font(tt, str(out), options)
    return missing


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--list", action="store_true", help="print the characters and exit")
    ap.add_argument("--locale", type=Path, help="the translations' folder (default locale/)")
    args = ap.parse_args(argv)
    if args.locale is not None:
        global LOCALE
        LOCALE = args.locale.resolve()
    chars = book_characters()
    if args.list:
        print(chars)
        return 0
    font, licence = source_font()
    missing = subset(font, chars, args.out)
    if licence:
        shutil.copyfile(licence, args.out.with_name("LICENSE-wqy-microhei.txt"))
    size = args.out.stat().st_size
    shown = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    print(f"build_cjk_font: {len(chars)} characters from {font.name} → {shown} ({size / 1024:.0f} KiB)")
    if missing:
        print(f"build_cjk_font: {font.name} lacks {len(missing)} character(s) the book uses: {''.join(missing)}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
