"""Stage 2, gate: what retrieval may do for this request, and which outcome it gets.

``planner`` turns the ``Introspection`` into a ``RetrievalPlan`` (retrieve, restrict with its
constraints, or no retrieval); ``fallback`` builds what to retry when the evidence filter
kept too little, or when a restricted retrieval found nothing (widened past its window and
sources); ``decision`` picks the generation outcome (answer, summary, refuse) from the plan
and the evidence bundle. Hands on the plan and the decision.
"""
