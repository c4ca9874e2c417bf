"""Governed tool calls: a rulebase, a per-session fact store and a solver between the LLM and
its tools (seed 002).

``rulebase`` parses the policy file's ``tools`` section; ``facts`` holds each session's ground
facts, provenance and context bindings; ``solver`` proves symbolic goals, calling data tools
(through their guards) for missing facts; ``guard`` checks a proposed tool call against its
preconditions; ``tools`` describes tools as OpenAI function schemas and calls them over HTTP
(or MCP when the ``mcp`` package is installed); ``service`` ties them together for the API.
Nothing here imports a web framework.
"""
