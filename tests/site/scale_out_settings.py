"""Settings for the scale-out test's child processes: Beyond's own settings, with every Redis key
(channel layer, cache) under a prefix unique to one test run, so that run can delete exactly what
it made in a Redis that other runs (or a deployment) share. Everything else comes from the
environment (DATABASE_URL, REDIS_URL, BEYOND_RUN_IN_PROCESS, BEYOND_RUN_LEASE_S...), as in
production."""
import os

from beyond_site.settings import *  # noqa: F401,F403
from beyond_site.settings import CHANNEL_LAYERS

_PREFIX = os.getenv("BEYOND_TEST_CHANNEL_PREFIX")
if _PREFIX and "redis" in CHANNEL_LAYERS["default"]["BACKEND"]:
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = _PREFIX
    _cache = globals().get("CACHES", {}).get("default", {})  # a Redis cache when REDIS_URL is set
    if "redis" in _cache.get("BACKEND", "").lower():
        _cache["KEY_PREFIX"] = _PREFIX
