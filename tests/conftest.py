"""Hypothesis profiles. ``make test`` uses the default (100 examples a property, a fresh random seed each run, as
CI does); ``HYPOTHESIS_PROFILE=thorough`` runs 2,000 examples a property, the sweep to run before a submission so
that a rare input (a subnormal float, say) is found here rather than by CI's seed."""
import os

from hypothesis import HealthCheck, settings

settings.register_profile("thorough", max_examples=2000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
