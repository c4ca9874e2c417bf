"""Stage 3, evidence: which retrieved chunks are safe to show the generator.

``scoring`` scores each hit S_e in [-1, 1] (harm, injection, secrets, PII, provenance,
freshness) and prunes; ``screen`` judges chunks once at ingest so a quiet chunk need not be
read again; ``conflicts`` finds chunks that disagree or were planted together; ``quality``
measures the retrieval (confidence, freshness). Hands on an ``EvidenceBundle``: kept and
dropped chunks with reasons, conflicts, and the fallback to try.
"""
