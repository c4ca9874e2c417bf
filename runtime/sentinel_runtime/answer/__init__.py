"""The application layer: one turn of Sentinel, from a parsed request to a scanned answer.

It owns what every request does (the policy version it runs under, the pipeline, the
generator, the output scanners, the audit record, governed tool calls) and knows nothing of
HTTP: the routes in ``api`` parse requests, call it, and render its results and its errors
(``answer.errors``) as responses.
"""
