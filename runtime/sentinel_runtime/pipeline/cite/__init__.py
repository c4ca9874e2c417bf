"""Stage 5, cite: may this answer go out with these citations?

``citations`` enforces the citation contract (ids among the kept chunks, no duplicates, a
bound, empty only when the answer says the context is insufficient); ``support`` checks that
each claim's words are in the chunks it cites; ``citations_stream`` applies both sentence by
sentence while an answer streams. Hands on a ``CitationValidation``: valid, or why it blocks.
"""
