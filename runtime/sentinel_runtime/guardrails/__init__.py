"""Output guardrails core: policy parsing, scanners, the reloadable holder.

Imports neither FastAPI nor kopf: the CLI, the HTTP layer and the operator share it.
"""
