"""Sentinel runtime: the guardrailed RAG HTTP service and its guardrails core."""

__version__ = "0.1.0"
