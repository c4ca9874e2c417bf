"""The safety pipeline: understand -> gate -> retrieve -> evidence -> generate -> cite.

One folder per stage, each over plain data (``pipeline.types``) and the shared text signals
(``pipeline.signals``); ``pipeline.runner`` and ``pipeline.streamed`` are the only modules that
compose them, and the application layer (``sentinel_runtime.answer``) calls those. Beside them:
``config`` (every stage's settings, parsed from the policy file), ``conversation`` (the client's
turn, read by the runner and the model answer), ``report`` (what a result shows) and ``audit``.
The import-linter contracts in pyproject.toml keep the stages in this order.
"""
