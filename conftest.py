"""Project-wide pytest hooks.

When nbval runs the chapters (`make test-nbval`), add up each notebook's cell execution time and hold it to the book's
budget (10 s a chapter, 60 s a lab, on the 2-core reference machine). Kernel start-up is not counted: it is the
reader's Jupyter, not the chapter. nbval runs two notebooks at once, and a lab's PyTorch ranks on the other worker
can double a chapter's time (chapter 3: 5.3 s alone, 10.4 s beside a lab), so a notebook over its budget is timed
again alone, once the parallel run is over, and fails only if it is over its budget then too. Times are written to
_build/chapter_times.json for the closing report.
"""
import json
import time
from collections import defaultdict
from pathlib import Path

CHAPTER_BUDGET_S = 10.0
LAB_BUDGET_S = 60.0           # notebooks under labs/ launch PyTorch ranks (issue 16): 60 s each on 2 busy cores
_times: dict = defaultdict(float)


def _budget(nodeid: str) -> float:
    return LAB_BUDGET_S if Path(nodeid).parts[:1] == ("labs",) else CHAPTER_BUDGET_S


def pytest_runtest_logreport(report):
    if report.when == "call" and ".ipynb::" in report.nodeid:
        _times[report.nodeid.split("::")[0]] += report.duration


def time_alone(path: Path) -> float:
    """Seconds the notebook's cells take to execute, kernel start-up excluded, with nothing else running."""
    import nbformat
    from nbclient import NotebookClient
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, resources={"metadata": {"path": str(path.parent)}})
    with client.setup_kernel():
        t0 = time.perf_counter()
        for i, cell in enumerate(nb.cells):
            client.execute_cell(cell, i)
        return time.perf_counter() - t0


def pytest_sessionfinish(session, exitstatus):
    if not _times or hasattr(session.config, "workerinput"):
        return
    root = Path(session.config.rootpath)
    over = [k for k, v in _times.items() if v > _budget(k)]
    alone = {k: time_alone(root / k) for k in over} if exitstatus == 0 else {}
    out = root / "_build" / "chapter_times.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({"in the parallel run": {k: round(v, 2) for k, v in sorted(_times.items())},
                               "timed again alone": {k: round(v, 2) for k, v in sorted(alone.items())}}, indent=1))
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr:
        tr.write_line("chapter execution times (s): " + ", ".join(f"{Path(k).stem} {v:.1f}"
                                                              for k, v in sorted(_times.items())))
        if alone:
            tr.write_line("over budget beside another notebook, timed again alone (s): "
                          + ", ".join(f"{Path(k).stem} {_times[k]:.1f} -> {v:.1f}" for k, v in sorted(alone.items())))
    slow = {k: round(v, 1) for k, v in alone.items() if v > _budget(k)}
    if slow:
        if tr:
            tr.write_line(f"notebooks over their budget, alone ({CHAPTER_BUDGET_S:.0f} s a chapter, "
                          f"{LAB_BUDGET_S:.0f} s a lab): {slow}", red=True)
        session.exitstatus = 1
