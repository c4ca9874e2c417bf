"""Governed tool calls: a rulebase, a per-session fact store and a solver between the LLM and
its tools (the contract: docs/contracts.md, "Governed tool calls"; docs/governed-tool-calls.md
shows it at work).

``syntax`` is the clause language and ``paths`` the JSON paths into a tool's result;
``rulebase`` (a package) parses and checks the policy file's ``tools`` section; ``facts``
holds each session's ground facts, provenance and context bindings; ``extraction`` turns a
tool's result into facts; ``solver`` (a package) proves symbolic goals, calling data tools
(through their guards) for missing facts; ``guard`` checks a proposed tool call against its
preconditions; ``tools`` calls tools over HTTP (or MCP when the ``mcp`` package is
installed); ``service`` ties them together for the API. Nothing here imports a web framework.
"""
