"""Stage 1, understand: what is this request, and may it be served?

Canonicalises the prompt (``canonical``), reads what it hides (``deobfuscate``), judges it
with the built-in judge (``judge``) or the upstream model (``introspection_llm``), and decides
whether documents could help (``retrieval_need``). Hands on a validated ``Introspection``
(intent, risk category, severity, attack families, retrieval need) and its ``trace``; it
decides nothing about retrieval itself.
"""
