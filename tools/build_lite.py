"""Build the JupyterLite site (``make lite``): every chapter notebook plus a wheel of chipchain, runnable in a browser.

What it does, in order:

1. writes a pure-Python wheel of ``chipchain`` straight from ``lib/chipchain`` and ``pyproject.toml`` (no build
   backend, so no network and the same bytes every time);
2. copies every ``chapters/*.ipynb`` into a staging folder and puts one extra cell at the top of each copy that
   installs the book's library in the browser (``%pip install chipchain``, served by this very site through piplite,
   plus pandas, matplotlib and ipywidgets) — the chapters in the repository are not touched (their ``glue`` comes
   from ``chipchain.notebook`` and needs only IPython, which the Pyodide kernel has);
3. runs ``jupyter lite build`` (jupyterlite-core with the Pyodide kernel) with the notebooks as contents and the
   wheel as a piplite wheel, writing a static site to ``_lite/`` (or ``--output-dir``).

The site itself builds offline. In the reader's browser the Pyodide runtime is fetched from its CDN the first time a
notebook starts, so running the notebooks needs a network connection; reading them does not.

Run from the project root:  .venv/bin/python tools/build_lite.py [--output-dir _lite]
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"

#: the first cell of every notebook in the lite site; the tag lets a reader (and the tests) recognise it. piplite's
#: parser takes no option between "install" and the packages (``install -q pkg`` is rejected), so there is none.
INSTALL_TAG = "jupyterlite-install"
INSTALL_SOURCE = (
    "# JupyterLite only: install the book's library (a wheel served by this site) and what the chapters use.\n"
    '%pip install chipchain pandas matplotlib "ipywidgets>=8.1,<8.2"'
)


def _project() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def package_files(project: dict | None = None) -> list[Path]:
    """Every file the wheel ships: each ``.py`` of the package plus the package data pyproject.toml declares."""
    project = project or _project()
    package = ROOT / "lib" / "chipchain"
    patterns = project["tool"]["setuptools"]["package-data"]["chipchain"]
    files = {p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    files |= {p for pattern in patterns for p in package.glob(pattern)}
    return sorted(files)


def _metadata(project: dict) -> str:
    meta = project["project"]
    lines = ["Metadata-Version: 2.1", f"Name: {meta['name']}", f"Version: {meta['version']}",
             f"Summary: {meta['description']}", f"Requires-Python: {meta['requires-python']}"]
    if isinstance(meta.get("license"), str):
        lines.append(f"License: {meta['license']}")
    lines += [f"Classifier: {c}" for c in meta.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in meta.get("dependencies", [])]
    for extra, deps in meta.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        lines += [f'Requires-Dist: {d}; extra == "{extra}"' for d in deps]
    readme = ROOT / meta.get("readme", "README.md")
    body = readme.read_text(encoding="utf-8") if readme.exists() else ""
    if body:
        lines.append("Description-Content-Type: text/markdown")
    return "\n".join(lines) + "\n\n" + body


def build_wheel(dest: Path) -> Path:
    """Write a pure-Python wheel of chipchain into ``dest`` and return its path.

    The wheel is assembled directly (a wheel is a zip with a ``.dist-info`` folder, PEP 427) from ``lib/chipchain``
    and the metadata in ``pyproject.toml``, rather than through a build backend: that needs no network and no
    particular setuptools, and the same sources always give the same bytes (fixed timestamps, sorted entries).
    """
    project = _project()
    name, version = project["project"]["name"], project["project"]["version"]
    dist_info = f"{name}-{version}.dist-info"
    entries = [(p.relative_to(ROOT / "lib").as_posix(), p.read_bytes()) for p in package_files(project)]
    entries.append((f"{dist_info}/METADATA", _metadata(project).encode()))
    entries.append((f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: steel-and-silicon tools/build_lite.py\n"
                                          b"Root-Is-Purelib: true\nTag: py3-none-any\n"))
    if (ROOT / "LICENSE").exists():
        entries.append((f"{dist_info}/LICENSE", (ROOT / "LICENSE").read_bytes()))
    record = []
    for arcname, data in entries:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{arcname},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    dest.mkdir(parents=True, exist_ok=True)
    wheel = dest / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel


def with_install_cell(notebook: dict) -> dict:
    """A copy of ``notebook`` whose first cell installs chipchain in the Pyodide kernel."""
    cell = {"cell_type": "code", "execution_count": None, "id": "jupyterlite-install",
            "metadata": {"tags": [INSTALL_TAG]}, "outputs": [], "source": INSTALL_SOURCE}
    nb = dict(notebook)
    nb["cells"] = [cell] + [c for c in notebook["cells"] if INSTALL_TAG not in c.get("metadata", {}).get("tags", [])]
    return nb


def stage_notebooks(dest: Path, chapters: Path = CHAPTERS) -> list[Path]:
    """Copy every notebook of ``chapters`` into ``dest``, each with the install cell first."""
    dest.mkdir(parents=True, exist_ok=True)
    out = []
    for path in sorted(chapters.glob("*.ipynb")):
        nb = json.loads(path.read_text(encoding="utf-8"))
        target = dest / path.name
        target.write_text(json.dumps(with_install_cell(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        out.append(target)
    if not out:
        raise RuntimeError(f"no chapter notebooks in {chapters}")
    return out


def build(output_dir: Path, chapters: Path = CHAPTERS) -> Path:
    """Build the lite site from the notebooks in ``chapters`` into ``output_dir`` and return it."""
    output_dir = output_dir.resolve()
    with tempfile.TemporaryDirectory(prefix="chipchain-lite-") as tmp:
        stage = Path(tmp)
        wheel = build_wheel(stage / "wheels")
        stage_notebooks(stage / "content" / "chapters", chapters)
        (stage / "jupyter_lite_config.json").write_text(json.dumps({
            "LiteBuildConfig": {"contents": ["content"], "output_dir": str(output_dir),
                                "no_sourcemaps": True},
            "PipliteAddon": {"piplite_urls": [str(wheel)]},
        }, indent=1))
        if output_dir.exists():
            shutil.rmtree(output_dir)
        jupyter = Path(sys.executable).with_name("jupyter")
        subprocess.run([str(jupyter), "lite", "build", "--lite-dir", str(stage)], check=True, cwd=stage)
    return output_dir


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "_lite", help="where to write the site")
    args = parser.parse_args(argv)
    out = build(args.output_dir)
    print(f"build_lite: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
