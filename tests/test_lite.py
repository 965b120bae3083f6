"""The JupyterLite site (``make lite``, tools/build_lite.py): it builds offline, holds every chapter and a wheel of
chipchain (which installs and imports in a clean virtual environment), and serves its own Pyodide: the runtime from
the npm package, every package file matching the official lock's sha256, the lock filtered to what is there, and no
way for the kernel to fall back to PyPI. The library's simulations also run where NumPy's index type is 32-bit, as
in WebAssembly.

Running every chapter in the browser is tests/browser/test_lite_run.py. This file takes about 20 s (one lite build,
one venv).
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import build_lite  # noqa: E402
import lab_book  # noqa: E402

CHAPTERS = sorted(p.name for p in (ROOT / "chapters").glob("*.ipynb"))


def _lite_available() -> bool:
    return importlib.util.find_spec("jupyterlite_core") is not None and \
        importlib.util.find_spec("jupyterlite_pyodide_kernel") is not None


def _lite_pinned() -> bool:
    lock = (ROOT / "requirements.lock").read_text()
    return bool(re.search(r"^jupyterlite-core==", lock, re.M))


if not _lite_available():
    if _lite_pinned():  # the lock promises it: a missing package is an environment bug, not a reason to skip
        raise RuntimeError("requirements.lock pins jupyterlite-core but it is not installed: run `make` set-up again")
    pytest.skip("jupyterlite-core / jupyterlite-pyodide-kernel are not pinned in requirements.lock yet",
                allow_module_level=True)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return build_lite.build(tmp_path_factory.mktemp("lite") / "_lite")


@pytest.fixture(scope="module")
def wheel(site) -> Path:
    wheels = sorted((site / "pypi").glob("chipchain-*-py3-none-any.whl"))
    assert len(wheels) == 1, f"expected one chipchain wheel in pypi/, found {wheels}"
    return wheels[0]


def test_there_are_chapters():
    assert CHAPTERS, "no chapters/*.ipynb to put in the lite site"


def test_site_has_the_lab_and_the_pyodide_kernel(site):
    assert (site / "index.html").exists() and (site / "lab" / "index.html").exists()
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    extensions = {e["name"] for e in config["federated_extensions"]}
    assert "@jupyterlite/pyodide-kernel-extension" in extensions
    assert "@jupyter-widgets/jupyterlab-manager" in extensions, "the chapters' sliders need the widget manager"


def test_every_chapter_is_in_the_site(site):
    listed = json.loads((site / "api" / "contents" / "chapters" / "all.json").read_text())
    names = sorted(item["name"] for item in listed["content"] if item["type"] == "notebook")
    assert names == CHAPTERS


@pytest.mark.parametrize("name", CHAPTERS)
def test_chapter_copy_installs_chipchain_then_matches_the_source(site, name):
    copy = json.loads((site / "files" / "chapters" / name).read_text(encoding="utf-8"))
    source = json.loads((ROOT / "chapters" / name).read_text(encoding="utf-8"))
    first = copy["cells"][0]
    assert first["cell_type"] == "code" and build_lite.INSTALL_TAG in first["metadata"]["tags"]
    assert first["metadata"].get("trusted") is True     # one untrusted cell and the toolbar reads "Not Trusted"
    # the copy names the kernel the site registers, so JupyterLite starts it instead of asking (a "Select Kernel"
    # dialog once stalled a chapter): read the registered name from the Pyodide kernel extension the site serves
    registered = set()
    for js in (site / "extensions" / "@jupyterlite" / "pyodide-kernel-extension").rglob("*.js"):
        registered |= set(re.findall(r'spec:\{name:"([\w-]+)",display_name:"[^"]*Pyodide', js.read_text("utf-8")))
    assert copy["metadata"]["kernelspec"]["name"] in registered, (copy["metadata"]["kernelspec"], registered)
    src = "".join(first["source"])
    assert re.search(r"^%pip install .*\bchipchain\b", src, re.M), src
    cells, original = copy["cells"][1:], build_lite.joined(source)["cells"]
    assert [c["cell_type"] for c in cells] == [c["cell_type"] for c in original], f"{name}: cells added or lost"
    for c, o in zip(cells, original):
        if c["cell_type"] == "code":        # the code and its outputs as the book has them; hidden code collapsed
            assert (c["source"], c["outputs"]) == (o["source"], o["outputs"]), f"{name}: a code cell changed"
            hidden = bool(lab_book.HIDDEN_TAGS & set(o["metadata"].get("tags", [])))
            assert c["metadata"].get("jupyter", {}).get("source_hidden", False) == hidden, c["source"][:80]
            assert c["metadata"].get("trusted") is True, f"{name}: stored figures would show as placeholders"
    prose = "\n".join(c["source"] for c in cells if c["cell_type"] == "markdown")
    raw = re.findall(r"\{(?:glue|term|cite|doc)[\w:]*\}`|^(?:`{3,}|:{3,})\{\w+\}|^\([\w:-]+\)=", prose, re.M)
    assert not raw, f"{name}: MyST left raw in the lite copy's prose: {sorted(set(raw))[:5]}"
    # JupyterLab's renderer takes "\$0.12 … \$510,000" for maths: a literal dollar is written as an entity
    assert "\\$" not in re.sub(r"`+[^`]*`+", "", prose), f"{name}: an escaped dollar JupyterLab would read as maths"
    lists = [i for i, c in enumerate(copy["cells"]) if not isinstance(c["source"], str)] + \
            [i for i, c in enumerate(copy["cells"]) for o in c.get("outputs", [])
             if any(isinstance(v, list) for v in o.get("data", {}).values()) or isinstance(o.get("text", ""), list)]
    assert not lists, f"{name}: cells {lists} keep lists of lines, which JupyterLite's table of contents cannot read"


def test_install_line_parses_with_the_sites_own_piplite(site):
    """The install cell's %pip line is accepted by the piplite command-line parser shipped inside the site."""
    import ast
    import shlex
    from argparse import ArgumentParser

    pip_wheel = next((site / "extensions").rglob("piplite-*-py3-none-any.whl"))
    with zipfile.ZipFile(pip_wheel) as zf:
        tree = ast.parse(zf.read("piplite/cli.py").decode())
    func = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "_get_parser")
    namespace = {"ArgumentParser": ArgumentParser}
    exec(compile(ast.Module(body=[func], type_ignores=[]), "piplite/cli.py", "exec"), namespace)
    line = next(ln for ln in build_lite.INSTALL_SOURCE.splitlines() if ln.startswith("%pip "))
    args = namespace["_get_parser"]().parse_args(shlex.split(line[len("%pip "):]))
    assert args.action == "install" and "chipchain" in args.packages, args


def test_wheel_is_indexed_for_piplite_with_its_hash(site, wheel):
    index = json.loads((site / "pypi" / "all.json").read_text())
    releases = index["chipchain"]["releases"]
    files = [f for files in releases.values() for f in files]
    assert [f["filename"] for f in files] == [wheel.name]
    assert files[0]["digests"]["sha256"] == hashlib.sha256(wheel.read_bytes()).hexdigest()


def test_wheel_holds_every_module_and_data_file(wheel):
    package = ROOT / "lib" / "chipchain"
    with open(ROOT / "pyproject.toml", "rb") as f:   # the package data pyproject.toml promises
        patterns = tomllib.load(f)["tool"]["setuptools"]["package-data"]["chipchain"]
    files = {p for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    files |= {p for pattern in patterns for p in package.glob(pattern)}
    expected = {f"chipchain/{p.relative_to(package).as_posix()}" for p in files}
    assert any("/data/" in name for name in expected), "no data files found to check"
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        metadata = zf.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert expected <= names, f"missing from the wheel: {sorted(expected - names)}"
    assert re.search(r"^Requires-Dist: numpy", metadata, re.M), "piplite must learn that chipchain needs numpy"


def test_wheel_installs_and_imports_in_a_clean_venv(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", str(wheel)], check=True)
    # Clean venv, no numpy: every module imports with the standard library alone (NumPy loads on first use, through
    # chipchain._lazy), and the packaged data files (the accelerator and model catalogs) travelled with the wheel.
    code = ("import sys, chipchain\n"
            "from chipchain import units, hardware, compute, models, roofline, walkthrough\n"
            "assert 'site-packages' in chipchain.__file__, chipchain.__file__\n"
            "assert 'numpy' not in sys.modules\n"
            "h = hardware.get('H100')\n"
            "flops = compute.training_flops(models.get('175B').params, 2e12)\n"
            "print(chipchain.__version__, h.name, h.peak_flops('bf16'), roofline.ridge_point('H100'),\n"
            "      f'{flops:.2g}', units.fmt_bandwidth(h.memory_bandwidth))\n")
    out = subprocess.run([str(py), "-I", "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    version, name, bf16, ridge, flops, bw = out.stdout.split(maxsplit=5)
    assert (name, float(bf16), flops, bw.strip()) == ("H100-SXM", 989.4e12, "2.1e+24", "3.35 TB/s")
    assert float(ridge) == pytest.approx(989.4e12 / 3.35e12)


# --- the site's own Pyodide ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pyodide_dir(site) -> Path:
    return site / "static" / "pyodide"


@pytest.fixture(scope="module")
def official() -> dict:
    return build_lite.official_lock()


def test_kernel_loads_pyodide_from_the_site_and_never_from_pypi(site):
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    kernel = config["litePluginSettings"][build_lite.KERNEL_PLUGIN]
    assert kernel["pyodideUrl"] == "./static/pyodide/pyodide.js" and (site / "static/pyodide/pyodide.js").exists()
    assert kernel["disablePyPIFallback"] is True
    assert all(not re.match(r"https?://", u) for u in kernel["pipliteUrls"]), kernel["pipliteUrls"]
    overrides = json.loads((site / "overrides.json").read_text())   # every cell renders (the browser test reads them)
    assert overrides["@jupyterlab/notebook-extension:tracker"]["windowingMode"] == "none"
    assert overrides["@jupyterlab/notebook-extension:tracker"]["autoStartDefaultKernel"] is True   # no kernel dialog


def test_runtime_is_the_npm_package_pyodide_0_27_7(pyodide_dir):
    npm = build_lite.PYODIDE_NPM
    assert json.loads((npm / "package.json").read_text())["version"] == "0.27.7"
    for name in build_lite.RUNTIME_FILES:
        assert (pyodide_dir / name).read_bytes() == (npm / name).read_bytes(), name


def test_every_package_file_matches_the_official_lock(pyodide_dir, official):
    served = json.loads((pyodide_dir / "pyodide-lock.json").read_text())
    assert served["info"] == official["info"] and served["info"]["version"] == "0.27.7"
    files = {p.name for p in pyodide_dir.iterdir()} - set(build_lite.RUNTIME_FILES) - {"pyodide-lock.json"}
    listed = {v["file_name"]: (k, v["sha256"]) for k, v in served["packages"].items()}
    assert files == set(listed), f"files without a lock entry: {files - set(listed)}; " \
                                 f"entries without a file: {set(listed) - files}"
    site_wheels = {w.name: w for w in [*pyodide_dir.parent.parent.glob("pypi/*.whl"),
                                       *pyodide_dir.parent.parent.glob("extensions/**/pypi/*.whl")]}
    for name, (key, digest) in listed.items():
        if key in official["packages"]:
            assert official["packages"][key] == served["packages"][key], f"{key}: served entry differs from the lock"
        else:       # the site's own wheels: the same bytes as its piplite wheel
            assert name in site_wheels, f"{key}: {name} is neither in Pyodide's lock nor a wheel of the site"
            assert (pyodide_dir / name).read_bytes() == site_wheels[name].read_bytes(), name
        assert hashlib.sha256((pyodide_dir / name).read_bytes()).hexdigest() == digest, name


def test_served_lock_is_closed_and_holds_only_what_is_loaded(pyodide_dir):
    packages = json.loads((pyodide_dir / "pyodide-lock.json").read_text())["packages"]
    for key, entry in packages.items():       # depends name prompt_toolkit, pure-eval...: normalised, all present
        assert all(build_lite.normalise(d) in packages for d in entry["depends"]), (key, entry["depends"])
    assert {"numpy", "pandas", "matplotlib", "ipython", "micropip", "prompt-toolkit"} <= set(packages)
    assert not {"openblas", "scipy", "scikit-learn", "pyarrow"} & set(packages), "nothing no chapter loads"


def test_kernel_start_packages_are_all_served(site, pyodide_dir):
    """What the Pyodide kernel installs when it starts (read from its own JavaScript) is in the lock or in piplite."""
    worker = "".join(p.read_text(errors="ignore") for p in (site / "extensions").rglob("*.js"))
    found = re.search(r'initKernel\(\w+\)\{.*?\w+=(\[(?:"[\w-]+",?)+\])', worker)
    assert found, "the kernel's start-up package list was not found in its JavaScript"
    wanted = {build_lite.normalise(n) for n in json.loads(found.group(1))}
    lock = set(json.loads((pyodide_dir / "pyodide-lock.json").read_text())["packages"])
    piplite = set()
    for index in [site / "pypi" / "all.json", *site.glob("extensions/**/pypi/all.json")]:
        piplite |= {build_lite.normalise(n) for n in json.loads(index.read_text())}
    assert {"ssl", "sqlite3", "ipython", "comm"} <= wanted
    assert wanted <= lock | piplite, f"the kernel would look elsewhere for {wanted - lock - piplite}"


def test_kernel_loads_every_package_while_it_starts(site, pyodide_dir):
    """Pyodide fetches every package at once while it starts (loadPyodideOptions.packages), so the kernel's own
    sequential start-up installs (read from its JavaScript) are all skipped, and the install cell finds the chapters'
    packages loaded; every preloaded package is in the served lock with its sha256."""
    config = json.loads((site / "jupyter-lite.json").read_text())["jupyter-config-data"]
    preload = config["litePluginSettings"][build_lite.KERNEL_PLUGIN]["loadPyodideOptions"]["packages"]
    lock = json.loads((pyodide_dir / "pyodide-lock.json").read_text())["packages"]
    assert {build_lite.normalise(n) for n in preload} <= set(lock), set(preload) - set(lock)
    worker = "".join(p.read_text(errors="ignore") for p in (site / "extensions").rglob("*.js"))
    start = json.loads(re.search(r'initKernel\(\w+\)\{.*?\w+=(\[(?:"[\w-]+",?)+\])', worker).group(1))
    # the kernel compares names as written ("pyodide_kernel"); Pyodide's loadPackage normalises them
    assert set(start) <= set(preload), f"the kernel would still install {set(start) - set(preload)} itself"
    assert {"micropip", "piplite"} <= set(preload), "the kernel would install micropip and piplite itself"
    assert {"chipchain", "numpy", "pandas", "matplotlib", "ipywidgets", "widgetsnbextension"} <= set(preload)


def test_widget_wheels_are_piplite_wheels_with_the_installed_bytes(site):
    import importlib.metadata

    index = json.loads((site / "pypi" / "all.json").read_text())
    assert {"chipchain", "ipywidgets", "jupyterlab-widgets", "comm"} <= {build_lite.normalise(n) for n in index}
    for name in build_lite.PIPLITE_FROM_ENV:
        dist = importlib.metadata.distribution(name)
        wheel = next((site / "pypi").glob(f"{name}-{dist.version}-py3-none-any.whl"))
        with zipfile.ZipFile(wheel) as zf:
            for f in dist.files:
                if str(f).endswith(".py") and not str(f).startswith(".."):
                    assert zf.read(str(f)) == Path(f.locate()).read_bytes(), f"{wheel.name}: {f}"


def test_a_package_that_differs_from_the_lock_stops_the_build(tmp_path, official):
    """A wheel source with one file altered (one byte) is refused, naming the file."""
    source = build_lite.wheel_source_dir()
    fake = tmp_path / "source"
    fake.mkdir()
    for f in source.iterdir():
        os.symlink(f, fake / f.name)
    target = official["packages"]["pygments"]["file_name"]
    (fake / target).unlink()
    data = bytearray((source / target).read_bytes())
    data[-1] ^= 1
    (fake / target).write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match=re.escape(target)):
        build_lite.place_pyodide(tmp_path / "out", official, fake)
    (fake / target).unlink()
    with pytest.raises(RuntimeError, match="not in"):
        build_lite.place_pyodide(tmp_path / "out", official, fake)


def test_names_are_normalised_as_the_lock_keys_them(official):
    assert build_lite.normalise("prompt_toolkit") == build_lite.normalise("Prompt.Toolkit") == "prompt-toolkit"
    assert set(official["packages"]) == {build_lite.normalise(k) for k in official["packages"]}
    with pytest.raises(KeyError, match="no-such-package"):
        build_lite.package_closure(official, ["no_such_package"])


# --- WebAssembly's 32-bit NumPy ---------------------------------------------------------------------------------------

def _repeat_as_on_wasm32(monkeypatch):
    """Make chipchain's NumPy behave as on WebAssembly, where the index type ``np.intp`` is int32 and np.repeat
    refuses counts that cannot be cast to it safely (the generator's int64 counts, for one)."""
    import numpy

    from chipchain._lazy import np as lazy_np

    real = numpy.repeat

    def repeat(a, repeats, axis=None):
        counts = numpy.asarray(repeats)
        if not numpy.can_cast(counts.dtype, numpy.int32, casting="safe"):
            raise TypeError(f"Cannot cast array data from dtype('{counts.dtype}') to dtype('int32') "
                            "according to the rule 'safe'")
        return real(a, repeats, axis)

    # both the module and chipchain's lazy view of it (which re-copies the module's names when it meets a new one)
    for target in (numpy, lazy_np):
        monkeypatch.setattr(target, "repeat", repeat)
        monkeypatch.setattr(target, "intp", numpy.int32)


def test_the_wasm32_repeat_stand_in_fails_as_pyodide_does(monkeypatch):
    import numpy

    _repeat_as_on_wasm32(monkeypatch)
    counts = numpy.random.default_rng(0).poisson(2.0, 5)   # int64, as the generator returns on every platform
    with pytest.raises(TypeError, match="int32"):
        numpy.repeat(numpy.arange(5), counts)


def test_simulations_run_where_numpy_index_is_32_bit(monkeypatch):
    """Chapters 7 and 8 (failsim.simulate_goodput, scheduling.simulate_schedule) ran into the 32-bit np.repeat."""
    from chipchain import failsim, scheduling

    _repeat_as_on_wasm32(monkeypatch)
    r = failsim.simulate_goodput(3600, 60, 600, 6 * 3600, segments=50, runs=20, seed=1)
    assert r.failures_mean > 0 and abs(r.z) < 4
    scheduling._simulate_schedule.cache_clear()
    run = scheduling.simulate_schedule("first-fit", 0.5, 0.85, seconds=4 * 86400, warmup_seconds=86400, seed=11)
    assert 0 < run.utilisation <= 1 and run.large_arrived > 0
    scheduling._simulate_schedule.cache_clear()


# ------------------------------------------------------------------------------------- the prose of the lite copies
def _chapter(*markdown, glue=None):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": m} for m in markdown]
    if glue:
        cells.append({"cell_type": "code", "metadata": {"tags": ["remove-cell"]}, "source": "glue()", "outputs": [
            {"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
             "data": {"text/plain": v}} for k, v in glue.items()]})
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_lite_prose_reads_as_the_website():
    """Glued values formatted as myst-nb does, a term with its glossary definition on hover, a citation with the
    website's author–year label, and exercises numbered on from the previous chapter, each solution naming its
    exercise."""
    terms, refs = lab_book.glossary(), lab_book.bibliography()
    first, second = _chapter(
        "{term}`GPUs <GPU>` reach {glue:text}`peak:.0f` TFLOP/s {cite:p}`shoeybi2019megatron`.",
        "```{exercise}\n:label: a-ex\nWhy?\n```\n\n```{solution} a-ex\n:class: dropdown\nBecause.\n```",
        glue={"peak": "989.43"}), _chapter("```{exercise} Harder\n:label: b-ex\nHow?\n```")
    (a, b), unresolved = lab_book.lite_copies([first, second], ["a", "b"])
    assert not unresolved
    text, exercise = a["cells"][0]["source"], a["cells"][1]["source"]
    definition = terms["gpu"][1].split()[0]
    assert re.search(rf'<abbr title="GPU: {re.escape(definition)}[^"]*">GPUs</abbr> reach 989 TFLOP/s', text), text
    label = refs["shoeybi2019megatron"]
    assert f'>{label["author"]}, {label["year"]}</abbr>)' in text, text
    assert "**Exercise 1**" in exercise and "<summary>Solution to Exercise 1</summary>" in exercise, exercise
    assert "**Exercise 2 (Harder)**" in b["cells"][0]["source"]


def test_a_role_the_lite_build_cannot_resolve_stops_it(tmp_path):
    chapters = tmp_path / "chapters"
    chapters.mkdir()
    (chapters / "01_x.ipynb").write_text(json.dumps(_chapter("A {term}`flux capacitor` here.")))
    with pytest.raises(RuntimeError, match="flux capacitor"):
        build_lite.stage_notebooks(tmp_path / "out", chapters)
