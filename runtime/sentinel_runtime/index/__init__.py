"""Document index: chunking, embedders, FAISS + BM25 hybrid search, persistence.

Imports nothing of the HTTP layer, the pipeline or the guardrails.
"""
