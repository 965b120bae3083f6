"""Hypothesis profiles.

``make test`` (and CI) use ``book``: Hypothesis's 100 examples a property and a fresh random seed each run, but no
per-example deadline and no too-slow health check. On a 2-core machine that is also running a browser, one example can
take 350 ms where it takes 20 ms alone, and a deadline would fail a correct property for the machine's load
(it did, in CI). What the book promises about speed is tested where it is stated: the budgets in
tests/test_budgets.py.

``HYPOTHESIS_PROFILE=thorough`` runs 2,000 examples a property: the sweep to run before a submission, so that a rare
input (a subnormal float, say) is found here rather than by CI's seed. Tests with their own ``@settings`` keep
their example counts.
"""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("book", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "book"))
