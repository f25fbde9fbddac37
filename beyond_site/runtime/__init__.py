"""The runtime: how a process of Beyond starts and what it runs besides requests.

The top floor of the site's layers (docs/architecture.md): `process.py` is the one place a
process starts, in order, what it runs besides the apps (the body limits under daphne, the
warm-up, the background work's home, the sweeper and the periodic check of the record); the
other modules are the measured tuning of the web server that the apps never see (admission of
requests, daphne's request bodies, the in-memory channel layer), and `beyond_worker` is the
scaled mode's worker process.
"""
