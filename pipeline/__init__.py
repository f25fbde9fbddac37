"""Beyond's pipeline core: schemas, prompts, providers, the citation gate and the orchestrator.

Plain Python with no Django imports, so it can be read, imported and tested on its own. It takes
plain data (a context, a topology) and emits events; persisting them is the web app's job.
"""
