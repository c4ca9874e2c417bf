"""Stage 4, generate: the answer, the high-level summary or the refusal.

``extractive`` answers from the kept chunks' own sentences (no model); ``model_answer`` asks
the upstream model through the grounding prompt of ``grounded``; ``selection`` keeps the best
of N candidates by a composite reward; ``refusal`` writes refusals with safe alternatives.
Hands on an ``Answer`` and the claims it makes, for the cite stage to check.
"""
