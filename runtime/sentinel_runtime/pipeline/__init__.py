"""The safety pipeline: introspect -> gate -> retrieve -> filter -> generate -> cite.

Stages are plain functions or small classes over plain data (``pipeline.types``); the HTTP
layer composes them through ``pipeline.runner``.
"""
