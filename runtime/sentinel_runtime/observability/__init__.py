"""Metric objects, log event names and the JSON log format, each defined once."""
