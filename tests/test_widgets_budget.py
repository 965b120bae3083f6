"""Every registered explorable: every view renders, returns HTML, and answers within the 50 ms budget."""
import importlib
import pkgutil
import statistics

import pytest

import chipchain
from chipchain import widgets

CALLBACK_BUDGET_S = 0.050

for info in pkgutil.walk_packages(chipchain.__path__, prefix="chipchain."):
    if not info.name.rsplit(".", 1)[-1].startswith("_"):
        importlib.import_module(info.name)

FACTORIES = sorted(widgets.REGISTRY.items())


def test_some_explorers_are_registered():
    assert FACTORIES, "no explorer registered with @widgets.explorer"


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_every_view_renders_within_budget(name, factory):
    ex = factory()
    assert isinstance(ex, widgets.Explorable)
    assert ex.n_views <= widgets.MAX_STATIC_VIEWS
    ex.render_current()                                  # warm caches, as a reader's first view would
    times = ex.timings()
    assert len(times) == ex.n_views
    worst = max(times.values())
    # one retry of the slowest view absorbs a scheduler hiccup on a loaded 2-core machine
    if worst >= CALLBACK_BUDGET_S:
        idx = max(times, key=times.get)
        worst = min(worst, min(ex.timings_at(idx) for _ in range(3)))
    assert worst < CALLBACK_BUDGET_S, f"{name}: slowest view {worst * 1e3:.1f} ms (median " \
                                      f"{statistics.median(times.values()) * 1e3:.1f} ms)"


@pytest.mark.parametrize("name,factory", FACTORIES, ids=[n for n, _ in FACTORIES])
def test_views_differ_and_are_html(name, factory):
    ex = factory()
    views = {ex.render_at(idx) for idx in ex.all_indices()}
    assert all(isinstance(v, str) and v.strip() for v in views)
    assert len(views) > 1, f"{name}: moving the controls never changes the output"
