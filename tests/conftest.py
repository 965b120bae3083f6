"""Hypothesis profiles: ``make test`` is deterministic, ``make test-thorough`` explores (issue 23).

``book`` (the default; ``make test`` and CI): **derandomised** — every run draws the same examples, from a seed that
is a hash of each test function, and the example database is off, so CI, a newcomer's first run and a maintainer's
last one see the same result. Inputs that an exploring run has found to matter are kept in the tests as explicit
``@example`` lines, so they are checked on every run. No per-example deadline and no too-slow health check: on a
2-core machine also running a browser one example can take 350 ms where it takes 20 ms alone, and a deadline would
fail a correct property for the machine's load (it did, in CI). What the book promises about speed is tested where
it is stated: the budgets in tests/test_budgets.py.

``explore`` (``make test-thorough``): a fresh random seed each run (the Makefile passes ``--hypothesis-seed``), the
same example counts. ``thorough``: fresh seeds and 2,000 examples a property — the large sweep. Run both before a
submission that changes the library or its tests, so that a rare input (a subnormal float, an ulp at a boundary) is
found here and becomes an ``@example``, rather than being found by chance later. Tests with their own ``@settings``
keep their example counts in every profile.
"""
import os

from hypothesis import HealthCheck, settings

_QUIET = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("book", derandomize=True, database=None, print_blob=True, **_QUIET)
settings.register_profile("explore", database=None, print_blob=True, **_QUIET)
settings.register_profile("thorough", max_examples=2000, database=None, print_blob=True, **_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))
