"""Project-wide pytest hooks.

When nbval runs the chapters (`make test-nbval`), add up each notebook's cell execution time and fail the session if
a chapter exceeds the book's budget (10 s on the 2-core reference machine). Kernel start-up is not counted: it is the
reader's Jupyter, not the chapter. Times are written to _build/chapter_times.json for the closing report.
"""
import json
from collections import defaultdict
from pathlib import Path

CHAPTER_BUDGET_S = 10.0
LAB_BUDGET_S = 60.0           # notebooks under labs/ launch PyTorch ranks (issue 16): 60 s each on 2 busy cores
_times: dict = defaultdict(float)


def pytest_runtest_logreport(report):
    if report.when == "call" and ".ipynb::" in report.nodeid:
        _times[report.nodeid.split("::")[0]] += report.duration


def pytest_sessionfinish(session, exitstatus):
    if not _times or hasattr(session.config, "workerinput"):
        return
    out = Path(session.config.rootpath) / "_build" / "chapter_times.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({k: round(v, 2) for k, v in sorted(_times.items())}, indent=1))
    slow = {k: round(v, 1) for k, v in _times.items()
            if v > (LAB_BUDGET_S if Path(k).parts[:1] == ("labs",) else CHAPTER_BUDGET_S)}
    tr = session.config.pluginmanager.get_plugin("terminalreporter")
    if tr:
        tr.write_line("chapter execution times (s): " + ", ".join(f"{Path(k).stem} {v:.1f}"
                                                              for k, v in sorted(_times.items())))
    if slow:
        if tr:
            tr.write_line(f"notebooks over their budget ({CHAPTER_BUDGET_S:.0f} s a chapter, {LAB_BUDGET_S:.0f} s a "
                          f"lab): {slow}", red=True)
        session.exitstatus = 1
